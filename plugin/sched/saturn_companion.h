/* saturn_companion.h - what the companion jobs (profiler, measurement)
 * share (saturn_companion.c; agent thread, no locks).
 */
#ifndef SCHED_SATURN_COMPANION_H
#define SCHED_SATURN_COMPANION_H

#include <stdint.h>

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

/* STATE_DIR/KIND-UID-BATCH.job, the record of batch (uid, name)'s
 * companion job (root only) kept across restarts: its text (malloc'd,
 * free()) or NULL (an old STATE_DIR/KIND-BATCH.job is ignored, with a
 * note); and writing it atomically (failure logged, naming job_id). */
char *saturn_record_read(const saturn_ctx_t *ctx, const char *kind, long uid, const char *batch);
void saturn_record_write(const saturn_ctx_t *ctx, const char *kind, long uid, const char *batch,
			 uint32_t job_id, const char *text);

/* What slurmctld says about companion job job_id (ended: gone, finished
 * or completing; pending since its submission; running); the caller holds
 * the job read lock. job_id 0 gives UNKNOWN. */
void saturn_companion_state(uint32_t job_id, saturn_companion_t *c);

/* Log a SATURN_BPOL_LOG action of batch (uid, name) at its level, as
 * "sched/saturn: batch NAME of uid UID: TEXT". */
void saturn_bpol_log(const saturn_bpol_action_t *a, const char *batch, long uid);

#endif /* SCHED_SATURN_COMPANION_H */
