/* listsched.c - plan construction: the list scheduler every plan of the
 * library is built with (listsched.h), over one GPU model (gpumodel.c,
 * gpumodel.h).
 *
 * The GPUs of a problem are known by id (busy GPUs and running tasks hold
 * specific ids): spase_gpu_free_create(). FCFS and carried plans place tasks
 * by id on the GPUs that free up first (spase_place_ids()). The planner's
 * decoder and the baseline place them by count on the step function derived
 * from those ids (spase_prof_from_gpus()): each node keeps the free GPUs over
 * time, and tasks are placed one by one in priority order at the earliest
 * time their option's GPU count is free for the whole runtime, on whichever
 * fitting node allows the earliest start (best fit on ties). Because the
 * earliest start is searched over the whole profile, a later task can fill a
 * gap left before earlier ones (backfilling). A per-node count is exact:
 * GPUs inside a node are interchangeable once the busy and running ones are
 * out (their intervals all start at 0), so ids can always be handed out
 * afterwards in start order (saturn_plan_assign_gpus()). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

/* --- placement by count: the decoder ------------------------------------- */

spase_work_t *spase_work_create(const spase_inst_t *in)
{
	spase_work_t *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->in = in;
	w->prof = calloc((size_t)in->nn, sizeof(*w->prof));
	w->node = calloc((size_t)in->nt + 1, sizeof(int));
	w->start = calloc((size_t)in->nt + 1, sizeof(double));
	w->node_end = calloc((size_t)in->nn, sizeof(double));
	w->gang = calloc(((size_t)in->nt + 1) * (size_t)in->max_nodes,
			 sizeof(int));
	w->scratch = calloc((size_t)in->nn + 1, sizeof(double));
	w->ok = calloc((size_t)in->nn + 1, 1);
	if (!w->prof || !w->node || !w->start || !w->node_end || !w->gang ||
	    !w->scratch || !w->ok)
		goto fail;
	for (int n = 0; n < in->nn; n++)
		if (spase_prof_init(&w->prof[n],
				    in->base[n].n + 2 * in->nt + 4) < 0)
			goto fail;
	return w;
fail:
	spase_work_destroy(w);
	return NULL;
}

void spase_work_destroy(spase_work_t *w)
{
	if (!w)
		return;
	if (w->prof)
		for (int n = 0; n < w->in->nn; n++)
			spase_prof_free(&w->prof[n]);
	free(w->prof);
	free(w->node);
	free(w->start);
	free(w->node_end);
	free(w->gang);
	free(w->scratch);
	free(w->ok);
	free(w);
}

/* Gang search within class c (see spase_gang_earliest()): the fixpoint of
 * s -> k-th smallest earliest start of the allowed nodes from s. Every
 * gang start >= s is >= that k-th value (each of its k nodes has its
 * earliest start from s at or before it), so the iteration never passes
 * the earliest gang start, and it stops there: k nodes start at s. */
static double gang_in_class(const spase_inst_t *in, const spase_prof_t *prof,
			    const char *ok, int c, int g, int k, double d,
			    double r, double *e)
{
	double s = r;

	for (;;) {
		int cnt = 0, le = 0;
		double kth = INFINITY;

		for (int n = 0; n < in->nn; n++) {
			e[n] = INFINITY;
			if (!ok[n] || in->klass[n] != c)
				continue;
			e[n] = spase_prof_earliest(&prof[n], g, d, s, NULL);
			if (isfinite(e[n]))
				cnt++;
			le += e[n] <= s;
		}
		if (cnt < k)
			return INFINITY;
		if (le >= k)
			return s;
		/* k-th smallest of e[] (k is small next to nn: k passes) */
		{
			double prev = -INFINITY;
			int seen = 0;

			while (seen < k) {
				double m = INFINITY;
				int mult = 0;

				for (int n = 0; n < in->nn; n++)
					if (e[n] > prev && e[n] < m) {
						m = e[n];
						mult = 1;
					} else if (e[n] == m) {
						mult++;
					}
				seen += mult;
				prev = m;
				kth = m;
			}
		}
		if (!(kth > s))
			return s; /* cannot happen: le < k means kth > s */
		s = kth;
	}
}

double spase_gang_earliest(const spase_inst_t *in, const spase_prof_t *prof,
			   const char *ok, int g, int k, double d, double r,
			   int pref, double *scratch, int *nodes)
{
	int nc = in->p->nclasses > 0 ? in->p->nclasses : 1, bc = -1;
	double bs = INFINITY;

	for (int c = 0; c < nc; c++) {
		double s = gang_in_class(in, prof, ok, c, g, k, d,
					 r, scratch);

		if (s < bs) {
			bs = s;
			bc = c;
		}
	}
	if (bc < 0)
		return INFINITY;
	/* The k nodes free from bs: tightest fit (fewest GPUs left) first,
	 * the preferred node ahead of its equals, then the lowest index. */
	for (int j = 0; j < k; j++) {
		int best = -1, best_left = 0;

		for (int n = 0; n < in->nn; n++) {
			int fa, used = 0;

			if (!ok[n] || in->klass[n] != bc)
				continue;
			for (int m = 0; m < j; m++)
				used |= nodes[m] == n;
			if (used || spase_prof_earliest(&prof[n], g, d, bs,
							&fa) > bs)
				continue;
			if (best < 0 || fa - g < best_left ||
			    (fa - g == best_left && n == pref)) {
				best = n;
				best_left = fa - g;
			}
		}
		if (best < 0)
			return INFINITY; /* cannot happen (gang_in_class) */
		nodes[j] = best;
	}
	return bs;
}

/* Best node for option o of task t: earliest start, then tightest fit,
 * then lowest index. Returns the node or -1 (no node fits). */
static int best_node(spase_work_t *w, int t, int o, double *start)
{
	const spase_inst_t *in = w->in;
	const spase_opt_t *op = &in->t[t].opt[o];
	int best = -1, best_left = 0;
	int pref = w->pref_node ? w->pref_node[t] : -1;
	double bs = INFINITY, r = in->t[t].release;

	if (w->not_before && w->not_before[t] > r)
		r = w->not_before[t];
	for (int n = 0; n < in->nn; n++) {
		int fa;
		double s;

		if (!spase_fits(in, t, o, n))
			continue;
		s = spase_prof_earliest(&w->prof[n], op->gpus, op->dur, r,
					&fa);
		if (s < bs || (s == bs && n == pref) ||
		    (s == bs && best != pref && fa - op->gpus < best_left)) {
			bs = s;
			best = n;
			best_left = fa - op->gpus;
		}
	}
	*start = bs;
	return best;
}

/* Earliest gang for multi-node option o of task t into nodes[]. */
static double best_gang(spase_work_t *w, int t, int o, int *nodes)
{
	const spase_inst_t *in = w->in;
	const spase_opt_t *op = &in->t[t].opt[o];
	double r = in->t[t].release;

	if (w->not_before && w->not_before[t] > r)
		r = w->not_before[t];
	for (int n = 0; n < in->nn; n++)
		w->ok[n] = (char)spase_fits(in, t, o, n);
	return spase_gang_earliest(in, w->prof, w->ok, op->gpus, op->nodes,
				   op->dur, r,
				   w->pref_node ? w->pref_node[t] : -1,
				   w->scratch, nodes);
}

/* Where option o of task t goes: nodes[0..k) and the start (INFINITY and
 * -1 when nowhere). */
static int place_opt(spase_work_t *w, int t, int o, double *start,
		     int *nodes)
{
	if (w->in->t[t].opt[o].nodes > 1) {
		*start = best_gang(w, t, o, nodes);
		return isfinite(*start) ? nodes[0] : -1;
	}
	nodes[0] = best_node(w, t, o, start);
	return nodes[0];
}

double spase_decode(spase_work_t *w, spase_sol_t *sol, double alpha)
{
	int gq[SATURN_MAX_TASK_NODES];

	const spase_inst_t *in = w->in;
	double mk = 0;

	for (int n = 0; n < in->nn; n++) {
		if (spase_prof_copy(&w->prof[n], &in->base[n]) < 0)
			return -1;
		w->node_end[n] = 0;
	}
	for (int t = 0; t < in->nt; t++) {
		if (!in->t[t].pinned)
			continue;
		sol->opt[t] = 0;
		w->node[t] = in->t[t].pin_node;
		w->start[t] = 0;
		for (int j = 0; j < in->t[t].opt[0].nodes; j++) {
			int n = saturn_running_node_at(&in->p->tasks[t].running, j);

			w->gang[(size_t)t * (size_t)in->max_nodes + (size_t)j] = n;
			if (in->t[t].opt[0].dur > w->node_end[n])
				w->node_end[n] = in->t[t].opt[0].dur;
		}
		if (in->t[t].opt[0].dur > mk)
			mk = in->t[t].opt[0].dur;
	}
	/* Three passes: the released tasks in task order (Slurm starts them
	 * first, whatever the order says), then the others in priority
	 * order, then the zero-length ones. */
	for (int k = 0; k < 3 * in->nt; k++) {
		int ph = k / in->nt;
		int t = ph == 0 ? k : sol->order[k % in->nt];
		const spase_task_t *tk = &in->t[t];
		int o = sol->opt[t], n;
		int *gang = &w->gang[(size_t)t * (size_t)in->max_nodes];
		double s, e;

		if (tk->pinned)
			continue;
		if (ph == 0 ? tk->rel_node < 0 || tk->zero
			    : tk->zero != (ph == 2) || (ph == 1 && tk->rel_node >= 0))
			continue;
		if (o >= 0) {
			/* Options with the same GPU count differ only in class
			 * (the rest are dominated): take the one that ends
			 * first, so that the class follows the free nodes. */
			int q0 = o, q1 = o;

			while (q0 > 0 && tk->opt[q0 - 1].gpus == tk->opt[o].gpus &&
			       tk->opt[q0 - 1].nodes == tk->opt[o].nodes)
				q0--;
			while (q1 + 1 < tk->nopt &&
			       tk->opt[q1 + 1].gpus == tk->opt[o].gpus &&
			       tk->opt[q1 + 1].nodes == tk->opt[o].nodes)
				q1++;
			n = place_opt(w, t, o, &s, gang);
			for (int q = q0; q <= q1 && q0 < q1; q++) {
				double sq;
				int nq;

				if (q == o)
					continue;
				nq = place_opt(w, t, q, &sq, gq);
				if (nq >= 0 && (n < 0 || sq + tk->opt[q].dur <
								s + tk->opt[o].dur)) {
					n = nq;
					s = sq;
					o = q;
					memcpy(gang, gq, sizeof(int) *
					       (size_t)tk->opt[q].nodes);
				}
			}
			sol->opt[t] = o;
		} else {
			double lim = alpha * tk->opt[tk->min_area_opt].area *
				     (1 + 1e-12);
			double be = INFINITY;

			n = -1;
			s = INFINITY;
			for (int q = 0; q < tk->nopt; q++) {
				double sq;
				int nq;

				if (w->class_alpha && tk->opt[q].klass >= 0) {
					/* against the smallest area in q's class */
					double ca = tk->opt[q].area;

					for (int u = 0; u < tk->nopt; u++)
						if (tk->opt[u].klass == tk->opt[q].klass &&
						    tk->opt[u].area < ca)
							ca = tk->opt[u].area;
					if (tk->opt[q].area > alpha * ca * (1 + 1e-12))
						continue;
				} else if (tk->opt[q].area > lim && q != tk->min_area_opt) {
					continue;
				}
				nq = place_opt(w, t, q, &sq, gq);
				if (nq < 0)
					continue;
				if (sq + tk->opt[q].dur < be) {
					be = sq + tk->opt[q].dur;
					n = nq;
					s = sq;
					o = q;
					memcpy(gang, gq, sizeof(int) *
					       (size_t)tk->opt[q].nodes);
				}
			}
			sol->opt[t] = o;
		}
		if (n < 0 || !isfinite(s)) {
			errno = EINVAL;
			return -1;
		}
		e = s + tk->opt[o].dur;
		gang[0] = n;
		for (int j = 0; j < tk->opt[o].nodes; j++) {
			int nj = gang[j];

			if (spase_prof_take(&w->prof[nj], s, e,
					    tk->opt[o].gpus) < 0)
				return -1;
			if (e > w->node_end[nj])
				w->node_end[nj] = e;
		}
		w->node[t] = n;
		w->start[t] = s;
		if (e > mk)
			mk = e;
	}
	return mk;
}

double spase_tiebreak(const spase_work_t *w, const spase_sol_t *sol)
{
	const spase_inst_t *in = w->in;
	double num = 0, den = 0, nodes = 0;

	for (int t = 0; t < in->nt; t++) {
		const spase_opt_t *op = &in->t[t].opt[sol->opt[t]];
		double a = op->area > 0 ? op->area : 1e-9;

		num += a * (w->start[t] + op->dur);
		den += a;
	}
	for (int n = 0; n < in->nn; n++)
		nodes += w->node_end[n];
	return (den > 0 ? num / den : 0) + nodes / in->nn;
}

int spase_place_arrival(const spase_inst_t *in, const int *opt,
			saturn_plan_t *plan, saturn_error_t *err)
{
	const saturn_problem_t *p = in->p;
	spase_prof_t *prof = calloc((size_t)in->nn + 1, sizeof(*prof));
	double *scratch = calloc((size_t)in->nn + 1, sizeof(double));
	char *ok = calloc((size_t)in->nn + 1, 1);
	int gang[SATURN_MAX_TASK_NODES];
	double prev = 0;
	int rc = -1;

	if (!prof || !scratch || !ok)
		goto nomem;
	for (int n = 0; n < in->nn; n++)
		if (spase_prof_init(&prof[n], in->base[n].n + 2 * in->nt + 4) <
			0 ||
		    spase_prof_copy(&prof[n], &in->base[n]) < 0)
			goto nomem;
	/* Zero-length tasks last (as in spase_decode()), so that no task
	 * placed after them covers their instant. */
	for (int k = 0; k < 2 * in->nt; k++) {
		int t = k % in->nt, o = opt[t], best = -1, kn;
		const saturn_task_t *st = &p->tasks[t];
		double bs = INFINITY, d, r;

		if (in->t[t].zero != (k >= in->nt))
			continue;
		if (st->is_running) {
			for (int j = 0; j < saturn_running_nnodes(&st->running); j++)
				gang[j] = saturn_running_node_at(&st->running, j);
			if (saturn_plan_set_nodes(plan, t, p, t, st->running.option,
						  gang, 0, NULL) < 0)
				goto nomem;
			continue;
		}
		d = saturn_task_runtime(st, o);
		r = st->release_s > prev || in->t[t].zero ? st->release_s
							  : prev;
		kn = saturn_option_nodes(&st->options[o]);
		if (kn > 1) {
			for (int n = 0; n < in->nn; n++)
				ok[n] = (char)saturn_option_fits(p, t, o, n);
			bs = spase_gang_earliest(in, prof, ok,
						 st->options[o].gpus, kn, d, r,
						 -1, scratch, gang);
			best = isfinite(bs) ? gang[0] : -1;
		}
		for (int n = 0; n < in->nn && kn == 1; n++) {
			double s;

			if (!saturn_option_fits(p, t, o, n) ||
			    (in->t[t].rel_node >= 0 && n != in->t[t].rel_node))
				continue;
			s = spase_prof_earliest(&prof[n], st->options[o].gpus,
						d, r, NULL);
			if (s < bs) {
				bs = s;
				best = n;
			}
		}
		if (best < 0 || !isfinite(bs)) {
			saturn_error_set(err, "internal: no node for task %s",
					 st->id);
			goto out;
		}
		gang[0] = best;
		for (int j = 0; j < kn; j++)
			if (spase_prof_take(&prof[gang[j]], bs, bs + d,
					    st->options[o].gpus) < 0)
				goto nomem;
		if (saturn_plan_set_nodes(plan, t, p, t, o, gang, bs, NULL) < 0)
			goto nomem;
		if (!in->t[t].zero)
			prev = bs;
	}
	rc = 0;
	goto out;
nomem:
	saturn_error_set(err, "planner: out of memory");
out:
	if (prof)
		for (int n = 0; n < in->nn; n++)
			spase_prof_free(&prof[n]);
	free(prof);
	free(scratch);
	free(ok);
	return rc;
}
