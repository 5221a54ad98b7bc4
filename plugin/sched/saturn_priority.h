/* saturn_priority.h - a held task's priority and limits as Slurm would
 * see them (saturn_priority.c).
 */
#ifndef SCHED_SATURN_PRIORITY_H
#define SCHED_SATURN_PRIORITY_H

#include "src/slurmctld/slurmctld.h"

#include "sched_core.h"

/* The association manager's read locks (associations, QOS, TRES) that
 * saturn_snap_prio_limits() and Slurm's partition checks
 * (part_policy_valid_acct: 24.11 and later read associations there) need:
 * taken once for a whole snapshot, inside the slurmctld locks (Slurm's
 * order), released by saturn_prio_unlock(). Returns the position of the
 * gpu TRES for saturn_snap_prio_limits() (-1: none). */
int saturn_prio_lock(void);
void saturn_prio_unlock(void);

/* Under the read locks and saturn_prio_lock(): j->prio (the priority Slurm's
 * priority/multifactor would give job_ptr were it not held; 0 under
 * another priority plugin) and j->limits (its QOS and association limits
 * on GPUs and running jobs, when AccountingStorageEnforce has limits). */
void saturn_snap_prio_limits(saturn_snap_job_t *j, job_record_t *job_ptr, double now, int gpu_pos);

#endif /* SCHED_SATURN_PRIORITY_H */
