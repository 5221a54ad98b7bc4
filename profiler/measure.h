/* measure.h - saturn-profile --measure: re-measure options of an existing
 * profile that a plan is about to rely on, update them in place, re-fit the
 * technique's remaining predictions, write the profile back and refresh
 * the profile cache (saturn-profile(1), "RE-MEASURING").
 */
#ifndef SATURN_PROFILER_MEASURE_H
#define SATURN_PROFILER_MEASURE_H

#include "probe.h"
#include "technique.h"

/* Run --measure o->measure against the profile o->output, with the
 * allocation's ndev devices devs. Returns the exit status: 0 every item
 * ran a trial, 1 some could not (those options are unchanged), 2 a usage
 * error (malformed list, item not in the profile, unreadable profile; the
 * profile is untouched). */
int measure_run(const struct opts *o, const saturn_techniques_t *reg,
		char (*devs)[32], int ndev);

#endif /* SATURN_PROFILER_MEASURE_H */
