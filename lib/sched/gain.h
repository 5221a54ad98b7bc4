/* gain.h - the one rule for "is the new plan worth a change": its value
 * (makespan, weighted flow time, ...; smaller is better) must be below the
 * old one by at least the fraction min_gain (saturn_min_gain). Used to
 * replace a carried plan (sched_plan.c, the plugin's plan choice) and to
 * restart running tasks (reconfig.c).
 */
#ifndef SATURN_GAIN_H
#define SATURN_GAIN_H

#include <math.h>

/* The value a new plan must be below to replace one of value old. */
static inline double saturn_gain_needed(double old_value, double min_gain)
{
	return old_value * (1.0 - min_gain);
}

/* 1 when new_value gains at least min_gain over old_value (0 for NaN). */
static inline int saturn_gains(double new_value, double old_value, double min_gain)
{
	return new_value < saturn_gain_needed(old_value, min_gain);
}

/* The planner's stop_ratio (planner.h) for a search whose result replaces
 * a plan only when it gains min_gain: once a plan is within 1 / (1 -
 * min_gain) of the lower bound, no plan the search could still find
 * would gain enough over it. +inf when min_gain >= 1 (nothing replaces). */
static inline double saturn_gain_stop_ratio(double min_gain)
{
	return min_gain < 1 ? 1.0 / (1.0 - min_gain) : INFINITY;
}

#endif /* SATURN_GAIN_H */
