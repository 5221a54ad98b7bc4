/* multiuser.c - many users' batches in one plan (multiuser.h): batches,
 * weights, deadlines (fair share, stock Slurm), the objectives, planning.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
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
	free(m->work_floor);
	memset(m, 0, sizeof(*m));
}

/* Task t's work in the orderings between batches (saturn_task_work_fact). */
static double mu_work(const saturn_mu_t *m, const saturn_problem_t *p, int t)
{
	return saturn_task_work_fact(&p->tasks[t], t < m->ntasks ? m->work_floor : NULL, t);
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
	saturn_user_task_t *it = calloc((size_t)nt + 1, sizeof(*it));
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
	qsort(it, (size_t)nt, sizeof(*it), saturn_user_task_cmp);
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
	m->work_floor = calloc((size_t)nt + 1, sizeof(double));
	if (!m->work_floor) {
		saturn_mu_free(m);
		errno = ENOMEM;
		goto out;
	}
	saturn_fair_work_floors(s, b, m->work_floor);
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

static int total_gpus(const saturn_problem_t *p)
{
	int g = 0;

	for (int n = 0; n < p->nnodes; n++)
		g += p->nodes[n].gpus;
	return g;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* When user u's share of GPUs (share, rounded up) is first free of the
 * GPUs other jobs hold: busy entries and the running tasks of the other
 * users (its own count as its share). buf: G entries. */
static double share_start(const saturn_mu_t *m, const saturn_problem_t *p, int u, double share,
			  double *buf, int G)
{
	int k = 0, need;

	for (int n = 0; n < p->nnodes; n++) {
		for (int g = 0; g < p->nodes[n].gpus; g++)
			buf[k + g] = 0;
		for (int e = 0; e < p->nodes[n].nbusy; e++) {
			const saturn_busy_t *b = &p->nodes[n].busy[e];

			for (int g = 0; g < b->ngpus; g++)
				if (b->gpu_ids[g] >= 0 && b->gpu_ids[g] < p->nodes[n].gpus &&
				    b->until_s > buf[k + b->gpu_ids[g]])
					buf[k + b->gpu_ids[g]] = b->until_s;
		}
		for (int t = 0; t < p->ntasks && t < m->ntasks; t++) {
			const saturn_task_t *task = &p->tasks[t];
			double end;

			if (!task->is_running || task->running.node != n ||
			    m->user_of_batch[m->batch_of_task[t]] == u)
				continue;
			end = saturn_task_runtime(task, task->running.option);
			for (int g = 0; g < task->running.ngpus; g++)
				if (task->running.gpu_ids[g] >= 0 &&
				    task->running.gpu_ids[g] < p->nodes[n].gpus &&
				    end > buf[k + task->running.gpu_ids[g]])
					buf[k + task->running.gpu_ids[g]] = end;
		}
		k += p->nodes[n].gpus;
	}
	if (G <= 0)
		return 0;
	qsort(buf, (size_t)G, sizeof(double), cmp_dbl);
	need = (int)ceil(share - 1e-9);
	need = need < 1 ? 1 : need > G ? G : need;
	return buf[need - 1];
}

int saturn_mu_deadlines(const saturn_mu_t *m, const saturn_problem_t *p, double *dl)
{
	double *work = NULL, *wu = NULL, *fu = NULL, *buf = NULL, G, wsum = 0;
	int *order = NULL, rc = -1;

	if (m->deadline) {
		memcpy(dl, m->deadline, sizeof(double) * (size_t)m->nbatches);
		return 0;
	}
	G = total_gpus(p);
	work = calloc((size_t)m->nbatches + 1, sizeof(double));
	wu = calloc((size_t)m->nusers + 1, sizeof(double));
	fu = calloc((size_t)m->nusers + 1, sizeof(double));
	order = calloc((size_t)m->nbatches + 1, sizeof(int));
	buf = calloc((size_t)G + 1, sizeof(double));
	if (!work || !wu || !fu || !order || !buf) {
		errno = ENOMEM;
		goto out;
	}
	for (int t = 0; t < m->ntasks && t < p->ntasks; t++)
		work[m->batch_of_task[t]] += mu_work(m, p, t);
	for (int b = 0; b < m->nbatches; b++) {
		int u = m->user_of_batch[b];

		if (m->weight[b] > wu[u])
			wu[u] = m->weight[b];
		order[b] = b;
	}
	for (int u = 0; u < m->nusers; u++)
		wsum += wu[u];
	/* a user's share starts once that many GPUs are free of other jobs
	 * (running tasks are not stopped for it); before, the batches' past
	 * counts (their waiting since submission) */
	for (int u = 0; u < m->nusers; u++) {
		double st =
		    share_start(m, p, u, wsum > 0 && G > 0 ? G * wu[u] / wsum : 1, buf, (int)G);

		fu[u] = st > 0 ? st : -INFINITY;
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
	rc = 0;
out:
	free(work);
	free(wu);
	free(fu);
	free(order);
	free(buf);
	return rc;
}

typedef struct mu_sub {
	double weight;
	double submit;
	int task;
} mu_sub_t;

/* Slurm's queue order: higher priority first, then submission */
static int cmp_sub(const void *a, const void *b)
{
	const mu_sub_t *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->task - y->task;
}

int saturn_mu_cmp_task_at(const void *a, const void *b)
{
	const saturn_mu_task_at_t *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
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

		ord[t] = (mu_sub_t){m->weight[m->batch_of_task[t]], m->submit[m->batch_of_task[t]], t};
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
	/* first come, first served in Slurm's order: by priority (the
	 * batches' weights; all 1 under priority/basic), then submission */
	qsort(ord, (size_t)q->ntasks, sizeof(*ord), cmp_sub);
	for (int i = 0; i < q->ntasks; i++)
		tmp[i] = q->tasks[ord[i].task];
	memcpy(q->tasks, tmp, sizeof(*tmp) * (size_t)q->ntasks);
	if (!(plan = saturn_sched_fcfs(q)))
		goto out;
	/* Slurm holds a task its limits do not allow yet: the same caps
	 * (m's groups, in q's order of the tasks) */
	if (saturn_mu_has_caps(m)) {
		saturn_mu_t mq = *m;
		saturn_error_t e = {{0}};
		int lim;

		mq.group_of_task = calloc((size_t)q->ntasks + 1, sizeof(*mq.group_of_task));
		if (!mq.group_of_task)
			goto out;
		for (int i = 0; i < q->ntasks; i++)
			memcpy(mq.group_of_task[i], m->group_of_task[ord[i].task],
			       sizeof(mq.group_of_task[i]));
		lim = saturn_mu_apply_limits(&mq, q, plan, &e);
		free(mq.group_of_task);
		if (lim < 0)
			goto out;
	}
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
		w[b] += saturn_task_work(task);
	}
	for (int b = 0; b < m->nbatches; b++) {
		double x = G > 0 && w[b] / G > lb[b] ? w[b] / G : lb[b];

		v += m->weight[b] * (x - m->submit[b]);
	}
	free(lb);
	free(w);
	return v;
}

/* --- planning ---------------------------------------------------------- */

/* Batch order keys per task: Smith's ratio (work / weight) or deadline. */
static int order_tags(int by_deadline, const saturn_mu_t *m, const saturn_problem_t *p,
		      const double *dl, double *tag)
{
	double *work = calloc((size_t)m->nbatches + 1, sizeof(double));

	if (!work)
		return -1;
	for (int t = 0; t < p->ntasks; t++)
		work[m->batch_of_task[t]] += mu_work(m, p, t);
	for (int t = 0; t < p->ntasks; t++) {
		int b = m->batch_of_task[t];

		if (by_deadline)
			tag[t] = dl[b];
		else
			tag[t] = (m->submit[b] > 0 ? m->submit[b] : 0) + work[b] / m->weight[b];
	}
	free(work);
	return 0;
}

/* saturn_bound=stock: a copy of p whose held tasks keep only the options
 * no longer than the option their user asked for (the fastest with
 * req_gpus; tasks without it keep all), so GPUs free at least as often as
 * under stock Slurm and a batch arriving later waits no longer for them.
 * The dropped options stay allocated past noptions: turnover_free restores
 * the counts. *orig (malloc'd) gets, task after task (p's option counts),
 * the index in p of each of q's options: the plan of q names p's options
 * through it (turnover_remap). NULL when out of memory. */
static saturn_problem_t *turnover_copy(const saturn_mu_t *m, const saturn_problem_t *p, int **orig)
{
	saturn_problem_t *q = saturn_problem_copy(p);
	size_t total = 0, base = 0;

	*orig = NULL;
	for (int t = 0; q && t < q->ntasks; t++)
		total += (size_t)q->tasks[t].noptions;
	if (!q || !(*orig = malloc((total + 1) * sizeof(int)))) {
		saturn_problem_destroy(q);
		return NULL;
	}
	for (int t = 0; t < q->ntasks; t++) {
		saturn_task_t *task = &q->tasks[t];
		int want = m->req_gpus[t], k = 0, *idx = *orig + base;
		double lim = INFINITY;

		base += (size_t)task->noptions;
		for (int o = 0; o < task->noptions; o++)
			idx[o] = o;
		if (task->is_running || want <= 0)
			continue;
		for (int o = 0; o < task->noptions; o++)
			if (task->options[o].gpus == want && saturn_option_nodes(&task->options[o]) == 1 &&
			    saturn_task_runtime(task, o) < lim)
				lim = saturn_task_runtime(task, o);
		if (!isfinite(lim))
			continue;
		for (int o = 0; o < task->noptions; o++) {
			if (saturn_task_runtime(task, o) <= lim * (1 + 1e-9)) {
				saturn_option_t x = task->options[k];
				int xi = idx[k];

				task->options[k] = task->options[o];
				idx[k++] = idx[o];
				task->options[o] = x;
				idx[o] = xi;
			}
		}
		task->noptions = k;
	}
	return q;
}

static void turnover_free(saturn_problem_t *q, const saturn_problem_t *p)
{
	if (!q)
		return;
	for (int t = 0; t < q->ntasks; t++)
		q->tasks[t].noptions = p->tasks[t].noptions;
	saturn_problem_destroy(q);
}

/* Point plan's option indices (of q, a turnover_copy with its orig) at
 * p's options. */
static void turnover_remap(saturn_plan_t *plan, const saturn_problem_t *q, const int *orig,
			   const saturn_problem_t *p)
{
	size_t *base = calloc((size_t)p->ntasks + 1, sizeof(*base));

	if (!base) {
		/* never reached with a plan to remap in practice; a plan whose
		 * indices stay q's fails validation against p (reported) */
		return;
	}
	for (int t = 1; t <= p->ntasks; t++)
		base[t] = base[t - 1] + (size_t)p->tasks[t - 1].noptions;
	for (int i = 0; i < plan->nassign; i++) {
		saturn_assign_t *a = &plan->assign[i];
		int t = a->task >= 0 ? a->task : i;

		if (t >= p->ntasks || a->option < 0 || a->option >= q->tasks[t].noptions)
			continue;
		a->option = orig[base[t] + (size_t)a->option];
	}
	free(base);
}

saturn_plan_t *saturn_mu_plan(int objective, const saturn_mu_t *m, const saturn_problem_t *p,
			      const saturn_planner_opts_t *opts, saturn_error_t *err)
{
	saturn_problem_t *q = NULL;
	const saturn_problem_t *p0 = p;
	int *orig = NULL;

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
	if (objective == SATURN_FAIR_BOUNDED && m->deadline && m->req_gpus) {
		if (!(q = turnover_copy(m, p, &orig))) {
			saturn_error_set(err, "out of memory planning the batches");
			goto fail;
		}
		p = q;
	}
	/* three candidates: the budget split between them */
	if (multi && m->nbatches > 1 && o.time_limit_s > 0)
		o.time_limit_s /= 3;
	if (!(best = saturn_planner_solve(p, &o, err)))
		goto fail;
	if ((saturn_mu_has_caps(m) ? saturn_mu_compact(m, p, best, err) : 0) < 0)
		goto fail;
	/* the batches in stages: by Smith's rule (work / weight), and by
	 * deadline (the bound of bounded, else the fair-share one) */
	for (int by_deadline = 0; multi && m->nbatches > 1 && by_deadline < 2; by_deadline++) {
		saturn_error_t e2 = {{0}};

		if (order_tags(by_deadline, m, p, dl, tag) < 0) {
			saturn_error_set(err, "out of memory planning the batches");
			goto fail;
		}
		o.warm = NULL;
		cand = saturn_fair_plan(p, tag, &o, &e2);
		/* a failed stage plan leaves the others */
		if (!cand)
			continue;
		/* the stages leave gaps: compacted, no task later */
		if (saturn_mu_compact(m, p, cand, err) < 0)
			goto fail;
		snprintf(cand->method, sizeof(cand->method), "%s", by_deadline ? "deadline" : "smith");
		if (saturn_mu_better(objective, m, cand, best, dl)) {
			saturn_plan_destroy(best);
			best = cand;
		} else {
			saturn_plan_destroy(cand);
		}
		cand = NULL;
	}
	if (q)
		turnover_remap(best, q, orig, p0);
	if (saturn_plan_validate(best, p0, err) < 0 || saturn_mu_limits_check(m, p0, best, err) < 0) {
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
	turnover_free(q, p0);
	free(orig);
	free(dl);
	free(tag);
	return best;
}
