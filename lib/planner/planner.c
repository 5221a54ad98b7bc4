/* planner.c - the SPASE planner's entry points and their orchestration.
 *
 * solve(): bounds (bounds.c) -> constructive heuristics (heuristics.c), the
 * warm start from a previous plan (planner_warm.c) and the current-practice
 * baselines (planner_baseline.c) ->
 * lp_solve where it pays (milp.c: the assignment bound on small batches, the
 * time-indexed improver on small single-node batches) -> simulated annealing
 * (anneal.c) until the deadline, the abort callback or the lower bound. The
 * best solution is turned into a plan, given GPU ids and validated; a plan
 * that fails validation is never returned (the next best candidate is).
 * One call at a time per process (lp_solve); no global state of our own.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

void saturn_planner_opts_init(saturn_planner_opts_t *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->time_limit_s = 5.0;
	opts->use_milp = -1;
}

/* The class-aware LP bound's share of the budget (at least LP_MIN_S, or
 * the whole budget when shorter): on hundreds of tasks it takes
 * milliseconds; at a site's thousands of tasks in several classes it took
 * 20 s and more (issue 22) and is cut there. */
#define LP_SHARE 0.25
#define LP_MIN_S 0.25
/* Largest batch (tasks not running) for which the MILPs are tried. */
#define MILP_BOUND_MAX_TASKS 16
#define MILP_IMPROVE_MAX_TASKS 10
/* The search stops when the makespan is within this of the lower bound (the
 * MILP bound itself is only exact to lp_solve's 1e-9 relative gap). */
#define TARGET_TOL 1e-7

int saturn_planner_bounds(const saturn_problem_t *p, saturn_bounds_t *b,
			  saturn_error_t *err)
{
	spase_inst_t *in = spase_inst_create(p);
	spase_clock_t clk = {0};

	if (!in)
		return saturn_error_set(err, "planner: out of memory");
	spase_bounds(in, b, NULL, NULL);
	/* The MILPs model one node per task: not for multi-node options. */
	if (in->nfree > 0 && in->nfree <= MILP_BOUND_MAX_TASKS &&
	    in->max_nodes == 1) {
		clk.t0 = spase_now();
		clk.deadline = clk.t0 + 2.0;
		b->milp = spase_milp_bound(in, b->best, 2.0, &clk, NULL);
		if (b->milp > b->best)
			b->best = b->milp;
	}
	spase_inst_destroy(in);
	return 0;
}

/* --- plans ------------------------------------------------------------ */

/* Fill the summary fields and GPU ids of plan, then check it. */
int spase_finish_plan(const spase_inst_t *in, saturn_plan_t *plan,
		      saturn_error_t *err)
{
	double mk = 0;

	for (int i = 0; i < plan->nassign; i++)
		if (plan->assign[i].end_s > mk)
			mk = plan->assign[i].end_s;
	plan->makespan_s = mk;
	/* GPU ids (contiguous best fit), then the library's validator: a plan
	 * that fails either is never returned (the caller falls back to the
	 * next candidate). */
	if (saturn_plan_assign_gpus(plan, in->p, err) < 0 ||
	    saturn_plan_validate(plan, in->p, err) < 0) {
		saturn_error_prefix(err, "internal: planner made an invalid plan");
		return -1;
	}
	return 0;
}

/* Decode sol into a new plan (GPU ids assigned, checked). */
static saturn_plan_t *sol_plan(const spase_inst_t *in, spase_work_t *w,
			       spase_sol_t *sol, saturn_error_t *err)
{
	saturn_plan_t *plan;

	if (spase_decode(w, sol, 1) < 0) {
		saturn_error_set(err, "planner: out of memory");
		return NULL;
	}
	plan = saturn_plan_create(in->nt);
	if (!plan) {
		saturn_error_set(err, "planner: out of memory");
		return NULL;
	}
	for (int t = 0; t < in->nt; t++)
		if (saturn_plan_set_nodes(plan, t, in->p, t,
					  in->t[t].opt[sol->opt[t]].orig,
					  &w->gang[(size_t)t *
						   (size_t)in->max_nodes],
					  w->start[t], NULL) < 0) {
			saturn_error_set(err, "planner: out of memory");
			saturn_plan_destroy(plan);
			return NULL;
		}
	if (spase_finish_plan(in, plan, err) < 0) {
		saturn_plan_destroy(plan);
		return NULL;
	}
	return plan;
}

/* --- solve ---------------------------------------------------------------- */

/* Whether a plan of makespan mk is good enough to stop for opts->stop_ratio
 * (ratio) against the bound lb: never when ratio is off (< 1 or NaN), always
 * when it is +inf. */
static int good_enough(double mk, double lb, double ratio)
{
	if (!(ratio >= 1) || !(mk >= 0))
		return 0;
	if (isinf(ratio))
		return 1;
	return mk <= ratio * lb;
}

static void label(saturn_plan_t *plan, const char *method,
		  const saturn_bounds_t *b, int proved, double ratio, double t0)
{
	snprintf(plan->method, sizeof(plan->method), "%s", method);
	plan->lower_bound_s = b->best;
	if (proved || plan->makespan_s <= b->best * (1 + 1e-6) ||
	    plan->makespan_s <= 0)
		snprintf(plan->status, sizeof(plan->status), "optimal");
	else if (good_enough(plan->makespan_s, b->best, ratio))
		snprintf(plan->status, sizeof(plan->status), "good-enough");
	else
		snprintf(plan->status, sizeof(plan->status), "feasible");
	plan->solve_s = spase_now() - t0;
}

/* The makespan of the best candidate so far: the search's solution (mk,
 * when have_sol), the warm plan's reproduction and the best baseline. */
static double incumbent(int have_sol, double mk, const saturn_plan_t *wplan,
			const saturn_plan_t *bl)
{
	double inc = have_sol ? mk : INFINITY;

	if (wplan && wplan->makespan_s < inc)
		inc = wplan->makespan_s;
	if (bl && bl->makespan_s < inc)
		inc = bl->makespan_s;
	return inc;
}

static saturn_plan_t *solve(const saturn_problem_t *p, const saturn_planner_opts_t *opts,
			    saturn_error_t *err);

int saturn_plan_tape_push(saturn_plan_tape_t *t, const saturn_plan_t *plan)
{
	saturn_plan_t *c = NULL;

	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 8;
		saturn_plan_t **np = realloc(t->plans, (size_t)cap * sizeof(*np));

		if (!np)
			return -1;
		t->plans = np;
		t->cap = cap;
	}
	if (plan && !(c = saturn_plan_copy(plan)))
		return -1;
	t->plans[t->n++] = c;
	return 0;
}

void saturn_plan_tape_free(saturn_plan_tape_t *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		saturn_plan_destroy(t->plans[i]);
	free(t->plans);
	t->plans = NULL;
	t->n = t->cap = t->pos = 0;
}

/* Playing: a copy of the tape's next plan when it fits p. */
static saturn_plan_t *tape_play(saturn_plan_tape_t *t, const saturn_problem_t *p,
				saturn_error_t *err)
{
	const saturn_plan_t *pl;
	int call = t->pos + 1;
	saturn_plan_t *c;

	if (t->pos >= t->n) {
		saturn_error_set(err, "replay: no recorded planner result for call %d (%d recorded)",
				 call, t->n);
		return NULL;
	}
	pl = t->plans[t->pos++];
	if (!pl) {
		saturn_error_set(err, "replay: planner call %d failed when recorded", call);
		return NULL;
	}
	if (pl->nassign != p->ntasks) {
		saturn_error_set(err, "replay: planner call %d: recorded plan has %d task(s), the problem %d",
				 call, pl->nassign, p->ntasks);
		return NULL;
	}
	for (int i = 0; i < p->ntasks; i++)
		if (!pl->assign[i].task_id || !p->tasks[i].id ||
		    strcmp(pl->assign[i].task_id, p->tasks[i].id)) {
			saturn_error_set(err, "replay: planner call %d: task %d is %s in the recording, %s in the problem",
					 call, i, pl->assign[i].task_id ? pl->assign[i].task_id : "?",
					 p->tasks[i].id ? p->tasks[i].id : "?");
			return NULL;
		}
	if (!(c = saturn_plan_copy(pl))) {
		saturn_error_set(err, "out of memory");
		return NULL;
	}
	/* a recording may come from elsewhere: its indices are resolved
	 * from the names again and the plan checked against the problem,
	 * never trusted */
	if (saturn_plan_resolve(c, p, err) < 0 || saturn_plan_validate(c, p, err) < 0) {
		char why[SATURN_ERROR_LEN];

		snprintf(why, sizeof(why), "%s", err->text);
		saturn_error_set(err, "replay: planner call %d: the recorded plan does not fit the problem: %s",
				 call, why);
		saturn_plan_destroy(c);
		return NULL;
	}
	return c;
}

saturn_plan_t *saturn_planner_solve(const saturn_problem_t *p,
				    const saturn_planner_opts_t *opts,
				    saturn_error_t *err)
{
	saturn_plan_t *plan;

	if (!opts || !opts->tape)
		return solve(p, opts, err);
	if (opts->tape->mode == SATURN_TAPE_PLAY)
		return tape_play(opts->tape, p, err);
	plan = solve(p, opts, err);
	if (saturn_plan_tape_push(opts->tape, plan) < 0) {
		saturn_plan_destroy(plan);
		saturn_error_set(err, "out of memory recording the planner result");
		return NULL;
	}
	return plan;
}

static saturn_plan_t *solve(const saturn_problem_t *p, const saturn_planner_opts_t *opts,
			    saturn_error_t *err)
{
	saturn_planner_opts_t def;
	spase_clock_t clk = {0};
	spase_inst_t *in = NULL;
	spase_work_t *w = NULL;
	spase_sol_t *best = NULL, *cand = NULL, *wsol = NULL;
	saturn_plan_t *plan = NULL, *bl = NULL, *wplan = NULL;
	double *frac = NULL; /* the LP bound's split (classseed.c) */
	saturn_bounds_t b;
	const char *method = "heuristic";
	double mk = INFINITY, limit, target, ratio, proved = 0;
	int use_milp, have_sol = 0, have_wsol = 0, enough = 0;

	if (!opts) {
		saturn_planner_opts_init(&def);
		opts = &def;
	}
	limit = opts->time_limit_s > 0 ? opts->time_limit_s : 5.0;
	ratio = opts->stop_ratio >= 1 ? opts->stop_ratio : 0;
	clk.t0 = spase_now();
	clk.deadline = clk.t0 + limit;
	clk.abort_cb = opts->abort_cb;
	clk.abort_arg = opts->abort_arg;
	in = spase_inst_create(p);
	if (!in)
		goto nomem;
	w = spase_work_create(in);
	best = spase_sol_create(in);
	cand = spase_sol_create(in);
	wsol = spase_sol_create(in);
	frac = calloc((size_t)in->nt * (size_t)(p->nclasses > 0 ? p->nclasses : 1) + 1,
		      sizeof(double));
	if (!w || !best || !cand || !wsol || !frac)
		goto nomem;
	{
		/* Its own clock, without the abort callback: the LP takes no
		 * polls of it, so a caller stopping after N polls gets the
		 * plan it got before the LP had a clock (its share bounds it). */
		double share = limit * LP_SHARE;
		spase_clock_t lpclk;

		if (share < LP_MIN_S)
			share = limit < LP_MIN_S ? limit : LP_MIN_S;
		lpclk = spase_clock_in(share - (spase_now() - clk.t0));
		spase_bounds(in, &b, frac, &lpclk);
	}
	target = b.best * (1 + TARGET_TOL);

	/* The previous plan itself, where it still holds: a candidate of its
	 * own (the search below does not keep these start limits), taken
	 * literally when it is still valid, else decoded in its start order
	 * with its starts as limits; the shorter of the two. */
	if (opts->warm) {
		double *nb = calloc((size_t)in->nt + 1, sizeof(double));
		int *pn = calloc((size_t)in->nt + 1, sizeof(int));
		int rc = nb && pn ? spase_warm_sol(in, opts->warm, wsol, nb, pn) : -1;

		if (rc == 0) {
			saturn_plan_t *lit = spase_warm_literal(in, opts->warm);

			w->not_before = nb;
			w->pref_node = pn;
			wplan = sol_plan(in, w, wsol, NULL);
			w->not_before = NULL;
			w->pref_node = NULL;
			have_wsol = 1;
			if (lit && (!wplan || lit->makespan_s < wplan->makespan_s)) {
				saturn_plan_destroy(wplan);
				wplan = lit;
			} else {
				saturn_plan_destroy(lit);
			}
		}
		free(nb);
		free(pn);
		if (rc < 0)
			goto nomem;
	}

	/* Current practice at 1, 2, 4, ... GPUs: the best is the fallback and
	 * the plan to beat. The first is computed whatever the clock says,
	 * the others while it allows (thousands of tasks: each costs about
	 * one decode and a validation); the search stops early enough to
	 * leave time for the final decode and validation (reserve). */
	{
		double tb = spase_now(), reserve;
		int nb = 0;

		for (int g = 1; g <= in->max_gpus; g *= 2, nb++) {
			saturn_plan_t *x;

			if (nb > 0 && spase_stop_floor(&clk))
				break;
			x = spase_baseline(in, g, NULL);

			if (x && (!bl || x->makespan_s < bl->makespan_s)) {
				saturn_plan_destroy(bl);
				bl = x;
			} else {
				saturn_plan_destroy(x);
			}
		}
		reserve = 2 * (spase_now() - tb) / (nb > 0 ? nb : 1);
		if (reserve > limit / 2)
			reserve = limit / 2;
		clk.deadline -= reserve;
	}

	/* stop_ratio: the warm plan (or current practice) is already good
	 * enough against the cheap bounds: no search at all. */
	enough = good_enough(incumbent(0, 0, wplan, bl), b.best, ratio);
	if (!enough) {
		mk = spase_heuristics(in, w, b.best, best, &clk);
		if (mk < 0)
			goto nomem;
		have_sol = 1;
	}
	if (!enough && have_wsol && !spase_stop_floor(&clk)) {
		/* The previous plan's options and order without its start
		 * limits compete with the heuristics and seed the search. */
		double wm;

		spase_sol_copy(in, cand, wsol);
		wm = spase_decode(w, cand, 1);
		if (wm < 0)
			goto nomem;
		if (wm <= mk) {
			mk = wm;
			spase_sol_copy(in, best, cand);
		}
	}
	if (!enough) {
		/* Current practice's choices seed the search too: every
		 * uniform request's options in its start order, list-scheduled
		 * (so backfilled, as Slurm's backfill runs them). Without
		 * this, a search that starts from the heuristics can end
		 * longer than a uniform request and fall back to its
		 * first-come-first-served replay, never improving it. */
		if (spase_seed_uniform(in, w, best, cand, &mk, &clk) < 0)
			goto nomem;
		/* Several node classes: plans that follow the LP bound's
		 * split of the tasks over the classes. */
		if (spase_class_seed(in, w, frac, b.best * (1 + 1e-5), best, cand, &mk, &clk) < 0)
			goto nomem;
	}
	enough = enough || good_enough(incumbent(have_sol, mk, wplan, bl),
				       b.best, ratio);

	use_milp = opts->use_milp;
	if (use_milp < 0)
		use_milp = 1;
	if (!enough && use_milp && mk > target && in->nfree > 0 &&
	    in->nfree <= MILP_BOUND_MAX_TASKS && in->max_nodes == 1 &&
	    !spase_stop(&clk)) {
		double rem = clk.deadline - spase_now();
		double mb;

		for (int t = 0; t < in->nt; t++)
			cand->opt[t] = -1;
		mb = spase_milp_bound(in, b.best, rem * 0.2 < 2 ? rem * 0.2 : 2,
				      &clk, cand->opt);
		if (mb > 0) {
			b.milp = mb;
			if (mb > b.best)
				b.best = mb;
			target = b.best * (1 + TARGET_TOL);
			/* The model's allotment, list-scheduled. */
			for (int t = 0; t < in->nt; t++)
				if (cand->opt[t] < 0)
					cand->opt[t] = best->opt[t];
			for (int r = 0; r < 4; r++) {
				double m2;

				spase_order_by(in, cand, r);
				m2 = spase_decode(w, cand, 1);
				if (m2 < 0)
					goto nomem;
				if (m2 < mk) {
					mk = m2;
					spase_sol_copy(in, best, cand);
				}
			}
		}
		enough = good_enough(incumbent(have_sol, mk, wplan, bl), b.best,
				     ratio);
	}
	if (!enough && use_milp && mk > target && in->nn == 1 &&
	    in->max_nodes == 1 &&
	    in->nfree > 0 && in->nfree <= MILP_IMPROVE_MAX_TASKS &&
	    !spase_stop(&clk)) {
		double rem = clk.deadline - spase_now();
		double m2 = spase_milp_improve(in, w, best, mk, b.best,
					       rem * 0.4, &clk, &proved);

		if (m2 < mk) {
			mk = m2;
			method = "milp";
		}
		if (proved > b.best) {
			b.best = proved;
			target = b.best * (1 + TARGET_TOL);
		}
		enough = good_enough(incumbent(have_sol, mk, wplan, bl), b.best,
				     ratio);
	}
	if (!enough && mk > target && !spase_stop(&clk)) {
		/* With stop_ratio, annealing stops as soon as its makespan is
		 * good enough (ratio x bound > target). */
		double stop_at = target, m2;

		if (ratio > 0 && ratio * b.best > stop_at)
			stop_at = ratio * b.best;
		m2 = spase_anneal(in, w, best, mk, stop_at,
				  opts->seed ? opts->seed : 1, opts->max_evals, &clk);
		if (m2 < 0)
			goto nomem;
		if (m2 < mk) {
			mk = m2;
			method = "anneal";
		}
	}
	if (have_sol)
		plan = sol_plan(in, w, best, err);
	if (!plan && have_sol && bl) {
		/* A planner bug (the plan failed validation) or ENOMEM: fall
		 * back to the valid current-practice plan rather than fail. */
		plan = bl;
		bl = NULL;
		method = "heuristic";
	}
	if (!plan && !have_sol) {
		/* Stopped before the search (stop_ratio): the previous plan
		 * reproduced, unless current practice is shorter. */
		if (wplan && (!bl || wplan->makespan_s <=
					     bl->makespan_s * (1 + 1e-12))) {
			plan = wplan;
			wplan = NULL;
			method = "warm";
		} else if (bl) {
			plan = bl;
			bl = NULL;
			method = "heuristic";
		} else {
			saturn_error_set(err, "internal: planner has no plan");
		}
	}
	if (!plan)
		goto out;
	/* Never worse than the previous plan (warm start) ... */
	if (wplan && wplan->makespan_s < plan->makespan_s * (1 - 1e-12)) {
		saturn_plan_destroy(plan);
		plan = wplan;
		wplan = NULL;
		method = "heuristic";
	}
	/* ... nor than current practice. */
	if (bl && bl->makespan_s < plan->makespan_s * (1 - 1e-12)) {
		saturn_plan_destroy(plan);
		plan = bl;
		bl = NULL;
		method = "heuristic";
	}
	label(plan, method, &b, 0, ratio, clk.t0);
	goto out;
nomem:
	saturn_error_set(err, "planner: out of memory");
out:
	free(frac);
	saturn_plan_destroy(bl);
	saturn_plan_destroy(wplan);
	spase_sol_destroy(best);
	spase_sol_destroy(cand);
	spase_sol_destroy(wsol);
	spase_work_destroy(w);
	spase_inst_destroy(in);
	return plan;
}
