/* multiuser.h - many users' batches in one plan: an objective over the
 * batches (saturn_objective), weights from Slurm's priorities, and the
 * users' QOS and association limits.
 *
 * The planner minimises one makespan. With several users' batches in the
 * problem the objective can be:
 *   makespan  the planner's (Saturn, one team);
 *   share     fairness.h: users one after the other in fair-share tag order;
 *   weighted  the weighted sum of the batches' flow times (completion -
 *             submission), each batch weighted by the priority Slurm would
 *             give its jobs (priority/multifactor: age, fair share, QOS,
 *             partition, association, site, nice; computed by the plugin);
 *   bounded   no harm: the largest stretch of a batch over its fair-share
 *             deadline (completion under a fluid split of the GPUs in
 *             proportion to the users' priorities) is kept as low as any
 *             candidate plan reaches (at most 1 when one meets every
 *             deadline), and among those the shortest makespan wins.
 * saturn_mu_plan() builds three candidate plans (the joint plan of the
 * planner; the batches planned one after the other by Smith's ratio work /
 * weight; and by deadline) and keeps the best one by the objective.
 *
 * Limits: tasks belong to limit groups (a user's association, a QOS per
 * user, a QOS as a whole), each with a cap on the GPUs its running tasks
 * hold and on how many run at once; saturn_mu_apply_limits() reschedules a
 * plan (list scheduling in the plan's start order) so that no group is
 * over its caps at any time, so a task is never released beyond its user's
 * limits to wait in Slurm's queue while the plan thinks it runs.
 */
#ifndef SATURN_MULTIUSER_H
#define SATURN_MULTIUSER_H

#include "model.h"
#include "planner.h"
#include "sched_core.h"

/* Limit groups one task can belong to (association, QOS per user, QOS). */
#define SATURN_MU_GROUPS SATURN_SNAP_LIMITS

typedef struct saturn_mu {
	int ntasks;         /* the problem's */
	int nbatches;
	int nusers;
	int *batch_of_task; /* ntasks: batch index */
	int *user_of_batch; /* nbatches: user index */
	double *weight;     /* nbatches: > 0 (1 = all equal) */
	double *submit;     /* nbatches: seconds from now (<= 0 in the past) */
	/* limit groups: ngroups of them; a task's groups in
	 * group_of_task[t][0..SATURN_MU_GROUPS), -1 = unused */
	int ngroups;
	int (*group_of_task)[SATURN_MU_GROUPS];
	int *max_gpus;      /* ngroups: GPUs at once, 0 = no cap */
	int *max_jobs;      /* ngroups: tasks at once, 0 = no cap */
	/* ntasks: the GPUs the task's user asked for (0 = unknown), for the
	 * stock-Slurm bound */
	int *req_gpus;
	/* nbatches, or NULL: the bound of objective bounded, seconds from now
	 * (saturn_mu_deadlines returns it when set; saturn_mu_stock_deadlines
	 * computes one) */
	double *deadline;
	/* ntasks, or NULL: the least work each task counts for in the
	 * orderings between batches (saturn_fair_work_floors: what Slurm's
	 * time limits enforce, never the profile's claim alone); set by
	 * saturn_mu_from_snapshot */
	double *work_floor;
} saturn_mu_t;

/* Allocate m for ntasks tasks, nbatches batches, ngroups groups: weights
 * 1, submits 0, no groups (group_of_task all -1), caps 0. Returns 0 or -1
 * (ENOMEM, m emptied). */
int saturn_mu_init(saturn_mu_t *m, int ntasks, int nbatches, int nusers, int ngroups);
/* Free what m holds (not m); NULL allowed. */
void saturn_mu_free(saturn_mu_t *m);

/* From a sched build: batches (uid, name) of b->problem's tasks, their
 * weights (the mean of the jobs' prio; 1 when none is known), submission
 * (earliest submit_time - s->now); users by uid; limit groups by the
 * jobs' limits[] keys, each cap reduced by what jobs outside b's tasks use
 * in the scope (Slurm's used counts minus the running Saturn tasks' own).
 * Returns 0 or -1 (ENOMEM). */
int saturn_mu_from_snapshot(saturn_mu_t *m, const saturn_snapshot_t *s,
			    const saturn_sched_build_t *b);

/* Per batch, its deadline in seconds from now: m->deadline when set, else
 * the fair-share deadline. share_u = the problem's GPUs x w_u / sum of w
 * (w_u: the largest weight among the user's batches); the share starts at
 * S_u, when ceil(share_u) GPUs are free of busy entries and the other
 * users' running tasks (they are not stopped for it; -inf when that is
 * now); a user's batches in submission order, F = max(submit, F) + W /
 * share_u from F = S_u, W the least GPU-seconds of the batch's tasks.
 * Returns 0 or -1 (ENOMEM). */
int saturn_mu_deadlines(const saturn_mu_t *m, const saturn_problem_t *p, double *dl);

/* The stock-Slurm bound (saturn_bound=stock): per batch, its completion
 * when every task runs on the GPU count its user asked for (req_gpus; the
 * fastest option with that count, all options when none has it or it is
 * unknown), first come first served in the order Slurm's queue has them:
 * by the batches' weights (the priority Slurm gives their jobs, higher
 * first; all equal without priorities), then submission
 * (saturn_sched_fcfs; running tasks keep their place), within the limit
 * groups' caps (saturn_mu_apply_limits). Returns 0 or -1 (ENOMEM). */
int saturn_mu_stock_deadlines(const saturn_mu_t *m, const saturn_problem_t *p, double *dl);

/* Per batch, the latest end of its tasks in plan (seconds from now). */
void saturn_mu_completions(const saturn_mu_t *m, const saturn_plan_t *plan, double *c);

/* The objective's value of plan (lower is better): makespan; weighted =
 * sum of w_b (C_b - submit_b); bounded = the largest (C_b - submit_b) /
 * (dl_b - submit_b) (dl from saturn_mu_deadlines, needed for bounded
 * only); share = makespan. */
double saturn_mu_value(int objective, const saturn_mu_t *m, const saturn_plan_t *plan,
		       const double *dl);

/* 1 when plan a is better than b under objective (bounded: a's stretch
 * is lower where either is over 1, else a's makespan is shorter). */
int saturn_mu_better(int objective, const saturn_mu_t *m, const saturn_plan_t *a,
		     const saturn_plan_t *b, const double *dl);

/* 1 when some limit group of m has a cap. */
int saturn_mu_has_caps(const saturn_mu_t *m);

/* Check that no limit group is over its caps at any time of plan (the
 * validator's half for limits). Returns 0, or -1 with err naming the
 * group, time and count. Groups whose cap no single task can meet (a task
 * on more GPUs than max_gpus) are not checked for that task. */
int saturn_mu_limits_check(const saturn_mu_t *m, const saturn_problem_t *p,
			   const saturn_plan_t *plan, saturn_error_t *err);

/* Reschedule plan in place so that saturn_mu_limits_check() holds: running
 * tasks stay; the others in order of their planned start, each at the
 * earliest time its GPUs (on its node, else another node that fits) and
 * its groups allow, keeping its option unless it needs more GPUs than a
 * group's cap (then the fastest option within the caps that it has
 * somewhere to go on: a node that fits it, for a gang its planned nodes;
 * none: its own option, and counted). A task with nowhere to go on the
 * option it is listed on (no node it may go to fits it, or a gang's
 * planned nodes do not match it: a plan entry that does not fit its own
 * placement) stays as planned and holds its GPUs and shares there from
 * the start, as running tasks do. Returns the number of tasks with no
 * option within the caps to go on (>= 0), or -1 with err (ENOMEM). A plan
 * with no group is left unchanged. */
int saturn_mu_apply_limits(const saturn_mu_t *m, const saturn_problem_t *p,
			   saturn_plan_t *plan, saturn_error_t *err);

/* The releases of decisions d (saturn_sched_decide) within the limit
 * groups' caps now: with the tasks of b that are running or released
 * already, those due now (start_s <= 0) first, then those released ahead
 * of their start (the release slack), each in d's order; a release that
 * would take a group over its caps is turned into a hold (Slurm would
 * keep the task pending for the limit, and a task released ahead of a
 * running one's end would wait beside it). A task on more GPUs than a
 * group's GPU cap is not held for that cap (as saturn_mu_limits_check).
 * Returns the number of releases held, or -1 (ENOMEM; d unchanged). */
int saturn_mu_limit_releases(const saturn_mu_t *m, const saturn_snapshot_t *s,
			     const saturn_sched_build_t *b, saturn_decision_t *d, int nd);

/* The same list scheduling with or without caps: without any, no task
 * starts later than in plan (a task processed in start order finds at
 * least its old slot), so a plan planned in stages (fairness.c, whose
 * later stages see a GPU busy from 0 to the end of the earlier ones) gets
 * its gaps filled. Returns as saturn_mu_apply_limits(). */
int saturn_mu_compact(const saturn_mu_t *m, const saturn_problem_t *p, saturn_plan_t *plan,
		      saturn_error_t *err);

/* Plan p for objective (SATURN_FAIR_*): candidates by the planner (opts,
 * its time budget shared between them), limits applied to each, the best
 * by saturn_mu_better() returned (validated; method names the candidate:
 * "joint/anneal", "smith", "deadline"). Bounded with the stock bound
 * (m->deadline set; also with one batch, for those to come): a held task is given no option
 * longer than the one its user asked for (req_gpus), so GPUs free at
 * least as often as under stock Slurm for batches that arrive later.
 * NULL with err on failure. */
saturn_plan_t *saturn_mu_plan(int objective, const saturn_mu_t *m, const saturn_problem_t *p,
			      const saturn_planner_opts_t *opts, saturn_error_t *err);

/* Lower bound of the weighted objective: sum of w_b (LB_b - submit_b) with
 * LB_b the larger of the latest (release + fastest runtime) of b's tasks
 * and b's least GPU-seconds over all the problem's GPUs. */
double saturn_mu_weighted_bound(const saturn_mu_t *m, const saturn_problem_t *p);

/* The optional "batches" of a saturn-problem/1 document (doc/formats.md)
 * for p (parsed from the same buf): each batch {"name", "user", "weight",
 * "submit_s", "tasks": [task ids], "max_gpus", "max_jobs", "request_gpus"}; tasks in no
 * batch form one batch "" of user "". A user's caps are the tightest its
 * batches give (one limit group per user with a cap). Fills m and returns
 * 1, or 0 with m holding every task in one batch when there is no
 * "batches", or -1 with err naming the entry at fault (m emptied). */
int saturn_mu_parse(const char *buf, size_t len, const saturn_problem_t *p, saturn_mu_t *m,
		    saturn_error_t *err);

/* The objective's name ("makespan", "share", "weighted", "bounded"). */
const char *saturn_objective_name(int objective);

/* A task and a time (its start, its batch's submission) to order tasks by;
 * saturn_mu_cmp_task_at() is the qsort() comparator: earlier time first,
 * then lower task index. */
typedef struct saturn_mu_task_at {
	double at;
	int task;
} saturn_mu_task_at_t;

int saturn_mu_cmp_task_at(const void *a, const void *b);

#endif /* SATURN_MULTIUSER_H */
