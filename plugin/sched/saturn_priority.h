/* saturn_priority.h - a held task's priority and limits as Slurm would
 * see them (saturn_priority.c).
 */
#ifndef SCHED_SATURN_PRIORITY_H
#define SCHED_SATURN_PRIORITY_H

#include "src/slurmctld/slurmctld.h"

#include "sched_core.h"

/* Under the read locks: j->prio (the priority Slurm's
 * priority/multifactor would give job_ptr were it not held; 0 under
 * another priority plugin) and j->limits (its QOS and association limits
 * on GPUs and running jobs, when AccountingStorageEnforce has limits). */
void saturn_snap_prio_limits(saturn_snap_job_t *j, job_record_t *job_ptr, double now);

#endif /* SCHED_SATURN_PRIORITY_H */
