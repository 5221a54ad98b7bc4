/* saturn_reconfig.c - carry out the reconfiguration of running tasks
 * (lib/sched/reconfig.h decides; saturn_reconfigure* settings).
 *
 * After the cycle's plan is chosen: when a running task qualifies, the
 * library solves the problem with those tasks free again; each task it
 * chooses gets SIGUSR1 on its steps (job_signal with KILL_STEPS_ONLY,
 * under the job write lock, after checking it is still the same run).
 * saturn-run checkpoints and exits 75; with RequeueExit=75 (or
 * RequeueExitHold=75) Slurm requeues the job, the re-hold pass puts it back
 * into our hold (Slurm's begin time becomes SATURN_NOT_BEFORE) and a later
 * plan releases it with its new option. A signalled task is not considered
 * again until it has been requeued; Slurm's restart count
 * caps how often one task is restarted (saturn_reconfigure_max). Every
 * decision is logged with its expected gain, and the task's end with the
 * gain realised against its planned end before the restart.
 */
#include "config.h" /* Slurm's */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "jobenv.h"
#include "multiuser.h"
#include "planner.h"
#include "reconfig.h"
#include "sched_core.h"

#include "saturn_jobrec.h"
#include "saturn_reconfig.h"

/* Tasks signalled, remembered until they end (for the realised gain) and,
 * while they still run, kept out of the decision. */
#define SENT_MAX 256

typedef struct sent {
	uint32_t job_id;
	time_t at;          /* when signalled */
	time_t planned_end; /* its end in the plan before the restart */
	time_t new_end;     /* its end in the plan that restarts it */
	int requeued;       /* seen pending again */
	int warned;         /* logged that it still runs long after the signal */
	time_t missing;     /* first cycle it was not in the snapshot (0: it was) */
} sent_t;

static sent_t sent[SENT_MAX];
static int nsent;
static int requeue_ok = -1; /* RequeueExit(Hold) lists 75; -1 not read yet */

void saturn_reconfig_load(saturn_ctx_t *ctx)
{
	saturn_reconfig_settings_t *rc = &ctx->cfg.reconfig;
	const char *tok;
	int cred = 120; /* Slurm's default cred_expire */
	int rq;

	rq = saturn_reconfig_requeues(slurm_conf.requeue_exit, slurm_conf.requeue_exit_hold,
				      SATURN_RECONFIG_EXIT);
	if (rq != requeue_ok) {
		if (!rq)
			info("sched/saturn: no reconfiguration of running tasks: slurm.conf lists %d (saturn-run's exit after a checkpoint) in neither RequeueExit nor RequeueExitHold",
			     SATURN_RECONFIG_EXIT);
		requeue_ok = rq;
	}
	/* as src/common/slurm_cred.c reads it */
	if ((tok = xstrstr(slurm_conf.authinfo, "cred_expire="))) {
		cred = atoi(tok + 12);
		if (cred < 5)
			cred = 120;
	}
	rc->requeue_delay_s = cred + 1;
	info("sched/saturn: reconfiguration of running tasks: default %s, margin %.0fs, at most %d restart(s) a task, restart cost %.0fs (checkpoint %.0fs, requeue delay %.0fs, start-up %.0fs)",
	     rc->default_on ? "yes" : "no (--saturn-reconfigure)", rc->margin_s, rc->max_restarts,
	     saturn_reconfig_restart_cost(rc), rc->checkpoint_s, rc->requeue_delay_s,
	     rc->startup_s);
}

static sent_t *find_sent(uint32_t job_id)
{
	for (int i = 0; i < nsent; i++)
		if (sent[i].job_id == job_id)
			return &sent[i];
	return NULL;
}

/* Whether Slurm still has JobId=id in hand (completing: exited and not yet
 * requeued or ended; or pending or running again). Takes the job read
 * lock for one look-up. */
static int in_slurm(uint32_t id)
{
	slurmctld_lock_t read_lock = {.job = READ_LOCK};
	job_record_t *job_ptr;
	int in;

	lock_slurmctld(read_lock);
	job_ptr = find_job_record(id);
	in = job_ptr && (IS_JOB_COMPLETING(job_ptr) || !IS_JOB_FINISHED(job_ptr));
	unlock_slurmctld(read_lock);
	return in;
}

/* Forget signalled tasks that ended (logging the realised gain) and keep
 * those still running from being chosen again. */
static void follow_sent(const saturn_ctx_t *ctx, saturn_snapshot_t *s)
{
	time_t now = (time_t)s->now;

	for (int i = 0; i < nsent;) {
		const saturn_snap_job_t *j = NULL;

		for (int k = 0; k < s->njobs; k++)
			if (s->jobs[k].job_id == sent[i].job_id) {
				j = &s->jobs[k];
				break;
			}
		if (j && j->state != SATURN_SNAP_RUNNING)
			sent[i].requeued = 1;
		if (j && j->state == SATURN_SNAP_RUNNING && !sent[i].requeued) {
			/* still checkpointing (or it ignored the signal):
			 * not again in this run */
			for (int k = 0; k < s->njobs; k++)
				if (s->jobs[k].job_id == sent[i].job_id)
					s->jobs[k].reconfigure = -1;
			if (!sent[i].warned &&
			    now - sent[i].at > ctx->cfg.reconfig.checkpoint_s + 120) {
				sent[i].warned = 1;
				info("sched/saturn: JobId=%u still runs %lds after the reconfiguration signal",
				     sent[i].job_id, (long)(now - sent[i].at));
			}
		}
		if (j) {
			sent[i].missing = 0;
			i++;
			continue;
		}
		/* Not in the snapshot: ended, or between its exit and Slurm's
		 * requeue (completing: the requeue waits for its epilog, no
		 * Saturn job of the snapshot meanwhile, for seconds on a
		 * loaded controller). It ended at the first cycle it was away
		 * (within one interval), once its record is done. */
		if (!sent[i].missing)
			sent[i].missing = now;
		if (in_slurm(sent[i].job_id)) {
			i++;
			continue;
		}
		if (sent[i].requeued)
			info("sched/saturn: reconfigured JobId=%u ended at ~%ld: planned end before the restart %ld, after %ld: realised gain ~%lds",
			     sent[i].job_id, (long)sent[i].missing, (long)sent[i].planned_end,
			     (long)sent[i].new_end, (long)(sent[i].planned_end - sent[i].missing));
		else
			info("sched/saturn: JobId=%u ended without a requeue after the reconfiguration signal (no checkpoint, or not requeued: RequeueExit=75?)",
			     sent[i].job_id);
		sent[i] = sent[--nsent];
	}
}

/* Under the job write lock: SIGUSR1 to the steps of the run the snapshot
 * saw. 0 when signalled, -1 when it changed or Slurm refused (logged). */
static int signal_task(const saturn_snap_job_t *j)
{
	job_record_t *job_ptr = find_job_record(j->job_id);
	int rc;

	if (!job_ptr || !IS_JOB_RUNNING(job_ptr) || (double)job_ptr->start_time != j->start_time ||
	    !job_ptr->details || !job_ptr->details->requeue) {
		debug("sched/saturn: JobId=%u changed since the snapshot: not reconfigured",
		      j->job_id);
		return -1;
	}
	rc = job_signal(job_ptr, SIGUSR1, KILL_STEPS_ONLY, slurm_conf.slurm_user_id, false);
	if (rc != SLURM_SUCCESS) {
		error("sched/saturn: %pJ: SIGUSR1 for the reconfiguration failed: %s", job_ptr,
		      slurm_strerror(rc));
		return -1;
	}
	{
		char num[32];

		/* the requeue this asks for is ours: not charged (requeue.c) */
		snprintf(num, sizeof(num), "%u", job_ptr->restart_cnt + 1);
		saturn_job_env_set(job_ptr, SATURN_EXCUSED_ENV, num);
	}
	return 0;
}

int saturn_reconfig_requeue_ok(void)
{
	return requeue_ok != 0; /* -1: not read yet (as yes) */
}

void saturn_reconfig_signal(const saturn_ctx_t *ctx, const saturn_snapshot_t *s,
			    const saturn_reconfig_result_t *rp)
{
	slurmctld_lock_t write_lock = {.conf = READ_LOCK, .job = WRITE_LOCK, .node = READ_LOCK,
				       .part = READ_LOCK, .fed = READ_LOCK};
	const saturn_reconfig_result_t r = *rp;
	int n = r.nchoices;

	if (n <= 0)
		return;
	lock_slurmctld(write_lock);
	for (int i = 0; i < n; i++) {
		const saturn_reconfig_choice_t *c = &r.choices[i];
		const saturn_snap_job_t *j = &s->jobs[c->job];

		if (signal_task(j) < 0)
			continue;
		info("sched/saturn: reconfiguring JobId=%u (task %d of batch %s, restart %d): %s on %d GPU(s) of %s -> %s on %d GPU(s) of %s from ~%.0fs; task ends ~%.0fs -> ~%.0fs; makespan %.0fs -> %.0fs: expected gain %.0fs (objective %s)",
		     j->job_id, j->task_id, j->batch, j->restarts + 1, j->technique, j->gpus,
		     j->node >= 0 && j->node < s->nnodes ? s->nodes[j->node].name : "?",
		     c->technique, c->gpus, c->node, c->start_s, c->old_end_s, c->new_end_s,
		     r.old_makespan_s, r.new_makespan_s, r.gain_s,
		     saturn_objective_name(ctx->cfg.fairness));
		{
			sent_t *e = find_sent(j->job_id);

			if (!e && nsent < SENT_MAX)
				e = &sent[nsent++];
			if (!e)
				continue;
			e->job_id = j->job_id;
			e->at = (time_t)s->now;
			e->planned_end = (time_t)(s->now + c->old_end_s);
			e->new_end = (time_t)(s->now + c->new_end_s);
			e->requeued = 0;
			e->warned = 0;
			e->missing = 0;
		}
	}
	unlock_slurmctld(write_lock);
}

void saturn_reconfig_follow(const saturn_ctx_t *ctx, saturn_snapshot_t *s)
{
	if (!nsent)
		return;
	follow_sent(ctx, s);
}

void saturn_reconfig_fini(void)
{
	requeue_ok = -1;
	nsent = 0;
}
