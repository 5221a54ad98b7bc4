/* saturn_int.h - what the files of sched/saturn share inside the plugin
 * (saturn_agent.c: thread, cycle, apply; saturn_snapshot.c: reading
 * slurmctld; saturn_profiles.c: profiles and profiler jobs). Not installed;
 * none of it is exported from the plugin.
 */
#ifndef SATURN_INT_H
#define SATURN_INT_H

#include <sys/types.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"

#include "profile.h"
#include "sched_core.h"

/* Settings and folders, (re)read at init and reconfigure by the agent
 * thread, which is the only reader afterwards. */
extern saturn_sched_settings_t saturn_cfg;
extern char *saturn_state_dir, *saturn_profile_dir, *saturn_progress_dir;

/* mkdir path with mode (chmod'ed to it when it exists); errors logged. */
void saturn_mkdir_mode(const char *path, mode_t mode);

/* --- saturn_snapshot.c ---------------------------------------------- */

/* Fill s from slurmctld; caller holds the job and node read locks.
 * *snap_of_node_p (xmalloc'd, grown as needed) maps node_record index ->
 * snapshot node or -1. Returns the number of Saturn jobs, or -1 on ENOMEM
 * (snapshot incomplete: skip the cycle). */
int saturn_take_snapshot(saturn_snapshot_t *s, int **snap_of_node_p);

/* No locks: set batches_left of running jobs from their progress files. */
void saturn_read_progress(saturn_snapshot_t *s);

/* --- saturn_agent.c (caller holds the job write lock) ---------------- */

/* The live record of a snapshot task if it is still held by us, else NULL. */
job_record_t *saturn_revalidate(const saturn_snap_job_t *j);

/* Set the job's reason text (state_desc) when it changed. */
void saturn_set_reason(job_record_t *job_ptr, const char *reason, time_t now);

/* --- saturn_profiles.c (no locks unless said) ------------------------ */

/* The batch's profile from PROFILE_DIR/NAME.json, loaded when the file
 * changed, owner-checked against uid (or root); NULL when there is none or
 * it was rejected (logged once per version). Owned by the cache. */
const saturn_profile_t *saturn_lookup_profile(const char *batch, long uid, void *arg);

/* The params JSON text of the profile option d chose for task j ("{}" when
 * unknown). Valid until the next saturn_lookup_profile(). */
const char *saturn_option_params(const saturn_snap_job_t *j, const saturn_decision_t *d);

/* "saturn: profiler job N failed, users' requests; " into buf for a batch
 * that fell back, else "". Returns buf. */
const char *saturn_profiler_note(const char *batch, char *buf, size_t len);

/* Before building the problem (takes the locks it needs itself): submit
 * profiler jobs for batches without a profile and drop their held tasks
 * from s while profiling runs (their reason says so). */
void saturn_profiler_pass(saturn_snapshot_t *s);

/* Free the profile cache and profiler records (agent thread ending). */
void saturn_profiles_fini(void);

#endif /* SATURN_INT_H */
