/* saturn_agent.h - sched/saturn's agent thread (saturn_agent.c). */
#ifndef SATURN_AGENT_H
#define SATURN_AGENT_H

/* Read settings, create the state folders, load sched/backfill when
 * configured. Called from init() before the thread starts. */
void saturn_agent_init(void);

/* The thread: one planning cycle every saturn_interval seconds and soon
 * after any job change, until saturn_agent_stop(). */
void *saturn_agent(void *arg);

/* Ask the thread to stop (it also aborts a running solve). */
void saturn_agent_stop(void);

/* After the thread has been joined: stop sched/backfill, free memory. */
void saturn_agent_fini(void);

/* `scontrol reconfigure`: re-read settings at the next wake-up. */
void saturn_agent_reconfig(void);

#endif /* SATURN_AGENT_H */
