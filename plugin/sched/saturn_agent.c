/* saturn_agent.c - sched/saturn's thread: when to run a cycle (a job
 * changed, ended or was submitted, a held task is due, the interval
 * passed), the settings (read at init and reconfigure), the state file,
 * and one cycle: gather its inputs (saturn_gather.c: the snapshot under
 * one read-lock section, then files and profiles), run it
 * (saturn_cycle_run, lib/sched/sched_cycle.h: every decision, with no
 * lock, file or clock), record it (saturn_record_cycles), then apply its
 * outputs (saturn_apply.c: the decisions under one write-lock section;
 * the plan records; the reconfiguration signals) and hand the state to
 * its writer (saturn_statewr.c).
 * Never exits, never plans while holding locks.
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
#include "sched_cycle.h"

#include "saturn_agent.h"
#include "saturn_apply.h"
#include "saturn_backfill.h"
#include "saturn_clock.h"
#include "saturn_cyclerec.h"
#include "saturn_files.h"
#include "saturn_gather.h"
#include "saturn_measure.h"
#include "saturn_planrec.h"
#include "saturn_profiles.h"
#include "saturn_prune.h"
#include "saturn_reconfig.h"
#include "saturn_statewr.h"

/* --- thread control and settings -------------------------------------- */

static pthread_mutex_t agent_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t agent_cond = PTHREAD_COND_INITIALIZER;
static volatile int stop_agent = 0;
static volatile int reconfig_pending = 0;

/* what one cycle leaves to the next (the plan kept, the runtime feedback:
 * lib/sched/sched_cycle.h); the plan's id also in ctx->plan_id for the
 * files that apply it */
static saturn_cycle_state_t cstate;

/* state.json is root's alone (0600, all users' tasks): owned by SlurmUser
 * when we run as root, so that the Slurm operator account reads it too */
static long state_owner(void)
{
	return geteuid() == 0 ? (long)slurm_conf.slurm_user_id : SATURN_ANY_UID;
}

static void load_settings(saturn_ctx_t *ctx)
{
	saturn_error_t err = {{0}};
	int bad;

	saturn_sched_settings_free(&ctx->cfg);
	saturn_sched_settings_init(&ctx->cfg);
	bad = saturn_sched_settings_parse(&ctx->cfg, slurm_conf.sched_params, &err);
	xfree(ctx->sched_params);
	ctx->sched_params = xstrdup(slurm_conf.sched_params);
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
	saturn_statewr_target(ctx, state_owner());
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
				cstate.plan_seq = strtoul(dash + 1, NULL, 10);
		}
		if (st->ncorr && (cstate.feedback || (cstate.feedback = saturn_fb_create())))
			for (int i = 0; i < st->ncorr; i++)
				if (saturn_fb_put(cstate.feedback, &st->corr[i]) < 0)
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
	saturn_statewr_start();
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
	saturn_cycle_state_free(&cstate);
	saturn_statewr_stop();
	saturn_files_close(ctx);
	saturn_reconfig_fini();
	xfree(ctx->state_dir);
	xfree(ctx->profile_dir);
	xfree(ctx->progress_dir);
	xfree(ctx->sched_params);
	saturn_sched_settings_free(&ctx->cfg);
}

/* --- one cycle ------------------------------------------------------- */

static int abort_cb(void *arg)
{
	return stop_agent || slurmctld_config.shutdown_time;
}

/* Serialise the state and hand it to the state writer (saturn_statewr.c:
 * state.json and the users' views, in a thread of its own); the bytes
 * handed over, 0 on ENOMEM. */
static size_t persist(const saturn_ctx_t *ctx, const saturn_snapshot_t *s,
		      const saturn_sched_build_t *b, const saturn_plan_t *plan)
{
	char *txt = saturn_sched_state_to_json(s, b, plan, ctx->plan_id, s->now);
	size_t bytes = txt ? strlen(txt) : 0;

	if (!txt)
		error("sched/saturn: out of memory serialising the state");
	saturn_statewr_put(txt);
	return bytes;
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

/* The cycle's log lines at their levels. */
static void log_out(const saturn_cycle_out_t *out)
{
	for (int i = 0; i < out->nlog; i++) {
		const char *t = out->log[i].text;

		switch (out->log[i].level) {
		case SATURN_CYCLE_ERROR:
			error("sched/saturn: %s", t);
			break;
		case SATURN_CYCLE_INFO:
			info("sched/saturn: %s", t);
			break;
		case SATURN_CYCLE_VERBOSE:
			verbose("sched/saturn: %s", t);
			break;
		case SATURN_CYCLE_DEBUG:
			debug("sched/saturn: %s", t);
			break;
		default:
			debug2("sched/saturn: %s", t);
			break;
		}
	}
}

/* One cycle: gather (one read-lock section, then files) -> saturn_cycle_run
 * (no lock, no file) -> apply (one write-lock section for the decisions;
 * one for the plan records and one for the reconfiguration signals, each
 * only when there is something to write). doc/architecture.md lists every
 * lock section. */
static void cycle(saturn_ctx_t *ctx, saturn_snapshot_t *s, int **snap_of_node)
{
	saturn_profset_t profiles = {0};
	saturn_gather_times_t gt;
	saturn_cycle_in_t in = {0};
	saturn_cycle_capture_t cap;
	saturn_plan_tape_t tape;
	saturn_cycle_out_t out;
	double t3, t4 = 0, t5 = 0, cpu5 = 0, t6 = 0, cpu0 = now_thread_cpu();
	size_t state_bytes = 0;
	int nsaturn, rc, released = 0, unsubmitted = 0, had_plan = cstate.plan != NULL;

	next_due_mono = 0;
	nsaturn = saturn_gather(ctx, s, snap_of_node, &profiles, &gt, &in.requeued_now);
	if (nsaturn < 0)
		goto free_profiles;
	in.snap = s;
	in.profiles = &profiles;
	in.cfg = &ctx->cfg;
	in.requeue_ok = saturn_reconfig_requeue_ok();
	in.measure = saturn_measure_records(ctx, &profiles);
	in.profiler = saturn_profiler_facts(ctx, s);
	in.companions = &ctx->companions;
	in.abort_cb = abort_cb;
	saturn_cyclerec_begin(ctx, &in, &cstate, &cap, &tape);
	rc = saturn_cycle_run(&in, &cstate, &out);
	t3 = now_mono();
	saturn_cyclerec_end(ctx, &in, &cap, &tape, &out, &cstate);
	snprintf(ctx->plan_id, sizeof(ctx->plan_id), "%s", cstate.plan_id);
	log_out(&out);
	/* profiler and measurement jobs first: their ids go into the held
	 * tasks' reasons */
	unsubmitted = saturn_profiler_apply(ctx, s, &out);
	if (rc == 0 && out.built)
		unsubmitted += saturn_measure_apply(ctx, s, &out);
	saturn_apply_decisions(ctx, s, rc == 0 && out.built ? &out.build : NULL, out.plan, out.d,
			       rc == 0 ? out.nd : 0, out.prof_holds, out.nprof_holds, &t4, &t5,
			       &cpu5, &released);
	if (out.plan || (had_plan && !cstate.plan)) {
		saturn_sched_build_t none = {0};

		t6 = now_mono();
		state_bytes = persist(ctx, s, out.built ? &out.build : &none, out.plan);
		t6 = now_mono() - t6;
	}
	if (rc == 0 && out.built) {
		saturn_planrec_observe_pass(ctx, s);
		saturn_reconfig_signal(ctx, s, &out.reconf);
	}
	/* "plan" runs from the snapshot to the cycle's end: the passes after
	 * the snapshot (files, re-holds, profiler jobs, profiles: "gather")
	 * and saturn_cycle_run; "in all" from the lock request to the state
	 * serialised and handed to the writer (its write is logged by the
	 * writer), and the thread's CPU time in that span (on a loaded host
	 * the rest is waiting for a core) */
	if (nsaturn > 0)
		debug("sched/saturn: cycle: %d Saturn task(s), snapshot %.3f ms under read locks (waited %.3f ms), plan %.3f ms, apply %.3f ms under write locks, %d released; thread CPU under the locks: snapshot %.3f ms, apply %.3f ms; gather after the snapshot %.3f ms, state.json %zu bytes serialised in %.3f ms, cycle %.3f ms in all, %.3f ms of it on the CPU",
		      nsaturn, (gt.t2 - gt.t1) * 1e3, (gt.t1 - gt.t0) * 1e3, (t3 - gt.t2) * 1e3,
		      (t5 - t4) * 1e3, released, gt.cpu * 1e3, cpu5 * 1e3, (gt.t3 - gt.t2) * 1e3,
		      state_bytes, t6 * 1e3, (now_mono() - gt.t0) * 1e3,
		      (now_thread_cpu() - cpu0) * 1e3);
	else
		debug("sched/saturn: cycle: no Saturn jobs (snapshot %.3f ms under read locks, %.3f ms thread CPU)",
		      (gt.t2 - gt.t1) * 1e3, gt.cpu * 1e3);
	/* a task due later, or the solve the cycle left to the next one; a
	 * task due now but still held (re-validation refused it) waits for
	 * the usual triggers, not a cycle every 0.5 s */
	if (out.next_due_s > 0 || (out.next_due_s == 0 && cstate.solve_due))
		next_due_mono = gt.t2 + out.next_due_s;
	/* a profiler or measurement job that could not be submitted: its
	 * tasks, held this cycle, are planned without it in the next, at once */
	if (unsubmitted)
		next_due_mono = gt.t2;
	released_pending = 0;
	for (int i = 0; i < s->njobs; i++)
		if (s->jobs[i].state == SATURN_SNAP_RELEASED)
			released_pending++;
	saturn_cycle_out_free(&out);
free_profiles:
	saturn_profset_free(&profiles);
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
