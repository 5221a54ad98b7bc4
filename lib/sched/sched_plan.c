/* sched_plan.c - the simple plans of sched/saturn and the switch rule
 * (sched_core.h): the first-come-first-served fallback plan, carrying the
 * previous plan over to this cycle, and whether a new plan replaces it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gain.h"
#include "listsched.h"
#include "planner.h"
#include "sched_core.h"

/* --- FCFS plan ------------------------------------------------------- */

/* The simple plans below (users' requests, carried plans) are built by
 * listsched.c's placement by id: Slurm picks the ids itself, and every task
 * takes the GPUs of its node that free up first. */

/* Node n's GPU free times in ascending order into sorted (the G-th is when
 * G of its GPUs are free: spase_gpu_pick()'s start). */
static void sort_free(const double *free_at, int ngpus, double *sorted)
{
	for (int g = 0; g < ngpus; g++) {
		int k = g;

		sorted[k] = free_at[g];
		for (; k > 0 && sorted[k] < sorted[k - 1]; k--) {
			double x = sorted[k];

			sorted[k] = sorted[k - 1];
			sorted[k - 1] = x;
		}
	}
}

saturn_plan_t *saturn_sched_fcfs(const saturn_problem_t *p)
{
	saturn_plan_t *plan = saturn_plan_create(p->ntasks);
	double **free_at = plan ? spase_gpu_free_create(p) : NULL;
	/* per node, its free times sorted, kept up to date after each task:
	 * comparing every option on every node picked GPUs each time, 40 s
	 * at 10,000 tasks x 24 options x 1,024 nodes */
	double *sorted = malloc(sizeof(double) * SATURN_MAX_GPUS_PER_NODE *
				(size_t)(p->nnodes ? p->nnodes : 1));

	if (!free_at || !sorted || spase_plan_pin_running(plan, p) < 0)
		goto fail;
	for (int n = 0; n < p->nnodes; n++)
		sort_free(free_at[n], p->nodes[n].gpus, sorted + (size_t)n * SATURN_MAX_GPUS_PER_NODE);
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];
		double best_end = INFINITY;
		int best_n = -1, best_o = -1, gang[SATURN_MAX_TASK_NODES], g2[SATURN_MAX_TASK_NODES];

		if (task->is_running)
			continue;
		for (int o = 0; o < task->noptions; o++) {
			int k = saturn_option_nodes(&task->options[o]);

			if (k > 1) {
				/* a gang: the k nodes of one class free first */
				double start = spase_gang_pick(free_at, p, t, o, g2), end;

				if (start < task->release_s)
					start = task->release_s;
				end = start + saturn_task_runtime(task, o);
				if (isfinite(start) && end < best_end - 1e-9) {
					best_end = end;
					best_n = g2[0];
					best_o = o;
					memcpy(gang, g2, sizeof(int) * (size_t)k);
				}
				continue;
			}
			for (int n = 0; n < p->nnodes; n++) {
				int G = task->options[o].gpus;
				double start, end;

				if (!saturn_option_fits(p, t, o, n))
					continue;
				start = sorted[(size_t)n * SATURN_MAX_GPUS_PER_NODE + (size_t)(G - 1)];
				if (start < task->release_s)
					start = task->release_s;
				end = start + saturn_task_runtime(task, o);
				if (end < best_end - 1e-9) {
					best_end = end;
					best_n = n;
					best_o = o;
				}
			}
		}
		if (best_n < 0)
			goto fail; /* saturn_problem_check guarantees a fit */
		if (saturn_option_nodes(&task->options[best_o]) == 1)
			gang[0] = best_n;
		if (spase_place_ids_nodes(free_at, plan, p, t, best_o, gang, task->release_s) < 0)
			goto fail;
		for (int j = 0; j < saturn_option_nodes(&task->options[best_o]); j++)
			sort_free(free_at[gang[j]], p->nodes[gang[j]].gpus,
				  sorted + (size_t)gang[j] * SATURN_MAX_GPUS_PER_NODE);
	}
	spase_plan_set_makespan(plan);
	snprintf(plan->method, sizeof(plan->method), "fcfs");
	snprintf(plan->status, sizeof(plan->status), "feasible");
	spase_gpu_free_destroy(free_at, p->nnodes);
	free(sorted);
	return plan;
fail:
	spase_gpu_free_destroy(free_at, p->nnodes);
	free(sorted);
	saturn_plan_destroy(plan);
	errno = ENOMEM;
	return NULL;
}

/* --- keeping or replacing the plan ---------------------------------- */

int saturn_sched_should_switch(double new_makespan_s, double old_makespan_left_s,
			       double min_gain)
{
	if (old_makespan_left_s <= 0)
		return 1;
	return saturn_gains(new_makespan_s, old_makespan_left_s, min_gain);
}

double saturn_sched_switch_gain(double carried_left_s, double expected_left_s, double min_gain)
{
	if (!(expected_left_s > 0) || !(carried_left_s > expected_left_s * (1.0 + min_gain)))
		return min_gain;
	return min_gain < SATURN_SLIPPED_GAIN ? min_gain : SATURN_SLIPPED_GAIN;
}

/* --- carrying a plan over to the next cycle -------------------------- */

/* Assignments by task id, then index (the first of equal ids first). */
static int assign_id_cmp(const void *a, const void *b, void *arg)
{
	const saturn_plan_t *prev = arg;
	int x = *(const int *)a, y = *(const int *)b;
	int c = strcmp(prev->assign[x].task_id, prev->assign[y].task_id);

	return c ? c : x - y;
}

typedef struct carry_key {
	const saturn_plan_t *prev;
	const int *from; /* per task: its assignment in prev */
} carry_key_t;

/* Tasks by planned start, then index (the order a stable sort of the tasks
 * in index order by start gives). */
static int carry_start_cmp(const void *a, const void *b, void *arg)
{
	const carry_key_t *k = arg;
	int x = *(const int *)a, y = *(const int *)b;
	double sx = k->prev->assign[k->from[x]].start_s, sy = k->prev->assign[k->from[y]].start_s;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x - y;
}

/* The first assignment of prev (by index) for task id, by binary search
 * in idx (prev's assignments with an id, sorted by assign_id_cmp), or -1.
 * Thousands of tasks: a linear search per task took a second a cycle at
 * 5,000 (issue 22). */
static int assign_of(const saturn_plan_t *prev, const int *idx, int n, const char *id)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (strcmp(prev->assign[idx[mid]].task_id, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(prev->assign[idx[lo]].task_id, id) ? idx[lo] : -1;
}

saturn_plan_t *saturn_sched_carry(const saturn_plan_t *prev, const saturn_problem_t *p)
{
	saturn_plan_t *plan;
	int *from = NULL, *order = NULL, *idx = NULL, norder = 0, nidx = 0;
	double **free_at = NULL;

	if (!prev)
		return NULL;
	plan = saturn_plan_create(p->ntasks);
	from = malloc(sizeof(int) * (size_t)(p->ntasks ? p->ntasks : 1));
	order = malloc(sizeof(int) * (size_t)(p->ntasks ? p->ntasks : 1));
	idx = malloc(sizeof(int) * (size_t)(prev->nassign > 0 ? prev->nassign : 1));
	if (!plan || !from || !order || !idx)
		goto fail;
	for (int i = 0; i < prev->nassign; i++)
		if (prev->assign[i].task_id)
			idx[nidx++] = i;
	qsort_r(idx, (size_t)nidx, sizeof(int), assign_id_cmp, (void *)prev);
	/* every task of p must be in prev (tasks that finished may be gone) */
	for (int t = 0; t < p->ntasks; t++) {
		from[t] = assign_of(prev, idx, nidx, p->tasks[t].id);
		if (from[t] < 0)
			goto fail;
	}
	/* running tasks as they are */
	if (!(free_at = spase_gpu_free_create(p)) || spase_plan_pin_running(plan, p) < 0)
		goto fail;
	for (int t = 0; t < p->ntasks; t++)
		if (!p->tasks[t].is_running)
			order[norder++] = t;
	/* the rest in their planned order, each on its planned node(s) at the
	 * earliest time its GPU count is free there: shifted right where a
	 * GPU is not free yet (an earlier task overran), left where it is
	 * free early (an earlier task ended early or is gone) */
	{
		carry_key_t key = {prev, from};

		qsort_r(order, (size_t)norder, sizeof(int), carry_start_cmp, &key);
	}
	for (int i = 0; i < norder; i++) {
		int t = order[i], o = -1, n = -1;
		const saturn_assign_t *a = &prev->assign[from[t]];
		const saturn_task_t *task = &p->tasks[t];
		double start;

		int nodes[SATURN_MAX_TASK_NODES], kn = saturn_assign_nnodes(a);

		if (kn > SATURN_MAX_TASK_NODES)
			goto fail;
		/* every planned node, by name (a gang: all of them) */
		for (int j = 0; j < kn; j++) {
			const char *nm = saturn_assign_name_at(a, j);

			nodes[j] = -1;
			for (int k = 0; nm && k < p->nnodes; k++)
				if (!strcmp(p->nodes[k].name, nm))
					nodes[j] = k;
			if (nodes[j] < 0)
				goto fail;
		}
		n = nodes[0];
		/* the option of that technique and count on the node's class
		 * (one copy per node class when partitions restrict the task):
		 * prev's option indices are of another problem, its names are
		 * what carries over */
		o = saturn_task_find_option(task, a->technique ? a->technique : "", a->gpus, kn,
					    p->nodes[n].klass ? p->nodes[n].klass : "");
		if (o >= 0 && !saturn_option_fits(p, t, o, n))
			o = -1;
		/* a gang: every node must still fit, in the first one's class
		 * and twice in none (a node that shrank under a gang made the
		 * GPU pick read and write past that node's GPUs) */
		for (int j = 1; o >= 0 && j < kn; j++) {
			if (!saturn_option_fits(p, t, o, nodes[j]) ||
			    p->nodes[nodes[j]].class_idx != p->nodes[n].class_idx)
				o = -1;
			for (int m = 0; m < j; m++)
				if (nodes[m] == nodes[j])
					o = -1;
		}
		if (o < 0 || n < 0)
			goto fail;
		/* from its release; the GPUs decide (each task takes the
		 * earliest-free ones, so no GPU frees later than with the
		 * planned starts, and no task starts later than planned) */
		start = task->release_s > 0 ? task->release_s : 0;
		/* Slurm picks the GPU ids itself: take the planned count on the
		 * planned node, the GPUs that are free earliest */
		if (spase_place_ids_nodes(free_at, plan, p, t, o, nodes, start) < 0)
			goto fail;
	}
	spase_plan_set_makespan(plan);
	/* The bound of p, not prev's: prev's was a bound from prev's origin,
	 * made a while ago, and for the remaining times known then. Copied, it
	 * stood above the carried plan's makespan as soon as the time since ate
	 * into it (a plan carried for a minute: bound 120 s, makespan 61 s),
	 * and a kept carried plan was persisted and shown like that. */
	{
		saturn_bounds_t bd;

		plan->lower_bound_s = saturn_planner_bounds_cheap(p, &bd, NULL) == 0 ? bd.best : 0;
	}
	snprintf(plan->method, sizeof(plan->method), "%s", prev->method);
	snprintf(plan->status, sizeof(plan->status), "carried");
	goto out;
fail:
	saturn_plan_destroy(plan);
	plan = NULL;
out:
	spase_gpu_free_destroy(free_at, p->nnodes);
	free(from);
	free(order);
	free(idx);
	return plan;
}
