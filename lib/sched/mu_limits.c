/* mu_limits.c - the users' QOS and association limits on a plan
 * (multiuser.h): checking them, and list rescheduling within them (which
 * also fills the gaps of a plan made in stages).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listsched.h"
#include "multiuser.h"

/* --- limits ------------------------------------------------------------ */

int saturn_mu_has_caps(const saturn_mu_t *m)
{
	for (int g = 0; g < m->ngroups; g++)
		if (m->max_gpus[g] > 0 || m->max_jobs[g] > 0)
			return 1;
	return 0;
}

typedef struct mu_ev {
	double t;
	int dg, dj;
} mu_ev_t;

static int cmp_ev(const void *a, const void *b)
{
	const mu_ev_t *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* ends before starts at the same time */
	return (x->dj > y->dj) - (x->dj < y->dj);
}

int saturn_mu_limits_check(const saturn_mu_t *m, const saturn_problem_t *p,
			   const saturn_plan_t *plan, saturn_error_t *err)
{
	mu_ev_t *ev = calloc((size_t)plan->nassign * 2 + 2, sizeof(*ev));

	if (!ev) {
		saturn_error_set(err, "out of memory checking the limits");
		return -1;
	}
	for (int g = 0; g < m->ngroups; g++) {
		int n = 0, gpus = 0, jobs = 0;

		if (!m->max_gpus[g] && !m->max_jobs[g])
			continue;
		for (int i = 0; i < plan->nassign; i++) {
			const saturn_assign_t *a = &plan->assign[i];
			int t = a->task >= 0 ? a->task : i, in = 0, dg;

			if (t >= m->ntasks || !(a->end_s > a->start_s))
				continue;
			for (int k = 0; k < SATURN_MU_GROUPS; k++)
				in |= m->group_of_task[t][k] == g;
			if (!in)
				continue;
			/* a task over the cap on its own cannot meet it */
			dg = m->max_gpus[g] && a->gpus > m->max_gpus[g] ? 0 : a->gpus;
			ev[n++] = (mu_ev_t){a->start_s, dg, 1};
			ev[n++] = (mu_ev_t){a->end_s, -dg, -1};
		}
		qsort(ev, (size_t)n, sizeof(*ev), cmp_ev);
		for (int i = 0; i < n; i++) {
			gpus += ev[i].dg;
			jobs += ev[i].dj;
			if ((m->max_gpus[g] && gpus > m->max_gpus[g]) ||
			    (m->max_jobs[g] && jobs > m->max_jobs[g])) {
				saturn_error_set(err,
						 "limit group %d over its caps at %.0fs: %d GPUs (cap %d), %d tasks (cap %d)",
						 g, ev[i].t, gpus, m->max_gpus[g], jobs, m->max_jobs[g]);
				free(ev);
				return -1;
			}
		}
	}
	(void)p;
	free(ev);
	return 0;
}

/* the smallest GPU cap among t's groups (0: none) */
static int task_gpu_cap(const saturn_mu_t *m, int t)
{
	int cap = 0;

	for (int k = 0; k < SATURN_MU_GROUPS; k++) {
		int g = m->group_of_task[t][k];

		if (g >= 0 && m->max_gpus[g] > 0 && (!cap || m->max_gpus[g] < cap))
			cap = m->max_gpus[g];
	}
	return cap;
}

/* a group's GPU cap applies to a task it can hold at all (as in the check) */
static int gpu_capped(const saturn_mu_t *m, int q, int g)
{
	return m->max_gpus[q] > 0 && g <= m->max_gpus[q];
}

/* earliest s >= r where every group of t has g GPUs and a task slot free
 * on [s, s + d) */
static double groups_earliest(const saturn_mu_t *m, spase_prof_t *pg, spase_prof_t *pj, int t,
			      double r, double d, int g)
{
	double s = r;

	for (int iter = 0; iter < 100000 && isfinite(s); iter++) {
		double s1 = s;

		for (int k = 0; k < SATURN_MU_GROUPS; k++) {
			int q = m->group_of_task[t][k];
			double x;

			if (q < 0)
				continue;
			if (gpu_capped(m, q, g) && (x = spase_prof_earliest(&pg[q], g, d, s1, NULL)) > s1)
				s1 = x;
			if (m->max_jobs[q] > 0 && (x = spase_prof_earliest(&pj[q], 1, d, s1, NULL)) > s1)
				s1 = x;
		}
		if (s1 == s)
			return s;
		s = s1;
	}
	return s;
}

static int groups_take(const saturn_mu_t *m, spase_prof_t *pg, spase_prof_t *pj, int t, double s,
		       double e, int g)
{
	for (int k = 0; k < SATURN_MU_GROUPS; k++) {
		int q = m->group_of_task[t][k];

		if (q < 0)
			continue;
		if (gpu_capped(m, q, g) && spase_prof_take(&pg[q], s, e, g) < 0)
			return -1;
		if (m->max_jobs[q] > 0 && spase_prof_take(&pj[q], s, e, 1) < 0)
			return -1;
	}
	return 0;
}

/* A task kept as planned (on one node or a gang) holds what its plan
 * entry holds: its GPUs on each of its nodes from pn, and its groups'
 * shares, over its planned [start, end). Returns 0 or -1 (ENOMEM). */
static int keep_planned(const saturn_mu_t *m, const saturn_problem_t *p, const saturn_assign_t *a,
			int t, spase_prof_t *pn, spase_prof_t *pg, spase_prof_t *pj)
{
	if (!isfinite(a->start_s) || !isfinite(a->end_s) || !(a->end_s > a->start_s))
		return 0;
	for (int j = 0; j < saturn_assign_nnodes(a); j++) {
		int n = saturn_assign_node_at(a, j);

		if (n >= 0 && n < p->nnodes && spase_prof_take(&pn[n], a->start_s, a->end_s, a->gpus) < 0)
			return -1;
	}
	return groups_take(m, pg, pj, t, a->start_s, a->end_s, a->gpus);
}

/* Whether node n exists and option o of task t fits it. */
static int node_fits(const saturn_problem_t *p, int t, int o, int n)
{
	return n >= 0 && n < p->nnodes && saturn_option_fits(p, t, o, n);
}

/* The nodes relist_gang() lists gang option o of task t on: those of its
 * plan entry a, into nodes[]. 1 when a has o's node count and o fits
 * each of them, else 0. */
static int gang_nodes(const saturn_problem_t *p, const saturn_assign_t *a, int t, int o,
		      int *nodes)
{
	int k = saturn_option_nodes(&p->tasks[t].options[o]);

	if (k > SATURN_MAX_TASK_NODES || saturn_assign_nnodes(a) != k)
		return 0;
	for (int j = 0; j < k; j++)
		if (!node_fits(p, t, o, nodes[j] = saturn_assign_node_at(a, j)))
			return 0;
	return 1;
}

/* Whether relist() has somewhere to list task t on option o: a gang its
 * planned nodes (gang_nodes), a one-node task its planned node or, under
 * caps, any node o fits. */
static int movable(const saturn_problem_t *p, const saturn_plan_t *plan, int t, int o, int caps)
{
	int nodes[SATURN_MAX_TASK_NODES];

	if (saturn_option_nodes(&p->tasks[t].options[o]) > 1)
		return gang_nodes(p, &plan->assign[t], t, o, nodes);
	if (node_fits(p, t, o, plan->assign[t].node))
		return 1;
	for (int n = 0; caps && n < p->nnodes; n++)
		if (node_fits(p, t, o, n))
			return 1;
	return 0;
}

/* The option relist() lists task t on: its planned one (0 when it has
 * none), or under a group's GPU cap it is over, its fastest option within
 * every cap that relist() has somewhere to list (movable(): a node that
 * fits it, a gang its planned nodes); when it has none, its own, and *over
 * counts it. (The fastest within the caps was taken whether a node could
 * hold it or not: one that none could left the task kept as planned, over
 * its cap and not counted, though a slower option within the caps fitted.) */
static int relist_option(const saturn_mu_t *m, const saturn_problem_t *p,
			 const saturn_plan_t *plan, int t, int *over)
{
	const saturn_task_t *task = &p->tasks[t];
	int o = plan->assign[t].option, cap = task_gpu_cap(m, t), alt = -1;

	if (o < 0 || o >= task->noptions)
		o = 0;
	if (!cap || task->options[o].gpus <= cap)
		return o;
	for (int q = 0; q < task->noptions; q++)
		if (task->options[q].gpus <= cap &&
		    (alt < 0 || saturn_task_runtime(task, q) < saturn_task_runtime(task, alt)) &&
		    movable(p, plan, t, q, 1))
			alt = q;
	if (alt >= 0)
		return alt;
	(*over)++;
	return o;
}

/* relist() for task t on option o of several nodes (a gang): on the
 * nodes it is planned on (movable() found them matching), at the earliest
 * time >= its release that every one of them has its GPU count free for
 * its whole run and its groups allow; the GPUs taken from pn on each node.
 * Returns 1 when moved, 0 when kept as planned (nodes that do not match,
 * which movable() keeps out, or no such time: its planned GPUs and shares
 * are taken as they stand, keep_planned()), -1 on ENOMEM.
 * (relist() placed every task on one node: a gang was refused by
 * saturn_plan_set(), reported as out of memory, and a plan with users'
 * limits and a gang failed.) */
static int relist_gang(const saturn_mu_t *m, const saturn_problem_t *p, saturn_plan_t *plan,
		       int t, int o, spase_prof_t *pn, spase_prof_t *pg, spase_prof_t *pj)
{
	const saturn_task_t *task = &p->tasks[t];
	const saturn_assign_t *a = &plan->assign[t];
	int k = saturn_option_nodes(&task->options[o]), g = task->options[o].gpus;
	int nodes[SATURN_MAX_TASK_NODES];
	double d = saturn_task_runtime(task, o), s = task->release_s;

	if (!gang_nodes(p, a, t, o, nodes))
		return keep_planned(m, p, a, t, pn, pg, pj);
	for (int iter = 0; iter < 100000 && isfinite(s); iter++) {
		double s1 = s;

		for (int j = 0; j < k; j++) {
			double x = spase_prof_earliest(&pn[nodes[j]], g, d, s1, NULL);

			if (x > s1)
				s1 = x;
		}
		s1 = groups_earliest(m, pg, pj, t, s1, d, g);
		if (s1 == s)
			break;
		s = s1;
	}
	if (!isfinite(s))
		return keep_planned(m, p, a, t, pn, pg, pj);
	if (saturn_plan_set_nodes(plan, t, p, t, o, nodes, s, NULL) < 0 ||
	    groups_take(m, pg, pj, t, s, s + d, g) < 0)
		return -1;
	for (int j = 0; j < k; j++)
		if (spase_prof_take(&pn[nodes[j]], s, s + d, g) < 0)
			return -1;
	return 1;
}

/* List scheduling of plan's tasks in their start order, each at the
 * earliest time >= its release that its node (under caps: any node that
 * fits, ties to its own) has its GPU count free for its whole run (counts
 * per node: a gap before a later task is used) and its groups allow; a gang
 * on its planned nodes (relist_gang). A task with nowhere to go (not
 * movable()) keeps its planned placement and holds its GPUs and shares
 * there from the start, as running tasks do (keep_planned): a task listed
 * before it is not moved over them. GPU ids are handed out afterwards
 * (saturn_plan_assign_gpus: counts that fit always get ids). */
static int relist(const saturn_mu_t *m, const saturn_problem_t *p, saturn_plan_t *plan,
		  saturn_error_t *err)
{
	spase_prof_t *pg = NULL, *pj = NULL, *pn = NULL;
	saturn_mu_task_at_t *ord = NULL;
	double **free_at = NULL;
	int *opt = NULL, nord = 0, over = 0, rc = -1, caps = saturn_mu_has_caps(m);

	if (plan->nassign != p->ntasks || m->ntasks != p->ntasks)
		return 0;
	pg = calloc((size_t)m->ngroups + 1, sizeof(*pg));
	pj = calloc((size_t)m->ngroups + 1, sizeof(*pj));
	pn = calloc((size_t)p->nnodes + 1, sizeof(*pn));
	ord = calloc((size_t)p->ntasks + 1, sizeof(*ord));
	opt = calloc((size_t)p->ntasks + 1, sizeof(*opt));
	free_at = spase_gpu_free_create(p);
	if (!pg || !pj || !pn || !ord || !opt || !free_at)
		goto oom;
	for (int n = 0; n < p->nnodes; n++)
		if (spase_prof_init(&pn[n], 16) < 0 ||
		    spase_prof_from_gpus(&pn[n], free_at[n], p->nodes[n].gpus) < 0)
			goto oom;
	for (int g = 0; g < m->ngroups; g++) {
		if (spase_prof_init(&pg[g], 16) < 0 || spase_prof_init(&pj[g], 16) < 0)
			goto oom;
		pg[g].t[0] = pj[g].t[0] = 0;
		pg[g].free[0] = m->max_gpus[g] > 0 ? m->max_gpus[g] : 1 << 20;
		pj[g].free[0] = m->max_jobs[g] > 0 ? m->max_jobs[g] : 1 << 20;
	}
	/* running tasks hold their share of the caps until they end, tasks
	 * with nowhere to go what they hold as planned */
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];

		if (task->is_running) {
			if (groups_take(m, pg, pj, t, 0, saturn_task_runtime(task, task->running.option),
					task->running.ngpus) < 0)
				goto oom;
			continue;
		}
		opt[t] = relist_option(m, p, plan, t, &over);
		if (movable(p, plan, t, opt[t], caps))
			ord[nord++] = (saturn_mu_task_at_t){plan->assign[t].start_s, t};
		else if (keep_planned(m, p, &plan->assign[t], t, pn, pg, pj) < 0)
			goto oom;
	}
	qsort(ord, (size_t)nord, sizeof(*ord), saturn_mu_cmp_task_at);
	for (int i = 0; i < nord; i++) {
		int t = ord[i].task, o = opt[t], best_n = -1, g;
		const saturn_task_t *task = &p->tasks[t];
		double best = INFINITY, d;

		d = saturn_task_runtime(task, o);
		g = task->options[o].gpus;
		if (saturn_option_nodes(&task->options[o]) > 1) {
			if (relist_gang(m, p, plan, t, o, pn, pg, pj) < 0)
				goto oom;
			continue;
		}
		/* its planned node first, then (under caps only: a task moved to
		 * another node could delay that node's later tasks) the others,
		 * for a strictly earlier start */
		for (int k = -1; k < (caps ? p->nnodes : 0); k++) {
			int n = k < 0 ? plan->assign[t].node : k;
			double s = task->release_s;

			if ((k >= 0 && n == plan->assign[t].node) || !node_fits(p, t, o, n))
				continue;
			for (int iter = 0; iter < 100000 && isfinite(s); iter++) {
				double s1 = spase_prof_earliest(&pn[n], g, d, s, NULL);

				s1 = groups_earliest(m, pg, pj, t, s1, d, g);
				if (s1 == s)
					break;
				s = s1;
			}
			if (s < best) {
				best = s;
				best_n = n;
			}
		}
		if (best_n < 0 || !isfinite(best)) {
			/* no finite start (a guard: movable() found a node,
			 * and every node's and group's profile frees up in
			 * the end): keep the planner's placement and what it
			 * holds */
			if (keep_planned(m, p, &plan->assign[t], t, pn, pg, pj) < 0)
				goto oom;
			continue;
		}
		if (saturn_plan_set(plan, t, p, t, o, best_n, best, NULL) < 0 ||
		    spase_prof_take(&pn[best_n], best, best + d, g) < 0 ||
		    groups_take(m, pg, pj, t, best, best + d, g) < 0)
			goto oom;
	}
	if (saturn_plan_assign_gpus(plan, p, err) < 0)
		goto out;
	spase_plan_set_makespan(plan);
	rc = over;
	goto out;
oom:
	saturn_error_set(err, "out of memory applying the users' limits");
out:
	for (int g = 0; pg && g < m->ngroups; g++)
		spase_prof_free(&pg[g]);
	for (int g = 0; pj && g < m->ngroups; g++)
		spase_prof_free(&pj[g]);
	for (int n = 0; pn && n < p->nnodes; n++)
		spase_prof_free(&pn[n]);
	free(pg);
	free(pj);
	free(pn);
	free(ord);
	free(opt);
	spase_gpu_free_destroy(free_at, p->nnodes);
	return rc;
}

int saturn_mu_apply_limits(const saturn_mu_t *m, const saturn_problem_t *p,
			   saturn_plan_t *plan, saturn_error_t *err)
{
	return saturn_mu_has_caps(m) ? relist(m, p, plan, err) : 0;
}

int saturn_mu_compact(const saturn_mu_t *m, const saturn_problem_t *p, saturn_plan_t *plan,
		      saturn_error_t *err)
{
	return relist(m, p, plan, err);
}

/* --- releases within the caps ------------------------------------------ */

/* 1 when task t (gpus GPUs) fits every group's caps with ug/uj in use */
static int release_fits(const saturn_mu_t *m, int t, int gpus, const int *ug, const int *uj)
{
	for (int k = 0; k < SATURN_MU_GROUPS; k++) {
		int g = m->group_of_task[t][k];

		if (g < 0)
			continue;
		if (m->max_jobs[g] > 0 && uj[g] + 1 > m->max_jobs[g])
			return 0;
		if (m->max_gpus[g] > 0 && gpus <= m->max_gpus[g] && ug[g] + gpus > m->max_gpus[g])
			return 0;
	}
	return 1;
}

int saturn_mu_limit_releases(const saturn_mu_t *m, const saturn_snapshot_t *s,
			     const saturn_sched_build_t *b, saturn_decision_t *d, int nd)
{
	const saturn_problem_t *p = b->problem;
	int *task_of, *ug, *uj, held = 0;

	if (!m || nd <= 0 || !saturn_mu_has_caps(m))
		return 0;
	task_of = malloc(((size_t)s->njobs + 1) * sizeof(int));
	ug = calloc((size_t)m->ngroups + 1, sizeof(int));
	uj = calloc((size_t)m->ngroups + 1, sizeof(int));
	if (!task_of || !ug || !uj) {
		free(task_of);
		free(ug);
		free(uj);
		errno = ENOMEM;
		return -1;
	}
	for (int j = 0; j < s->njobs; j++)
		task_of[j] = -1;
	/* what b's running and released tasks hold in each group */
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_snap_job_t *j = &s->jobs[b->job_of_task[t]];

		task_of[b->job_of_task[t]] = t;
		if (j->state != SATURN_SNAP_RUNNING && j->state != SATURN_SNAP_RELEASED)
			continue;
		for (int k = 0; k < SATURN_MU_GROUPS; k++) {
			int g = m->group_of_task[t][k];

			if (g >= 0) {
				ug[g] += j->gpus > 0 ? j->gpus : 0;
				uj[g]++;
			}
		}
	}
	/* due now first, then ahead of their start */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < nd; i++) {
			int t = d[i].job >= 0 && d[i].job < s->njobs ? task_of[d[i].job] : -1;

			if (!d[i].release || (pass == 0) != (d[i].start_s <= 0) || t < 0)
				continue;
			if (!release_fits(m, t, d[i].gpus, ug, uj)) {
				d[i].release = 0;
				if (d[i].start_s > 0)
					saturn_sched_reason(d[i].reason, sizeof(d[i].reason), d[i].start_s,
							    d[i].node, d[i].gpus, d[i].technique);
				else
					snprintf(d[i].reason, sizeof(d[i].reason),
						 "saturn: waits for its association or QOS limit; then %s, %d GPU%s, %s",
						 d[i].node, d[i].gpus, d[i].gpus == 1 ? "" : "s", d[i].technique);
				held++;
				continue;
			}
			for (int k = 0; k < SATURN_MU_GROUPS; k++) {
				int g = m->group_of_task[t][k];

				if (g >= 0) {
					ug[g] += d[i].gpus;
					uj[g]++;
				}
			}
		}
	free(task_of);
	free(ug);
	free(uj);
	return held;
}
