/* plancheck.c - the planner's own GPU id hand-out and capacity check.
 *
 * Ids are handed out per node in start order: running tasks keep theirs,
 * busy GPUs wait for their release, every other task takes GPUs that are
 * free at its start, a contiguous block when one exists. Since busy GPUs and
 * running tasks only occupy a GPU from time 0, this never fails when the
 * per-node capacity profile was respected. spase_check() re-checks a plan
 * independently of how it was built (each task once, option fits node,
 * release, pinned tasks, ids in range and distinct, not busy, no GPU used by
 * two tasks at once; zero-length tasks hold no GPU time, as in validate.c);
 * planner.c runs it on every plan it returns, on top of
 * saturn_plan_validate(). spase_assign_ids() is the fallback should
 * saturn_plan_assign_gpus() ever refuse a plan.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

#define TOL(x) (1e-9 * (fabs(x) > 1 ? fabs(x) : 1))

typedef struct by_start_ctx {
	const saturn_plan_t *plan;
} by_start_ctx_t;

static int by_start(const void *a, const void *b, void *arg)
{
	const by_start_ctx_t *c = arg;
	int x = *(const int *)a, y = *(const int *)b;
	const saturn_assign_t *ax = &c->plan->assign[x],
			      *ay = &c->plan->assign[y];

	if (ax->node != ay->node)
		return ax->node - ay->node;
	if (ax->start_s != ay->start_s)
		return ax->start_s < ay->start_s ? -1 : 1;
	/* Zero-length tasks before the tasks that start at the same time:
	 * they only need GPUs that no task running across that instant uses. */
	if ((ax->end_s > ax->start_s) != (ay->end_s > ay->start_s))
		return ax->end_s > ax->start_s ? 1 : -1;
	return x - y;
}

static int int_asc(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Tasks sorted by node, then start. Caller frees. */
static int *sorted_idx(const saturn_plan_t *plan)
{
	int *idx = calloc((size_t)plan->nassign + 1, sizeof(int));
	by_start_ctx_t c = {plan};

	if (!idx)
		return NULL;
	for (int i = 0; i < plan->nassign; i++)
		idx[i] = i;
	qsort_r(idx, (size_t)plan->nassign, sizeof(int), by_start, &c);
	return idx;
}

int spase_assign_ids(const spase_inst_t *in, saturn_plan_t *plan,
		     saturn_error_t *err)
{
	const saturn_problem_t *p = in->p;
	int *idx = sorted_idx(plan);
	double *fr = calloc((size_t)in->max_gpus + 1, sizeof(double));
	int cur = -1, rc = -1;

	if (!idx || !fr) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	for (int k = 0; k < plan->nassign; k++) {
		saturn_assign_t *a = &plan->assign[idx[k]];
		const saturn_task_t *st = &p->tasks[a->task];
		int G, got = 0, blk = -1;

		if (a->node != cur) {
			/* Busy GPUs only; running tasks are taken below. */
			cur = a->node;
			G = p->nodes[cur].gpus;
			for (int g = 0; g < G; g++)
				fr[g] = 0;
			for (int b = 0; b < p->nodes[cur].nbusy; b++) {
				const saturn_busy_t *bz = &p->nodes[cur].busy[b];

				for (int i = 0; i < bz->ngpus; i++)
					if (bz->until_s > fr[bz->gpu_ids[i]])
						fr[bz->gpu_ids[i]] = bz->until_s;
			}
			for (int t = 0; t < p->ntasks; t++) {
				const saturn_running_t *r = &p->tasks[t].running;

				if (!p->tasks[t].is_running || r->node != cur)
					continue;
				for (int i = 0; i < r->ngpus; i++)
					if (plan->assign[t].end_s > fr[r->gpu_ids[i]])
						fr[r->gpu_ids[i]] =
							plan->assign[t].end_s;
			}
		}
		G = p->nodes[cur].gpus;
		if (st->is_running) {
			memcpy(a->gpu_ids, st->running.gpu_ids,
			       sizeof(int) * (size_t)a->gpus);
			qsort(a->gpu_ids, (size_t)a->gpus, sizeof(int), int_asc);
			continue;
		}
		/* First contiguous block of free GPUs, else the lowest ids. */
		for (int g = 0; g + a->gpus <= G && blk < 0; g++) {
			int ok = 1;

			for (int i = 0; i < a->gpus && ok; i++)
				ok = fr[g + i] <= a->start_s + TOL(a->start_s);
			if (ok)
				blk = g;
		}
		for (int g = 0; g < G && got < a->gpus; g++) {
			if (blk >= 0 ? (g < blk || g >= blk + a->gpus)
				     : fr[g] > a->start_s + TOL(a->start_s))
				continue;
			a->gpu_ids[got++] = g;
			if (a->end_s > fr[g])
				fr[g] = a->end_s;
		}
		if (got < a->gpus) {
			saturn_error_set(err,
					 "internal: node %s has no %d free GPUs "
					 "for task %s at %.3f s",
					 p->nodes[cur].name, a->gpus, st->id,
					 a->start_s);
			goto out;
		}
	}
	rc = 0;
out:
	free(idx);
	free(fr);
	return rc;
}

static int check_one(const spase_inst_t *in, const saturn_plan_t *plan,
		     int i, saturn_error_t *err)
{
	const saturn_problem_t *p = in->p;
	const saturn_assign_t *a = &plan->assign[i];
	const saturn_task_t *st;
	const saturn_option_t *so;
	unsigned long long seen = 0;

	if (a->task != i || a->option < 0 || a->node < 0 ||
	    a->node >= p->nnodes)
		return saturn_error_set(err, "internal: assignment %d unset", i);
	st = &p->tasks[i];
	if (a->option >= st->noptions)
		return saturn_error_set(err, "internal: task %s: bad option",
					st->id);
	so = &st->options[a->option];
	if (!saturn_option_fits(p, i, a->option, a->node) ||
	    a->gpus != so->gpus)
		return saturn_error_set(err,
					"internal: task %s: option does not "
					"fit node %s",
					st->id, p->nodes[a->node].name);
	if (a->start_s < st->release_s - TOL(st->release_s) ||
	    fabs(a->end_s - a->start_s - saturn_task_runtime(st, a->option)) >
		    1e-6 * (a->end_s > 1 ? a->end_s : 1))
		return saturn_error_set(err, "internal: task %s: bad times",
					st->id);
	if (st->is_running &&
	    (a->node != st->running.node || a->option != st->running.option ||
	     a->start_s != 0))
		return saturn_error_set(err,
					"internal: running task %s moved",
					st->id);
	for (int g = 0; g < a->gpus; g++) {
		int id = a->gpu_ids[g];

		if (id < 0 || id >= p->nodes[a->node].gpus ||
		    (seen & (1ULL << id)))
			return saturn_error_set(err,
						"internal: task %s: bad GPU id",
						st->id);
		seen |= 1ULL << id;
		for (int b = 0; b < p->nodes[a->node].nbusy && !st->is_running &&
				a->end_s > a->start_s;
		     b++) {
			const saturn_busy_t *bz = &p->nodes[a->node].busy[b];

			for (int k = 0; k < bz->ngpus; k++)
				if (bz->gpu_ids[k] == id &&
				    a->start_s < bz->until_s - TOL(bz->until_s))
					return saturn_error_set(
						err,
						"internal: task %s uses busy "
						"GPU %d",
						st->id, id);
		}
	}
	return 0;
}

int spase_check(const spase_inst_t *in, const saturn_plan_t *plan,
		saturn_error_t *err)
{
	const saturn_problem_t *p = in->p;
	int *idx = NULL;
	double *last = NULL, mk = 0;
	int cur = -1, rc = -1;

	if (plan->nassign != p->ntasks)
		return saturn_error_set(err, "internal: plan has %d tasks, "
					     "problem %d",
					plan->nassign, p->ntasks);
	for (int i = 0; i < plan->nassign; i++) {
		if (check_one(in, plan, i, err) < 0)
			return -1;
		if (plan->assign[i].end_s > mk)
			mk = plan->assign[i].end_s;
	}
	if (fabs(mk - plan->makespan_s) > TOL(mk))
		return saturn_error_set(err, "internal: makespan mismatch");
	idx = sorted_idx(plan);
	last = calloc((size_t)in->max_gpus + 1, sizeof(double));
	if (!idx || !last) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	for (int k = 0; k < plan->nassign; k++) {
		const saturn_assign_t *a = &plan->assign[idx[k]];

		if (a->node != cur) {
			cur = a->node;
			for (int g = 0; g < in->max_gpus; g++)
				last[g] = 0;
		}
		/* Zero-length tasks hold no GPU time (as in validate.c). */
		for (int g = 0; g < a->gpus && a->end_s > a->start_s; g++) {
			int id = a->gpu_ids[g];

			if (last[id] > a->start_s + TOL(a->start_s)) {
				saturn_error_set(err,
						 "internal: GPU %d of node %s "
						 "used twice at %.3f s (task %s)",
						 id, p->nodes[cur].name,
						 a->start_s, a->task_id);
				goto out;
			}
			if (a->end_s > last[id])
				last[id] = a->end_s;
		}
	}
	rc = 0;
out:
	free(idx);
	free(last);
	return rc;
}
