/* sched_cycle.c - one scheduling cycle as one call (sched_cycle.h): from
 * the gathered snapshot and profiles to the decisions, the plan kept and
 * the reconfiguration choices, with no file, lock or clock of its own.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "gain.h"
#include "multiuser.h"
#include "planner.h"
#include "sched_core.h"
#include "sched_cycle.h"

void saturn_cycle_state_init(saturn_cycle_state_t *st)
{
	memset(st, 0, sizeof(*st));
}

void saturn_cycle_state_free(saturn_cycle_state_t *st)
{
	if (!st)
		return;
	saturn_plan_destroy(st->plan);
	saturn_fb_destroy(st->feedback);
	saturn_cycle_state_init(st);
}

void saturn_cycle_out_free(saturn_cycle_out_t *out)
{
	if (!out)
		return;
	if (out->built)
		saturn_sched_build_free(&out->build);
	free(out->d);
	saturn_reconfig_result_free(&out->reconf);
	for (int i = 0; i < out->nmeasure; i++) {
		free(out->measure[i].list);
		free(out->measure[i].tasks);
	}
	free(out->measure);
	saturn_measset_free(&out->meas_records);
	for (int i = 0; i < out->nprofilers; i++)
		free(out->profilers[i].task_ids);
	free(out->profilers);
	free(out->prof_holds);
	free(out->prof_records);
	for (int i = 0; i < out->nlog; i++)
		free(out->log[i].text);
	free(out->log);
	memset(out, 0, sizeof(*out));
}

/* Append a log line (dropped on ENOMEM: a log line is never worth a
 * failed cycle). */
void saturn_cycle_log(saturn_cycle_out_t *out, saturn_cycle_level_t level, const char *fmt, ...)
{
	va_list ap;
	char *text;

	if (out->nlog == out->cap_log) {
		int cap = out->cap_log ? 2 * out->cap_log : 8;
		saturn_cycle_log_t *nl = realloc(out->log, (size_t)cap * sizeof(*nl));

		if (!nl)
			return;
		out->log = nl;
		out->cap_log = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text)
		return;
	out->log[out->nlog].level = level;
	out->log[out->nlog++].text = text;
}

/* The planner's options for this cycle's searches. */
static void cycle_opts(const saturn_cycle_in_t *in, saturn_planner_opts_t *opts)
{
	saturn_planner_opts_init(opts);
	opts->time_limit_s = in->cfg->solver_time_s;
	opts->abort_cb = in->abort_cb;
	opts->abort_arg = in->abort_arg;
	opts->tape = in->tape;
	opts->max_evals = in->max_evals;
}

/* "fsdp x3, ddp x2": the plan's techniques and how many tasks use each. */
static void describe(const saturn_plan_t *plan, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < plan->nassign && off + 40 < len; i++) {
		const char *t = plan->assign[i].technique ? plan->assign[i].technique : "?";
		int dup = 0, n = 0;

		for (int k = 0; k < i && !dup; k++)
			dup = plan->assign[k].technique && !strcmp(plan->assign[k].technique, t);
		if (dup)
			continue;
		for (int k = i; k < plan->nassign; k++)
			n += plan->assign[k].technique && !strcmp(plan->assign[k].technique, t);
		off += (size_t)snprintf(buf + off, len - off, "%s%s x%d", off ? ", " : "", t, n);
	}
}

/* The users' limits on a plan (multiuser.h): tasks moved so that no QOS
 * or association cap is exceeded at any time of the plan. */
static void plan_limits(saturn_cycle_out_t *out, const saturn_mu_t *mu, const saturn_problem_t *p,
			saturn_plan_t *plan)
{
	saturn_error_t err = {{0}};
	int over;

	if (!mu || !plan)
		return;
	over = saturn_mu_apply_limits(mu, p, plan, &err);
	if (over < 0)
		saturn_cycle_log(out, SATURN_CYCLE_ERROR, "%s: plan kept as it is", err.text);
	else if (over > 0)
		saturn_cycle_log(out, SATURN_CYCLE_DEBUG,
				 "%d task(s) need more GPUs than their QOS or association allows "
				 "at once: Slurm will keep them pending",
				 over);
}

/* saturn_fairness=share: the users one after the other in order of their
 * fair-share finish tags (fairness.h); NULL when the problem has a single
 * user or tasks on several nodes (planned as a whole), or on failure
 * (logged). */
static saturn_plan_t *plan_share(const saturn_cycle_in_t *in, saturn_cycle_state_t *st,
				 const saturn_sched_build_t *b, const saturn_planner_opts_t *opts,
				 saturn_cycle_out_t *out)
{
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL;
	double *tag;
	int nusers;

	if (saturn_problem_multinode(b->problem)) {
		if (!st->share_multinode_logged)
			saturn_cycle_log(out, SATURN_CYCLE_INFO,
					 "saturn_fairness=share: tasks on several nodes are not "
					 "planned by fair share yet: planning all users together");
		st->share_multinode_logged = 1;
		return NULL;
	}
	st->share_multinode_logged = 0;
	tag = calloc((size_t)b->problem->ntasks + 1, sizeof(double));
	nusers = tag ? saturn_fair_tags(in->snap, b, tag) : -1;
	if (nusers < 0)
		saturn_cycle_log(
		    out, SATURN_CYCLE_ERROR,
		    "out of memory computing fair-share tags: planning all users together");
	else if (nusers > 1 && !(plan = saturn_fair_plan(b->problem, tag, opts, &err)))
		saturn_cycle_log(out, SATURN_CYCLE_ERROR,
				 "fair-share plan failed (%s): planning all users together",
				 err.text);
	free(tag);
	return plan;
}

/* saturn_objective=weighted|bounded: switch from the carried plan to plan
 * only when it is better by the objective, by min_gain (bounded: a lower
 * stretch over the fair-share deadlines by min_gain, or within the bound
 * a makespan shorter by min_gain). */
static int mu_switch(int obj, const saturn_mu_t *mu, const saturn_problem_t *p,
		     const saturn_plan_t *plan, const saturn_plan_t *carried, double min_gain)
{
	double *dl = calloc((size_t)mu->nbatches + 1, sizeof(double)), vn, vc;
	int sw;

	if (!dl || saturn_mu_deadlines(mu, p, dl) < 0) {
		free(dl);
		return saturn_sched_should_switch(plan->makespan_s, carried->makespan_s, min_gain);
	}
	vn = saturn_mu_value(obj, mu, plan, dl);
	vc = saturn_mu_value(obj, mu, carried, dl);
	if (obj == SATURN_FAIR_WEIGHTED)
		sw = saturn_gains(vn, vc, min_gain);
	else if (vc > 1 && saturn_gains(vn, vc, min_gain))
		sw = 1;
	else if (vn <= (vc > 1 ? vc : 1))
		sw = saturn_sched_should_switch(plan->makespan_s, carried->makespan_s, min_gain);
	else
		sw = 0;
	free(dl);
	return sw;
}

/* The users' batches, weights and limits (multiuser.h) into *store: the
 * pointer, or NULL (logged) when they cannot be read. */
static saturn_mu_t *users(const saturn_cycle_in_t *in, const saturn_sched_build_t *b,
			  saturn_mu_t *store, saturn_cycle_out_t *out)
{
	saturn_mu_t *mu;

	if (saturn_mu_from_snapshot(store, in->snap, b) < 0) {
		saturn_cycle_log(out, SATURN_CYCLE_ERROR,
				 "out of memory reading the users' priorities and limits: planning "
				 "without them");
		return NULL;
	}
	mu = store;
	/* saturn_bound=stock: no batch later than first come first served
	 * with its users' own GPU counts */
	if (in->cfg->fairness == SATURN_FAIR_BOUNDED && in->cfg->bound == SATURN_BOUND_STOCK &&
	    ((mu->deadline = calloc((size_t)mu->nbatches + 1, sizeof(double))) == NULL ||
	     saturn_mu_stock_deadlines(mu, b->problem, mu->deadline) < 0)) {
		free(mu->deadline);
		mu->deadline = NULL;
		saturn_cycle_log(
		    out, SATURN_CYCLE_ERROR,
		    "out of memory computing the stock-Slurm bound: bounding by the fair share");
	}
	return mu;
}

/* Search for a plan (fair share, the multi-user objective, the makespan;
 * first come first served without a profile or when the planner fails).
 * carried (may be NULL) warm-starts it; gain is what a plan must gain over
 * it. NULL only on ENOMEM (logged). */
static saturn_plan_t *search(const saturn_cycle_in_t *in, saturn_cycle_state_t *st,
			     const saturn_sched_build_t *b, const saturn_mu_t *mu,
			     const saturn_plan_t *carried, double gain, saturn_cycle_out_t *out)
{
	const saturn_sched_settings_t *cfg = in->cfg;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL;

	if (b->any_profile) {
		saturn_planner_opts_t opts;

		cycle_opts(in, &opts);
		/* The carried plan is replaced only by one shorter by gain, and
		 * no plan beats the bound: once carried <= bound / (1 - gain) a
		 * search cannot change anything, so the planner may stop there
		 * (at once when the carried plan itself meets it). */
		opts.warm = carried ? carried : st->plan;
		if (carried)
			opts.stop_ratio = saturn_gain_stop_ratio(gain);
		if (cfg->fairness == SATURN_FAIR_SHARE) {
			plan = plan_share(in, st, b, &opts, out);
			/* the stages' gaps filled (no task later), within the limits */
			if (plan && mu && saturn_mu_compact(mu, b->problem, plan, &err) < 0)
				saturn_cycle_log(out, SATURN_CYCLE_ERROR,
						 "%s: fair-share plan kept as it is", err.text);
		} else if (mu) {
			/* every objective: limits applied to each candidate */
			plan = saturn_mu_plan(cfg->fairness, mu, b->problem, &opts, &err);
			if (!plan)
				saturn_cycle_log(out, SATURN_CYCLE_ERROR,
						 "%s plan failed (%s): planning the makespan",
						 saturn_objective_name(cfg->fairness), err.text);
		}
		if (!plan) {
			plan = saturn_planner_solve(b->problem, &opts, &err);
			plan_limits(out, mu, b->problem, plan);
		}
		if (!plan)
			saturn_cycle_log(out, SATURN_CYCLE_ERROR,
					 "planner failed (%s): using first-come-first-served",
					 err.text);
		else if (carried && plan->lower_bound_s > 0 && !strcmp(plan->status, "good-enough"))
			saturn_cycle_log(out, SATURN_CYCLE_DEBUG,
					 "solver stopped early (method %s): makespan %.0fs within "
					 "%.1f%% of the bound %.0fs",
					 plan->method, plan->makespan_s,
					 100.0 * (plan->makespan_s / plan->lower_bound_s - 1),
					 plan->lower_bound_s);
	}
	if (!plan) {
		plan = saturn_sched_fcfs(b->problem);
		plan_limits(out, mu, b->problem, plan);
	}
	if (!plan)
		saturn_cycle_log(out, SATURN_CYCLE_ERROR, "out of memory planning: cycle skipped");
	return plan;
}

/* The decisions from plan, once, with no release beyond the users'
 * limits. 0, or -1 (ENOMEM, logged). */
static int decide(const saturn_cycle_in_t *in, const saturn_mu_t *mu, const saturn_plan_t *plan,
		  saturn_cycle_out_t *out)
{
	int held;

	out->nd = saturn_sched_decide(in->snap, &out->build, plan, in->cfg->release_slack_s,
				      &out->d);
	if (out->nd < 0) {
		out->nd = 0;
		out->d = NULL;
		saturn_cycle_log(out, SATURN_CYCLE_ERROR, "out of memory deciding: cycle skipped");
		return -1;
	}
	/* no release that Slurm would keep pending for a QOS or association
	 * limit (one ahead of a running task's end included) */
	if (!mu)
		return 0;
	held = saturn_mu_limit_releases(mu, in->snap, &out->build, out->d, out->nd);
	if (held < 0)
		saturn_cycle_log(out, SATURN_CYCLE_ERROR,
				 "out of memory checking releases against the users' limits");
	else if (held > 0)
		saturn_cycle_log(out, SATURN_CYCLE_DEBUG,
				 "%d release(s) held back: their QOS or association limits allow "
				 "no more tasks or GPUs now",
				 held);
	return 0;
}

static int releases(const saturn_cycle_out_t *out)
{
	int n = 0;

	for (int i = 0; i < out->nd; i++)
		n += out->d[i].release != 0;
	return n;
}

/* When the next cycle must run for a task of plan still held after the
 * decisions (saturn_sched_next_due): the tasks decided for release count
 * as released, as they will be once applied. */
static double next_due(saturn_snapshot_t *s, const saturn_cycle_out_t *out,
		       const saturn_plan_t *plan, double slack_s)
{
	double due;

	for (int i = 0; i < out->nd; i++)
		if (out->d[i].release)
			s->jobs[out->d[i].job].state = SATURN_SNAP_RELEASED;
	due = saturn_sched_next_due(s, &out->build, plan, slack_s);
	for (int i = 0; i < out->nd; i++)
		if (out->d[i].release)
			s->jobs[out->d[i].job].state = SATURN_SNAP_HELD;
	return due;
}

/* Running tasks to restart with another option (reconfig.h), into
 * out->reconf. */
static void reconfigure(const saturn_cycle_in_t *in, const saturn_mu_t *mu,
			const saturn_plan_t *plan, saturn_cycle_out_t *out)
{
	const saturn_sched_settings_t *cfg = in->cfg;
	const saturn_reconfig_settings_t *rcfg = &cfg->reconfig;
	saturn_planner_opts_t opts;
	saturn_error_t err = {{0}};
	int any = 0, n;

	if (rcfg->max_restarts <= 0 || !in->requeue_ok || out->build.problem->ntasks == 0)
		return;
	for (int i = 0; i < in->snap->njobs && !any; i++)
		any = saturn_reconfig_eligible(&in->snap->jobs[i], rcfg, NULL, 0);
	if (!any)
		return;
	cycle_opts(in, &opts);
	opts.abort_cb = NULL; /* as before the cycle was one call: no abort */
	opts.abort_arg = NULL;
	n = saturn_reconfig_decide_mu(in->snap, &out->build, plan, saturn_profset_lookup,
				      (void *)in->profiles, rcfg, cfg->min_gain, &opts,
				      cfg->fairness, mu, &out->reconf, &err);
	if (n < 0) {
		memset(&out->reconf, 0, sizeof(out->reconf));
		saturn_cycle_log(out, SATURN_CYCLE_ERROR, "reconfiguration not decided: %s",
				 err.text);
	} else if (n == 0 && out->reconf.ncandidates) {
		saturn_cycle_log(out, SATURN_CYCLE_DEBUG,
				 "no reconfiguration (%d candidate(s)): %s",
				 out->reconf.ncandidates, out->reconf.why);
	}
}

/* Tasks left held (their reason says why): logged when their number
 * changes and every 10 minutes, at most 5 lines, so a large batch that
 * cannot be placed does not flood the log every cycle. */
static void log_skipped(const saturn_snapshot_t *s, saturn_cycle_state_t *st,
			saturn_cycle_out_t *out)
{
	const saturn_sched_build_t *b = &out->build;

	if (b->nskipped && (b->nskipped != st->skipped_logged || s->now - st->skipped_at >= 600)) {
		for (int i = 0; i < b->nskipped && i < 5; i++) {
			const saturn_snap_job_t *j = &s->jobs[b->skipped[i]];

			saturn_cycle_log(out, SATURN_CYCLE_ERROR,
					 "JobId=%u task %d of batch %s left held: %s", j->job_id,
					 j->task_id, j->batch, b->skip_reason[i]);
		}
		if (b->nskipped > 5)
			saturn_cycle_log(out, SATURN_CYCLE_ERROR,
					 "... and %d more task(s) left held (see their reasons)",
					 b->nskipped - 5);
		st->skipped_at = s->now;
	}
	st->skipped_logged = b->nskipped;
}

static void drop_plan(saturn_cycle_state_t *st)
{
	saturn_plan_destroy(st->plan);
	st->plan = NULL;
	st->made_now = 0;
}

/* Keep plan (owned from here on) as the state's, new: made now. */
static void keep_plan(saturn_cycle_state_t *st, saturn_plan_t *plan, double now, int made)
{
	if (st->plan != plan)
		saturn_plan_destroy(st->plan);
	st->plan = plan;
	st->plan_now = now;
	if (made) {
		st->made_now = now;
		st->made_makespan = plan->makespan_s;
		snprintf(st->plan_id, sizeof(st->plan_id), "p%ld-%lu", (long)now, ++st->plan_seq);
	}
}

int saturn_cycle_run(const saturn_cycle_in_t *in, saturn_cycle_state_t *st,
		     saturn_cycle_out_t *out)
{
	const saturn_sched_settings_t *cfg = in->cfg;
	saturn_snapshot_t *s = in->snap;
	saturn_mu_t mu_store, *mu = NULL;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL, *carried = NULL;
	double gain = cfg->min_gain;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->next_due_s = -1;
	if (s->njobs == 0) {
		if (st->plan)
			saturn_cycle_log(out, SATURN_CYCLE_INFO,
					 "no Saturn jobs left: plan %s done", st->plan_id);
		drop_plan(st);
		return 0;
	}
	if (in->requeued_now && st->plan) {
		/* it ran in that plan, ahead of the tasks planned after it: plan
		 * afresh, with it charged and behind them (requeue.c) */
		saturn_cycle_log(out, SATURN_CYCLE_DEBUG,
				 "%d task(s) requeued themselves: plan %s not carried",
				 in->requeued_now, st->plan_id);
		drop_plan(st);
	}
	if (s->nnodes == 0) {
		if (st->nonodes_at == 0 || s->now - st->nonodes_at > 600) {
			saturn_cycle_log(out, SATURN_CYCLE_INFO,
					 "%d Saturn task(s) but no usable node with GPUs (down, "
					 "drained or not responding): waiting",
					 s->njobs);
			st->nonodes_at = s->now;
		}
		return 0;
	}
	/* batches without a profile: their held tasks wait for a profiler
	 * job, out of this cycle; when every task waits, nothing to plan and
	 * the plan kept stays */
	if (saturn_cycle_profiler_step(in, out) > 0 && s->njobs == 0)
		return 0;
	/* runtime feedback: the reports of running tasks folded in */
	if (!cfg->feedback) {
		/* saturn_feedback=no: the profile only (clears s->feedback) */
		saturn_sched_feedback(NULL, s, NULL, NULL);
	} else {
		if (!st->feedback)
			st->feedback = saturn_fb_create();
		if (!st->feedback ||
		    saturn_sched_feedback(st->feedback, s, saturn_profset_lookup,
					  (void *)in->profiles) < 0)
			saturn_cycle_log(out, SATURN_CYCLE_ERROR,
					 "out of memory keeping the runtime feedback: planning "
					 "with what it has");
	}
	s->class_rules = cfg->node_classes;
	s->class_profile = saturn_profset_lookup_class;
	s->class_profile_arg = (void *)in->profiles;
	if (saturn_sched_build(s, saturn_profset_lookup, (void *)in->profiles, &out->build, &err) <
	    0) {
		saturn_cycle_log(out, SATURN_CYCLE_ERROR, "cannot build the problem: %s", err.text);
		return -1;
	}
	out->built = 1;
	log_skipped(s, st, out);
	if (out->build.problem->ntasks == 0)
		return 0; /* the tasks left held still get their reasons */
	mu = users(in, &out->build, &mu_store, out);

	/* The previous plan carried over (finished tasks dropped, the rest
	 * in their order, each as early as its planned GPUs allow). */
	carried = saturn_sched_carry(st->plan, out->build.problem);
	plan_limits(out, mu, out->build.problem, carried);
	if (carried && st->made_now > 0) {
		double expected = st->made_makespan - (s->now - st->made_now);

		gain = saturn_sched_switch_gain(carried->makespan_s, expected, cfg->min_gain);
		if (gain < cfg->min_gain)
			saturn_cycle_log(
			    out, SATURN_CYCLE_DEBUG,
			    "the carried plan %s has slipped (%.0fs left, %.0fs expected when it "
			    "was made): a plan shorter by %.0f%% replaces it",
			    st->plan_id, carried->makespan_s, expected, 100 * gain);
	}
	if (carried && !st->solve_due && !(gain < cfg->min_gain)) {
		/* Fast path: what the carried plan releases now starts without
		 * waiting for a search; the search follows in the next cycle,
		 * which sees those tasks released where the plan put them. Not
		 * for a plan that has slipped: it was made on speeds now known
		 * to be wrong, and the search comes first. */
		if (decide(in, mu, carried, out) < 0)
			goto fail;
		if (releases(out)) {
			/* a release onto a predicted option waits for its
			 * measurement (saturn_measure_predicted) */
			saturn_cycle_measure_step(in, out);
			saturn_cycle_profiler_notes(in, out);
			keep_plan(st, carried, s->now, 0);
			carried = NULL;
			st->solve_due = 1;
			out->kind = SATURN_CYCLE_CARRIED;
			out->plan = st->plan;
			snprintf(out->plan_id, sizeof(out->plan_id), "%s", st->plan_id);
			out->next_due_s = 0;
			goto done;
		}
		free(out->d);
		out->d = NULL;
		out->nd = 0;
	}
	st->solve_due = 0;
	if (!(plan = search(in, st, &out->build, mu, carried, gain, out)))
		goto fail;
	out->solve_s = plan->solve_s;
	/* keep the carried plan unless the new one is better by gain */
	if (carried && !(mu && (cfg->fairness == SATURN_FAIR_WEIGHTED ||
				cfg->fairness == SATURN_FAIR_BOUNDED) ?
				 mu_switch(cfg->fairness, mu, out->build.problem, plan, carried, gain) :
				 saturn_sched_should_switch(plan->makespan_s, carried->makespan_s, gain))) {
		saturn_plan_destroy(plan);
		keep_plan(st, carried, s->now, 0);
		out->kind = SATURN_CYCLE_CARRIED;
	} else {
		keep_plan(st, plan, s->now, 1);
		out->kind = SATURN_CYCLE_NEW;
	}
	plan = NULL;
	carried = NULL;
	out->plan = st->plan;
	snprintf(out->plan_id, sizeof(out->plan_id), "%s", st->plan_id);
	if (decide(in, mu, st->plan, out) < 0)
		goto fail;
	saturn_cycle_measure_step(in, out);
	saturn_cycle_profiler_notes(in, out);
	if (out->kind == SATURN_CYCLE_NEW) {
		const saturn_plan_t *p = st->plan;
		char tech[256];

		describe(p, tech, sizeof(tech));
		saturn_cycle_log(
		    out, SATURN_CYCLE_INFO,
		    "plan %s: %d task(s) on %d node(s), makespan %.0fs, bound %.0fs, gap %.1f%%, "
		    "method %s/%s, solve %.3fs, techniques: %s; %d to release now",
		    st->plan_id, out->build.problem->ntasks, out->build.problem->nnodes,
		    p->makespan_s, p->lower_bound_s,
		    p->lower_bound_s > 0 ? 100.0 * (p->makespan_s / p->lower_bound_s - 1) : 0.0,
		    p->method, p->status[0] ? p->status : "-", p->solve_s, tech, releases(out));
	}
	out->next_due_s = next_due(s, out, st->plan, cfg->release_slack_s);
	reconfigure(in, mu, st->plan, out);
	goto done;
fail:
	rc = -1;
	free(out->d);
	out->d = NULL;
	out->nd = 0;
	out->kind = SATURN_CYCLE_NO_PLAN;
	out->plan = NULL;
done:
	saturn_mu_free(mu);
	saturn_plan_destroy(carried);
	saturn_plan_destroy(plan);
	return rc;
}
