/* saturn_reconfig.h - restarting running tasks onto a better
 * configuration (saturn_reconfig.c; agent thread; takes its own locks).
 */
#ifndef SCHED_SATURN_RECONFIG_H
#define SCHED_SATURN_RECONFIG_H

#include "sched_core.h"

#include "saturn_ctx.h"

struct saturn_mu;

/* After the cycle's plan is chosen (no lock held): restart running tasks
 * that opted in when lib/sched/reconfig.h finds the batch ends sooner (SIGUSR1
 * to their steps under the job write lock), log each decision with its
 * expected gain. mu (may be NULL): the cycle's batches; under
 * saturn_objective=weighted|bounded the decision is judged by the
 * objective and never harms a restarted task's batch past its bound
 * (saturn_reconfig_decide_mu). */
void saturn_reconfig_pass(const saturn_ctx_t *ctx, saturn_snapshot_t *s,
			  const saturn_sched_build_t *b, const saturn_plan_t *plan,
			  const struct saturn_mu *mu);
/* Right after the snapshot (no lock held), every cycle, also one without
 * Saturn jobs: follow the tasks signalled (keep one still running from
 * being chosen again; log the realised gain of one that ended). */
void saturn_reconfig_follow(const saturn_ctx_t *ctx, saturn_snapshot_t *s);
/* After the settings were (re)read (init, or reconfigure under the conf
 * read lock): ctx->cfg.reconfig.requeue_delay_s from AuthInfo's
 * cred_expire, whether RequeueExit(Hold) lists 75 (logged when not), and
 * the reconfiguration settings logged. */
void saturn_reconfig_load(saturn_ctx_t *ctx);
/* Forget the records (plugin fini). */
void saturn_reconfig_fini(void);

#endif /* SCHED_SATURN_RECONFIG_H */
