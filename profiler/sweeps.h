/* sweeps.h - saturn-profile's sweeps (sweeps.c): which trials to run for
 * each signature, running them, and the options of the profile they give.
 */
#ifndef SATURN_PROFILER_SWEEPS_H
#define SATURN_PROFILER_SWEEPS_H

#include "cache.h"
#include "internode.h"
#include "probe.h"
#include "profile.h"
#include "signatures.h"
#include "sweep.h"
#include "technique.h"
#include "trials.h"

/* parameter candidates per technique at most */
#define MAX_CAND 3


/* one sweep over a GPU range with one parameter candidate */
struct tsweep {
	const saturn_technique_t *t;
	int cand;
	char params[512];
	saturn_sweep_t *sw;
	int lo, hi;
	int skipped; /* not measured on purpose (skip_offload): why */
	char skip_why[200];
	int cached; /* options taken from the profile cache: */
	const saturn_profile_task_t *from_cache;
};

/* The techniques to sweep for each signature: those of the registry (or of
 * --techniques) that run on this node, over their GPU range. -1 on ENOMEM. */
int setup_sweeps(const struct opts *o, const saturn_techniques_t *reg, struct sig *sigs, int nsigs,
		 int ndev);

/* Run every sweep of every signature to completion, in rounds of
 * independent trials. 0, or -1 (printed). */
int run_sweeps(struct trial_pool *pool, struct sig *sigs, int nsigs, const saturn_bw_table_t *bw,
	       int ndev, int exhaustive);

/* The profile task of signature s: its options from the sweeps, or from
 * the cache entry for techniques taken from it. Prints a summary line.
 * Returns the number of usable options. */
int assemble_task(const struct opts *o, struct sig *s, saturn_profile_task_t *pt, int ndev);

/* Techniques of each signature whose results the cache holds for every GPU
 * count this run would sweep: taken from the entry, not trialled. */
void use_cache(const struct pcache *pc, struct sig *sigs, int nsigs, saturn_profile_t **entries,
	       int reuse);

/* Write or refresh each signature's cache entry: this run's options, plus
 * the old entry's for techniques this run did not consider. An entry keeps
 * the creation time of the oldest result it holds. */
void store_cache(const struct pcache *pc, const char *batch, struct sig *sigs, saturn_profile_t *pr,
		 saturn_profile_t **entries);

#endif /* SATURN_PROFILER_SWEEPS_H */
