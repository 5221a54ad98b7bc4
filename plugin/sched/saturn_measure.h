/* saturn_measure.h - measurement jobs for predicted profile options
 * (saturn_measure.c; no locks held; takes the read lock briefly).
 */
#ifndef SCHED_SATURN_MEASURE_H
#define SCHED_SATURN_MEASURE_H

#include "budget.h"
#include "sched_core.h"

#include "saturn_ctx.h"

/* After deciding, before applying: decisions about to release a task onto
 * a `predicted` profile option are turned into holds while a measurement
 * job saturn-measure:NAME re-measures those options (one job per batch
 * (uid, name) at a time, each option tried once per submission; each
 * submission counted in ctx->companions). Nothing changes without
 * saturn_profiler or with saturn_measure_predicted=no. */
void saturn_measure_pass(saturn_ctx_t *ctx, const saturn_snapshot_t *s, saturn_decision_t *d,
			 int nd);

/* Notice (and log) measurement jobs that ended, or pending too long to
 * wait for (saturn_bpol_measure_poll); takes the job read lock once, when
 * some measurement job is recorded as running. */
void saturn_measure_poll(const saturn_ctx_t *ctx);

/* Every cycle: forget the measurement records of batches without tasks
 * in live and without a running job (their files go:
 * saturn_companion_files_remove); add each user's recorded jobs to
 * active. */
void saturn_measure_prune(const saturn_ctx_t *ctx, const saturn_live_t *live,
			  saturn_uidtab_t *active);

/* Whether uid's measurement job for key (NAME or NAME@CLASS) is recorded
 * as pending or running. 1 or 0. */
int saturn_measure_active(long uid, const char *key);

/* Free the measurement records (agent thread ending). */
void saturn_measure_fini(void);

#endif /* SCHED_SATURN_MEASURE_H */
