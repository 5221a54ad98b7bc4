/* saturn_jobrec.h - sched/saturn's hands on one slurmctld job record
 * (saturn_jobrec.c; caller holds the job write lock unless said).
 */
#ifndef SCHED_SATURN_JOBREC_H
#define SCHED_SATURN_JOBREC_H

#include <time.h>

#include "src/slurmctld/slurmctld.h"

#include "sched_core.h"

/* The pending record of snapshot job j (the task's own, or its array's
 * meta record while the task is not split off), or NULL. The job read
 * lock is enough. */
job_record_t *saturn_pending_record(const saturn_snap_job_t *j);

/* The live record of a snapshot task if it is still held by us, else
 * NULL. The job read lock is enough. */
job_record_t *saturn_revalidate(const saturn_snap_job_t *j);

/* Carry out desc through the update RPC's own code (validation, array
 * task split, TRES counts, hold rules) as the controller (uid 0), with no
 * reply sent anywhere (slurm_compat.h). SLURM_SUCCESS or an error. */
int saturn_update_as_controller(job_desc_msg_t *desc);

/* saturn_update_as_controller with job_ptr's GRES list (gres_list_req)
 * taken off for the update, as a change between a typed and an untyped
 * GPU request needs: the list Slurm sets when it applies the update
 * stays, else the old one is put back. */
int saturn_update_gres_detached(job_record_t *job_ptr, job_desc_msg_t *desc);

/* Set the job's reason text (state_desc) when it changed. */
void saturn_set_reason(job_record_t *job_ptr, const char *reason, time_t now);
/* Set NAME=value in the job's supplemental environment (env_sup, which
 * slurmctld alone writes), replacing an earlier value. */
void saturn_job_env_set(job_record_t *job_ptr, const char *name, const char *value);

#endif /* SCHED_SATURN_JOBREC_H */
