/* saturn_companion.h - what the companion jobs (profiler, measurement)
 * share (saturn_companion.c; agent thread, no locks).
 */
#ifndef SCHED_SATURN_COMPANION_H
#define SCHED_SATURN_COMPANION_H

#include "batch_policy.h"

#include "saturn_ctx.h"

/* After a policy appended actions from n0 on for a batch of uid: a
 * SUBMIT_PROFILER or SUBMIT_MEASURE among them becomes a wait when uid
 * already has saturn_companion_jobs companion jobs (ctx->companions;
 * lib/sched/budget.h, saturn_budget_companion_wait), else it is counted.
 * 1 when it became a wait, 0 when not (or no submission), -1 on ENOMEM
 * (logged; submitted). */
int saturn_companion_gate(saturn_ctx_t *ctx, saturn_bpol_actions_t *acts, int n0, long uid);

/* Remove STATE_DIR/KIND-UID-KEY.job and STATE_DIR/scripts/UID-KEY.K.script
 * (K profile for kind "profiler", measure for "measure") with unlinkat. */
void saturn_companion_files_remove(const saturn_ctx_t *ctx, const char *kind, long uid,
				   const char *key);

#endif /* SCHED_SATURN_COMPANION_H */
