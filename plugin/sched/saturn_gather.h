/* saturn_gather.h - a cycle's inputs (saturn_gather.c; agent thread). */
#ifndef SCHED_SATURN_GATHER_H
#define SCHED_SATURN_GATHER_H

#include "sched_core.h"
#include "sched_cycle.h"

#include "saturn_ctx.h"

/* What a gather measured (CLOCK_MONOTONIC, now_mono): before the read
 * locks were asked for (t0), held (t1) and released (t2), and its end
 * (t3); and the thread's CPU time under the locks (cpu, seconds:
 * now_thread_cpu). */
typedef struct saturn_gather_times {
	double t0, t1, t2, t3, cpu;
} saturn_gather_times_t;

/* Gather a cycle's inputs: the snapshot s under one read-lock section;
 * then, without locks: progress files swept, reconfigured tasks followed,
 * measurement jobs polled, what batches without tasks left behind pruned;
 * the released tasks to re-hold re-held (saturn_rehold.c, its own write
 * lock section; they become held tasks of s); each running task's progress
 * read; profiler jobs submitted for batches without a profile (their held
 * tasks dropped from s: saturn_profiler_pass, its own lock sections); and
 * the profiles of every batch left in s, and of each on every node class,
 * loaded into ps (pointers into the profile cache, valid until the next
 * gather). *requeued_now: the tasks re-held because they requeued
 * themselves. Returns the number of Saturn jobs in the snapshot (0:
 * nothing else was done but the passes every cycle needs), or -1 (ENOMEM,
 * logged: skip the cycle). */
int saturn_gather(saturn_ctx_t *ctx, saturn_snapshot_t *s, int **snap_of_node,
		  saturn_profset_t *ps, saturn_gather_times_t *t, int *requeued_now);

#endif /* SCHED_SATURN_GATHER_H */
