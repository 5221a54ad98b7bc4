/* planner_int.h - internals of the SPASE planner (not a public header).
 *
 * The planner works on its own compact copy of a problem (spase_inst_t):
 * dominated options dropped, running tasks pinned, busy GPUs and running
 * tasks folded into a per-node "base" capacity profile. The caller's
 * saturn_problem_t is never changed. Every search method produces a
 * spase_sol_t (option per task and priority order); the list scheduler
 * (listsched.c) turns it into start times and nodes. Only planner.c turns a
 * solution into a saturn_plan_t.
 *
 * Symbols are prefixed spase_ because libsaturn is linked into slurmctld
 * plugins and must not clash with Slurm's names.
 */
#ifndef SATURN_PLANNER_INT_H
#define SATURN_PLANNER_INT_H

#include <stdint.h>

#include "listsched.h"
#include "planner.h"

/* One non-dominated option of a task. */
typedef struct spase_opt {
	int orig;     /* index into saturn_task_t.options */
	int gpus;     /* per node */
	int klass;    /* class index, -1 = any */
	double dur;   /* runtime in seconds (0 when batches == 0) */
	double area;  /* width * dur */
	int nodes;    /* nodes spanned at once (a gang of one class), >= 1 */
	int width;    /* GPUs in all: gpus * nodes */
} spase_opt_t;

typedef struct spase_task {
	int nopt;
	spase_opt_t *opt; /* sorted by gpus ascending, then dur ascending */
	double release;
	int pinned;   /* running: pin_node, option 0, start 0 */
	int pin_node;
	int min_area_opt; /* option with the smallest area (then shortest) */
	int fastest_opt;  /* option with the smallest dur (then fewest GPUs) */
	int zero;         /* batches == 0: takes no time, placed last */
	/* Released, not started (saturn_task_t.is_released): only on this
	 * node, and placed before every task not released; -1 otherwise. */
	int rel_node;
} spase_task_t;

typedef struct spase_inst {
	const saturn_problem_t *p;
	int nt, nn;
	spase_task_t *t;
	int *gpus;        /* per node */
	int *klass;       /* per node class index */
	int max_nodes;    /* most nodes an option of a free task spans */
	double **gpu_free; /* per node, per GPU: time it is first free (busy
			    * entries and running tasks) */
	spase_prof_t *base; /* per node: capacity with busy GPUs and running
			     * tasks taken out */
	double pinned_end;  /* latest end of a running task */
	int total_gpus;
	int max_gpus;
	int nfree;          /* tasks that are not pinned */
} spase_inst_t;

/* A candidate: option index (into spase_task_t.opt) per task and a priority
 * order over all tasks (pinned ones are ignored by the decoder). */
typedef struct spase_sol {
	int *opt;
	int *order;
} spase_sol_t;

/* Scratch space for decoding, one per search. */
typedef struct spase_work {
	const spase_inst_t *in;
	spase_prof_t *prof; /* per node */
	int *node;          /* decoded node per task */
	double *start;      /* decoded start per task */
	double *node_end;   /* per node latest end */
	/* Warm start only (NULL otherwise): per task, no start before
	 * not_before[t] (< 0: no limit), and prefer node pref_node[t] on
	 * ties (-1: none). With a previous plan's starts and nodes, decoding
	 * in start order reproduces that plan. */
	const double *not_before;
	const int *pref_node;
	/* Multi-node options: the decoded nodes of task t are
	 * gang[t * in->max_nodes + j], j < its option's nodes (node[t] is
	 * the first); scratch per node for the gang search. */
	int *gang;
	double *scratch;
	char *ok;
	/* Options chosen by the decoder (sol->opt[t] < 0): alpha applies to
	 * the smallest area in each option's own class, not the task's (0:
	 * the task's). */
	int class_alpha;
} spase_work_t;

/* Deadline and abort handling shared by every phase. */
typedef struct spase_clock {
	double t0;       /* monotonic seconds at start */
	double deadline; /* monotonic seconds */
	int (*abort_cb)(void *arg);
	void *abort_arg;
	int stopped;     /* sticky: the deadline passed or abort_cb said stop */
	unsigned long polls;
} spase_clock_t;

/* --- instance.c --- */
spase_inst_t *spase_inst_create(const saturn_problem_t *p);
void spase_inst_destroy(spase_inst_t *in);
spase_sol_t *spase_sol_create(const spase_inst_t *in);
void spase_sol_destroy(spase_sol_t *s);
void spase_sol_copy(const spase_inst_t *in, spase_sol_t *dst,
		    const spase_sol_t *src);
/* Whether option o of task t may run on node n (one of its nodes, for a
 * multi-node option). */
int spase_fits(const spase_inst_t *in, int t, int o, int n);
double spase_now(void);
/* Returns non-zero when the search must stop (checks the clock and the
 * abort callback; sticky). */
int spase_stop(spase_clock_t *c);
/* For work a plan does not need but that has always been done (the other
 * baselines, the uniform seeds, the previous plan's decode): non-zero
 * when SPASE_FLOOR_S have passed since c->t0 and spase_stop(c) (not
 * polled before). Small
 * problems do it in microseconds whatever the budget (a budget of 1e-9 s
 * still tries the cheap candidates); thousands of tasks stop. */
#define SPASE_FLOOR_S 0.1
int spase_stop_floor(spase_clock_t *c);

/* --- listsched.c (placement by count; the GPU model: gpumodel.h) --- */
spase_work_t *spase_work_create(const spase_inst_t *in);
void spase_work_destroy(spase_work_t *w);
/* Decode sol: place tasks in priority order at their earliest start on the
 * fitting node that allows it (backfilling into gaps). Zero-length tasks go
 * last, at the first instant their GPUs are free, so that no later task
 * covers them. An option < 0 in
 * sol->opt means "choose by earliest finish among options with area <=
 * alpha * minimum area" and is written back. Fills w->node, w->start,
 * w->node_end. Returns the makespan, or -1 on ENOMEM. */
double spase_decode(spase_work_t *w, spase_sol_t *sol, double alpha);
/* Secondary cost used to break makespan ties in the search (smaller is
 * better): area-weighted mean end time plus mean node finish. Valid after
 * spase_decode(). */
double spase_tiebreak(const spase_work_t *w, const spase_sol_t *sol);
/* Placement by count in arrival order (current practice): the tasks in index
 * order, zero-length ones last, task t with original option opt[t] (running
 * tasks: their own, opt ignored), each at its earliest start no earlier than
 * the previous non-zero task's start, on the first node that allows it.
 * Fills assignment t of plan for every task, without GPU ids (for
 * saturn_plan_assign_gpus()). Returns 0, or -1 with err (ENOMEM, or no node
 * fits a task). */
int spase_place_arrival(const spase_inst_t *in, const int *opt,
			saturn_plan_t *plan, saturn_error_t *err);
/* Gang placement: the earliest s >= r at which k distinct nodes of one
 * class, each allowed by ok[n], have g GPUs free on [s, s + d) in the
 * profiles prof; those nodes (tightest fit first, pref among them when it
 * qualifies) go into nodes[0..k). scratch holds in->nn doubles. Returns s,
 * or INFINITY when no k such nodes exist. */
double spase_gang_earliest(const spase_inst_t *in, const spase_prof_t *prof,
			   const char *ok, int g, int k, double d, double r,
			   int pref, double *scratch, int *nodes);

/* --- bounds.c --- */
/* Length, area, dual and class-aware LP bounds of in (b->milp left 0).
 * frac (NULL, or in->nt x classes doubles, zeroed by the caller): the LP
 * bound's fractional split of each free task over the classes at the
 * smallest makespan it accepted (rows of zeros: not computed). lp_clk
 * (NULL: no limit) stops the LP bound (spase_lp_bound()). */
void spase_bounds(const spase_inst_t *in, saturn_bounds_t *b, double *frac,
		  spase_clock_t *lp_clk);
/* The LP bound's share of time where no solve budget applies
 * (saturn_planner_bounds_cheap(), saturn_planner_baseline()): seconds. */
#define SPASE_CHEAP_LP_S 0.25
/* A clock that stops budget_s from now (no abort callback). */
spase_clock_t spase_clock_in(double budget_s);

/* --- lpbound.c --- */
/* The class-aware LP bound (lpbound.c): the largest T it proves too short,
 * never below lower, or 0 when it proves nothing above lower (or is not
 * run: one class and no release, too many task-class pairs, ENOMEM, clk
 * already stopped). frac as for spase_bounds(). clk (NULL: no limit)
 * stops the bisection and lp_solve itself; the bound is then the largest
 * T rejected before. */
double spase_lp_bound(const spase_inst_t *in, double lower, double *frac,
		      spase_clock_t *clk);
/* For tests only (tests/unit/test_lpbound.c), NULL otherwise: called on
 * lp_solve's duals (dual[0 .. n): 1 + rows + columns, as
 * get_dual_solution() fills them) before a rejection of T is certified from
 * them, to stand in for lp_solve answering with wrong duals. Not thread-safe:
 * set it only where no bound is being computed. */
extern void (*spase_lp_dual_hook)(double *dual, int n);

/* --- classseed.c --- */
/* Smallest-area option of task t in class c (class-free options count in
 * every class) that ends by T, else its fastest there; -1 when none. */
int spase_class_option(const spase_inst_t *in, int t, int c, double T);
/* Candidates that follow the LP bound's split frac (spase_bounds(); in->nt
 * x classes) at makespan T: each task in a class of its split with its
 * smallest-area option there ending by a few slacks of T, decoded in a few
 * orders; the best replaces *best (and *mk) when shorter. cand is scratch.
 * Returns 1 when it replaced, 0 when not (also: one class, no split, the
 * clock), -1 on ENOMEM. */
int spase_class_seed(const spase_inst_t *in, spase_work_t *w, const double *frac,
		     double T, spase_sol_t *best, spase_sol_t *cand, double *mk,
		     spase_clock_t *clk);

/* --- heuristics.c --- */
/* Run the constructive heuristics (H1 minimum-area allotments per
 * candidate makespan, H2 earliest finish, H3 two shelves) and keep the best
 * in best (returns its makespan, -1 on ENOMEM). */
double spase_heuristics(const spase_inst_t *in, spase_work_t *w,
			double lower, spase_sol_t *best, spase_clock_t *clk);
/* Order the tasks by a priority rule over the options in sol. */
void spase_order_by(const spase_inst_t *in, spase_sol_t *sol, int rule);

/* --- anneal.c --- */
/* Improve best (makespan *mk) by simulated annealing until the clock stops
 * it, the makespan reaches target, or max_evals decodes were done (0 =
 * unlimited). Deterministic for a seed and a number of evaluations. Returns
 * the new makespan, or -1 on ENOMEM. */
double spase_anneal(const spase_inst_t *in, spase_work_t *w,
		    spase_sol_t *best, double mk, double target,
		    uint64_t seed, unsigned long max_evals, spase_clock_t *clk);

/* --- milp.c --- */
/* Assignment-MILP lower bound (option + node per task), never below
 * lower. Returns the bound, or 0 when not solved to optimality within the
 * clock or budget_s. When alloc is not NULL and the model was solved, the
 * chosen option of each free task is written there. */
double spase_milp_bound(const spase_inst_t *in, double lower, double budget_s,
			spase_clock_t *clk, int *alloc);
/* Time-indexed MILP on one node guided by best (makespan mk). Writes an
 * improved solution into best and returns its makespan (or mk unchanged);
 * *proved is set when the MILP proved no plan shorter than the returned
 * makespan exists on its time grid's relaxation (see milp.c). */
double spase_milp_improve(const spase_inst_t *in, spase_work_t *w,
			  spase_sol_t *best, double mk, double lower,
			  double budget_s, spase_clock_t *clk, double *proved);

/* --- planner.c --- */
/* Fill the summary fields and GPU ids of plan, then check it. 0, or -1
 * with err (the plan is invalid: a bug, never returned to the caller). */
int spase_finish_plan(const spase_inst_t *in, saturn_plan_t *plan,
		      saturn_error_t *err);

/* --- planner_baseline.c --- */
/* Current practice at `gpus` GPUs per task (saturn_planner_baseline()
 * without the bound), checked; NULL with err. */
saturn_plan_t *spase_baseline(const spase_inst_t *in, int gpus,
			      saturn_error_t *err);

/* Every uniform request (1, 2, 4, ... GPUs per task: current practice's
 * options) as a solution in task order, decoded by the list scheduler
 * (backfilling); the shortest replaces best when shorter than *mk (then
 * *mk is updated). cand is scratch. Stops at the clock (each request is
 * one decode; spase_stop_floor()). Returns 1 when best was replaced, 0 when not, -1 on
 * ENOMEM. */
int spase_seed_uniform(const spase_inst_t *in, spase_work_t *w,
		       spase_sol_t *best, spase_sol_t *cand, double *mk,
		       spase_clock_t *clk);
/* --- planner_warm.c --- */
/* The previous plan warm as a solution of in: 0 when at least one task
 * matched, 1 when none did, -1 on ENOMEM; nb and pn (nt entries each) get
 * the matched tasks' previous start and node, -1 elsewhere. */
int spase_warm_sol(const spase_inst_t *in, const saturn_plan_t *warm,
		   spase_sol_t *sol, double *nb, int *pn);
/* The previous plan taken literally (each task at its warm start and node),
 * checked; NULL when it no longer fits the problem, or on ENOMEM. */
saturn_plan_t *spase_warm_literal(const spase_inst_t *in,
				  const saturn_plan_t *warm);

/* --- plancheck.c --- */
/* --- rng --- */
static inline uint64_t spase_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform integer in [0, n). n > 0. */
static inline int spase_rand(uint64_t *s, int n)
{
	return (int)((spase_rng(s) >> 11) % (uint64_t)n);
}

/* Uniform double in [0, 1). */
static inline double spase_unif(uint64_t *s)
{
	return (double)(spase_rng(s) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* SATURN_PLANNER_INT_H */
