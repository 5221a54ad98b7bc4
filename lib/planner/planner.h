/* planner.h - the SPASE planner: choose option, node, GPUs and start time for
 * every task of a problem so that the makespan is near the lower bound.
 *
 * Thread use: saturn_planner_solve() may be called from any thread, but
 * lp_solve keeps function-local state, so at most one call runs at a time in
 * a process (the Slurm plugin has one solver thread; the CLI one call). It
 * takes no global locks and calls back only through opts->abort_cb.
 */
#ifndef SATURN_PLANNER_H
#define SATURN_PLANNER_H

#include "model.h"

typedef struct saturn_planner_opts {
	double time_limit_s;  /* wall-clock budget; <= 0 means 5 s */
	unsigned seed;        /* random seed (0 = fixed default) */
	int use_milp;         /* -1 auto (default), 0 never, 1 where it pays */
	/* Polled often; return non-zero to stop early (the best plan so far is
	 * returned). May be NULL. */
	int (*abort_cb)(void *arg);
	void *abort_arg;
	/* Optional previous plan (re-planning): its order and options seed the
	 * search where they still apply, and the plan itself (starts taken as
	 * seconds from the same "now" as the problem's) is reproduced where it
	 * still holds, so the result is never longer than that reproduction.
	 * May be NULL; task and node names are matched. */
	const saturn_plan_t *warm;
	/* Stop as soon as the best plan found is good enough: makespan <=
	 * stop_ratio x the best lower bound proven so far (checked once the
	 * cheap bounds, the warm plan's reproduction and current practice are
	 * known -- then without running the heuristics, MILPs or annealing --
	 * and again after each search phase and inside annealing). The plan
	 * is then labelled status "good-enough" (or "optimal" when it meets
	 * the bound), and method "warm" when it is the warm plan reproduced
	 * with no search. 0 (the default), any value < 1 or NaN: off, the
	 * search runs to the deadline or the bound as before; +inf: the first
	 * plan is kept. A re-planning caller that keeps its previous plan
	 * unless a new one is shorter by a fraction g (new < old x (1 - g))
	 * sets 1 / (1 - g) and passes that plan (times from the new origin)
	 * as warm: when it meets the ratio, no plan the search could find
	 * would be adopted, and none is searched for. Once a search runs, the
	 * ratio is an absolute target for the plans it finds. Added after
	 * the fields above (backward compatible); saturn_planner_opts_init()
	 * sets it to 0. */
	double stop_ratio;
	/* At most this many annealing decodes (0, the default: no limit;
	 * the clock still applies). With a time limit long enough not to cut
	 * the search, the plan then depends only on the problem, the seed
	 * and this number, not on the machine's speed or load: for comparing
	 * search methods at equal effort. Added after stop_ratio. */
	unsigned long max_evals;
	/* Record or play back the results of saturn_planner_solve() (NULL,
	 * the default: solve). Added after max_evals. */
	struct saturn_plan_tape *tape;
} saturn_planner_opts_t;

/* A tape of planner results, for recording a scheduling cycle and
 * replaying it (lib/sched/sched_cycle.h). Recording: every
 * saturn_planner_solve() with opts->tape appends a copy of its plan (or a
 * NULL entry when it failed). Playing: saturn_planner_solve() does not
 * search; it returns a copy of the next entry, with err "replay: ..." when
 * the tape has none left or the entry does not fit the problem (another
 * task count or a task of another id). The search is bounded by time, so
 * its results depend on the machine; the tape makes everything around it
 * reproducible. */
typedef enum saturn_tape_mode {
	SATURN_TAPE_RECORD = 0,
	SATURN_TAPE_PLAY,
} saturn_tape_mode_t;

typedef struct saturn_plan_tape {
	saturn_tape_mode_t mode;
	int n, cap;
	int pos; /* playing: the next entry */
	saturn_plan_t **plans;
} saturn_plan_tape_t;

/* Append a copy of plan (NULL: a failed call). 0, or -1 (ENOMEM). */
int saturn_plan_tape_push(saturn_plan_tape_t *t, const saturn_plan_t *plan);
/* Empty the tape (its plans destroyed), keeping its mode; NULL allowed. */
void saturn_plan_tape_free(saturn_plan_tape_t *t);

/* Fill opts with the defaults. */
void saturn_planner_opts_init(saturn_planner_opts_t *opts);

/* Lower bounds on the makespan of p (seconds). p must have passed
 * saturn_problem_check(). */
typedef struct saturn_bounds {
	double length; /* latest earliest end of a task (fastest option, release,
			* busy GPUs and running tasks counted) */
	double area;   /* minimum total GPU-seconds over total GPUs */
	double dual;   /* moldable dual-approximation bound */
	double milp;   /* assignment-MILP bound, 0 when not computed */
	double best;   /* max of the above and of lp */
	/* Class-aware LP relaxation (lpbound.c): each task split over the
	 * node classes where it can end by T, per-class GPU-seconds after
	 * each release, GPUs held at T/2, wide tasks one at a time; 0 when
	 * not computed (one class without release times, or no gain). Added
	 * after best (backward compatible). */
	double lp;
} saturn_bounds_t;

int saturn_planner_bounds(const saturn_problem_t *p, saturn_bounds_t *b,
			  saturn_error_t *err);

/* The same without the MILP (milp 0; the LP bound is computed, for at
 * most a quarter of a second: at thousands of tasks in several classes it
 * stops early, with a lower bound): for labelling a plan that was not
 * solved for p (a carried plan, saturn_sched_carry()); milliseconds, tens
 * of them with the LP bound on hundreds of tasks. Uses lp_solve (one call at a time per process, as
 * saturn_planner_solve()). 0, or -1 with err (ENOMEM, b zeroed). */
int saturn_planner_bounds_cheap(const saturn_problem_t *p, saturn_bounds_t *b,
				saturn_error_t *err);

/* Solve p (which must have passed saturn_problem_check()) within
 * opts->time_limit_s: the LP bound gets a quarter of it (at least 0.25 s),
 * and every phase after the first plan checks the clock; past it (and
 * 0.1 s into the solve), only what a plan needs runs (one baseline, one heuristic decode, the warm
 * plan's reproduction, the final decode, GPU ids and validation: at 5,000
 * tasks, a few tenths of a second each). Always returns a plan that passed
 * saturn_plan_validate(), with makespan_s, lower_bound_s, method, status and
 * solve_s filled; NULL with err only on ENOMEM or an internal inconsistency
 * (which is a bug, reported, never a wrong plan). opts may be NULL. */
saturn_plan_t *saturn_planner_solve(const saturn_problem_t *p,
				    const saturn_planner_opts_t *opts,
				    saturn_error_t *err);

/* Current practice, for comparison: every task with a fixed GPU count
 * (`gpus`, or its largest option not above it) and its fastest technique at
 * that count, started first-come-first-served in task order on the first
 * node with enough free GPUs (no backfilling past earlier tasks). A task with
 * no option at that count uses its smallest option. Returns a valid plan
 * (method "baseline") or NULL with err. */
saturn_plan_t *saturn_planner_baseline(const saturn_problem_t *p, int gpus,
				       saturn_error_t *err);

#endif /* SATURN_PLANNER_H */
