/* gpumodel.h - the GPU model every plan is placed over (gpumodel.c; not
 * a public header; listsched.h includes it).
 *
 * The resource model is per GPU id: on node n, GPU i is first free at
 * free_at[n][i] (the busy entries' until_s and the running tasks' ends, each
 * on the ids it holds; 0 otherwise). Two placements read it:
 *
 *  - by id (FCFS, carry: Slurm picks the ids itself): a task takes the G
 *    GPUs of its node that are free first and holds them, by id, until it
 *    ends; no gap before a GPU's free time is used.
 *  - by count (the planner's decoder and the baseline: backfilling): the
 *    step function "GPUs free at time t" (spase_prof_t) is derived from the
 *    same per-id times, and tasks take counts out of it. A count is exact:
 *    the busy and running intervals all start at 0, so handing out ids in
 *    start order afterwards (saturn_plan_assign_gpus()) always succeeds when
 *    the counts never go below zero.
 *
 * Symbols are prefixed spase_ (libsaturn is linked into slurmctld plugins).
 */
#ifndef SATURN_GPUMODEL_H
#define SATURN_GPUMODEL_H

#include "model.h"

/* --- the GPUs of a problem, by id ---------------------------------------- */

/* Per node and GPU id, the time the GPU is first free: busy GPUs until their
 * until_s, running tasks' GPUs until the task ends (ids out of range are
 * ignored). Returns nnodes arrays, or NULL (ENOMEM). */
double **spase_gpu_free_create(const saturn_problem_t *p);
/* Free what spase_gpu_free_create() returned. NULL is allowed. */
void spase_gpu_free_destroy(double **free_at, int nnodes);

/* The G GPUs of a node (ngpus of them, free times free_at) that are free
 * first, ties to the lower id, into ids[] ascending; returns the time all G
 * are free. 1 <= G <= ngpus <= SATURN_MAX_GPUS_PER_NODE. */
double spase_gpu_pick(const double *free_at, int ngpus, int G, int *ids);

/* Placement by id: put task t with option o on node n at the earliest time
 * >= not_before its spase_gpu_pick() GPUs allow, hold those GPUs until it
 * ends and record it as assignment t of plan (with the ids). Returns 0, or
 * -1 (ENOMEM). */
int spase_place_ids(double **free_at, saturn_plan_t *plan,
		    const saturn_problem_t *p, int t, int o, int n,
		    double not_before);

/* spase_place_ids() for option o on nodes[0..k) (k its node count, a
 * gang): it starts when all k nodes have their GPUs free, and holds the
 * spase_gpu_pick() GPUs of each. spase_place_ids() refuses a multi-node
 * option (-1, EINVAL). Returns 0, or -1 (ENOMEM; EINVAL when a node is
 * out of range or has fewer GPUs than the option, nothing placed). */
int spase_place_ids_nodes(double **free_at, saturn_plan_t *plan,
			  const saturn_problem_t *p, int t, int o,
			  const int *nodes, double not_before);

/* The gang of option o of task t (its node count k of nodes of one class
 * that fit it) whose spase_gpu_pick() GPUs are all free first, into
 * nodes[0..k); returns that time, or INFINITY when no k nodes fit. */
double spase_gang_pick(double **free_at, const saturn_problem_t *p, int t,
		       int o, int *nodes);

/* Record every running task of p in plan, on its node, GPUs and option,
 * starting at 0. Returns 0 or -1 (ENOMEM). */
int spase_plan_pin_running(saturn_plan_t *plan, const saturn_problem_t *p);

/* Set plan->makespan_s to the latest end of its assignments. */
void spase_plan_set_makespan(saturn_plan_t *plan);

/* --- the same GPUs, by count ------------------------------------------- */

/* Step function of free GPUs on one node: free[i] GPUs on [t[i], t[i+1]),
 * the last step lasting forever. t[0] == 0. */
typedef struct spase_prof {
	int n, cap;
	int full; /* steps before this one have no free GPU (a search hint) */
	double *t;
	int *free;
} spase_prof_t;

int spase_prof_init(spase_prof_t *pr, int cap);
void spase_prof_free(spase_prof_t *pr);
int spase_prof_copy(spase_prof_t *dst, const spase_prof_t *src);
/* The count view of one node's per-id free times f (ngpus of them): free(t)
 * = #{i : f[i] <= t}. Returns 0 or -1 (ENOMEM). */
int spase_prof_from_gpus(spase_prof_t *pr, const double *f, int ngpus);
/* Earliest s >= r with at least g GPUs free on [s, s+d) (for d == 0: at
 * instant s). Sets *free_at to the free count at s. */
double spase_prof_earliest(const spase_prof_t *pr, int g, double d, double r,
			   int *free_at);
/* Take g GPUs on [s, e). Returns 0 or -1 (ENOMEM). */
int spase_prof_take(spase_prof_t *pr, double s, double e, int g);

#endif /* SATURN_GPUMODEL_H */
