/* saturn_planrec.h - plan records in AdminComment or Comment
 * (saturn_planrec.c).
 */
#ifndef SCHED_SATURN_PLANREC_H
#define SCHED_SATURN_PLANREC_H

#include "src/slurmctld/slurmctld.h"

#include "sched_core.h"

#include "saturn_ctx.h"

/* Caller holds the job write lock: write released task j's plan record
 * (decision d, the build's predicted speed, plan ctx->plan_id) into the
 * field saturn_record names, keeping other text there
 * (lib/sched/planrec.h). job_ptr NULL or saturn_record=none: nothing. */
void saturn_planrec_release(const saturn_ctx_t *ctx, job_record_t *job_ptr,
			    const saturn_sched_build_t *b, const saturn_snap_job_t *j,
			    const saturn_decision_t *d);

/* No locks held (takes the job write lock itself, only when some running
 * task has a speed): add each running task's observed seconds per batch
 * (runtime feedback's, else its own last report) to its plan record when
 * it changed. */
void saturn_planrec_observe_pass(const saturn_ctx_t *ctx, const saturn_snapshot_t *s);

#endif /* SCHED_SATURN_PLANREC_H */
