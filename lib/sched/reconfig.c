/* reconfig.c - restart running tasks with another option when the batch
 * ends sooner for it (reconfig.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gain.h"
#include "feedback.h"
#include "idset.h"
#include "multiuser.h"
#include "reconfig.h"

void saturn_reconfig_settings_init(saturn_reconfig_settings_t *rs)
{
	saturn_sched_settings_t s;

	saturn_sched_settings_init(&s); /* allocates nothing */
	*rs = s.reconfig;
}

static int listed(const char *list, int code)
{
	int *ids = NULL, n, hit = 0;

	if (!list || !list[0])
		return 0;
	n = saturn_idset_parse(NULL, list, 255, 256, &ids, NULL);
	for (int i = 0; i < n; i++)
		hit |= ids[i] == code;
	free(ids);
	return hit;
}

int saturn_reconfig_requeues(const char *requeue_exit, const char *requeue_exit_hold, int code)
{
	return listed(requeue_exit, code) || listed(requeue_exit_hold, code);
}

double saturn_reconfig_restart_cost(const saturn_reconfig_settings_t *rs)
{
	return rs->checkpoint_s + rs->requeue_delay_s + rs->startup_s;
}

int saturn_reconfig_eligible(const saturn_snap_job_t *j, const saturn_reconfig_settings_t *rs,
			     char *why, size_t len)
{
	const char *no = NULL;
	char buf[96];

	if (j->state != SATURN_SNAP_RUNNING)
		no = "not running";
	else if (j->reconfigure < 0 || (j->reconfigure == 0 && !rs->default_on))
		no = "not opted in (--saturn-reconfigure)";
	else if (j->nnodes > 1)
		no = "runs on several nodes (restarting a multi-node task is not supported)";
	else if (!j->requeue)
		no = "not requeue-able (--no-requeue or JobRequeue=0)";
	else if (j->restarts >= rs->max_restarts) {
		snprintf(buf, sizeof(buf), "restarted %d times (saturn_reconfigure_max=%d)",
			 j->restarts, rs->max_restarts);
		no = buf;
	} else if (!(j->batches_done >= 0))
		no = "no progress report (not run by saturn-run)";
	if (why && len)
		snprintf(why, len, "%s", no ? no : "");
	return no == NULL;
}

static void options_free(saturn_option_t *o, int n)
{
	for (int i = 0; i < n; i++)
		saturn_option_clear(&o[i]);
	free(o);
}

/* Largest GPU count of the problem's nodes of class klass (NULL: any). */
static int fits_nodes(const saturn_problem_t *p, const saturn_option_t *o)
{
	for (int n = 0; n < p->nnodes; n++) {
		const char *nk = p->nodes[n].klass;

		if (o->gpus > p->nodes[n].gpus)
			continue;
		if (!o->klass || (nk && !strcmp(nk, o->klass)))
			return 1;
	}
	return 0;
}

/* Remaining batches of running job j with profile task pt; -1 unknown. */
static double batches_left(const saturn_snap_job_t *j, const saturn_profile_task_t *pt)
{
	if (j->batches_left >= 0)
		return j->batches_left;
	if (j->batches_done >= 0 && pt->batches > 0)
		return pt->batches > j->batches_done ? pt->batches - j->batches_done : 0;
	return -1;
}

/* The options task t (job j, running on node klass node_class) gets when
 * free: the profile's within the model's limits, speeds as the build would
 * give a task not started yet, the one it runs with at its observed speed.
 * Returns the count (0: none usable) with *out, or -1 (ENOMEM). */
static int unpinned_options(const saturn_snapshot_t *s, const saturn_problem_t *p,
			const saturn_snap_job_t *j, const saturn_profile_task_t *pt, double left,
			const char *node_class, saturn_option_t **out)
{
	saturn_option_t *o = NULL;
	int nraw = saturn_profile_options(pt, &o), k = 0;
	/* the option it runs with, named by its technique and GPUs; o[i] is
	 * option o[i].prof_opt of pt */
	int run = saturn_profile_task_option(pt, j->technique, j->gpus, j->nnodes);

	*out = NULL;
	if (nraw < 0)
		return -1;
	for (int i = 0; i < nraw; i++) {
		double spb = o[i].sec_per_batch;
		int ok;

		if (run >= 0 && o[i].prof_opt == run && j->obs_spb > 0) {
			spb = saturn_fb_blend(spb, j->obs_spb,
					      saturn_fb_confidence(j->batches_done, pt->batches));
		} else if (s->feedback && spb > 0) {
			saturn_fb_key_t key;

			saturn_fb_key_set(&key, j->uid, j->batch, pt->signature, o[i].technique,
					  o[i].gpus, pt->klass);
			spb *= saturn_fb_correction(s->feedback, &key, NULL);
		}
		o[i].sec_per_batch = spb;
		free(o[i].klass);
		o[i].klass = NULL;
		o[i].class_idx = -1;
		ok = o[i].technique && o[i].technique[0] &&
		     strlen(o[i].technique) <= SATURN_TECHNIQUE_NAME_MAX && o[i].gpus >= 1 &&
		     o[i].gpus <= SATURN_MAX_GPUS_PER_NODE && spb > 0 && isfinite(spb) &&
		     left * spb <= SATURN_MAX_RUNTIME_S && k < SATURN_MAX_OPTIONS;
		if (ok && node_class && !(o[i].klass = strdup(node_class))) {
			/* kept 0..k-1, not looked at i..nraw-1 */
			for (int r = i; r < nraw; r++)
				saturn_option_clear(&o[r]);
			options_free(o, k);
			return -1;
		}
		if (ok && !fits_nodes(p, &o[i]))
			ok = 0;
		/* a restart lands on one node: never onto a gang */
		if (saturn_option_nodes(&o[i]) > 1)
			ok = 0;
		if (!ok) {
			saturn_option_clear(&o[i]);
			continue;
		}
		o[k++] = o[i];
	}
	if (k == 0) {
		free(o);
		return 0;
	}
	*out = o;
	return k;
}

/* Busy the GPUs of a task that checkpoints on node n until until_s. */
static int add_checkpoint_busy(saturn_node_t *n, const saturn_running_t *r, double until_s)
{
	saturn_busy_t *nb = realloc(n->busy, sizeof(*nb) * (size_t)(n->nbusy + 1));

	if (!nb)
		return -1;
	n->busy = nb;
	nb = &n->busy[n->nbusy];
	memset(nb, 0, sizeof(*nb));
	if (!(nb->gpu_ids = malloc(sizeof(int) * (size_t)r->ngpus)))
		return -1;
	memcpy(nb->gpu_ids, r->gpu_ids, sizeof(int) * (size_t)r->ngpus);
	nb->ngpus = r->ngpus;
	nb->until_s = until_s;
	n->nbusy++;
	return 0;
}

int saturn_reconfig_problem(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			    saturn_profile_lookup_fn lookup, void *arg,
			    const saturn_reconfig_settings_t *rs, char *unpinned,
			    saturn_problem_t **out, saturn_error_t *err)
{
	const saturn_problem_t *p0 = b->problem;
	saturn_problem_t *p = NULL;
	int n = 0;

	*out = NULL;
	for (int t = 0; t < p0->ntasks; t++)
		unpinned[t] = 0;
	for (int t = 0; t < p0->ntasks; t++) {
		const saturn_snap_job_t *j = &s->jobs[b->job_of_task[t]];
		const saturn_task_t *t0 = &p0->tasks[t];
		const saturn_profile_t *pr;
		const saturn_profile_task_t *pt;
		saturn_option_t *opts;
		saturn_task_t *tt;
		double left;
		int nopt;

		if (!t0->is_running || !saturn_reconfig_eligible(j, rs, NULL, 0) || !lookup)
			continue;
		if (!(pr = lookup(j->batch, j->uid, arg)))
			continue;
		if (!(pt = saturn_profile_find(pr, j->task_id >= 0 ? j->task_id : 0)))
			continue;
		left = batches_left(j, pt);
		if (!(left > 0) || !(left <= SATURN_MAX_BATCHES))
			continue;
		if (!p && !(p = saturn_problem_copy(p0)))
			goto nomem;
		nopt = unpinned_options(s, p, j, pt, left, p->nodes[t0->running.node].klass, &opts);
		if (nopt < 0)
			goto nomem;
		if (nopt == 0)
			continue;
		tt = &p->tasks[t];
		if (add_checkpoint_busy(&p->nodes[tt->running.node], &tt->running,
					rs->checkpoint_s) < 0) {
			options_free(opts, nopt);
			goto nomem;
		}
		options_free(tt->options, tt->noptions);
		tt->options = opts;
		tt->noptions = nopt;
		tt->batches = left;
		tt->is_running = false;
		free(tt->running.gpu_ids);
		memset(&tt->running, 0, sizeof(tt->running));
		tt->release_s = saturn_reconfig_restart_cost(rs);
		unpinned[t] = 1;
		n++;
	}
	if (n == 0) {
		saturn_problem_destroy(p);
		return 0;
	}
	if (saturn_problem_check(p, err) < 0) {
		saturn_problem_destroy(p);
		for (int t = 0; t < p0->ntasks; t++)
			unpinned[t] = 0;
		return -1;
	}
	*out = p;
	return n;
nomem:
	saturn_problem_destroy(p);
	for (int t = 0; t < p0->ntasks; t++)
		unpinned[t] = 0;
	return saturn_error_set(err, "out of memory building the reconfiguration problem");
}

double saturn_reconfig_stop_ratio(double need_s, double bound_s, double min_gain)
{
	double r = saturn_gain_stop_ratio(min_gain);

	if (!(bound_s > 0) || !(need_s > bound_s))
		return 0;
	if (need_s / bound_s < r)
		r = need_s / bound_s;
	return r > 1 ? r : 0;
}

void saturn_reconfig_result_free(saturn_reconfig_result_t *out)
{
	if (!out)
		return;
	free(out->choices);
	memset(out, 0, sizeof(*out));
}

/* The objective's gain of np over plan (saturn_reconfig_decide_mu): 1 with
 * out->gain_s set when it is enough, else 0 with out->why. c0, c1: the
 * batches' completions in plan and np; dl their bounds. */
static int mu_gain(int objective, const saturn_mu_t *m, const saturn_plan_t *plan,
		   const saturn_plan_t *np, const double *dl, const double *c0, const double *c1,
		   double min_gain, double margin_s, saturn_reconfig_result_t *out)
{
	double vo = out->old_value, vn = out->new_value, need = min_gain * plan->makespan_s;

	if (need < margin_s)
		need = margin_s;
	if (objective == SATURN_FAIR_WEIGHTED) {
		double wsum = 0;

		for (int k = 0; k < m->nbatches; k++)
			wsum += m->weight[k];
		out->gain_s = wsum > 0 ? (vo - vn) / wsum : 0;
		if (!saturn_gains(vn, vo, min_gain) || out->gain_s < margin_s) {
			snprintf(out->why, sizeof(out->why),
				 "weighted flow time %.0fs with task(s) restarted, %.0fs now: gain %.0fs per unit weight below saturn_min_gain %.0f%% or saturn_reconfigure_margin %.0fs",
				 vn, vo, out->gain_s, min_gain * 100, margin_s);
			return 0;
		}
		return 1;
	}
	if (vo <= 1 + 1e-9) {
		/* every batch within its bound: the makespan, bounds kept */
		if (vn > 1 + 1e-9) {
			snprintf(out->why, sizeof(out->why),
				 "restarting would take a batch past its bound (stretch %.2f)", vn);
			return 0;
		}
		out->gain_s = plan->makespan_s - np->makespan_s;
	} else {
		double l0 = -INFINITY, l1 = 0;

		for (int k = 0; k < m->nbatches; k++) {
			if (c0[k] - dl[k] > l0)
				l0 = c0[k] - dl[k];
			if (c1[k] - dl[k] > l1)
				l1 = c1[k] - dl[k];
		}
		out->gain_s = vn < vo - 1e-9 ? l0 - l1 : 0;
	}
	if (out->gain_s < need) {
		snprintf(out->why, sizeof(out->why),
			 "gain %.0fs (stretch %.2f -> %.2f, makespan %.0fs -> %.0fs) below %.0fs (saturn_min_gain %.0f%%, saturn_reconfigure_margin %.0fs)",
			 out->gain_s, vo, vn, plan->makespan_s, np->makespan_s, need, min_gain * 100,
			 margin_s);
		return 0;
	}
	return 1;
}

int saturn_reconfig_decide(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			   const saturn_plan_t *plan, saturn_profile_lookup_fn lookup, void *arg,
			   const saturn_reconfig_settings_t *rs, double min_gain,
			   const saturn_planner_opts_t *opts, saturn_reconfig_result_t *out,
			   saturn_error_t *err)
{
	return saturn_reconfig_decide_mu(s, b, plan, lookup, arg, rs, min_gain, opts, 0, NULL, out,
					 err);
}

int saturn_reconfig_decide_mu(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			      const saturn_plan_t *plan, saturn_profile_lookup_fn lookup, void *arg,
			      const saturn_reconfig_settings_t *rs, double min_gain,
			      const saturn_planner_opts_t *opts, int objective,
			      const struct saturn_mu *m, saturn_reconfig_result_t *out,
			      saturn_error_t *err)
{
	const saturn_problem_t *p0 = b->problem;
	saturn_problem_t *p = NULL;
	saturn_plan_t *np = NULL;
	double *dl = NULL, *c0 = NULL, *c1 = NULL;
	char *unpinned;
	int n, nch = 0, stopped = -1;
	int multi = m && (objective == SATURN_FAIR_WEIGHTED || objective == SATURN_FAIR_BOUNDED) &&
		    m->nbatches > 1 && m->ntasks == p0->ntasks;

	memset(out, 0, sizeof(*out));
	out->old_makespan_s = plan->makespan_s;
	if (p0->ntasks == 0 || plan->nassign != p0->ntasks) {
		snprintf(out->why, sizeof(out->why), "no plan of this problem");
		return 0;
	}
	if (!(unpinned = calloc((size_t)p0->ntasks, 1)))
		return saturn_error_set(err, "out of memory deciding reconfigurations");
	n = saturn_reconfig_problem(s, b, lookup, arg, rs, unpinned, &p, err);
	if (n <= 0) {
		free(unpinned);
		if (n == 0)
			snprintf(out->why, sizeof(out->why), "no running task qualifies");
		return n;
	}
	out->ncandidates = n;
	if (multi) {
		size_t nb = (size_t)m->nbatches + 1;

		if (!(dl = calloc(nb, sizeof(double))) || !(c0 = calloc(nb, sizeof(double))) ||
		    !(c1 = calloc(nb, sizeof(double))) || saturn_mu_deadlines(m, p0, dl) < 0) {
			saturn_error_set(err, "out of memory deciding reconfigurations");
			goto fail;
		}
		/* the candidates' plan for the objective, within the limits */
		if (!(np = saturn_mu_plan(objective, m, p, opts, err)))
			goto fail;
		out->new_makespan_s = np->makespan_s;
		out->old_value = saturn_mu_value(objective, m, plan, dl);
		out->new_value = saturn_mu_value(objective, m, np, dl);
		saturn_mu_completions(m, plan, c0);
		saturn_mu_completions(m, np, c1);
		if (!mu_gain(objective, m, plan, np, dl, c0, c1, min_gain, rs->margin_s, out))
			goto done;
		goto choose;
	}
	/* the gain needed: below both thresholds; no plan beats the bound */
	{
		double need = saturn_gain_needed(plan->makespan_s, min_gain);
		saturn_planner_opts_t o;
		saturn_bounds_t bd;

		if (plan->makespan_s - rs->margin_s < need)
			need = plan->makespan_s - rs->margin_s;
		if (saturn_planner_bounds_cheap(p, &bd, err) < 0)
			goto fail;
		if (!(bd.best < need)) {
			snprintf(out->why, sizeof(out->why),
				 "no plan can gain enough: bound %.0fs with %d task(s) restarted, %.0fs now, needs below %.0fs (saturn_min_gain %.0f%%, saturn_reconfigure_margin %.0fs)",
				 bd.best, n, plan->makespan_s, need, min_gain * 100, rs->margin_s);
			goto done;
		}
		/* Every second of search is a second the freed GPUs wait for
		 * the restart: stop at a plan within reconfig_stop_ratio of the
		 * bound, which gains enough by construction (see there). */
		if (opts)
			o = *opts;
		else
			saturn_planner_opts_init(&o);
		if (!(o.stop_ratio >= 1))
			o.stop_ratio = saturn_reconfig_stop_ratio(need, bd.best, min_gain);
		if (!(np = saturn_planner_solve(p, &o, err)))
			goto fail;
	}
	out->new_makespan_s = np->makespan_s;
	out->gain_s = plan->makespan_s - np->makespan_s;
	if (!saturn_gains(np->makespan_s, plan->makespan_s, min_gain)) {
		snprintf(out->why, sizeof(out->why),
			 "makespan %.0fs with %d task(s) restarted, %.0fs now: gain below saturn_min_gain %.0f%%",
			 np->makespan_s, n, plan->makespan_s, min_gain * 100);
		goto done;
	}
	if (out->gain_s < rs->margin_s) {
		snprintf(out->why, sizeof(out->why),
			 "gain %.0fs below saturn_reconfigure_margin %.0fs", out->gain_s,
			 rs->margin_s);
		goto done;
	}
choose:
	if (!(out->choices = calloc((size_t)n, sizeof(*out->choices)))) {
		saturn_error_set(err, "out of memory deciding reconfigurations");
		goto fail;
	}
	for (int t = 0; t < p0->ntasks; t++) {
		const saturn_task_t *t0 = &p0->tasks[t];
		const saturn_assign_t *a = &np->assign[t];
		saturn_reconfig_choice_t *c;

		if (!unpinned[t])
			continue;
		if (a->node == t0->running.node && a->gpus == t0->running.ngpus &&
		    !strcmp(a->technique, t0->options[0].technique)) {
			/* an objective's plan may start it later than its
			 * restart, after another batch's task: its gain comes
			 * from stopping the task (preemption), not from a new
			 * option, and the task goes on running */
			if (multi && a->start_s > p->tasks[t].release_s + 1 && stopped < 0)
				stopped = t;
			continue; /* keeps what it has: it goes on running */
		}
		c = &out->choices[nch++];
		c->job = b->job_of_task[t];
		c->task = t;
		snprintf(c->node, sizeof(c->node), "%s", a->node_name);
		snprintf(c->technique, sizeof(c->technique), "%s", a->technique);
		c->gpus = a->gpus;
		c->start_s = a->start_s;
		c->old_end_s = plan->assign[t].end_s;
		c->new_end_s = a->end_s;
	}
	if (stopped >= 0) {
		snprintf(out->why, sizeof(out->why),
			 "the better plan stops task %d to run another batch first and keeps its option: a preemption, not a reconfiguration",
			 stopped);
		nch = 0;
	}
	/* no harm: a restarted task's batch ends no later than now or its
	 * bound, whichever is later */
	for (int i = 0; multi && i < nch; i++) {
		int t = out->choices[i].task, k = m->batch_of_task[t];

		if (c1[k] > fmax(c0[k], dl[k]) + 1e-6) {
			snprintf(out->why, sizeof(out->why),
				 "restarting task %d would end its batch at %.0fs, after %.0fs now and its bound %.0fs",
				 t, c1[k], c0[k], dl[k]);
			nch = 0;
			break;
		}
	}
	out->nchoices = nch;
	if (nch == 0) {
		free(out->choices);
		out->choices = NULL;
		if (!out->why[0])
			snprintf(out->why, sizeof(out->why),
				 "the better plan keeps every running task as it is");
	}
done:
	saturn_plan_destroy(np);
	saturn_problem_destroy(p);
	free(unpinned);
	free(dl);
	free(c0);
	free(c1);
	return nch;
fail:
	saturn_plan_destroy(np);
	saturn_problem_destroy(p);
	free(unpinned);
	free(dl);
	free(c0);
	free(c1);
	saturn_reconfig_result_free(out);
	return -1;
}
