/* saturn_apply.h - a plan carried out on slurmctld's job records
 * (saturn_apply.c).
 */
#ifndef SCHED_SATURN_APPLY_H
#define SCHED_SATURN_APPLY_H

#include "sched_core.h"
#include "sched_cycle.h"

#include "saturn_ctx.h"

/* No locks held: carry out the cycle's decisions d (made from plan,
 * which may be NULL when nothing was planned: then only the tasks b left
 * held get their reasons; b NULL or without a problem: nothing built) and
 * the reasons of the tasks waiting for a profiler job (holds, nholds:
 * saturn_cycle_out_t's prof_holds) under the job write locks, taken here
 * once. Before the locks, a multi-node release without its node list
 * stays held. Released tasks carry ctx->plan_id; ctx->own_update is set
 * to last_job_update right after the changes. Sets the time under the
 * locks into *t_lock0..*t_lock1, the thread's CPU time under them into
 * *cpu_lock (seconds) and the tasks released into *released; none of the
 * three when there was nothing to apply. */
void saturn_apply_decisions(saturn_ctx_t *ctx, saturn_snapshot_t *s, const saturn_sched_build_t *b,
			    const saturn_plan_t *plan, saturn_decision_t *d, int nd,
			    const saturn_cycle_prof_hold_t *holds, int nholds, double *t_lock0,
			    double *t_lock1, double *cpu_lock, int *released);

#endif /* SCHED_SATURN_APPLY_H */
