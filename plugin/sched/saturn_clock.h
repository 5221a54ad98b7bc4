/* saturn_clock.h - the clocks sched/saturn times its lock hold times with
 * (wall and the thread's CPU). Pure helpers: nothing to define, nothing
 * shared.
 */
#ifndef SCHED_SATURN_CLOCK_H
#define SCHED_SATURN_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in seconds. */
static inline double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID): next
 * to a wall-clock hold time it tells the plugin's own work from the time
 * the thread waited for a CPU (on a loaded controller host the two
 * differ by far). */
static inline double now_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif /* SCHED_SATURN_CLOCK_H */
