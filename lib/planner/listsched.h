/* listsched.h - plan construction: the one list scheduler and its GPU model
 * (not a public header).
 *
 * Every plan the library builds is built here: the planner's decoder (every
 * search method's solutions), current practice (saturn_planner_baseline()),
 * first-come-first-served (saturn_sched_fcfs()) and carried plans
 * (saturn_sched_carry()). doc/planner.md, "Plan construction", describes it.
 *
 * The GPU model (per GPU id, and the same GPUs by count) and its
 * placements are declared in gpumodel.h, included here; the decoder
 * (listsched.c: spase_decode(), spase_place_arrival(), gangs by count) is
 * declared in planner_int.h, as it works on the planner's instance.
 *
 * Symbols are prefixed spase_ (libsaturn is linked into slurmctld plugins).
 */
#ifndef SATURN_LISTSCHED_H
#define SATURN_LISTSCHED_H

#include "model.h"

#include "gpumodel.h"

#endif /* SATURN_LISTSCHED_H */
