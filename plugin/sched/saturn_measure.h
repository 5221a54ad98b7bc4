/* saturn_measure.h - measurement jobs for predicted profile options
 * (saturn_measure.c; no locks held; takes the read lock briefly).
 */
#ifndef SCHED_SATURN_MEASURE_H
#define SCHED_SATURN_MEASURE_H

#include "budget.h"
#include "sched_core.h"
#include "sched_cycle.h"

#include "saturn_ctx.h"

/* The batches' measurement records for the cycle (saturn_cycle_in_t's
 * measure): those of every batch and node class with a profile in
 * profiles, each read from its file the first time. NULL without
 * saturn_profiler or with saturn_measure_predicted=no. Valid until the
 * next call of a function of this file. */
const saturn_measset_t *saturn_measure_records(const saturn_ctx_t *ctx,
					       const saturn_profset_t *profiles);

/* After the cycle, before its decisions are applied: keep and write the
 * records the cycle changed, and submit the measurement jobs it asks for
 * (each counted in ctx->companions); a job's id goes into its held
 * tasks' reasons. A job that cannot be submitted leaves its tasks held
 * this cycle (the next relies on the predictions). Returns the number of
 * jobs that could not be submitted. */
int saturn_measure_apply(saturn_ctx_t *ctx, const saturn_snapshot_t *s, saturn_cycle_out_t *out);

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
