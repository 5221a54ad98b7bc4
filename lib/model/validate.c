/* validate.c - plan checks and GPU id assignment (see model.h).
 *
 * A plan is only ever applied after saturn_plan_validate() accepted it, so
 * this file is the last line of defence against a planner bug: it re-derives
 * every property from the problem (options, classes, durations, releases,
 * pinned running tasks, busy GPUs) and checks GPU exclusivity with one
 * sweep per node (assignments sorted by start, per-GPU latest end), which is
 * O(n log n) and takes milliseconds for SATURN_MAX_TASKS tasks. Names are
 * looked up through sorted index arrays for the same reason.
 * saturn_plan_assign_gpus() is the matching constructive step: interval
 * colouring in start order, which never fails while capacity holds because
 * pre-coloured intervals (busy GPUs, running tasks) all contain time 0.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Time tolerance: 1e-6 relative to the magnitude involved, never below
 * 1e-6 s. */
static double tol(double x)
{
	double t = fabs(x) * 1e-6;

	return t > 1e-6 ? t : 1e-6;
}

/* --- name lookup -------------------------------------------------------- */

typedef struct name_index {
	const char **names; /* base array of name pointers, by index */
	int *order;         /* indices sorted by name */
	int n;
} name_index_t;

static _Thread_local const name_index_t *sort_ix;

static int cmp_name(const void *a, const void *b)
{
	const char *x = sort_ix->names[*(const int *)a];
	const char *y = sort_ix->names[*(const int *)b];

	return strcmp(x ? x : "", y ? y : "");
}

static int index_build(name_index_t *ix, const char **names, int n)
{
	ix->names = names;
	ix->n = n;
	ix->order = malloc(sizeof(int) * ((size_t)n + 1));
	if (!ix->order)
		return -1;
	for (int i = 0; i < n; i++)
		ix->order[i] = i;
	sort_ix = ix;
	qsort(ix->order, (size_t)n, sizeof(int), cmp_name);
	sort_ix = NULL;
	return 0;
}

/* Index of name, or -1. */
static int index_find(const name_index_t *ix, const char *name)
{
	int lo = 0, hi = ix->n - 1;

	if (!name)
		return -1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const char *m = ix->names[ix->order[mid]];
		int c = strcmp(name, m ? m : "");

		if (c == 0)
			return ix->order[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

static void index_free(name_index_t *ix)
{
	free(ix->order);
	ix->order = NULL;
}

typedef struct lookup {
	const char **task_names;
	const char **node_names;
	name_index_t tasks;
	name_index_t nodes;
} lookup_t;

static void lookup_free(lookup_t *lk)
{
	index_free(&lk->tasks);
	index_free(&lk->nodes);
	free(lk->task_names);
	free(lk->node_names);
}

static int lookup_build(lookup_t *lk, const saturn_problem_t *p,
			saturn_error_t *err)
{
	memset(lk, 0, sizeof(*lk));
	lk->task_names = calloc((size_t)p->ntasks + 1, sizeof(char *));
	lk->node_names = calloc((size_t)p->nnodes + 1, sizeof(char *));
	if (!lk->task_names || !lk->node_names)
		goto oom;
	for (int i = 0; i < p->ntasks; i++)
		lk->task_names[i] = p->tasks[i].id;
	for (int i = 0; i < p->nnodes; i++)
		lk->node_names[i] = p->nodes[i].name;
	if (index_build(&lk->tasks, lk->task_names, p->ntasks) < 0 ||
	    index_build(&lk->nodes, lk->node_names, p->nnodes) < 0)
		goto oom;
	return 0;
oom:
	lookup_free(lk);
	return saturn_error_set(err, "out of memory");
}

/* Option of task t named by technique/gpus that may run on node n; when
 * several match (one per class, say), prefer one whose runtime equals
 * duration. -1 when none matches. Only for an entry that does not say
 * which option it is (a plan file written before saturn-plan's "option"):
 * its identity derived once, here; two options alike in all of this stay
 * apart only by "option". */
static int find_option(const saturn_problem_t *p, int t, int n,
		       const char *technique, int gpus, int nodes,
		       double duration)
{
	const saturn_task_t *task = &p->tasks[t];
	int first = -1;

	if (!technique)
		return -1;
	for (int o = 0; o < task->noptions; o++) {
		const saturn_option_t *opt = &task->options[o];
		double rt;

		if (opt->gpus != gpus || saturn_option_nodes(opt) != nodes ||
		    strcmp(opt->technique, technique) != 0)
			continue;
		if (!saturn_option_fits(p, t, o, n))
			continue;
		rt = saturn_task_runtime(task, o);
		if (fabs(rt - duration) <= tol(rt > duration ? rt : duration))
			return o;
		if (first < 0)
			first = o;
	}
	return first;
}

/* Label for messages: the task id from the plan entry (or its index). */
static const char *assign_label(const saturn_assign_t *a)
{
	return a->task_id ? a->task_id : "?";
}

/* Work out task/option/node indices of plan entry i: the entry's own
 * indices when set (checked against its names), else by name. */
static int resolve_one(const saturn_assign_t *a, int i,
		       const saturn_problem_t *p, const lookup_t *lk, int *pt,
		       int *po, int *pn, saturn_error_t *err)
{
	const char *who = assign_label(a);
	int t = a->task, n = a->node, o = a->option;

	if (t < 0) {
		t = index_find(&lk->tasks, a->task_id);
		if (t < 0)
			return saturn_error_set(err, "plan tasks[%d] (%.64s): no task with this id in the problem", i, who);
	} else if (t >= p->ntasks) {
		return saturn_error_set(err, "plan tasks[%d] (%.64s): task index %d out of range", i, who, t);
	} else if (a->task_id && strcmp(a->task_id, p->tasks[t].id) != 0) {
		return saturn_error_set(err, "plan tasks[%d] (%.64s): task index %d names task \"%.64s\"", i, who, t, p->tasks[t].id);
	}
	if (n < 0) {
		n = index_find(&lk->nodes, a->node_name);
		if (n < 0)
			return saturn_error_set(err, "plan tasks[%d] (%.64s).node: unknown node \"%.64s\"", i, who, a->node_name ? a->node_name : "");
	} else if (n >= p->nnodes) {
		return saturn_error_set(err, "plan tasks[%d] (%.64s).node: node index %d out of range", i, who, n);
	} else if (a->node_name && strcmp(a->node_name, p->nodes[n].name) != 0) {
		return saturn_error_set(err, "plan tasks[%d] (%.64s).node: node index %d names node \"%.64s\", not \"%.64s\"", i, who, n, p->nodes[n].name, a->node_name);
	}
	if (o < 0) {
		o = find_option(p, t, n, a->technique, a->gpus,
				saturn_assign_nnodes(a), a->end_s - a->start_s);
		if (o < 0)
			return saturn_error_set(err, "plan tasks[%d] (%.64s): technique \"%.64s\" on %d GPUs x %d nodes is not an option of the task on node %.64s", i, who, a->technique ? a->technique : "", a->gpus, saturn_assign_nnodes(a), p->nodes[n].name);
	} else if (o >= p->tasks[t].noptions) {
		return saturn_error_set(err, "plan tasks[%d] (%.64s): option index %d out of range", i, who, o);
	} else if (a->technique &&
		   strcmp(a->technique, p->tasks[t].options[o].technique) != 0) {
		return saturn_error_set(err, "plan tasks[%d] (%.64s).technique: \"%.64s\" but option %d is \"%.64s\"", i, who, a->technique, o, p->tasks[t].options[o].technique);
	}
	*pt = t;
	*po = o;
	*pn = n;
	return 0;
}

/* The further nodes of a multi-node entry i into more[0..nnodes-1): its
 * own indices when set (checked against its names), else by name. */
static int resolve_more(const saturn_assign_t *a, int i,
			const saturn_problem_t *p, const lookup_t *lk,
			int *more, saturn_error_t *err)
{
	const char *who = assign_label(a);
	int k = saturn_assign_nnodes(a);

	if (k > SATURN_MAX_TASK_NODES)
		return saturn_error_set(err, "plan tasks[%d] (%.64s): more than %d nodes", i, who, SATURN_MAX_TASK_NODES);
	if (k > 1 && (!a->more_nodes || !a->more_names))
		return saturn_error_set(err, "plan tasks[%d] (%.64s): %d nodes but no list of them", i, who, k);
	for (int j = 1; j < k; j++) {
		int n = a->more_nodes[j - 1];
		const char *name = a->more_names[j - 1];

		if (n < 0) {
			n = index_find(&lk->nodes, name);
			if (n < 0)
				return saturn_error_set(err, "plan tasks[%d] (%.64s).nodes[%d]: unknown node \"%.64s\"", i, who, j, name ? name : "");
		} else if (n >= p->nnodes) {
			return saturn_error_set(err, "plan tasks[%d] (%.64s).nodes[%d]: node index %d out of range", i, who, j, n);
		} else if (name && strcmp(name, p->nodes[n].name) != 0) {
			return saturn_error_set(err, "plan tasks[%d] (%.64s).nodes[%d]: node index %d names node \"%.64s\", not \"%.64s\"", i, who, j, n, p->nodes[n].name, name);
		}
		more[j - 1] = n;
	}
	return 0;
}

int saturn_plan_resolve(saturn_plan_t *plan, const saturn_problem_t *p,
			saturn_error_t *err)
{
	lookup_t lk;
	int rc = 0;

	if (!plan || !p)
		return saturn_error_set(err, "no plan or problem");
	if (lookup_build(&lk, p, err) < 0)
		return -1;
	for (int i = 0; i < plan->nassign && rc == 0; i++) {
		saturn_assign_t *a = &plan->assign[i];
		int t, o, n;

		rc = resolve_one(a, i, p, &lk, &t, &o, &n, err);
		if (rc == 0 && saturn_assign_nnodes(a) > 1)
			rc = resolve_more(a, i, p, &lk, a->more_nodes, err);
		if (rc == 0) {
			a->task = t;
			a->option = o;
			a->node = n;
		}
	}
	lookup_free(&lk);
	return rc;
}

/* --- validation --------------------------------------------------------- */

typedef struct ventry {
	int t, o, n;
	double start, end;
	int a; /* index into plan->assign */
	int j; /* which of the entry's nodes n is (multi-node entries) */
} ventry_t;

static int cmp_ventry(const void *x, const void *y)
{
	const ventry_t *a = x, *b = y;

	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->a < b->a ? -1 : a->a > b->a;
}

static bool same_id_set(const int *a, const int *b, int n)
{
	unsigned long long ma = 0, mb = 0;

	for (int i = 0; i < n; i++) {
		ma |= 1ULL << a[i];
		mb |= 1ULL << b[i];
	}
	return ma == mb;
}

/* Per-entry checks that need no other entry; nodes[0..k) are the entry's
 * nodes (k = its node count). */
static int check_entry(const saturn_plan_t *plan, const saturn_problem_t *p,
		       const ventry_t *e, const int *nodes, saturn_error_t *err)
{
	const saturn_assign_t *a = &plan->assign[e->a];
	const saturn_task_t *t = &p->tasks[e->t];
	const saturn_option_t *opt = &t->options[e->o];
	const char *id = t->id;
	int k = saturn_assign_nnodes(a);
	double rt, dur;

	if (!isfinite(a->start_s) || !isfinite(a->end_s))
		return saturn_error_set(err, "task %.64s: start_s and end_s must be finite", id);
	if (k != saturn_option_nodes(opt))
		return saturn_error_set(err, "task %.64s: planned on %d nodes but option %.64s/%d GPUs spans %d", id, k, opt->technique, opt->gpus, saturn_option_nodes(opt));
	if (a->gpus != opt->gpus)
		return saturn_error_set(err, "task %.64s: %d GPUs planned but option %.64s uses %d", id, a->gpus, opt->technique, opt->gpus);
	if (!a->gpu_ids)
		return saturn_error_set(err, "task %.64s: no GPU ids assigned", id);
	rt = saturn_task_runtime(t, e->o);
	dur = a->end_s - a->start_s;
	if (fabs(dur - rt) > tol(fabs(a->end_s) > rt ? a->end_s : rt))
		return saturn_error_set(err, "task %.64s: duration %.6g s does not match batches x sec_per_batch = %.6g s", id, dur, rt);
	for (int j = 0; j < k; j++) {
		const saturn_node_t *node = &p->nodes[nodes[j]];
		const int *ids = a->gpu_ids + (size_t)j * (size_t)a->gpus;
		unsigned long long seen = 0;

		if (!saturn_option_fits(p, e->t, e->o, nodes[j]))
			return saturn_error_set(err, "task %.64s: option %.64s/%d GPUs does not fit node %.64s (class or GPU count)", id, opt->technique, opt->gpus, node->name);
		for (int m = 0; m < j; m++) {
			if (nodes[m] == nodes[j])
				return saturn_error_set(err, "task %.64s: node %.64s listed twice", id, node->name);
			if (p->nodes[nodes[m]].class_idx != node->class_idx)
				return saturn_error_set(err, "task %.64s: nodes %.64s and %.64s are of different classes", id, p->nodes[nodes[m]].name, node->name);
		}
		for (int g = 0; g < a->gpus; g++) {
			int gid = ids[g];

			if (gid < 0 || gid >= node->gpus)
				return saturn_error_set(err, "task %.64s: GPU id %d out of range on node %.64s (0..%d)", id, gid, node->name, node->gpus - 1);
			if (seen & (1ULL << gid))
				return saturn_error_set(err, "task %.64s: GPU id %d listed twice", id, gid);
			seen |= 1ULL << gid;
		}
		if (t->is_running)
			continue;
		/* Busy GPUs (held by jobs outside the problem) may not be used
		 * before they are released. Running tasks sit where they sit. */
		for (int b = 0; b < node->nbusy; b++) {
			const saturn_busy_t *busy = &node->busy[b];

			/* the same test as saturn_plan_assign_gpus() */
			if (busy->until_s <= a->start_s + tol(a->start_s) ||
			    dur <= 0)
				continue;
			for (int g = 0; g < busy->ngpus; g++)
				if (seen & (1ULL << busy->gpu_ids[g]))
					return saturn_error_set(err, "task %.64s: uses GPU %d of node %.64s at %.6g s, busy until %.6g s", id, busy->gpu_ids[g], node->name, a->start_s, busy->until_s);
		}
	}
	if (t->is_running) {
		const saturn_running_t *r = &t->running;

		if (saturn_running_nnodes(r) != k)
			return saturn_error_set(err, "task %.64s: running on %d nodes but planned on %d", id, saturn_running_nnodes(r), k);
		for (int j = 0; j < k; j++)
			if (nodes[j] != saturn_running_node_at(r, j))
				return saturn_error_set(err, "task %.64s: running on node %.64s but planned on %.64s", id, p->nodes[saturn_running_node_at(r, j)].name, p->nodes[nodes[j]].name);
		if (e->o != r->option &&
		    (t->options[r->option].gpus != opt->gpus ||
		     strcmp(t->options[r->option].technique, opt->technique)))
			return saturn_error_set(err, "task %.64s: running with %.64s/%d GPUs but planned with %.64s/%d", id, t->options[r->option].technique, t->options[r->option].gpus, opt->technique, opt->gpus);
		if (r->ngpus != a->gpus)
			return saturn_error_set(err, "task %.64s: running task must keep its GPU ids", id);
		for (int j = 0; j < k; j++)
			if (!same_id_set(r->gpu_ids + (size_t)j * (size_t)r->ngpus,
					 a->gpu_ids + (size_t)j * (size_t)a->gpus, a->gpus))
				return saturn_error_set(err, "task %.64s: running task must keep its GPU ids", id);
		if (fabs(a->start_s) > tol(0))
			return saturn_error_set(err, "task %.64s: running task must start at 0, not %.6g s", id, a->start_s);
	} else if (a->start_s < t->release_s - tol(t->release_s)) {
		return saturn_error_set(err, "task %.64s: starts at %.6g s, before its release_s %.6g s", id, a->start_s, t->release_s);
	}
	return 0;
}

/* GPU exclusivity on one node: entries[0..n) sorted by start. */
static int sweep_node(const saturn_plan_t *plan, const saturn_problem_t *p,
		      const ventry_t *v, int n, saturn_error_t *err)
{
	double hold_end[SATURN_MAX_GPUS_PER_NODE];
	int holder[SATURN_MAX_GPUS_PER_NODE];

	for (int g = 0; g < SATURN_MAX_GPUS_PER_NODE; g++) {
		hold_end[g] = -INFINITY;
		holder[g] = -1;
	}
	for (int i = 0; i < n; i++) {
		const saturn_assign_t *a = &plan->assign[v[i].a];

		if (v[i].end - v[i].start <= 0)
			continue; /* occupies no GPU time */
		for (int g = 0; g < a->gpus; g++) {
			int gid = a->gpu_ids[(size_t)v[i].j * (size_t)a->gpus + (size_t)g];

			if (holder[gid] >= 0 &&
			    hold_end[gid] > v[i].start + tol(v[i].start))
				return saturn_error_set(err, "task %.64s overlaps task %.64s on GPU %d of node %.64s (%.6g s < %.6g s)", p->tasks[v[i].t].id, p->tasks[holder[gid]].id, gid, p->nodes[v[i].n].name, v[i].start, hold_end[gid]);
			hold_end[gid] = v[i].end;
			holder[gid] = v[i].t;
		}
	}
	return 0;
}

int saturn_plan_validate(const saturn_plan_t *plan, const saturn_problem_t *p,
			 saturn_error_t *err)
{
	lookup_t lk;
	ventry_t *v = NULL;
	int *where = NULL, nodes[SATURN_MAX_TASK_NODES];
	size_t nv = 0, cap = 0;
	double latest = 0;
	int rc = -1;

	if (!plan || !p)
		return saturn_error_set(err, "no plan or problem");
	if (plan->nassign < 0 || (plan->nassign > 0 && !plan->assign))
		return saturn_error_set(err, "plan: bad assignment array");
	if (lookup_build(&lk, p, err) < 0)
		return -1;
	for (int i = 0; i < plan->nassign; i++) {
		int k = saturn_assign_nnodes(&plan->assign[i]);

		cap += k < SATURN_MAX_TASK_NODES ? (size_t)k : SATURN_MAX_TASK_NODES;
	}
	v = malloc(sizeof(*v) * (cap + 1));
	where = malloc(sizeof(*where) * ((size_t)p->ntasks + 1));
	if (!v || !where) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	for (int t = 0; t < p->ntasks; t++)
		where[t] = -1;
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];
		ventry_t *e = &v[nv];

		if (resolve_one(a, i, p, &lk, &e->t, &e->o, &e->n, err) < 0 ||
		    resolve_more(a, i, p, &lk, nodes + 1, err) < 0)
			goto out;
		nodes[0] = e->n;
		if (where[e->t] >= 0) {
			saturn_error_set(err, "task %.64s: planned twice (plan tasks[%d] and [%d])", p->tasks[e->t].id, where[e->t], i);
			goto out;
		}
		where[e->t] = i;
		e->a = i;
		e->j = 0;
		e->start = a->start_s;
		e->end = a->end_s;
		if (check_entry(plan, p, e, nodes, err) < 0)
			goto out;
		/* one sweep entry per node of the entry */
		for (int j = 1; j < saturn_assign_nnodes(a); j++) {
			v[nv + (size_t)j] = *e;
			v[nv + (size_t)j].j = j;
			v[nv + (size_t)j].n = nodes[j];
		}
		nv += (size_t)saturn_assign_nnodes(a);
		if (a->end_s > latest)
			latest = a->end_s;
	}
	for (int t = 0; t < p->ntasks; t++)
		if (where[t] < 0) {
			saturn_error_set(err, "task %.64s: missing from the plan", p->tasks[t].id);
			goto out;
		}
	if (!isfinite(plan->makespan_s) ||
	    fabs(plan->makespan_s - latest) > tol(latest)) {
		saturn_error_set(err, "plan: makespan_s %.6g s but the latest task ends at %.6g s", plan->makespan_s, latest);
		goto out;
	}
	qsort(v, nv, sizeof(*v), cmp_ventry);
	for (size_t i = 0, j; i < nv; i = j) {
		for (j = i; j < nv && v[j].n == v[i].n; j++)
			;
		if (sweep_node(plan, p, v + i, (int)(j - i), err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(v);
	free(where);
	lookup_free(&lk);
	return rc;
}

/* --- GPU id assignment --------------------------------------------------- */

typedef struct gentry {
	int a;
	int j; /* which of the entry's nodes */
	int node;
	double start;
	int gpus;
} gentry_t;

static int cmp_gentry(const void *x, const void *y)
{
	const gentry_t *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->gpus != b->gpus)
		return a->gpus > b->gpus ? -1 : 1; /* wide first: contiguity */
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->j < b->j ? -1 : a->j > b->j;
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	return a < b ? -1 : a > b;
}

/* Choose k of the free GPUs (free[g] true) into ids: the best-fitting
 * (shortest sufficient) run of consecutive free ids, else the lowest ids.
 * Returns -1 when fewer than k are free. */
static int pick_gpus(const bool *free_now, int ngpus, int k, int *ids)
{
	int best = -1, best_len = 0, nfree = 0;

	for (int g = 0; g < ngpus;) {
		int s = g;

		if (!free_now[g]) {
			g++;
			continue;
		}
		while (g < ngpus && free_now[g])
			g++;
		nfree += g - s;
		if (g - s >= k && (best < 0 || g - s < best_len)) {
			best = s;
			best_len = g - s;
		}
	}
	if (nfree < k)
		return -1;
	if (best >= 0) {
		for (int i = 0; i < k; i++)
			ids[i] = best + i;
		return 0;
	}
	for (int g = 0, i = 0; g < ngpus && i < k; g++)
		if (free_now[g])
			ids[i++] = g;
	return 0;
}

int saturn_plan_assign_gpus(saturn_plan_t *plan, const saturn_problem_t *p,
			    saturn_error_t *err)
{
	double *free_at = NULL; /* per node x GPU: time it becomes free */
	gentry_t *q = NULL;
	int nq = 0, rc = -1;
	size_t cap = 0;
	const int G = SATURN_MAX_GPUS_PER_NODE;

	if (!plan || !p)
		return saturn_error_set(err, "no plan or problem");
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];

		if (a->task >= 0 && a->task < p->ntasks && a->option >= 0 &&
		    a->option < p->tasks[a->task].noptions)
			cap += (size_t)saturn_option_nodes(&p->tasks[a->task].options[a->option]);
		else
			cap++;
	}
	free_at = calloc((size_t)p->nnodes * (size_t)G + 1, sizeof(double));
	q = malloc(sizeof(*q) * (cap + 1));
	if (!free_at || !q) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	for (int n = 0; n < p->nnodes; n++)
		for (int b = 0; b < p->nodes[n].nbusy; b++) {
			const saturn_busy_t *busy = &p->nodes[n].busy[b];

			for (int g = 0; g < busy->ngpus; g++) {
				double *f = &free_at[(size_t)n * G + busy->gpu_ids[g]];

				if (busy->until_s > *f)
					*f = busy->until_s;
			}
		}
	for (int i = 0; i < plan->nassign; i++) {
		saturn_assign_t *a = &plan->assign[i];
		const saturn_task_t *t;
		int k;

		if (a->task < 0 || a->task >= p->ntasks || a->node < 0 ||
		    a->node >= p->nnodes || a->option < 0 ||
		    a->option >= p->tasks[a->task].noptions) {
			saturn_error_set(err, "plan tasks[%d] (%.64s): not resolved against the problem", i, assign_label(a));
			goto out;
		}
		t = &p->tasks[a->task];
		a->gpus = t->options[a->option].gpus;
		k = saturn_option_nodes(&t->options[a->option]);
		if (saturn_assign_nnodes(a) != k) {
			saturn_error_set(err, "task %.64s: planned on %d nodes but its option spans %d", t->id, saturn_assign_nnodes(a), k);
			goto out;
		}
		for (int j = 0; j < k; j++) {
			int n = saturn_assign_node_at(a, j);

			if (n < 0 || n >= p->nnodes) {
				saturn_error_set(err, "plan tasks[%d] (%.64s): not resolved against the problem", i, assign_label(a));
				goto out;
			}
			if (a->gpus > p->nodes[n].gpus) {
				saturn_error_set(err, "task %.64s: needs %d GPUs, node %.64s has %d", t->id, a->gpus, p->nodes[n].name, p->nodes[n].gpus);
				goto out;
			}
		}
		if (!a->gpu_ids) {
			a->gpu_ids = calloc((size_t)a->gpus * (size_t)k, sizeof(int));
			if (!a->gpu_ids) {
				saturn_error_set(err, "out of memory");
				goto out;
			}
		}
		if (t->is_running && t->running.ngpus == a->gpus &&
		    saturn_running_nnodes(&t->running) == k) {
			int same = 1;

			for (int j = 0; j < k; j++)
				same &= saturn_running_node_at(&t->running, j) ==
					saturn_assign_node_at(a, j);
			for (int j = 0; same && j < k; j++) {
				int *ids = a->gpu_ids + (size_t)j * (size_t)a->gpus;
				int n = saturn_assign_node_at(a, j);

				memcpy(ids, t->running.gpu_ids + (size_t)j * (size_t)a->gpus,
				       sizeof(int) * (size_t)a->gpus);
				qsort(ids, (size_t)a->gpus, sizeof(int), cmp_int);
				for (int g = 0; g < a->gpus; g++) {
					double *f = &free_at[(size_t)n * G + ids[g]];

					if (a->end_s > *f)
						*f = a->end_s;
				}
			}
			if (same)
				continue;
		}
		for (int j = 0; j < k; j++) {
			q[nq].a = i;
			q[nq].j = j;
			q[nq].node = saturn_assign_node_at(a, j);
			q[nq].start = a->start_s;
			q[nq].gpus = a->gpus;
			nq++;
		}
	}
	qsort(q, (size_t)nq, sizeof(*q), cmp_gentry);
	for (int i = 0; i < nq; i++) {
		saturn_assign_t *a = &plan->assign[q[i].a];
		const saturn_node_t *node = &p->nodes[q[i].node];
		double *f = &free_at[(size_t)q[i].node * G];
		int *ids = a->gpu_ids + (size_t)q[i].j * (size_t)a->gpus;
		bool free_now[SATURN_MAX_GPUS_PER_NODE];
		bool zero = a->end_s - a->start_s <= 0;

		for (int g = 0; g < node->gpus; g++)
			free_now[g] = zero || f[g] <= a->start_s + tol(a->start_s);
		if (pick_gpus(free_now, node->gpus, a->gpus, ids) < 0) {
			int nfree = 0;

			for (int g = 0; g < node->gpus; g++)
				nfree += free_now[g];
			saturn_error_set(err, "task %.64s: node %.64s is overloaded at %.6g s (%d GPUs needed, %d free)", p->tasks[a->task].id, node->name, a->start_s, a->gpus, nfree);
			goto out;
		}
		if (zero)
			continue;
		for (int g = 0; g < a->gpus; g++)
			f[ids[g]] = a->end_s;
	}
	rc = 0;
out:
	free(free_at);
	free(q);
	return rc;
}
