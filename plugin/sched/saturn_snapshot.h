/* saturn_snapshot.h - reading slurmctld into libsaturn's snapshot
 * (saturn_snapshot.c).
 */
#ifndef SCHED_SATURN_SNAPSHOT_H
#define SCHED_SATURN_SNAPSHOT_H

#include <stddef.h>

#include "src/slurmctld/slurmctld.h"

#include "sched_core.h"

#include "saturn_ctx.h"

/* Fill s from slurmctld; caller holds the job and node read locks. The
 * class profiles are looked up with ctx (saturn_lookup_class_profile).
 * *snap_of_node_p (xmalloc'd, grown as needed) maps node_record index ->
 * snapshot node or -1. Returns the number of Saturn jobs, or -1 on ENOMEM
 * (snapshot incomplete: skip the cycle). */
int saturn_take_snapshot(const saturn_ctx_t *ctx, saturn_snapshot_t *s, int **snap_of_node_p);

/* The SATURN_NEVER note a re-hold leaves on a task Slurm will not start
 * (never: the reason): tied to the job's time limit, partitions, account
 * and QOS, so that a job its user fixes is planned again. Into buf. */
void saturn_never_note(job_record_t *job_ptr, const char *never, char *buf, size_t len);

#endif /* SCHED_SATURN_SNAPSHOT_H */
