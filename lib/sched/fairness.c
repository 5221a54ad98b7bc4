/* fairness.c - sharing the cluster between users (fairness.h): each user's
 * fair-share finish tag, and planning the users' tasks one user after the
 * other in tag order.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "listsched.h"

/* --- tags ------------------------------------------------------------- */

/* key first, so saturn_user_task_cmp() sorts an array of these */
typedef struct fair_item {
	saturn_user_task_t key;
	double submit; /* seconds from now */
	double work;   /* GPU-seconds */
} fair_item_t;

int saturn_user_task_cmp(const void *a, const void *b)
{
	const saturn_user_task_t *x = a, *y = b;
	int c;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	c = strcmp(x->batch, y->batch);
	if (c)
		return c;
	return x->task < y->task ? -1 : x->task > y->task;
}

/* The option of t with the least runtime x GPUs (its work into *w), or -1
 * (w INFINITY) when t has none. */
static int least_work_option(const saturn_task_t *t, double *w)
{
	int best = -1;

	*w = INFINITY;
	for (int o = 0; o < t->noptions; o++) {
		double x = saturn_task_runtime(t, o) * t->options[o].gpus;

		if (x < *w) {
			*w = x;
			best = o;
		}
	}
	return best;
}

double saturn_task_work(const saturn_task_t *t)
{
	double w;

	if (t->is_running)
		return saturn_task_runtime(t, t->running.option) * t->running.ngpus;
	least_work_option(t, &w);
	return isfinite(w) ? w : 0;
}

double saturn_task_work_enforced(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
				 const saturn_task_t *t)
{
	double left = j->time_limit_s, w;
	int g = 1;

	if (!(left > 0) || !isfinite(left))
		return -1;
	if (t->is_running) {
		if (j->start_time > 0 && s->now > j->start_time)
			left -= s->now - j->start_time;
		g = t->running.ngpus;
	} else {
		/* the GPUs of the option the claims make the least work */
		int o = least_work_option(t, &w);

		if (o >= 0)
			g = t->options[o].gpus;
	}
	if (left < 0)
		left = 0;
	return left * (g > 0 ? g : 1);
}

void saturn_fair_work_floors(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			     double *floor_)
{
	const saturn_problem_t *p = b->problem;
	double most = 0;
	int unbounded = 0;

	for (int t = 0; t < p->ntasks; t++) {
		floor_[t] = saturn_task_work_enforced(s, &s->jobs[b->job_of_task[t]], &p->tasks[t]);
		if (floor_[t] > most)
			most = floor_[t];
		unbounded |= floor_[t] < 0;
	}
	for (int t = 0; unbounded && t < p->ntasks; t++)
		if (floor_[t] < 0)
			floor_[t] = most;
}

double saturn_task_work_fact(const saturn_task_t *t, const double *floor_, int i)
{
	double w = saturn_task_work(t);

	return floor_ && floor_[i] > w ? floor_[i] : w;
}

typedef struct fair_batch {
	double submit, work;
	int first, n; /* items[first .. first + n) */
} fair_batch_t;

static int cmp_batch(const void *a, const void *b)
{
	const fair_batch_t *x = a, *y = b;

	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->first - y->first;
}

int saturn_fair_tags(const saturn_snapshot_t *s, const saturn_sched_build_t *b, double *tag)
{
	const saturn_problem_t *p = b->problem;
	fair_item_t *it;
	fair_batch_t *bt;
	double gpus = 0, share, *floor_;
	int nb = 0, nusers = 0;

	if (p->ntasks == 0)
		return 0;
	it = calloc((size_t)p->ntasks, sizeof(*it));
	bt = calloc((size_t)p->ntasks, sizeof(*bt));
	floor_ = calloc((size_t)p->ntasks, sizeof(*floor_));
	if (!it || !bt || !floor_) {
		free(it);
		free(bt);
		free(floor_);
		errno = ENOMEM;
		return -1;
	}
	for (int n = 0; n < p->nnodes; n++)
		gpus += p->nodes[n].gpus;
	saturn_fair_work_floors(s, b, floor_);
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_snap_job_t *j = &s->jobs[b->job_of_task[t]];

		it[t].key.uid = j->uid;
		it[t].key.batch = j->batch;
		it[t].submit = j->submit_time - s->now;
		it[t].work = saturn_task_work_fact(&p->tasks[t], floor_, t);
		it[t].key.task = t;
	}
	qsort(it, (size_t)p->ntasks, sizeof(*it), saturn_user_task_cmp);
	for (int i = 0; i < p->ntasks; i++) {
		if (i == 0 || it[i].key.uid != it[i - 1].key.uid)
			nusers++;
		if (i == 0 || it[i].key.uid != it[i - 1].key.uid ||
		    strcmp(it[i].key.batch, it[i - 1].key.batch)) {
			bt[nb].first = i;
			bt[nb].submit = it[i].submit;
			nb++;
		}
		bt[nb - 1].n++;
		bt[nb - 1].work += it[i].work;
		if (it[i].submit < bt[nb - 1].submit)
			bt[nb - 1].submit = it[i].submit;
	}
	share = gpus > 0 ? gpus / nusers : 1;
	/* per user (a run of batches), in submission order */
	for (int u0 = 0, u1; u0 < nb; u0 = u1) {
		double f = -INFINITY;

		for (u1 = u0 + 1; u1 < nb && it[bt[u1].first].key.uid == it[bt[u0].first].key.uid;
		     u1++)
			;
		qsort(bt + u0, (size_t)(u1 - u0), sizeof(*bt), cmp_batch);
		for (int k = u0; k < u1; k++)
			f = (bt[k].submit > f ? bt[k].submit : f) + bt[k].work / share;
		for (int k = u0; k < u1; k++)
			for (int i = bt[k].first; i < bt[k].first + bt[k].n; i++)
				tag[it[i].key.task] = f;
	}
	free(it);
	free(bt);
	free(floor_);
	return nusers;
}

/* --- planning in tag order ------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Hold a task's GPUs until end on each of its nnodes nodes[]: until[n][id]
 * rises to end for each of its gpus ids per node (ids node after node, as
 * saturn_running_t and saturn_assign_t keep them). */
static void hold_gpus(double **until, const int *nodes, int nnodes, int gpus, const int *ids,
		      double end)
{
	for (int j = 0; j < nnodes; j++)
		for (int g = 0; g < gpus; g++) {
			int id = ids[(size_t)j * (size_t)gpus + (size_t)g];

			if (end > until[nodes[j]][id])
				until[nodes[j]][id] = end;
		}
}

/* q: a copy of p holding only the tasks t with in[t] (in p's order, so
 * q's task i is p's map[i]), none running, and on every node a busy entry
 * per GPU g with until[n][g] > 0. NULL on ENOMEM. */
static saturn_problem_t *sub_problem(const saturn_problem_t *p, const char *in, double **until,
				     int *map)
{
	saturn_problem_t *q = saturn_problem_copy(p), *scrap = saturn_problem_create();
	saturn_task_t *tmp = NULL;
	int k = 0, nout = 0, ntasks;

	if (!q || !scrap || !(tmp = malloc(sizeof(*tmp) * (size_t)(p->ntasks + 1))))
		goto fail;
	/* tmp: the others first, then the group; the group goes back into q,
	 * scrap takes the others (and tmp) and frees them */
	ntasks = q->ntasks;
	for (int t = 0; t < ntasks; t++)
		nout += !in[t];
	for (int t = 0, o = 0; t < ntasks; t++) {
		if (in[t]) {
			map[k] = t;
			tmp[nout + k++] = q->tasks[t];
		} else {
			tmp[o++] = q->tasks[t];
		}
	}
	memcpy(q->tasks, tmp + nout, sizeof(*tmp) * (size_t)k);
	q->ntasks = k;
	scrap->tasks = tmp;
	scrap->ntasks = nout;
	scrap->cap_tasks = ntasks + 1;
	tmp = NULL;
	for (int n = 0; n < q->nnodes; n++) {
		saturn_node_t *nd = &q->nodes[n];
		saturn_busy_t *nb = realloc(nd->busy, sizeof(*nb) * (size_t)(nd->nbusy + nd->gpus));

		if (!nb)
			goto fail;
		nd->busy = nb;
		for (int g = 0; g < nd->gpus; g++) {
			saturn_busy_t *e = &nd->busy[nd->nbusy];

			if (until[n][g] <= 0)
				continue;
			if (!(e->gpu_ids = malloc(sizeof(int))))
				goto fail;
			e->ngpus = 1;
			e->gpu_ids[0] = g;
			e->until_s = until[n][g];
			nd->nbusy++;
		}
	}
	saturn_problem_destroy(scrap);
	return q;
fail:
	free(tmp);
	saturn_problem_destroy(scrap);
	saturn_problem_destroy(q);
	return NULL;
}

saturn_plan_t *saturn_fair_plan(const saturn_problem_t *p, const double *tag,
				const saturn_planner_opts_t *opts, saturn_error_t *err)
{
	saturn_plan_t *plan = saturn_plan_create(p->ntasks), *sp = NULL;
	saturn_problem_t *q = NULL;
	saturn_planner_opts_t o;
	double **until = NULL, *keys = NULL;
	char *in = NULL;
	int *map = NULL, nkeys = 0;

	if (opts)
		o = *opts;
	else
		saturn_planner_opts_init(&o);
	o.warm = NULL;
	o.stop_ratio = 0;
	keys = malloc(sizeof(double) * (size_t)(p->ntasks + 1));
	in = malloc((size_t)p->ntasks + 1);
	map = malloc(sizeof(int) * (size_t)(p->ntasks + 1));
	/* every GPU busy until its running task ends (the free-time model of
	 * the list scheduler: busy entries and running tasks) */
	until = spase_gpu_free_create(p);
	if (!plan || !keys || !in || !map || !until || spase_plan_pin_running(plan, p) < 0) {
		saturn_error_set(err, "out of memory planning by fair share");
		goto fail;
	}
	/* the busy entries stay in every sub-problem: keep only the running
	 * tasks' times in until[] */
	for (int n = 0; n < p->nnodes; n++)
		for (int g = 0; g < p->nodes[n].gpus; g++)
			until[n][g] = 0;
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];
		int kn, nodes[SATURN_MAX_TASK_NODES];

		if (!task->is_running) {
			keys[nkeys++] = tag[t];
			continue;
		}
		/* every node of a running gang (only the first was held: the
		 * stages saw its GPUs on the others free) */
		kn = saturn_running_nnodes(&task->running);
		if (kn > SATURN_MAX_TASK_NODES) {
			saturn_error_set(err, "planning by fair share: a running task on %d nodes", kn);
			goto fail;
		}
		for (int j = 0; j < kn; j++)
			nodes[j] = saturn_running_node_at(&task->running, j);
		hold_gpus(until, nodes, kn, task->running.ngpus, task->running.gpu_ids,
			  saturn_task_runtime(task, task->running.option));
	}
	qsort(keys, (size_t)nkeys, sizeof(double), cmp_double);
	{
		int d = 0;

		for (int i = 0; i < nkeys; i++)
			if (d == 0 || keys[i] != keys[d - 1])
				keys[d++] = keys[i];
		nkeys = d;
	}
	if (nkeys > 0 && o.time_limit_s > 0)
		o.time_limit_s /= nkeys;
	if (o.time_limit_s > 0 && o.time_limit_s < 0.05)
		o.time_limit_s = 0.05;
	for (int k = 0; k < nkeys; k++) {
		for (int t = 0; t < p->ntasks; t++)
			in[t] = !p->tasks[t].is_running && tag[t] == keys[k];
		if (!(q = sub_problem(p, in, until, map))) {
			saturn_error_set(err, "out of memory planning by fair share");
			goto fail;
		}
		if (saturn_problem_check(q, err) < 0 || !(sp = saturn_planner_solve(q, &o, err)))
			goto fail;
		for (int i = 0; i < sp->nassign; i++) {
			const saturn_assign_t *a = &sp->assign[i];
			int kn = saturn_assign_nnodes(a), nodes[SATURN_MAX_TASK_NODES];

			/* q has p's nodes: a gang keeps all of its nodes (it was
			 * set on its first alone, refused, and reported as out
			 * of memory) */
			if (kn > SATURN_MAX_TASK_NODES) {
				saturn_error_set(err, "planning by fair share: an entry on %d nodes", kn);
				goto fail;
			}
			for (int j = 0; j < kn; j++)
				nodes[j] = saturn_assign_node_at(a, j);
			if (saturn_plan_set_nodes(plan, map[i], p, map[i], a->option, nodes, a->start_s,
						  a->gpu_ids) < 0) {
				saturn_error_set(err, "out of memory planning by fair share");
				goto fail;
			}
			hold_gpus(until, nodes, kn, a->gpus, a->gpu_ids, a->end_s);
		}
		saturn_plan_destroy(sp);
		sp = NULL;
		saturn_problem_destroy(q);
		q = NULL;
	}
	spase_plan_set_makespan(plan);
	{
		saturn_bounds_t bd;

		plan->lower_bound_s = saturn_planner_bounds_cheap(p, &bd, NULL) == 0 ? bd.best : 0;
	}
	snprintf(plan->method, sizeof(plan->method), "share");
	snprintf(plan->status, sizeof(plan->status), "feasible");
	if (saturn_plan_validate(plan, p, err) < 0)
		goto fail;
	goto out;
fail:
	saturn_plan_destroy(plan);
	plan = NULL;
out:
	saturn_plan_destroy(sp);
	saturn_problem_destroy(q);
	spase_gpu_free_destroy(until, p->nnodes);
	free(keys);
	free(in);
	free(map);
	return plan;
}
