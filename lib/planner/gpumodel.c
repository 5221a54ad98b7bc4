/* gpumodel.c - the GPU model every plan is placed over (gpumodel.h): the
 * GPUs of a problem by id (free times, picking, placement by id for FCFS
 * and carried plans, gangs) and the same GPUs by count (the step function
 * spase_prof_t the decoder and the baseline place into). Split from
 * listsched.c, which keeps the placement by count (the decoder).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpumodel.h"

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
	/* spase_gpu_pick() needs G <= the node's GPUs: a caller that passes
	 * a node too small for the option gets EINVAL, never a write past
	 * that node's free times */
	for (int j = 0; j < k; j++)
		if (nodes[j] < 0 || nodes[j] >= p->nnodes || G > p->nodes[nodes[j]].gpus) {
			free(ids);
			errno = EINVAL;
			return -1;
		}
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
