/* sched_decide.c - the per-job decisions of a cycle (sched_core.h): release
 * now or hold with the plan as the reason text, and which released tasks go
 * back into the hold (re-hold) and why. The plugin re-validates and applies
 * them under the write locks.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_core.h"

/* --- decisions ------------------------------------------------------- */

/* saturn_sched_reason(), with "GPUs per node" after the count when per
 * is set (a task on several nodes: node is then "2 nodes (n1,n2)"). */
static void reason_text(char *buf, size_t len, double start_s, const char *node, int gpus,
			const char *technique, int per)
{
	long s = start_s < 0 ? 0 : lround(start_s);
	char when[32];

	if (s > 7 * 86400) {
		/* behind jobs without a time limit: no meaningful ETA */
		snprintf(buf, len, "saturn: waits for GPUs held by other jobs; then %s, %d GPU%s%s, %s",
			 node, gpus, gpus == 1 ? "" : "s", per ? " per node" : "", technique);
		return;
	}
	if (s < 60)
		snprintf(when, sizeof(when), "~%lds", s);
	else if (s < 3600)
		snprintf(when, sizeof(when), "~%ldm", (s + 30) / 60);
	else
		snprintf(when, sizeof(when), "~%ldh%02ldm", s / 3600, (s % 3600) / 60);
	snprintf(buf, len, "saturn: starts in %s on %s, %d GPU%s%s, %s", when, node, gpus,
		 gpus == 1 ? "" : "s", per ? " per node" : "", technique);
}

void saturn_sched_reason(char *buf, size_t len, double start_s,
			 const char *node, int gpus, const char *technique)
{
	reason_text(buf, len, start_s, node, gpus, technique, 0);
}

/* The comma-separated node names of plan entry a into buf. 0, or -1 when
 * the list does not fit (or a name is missing). */
static int entry_nodelist(const saturn_assign_t *a, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int k = 0; k < saturn_assign_nnodes(a); k++) {
		const char *nm = saturn_assign_name_at(a, k);
		int w;

		if (!nm || !nm[0])
			return -1;
		w = snprintf(buf + used, len - used, "%s%s", k ? "," : "", nm);
		if (w < 0 || (size_t)w >= len - used)
			return -1;
		used += (size_t)w;
	}
	return 0;
}

int saturn_sched_nodelist(const saturn_plan_t *plan, const saturn_decision_t *d, char *buf,
			  size_t len)
{
	if (!len)
		return -1;
	buf[0] = '\0';
	if (!plan || d->assign < 0 || d->assign >= plan->nassign ||
	    saturn_assign_nnodes(&plan->assign[d->assign]) != (d->nnodes > 1 ? d->nnodes : 1))
		return -1;
	if (entry_nodelist(&plan->assign[d->assign], buf, len) < 0) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

/* The GPU type a decision releases with and its node's class. */
static void decision_hw(const saturn_snapshot_t *s, const saturn_snap_job_t *j, saturn_decision_t *d)
{
	int n = saturn_snapshot_node_index(s, d->node);
	const saturn_snap_node_t *nd = n >= 0 ? &s->nodes[n] : NULL;
	const char *type = saturn_release_type(j->gpu_type, nd ? nd->gpu_types : NULL);

	snprintf(d->gpu_type, sizeof(d->gpu_type), "%s", type ? type : "");
	if (nd && nd->klass[0])
		snprintf(d->klass, sizeof(d->klass), "%s", nd->klass);
	else if (nd)
		saturn_node_class(s->class_rules, nd->name, nd->gpu_types, nd->gpus, nd->link,
				  nd->features, d->klass, sizeof(d->klass));
}

/* The option of task t that plan entry a names: its own index, else (an
 * entry that does not know it) the option of its technique, GPUs and
 * nodes on its node's class. -1 when none. */
static int entry_option(const saturn_problem_t *p, int t, const saturn_assign_t *a)
{
	const saturn_task_t *task = &p->tasks[t];

	if (a->option >= 0)
		return a->option < task->noptions ? a->option : -1;
	return saturn_task_find_option(
	    task, a->technique ? a->technique : "user", a->gpus, saturn_assign_nnodes(a),
	    a->node >= 0 && a->node < p->nnodes ? p->nodes[a->node].klass : NULL);
}

/* d's identity from option o of task t (o -1: unknown). */
static void decision_identity(const saturn_problem_t *p, int t, int o, saturn_decision_t *d)
{
	const saturn_option_t *x = o >= 0 ? &p->tasks[t].options[o] : NULL;

	d->task = t;
	d->option = o;
	d->prof_opt = x && x->source ? x->prof_opt : -1;
	snprintf(d->source, sizeof(d->source), "%s", x && x->source ? x->source : "");
}

const saturn_option_t *saturn_sched_decision_option(const saturn_sched_build_t *b,
						    const saturn_decision_t *d)
{
	const saturn_task_t *t;

	if (!b || !b->problem || !d || d->task < 0 || d->task >= b->problem->ntasks)
		return NULL;
	t = &b->problem->tasks[d->task];
	return d->option >= 0 && d->option < t->noptions ? &t->options[d->option] : NULL;
}

const saturn_profile_option_t *
saturn_sched_decision_profile_option(const saturn_profile_t *pr, int task_id,
				     const saturn_decision_t *d, const saturn_profile_task_t **pt)
{
	const saturn_profile_task_t *t;
	const saturn_profile_option_t *x;

	if (pt)
		*pt = NULL;
	if (!pr || !d || d->prof_opt < 0 || !(t = saturn_profile_find(pr, task_id)) ||
	    d->prof_opt >= t->noptions)
		return NULL;
	x = &t->options[d->prof_opt];
	/* the same option, not another that a reloaded profile lists there */
	if (x->gpus != d->gpus || !x->technique || strcmp(x->technique, d->technique) ||
	    saturn_profile_option_nodes(x) != (d->nnodes > 1 ? d->nnodes : 1))
		return NULL;
	if (pt)
		*pt = t;
	return x;
}

const char *saturn_sched_decision_params(const saturn_profile_t *pr, int task_id,
					 const saturn_decision_t *d)
{
	const saturn_profile_option_t *x =
	    saturn_sched_decision_profile_option(pr, task_id, d, NULL);

	return x && x->params ? x->params : "{}";
}

int saturn_sched_decide(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			const saturn_plan_t *plan, double slack_s,
			saturn_decision_t **out)
{
	saturn_decision_t *d;
	int n = 0;

	*out = NULL;
	if (!plan || plan->nassign == 0)
		return 0;
	d = calloc((size_t)plan->nassign, sizeof(*d));
	if (!d)
		return -1;
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];
		int t = a->task >= 0 ? a->task : i, job;

		if (t < 0 || t >= b->problem->ntasks)
			continue;
		job = b->job_of_task[t];
		if (s->jobs[job].state != SATURN_SNAP_HELD)
			continue;
		d[n].job = job;
		d[n].start_s = a->start_s;
		d[n].gpus = a->gpus;
		snprintf(d[n].node, sizeof(d[n].node), "%s", a->node_name ? a->node_name : "");
		snprintf(d[n].technique, sizeof(d[n].technique), "%s", a->technique ? a->technique : "user");
		d[n].nnodes = saturn_assign_nnodes(a);
		d[n].assign = i;
		decision_identity(b->problem, t, entry_option(b->problem, t, a), &d[n]);
		decision_hw(s, &s->jobs[job], &d[n]);
		d[n].release = a->start_s <= slack_s && b->problem->tasks[t].release_s <= 0;
		if (!d[n].release && d[n].nnodes > 1) {
			char list[256], where[300];

			/* the reason is a summary: a list too long for it is left out */
			if (entry_nodelist(a, list, sizeof(list)) == 0)
				snprintf(where, sizeof(where), "%d nodes (%s)", d[n].nnodes, list);
			else
				snprintf(where, sizeof(where), "%d nodes", d[n].nnodes);
			reason_text(d[n].reason, sizeof(d[n].reason), a->start_s, where, d[n].gpus,
				    d[n].technique, 1);
		} else if (!d[n].release) {
			saturn_sched_reason(d[n].reason, sizeof(d[n].reason), a->start_s, d[n].node,
					    d[n].gpus, d[n].technique);
		}
		if (!d[n].release && s->jobs[job].charged_from > 0 &&
		    b->problem->tasks[t].release_s > 0) {
			size_t l = strlen(d[n].reason);

			snprintf(d[n].reason + l, sizeof(d[n].reason) - l, "%s",
				 SATURN_REQUEUE_NOTE);
		}
		n++;
	}
	if (!n) {
		free(d);
		return 0;
	}
	*out = d;
	return n;
}

/* Planned start, then decision index. */
static int release_cmp(const void *x, const void *y, void *arg)
{
	const saturn_decision_t *d = arg;
	int a = *(const int *)x, b = *(const int *)y;

	if (d[a].start_s != d[b].start_s)
		return d[a].start_s < d[b].start_s ? -1 : 1;
	return a - b;
}

void saturn_sched_release_order(const saturn_decision_t *d, int nd, int *order)
{
	for (int i = 0; i < nd; i++)
		order[i] = i;
	if (nd > 1)
		qsort_r(order, (size_t)nd, sizeof(int), release_cmp, (void *)d);
}

double saturn_sched_next_due(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			     const saturn_plan_t *plan, double slack_s)
{
	double next = -1;

	if (!plan)
		return -1;
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];
		int t = a->task >= 0 ? a->task : i;
		double due;

		if (t < 0 || t >= b->problem->ntasks ||
		    s->jobs[b->job_of_task[t]].state != SATURN_SNAP_HELD)
			continue;
		due = a->start_s - slack_s;
		if (b->problem->tasks[t].release_s > due)
			due = b->problem->tasks[t].release_s;
		if (due < 0)
			due = 0;
		if (next < 0 || due < next)
			next = due;
	}
	return next;
}

saturn_rehold_cause_t saturn_sched_rehold_cause(const saturn_snapshot_t *s,
						const saturn_snap_job_t *j, char *buf, size_t len)
{
	char tmp[160];

	if (!buf) {
		buf = tmp;
		len = sizeof(tmp);
	}
	buf[0] = '\0';
	if (j->state != SATURN_SNAP_RELEASED)
		return SATURN_REHOLD_NONE;
	if (j->exit_held) {
		snprintf(buf, len, "saturn: re-planning (requeued and held by its exit code)");
		return SATURN_REHOLD_REQUEUED;
	}
	if (j->requeued && j->pinned[0] && j->begin_time > s->now) {
		snprintf(buf, len, "saturn: re-planning (requeued after running on %s)", j->pinned);
		return SATURN_REHOLD_REQUEUED;
	}
	if (j->pinned[0] && (j->node < 0 || j->node >= s->nnodes)) {
		snprintf(buf, len, "saturn: re-planning (node %s %s)", j->pinned,
			 j->pinned_state[0] ? j->pinned_state : "not usable");
		return SATURN_REHOLD_NODE;
	}
	if (j->never[0]) {
		snprintf(buf, len, SATURN_NEVER_PREFIX "%s", j->never);
		return SATURN_REHOLD_NEVER;
	}
	if (!j->planned) {
		snprintf(buf, len, "saturn: re-planning (left its hold outside the plan)");
		return SATURN_REHOLD_UNPLANNED;
	}
	if (j->pinned[0] && j->released_at > 0 && s->now - j->released_at > SATURN_LATE_GRACE_S &&
	    j->bounces < SATURN_MAX_BOUNCES && saturn_snap_free_gpus(s, j->node) < j->gpus) {
		snprintf(buf, len, "saturn: re-planning (%s still busy %.0f s after its planned start)",
			 j->pinned, s->now - j->released_at);
		return SATURN_REHOLD_LATE;
	}
	return SATURN_REHOLD_NONE;
}

/* The GPU ids running job r holds on node n. */
static uint64_t running_mask_on(const saturn_snap_job_t *r, int n)
{
	uint64_t m = r->node == n ? r->gpu_mask : 0;

	for (int k = 0; k + 1 < r->nnodes && k < SATURN_SNAP_MAX_NODES - 1; k++)
		if (r->more_node[k] == n)
			m |= r->more_mask[k];
	return m;
}

int saturn_snap_free_gpus(const saturn_snapshot_t *s, int n)
{
	uint64_t used = 0;
	int g, free_ = 0;

	if (n < 0 || n >= s->nnodes)
		return 0;
	for (int i = 0; i < s->nbusy; i++)
		if (s->busy[i].node == n)
			used |= s->busy[i].gpu_mask;
	for (int i = 0; i < s->njobs; i++)
		if (s->jobs[i].state == SATURN_SNAP_RUNNING)
			used |= running_mask_on(&s->jobs[i], n);
	g = s->nodes[n].gpus < 64 ? s->nodes[n].gpus : 64;
	for (int k = 0; k < g; k++)
		free_ += !(used & (1ULL << k));
	return free_;
}

int saturn_sched_late_holders(const saturn_snapshot_t *s, const saturn_snap_job_t *j, int *out,
			      int max)
{
	int n = 0;

	if (j->node < 0 || j->node >= s->nnodes)
		return 0;
	for (int i = 0; i < s->njobs && n < max; i++)
		if (s->jobs[i].state == SATURN_SNAP_RUNNING && running_mask_on(&s->jobs[i], j->node))
			out[n++] = i;
	return n;
}

int saturn_sched_decide_rehold(const saturn_snapshot_t *s, saturn_rehold_t **out)
{
	saturn_rehold_t *r = NULL;
	int n = 0, cap = 0;

	*out = NULL;
	for (int i = 0; i < s->njobs; i++) {
		char why[160];
		saturn_rehold_cause_t c = saturn_sched_rehold_cause(s, &s->jobs[i], why, sizeof(why));

		if (c == SATURN_REHOLD_NONE)
			continue;
		if (n == cap) {
			int nc = cap ? 2 * cap : 8;
			saturn_rehold_t *nr = realloc(r, sizeof(*r) * (size_t)nc);

			if (!nr) {
				free(r);
				return -1;
			}
			r = nr;
			cap = nc;
		}
		r[n].job = i;
		r[n].cause = c;
		snprintf(r[n].reason, sizeof(r[n].reason), "%s", why);
		r[n].self_requeued = saturn_sched_self_requeued(s, &s->jobs[i]);
		n++;
	}
	*out = r;
	return n;
}

void saturn_snapshot_mark_held(saturn_snapshot_t *s, saturn_snap_job_t *j)
{
	/* it stopped its own run: charged until that run's planned end */
	if (saturn_sched_self_requeued(s, j)) {
		j->charged_from = saturn_sched_charge_from(s, j);
		j->requeued_at = s->now;
	}
	/* the credential delay Slurm set for the requeue: planned as release_s */
	if (j->requeued && j->begin_time > s->now)
		j->not_before = j->begin_time;
	j->begin_time = 0;
	j->state = SATURN_SNAP_HELD;
	j->node = -1;
	j->gpu_mask = 0;
	j->pinned[0] = '\0';
	j->pinned_state[0] = '\0';
	j->planned = 0;
	j->exit_held = 0;
	j->released_at = 0;
	snprintf(j->technique, sizeof(j->technique), "user");
	j->gpus = j->req_gpus;
}
