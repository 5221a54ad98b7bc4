/* probe.h - saturn-profile's node probe and its shared options. */
#ifndef SATURN_PROFILER_PROBE_H
#define SATURN_PROFILER_PROBE_H

#include "profile.h"

extern const char *prog;

/* strdup that exits the program on ENOMEM (NULL gives ""). */
char *xstrdup(const char *s);

struct opts {
	const char *batch, *script, *task_ids, *output;
	int trial_batches, warmup, max_gpus, exhaustive, quiet, keep;
	double timeout;
	const char *backend, *topology, *gres_conf, *klass, *techniques;
	const char *cache_dir; /* --cache; NULL = the default folder */
	int no_cache;
	double cache_max_age; /* days */
	const char *measure;  /* --measure LIST */
	double escalate;      /* --escalate PCT: a miss beyond it measures the
			       * technique's other predictions too (0 = off) */
	double internode_gbs; /* --internode-bw GB/s: predicted multi-node
			       * options (0 = none) */
	int internode_nodes;  /* --internode-nodes K: up to K nodes (2) */
};

/* Fill hw (GPU model and memory, links, NCCL bus bandwidth per GPU count)
 * for ngpus GPUs; ar[g]/ag[g] receive the all-reduce/all-gather bus
 * bandwidth. 0, 77 (cuda backend asked for, no device), -1 (printed). */
int probe_hw(const struct opts *o, int ngpus, saturn_profile_hw_t *hw,
	     double *ar, double *ag);

/* --show-topology. Exit status. */
int show_topology(const struct opts *o);

#endif /* SATURN_PROFILER_PROBE_H */
