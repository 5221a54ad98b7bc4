/* saturn_prune.h - what is kept per batch lives only as long as the batch
 * (saturn_prune.c; agent thread).
 */
#ifndef SCHED_SATURN_PRUNE_H
#define SCHED_SATURN_PRUNE_H

#include "sched_core.h"

#include "saturn_ctx.h"

/* Every cycle, right after the snapshot s (no lock held): forget what is
 * kept for batches without tasks in s (cached profiles, records in
 * memory and on disk, script copies) unless their companion job still
 * runs, count each user's companion jobs into ctx->companions, and every
 * 20 intervals remove leftover records and script copies (bounded
 * work). */
void saturn_prune_pass(saturn_ctx_t *ctx, const saturn_snapshot_t *s);
/* Free the companion job counts (agent thread ending). */
void saturn_prune_fini(saturn_ctx_t *ctx);

#endif /* SCHED_SATURN_PRUNE_H */
