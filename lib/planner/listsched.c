/* listsched.c - plan construction: the list scheduler every plan of the
 * library is built with (listsched.h), over one GPU model.
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

/* --- the GPUs of a problem, by id ----------------------------------------- */

void spase_gpu_free_destroy(double **free_at, int nnodes)
{
	if (free_at)
		for (int n = 0; n < nnodes; n++)
			free(free_at[n]);
	free(free_at);
}

double **spase_gpu_free_create(const saturn_problem_t *p)
{
	double **free_at =
	    calloc((size_t)(p->nnodes ? p->nnodes : 1), sizeof(double *));

	if (!free_at)
		return NULL;
	for (int n = 0; n < p->nnodes; n++) {
		const saturn_node_t *node = &p->nodes[n];
		double *f = calloc((size_t)node->gpus, sizeof(double));

		free_at[n] = f;
		if (!f)
			goto fail;
		for (int b = 0; b < node->nbusy; b++)
			for (int i = 0; i < node->busy[b].ngpus; i++) {
				int id = node->busy[b].gpu_ids[i];

				if (id >= 0 && id < node->gpus &&
				    node->busy[b].until_s > f[id])
					f[id] = node->busy[b].until_s;
			}
	}
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];
		const saturn_running_t *r = &task->running;
		double end;

		if (!task->is_running || r->node < 0 || r->node >= p->nnodes)
			continue;
		end = saturn_task_runtime(task, r->option);
		for (int j = 0; j < saturn_running_nnodes(r); j++) {
			int n = saturn_running_node_at(r, j);

			if (n < 0 || n >= p->nnodes)
				continue;
			for (int i = 0; i < r->ngpus; i++) {
				int id = r->gpu_ids[(size_t)j * (size_t)r->ngpus + (size_t)i];

				if (id >= 0 && id < p->nodes[n].gpus &&
				    end > free_at[n][id])
					free_at[n][id] = end;
			}
		}
	}
	return free_at;
fail:
	spase_gpu_free_destroy(free_at, p->nnodes);
	errno = ENOMEM;
	return NULL;
}

double spase_gpu_pick(const double *free_at, int ngpus, int G, int *ids)
{
	int ord[SATURN_MAX_GPUS_PER_NODE];
	double ready;

	for (int g = 0; g < ngpus; g++) {
		int k = g;

		ord[k] = g;
		while (k > 0 && (free_at[ord[k]] < free_at[ord[k - 1]] ||
				 (free_at[ord[k]] == free_at[ord[k - 1]] &&
				  ord[k] < ord[k - 1]))) {
			int x = ord[k];

			ord[k] = ord[k - 1];
			ord[k - 1] = x;
			k--;
		}
	}
	ready = free_at[ord[G - 1]];
	for (int g = 0; g < G; g++)
		ids[g] = ord[g];
	for (int x = 1; x < G; x++)
		for (int k = x; k > 0 && ids[k] < ids[k - 1]; k--) {
			int y = ids[k];

			ids[k] = ids[k - 1];
			ids[k - 1] = y;
		}
	return ready;
}

int spase_place_ids(double **free_at, saturn_plan_t *plan,
		    const saturn_problem_t *p, int t, int o, int n,
		    double not_before)
{
	if (saturn_option_nodes(&p->tasks[t].options[o]) != 1) {
		errno = EINVAL;
		return -1;
	}
	return spase_place_ids_nodes(free_at, plan, p, t, o, &n, not_before);
}

int spase_place_ids_nodes(double **free_at, saturn_plan_t *plan,
			  const saturn_problem_t *p, int t, int o,
			  const int *nodes, double not_before)
{
	const saturn_task_t *task = &p->tasks[t];
	int G = task->options[o].gpus, k = saturn_option_nodes(&task->options[o]);
	int *ids = calloc((size_t)k * (size_t)G, sizeof(int)), rc;
	double start = not_before, end;

	if (!ids)
		return -1;
	/* a gang starts when every node has its G GPUs free */
	for (int j = 0; j < k; j++) {
		double ready = spase_gpu_pick(free_at[nodes[j]],
					      p->nodes[nodes[j]].gpus, G,
					      ids + (size_t)j * (size_t)G);

		if (ready > start)
			start = ready;
	}
	end = start + saturn_task_runtime(task, o);
	for (int j = 0; j < k; j++)
		for (int g = 0; g < G; g++)
			free_at[nodes[j]][ids[(size_t)j * (size_t)G + (size_t)g]] = end;
	rc = saturn_plan_set_nodes(plan, t, p, t, o, nodes, start, ids);
	free(ids);
	return rc;
}

double spase_gang_pick(double **free_at, const saturn_problem_t *p, int t,
		       int o, int *nodes)
{
	const saturn_option_t *opt = &p->tasks[t].options[o];
	int k = saturn_option_nodes(opt), ids[SATURN_MAX_GPUS_PER_NODE];
	int nc = p->nclasses > 0 ? p->nclasses : 1;
	double best = INFINITY;

	for (int c = 0; c < nc; c++) {
		int cnt = 0, sel[SATURN_MAX_TASK_NODES];
		double rd[SATURN_MAX_TASK_NODES], s = -INFINITY;

		/* the k fitting nodes of class c that are ready first (a sorted
		 * list of at most k, lower index first on ties) */
		for (int n = 0; n < p->nnodes; n++) {
			double r;
			int i;

			if (p->nodes[n].class_idx != c || !saturn_option_fits(p, t, o, n))
				continue;
			r = spase_gpu_pick(free_at[n], p->nodes[n].gpus, opt->gpus, ids);
			for (i = cnt < k ? cnt : k; i > 0 && rd[i - 1] > r; i--)
				if (i < k) {
					rd[i] = rd[i - 1];
					sel[i] = sel[i - 1];
				}
			if (i < k) {
				rd[i] = r;
				sel[i] = n;
				if (cnt < k)
					cnt++;
			}
		}
		if (cnt < k)
			continue;
		for (int j = 0; j < k; j++)
			if (rd[j] > s)
				s = rd[j];
		if (s < best) {
			best = s;
			memcpy(nodes, sel, sizeof(int) * (size_t)k);
		}
	}
	return best;
}

int spase_plan_pin_running(saturn_plan_t *plan, const saturn_problem_t *p)
{
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_running_t *r = &p->tasks[t].running;
		int nodes[SATURN_MAX_TASK_NODES];

		if (!p->tasks[t].is_running)
			continue;
		for (int j = 0; j < saturn_running_nnodes(r); j++)
			nodes[j] = saturn_running_node_at(r, j);
		if (saturn_plan_set_nodes(plan, t, p, t, r->option, nodes, 0,
					  r->gpu_ids) < 0)
			return -1;
	}
	return 0;
}

void spase_plan_set_makespan(saturn_plan_t *plan)
{
	plan->makespan_s = 0;
	for (int i = 0; i < plan->nassign; i++)
		if (plan->assign[i].end_s > plan->makespan_s)
			plan->makespan_s = plan->assign[i].end_s;
}

/* --- the same GPUs, by count ---------------------------------------------- */

int spase_prof_init(spase_prof_t *pr, int cap)
{
	if (cap < 4)
		cap = 4;
	pr->t = calloc((size_t)cap, sizeof(*pr->t));
	pr->free = calloc((size_t)cap, sizeof(*pr->free));
	pr->n = 1;
	pr->full = 0;
	pr->cap = cap;
	if (!pr->t || !pr->free) {
		spase_prof_free(pr);
		return -1;
	}
	return 0;
}

void spase_prof_free(spase_prof_t *pr)
{
	free(pr->t);
	free(pr->free);
	pr->t = NULL;
	pr->free = NULL;
	pr->n = pr->cap = 0;
}

static int prof_reserve(spase_prof_t *pr, int need)
{
	double *t;
	int *f;
	int cap;

	if (need <= pr->cap)
		return 0;
	cap = pr->cap * 2 > need ? pr->cap * 2 : need;
	t = realloc(pr->t, sizeof(*t) * (size_t)cap);
	if (!t)
		return -1;
	pr->t = t;
	f = realloc(pr->free, sizeof(*f) * (size_t)cap);
	if (!f)
		return -1;
	pr->free = f;
	pr->cap = cap;
	return 0;
}

int spase_prof_copy(spase_prof_t *dst, const spase_prof_t *src)
{
	if (prof_reserve(dst, src->n) < 0)
		return -1;
	memcpy(dst->t, src->t, sizeof(*dst->t) * (size_t)src->n);
	memcpy(dst->free, src->free, sizeof(*dst->free) * (size_t)src->n);
	dst->n = src->n;
	dst->full = src->full;
	return 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int spase_prof_from_gpus(spase_prof_t *pr, const double *f, int ngpus)
{
	double *sorted = calloc((size_t)(ngpus ? ngpus : 1), sizeof(*sorted));

	if (!sorted || prof_reserve(pr, ngpus + 1) < 0) {
		free(sorted);
		return -1;
	}
	memcpy(sorted, f, sizeof(*f) * (size_t)ngpus);
	qsort(sorted, (size_t)ngpus, sizeof(*sorted), dbl_cmp);
	/* free(t) = #{gpu : f <= t}: a step up at each distinct f. */
	pr->n = 1;
	pr->t[0] = 0;
	pr->free[0] = 0;
	for (int i = 0; i < ngpus; i++) {
		if (sorted[i] <= 0) {
			pr->free[0]++;
			continue;
		}
		if (pr->t[pr->n - 1] != sorted[i]) {
			pr->t[pr->n] = sorted[i];
			pr->free[pr->n] = pr->free[pr->n - 1];
			pr->n++;
		}
		pr->free[pr->n - 1]++;
	}
	pr->full = 0;
	while (pr->full < pr->n - 1 && pr->free[pr->full] <= 0)
		pr->full++;
	free(sorted);
	return 0;
}

/* Index of the step containing time x (the last i with t[i] <= x). */
static int prof_find(const spase_prof_t *pr, double x)
{
	int lo = 0, hi = pr->n - 1;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (pr->t[mid] <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

double spase_prof_earliest(const spase_prof_t *pr, int g, double d, double r,
			   int *free_at)
{
	int js = prof_find(pr, r);
	double s;

	/* Nothing fits in the fully used steps at the front: skip them. */
	if (js < pr->full)
		js = pr->full;
	s = r > pr->t[js] ? r : pr->t[js];

	for (int j = js; j < pr->n; j++) {
		double end = j + 1 < pr->n ? pr->t[j + 1] : INFINITY;

		if (pr->free[j] < g) {
			if (j + 1 >= pr->n)
				break;
			s = pr->t[j + 1];
			js = j + 1;
			continue;
		}
		if (end >= s + d) {
			if (free_at)
				*free_at = pr->free[js];
			return s;
		}
	}
	if (free_at)
		*free_at = 0;
	return INFINITY;
}

/* Make sure a step starts exactly at x; returns its index or -1. */
static int prof_split(spase_prof_t *pr, double x)
{
	int i = prof_find(pr, x);

	if (pr->t[i] == x)
		return i;
	if (prof_reserve(pr, pr->n + 1) < 0)
		return -1;
	memmove(&pr->t[i + 2], &pr->t[i + 1],
		sizeof(*pr->t) * (size_t)(pr->n - i - 1));
	memmove(&pr->free[i + 2], &pr->free[i + 1],
		sizeof(*pr->free) * (size_t)(pr->n - i - 1));
	pr->t[i + 1] = x;
	pr->free[i + 1] = pr->free[i];
	pr->n++;
	return i + 1;
}

int spase_prof_take(spase_prof_t *pr, double s, double e, int g)
{
	int a, b;

	if (!(e > s) || g <= 0)
		return 0;
	a = prof_split(pr, s);
	if (a < 0)
		return -1;
	b = prof_split(pr, e);
	if (b < 0)
		return -1;
	for (int i = a; i < b; i++)
		pr->free[i] -= g;
	while (pr->full < pr->n - 1 && pr->free[pr->full] <= 0)
		pr->full++;
	return 0;
}

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
