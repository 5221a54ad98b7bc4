/* saturn_int.h - what the files of sched/saturn share inside the plugin
 * (saturn_agent.c: thread, cycle; saturn_apply.c: release, re-hold,
 * reasons under the write locks; saturn_backfill.c: sched/backfill beside
 * us; saturn_snapshot.c: reading
 * slurmctld; saturn_profiles.c: profiles and profiler jobs). Not installed;
 * none of it is exported from the plugin.
 */
#ifndef SATURN_INT_H
#define SATURN_INT_H

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"

#include "batch_policy.h"
#include "profile.h"
#include "progress.h"
#include "sched_core.h"

/* SATURN_USER_GRES_ENV (the user's own GPU request, kept in a released
 * task's environment): lib/model/jobreq.h */
#include "jobreq.h"

/* Settings and folders, (re)read at init and reconfigure by the agent
 * thread, which is the only reader afterwards. */
extern saturn_sched_settings_t saturn_cfg;
extern char *saturn_state_dir, *saturn_profile_dir, *saturn_progress_dir;

/* --- saturn_files.c (folders, progress files; agent thread, no locks) --- */

/* Descriptors of the folders (-1 when missing or refused, logged), opened
 * by saturn_files_open(): STATE_DIR, PROFILE_DIR, STATE_DIR/progress,
 * STATE_DIR/jobs, STATE_DIR/scripts; and whether per-user folders can be
 * handed to their users (controller running as root). */
extern int saturn_state_fd, saturn_profile_fd, saturn_progress_fd, saturn_jobs_fd,
	saturn_scripts_fd, saturn_users_fd;
extern int saturn_user_dirs;

/* (Re)open the folders after the settings were (re)read: the state folder
 * must belong to us or root and be writable by its owner alone; its
 * sub-folders are made and their modes set through descriptors. Clears
 * saturn_cfg.profiler (logged) when companion jobs cannot be run safely:
 * not root, or a folder refused. Every problem is logged. */
void saturn_files_open(void);
void saturn_files_close(void);

/* Remove name in folder fd (path dir) with unlinkat (a link is removed,
 * never followed); a missing one is no error, a failure is logged. 1 when
 * removed, else 0. */
int saturn_remove_at(int fd, const char *dir, const char *name);

/* --- saturn_views.c (what each user may read of the state; agent thread) --- */

/* After state.json was written with txt: STATE_DIR/users/UID.json (0400,
 * owned by UID) per user with a task or correction, and users/all.json
 * (0644, everything) only when PrivateData hides none of jobs, users,
 * accounts; stale views removed. Logged, never fatal. */
void saturn_views_write(const char *txt);
void saturn_views_reset(void);

/* PARENT/UID (0700, owned by uid; gid -1 = unchanged), made and handed to
 * uid when we are root, else only opened. Its descriptor (caller closes),
 * or -1 (logged at most every 10 minutes per folder and uid, and not when
 * it merely does not exist). */
int saturn_user_dir(int parent_fd, const char *parent, long uid, long gid);

/* Before taking the write locks: make STATE_DIR/progress/UID for a task
 * about to be released. */
void saturn_progress_prepare(long uid);

/* Under the write lock (no file access): the SATURN_PROGRESS_FILE of job_id
 * (xmalloc'd), or NULL when uid's progress folder is not ready. */
char *saturn_progress_path(long uid, uint32_t job_id);

/* What job_id's progress file says (remaining and done batches, the job's
 * own sec_per_batch, when it was written: saturn_progress_summary()), read
 * through uid's folder descriptor (regular file owned by uid, size-capped;
 * refusals logged at most every 10 minutes per job). 0, or -1 when there is no usable file. */
int saturn_progress_observed(uint32_t job_id, long uid, saturn_progress_obs_t *o);

/* Every 20 intervals (1 to 5 minutes), in each STATE_DIR/progress/UID:
 * remove the progress files of jobs not in s and every other file (not a
 * folder) that were not written for a minute, and at once any file over
 * SATURN_PROGRESS_MAX_BYTES (unlinkat only). */
void saturn_progress_sweep(const saturn_snapshot_t *s);

/* --- saturn_reconfig.c (agent thread; takes its own locks) ------------ */

/* After the cycle's plan is chosen (no lock held): restart running tasks
 * that opted in when lib/sched/reconfig.h finds the batch ends sooner (SIGUSR1
 * to their steps under the job write lock), log each decision with its
 * expected gain. mu (may be NULL): the cycle's batches; under
 * saturn_objective=weighted|bounded the decision is judged by the
 * objective and never harms a restarted task's batch past its bound
 * (saturn_reconfig_decide_mu). */
struct saturn_mu;
void saturn_reconfig_pass(saturn_snapshot_t *s, const saturn_sched_build_t *b,
			  const saturn_plan_t *plan, const struct saturn_mu *mu);
/* Right after the snapshot (no lock held), every cycle, also one without
 * Saturn jobs: follow the tasks signalled (keep one still running from
 * being chosen again; log the realised gain of one that ended). */
void saturn_reconfig_follow(saturn_snapshot_t *s);
/* After the settings were (re)read (init, or reconfigure under the conf
 * read lock): saturn_cfg.reconfig.requeue_delay_s from AuthInfo's
 * cred_expire, whether RequeueExit(Hold) lists 75 (logged when not), and
 * the reconfiguration settings logged. */
void saturn_reconfig_load(void);
/* Forget the records (plugin fini). */
void saturn_reconfig_fini(void);

/* --- saturn_snapshot.c ---------------------------------------------- */

/* Fill s from slurmctld; caller holds the job and node read locks.
 * *snap_of_node_p (xmalloc'd, grown as needed) maps node_record index ->
 * snapshot node or -1. Returns the number of Saturn jobs, or -1 on ENOMEM
 * (snapshot incomplete: skip the cycle). */
int saturn_take_snapshot(saturn_snapshot_t *s, int **snap_of_node_p);

/* The SATURN_NEVER note a re-hold leaves on a task Slurm will not start
 * (never: the reason): tied to the job's time limit, partitions, account
 * and QOS, so that a job its user fixes is planned again. Into buf. */
void saturn_never_note(job_record_t *job_ptr, const char *never, char *buf, size_t len);

/* saturn_priority.c, under the read locks: j->prio (the priority Slurm's
 * priority/multifactor would give job_ptr were it not held; 0 under
 * another priority plugin) and j->limits (its QOS and association limits
 * on GPUs and running jobs, when AccountingStorageEnforce has limits). */
void saturn_snap_prio_limits(saturn_snap_job_t *j, job_record_t *job_ptr, double now);

/* No locks: set batches_left of running jobs from their progress files. */
void saturn_read_progress(saturn_snapshot_t *s);

/* --- saturn_agent.c (the agent thread) ------------------------------ */

/* The current plan's id ("pNOW-SEQ"), set when a new plan is adopted. */
extern char plan_id[64];

/* CLOCK_MONOTONIC in seconds, for the lock hold times. */
double now_mono(void);

/* --- saturn_backfill.c ----------------------------------------------- */

/* sched/backfill's fini and sched_p_reconfig once loaded and started by
 * load_backfill(), else NULL. */
extern void (*bf_fini)(void);
extern int (*bf_reconfig)(void);

/* At init (settings read): load sched/backfill from PluginDir unless
 * saturn_backfill=no (every problem logged; Saturn runs without it). */
void load_backfill(void);

/* --- saturn_apply.c (caller holds the job write lock unless said) ----- */

/* last_job_update right after our own changes: not news for the loop. */
extern time_t own_update;

/* The pending record of snapshot job j (the task's own, or its array's
 * meta record while the task is not split off), or NULL. */
job_record_t *saturn_pending_record(const saturn_snap_job_t *j);

/* Carry out desc through the update RPC's own code as the controller
 * (uid 0), no reply sent. SLURM_SUCCESS or an error. */
int saturn_update_as_controller(job_desc_msg_t *desc);

/* saturn_update_as_controller with job_ptr's GRES list (gres_list_req)
 * taken off for the update, as a change between a typed and an untyped
 * GPU request needs: the list Slurm sets when it applies the update
 * stays, else the old one is put back. Caller holds the job write lock. */
int saturn_update_gres_detached(job_record_t *job_ptr, job_desc_msg_t *desc);

/* The live record of a snapshot task if it is still held by us, else NULL. */
job_record_t *saturn_revalidate(const saturn_snap_job_t *j);

/* Set the job's reason text (state_desc) when it changed. */
void saturn_set_reason(job_record_t *job_ptr, const char *reason, time_t now);
/* Set NAME=value in the job's supplemental environment (env_sup, which
 * slurmctld alone writes), replacing an earlier value. */
void saturn_job_env_set(job_record_t *job_ptr, const char *name, const char *value);

/* No locks held (takes the write locks itself): re-hold the released
 * tasks saturn_sched_decide_rehold() lists; they become held tasks of s.
 * Returns the number re-held; *charged: how many of those requeued
 * themselves (saturn_sched_self_requeued). */
int rehold_pass(saturn_snapshot_t *s, int *charged);

/* No locks held: decide from plan and apply under the job write locks
 * (taken here), no release beyond the limit groups of mu (multiuser.h;
 * NULL: none). Adds the time under the locks to *t_lock0..*t_lock1 and
 * the releases to *released. 0, or -1 on ENOMEM. */
struct saturn_mu;
int apply_plan(saturn_snapshot_t *s, const saturn_sched_build_t *b,
	       const saturn_plan_t *plan, const struct saturn_mu *mu, double *t_lock0,
	       double *t_lock1, int *released);

/* --- saturn_planrec.c (plan records: AdminComment or Comment) -------- */

/* Caller holds the job write lock: write released task j's plan record
 * (decision d, the build's predicted speed) into the field saturn_record
 * names, keeping other text there (lib/sched/planrec.h). job_ptr NULL or
 * saturn_record=none: nothing. */
void saturn_planrec_release(job_record_t *job_ptr, const saturn_sched_build_t *b,
			    const saturn_snap_job_t *j, const saturn_decision_t *d);

/* No locks held (takes the job write lock itself, only when some running
 * task has a speed): add each running task's observed seconds per batch
 * (runtime feedback's, else its own last report) to its plan record when
 * it changed. */
void saturn_planrec_observe_pass(const saturn_snapshot_t *s);

/* --- saturn_profcache.c (profile files and their cache; no locks) ---- */

struct saturn_live;
struct saturn_uidtab;

/* PROFILE_DIR/UID/NAME[@CLASS].json (klass NULL or "": NAME.json), where
 * the batch (uid, name) keeps its profile (xmalloc'd). */
char *saturn_profile_path(long uid, const char *batch, const char *klass);

/* The status of that file without following a link: 0 (st filled, *ufd
 * the user's folder, caller closes), -1 when absent or the user's folder
 * is missing or refused (logged by saturn_user_dir). */
int saturn_profile_stat(const char *batch, const char *klass, long uid, int *ufd,
			struct stat *st);

/* Every cycle, before any lookup: drop the cached profiles of batches
 * without tasks in live, apply the budget settings, and unload the
 * profiles of the user holding the most when the total budget kept
 * another user's profile out (lib/sched/budget.h). */
void saturn_profcache_prune(const struct saturn_live *live);
/* Free every cached profile and the budget (agent thread ending). */
void saturn_profcache_fini(void);

/* --- saturn_prune.c (bounded resources; agent thread) ----------------- */

/* Each user's companion jobs (profiler, measurement) pending or running,
 * counted by saturn_prune_pass and raised by each submission. */
extern struct saturn_uidtab saturn_companions;

/* Every cycle, right after the snapshot s (no lock held): forget what is
 * kept for batches without tasks in s (cached profiles, records in
 * memory and on disk, script copies) unless their companion job still
 * runs, count each user's companion jobs, and every 20 intervals remove
 * leftover records and script copies (bounded work). */
void saturn_prune_pass(const saturn_snapshot_t *s);
/* Free the companion job counts (agent thread ending). */
void saturn_prune_fini(void);

/* After a policy appended actions from n0 on for a batch of uid: a
 * SUBMIT_PROFILER or SUBMIT_MEASURE among them becomes a wait when uid
 * already has saturn_companion_jobs companion jobs (lib/sched/budget.h,
 * saturn_budget_companion_wait), else it is counted. 1 when it became a
 * wait, 0 when not (or no submission), -1 on ENOMEM (logged; submitted). */
int saturn_companion_gate(saturn_bpol_actions_t *acts, int n0, long uid);

/* Remove STATE_DIR/KIND-UID-KEY.job and STATE_DIR/scripts/UID-KEY.K.script
 * (K profile for kind "profiler", measure for "measure") with unlinkat. */
void saturn_companion_files_remove(const char *kind, long uid, const char *key);

/* --- saturn_profiles.c (no locks unless said) ------------------------ */

/* A batch is (uid, name) in all of these: two users' batches of the same
 * name have their own profile, profiler job, records and notes. */

/* The profile of batch (uid, name) from PROFILE_DIR/UID/NAME.json (read
 * through the user's folder descriptor: no link, FIFO or device), loaded when the file
 * changed, owner-checked against uid (or root); NULL when there is none or
 * it was rejected (logged once per version). Never a profile loaded for
 * another uid. Owned by the cache. */
const saturn_profile_t *saturn_lookup_profile(const char *batch, long uid, void *arg);

/* The profile of batch (uid, name) measured on node class klass,
 * PROFILE_DIR/UID/NAME@CLASS.json, read and cached as
 * saturn_lookup_profile() does (a missing one is not logged), or NULL.
 * For saturn_snapshot_t.class_profile. */
const saturn_profile_t *saturn_lookup_class_profile(const char *batch, long uid, const char *klass,
						    void *arg);

/* The profile of batch (uid, name) as last loaded by
 * saturn_lookup_profile() (no file access), or NULL. */
const saturn_profile_t *saturn_profile_cached(const char *batch, long uid);
/* The profile of batch (batch, uid) measured on node class klass as last
 * loaded (saturn_lookup_class_profile), or NULL; no file access, so
 * pointers into it stay valid until the next lookup reloads it. The
 * signature of saturn_snapshot_t.class_profile (arg unused). */
const saturn_profile_t *saturn_profile_cached_class(const char *batch, long uid, const char *klass,
						  void *arg);

/* The params JSON text of the profile option d chose for task j ("{}" when
 * unknown), from the profile of j's batch (j->uid, j->batch). Valid until
 * the next saturn_lookup_profile(). */
const char *saturn_option_params(const saturn_snap_job_t *j, const saturn_decision_t *d);

/* "saturn: profiler job N failed, users' requests; " into buf for a batch
 * (uid, name) that fell back, else "". Returns buf. */
const char *saturn_profiler_note(const char *batch, long uid, char *buf, size_t len);

/* Before building the problem (takes the locks it needs itself, each
 * once): submit one profiler job per batch (uid, name) without a profile,
 * with only that user's task ids, and drop their held tasks from s while
 * profiling runs (their reason says so). The decisions are
 * saturn_bpol_profiler's (lib/batch_policy.h). */
void saturn_profiler_pass(saturn_snapshot_t *s);

/* The batch's owner and script, copied from job_id's record; the caller
 * holds the job read lock. 0, or -1 when the record or its script is gone.
 * Free with saturn_batch_owner_free() either way. */
typedef struct saturn_batch_owner {
	uint32_t uid, gid;
	char *account, *partition, *script;
	size_t script_len;
} saturn_batch_owner_t;
int saturn_batch_owner(uint32_t job_id, saturn_batch_owner_t *o);
void saturn_batch_owner_free(saturn_batch_owner_t *o);

/* Submit (no locks held) a one-node job saturn-KIND:BATCH as the batch's
 * owner with gpus GPUs that runs "saturn_profiler --batch BATCH --script
 * COPY ARGS --output PROFILE_DIR/UID/BATCH.json" plus --cache
 * PROFILE_DIR/UID/cache (or --no-cache), in STATE_DIR/jobs/UID with the
 * script copied to STATE_DIR/scripts/UID-BATCH.KIND.script; ARGS is
 * shell text the caller has quoted. Returns the job id, 0 on failure
 * (logged). */
uint32_t saturn_submit_profiler(const char *kind, const char *batch, const saturn_batch_owner_t *o,
				const char *args, int gpus);

/* The measurement job saturn-measure:BATCH as saturn_submit_profiler
 * ("measure"), on nodes nodes (-N nodes, gpus GPUs per node) for items of
 * options on several nodes (#12). */
uint32_t saturn_submit_measure(const char *batch, const saturn_batch_owner_t *o, const char *args,
			       int gpus, int nodes);

/* As saturn_submit_profiler, on node class klass's GPUs (gres
 * gpu:GPU_TYPE:GPUS): named saturn-KIND:BATCH@CLASS, with --class CLASS,
 * writing PROFILE_DIR/UID/BATCH@CLASS.json. Returns the job id, 0 on
 * failure (logged). */
uint32_t saturn_submit_class_companion(const char *kind, const char *batch,
				       const saturn_batch_owner_t *o, const char *args, int gpus,
				       const char *klass, const char *gpu_type);

/* STATE_DIR/KIND-UID-BATCH.job, the record of batch (uid, name)'s
 * companion job (root only) kept across restarts: its text (malloc'd,
 * free()) or NULL (an old STATE_DIR/KIND-BATCH.job is ignored, with a
 * note); and writing it atomically (failure logged, naming job_id). */
char *saturn_record_read(const char *kind, long uid, const char *batch);
void saturn_record_write(const char *kind, long uid, const char *batch, uint32_t job_id,
			 const char *text);

/* What slurmctld says about companion job job_id (ended: gone, finished
 * or completing; pending since its submission; running); the caller holds
 * the job read lock. job_id 0 gives UNKNOWN. */
void saturn_companion_state(uint32_t job_id, saturn_companion_t *c);

/* Log a SATURN_BPOL_LOG action of batch (uid, name) at its level, as
 * "sched/saturn: batch NAME of uid UID: TEXT". */
void saturn_bpol_log(const saturn_bpol_action_t *a, const char *batch, long uid);

/* Every cycle (no lock held; takes the job read lock once when a record
 * has a job): forget the profiler records of batches without tasks in
 * live whose job ended (their files go: saturn_companion_files_remove) and the class
 * profiler jobs that ended; add each user's jobs still pending or running
 * to active. */
void saturn_profiles_prune(const struct saturn_live *live, struct saturn_uidtab *active);

/* Whether uid's profiler job for key (NAME, or NAME@CLASS for a class
 * profiler job) is pending or running as of the last prune. 1 or 0. */
int saturn_profiles_active(long uid, const char *key);

/* Free the profile cache and profiler records (agent thread ending). */
void saturn_profiles_fini(void);

/* --- saturn_measure.c (no locks held; takes the read lock briefly) ---- */

/* After deciding, before applying: decisions about to release a task onto
 * a `predicted` profile option are turned into holds while a measurement
 * job saturn-measure:NAME re-measures those options (one job per batch
 * (uid, name) at a time, each option tried once per submission). Nothing changes without
 * saturn_profiler or with saturn_measure_predicted=no. */
void saturn_measure_pass(const saturn_snapshot_t *s, saturn_decision_t *d, int nd);

/* Notice (and log) measurement jobs that ended, or pending too long to
 * wait for (saturn_bpol_measure_poll); takes the job read lock once, when
 * some measurement job is recorded as running. */
void saturn_measure_poll(void);

/* Every cycle: forget the measurement records of batches without tasks
 * in live and without a running job (their files go:
 * saturn_companion_files_remove); add each user's recorded jobs to active. */
void saturn_measure_prune(const struct saturn_live *live, struct saturn_uidtab *active);

/* Whether uid's measurement job for key (NAME or NAME@CLASS) is recorded
 * as pending or running. 1 or 0. */
int saturn_measure_active(long uid, const char *key);

/* Free the measurement records (agent thread ending). */
void saturn_measure_fini(void);

#endif /* SATURN_INT_H */
