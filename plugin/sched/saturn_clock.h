/* saturn_clock.h - the monotonic clock sched/saturn times its lock hold
 * times with. A pure helper: nothing to define, nothing shared.
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

#endif /* SCHED_SATURN_CLOCK_H */
