/* saturn_rehold.h - released tasks put back into the hold
 * (saturn_rehold.c).
 */
#ifndef SCHED_SATURN_REHOLD_H
#define SCHED_SATURN_REHOLD_H

#include "sched_core.h"

#include "saturn_ctx.h"

/* No locks held (takes the write locks itself): re-hold the released
 * tasks saturn_sched_decide_rehold() lists; they become held tasks of s.
 * ctx->own_update is set to last_job_update right after the changes.
 * Returns the number re-held; *charged: how many of those requeued
 * themselves (saturn_sched_self_requeued). */
int rehold_pass(saturn_ctx_t *ctx, saturn_snapshot_t *s, int *charged);

#endif /* SCHED_SATURN_REHOLD_H */
