/* planner_warm.c - the warm start: a previous plan turned into a solution
 * of this problem (its options and start order where the tasks match), and
 * the previous plan taken literally; both are candidates of solve()
 * (planner.c).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

/* --- warm start ----------------------------------------------------------- */

typedef struct name_idx {
	const char *name;
	int idx;
} name_idx_t;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const name_idx_t *)a)->name,
		      ((const name_idx_t *)b)->name);
}

/* The non-dominated option of task t closest to the warm assignment a:
 * the same technique and GPU count, else one that dominates it. */
static int warm_option(const spase_inst_t *in, int t, const saturn_assign_t *a,
		       int node)
{
	const spase_task_t *tk = &in->t[t];
	const saturn_task_t *st = &in->p->tasks[t];
	int best = -1, any = -1;

	/* the same technique and GPU count; among copies of it for several
	 * node classes (partitions), the one that fits the planned node */
	for (int o = 0; o < tk->nopt; o++) {
		const saturn_option_t *so = &st->options[tk->opt[o].orig];

		if (so->gpus != a->gpus ||
		    saturn_option_nodes(so) != saturn_assign_nnodes(a) ||
		    !a->technique ||
		    strcmp(so->technique, a->technique) != 0)
			continue;
		if (node < 0 || saturn_option_fits(in->p, t, tk->opt[o].orig, node))
			return o;
		if (any < 0)
			any = o;
	}
	if (any >= 0)
		return any;
	for (int o = 0; o < tk->nopt; o++)
		if (tk->opt[o].width <= a->gpus * saturn_assign_nnodes(a) &&
		    (best < 0 || tk->opt[o].dur < tk->opt[best].dur))
			best = o;
	return best >= 0 ? best : tk->min_area_opt;
}

typedef struct warm_ctx {
	const double *key;
} warm_ctx_t;

static int warm_cmp(const void *a, const void *b, void *arg)
{
	const warm_ctx_t *c = arg;
	int x = *(const int *)a, y = *(const int *)b;

	if (c->key[x] != c->key[y])
		return c->key[x] < c->key[y] ? -1 : 1;
	return x - y;
}

/* Build a solution from a previous plan: its options and start order for
 * the tasks it names, the others after them (longest first). nb and pn (nt
 * entries each) get each matched task's previous start and node (-1
 * elsewhere): decoding with them as not_before/pref_node reproduces the
 * previous plan where the problem has not changed. Returns 0 when at least
 * one task matched, 1 when none did, -1 on ENOMEM. */
int spase_warm_sol(const spase_inst_t *in, const saturn_plan_t *warm,
		   spase_sol_t *sol, double *nb, int *pn)
{
	name_idx_t *names = calloc((size_t)in->nt + 1, sizeof(*names));
	double *key = calloc((size_t)in->nt + 1, sizeof(double));
	double maxs = 0;
	int matched = 0;
	warm_ctx_t c = {key};

	if (!names || !key) {
		free(names);
		free(key);
		return -1;
	}
	for (int t = 0; t < in->nt; t++) {
		names[t].name = in->p->tasks[t].id;
		names[t].idx = t;
		key[t] = NAN;
		sol->opt[t] = in->t[t].min_area_opt;
		nb[t] = -1;
		pn[t] = -1;
	}
	qsort(names, (size_t)in->nt, sizeof(*names), name_cmp);
	for (int i = 0; i < warm->nassign; i++) {
		const saturn_assign_t *a = &warm->assign[i];
		name_idx_t k = {a->task_id, 0}, *hit;

		if (!a->task_id || !isfinite(a->start_s))
			continue;
		hit = bsearch(&k, names, (size_t)in->nt, sizeof(*names),
			      name_cmp);
		if (!hit || !isnan(key[hit->idx]))
			continue;
		key[hit->idx] = a->start_s;
		nb[hit->idx] = a->start_s;
		for (int n = 0; a->node_name && n < in->nn; n++)
			if (strcmp(in->p->nodes[n].name, a->node_name) == 0) {
				pn[hit->idx] = n;
				break;
			}
		sol->opt[hit->idx] = warm_option(in, hit->idx, a, pn[hit->idx]);
		if (a->start_s > maxs)
			maxs = a->start_s;
		matched++;
	}
	for (int t = 0; t < in->nt; t++)
		if (isnan(key[t])) /* after the known ones, longest first */
			key[t] = maxs + 1 +
				 1.0 / (1.0 + in->t[t].opt[sol->opt[t]].dur);
	for (int t = 0; t < in->nt; t++)
		sol->order[t] = t;
	qsort_r(sol->order, (size_t)in->nt, sizeof(int), warm_cmp, &c);
	free(names);
	free(key);
	return matched > 0 ? 0 : 1;
}

/* The previous plan taken literally: each task of in->p at its warm
 * start on its warm node, with the option of the same technique and GPU
 * count that fits there (the class follows the node). NULL when a task is
 * missing or does not fit, when the result fails validation (the problem
 * changed: a GPU is busy now, a runtime grew, a running task moved), or on
 * ENOMEM. Exact where the decoder's reproduction is not: the decoder moves
 * a task to another class's node when that ends it sooner. */
saturn_plan_t *spase_warm_literal(const spase_inst_t *in,
				  const saturn_plan_t *warm)
{
	const saturn_problem_t *p = in->p;
	name_idx_t *names = calloc((size_t)warm->nassign + 1, sizeof(*names));
	saturn_plan_t *plan = saturn_plan_create(in->nt);
	int ok = names && plan;

	for (int i = 0; ok && i < warm->nassign; i++) {
		names[i].name = warm->assign[i].task_id ? warm->assign[i].task_id
							: "";
		names[i].idx = i;
	}
	if (ok)
		qsort(names, (size_t)warm->nassign, sizeof(*names), name_cmp);
	for (int t = 0; ok && t < in->nt; t++) {
		const saturn_task_t *st = &p->tasks[t];
		name_idx_t k = {st->id, 0}, *hit;
		const saturn_assign_t *a;
		int n = -1, o = -1, kn, nodes[SATURN_MAX_TASK_NODES];

		hit = bsearch(&k, names, (size_t)warm->nassign, sizeof(*names),
			      name_cmp);
		a = hit ? &warm->assign[hit->idx] : NULL;
		if (!a || !a->node_name || !a->technique ||
		    !isfinite(a->start_s) || a->start_s < 0) {
			ok = 0;
			break;
		}
		kn = saturn_assign_nnodes(a);
		if (kn > SATURN_MAX_TASK_NODES || (kn > 1 && !a->more_names)) {
			ok = 0;
			break;
		}
		/* every node of the entry, by name (the first is n) */
		for (int j = 0; j < kn; j++) {
			const char *name = saturn_assign_name_at(a, j);

			nodes[j] = -1;
			for (int m = 0; name && m < p->nnodes && nodes[j] < 0; m++)
				if (strcmp(p->nodes[m].name, name) == 0)
					nodes[j] = m;
			if (nodes[j] < 0)
				n = -2;
		}
		if (n == -1)
			n = nodes[0];
		for (int q = 0; n >= 0 && q < st->noptions; q++)
			if (st->options[q].gpus == a->gpus &&
			    saturn_option_nodes(&st->options[q]) == kn &&
			    strcmp(st->options[q].technique, a->technique) == 0 &&
			    saturn_option_fits(p, t, q, n) &&
			    (o < 0 || st->options[q].sec_per_batch <
					      st->options[o].sec_per_batch))
				o = q;
		if (o < 0 || saturn_plan_set_nodes(plan, t, p, t, o, nodes,
						   a->start_s, NULL) < 0)
			ok = 0;
	}
	free(names);
	if (!ok || spase_finish_plan(in, plan, NULL) < 0) {
		saturn_plan_destroy(plan);
		return NULL;
	}
	return plan;
}
