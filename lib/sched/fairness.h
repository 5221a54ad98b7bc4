/* fairness.h - sharing the cluster between users (saturn_fairness=share).
 *
 * The planner minimises the makespan of every task it is given; with two
 * users' batches in one problem nothing keeps a small batch from being
 * planned at the end of a large one (doc/benchmarks.md, "Sharing the
 * cluster between users": 5-12x slower than alone). With share, each user
 * gets a finish tag: when their work would end if every user with Saturn
 * tasks had an equal share of the GPUs (weighted fair queueing over the
 * user's batches in submission order), and the users' tasks are planned one
 * user after the other in tag order, each on the GPUs the users before them
 * leave. A user's own batches are still planned together (shortest
 * makespan for that user); a cluster with one user plans as before.
 */
#ifndef SATURN_FAIRNESS_H
#define SATURN_FAIRNESS_H

#include "model.h"
#include "planner.h"
#include "sched_core.h"

/* A task's place in the order fair share and the multi-user model group
 * tasks by: one user's batches together, one batch's tasks together. */
typedef struct saturn_user_task {
	long uid;
	const char *batch; /* batch name, not owned */
	int task;	   /* index in the problem */
} saturn_user_task_t;

/* qsort() comparator of two saturn_user_task_t (or of structs that start
 * with one): by uid, then batch name, then task index. */
int saturn_user_task_cmp(const void *a, const void *b);

/* The least GPU-seconds task t still needs: a running task's option's
 * runtime x its GPUs, else the least runtime x GPUs over its options
 * (0 when it has none). */
double saturn_task_work(const saturn_task_t *t);

/* The GPU-seconds Slurm lets task t (snapshot job j) use at most: its time
 * limit left (a running task: minus its elapsed time, at least 0) x the
 * GPUs of its running option, or else of the option with the least claimed
 * work; -1 when the job has no time limit (Slurm enforces none). */
double saturn_task_work_enforced(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
				 const saturn_task_t *t);

/* Per task of b->problem, the least work it counts for in any ordering
 * between users (floor_[0 .. ntasks)): saturn_task_work_enforced(), or for
 * a task without a time limit the most any task with one may take (0 when
 * none has one). */
void saturn_fair_work_floors(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			     double *floor_);

/* Task t's (problem index i) work for orderings between users: the larger
 * of saturn_task_work() and floor_[i] (floor_ NULL: the claim alone, for
 * problems read from files, which carry no time limits). */
double saturn_task_work_fact(const saturn_task_t *t, const double *floor_, int i);

/* Per task of b->problem, its user's finish tag in seconds from s->now,
 * into tag[0 .. b->problem->ntasks). Each batch (uid, name) is submitted at
 * its earliest task's submit_time and brings the work W = sum over its
 * tasks of the GPU-seconds left. A task's work is what Slurm enforces,
 * never the user's claim alone: the larger of the claim (the least
 * GPU-seconds over its options, running tasks their option's; observed
 * speeds already folded in) and saturn_task_work_enforced(); a task
 * without a time limit counts at least the most any task with one may
 * take. A profile that understates its work therefore gains nothing over
 * its time limits, and an honest one loses nothing to it;
 * share = the problem's GPUs / the number of users; a user's batches in
 * submission order: F = max(submit - now, F) + W / share; the user's tag is
 * the last F. Returns the number of distinct users (0 for an empty
 * problem), or -1 (ENOMEM) with tag unchanged. */
int saturn_fair_tags(const saturn_snapshot_t *s, const saturn_sched_build_t *b, double *tag);

/* Plan p group by group, a group being the tasks (not running) with one
 * tag value, in increasing tag order: each group is solved by the planner
 * alone (opts->time_limit_s split evenly between the groups; opts->warm and
 * stop_ratio are not used) on the GPUs that running tasks and the groups
 * before it leave (a GPU is busy until the last of them on it ends).
 * Running tasks keep their place. Returns a plan that passed
 * saturn_plan_validate() for p (method "share", status "feasible"), or
 * NULL with err (ENOMEM, or a stage that failed: the caller plans p as a
 * whole instead). p must have passed saturn_problem_check(). */
saturn_plan_t *saturn_fair_plan(const saturn_problem_t *p, const double *tag,
				const saturn_planner_opts_t *opts, saturn_error_t *err);

#endif /* SATURN_FAIRNESS_H */
