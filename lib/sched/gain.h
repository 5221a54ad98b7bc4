/* gain.h - the one rule for "is the new plan worth a change": its value
 * (makespan, weighted flow time, ...; smaller is better) must be below the
 * old one by at least the fraction min_gain (saturn_min_gain). Used to
 * replace a carried plan (sched_plan.c, the plugin's plan choice) and to
 * restart running tasks (reconfig.c).
 */
#ifndef SATURN_GAIN_H
#define SATURN_GAIN_H

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

#endif /* SATURN_GAIN_H */
