/* saturn_agent.c - sched/saturn's thread: the Slurm side of a planning
 * cycle (the decisions are applied by saturn_apply.c, sched/backfill is
 * loaded by saturn_backfill.c). Snapshot Saturn jobs and the nodes' GPU state under read locks into
 * libsaturn's plain structs; release the locks; load profiles and progress
 * files, build the problem and plan (libsaturn: planner, or first-come-
 * first-served for batches without a profile); take the job write locks,
 * re-validate each decision against the live job record and apply it
 * through the update RPC's own code path (update_job_str: split the array
 * task, set gres:gpu:N, pin the node, release the admin hold) plus the
 * SATURN_* variables in the job's supplemental environment; tasks not due
 * yet show the plan as their reason. The plan and task states are persisted
 * under saturn_state_dir. Never exits, never plans while holding locks.
 */
#include "config.h" /* Slurm's */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gain.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm_compat.h" /* plugin/common: one place for what differs between releases */

#include "src/common/bitstring.h"
#include SATURN_GRES_H
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"

#include "envarray.h"
#include "fairness.h"
#include "formats.h"
#include "multiuser.h"
#include "planner.h"
#include "profile.h"
#include "progress.h"
#include "safefile.h"
#include "sched_core.h"

#include "saturn_agent.h"
#include "saturn_apply.h"
#include "saturn_backfill.h"
#include "saturn_clock.h"
#include "saturn_files.h"
#include "saturn_measure.h"
#include "saturn_planrec.h"
#include "saturn_profcache.h"
#include "saturn_profiles.h"
#include "saturn_prune.h"
#include "saturn_reconfig.h"
#include "saturn_rehold.h"
#include "saturn_snapshot.h"
#include "saturn_views.h"

/* --- thread control and settings -------------------------------------- */

static pthread_mutex_t agent_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t agent_cond = PTHREAD_COND_INITIALIZER;
static volatile int stop_agent = 0;
static volatile int reconfig_pending = 0;

/* plan kept between cycles */
static saturn_plan_t *prev_plan;
static unsigned long plan_seq;
static double prev_now;
/* when the plan now kept was made, and its makespan then (the switch rule:
 * saturn_sched_switch_gain); 0: not known (a plan restored from the state) */
static double made_now, made_makespan;
/* runtime feedback kept across cycles (feedback.h), restored from the state */
static saturn_fb_t *feedback;

static void load_settings(saturn_ctx_t *ctx)
{
	saturn_error_t err = {{0}};
	int bad;

	saturn_sched_settings_free(&ctx->cfg);
	saturn_sched_settings_init(&ctx->cfg);
	bad = saturn_sched_settings_parse(&ctx->cfg, slurm_conf.sched_params, &err);
	if (bad)
		error("sched/saturn: %d bad saturn_* setting(s), keeping defaults for them; first: %s",
		      bad, err.text);
	saturn_reconfig_load(ctx);
	xfree(ctx->state_dir);
	xfree(ctx->profile_dir);
	xfree(ctx->progress_dir);
	if (ctx->cfg.state_dir)
		ctx->state_dir = xstrdup(ctx->cfg.state_dir);
	else
		ctx->state_dir = xstrdup_printf("%s/saturn", slurm_conf.state_save_location);
	if (ctx->cfg.profile_dir)
		ctx->profile_dir = xstrdup(ctx->cfg.profile_dir);
	else
		ctx->profile_dir = xstrdup_printf("%s/profiles", ctx->state_dir);
	ctx->progress_dir = xstrdup_printf("%s/progress", ctx->state_dir);
	saturn_files_open(ctx);
	info("sched/saturn: interval %.0fs, solver time %.2fs, min gain %.2f, release slack %.0fs, backfill %s, fairness %s, feedback %s, state %s, profiles %s",
	     ctx->cfg.interval_s, ctx->cfg.solver_time_s, ctx->cfg.min_gain,
	     ctx->cfg.release_slack_s, ctx->cfg.backfill ? "yes" : "no",
	     ctx->cfg.fairness == SATURN_FAIR_BOUNDED && ctx->cfg.bound == SATURN_BOUND_STOCK ?
		     "bounded (stock)" :
		     saturn_objective_name(ctx->cfg.fairness),
	     ctx->cfg.feedback ? "yes" : "no", ctx->state_dir,
	     ctx->profile_dir);
}

static void load_prev_state(const saturn_ctx_t *ctx)
{
	char *path = xstrdup_printf("%s/state.json", ctx->state_dir);
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st;
	size_t len;
	long owners[3] = {(long)geteuid(), 0, (long)slurm_conf.slurm_user_id};
	char *buf = ctx->state_fd < 0 ? NULL :
		saturn_file_read_at(ctx->state_fd, ctx->state_dir, "state.json", owners, 3,
				    64u << 20, &len, NULL, &err);

	if (!buf && ctx->state_fd >= 0 && errno != ENOENT) {
		error("sched/saturn: previous state ignored: %s", err.text);
		xfree(path);
		return;
	}
	if (!buf) {
		debug("sched/saturn: no previous state: %s", err.text);
		xfree(path);
		return;
	}
	st = saturn_sched_state_parse(buf, len, &err);
	if (!st && !strncmp(err.text, "format:", 7)) {
		/* another version (an upgrade or a downgrade of the plugin):
		 * not read. Nothing is lost: every held task is still held in
		 * its job record and is planned afresh; released and running
		 * ones are Slurm's. Only the runtime feedback starts again. */
		error("sched/saturn: %s: %s: previous state ignored (held tasks are planned afresh from the job records, none is lost or started twice; runtime feedback starts again); it is replaced at the next plan",
		      path, err.text);
	} else if (!st) {
		error("sched/saturn: %s: %s (ignored: the jobs' own state is authoritative)", path, err.text);
	} else {
		/* a state written without a plan (nothing was planned, or the
		 * last cycle kept none) has no planned end */
		if (st->makespan_end > 0)
			info("sched/saturn: resuming after restart: previous plan %s with %d task(s), planned end in %.0fs",
			     st->plan_id ? st->plan_id : "?", st->ntasks,
			     st->makespan_end - (double)time(NULL));
		else
			info("sched/saturn: resuming after restart: previous plan %s with %d task(s), no planned end kept",
			     st->plan_id ? st->plan_id : "?", st->ntasks);
		if (st->plan_id) {
			const char *dash = strrchr(st->plan_id, '-');

			if (dash)
				plan_seq = strtoul(dash + 1, NULL, 10);
		}
		if (st->ncorr && (feedback || (feedback = saturn_fb_create())))
			for (int i = 0; i < st->ncorr; i++)
				if (saturn_fb_put(feedback, &st->corr[i]) < 0)
					break;
		saturn_sched_state_destroy(st);
	}
	free(buf);
	xfree(path);
}

void saturn_agent_init(saturn_ctx_t *ctx)
{
	stop_agent = 0;
	load_settings(ctx);
	load_prev_state(ctx);
	saturn_backfill_load(ctx);
}

void saturn_agent_stop(void)
{
	slurm_mutex_lock(&agent_mutex);
	stop_agent = 1;
	slurm_cond_broadcast(&agent_cond);
	slurm_mutex_unlock(&agent_mutex);
}

void saturn_agent_reconfig(void)
{
	reconfig_pending = 1;
	saturn_backfill_reconfig();
	slurm_mutex_lock(&agent_mutex);
	slurm_cond_broadcast(&agent_cond);
	slurm_mutex_unlock(&agent_mutex);
}

void saturn_agent_fini(saturn_ctx_t *ctx)
{
	saturn_backfill_fini();
	saturn_plan_destroy(prev_plan);
	prev_plan = NULL;
	saturn_files_close(ctx);
	saturn_fb_destroy(feedback);
	feedback = NULL;
	saturn_reconfig_fini();
	xfree(ctx->state_dir);
	xfree(ctx->profile_dir);
	xfree(ctx->progress_dir);
	saturn_sched_settings_free(&ctx->cfg);
}

/* --- one cycle ------------------------------------------------------- */

static int abort_cb(void *arg)
{
	return stop_agent || slurmctld_config.shutdown_time;
}

static void describe(const saturn_plan_t *plan, const saturn_problem_t *p, char *buf, size_t len)
{
	/* technique x count, e.g. "fsdp x3, ddp x2" */
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < plan->nassign && off < len - 40; i++) {
		const char *t = plan->assign[i].technique;
		int dup = 0, n = 0;

		for (int k = 0; k < i; k++)
			if (!xstrcmp(plan->assign[k].technique, t))
				dup = 1;
		if (dup)
			continue;
		for (int k = i; k < plan->nassign; k++)
			if (!xstrcmp(plan->assign[k].technique, t))
				n++;
		off += snprintf(buf + off, len - off, "%s%s x%d", off ? ", " : "", t, n);
	}
}

/* state.json is root's alone (0600, all users' tasks): owned by SlurmUser
 * when we run as root, so that the Slurm operator account reads it too */
static long state_owner(void)
{
	return geteuid() == 0 ? (long)slurm_conf.slurm_user_id : SATURN_ANY_UID;
}

static void persist(const saturn_ctx_t *ctx, const saturn_snapshot_t *s,
		    const saturn_sched_build_t *b, const saturn_plan_t *plan)
{
	char *path = xstrdup_printf("%s/state.json", ctx->state_dir);
	char *txt = saturn_sched_state_to_json(s, b, plan, ctx->plan_id, s->now);
	saturn_error_t err = {{0}};
	static int warned;

	if (ctx->state_fd < 0)
		saturn_error_set(&err, "%s: the state folder was refused (logged at start)",
				 path);
	if (!txt) {
		error("sched/saturn: out of memory serialising the state");
	} else if (ctx->state_fd < 0 ||
		   saturn_file_write_at(ctx->state_fd, ctx->state_dir, "state.json", txt,
					strlen(txt), state_owner(), SATURN_ANY_UID, 0600,
					&err) < 0) {
		if (!warned++)
			error("sched/saturn: cannot persist the plan: %s", err.text);
	} else {
		warned = 0;
		/* what users may read of it (PrivateData) */
		saturn_views_write(ctx, txt);
	}
	free(txt);
	xfree(path);
}

/* Saturn tasks released but not started at the end of the last cycle:
 * when a job ends, Slurm's scheduler is woken for them at once */
static int released_pending;
/* when (now_mono) a held task of the plan becomes due: the next cycle runs
 * then rather than a saturn_interval later; 0: none */
static double next_due_mono;

/* jobs ended so far (slurmctld's own counters, read without locks: a hint
 * to wake up, never a decision): a job that ends in the second of our own
 * last update leaves last_job_update unchanged, this does not */
static uint32_t jobs_ended(void)
{
	return slurmctld_diag_stats.jobs_completed + slurmctld_diag_stats.jobs_failed +
	       slurmctld_diag_stats.jobs_canceled;
}

/* jobs submitted so far (the same kind of hint): a batch submitted in the
 * second of our own last update would otherwise wait for the interval */
static uint32_t jobs_submitted(void)
{
	return slurmctld_diag_stats.jobs_submitted;
}

/* tasks left held by the last cycle, and when that was last logged */
static int skipped_logged;
static double skipped_at;

/* saturn_fairness=share: the users one after the other in order of their
 * fair-share finish tags (lib/sched/fairness.h); NULL when the problem has
 * a single user (plan it as a whole) or on failure (logged; the caller
 * plans it as a whole). */
static saturn_plan_t *plan_share(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
				 const saturn_planner_opts_t *opts)
{
	static int multinode_logged;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL;
	double *tag;
	int nusers;

	/* the fair-share planner places every task on one node: a problem
	 * with tasks on several nodes is planned as a whole (logged when
	 * that starts) */
	if (saturn_problem_multinode(b->problem)) {
		if (!multinode_logged)
			info("sched/saturn: saturn_fairness=share: tasks on several nodes are not planned by fair share yet: planning all users together");
		multinode_logged = 1;
		return NULL;
	}
	multinode_logged = 0;
	tag = calloc((size_t)b->problem->ntasks + 1, sizeof(double));
	nusers = tag ? saturn_fair_tags(s, b, tag) : -1;

	if (nusers < 0)
		error("sched/saturn: out of memory computing fair-share tags: planning all users together");
	else if (nusers > 1 && !(plan = saturn_fair_plan(b->problem, tag, opts, &err)))
		error("sched/saturn: fair-share plan failed (%s): planning all users together",
		      err.text);
	free(tag);
	return plan;
}

/* The usable nodes' classes (node_class.h), logged when they change. */
static void log_classes(saturn_snapshot_t *s)
{
	static char last[512];
	char line[512];
	int n = saturn_snapshot_classes_line(s, line, sizeof(line));

	if (!strcmp(line, last))
		return;
	snprintf(last, sizeof(last), "%s", line);
	info("sched/saturn: %d node class%s: %s", n, n == 1 ? "" : "es", line);
}

/* The users' limits on a plan (multiuser.h): tasks moved so that no QOS
 * or association cap is exceeded at any time of the plan. */
static void plan_limits(const saturn_mu_t *mu, const saturn_problem_t *p, saturn_plan_t *plan)
{
	saturn_error_t err = {{0}};
	int over;

	if (!mu || !plan)
		return;
	over = saturn_mu_apply_limits(mu, p, plan, &err);
	if (over < 0)
		error("sched/saturn: %s: plan kept as it is", err.text);
	else if (over > 0)
		debug("sched/saturn: %d task(s) need more GPUs than their QOS or association allows at once: Slurm will keep them pending",
		      over);
}

/* saturn_objective=weighted|bounded: keep the carried plan unless the new
 * one is better by the objective, by min_gain (bounded: a lower stretch
 * over the fair-share deadlines by min_gain, or within the bound a
 * makespan shorter by min_gain). */
static int mu_switch(const saturn_ctx_t *ctx, const saturn_mu_t *mu, const saturn_problem_t *p,
		     const saturn_plan_t *plan, const saturn_plan_t *carried, double min_gain)
{
	double *dl = calloc((size_t)mu->nbatches + 1, sizeof(double)), vn, vc;
	int obj = ctx->cfg.fairness, sw;

	if (!dl || saturn_mu_deadlines(mu, p, dl) < 0) {
		free(dl);
		return saturn_sched_should_switch(plan->makespan_s, carried->makespan_s,
						  min_gain);
	}
	vn = saturn_mu_value(obj, mu, plan, dl);
	vc = saturn_mu_value(obj, mu, carried, dl);
	if (obj == SATURN_FAIR_WEIGHTED)
		sw = saturn_gains(vn, vc, min_gain);
	else if (vc > 1 && saturn_gains(vn, vc, min_gain))
		sw = 1;
	else if (vn <= (vc > 1 ? vc : 1))
		sw = saturn_sched_should_switch(plan->makespan_s, carried->makespan_s,
						min_gain);
	else
		sw = 0;
	free(dl);
	return sw;
}

static void cycle(saturn_ctx_t *ctx, saturn_snapshot_t *s, int **snap_of_node)
{
	saturn_mu_t mu_store, *mu = NULL;
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .node = READ_LOCK,
				      .part = READ_LOCK, .fed = NO_LOCK};
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL, *carried = NULL;
	double t0, t1, t2, t3, t4 = 0, t5 = 0, gain = ctx->cfg.min_gain;
	int nsaturn, released = 0, new_plan = 0, charged = 0;

	next_due_mono = 0;
	t0 = now_mono();
	lock_slurmctld(read_lock);
	t1 = now_mono();
	nsaturn = saturn_take_snapshot(ctx, s, snap_of_node);
	t2 = now_mono();
	unlock_slurmctld(read_lock);
	if (nsaturn < 0) {
		error("sched/saturn: out of memory taking the snapshot: cycle skipped");
		return;
	}
	saturn_progress_sweep(ctx, s);
	saturn_reconfig_follow(ctx, s);
	/* every cycle, also one without Saturn tasks or nodes: the tasks a
	 * measurement job measured for may all have run and ended before the
	 * job's end was seen, and its record must still learn of it */
	saturn_measure_poll(ctx);
	/* what batches without tasks left behind (cached profiles, records,
	 * script copies) goes; each user's companion jobs counted */
	saturn_prune_pass(ctx, s);
	if (nsaturn == 0) {
		if (prev_plan) {
			info("sched/saturn: no Saturn jobs left: plan %s done", ctx->plan_id);
			saturn_plan_destroy(prev_plan);
			prev_plan = NULL;
			made_now = 0;
			memset(&b, 0, sizeof(b));
			persist(ctx, s, &b, NULL);
		}
		debug("sched/saturn: cycle: no Saturn jobs (snapshot %.3f ms under read locks)",
		      (t2 - t1) * 1e3);
		return;
	}
	if (rehold_pass(ctx, s, &charged) > 0 && charged && prev_plan) {
		/* it ran in that plan, ahead of the tasks planned after it:
		 * plan afresh, with it charged and behind them (requeue.c) */
		debug("sched/saturn: %d task(s) requeued themselves: plan %s not carried", charged,
		      ctx->plan_id);
		saturn_plan_destroy(prev_plan);
		prev_plan = NULL;
		made_now = 0;
	}
	if (s->nnodes == 0) {
		static time_t warned;

		if (time(NULL) - warned > 600) {
			info("sched/saturn: %d Saturn task(s) but no usable node with GPUs (down, drained or not responding): waiting",
			     nsaturn);
			warned = time(NULL);
		}
		return;
	}
	log_classes(s);
	saturn_read_progress(ctx, s);
	if (!ctx->cfg.feedback) {
		/* saturn_feedback=no: the profile only (clears s->feedback) */
		saturn_sched_feedback(NULL, s, NULL, NULL);
	} else {
		if (!feedback)
			feedback = saturn_fb_create();
		if (!feedback || saturn_sched_feedback(feedback, s, saturn_lookup_profile, ctx) < 0)
			error("sched/saturn: out of memory keeping the runtime feedback: planning with what it has");
	}
	saturn_planrec_observe_pass(ctx, s);
	saturn_profiler_pass(ctx, s);
	if (s->njobs == 0)
		return;
	if (saturn_sched_build(s, saturn_lookup_profile, ctx, &b, &err) < 0) {
		error("sched/saturn: cannot build the problem: %s", err.text);
		return;
	}
	/* Tasks left held (their reason says why): logged when their number
	 * changes and every 10 minutes, at most 5 lines, so a large batch
	 * that cannot be placed does not flood the log every cycle. */
	if (b.nskipped && (b.nskipped != skipped_logged || s->now - skipped_at >= 600)) {
		for (int i = 0; i < b.nskipped && i < 5; i++) {
			const saturn_snap_job_t *j = &s->jobs[b.skipped[i]];

			error("sched/saturn: JobId=%u task %d of batch %s left held: %s", j->job_id,
			      j->task_id, j->batch, b.skip_reason[i]);
		}
		if (b.nskipped > 5)
			error("sched/saturn: ... and %d more task(s) left held (see their reasons)",
			      b.nskipped - 5);
		skipped_at = s->now;
	}
	skipped_logged = b.nskipped;
	if (b.problem->ntasks == 0) {
		/* nothing to plan: the tasks left held still get their reason
		 * (no plan: apply_plan sets only theirs) */
		if (b.nskipped)
			apply_plan(ctx, s, &b, NULL, NULL, &t4, &t5, &released);
		goto out;
	}
	/* the users' batches, weights and limits (multiuser.h) */
	if (saturn_mu_from_snapshot(&mu_store, s, &b) == 0) {
		mu = &mu_store;
		/* saturn_bound=stock: no batch later than first come first
		 * served with its users' own GPU counts */
		if (ctx->cfg.fairness == SATURN_FAIR_BOUNDED &&
		    ctx->cfg.bound == SATURN_BOUND_STOCK &&
		    ((mu->deadline = calloc((size_t)mu->nbatches + 1, sizeof(double))) == NULL ||
		     saturn_mu_stock_deadlines(mu, b.problem, mu->deadline) < 0)) {
			free(mu->deadline);
			mu->deadline = NULL;
			error("sched/saturn: out of memory computing the stock-Slurm bound: bounding by the fair share");
		}
	} else
		error("sched/saturn: out of memory reading the users' priorities and limits: planning without them");

	/* Fast path: the previous plan carried over (finished tasks dropped,
	 * late ones shifted) decides releases now, before the solve, so a
	 * task due when another ends starts without waiting for the solver. */
	carried = saturn_sched_carry(prev_plan, s->now - prev_now, b.problem);
	plan_limits(mu, b.problem, carried);
	if (carried) {
		unsigned char *held = xcalloc(b.problem->ntasks ? b.problem->ntasks : 1, 1);
		int pinned;

		for (int t = 0; t < b.problem->ntasks; t++)
			held[t] = s->jobs[b.job_of_task[t]].state == SATURN_SNAP_HELD;
		if (apply_plan(ctx, s, &b, carried, mu, &t4, &t5, &released) < 0) {
			xfree(held);
			goto out;
		}
		/* What the carried plan just released starts where it said
		 * (Slurm holds those tasks to their nodes): the solve below
		 * plans them there, so that a new plan applied in this cycle
		 * does not release held tasks around a placement of its own. */
		pinned = saturn_sched_pin_released(s, &b, carried, held);
		xfree(held);
		if (pinned)
			debug("sched/saturn: %d task(s) released by the carried plan pinned for the solve",
			      pinned);
	}
	if (carried && made_now > 0) {
		gain = saturn_sched_switch_gain(carried->makespan_s,
						made_makespan - (s->now - made_now),
						ctx->cfg.min_gain);
		if (gain < ctx->cfg.min_gain)
			debug("sched/saturn: the carried plan %s has slipped (%.0fs left, %.0fs expected when it was made): a plan shorter by %.0f%% replaces it",
			      ctx->plan_id, carried->makespan_s,
			      made_makespan - (s->now - made_now), 100 * gain);
	}

	if (b.any_profile) {
		saturn_planner_opts_t opts;

		saturn_planner_opts_init(&opts);
		opts.time_limit_s = ctx->cfg.solver_time_s;
		opts.abort_cb = abort_cb;
		/* The carried plan is replaced only by one shorter by min_gain, and
		 * no plan beats the bound: once carried <= bound / (1 - min_gain)
		 * a search cannot change anything, so the planner may stop there
		 * (at once when the carried plan itself meets it). */
		opts.warm = carried ? carried : prev_plan;
		if (carried)
			opts.stop_ratio = saturn_gain_stop_ratio(gain);
		if (ctx->cfg.fairness == SATURN_FAIR_SHARE) {
			plan = plan_share(s, &b, &opts);
			/* the stages' gaps filled (no task later), within the limits */
			if (plan && mu && saturn_mu_compact(mu, b.problem, plan, &err) < 0)
				error("sched/saturn: %s: fair-share plan kept as it is", err.text);
		} else if (mu) {
			/* every objective: limits applied to each candidate */
			plan = saturn_mu_plan(ctx->cfg.fairness, mu, b.problem, &opts, &err);
			if (!plan)
				error("sched/saturn: %s plan failed (%s): planning the makespan",
				      saturn_objective_name(ctx->cfg.fairness), err.text);
		}
		if (!plan) {
			plan = saturn_planner_solve(b.problem, &opts, &err);
			plan_limits(mu, b.problem, plan);
		}
		if (!plan)
			error("sched/saturn: planner failed (%s): using first-come-first-served", err.text);
		else if (carried && plan->lower_bound_s > 0 && !strcmp(plan->status, "good-enough"))
			debug("sched/saturn: solver stopped early (method %s): makespan %.0fs within %.1f%% of the bound %.0fs",
			      plan->method, plan->makespan_s,
			      100.0 * (plan->makespan_s / plan->lower_bound_s - 1), plan->lower_bound_s);
	}
	if (!plan) {
		plan = saturn_sched_fcfs(b.problem);
		plan_limits(mu, b.problem, plan);
	}
	if (!plan) {
		error("sched/saturn: out of memory planning: cycle skipped");
		goto out;
	}
	t3 = now_mono();

	/* keep the carried plan unless the new one is better by min_gain */
	if (carried && !(mu && (ctx->cfg.fairness == SATURN_FAIR_WEIGHTED ||
				ctx->cfg.fairness == SATURN_FAIR_BOUNDED) ?
				 mu_switch(ctx, mu, b.problem, plan, carried, gain) :
				 saturn_sched_should_switch(plan->makespan_s, carried->makespan_s,
							    gain))) {
		saturn_plan_destroy(plan);
		plan = carried;
		carried = NULL;
	} else {
		int more = 0;

		new_plan = 1;
		made_now = s->now;
		made_makespan = plan->makespan_s;
		snprintf(ctx->plan_id, sizeof(ctx->plan_id), "p%ld-%lu", (long)s->now, ++plan_seq);
		if (apply_plan(ctx, s, &b, plan, mu, &t4, &t5, &more) < 0)
			goto out;
		released += more;
	}

	if (new_plan) {
		char tech[256];

		describe(plan, b.problem, tech, sizeof(tech));
		info("sched/saturn: plan %s: %d task(s) on %d node(s), makespan %.0fs, bound %.0fs, gap %.1f%%, method %s/%s, solve %.3fs, techniques: %s; %d released now",
		     ctx->plan_id, b.problem->ntasks, b.problem->nnodes, plan->makespan_s,
		     plan->lower_bound_s,
		     plan->lower_bound_s > 0 ? 100.0 * (plan->makespan_s / plan->lower_bound_s - 1) : 0.0,
		     plan->method, plan->status[0] ? plan->status : "-", t3 - t2, tech, released);
	}
	debug("sched/saturn: cycle: %d Saturn task(s), snapshot %.3f ms under read locks (waited %.3f ms), plan %.3f ms, apply %.3f ms under write locks, %d released",
	      nsaturn, (t2 - t1) * 1e3, (t1 - t0) * 1e3, (t3 - t2) * 1e3, (t5 - t4) * 1e3, released);
	{
		double due = saturn_sched_next_due(s, &b, plan, ctx->cfg.release_slack_s);

		/* due now but still held (re-validation refused it): the
		 * usual triggers, not a cycle every 0.5 s */
		if (due > 0)
			next_due_mono = t2 + due;
	}
	released_pending = 0;
	for (int i = 0; i < s->njobs; i++)
		if (s->jobs[i].state == SATURN_SNAP_RELEASED)
			released_pending++;
	persist(ctx, s, &b, plan);
	saturn_reconfig_pass(ctx, s, &b, plan, mu);
	saturn_plan_destroy(prev_plan);
	prev_plan = plan;
	prev_now = s->now;
	plan = NULL;
out:
	saturn_mu_free(mu);
	saturn_plan_destroy(carried);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
}

void *saturn_agent(void *arg)
{
	saturn_ctx_t *ctx = arg;
	saturn_snapshot_t *s = saturn_snapshot_create();
	int *snap_of_node = NULL;
	time_t seen_update = 0;
	uint32_t seen_ended = jobs_ended(), nudged_ended = seen_ended;
	uint32_t seen_submitted = jobs_submitted();
	double last_cycle = 0;

	if (!s) {
		error("sched/saturn: out of memory: agent not started");
		return NULL;
	}
	while (!stop_agent) {
		struct timespec ts;
		double now;
		uint32_t ended, submitted;

		/* wake ten times a second (a comparison of counters): a job's
		 * end is noticed within 0.1 s */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		slurm_mutex_lock(&agent_mutex);
		if (!stop_agent)
			pthread_cond_timedwait(&agent_cond, &agent_mutex, &ts);
		slurm_mutex_unlock(&agent_mutex);
		if (stop_agent || slurmctld_config.shutdown_time)
			break;
		if (reconfig_pending) {
			slurmctld_lock_t conf_lock = {.conf = READ_LOCK};

			reconfig_pending = 0;
			lock_slurmctld(conf_lock);
			load_settings(ctx);
			unlock_slurmctld(conf_lock);
			last_cycle = 0;
		}
		now = now_mono();
		ended = jobs_ended();
		submitted = jobs_submitted();
		/* A job ended and released tasks wait for GPUs: ask Slurm's
		 * scheduler now rather than at its next pass (up to 1 s; it is
		 * not run when a batch script completes). Only a request: the
		 * scheduler thread decides, under its own locks. */
		if (ended != nudged_ended && released_pending)
			schedule(false);
		nudged_ended = ended;
		/* a job changed (submit, end, cancel, ...), a held task is due
		 * or the interval passed */
		if (((last_job_update != seen_update || ended != seen_ended ||
		      submitted != seen_submitted ||
		      (next_due_mono > 0 && now >= next_due_mono)) &&
		     now - last_cycle >= 0.5) ||
		    now - last_cycle >= ctx->cfg.interval_s) {
			time_t before = last_job_update;

			seen_ended = ended;
			seen_submitted = submitted;
			cycle(ctx, s, &snap_of_node);
			/* our own updates are not news; changes by others during
			 * the cycle (a job ended while we solved) are */
			seen_update = last_job_update == ctx->own_update ? ctx->own_update : before;
			last_cycle = now_mono();
		}
	}
	xfree(snap_of_node);
	saturn_snapshot_destroy(s);
	saturn_profiles_fini();
	saturn_measure_fini();
	saturn_prune_fini(ctx);
	return NULL;
}
