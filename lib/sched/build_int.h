/* build_int.h - internal to the problem build (sched_build.c,
 * build_options.c, build_classes.c); not a public header of lib/sched.
 * The functions keep the contracts their comments state; "saturn_bld_"
 * marks them as the build's own.
 */
#ifndef SATURN_BUILD_INT_H
#define SATURN_BUILD_INT_H

#include <stdint.h>

#include "sched_core.h"

/* Node classes: one per distinct (partitions, hardware class) of the
 * nodes, set only when some held or released job may not use some node
 * (partitions, its GPU type or --constraint) or the nodes are of more
 * than one hardware class (node_class.h); n == 0 otherwise: no classes,
 * the problem is the same as without them. The partitions are part of a
 * class only when they matter (parts). */
#define CLASS_LEN (SATURN_CLASS_NAME_MAX + 200)
/* The class profiles of the batch being built (one lookup per class and
 * run of tasks of one batch, as for the batch's profile): asked[c] once
 * pr[c] was looked up. */
typedef struct class_cache {
	const saturn_profile_t **pr;
	char *asked;
} class_cache_t;

/* class_idx of an option from a class's own profile while the build
 * routes it (restrict_to_partitions sets -1 in the copies). */
#define CLASS_OWN (-2)

typedef struct part_classes {
	int n;
	uint64_t *mask; /* per class: the nodes' part_mask (0 when !parts) */
	char (*hw)[SATURN_CLASS_NAME_MAX + 1]; /* per class: hardware class */
	char (*name)[CLASS_LEN]; /* per class: its name in the problem */
	int *max_gpus;  /* per class: GPUs of its largest node */
	int *of_node;   /* snapshot node -> class */
	const char **feat; /* per class: its nodes' features (cons), else "" */
	int parts;      /* partitions restrict some job */
} part_classes_t;

/* --- build_options.c: one task's options --- */

/* Free the strings of o[0 .. n) and o itself; NULL is allowed. */
void saturn_bld_free_options(saturn_option_t *o, int n);

/* One step of filtering o[0 .. n) in place: o[i] moves to o[k] and the
 * count kept grows when keep, else o[i]'s strings are freed. Returns the
 * new count kept. */
int saturn_bld_keep_option(saturn_option_t *o, int i, int k, int keep);

/* One option (technique tech, gpus, seconds per batch spb) as a
 * malloc'd array of one, or NULL (ENOMEM). */
saturn_option_t *saturn_bld_one_option(const char *tech, int gpus, double spb);

/* Planned total runtime of a task that has no usable profile option for
 * what it runs with: its time limit (at most the model's limit), or an
 * hour. */
double saturn_bld_fallback_runtime(const saturn_snap_job_t *j);

/* Keep the options of profile task pt that are within the model's limits
 * (model.h, the checks of saturn_problem_check()), in order, at most
 * SATURN_MAX_OPTIONS; free the others. A profile read by
 * saturn_profile_load() is already within them; a lookup may hand over any
 * profile, and one bad option must cost its task, never the problem.
 * Returns the count kept; why names the first option dropped ("" when
 * none was). */
int saturn_bld_options_in_limits(const saturn_profile_task_t *pt, saturn_option_t *o, int n,
			     char *why, size_t whylen);

/* Remaining seconds of a running task whose planned total is total
 * (already within the limit): what the progress file or the time run
 * says, clamped into [1 s, the time its limit leaves it] and never beyond
 * the model's limit. A task past its time limit (Slurm ends it any moment)
 * or past its plan gets 1 s; a number that is not one (a progress file
 * with an absurd batches_total) gets the cap, never a rejected problem. */
double saturn_bld_running_left(const saturn_snapshot_t *s, const saturn_snap_job_t *j, double total,
			   double spb, double profile_batches);

/* Whether some option fits: as many snapshot nodes with its GPU count as
 * it spans. */
int saturn_bld_fits_some_node(const saturn_snapshot_t *s, const saturn_option_t *o, int n);

/* Multi-node options of a held task (sched_core.h, req_nodes): the user's
 * --nodes=k means k nodes' worth at least, so options on fewer nodes are
 * dropped; so are options on more nodes than its partitions allow
 * (part_max_nodes: Slurm would refuse the release), options beyond the
 * job's per-job QOS and association limits (max_job_gpus, max_node_gpus,
 * max_job_nodes: Slurm would never start it), and a predicted option on
 * several nodes unless it can be measured on its nodes before a task runs
 * on it (measurable: s->measure_multinode for the batch's own profile, its
 * technique a plain name; batch_policy.h). Keeps the order; returns the
 * count kept (the others freed; the array too when none is kept). */
int saturn_bld_options_for_nodes(const saturn_profile_task_t *pt, const saturn_snap_job_t *j,
			     saturn_option_t *o, int n, int measurable);

/* Runtime feedback: the profile's seconds per batch of a task not started
 * yet times the correction its signature has earned (feedback.h), kept
 * within the model's limit. */
double saturn_bld_corrected_spb(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
			    const saturn_profile_task_t *pt, const char *technique, int gpus,
			    int nodes, double spb);

/* As corrected_spb, with the correction of node class klass (a class's
 * own profile: what its tasks observed there, feedback.c). */
double saturn_bld_corrected_spb_class(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
				  const saturn_profile_task_t *pt, const char *klass,
				  const char *technique, int gpus, int nodes, double spb);

/* A running task on several nodes (j->nnodes > 1; first node's ids in
 * mask, already checked): pinned on every node with its GPU ids there, the
 * same count on each (the model's gang). Returns 0, 1 when the snapshot
 * contradicts itself (why filled, options freed), -1 on ENOMEM. */
int saturn_bld_running_gang(const saturn_snapshot_t *s, const saturn_snap_job_t *j, uint64_t mask,
			saturn_task_t *t, uint64_t *run_used, char *why, size_t whylen);

/* --- build_classes.c: node classes --- */

void saturn_bld_part_classes_free(part_classes_t *pc);

/* Fill pc from s. O(nodes x classes + jobs x classes). Returns 0 or -1
 * (ENOMEM). */
int saturn_bld_part_classes_init(part_classes_t *pc, const saturn_snapshot_t *s);

/* Per-class profiles (saturn_snapshot_t.class_profile): for every class
 * of pc with a profile of its own covering held job j, that profile's
 * usable options, within the model's limits, appended to t's with klass
 * the class's hardware name (so they go to that class only). Nothing when
 * s has no class_profile or pc no classes. 0, or -1 (ENOMEM: t keeps
 * what it had). */
int saturn_bld_add_class_options(const saturn_snapshot_t *s, const part_classes_t *pc,
			     class_cache_t *cc, const saturn_snap_job_t *j, saturn_task_t *t);

/* Restrict the options of a held or released job to the node classes it
 * may use (its partitions, GPU type and --constraint): one copy of each
 * option per such class that has a node with enough GPUs, the options
 * measured on a class (the profile's klass) going to that class only (at
 * most SATURN_MAX_OPTIONS copies). Nothing changes when the job may use
 * every class and no option is measured on one of them. The options'
 * klass is the problem's class name afterwards, or NULL. Returns 0
 * (t->options replaced or unchanged), 1 when no node the job may use fits
 * (why filled, t unchanged), -1 on ENOMEM. */
int saturn_bld_restrict_to_partitions(const saturn_snapshot_t *s, const part_classes_t *pc,
				  const saturn_snap_job_t *j, saturn_task_t *t, char *why,
				  size_t whylen);

/* A released or running job j on a node (its allocation's first, or the
 * node it is pinned to) whose class has a profile of its own covering it
 * with j's option (technique, GPUs, nodes): that option's seconds per
 * batch (in *cpt's batches; *cpt and *klass, the class, set), else 0. */
double saturn_bld_class_spb(const saturn_snapshot_t *s, const part_classes_t *pc, class_cache_t *cc,
			const saturn_snap_job_t *j, const saturn_profile_task_t **cpt,
			const char **klass);

#endif
