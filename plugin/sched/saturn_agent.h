/* saturn_agent.h - sched/saturn's agent thread (saturn_agent.c). */
#ifndef SCHED_SATURN_AGENT_H
#define SCHED_SATURN_AGENT_H

#include "saturn_ctx.h"

/* Read settings into ctx, create the state folders, load sched/backfill
 * when configured. Called from init() before the thread starts; ctx is
 * the plugin's one context (SATURN_CTX_INIT, or emptied by
 * saturn_agent_fini). */
void saturn_agent_init(saturn_ctx_t *ctx);

/* The thread (arg: the saturn_ctx_t * given to saturn_agent_init): one
 * planning cycle every saturn_interval seconds and soon after any job
 * change, until saturn_agent_stop(). Returns NULL. */
void *saturn_agent(void *arg);

/* Ask the thread to stop (it also aborts a running solve). */
void saturn_agent_stop(void);

/* After the thread has been joined: stop sched/backfill, free memory,
 * close ctx's folders (ctx is as SATURN_CTX_INIT left it afterwards). */
void saturn_agent_fini(saturn_ctx_t *ctx);

/* `scontrol reconfigure`: re-read settings at the next wake-up. Does not
 * touch the context (the thread re-reads it). */
void saturn_agent_reconfig(void);

#endif /* SCHED_SATURN_AGENT_H */
