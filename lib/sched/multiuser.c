/* multiuser.c - many users' batches in one plan (multiuser.h): batch
 * weights and deadlines, the objectives, the users' limits.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "jsonutil.h"
#include "listsched.h"
#include "multiuser.h"

const char *saturn_objective_name(int objective)
{
	switch (objective) {
	case SATURN_FAIR_SHARE:
		return "share";
	case SATURN_FAIR_WEIGHTED:
		return "weighted";
	case SATURN_FAIR_BOUNDED:
		return "bounded";
	default:
		return "makespan";
	}
}

/* --- the batches ------------------------------------------------------ */

void saturn_mu_free(saturn_mu_t *m)
{
	if (!m)
		return;
	free(m->batch_of_task);
	free(m->user_of_batch);
	free(m->weight);
	free(m->submit);
	free(m->group_of_task);
	free(m->max_gpus);
	free(m->max_jobs);
	free(m->req_gpus);
	free(m->deadline);
	memset(m, 0, sizeof(*m));
}

int saturn_mu_init(saturn_mu_t *m, int ntasks, int nbatches, int nusers, int ngroups)
{
	memset(m, 0, sizeof(*m));
	m->ntasks = ntasks;
	m->nbatches = nbatches;
	m->nusers = nusers;
	m->ngroups = ngroups;
	m->batch_of_task = calloc((size_t)ntasks + 1, sizeof(int));
	m->user_of_batch = calloc((size_t)nbatches + 1, sizeof(int));
	m->weight = calloc((size_t)nbatches + 1, sizeof(double));
	m->submit = calloc((size_t)nbatches + 1, sizeof(double));
	m->group_of_task = calloc((size_t)ntasks + 1, sizeof(*m->group_of_task));
	m->max_gpus = calloc((size_t)ngroups + 1, sizeof(int));
	m->max_jobs = calloc((size_t)ngroups + 1, sizeof(int));
	m->req_gpus = calloc((size_t)ntasks + 1, sizeof(int));
	if (!m->req_gpus || !m->batch_of_task || !m->user_of_batch || !m->weight || !m->submit ||
	    !m->group_of_task || !m->max_gpus || !m->max_jobs) {
		saturn_mu_free(m);
		errno = ENOMEM;
		return -1;
	}
	for (int b = 0; b < nbatches; b++)
		m->weight[b] = 1;
	for (int t = 0; t < ntasks; t++)
		for (int k = 0; k < SATURN_MU_GROUPS; k++)
			m->group_of_task[t][k] = -1;
	return 0;
}

typedef struct mu_item {
	long uid;
	const char *batch;
	int task;
} mu_item_t;

static int cmp_mu_item(const void *a, const void *b)
{
	const mu_item_t *x = a, *y = b;
	int c;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	c = strcmp(x->batch, y->batch);
	if (c)
		return c;
	return x->task < y->task ? -1 : x->task > y->task;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int key_index(const uint64_t *keys, int n, uint64_t k)
{
	const uint64_t *f = bsearch(&k, keys, (size_t)n, sizeof(*keys), cmp_u64);

	return f ? (int)(f - keys) : -1;
}

int saturn_mu_from_snapshot(saturn_mu_t *m, const saturn_snapshot_t *s,
			    const saturn_sched_build_t *b)
{
	const saturn_problem_t *p = b->problem;
	int nt = p->ntasks, nb = 0, nu = 0, nk = 0;
	mu_item_t *it = calloc((size_t)nt + 1, sizeof(*it));
	uint64_t *keys = calloc((size_t)nt * SATURN_SNAP_LIMITS + 1, sizeof(*keys));
	int *bt = calloc((size_t)nt + 1, sizeof(int)), *ut = calloc((size_t)nt + 1, sizeof(int));
	double *wsum = NULL;
	int *wn = NULL, *sg = NULL, *sj = NULL, *ug = NULL, *uj = NULL;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (!it || !keys || !bt || !ut)
		goto out;
	for (int t = 0; t < nt; t++) {
		const saturn_snap_job_t *j = &s->jobs[b->job_of_task[t]];

		it[t].uid = j->uid;
		it[t].batch = j->batch;
		it[t].task = t;
		for (int k = 0; k < SATURN_SNAP_LIMITS; k++)
			if (j->limits[k].key && (j->limits[k].max_gpus > 0 || j->limits[k].max_jobs > 0))
				keys[nk++] = j->limits[k].key;
	}
	qsort(it, (size_t)nt, sizeof(*it), cmp_mu_item);
	for (int i = 0; i < nt; i++) {
		if (i == 0 || it[i].uid != it[i - 1].uid)
			nu++;
		if (i == 0 || it[i].uid != it[i - 1].uid || strcmp(it[i].batch, it[i - 1].batch))
			nb++;
		bt[it[i].task] = nb - 1;
		ut[nb - 1] = nu - 1;
	}
	qsort(keys, (size_t)nk, sizeof(*keys), cmp_u64);
	{
		int d = 0;

		for (int i = 0; i < nk; i++)
			if (d == 0 || keys[i] != keys[d - 1])
				keys[d++] = keys[i];
		nk = d;
	}
	if (saturn_mu_init(m, nt, nb, nu, nk) < 0)
		goto out;
	wsum = calloc((size_t)nb + 1, sizeof(double));
	wn = calloc((size_t)nb + 1, sizeof(int));
	sg = calloc((size_t)nk + 1, sizeof(int)); /* Slurm's used counts, per group */
	sj = calloc((size_t)nk + 1, sizeof(int));
	ug = calloc((size_t)nk + 1, sizeof(int)); /* our running tasks', per group */
	uj = calloc((size_t)nk + 1, sizeof(int));
	if (!wsum || !wn || !sg || !sj || !ug || !uj) {
		saturn_mu_free(m);
		goto out;
	}
	for (int k = 0; k < nb; k++) {
		m->user_of_batch[k] = ut[k];
		m->submit[k] = INFINITY;
	}
	for (int t = 0; t < nt; t++) {
		const saturn_snap_job_t *j = &s->jobs[b->job_of_task[t]];
		const saturn_task_t *task = &p->tasks[t];
		int k = bt[t], ng = 0;

		m->batch_of_task[t] = k;
		m->req_gpus[t] = j->req_gpus;
		if (j->submit_time - s->now < m->submit[k])
			m->submit[k] = j->submit_time - s->now;
		if (j->prio > 0 && isfinite(j->prio)) {
			wsum[k] += j->prio;
			wn[k]++;
		}
		for (int l = 0; l < SATURN_SNAP_LIMITS; l++) {
			const saturn_snap_limit_t *lim = &j->limits[l];
			int g = lim->key ? key_index(keys, nk, lim->key) : -1;

			if (g < 0 || ng >= SATURN_MU_GROUPS)
				continue;
			m->group_of_task[t][ng++] = g;
			/* the tightest caps any job reports for the scope */
			if (lim->max_gpus > 0 && (!m->max_gpus[g] || lim->max_gpus < m->max_gpus[g]))
				m->max_gpus[g] = lim->max_gpus;
			if (lim->max_jobs > 0 && (!m->max_jobs[g] || lim->max_jobs < m->max_jobs[g]))
				m->max_jobs[g] = lim->max_jobs;
			if (lim->used_gpus > sg[g])
				sg[g] = lim->used_gpus;
			if (lim->used_jobs > sj[g])
				sj[g] = lim->used_jobs;
			if (task->is_running) {
				ug[g] += task->running.ngpus;
				uj[g]++;
			}
		}
	}
	for (int k = 0; k < nb; k++) {
		if (!isfinite(m->submit[k]))
			m->submit[k] = 0;
		m->weight[k] = wn[k] ? wsum[k] / wn[k] : 1;
	}
	/* what other jobs use in a scope is not ours to plan: the caps shrink
	 * by it (to at least 1: what those jobs hold frees at some point) */
	for (int g = 0; g < nk; g++) {
		int og = sg[g] > ug[g] ? sg[g] - ug[g] : 0, oj = sj[g] > uj[g] ? sj[g] - uj[g] : 0;

		if (m->max_gpus[g] > 0)
			m->max_gpus[g] = m->max_gpus[g] - og > 1 ? m->max_gpus[g] - og : 1;
		if (m->max_jobs[g] > 0)
			m->max_jobs[g] = m->max_jobs[g] - oj > 1 ? m->max_jobs[g] - oj : 1;
	}
	rc = 0;
out:
	if (rc < 0)
		errno = ENOMEM;
	free(it);
	free(keys);
	free(bt);
	free(ut);
	free(wsum);
	free(wn);
	free(sg);
	free(sj);
	free(ug);
	free(uj);
	return rc;
}

/* --- deadlines, completions, objectives -------------------------------- */

/* The least GPU-seconds task t still needs. */
static double task_work(const saturn_task_t *t)
{
	double w = INFINITY;

	if (t->is_running)
		return saturn_task_runtime(t, t->running.option) * t->running.ngpus;
	for (int o = 0; o < t->noptions; o++) {
		double x = saturn_task_runtime(t, o) * t->options[o].gpus;

		if (x < w)
			w = x;
	}
	return isfinite(w) ? w : 0;
}

static int total_gpus(const saturn_problem_t *p)
{
	int g = 0;

	for (int n = 0; n < p->nnodes; n++)
		g += p->nodes[n].gpus;
	return g;
}

int saturn_mu_deadlines(const saturn_mu_t *m, const saturn_problem_t *p, double *dl)
{
	double *work;
	double *wu, *fu, G, wsum = 0;
	int *order;

	if (m->deadline) {
		memcpy(dl, m->deadline, sizeof(double) * (size_t)m->nbatches);
		return 0;
	}
	work = calloc((size_t)m->nbatches + 1, sizeof(double));
	wu = calloc((size_t)m->nusers + 1, sizeof(double));
	fu = calloc((size_t)m->nusers + 1, sizeof(double));
	order = calloc((size_t)m->nbatches + 1, sizeof(int));
	G = total_gpus(p);

	if (!work || !wu || !fu || !order) {
		free(work);
		free(wu);
		free(fu);
		free(order);
		errno = ENOMEM;
		return -1;
	}
	for (int t = 0; t < m->ntasks && t < p->ntasks; t++)
		work[m->batch_of_task[t]] += task_work(&p->tasks[t]);
	for (int b = 0; b < m->nbatches; b++) {
		int u = m->user_of_batch[b];

		if (m->weight[b] > wu[u])
			wu[u] = m->weight[b];
		order[b] = b;
	}
	for (int u = 0; u < m->nusers; u++) {
		wsum += wu[u];
		fu[u] = -INFINITY;
	}
	/* batches by submission (insertion sort: few batches) */
	for (int i = 1; i < m->nbatches; i++)
		for (int j = i; j > 0 && m->submit[order[j]] < m->submit[order[j - 1]]; j--) {
			int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (int i = 0; i < m->nbatches; i++) {
		int b = order[i], u = m->user_of_batch[b];
		double share = wsum > 0 && G > 0 ? G * wu[u] / wsum : 1;

		fu[u] = (m->submit[b] > fu[u] ? m->submit[b] : fu[u]) + work[b] / share;
		dl[b] = fu[u];
	}
	free(work);
	free(wu);
	free(fu);
	free(order);
	return 0;
}

typedef struct mu_sub {
	double submit;
	int task;
} mu_sub_t;

static int cmp_sub(const void *a, const void *b)
{
	const mu_sub_t *x = a, *y = b;

	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->task - y->task;
}

int saturn_mu_stock_deadlines(const saturn_mu_t *m, const saturn_problem_t *p, double *dl)
{
	saturn_problem_t *q = saturn_problem_copy(p);
	mu_sub_t *ord = calloc((size_t)p->ntasks + 1, sizeof(*ord));
	saturn_task_t *tmp = calloc((size_t)p->ntasks + 1, sizeof(*tmp));
	saturn_plan_t *plan = NULL;
	int rc = -1;

	if (!q || !ord || !tmp)
		goto out;
	/* the users' requests */
	for (int t = 0; t < q->ntasks; t++) {
		saturn_task_t *task = &q->tasks[t];
		int k = 0, want = m->req_gpus ? m->req_gpus[t] : 0, has = 0;

		ord[t] = (mu_sub_t){m->submit[m->batch_of_task[t]], t};
		if (task->is_running || want <= 0)
			continue;
		for (int o = 0; o < task->noptions; o++)
			has |= task->options[o].gpus == want;
		if (!has)
			continue;
		for (int o = 0; o < task->noptions; o++) {
			if (task->options[o].gpus == want) {
				saturn_option_t x = task->options[k];

				task->options[k++] = task->options[o];
				task->options[o] = x;
			}
		}
		/* the dropped options stay allocated past noptions: freed below */
		task->noptions = k;
	}
	/* first come, first served: tasks in submission order */
	qsort(ord, (size_t)q->ntasks, sizeof(*ord), cmp_sub);
	for (int i = 0; i < q->ntasks; i++)
		tmp[i] = q->tasks[ord[i].task];
	memcpy(q->tasks, tmp, sizeof(*tmp) * (size_t)q->ntasks);
	if (!(plan = saturn_sched_fcfs(q)))
		goto out;
	for (int b = 0; b < m->nbatches; b++)
		dl[b] = 0;
	for (int i = 0; i < q->ntasks; i++) {
		int b = m->batch_of_task[ord[i].task];

		if (plan->assign[i].end_s > dl[b])
			dl[b] = plan->assign[i].end_s;
	}
	rc = 0;
out:
	/* restore the option counts so that destroy frees every option */
	if (q)
		for (int i = 0; i < q->ntasks; i++)
			q->tasks[i].noptions = p->tasks[ord ? ord[i].task : i].noptions;
	saturn_plan_destroy(plan);
	saturn_problem_destroy(q);
	free(ord);
	free(tmp);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

void saturn_mu_completions(const saturn_mu_t *m, const saturn_plan_t *plan, double *c)
{
	for (int b = 0; b < m->nbatches; b++)
		c[b] = 0;
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];
		int t = a->task >= 0 ? a->task : i;

		if (t < m->ntasks && a->end_s > c[m->batch_of_task[t]])
			c[m->batch_of_task[t]] = a->end_s;
	}
}

static double stretch(const saturn_mu_t *m, const double *c, const double *dl)
{
	double worst = 0;

	for (int b = 0; b < m->nbatches; b++) {
		double den = dl[b] - m->submit[b], x;

		if (!(den > 1e-9))
			den = 1e-9;
		x = (c[b] - m->submit[b]) / den;
		if (x > worst)
			worst = x;
	}
	return worst;
}

double saturn_mu_value(int objective, const saturn_mu_t *m, const saturn_plan_t *plan,
		       const double *dl)
{
	double *c, v = 0;

	if (objective != SATURN_FAIR_WEIGHTED && objective != SATURN_FAIR_BOUNDED)
		return plan->makespan_s;
	if (objective == SATURN_FAIR_BOUNDED && !dl)
		return plan->makespan_s;
	c = calloc((size_t)m->nbatches + 1, sizeof(double));
	if (!c)
		return plan->makespan_s;
	saturn_mu_completions(m, plan, c);
	if (objective == SATURN_FAIR_WEIGHTED)
		for (int b = 0; b < m->nbatches; b++)
			v += m->weight[b] * (c[b] - m->submit[b]);
	else
		v = stretch(m, c, dl);
	free(c);
	return v;
}

int saturn_mu_better(int objective, const saturn_mu_t *m, const saturn_plan_t *a,
		     const saturn_plan_t *b, const double *dl)
{
	if (objective == SATURN_FAIR_BOUNDED && dl) {
		double sa = saturn_mu_value(objective, m, a, dl);
		double sb = saturn_mu_value(objective, m, b, dl);

		/* both within the bound, or equally over it: the makespan */
		if ((sa <= 1 + 1e-9 && sb <= 1 + 1e-9) || fabs(sa - sb) <= 1e-6 * (sa > sb ? sa : sb))
			return a->makespan_s < b->makespan_s;
		return sa < sb;
	}
	return saturn_mu_value(objective, m, a, dl) < saturn_mu_value(objective, m, b, dl);
}

double saturn_mu_weighted_bound(const saturn_mu_t *m, const saturn_problem_t *p)
{
	double *lb = calloc((size_t)m->nbatches + 1, sizeof(double));
	double *w = calloc((size_t)m->nbatches + 1, sizeof(double));
	double G = total_gpus(p), v = 0;

	if (!lb || !w) {
		free(lb);
		free(w);
		return -1;
	}
	for (int t = 0; t < m->ntasks && t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];
		double fast = INFINITY;
		int b = m->batch_of_task[t];

		if (task->is_running)
			fast = saturn_task_runtime(task, task->running.option);
		else
			for (int o = 0; o < task->noptions; o++)
				if (saturn_task_runtime(task, o) < fast)
					fast = saturn_task_runtime(task, o);
		if (isfinite(fast) && task->release_s + fast > lb[b])
			lb[b] = task->release_s + fast;
		w[b] += task_work(task);
	}
	for (int b = 0; b < m->nbatches; b++) {
		double x = G > 0 && w[b] / G > lb[b] ? w[b] / G : lb[b];

		v += m->weight[b] * (x - m->submit[b]);
	}
	free(lb);
	free(w);
	return v;
}

/* --- limits ------------------------------------------------------------ */

static int has_caps(const saturn_mu_t *m)
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

typedef struct mu_order {
	double start;
	int task;
} mu_order_t;

static int cmp_order(const void *a, const void *b)
{
	const mu_order_t *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->task - y->task;
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

/* List scheduling of plan's tasks in their start order, each at the
 * earliest time >= its release that its node (under caps: any node that
 * fits, ties to its own) has its GPU count free for its whole run (counts
 * per node: a gap before a later task is used) and its groups allow. GPU ids are handed out afterwards
 * (saturn_plan_assign_gpus: counts that fit always get ids). */
static int relist(const saturn_mu_t *m, const saturn_problem_t *p, saturn_plan_t *plan,
		  saturn_error_t *err)
{
	spase_prof_t *pg = NULL, *pj = NULL, *pn = NULL;
	mu_order_t *ord = NULL;
	double **free_at = NULL;
	int nord = 0, over = 0, rc = -1, caps = has_caps(m);

	if (plan->nassign != p->ntasks || m->ntasks != p->ntasks)
		return 0;
	pg = calloc((size_t)m->ngroups + 1, sizeof(*pg));
	pj = calloc((size_t)m->ngroups + 1, sizeof(*pj));
	pn = calloc((size_t)p->nnodes + 1, sizeof(*pn));
	ord = calloc((size_t)p->ntasks + 1, sizeof(*ord));
	free_at = spase_gpu_free_create(p);
	if (!pg || !pj || !pn || !ord || !free_at)
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
	/* running tasks hold their share of the caps until they end */
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];

		if (!task->is_running) {
			ord[nord++] = (mu_order_t){plan->assign[t].start_s, t};
			continue;
		}
		if (groups_take(m, pg, pj, t, 0, saturn_task_runtime(task, task->running.option),
				task->running.ngpus) < 0)
			goto oom;
	}
	qsort(ord, (size_t)nord, sizeof(*ord), cmp_order);
	for (int i = 0; i < nord; i++) {
		int t = ord[i].task, o = plan->assign[t].option, cap = task_gpu_cap(m, t);
		int best_n = -1, g;
		const saturn_task_t *task = &p->tasks[t];
		double best = INFINITY, d;

		if (o < 0 || o >= task->noptions)
			o = 0;
		if (cap && task->options[o].gpus > cap) {
			int alt = -1;

			for (int q = 0; q < task->noptions; q++)
				if (task->options[q].gpus <= cap &&
				    (alt < 0 || saturn_task_runtime(task, q) < saturn_task_runtime(task, alt)))
					alt = q;
			if (alt >= 0)
				o = alt;
			else
				over++;
		}
		d = saturn_task_runtime(task, o);
		g = task->options[o].gpus;
		/* its planned node first, then (under caps only: a task moved to
		 * another node could delay that node's later tasks) the others,
		 * for a strictly earlier start */
		for (int k = -1; k < (caps ? p->nnodes : 0); k++) {
			int n = k < 0 ? plan->assign[t].node : k;
			double s = task->release_s;

			if (n < 0 || n >= p->nnodes || (k >= 0 && n == plan->assign[t].node) ||
			    g > p->nodes[n].gpus || !saturn_option_fits(p, t, o, n))
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
		if (best_n < 0 || !isfinite(best))
			continue; /* nowhere else to go: keep the planner's placement */
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
	spase_gpu_free_destroy(free_at, p->nnodes);
	return rc;
}

int saturn_mu_apply_limits(const saturn_mu_t *m, const saturn_problem_t *p,
			   saturn_plan_t *plan, saturn_error_t *err)
{
	return has_caps(m) ? relist(m, p, plan, err) : 0;
}

int saturn_mu_compact(const saturn_mu_t *m, const saturn_problem_t *p, saturn_plan_t *plan,
		      saturn_error_t *err)
{
	return relist(m, p, plan, err);
}

/* --- planning ---------------------------------------------------------- */

/* Batch order keys per task: Smith's ratio (work / weight) or deadline. */
static int order_tags(int objective, const saturn_mu_t *m, const saturn_problem_t *p,
		      const double *dl, double *tag)
{
	double *work = calloc((size_t)m->nbatches + 1, sizeof(double));

	if (!work)
		return -1;
	for (int t = 0; t < p->ntasks; t++)
		work[m->batch_of_task[t]] += task_work(&p->tasks[t]);
	for (int t = 0; t < p->ntasks; t++) {
		int b = m->batch_of_task[t];

		if (objective == SATURN_FAIR_BOUNDED)
			tag[t] = dl[b];
		else
			tag[t] = (m->submit[b] > 0 ? m->submit[b] : 0) + work[b] / m->weight[b];
	}
	free(work);
	return 0;
}

saturn_plan_t *saturn_mu_plan(int objective, const saturn_mu_t *m, const saturn_problem_t *p,
			      const saturn_planner_opts_t *opts, saturn_error_t *err)
{
	saturn_planner_opts_t o;
	saturn_plan_t *best = NULL, *cand = NULL;
	double *dl = calloc((size_t)m->nbatches + 1, sizeof(double));
	double *tag = calloc((size_t)p->ntasks + 1, sizeof(double));
	int multi = objective == SATURN_FAIR_WEIGHTED || objective == SATURN_FAIR_BOUNDED;

	if (opts)
		o = *opts;
	else
		saturn_planner_opts_init(&o);
	if (!dl || !tag || saturn_mu_deadlines(m, p, dl) < 0) {
		saturn_error_set(err, "out of memory planning the batches");
		goto fail;
	}
	if (multi && m->nbatches > 1 && o.time_limit_s > 0)
		o.time_limit_s /= 2;
	if (!(best = saturn_planner_solve(p, &o, err)))
		goto fail;
	if ((has_caps(m) ? saturn_mu_compact(m, p, best, err) : 0) < 0)
		goto fail;
	if (multi && m->nbatches > 1) {
		saturn_error_t e2 = {{0}};

		if (order_tags(objective, m, p, dl, tag) < 0) {
			saturn_error_set(err, "out of memory planning the batches");
			goto fail;
		}
		o.warm = NULL;
		cand = saturn_fair_plan(p, tag, &o, &e2);
		/* a failed stage plan leaves the joint one */
		if (cand) {
			/* the stages leave gaps: compacted, no task later */
			if (saturn_mu_compact(m, p, cand, err) < 0)
				goto fail;
			snprintf(cand->method, sizeof(cand->method), "%s",
				 objective == SATURN_FAIR_BOUNDED ? "deadline" : "smith");
			if (saturn_mu_better(objective, m, cand, best, dl)) {
				saturn_plan_destroy(best);
				best = cand;
				cand = NULL;
			}
		}
	}
	if (saturn_plan_validate(best, p, err) < 0 || saturn_mu_limits_check(m, p, best, err) < 0) {
		/* limits a task cannot meet on its own are not checked; anything
		 * else is a bug reported, never a wrong plan */
		goto fail;
	}
	goto out;
fail:
	saturn_plan_destroy(best);
	best = NULL;
out:
	saturn_plan_destroy(cand);
	free(dl);
	free(tag);
	return best;
}

/* --- batches in saturn-problem/1 --------------------------------------- */

#define MU_MAX_BATCHES 10000

typedef struct mu_id {
	const char *id;
	int task;
} mu_id_t;

static int cmp_id(const void *a, const void *b)
{
	return strcmp(((const mu_id_t *)a)->id, ((const mu_id_t *)b)->id);
}

int saturn_mu_parse(const char *buf, size_t len, const saturn_problem_t *p, saturn_mu_t *m,
		    saturn_error_t *err)
{
	json_object *root = sj_parse(buf, len, err), *arr;
	mu_id_t *ids = NULL;
	char **users = NULL, **names = NULL;
	int *ucap_g = NULL, *ucap_j = NULL, nb = 0, nu = 0, rc = -1, rest = 0;
	size_t n;

	memset(m, 0, sizeof(*m));
	if (!root)
		return -1;
	if (sj_get(root, "", "batches", false, json_type_array, &arr, err) < 0)
		goto out;
	if (!arr) {
		rc = saturn_mu_init(m, p->ntasks, 1, 1, 0) < 0 ?
			     saturn_error_set(err, "out of memory") :
			     0;
		goto out;
	}
	n = json_object_array_length(arr);
	if (n > MU_MAX_BATCHES) {
		saturn_error_set(err, "batches: more than %d batches", MU_MAX_BATCHES);
		goto out;
	}
	ids = calloc((size_t)p->ntasks + 1, sizeof(*ids));
	users = calloc(n + 2, sizeof(char *));
	names = calloc(n + 2, sizeof(char *));
	ucap_g = calloc(n + 2, sizeof(int));
	ucap_j = calloc(n + 2, sizeof(int));
	if (!ids || !users || !names || !ucap_g || !ucap_j ||
	    saturn_mu_init(m, p->ntasks, (int)n + 1, (int)n + 1, (int)n + 1) < 0) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	for (int t = 0; t < p->ntasks; t++) {
		ids[t].id = p->tasks[t].id;
		ids[t].task = t;
		m->batch_of_task[t] = -1;
	}
	qsort(ids, (size_t)p->ntasks, sizeof(*ids), cmp_id);
	for (size_t i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(arr, i), *tasks;
		char ctx[48], *user = NULL;
		double w = 1, sub = 0;
		int mg = 0, mj = 0, rg = 0, u;

		snprintf(ctx, sizeof(ctx), "batches[%zu]", i);
		if (!json_object_is_type(b, json_type_object)) {
			saturn_error_set(err, "%s: must be an object", ctx);
			goto out;
		}
		if (sj_str(b, ctx, "name", true, true, SATURN_BATCH_NAME_MAX, &names[i], err) < 0 ||
		    sj_str(b, ctx, "user", false, true, SATURN_BATCH_NAME_MAX, &user, err) < 0 ||
		    sj_num(b, ctx, "weight", false, 0, true, &w, err) < 0 ||
		    sj_num(b, ctx, "submit_s", false, -1e12, false, &sub, err) < 0 ||
		    sj_int(b, ctx, "max_gpus", false, 0, 1000000, &mg, err) < 0 ||
		    sj_int(b, ctx, "max_jobs", false, 0, 1000000, &mj, err) < 0 ||
		    sj_int(b, ctx, "request_gpus", false, 0, SATURN_MAX_GPUS_PER_NODE, &rg, err) < 0 ||
		    sj_get(b, ctx, "tasks", true, json_type_array, &tasks, err) < 0) {
			free(user);
			goto out;
		}
		for (size_t k = 0; k < i; k++)
			if (!strcmp(names[k], names[i])) {
				saturn_error_set(err, "%s.name: \"%s\" is batches[%zu]'s name too", ctx,
						 names[i], k);
				free(user);
				goto out;
			}
		if (!user && !(user = strdup(names[i]))) {
			saturn_error_set(err, "out of memory");
			goto out;
		}
		for (u = 0; u < nu && strcmp(users[u], user); u++)
			;
		if (u == nu)
			users[nu++] = user;
		else
			free(user);
		if (mg && (!ucap_g[u] || mg < ucap_g[u]))
			ucap_g[u] = mg;
		if (mj && (!ucap_j[u] || mj < ucap_j[u]))
			ucap_j[u] = mj;
		m->weight[nb] = w;
		m->submit[nb] = sub;
		m->user_of_batch[nb] = u;
		for (size_t k = 0; k < json_object_array_length(tasks); k++) {
			json_object *v = json_object_array_get_idx(tasks, k);
			mu_id_t key = {json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL, 0}, *f;

			if (!key.id) {
				saturn_error_set(err, "%s.tasks[%zu]: must be a task id (a string)", ctx, k);
				goto out;
			}
			f = bsearch(&key, ids, (size_t)p->ntasks, sizeof(*ids), cmp_id);
			if (!f) {
				saturn_error_set(err, "%s.tasks[%zu]: no task \"%.64s\" in the problem", ctx, k, key.id);
				goto out;
			}
			if (m->batch_of_task[f->task] >= 0) {
				saturn_error_set(err, "%s.tasks[%zu]: task \"%.64s\" is in two batches", ctx, k, key.id);
				goto out;
			}
			m->batch_of_task[f->task] = nb;
			m->req_gpus[f->task] = rg;
		}
		nb++;
	}
	/* the rest: one batch of its own user */
	for (int t = 0; t < p->ntasks; t++)
		if (m->batch_of_task[t] < 0) {
			m->batch_of_task[t] = nb;
			rest = 1;
		}
	if (rest) {
		m->user_of_batch[nb] = nu++;
		nb++;
	}
	m->nbatches = nb;
	m->nusers = nu;
	/* one limit group per user with a cap */
	m->ngroups = 0;
	for (int u = 0; u < nu; u++) {
		if (!ucap_g[u] && !ucap_j[u])
			continue;
		m->max_gpus[m->ngroups] = ucap_g[u];
		m->max_jobs[m->ngroups] = ucap_j[u];
		for (int t = 0; t < p->ntasks; t++)
			if (m->user_of_batch[m->batch_of_task[t]] == u)
				m->group_of_task[t][0] = m->ngroups;
		m->ngroups++;
	}
	rc = 1;
out:
	if (rc < 0)
		saturn_mu_free(m);
	for (size_t i = 0; users && i < n + 2; i++)
		free(users[i]);
	for (size_t i = 0; names && i < n + 2; i++)
		free(names[i]);
	free(users);
	free(names);
	free(ucap_g);
	free(ucap_j);
	free(ids);
	json_object_put(root);
	return rc;
}
