/* saturn_apply.h - a plan carried out on slurmctld's job records
 * (saturn_apply.c).
 */
#ifndef SCHED_SATURN_APPLY_H
#define SCHED_SATURN_APPLY_H

#include "sched_core.h"

#include "saturn_ctx.h"

struct saturn_mu;

/* No locks held: decide from plan and apply under the job write locks
 * (taken here), no release beyond the limit groups of mu (multiuser.h;
 * NULL: none). Released tasks carry ctx->plan_id; ctx->own_update is set
 * to last_job_update right after the changes. Adds the time under the
 * locks to *t_lock0..*t_lock1 and the releases to *released. 0, or -1 on
 * ENOMEM. */
int apply_plan(saturn_ctx_t *ctx, saturn_snapshot_t *s, const saturn_sched_build_t *b,
	       const saturn_plan_t *plan, const struct saturn_mu *mu, double *t_lock0,
	       double *t_lock1, int *released);

#endif /* SCHED_SATURN_APPLY_H */
