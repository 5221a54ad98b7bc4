/* saturn_reconfig.h - restarting running tasks onto a better
 * configuration (saturn_reconfig.c; agent thread; takes its own locks).
 */
#ifndef SCHED_SATURN_RECONFIG_H
#define SCHED_SATURN_RECONFIG_H

#include "reconfig.h"
#include "sched_core.h"

#include "saturn_ctx.h"

/* After the cycle (no lock held; takes the job write lock itself): restart
 * the running tasks the cycle chose (saturn_cycle_run's reconf, decided
 * by lib/sched/reconfig.h): SIGUSR1 to their steps, each decision logged
 * with its expected gain. Nothing when r has no choice. */
void saturn_reconfig_signal(const saturn_ctx_t *ctx, const saturn_snapshot_t *s,
			    const saturn_reconfig_result_t *r);
/* Whether RequeueExit(Hold) lists the checkpoint's exit status 75 (or it
 * was not read yet): running tasks may be restarted. 1 or 0. */
int saturn_reconfig_requeue_ok(void);
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
