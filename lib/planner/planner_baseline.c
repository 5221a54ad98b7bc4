/* planner_baseline.c - current practice, for comparison: every task with a
 * fixed GPU count and its fastest technique at that count, started first-
 * come-first-served (saturn_planner_baseline, planner.h). solve() also
 * tries it as a candidate, so a plan is never worse than the best baseline.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

/* GPUs an option takes in all (per node x nodes). */
static int width(const saturn_option_t *so)
{
	return so->gpus * saturn_option_nodes(so);
}

/* The original option index current practice uses for task t: the fastest
 * at the largest total GPU count <= gpus (a model that needs several
 * nodes: its smallest gang). */
static int baseline_option(const saturn_problem_t *p, int t, int gpus)
{
	const saturn_task_t *st = &p->tasks[t];
	int cnt = -1, smallest = -1, best = -1;

	for (int o = 0; o < st->noptions; o++) {
		const saturn_option_t *so = &st->options[o];

		if (!saturn_option_placeable(p, t, o))
			continue;
		if (width(so) <= gpus && width(so) > cnt)
			cnt = width(so);
		if (smallest < 0 || width(so) < width(&st->options[smallest]) ||
		    (width(so) == width(&st->options[smallest]) &&
		     so->sec_per_batch < st->options[smallest].sec_per_batch))
			smallest = o;
	}
	if (cnt < 0)
		return smallest;
	for (int o = 0; o < st->noptions; o++) {
		const saturn_option_t *so = &st->options[o];
		int fits;

		if (width(so) != cnt)
			continue;
		fits = saturn_option_placeable(p, t, o);
		if (fits && (best < 0 ||
			     so->sec_per_batch < st->options[best].sec_per_batch))
			best = o;
	}
	return best;
}

saturn_plan_t *spase_baseline(const spase_inst_t *in, int gpus,
			      saturn_error_t *err)
{
	saturn_plan_t *plan = saturn_plan_create(in->nt);
	int *opt = calloc((size_t)in->nt + 1, sizeof(int));

	if (!plan || !opt) {
		saturn_error_set(err, "planner: out of memory");
		goto fail;
	}
	for (int t = 0; t < in->nt; t++)
		opt[t] = in->p->tasks[t].is_running ? -1
						    : baseline_option(in->p, t, gpus);
	if (spase_place_arrival(in, opt, plan, err) < 0 ||
	    spase_finish_plan(in, plan, err) < 0)
		goto fail;
	snprintf(plan->method, sizeof(plan->method), "baseline");
	snprintf(plan->status, sizeof(plan->status), "feasible");
	free(opt);
	return plan;
fail:
	free(opt);
	saturn_plan_destroy(plan);
	return NULL;
}

/* The option of task t (index into in->t[t].opt) closest to current
 * practice's original option o: o itself, else the fastest non-dominated
 * option with no more GPUs (one that dominates it), else the smallest. */
static int inst_option(const spase_inst_t *in, int t, int o)
{
	const spase_task_t *tk = &in->t[t];
	int g = in->p->tasks[t].options[o].gpus, best = -1;

	for (int k = 0; k < tk->nopt; k++)
		if (tk->opt[k].orig == o)
			return k;
	for (int k = 0; k < tk->nopt; k++)
		if (tk->opt[k].gpus <= g &&
		    (best < 0 || tk->opt[k].dur < tk->opt[best].dur))
			best = k;
	return best >= 0 ? best : 0;
}

int spase_seed_uniform(const spase_inst_t *in, spase_work_t *w,
		       spase_sol_t *best, spase_sol_t *cand, double *mk,
		       spase_clock_t *clk)
{
	int replaced = 0;

	for (int g = 1; g <= in->max_gpus; g *= 2) {
		double m;

		if (spase_stop_floor(clk))
			break;

		for (int t = 0; t < in->nt; t++) {
			int o = in->p->tasks[t].is_running
					? -1
					: baseline_option(in->p, t, g);

			cand->order[t] = t;
			cand->opt[t] = o < 0 || in->t[t].pinned
					       ? 0
					       : inst_option(in, t, o);
		}
		m = spase_decode(w, cand, 1);
		if (m < 0)
			return -1;
		if (m < *mk) {
			*mk = m;
			spase_sol_copy(in, best, cand);
			replaced = 1;
		}
	}
	return replaced;
}

saturn_plan_t *saturn_planner_baseline(const saturn_problem_t *p, int gpus,
				       saturn_error_t *err)
{
	spase_inst_t *in = spase_inst_create(p);
	saturn_plan_t *plan;
	saturn_bounds_t b;

	if (!in) {
		saturn_error_set(err, "planner: out of memory");
		return NULL;
	}
	plan = spase_baseline(in, gpus, err);
	if (plan) {
		spase_clock_t clk = spase_clock_in(SPASE_CHEAP_LP_S);

		spase_bounds(in, &b, NULL, &clk);
		plan->lower_bound_s = b.best;
	}
	spase_inst_destroy(in);
	return plan;
}
