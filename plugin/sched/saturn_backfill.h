/* saturn_backfill.h - Slurm's sched/backfill beside us, for every other
 * job (saturn_backfill.c).
 */
#ifndef SCHED_SATURN_BACKFILL_H
#define SCHED_SATURN_BACKFILL_H

#include "saturn_ctx.h"

/* At init (settings read): load sched/backfill from PluginDir and start
 * it unless ctx->cfg.backfill is off (saturn_backfill=no); every problem
 * logged, Saturn runs without it. */
void saturn_backfill_load(const saturn_ctx_t *ctx);
/* `scontrol reconfigure`: sched/backfill's sched_p_reconfig when it was
 * loaded and started, else nothing. Any thread. */
void saturn_backfill_reconfig(void);
/* Plugin fini: stop sched/backfill (its fini joins its thread) when it was
 * started; afterwards saturn_backfill_reconfig() does nothing. The shared
 * object stays loaded. */
void saturn_backfill_fini(void);

#endif /* SCHED_SATURN_BACKFILL_H */
