/* saturn_rehold.c - sched/saturn puts released tasks that left the plan
 * back into its hold (re-hold), under the job write locks: a task whose
 * node died, that Slurm requeued, that was released by hand, that waits
 * past its planned start on GPUs still busy... (saturn_sched_decide_rehold
 * says which and why). A re-hold Slurm refuses is tried again only
 * SATURN_REHOLD_RETRY_S later and logged once (rehold_wait.h).
 */
#include "config.h" /* Slurm's */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm_compat.h" /* plugin/common: one place for what differs between releases */

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"

#include "envarray.h"
#include "jobreq.h"
#include "rehold_wait.h"
#include "sched_core.h"

#include "saturn_clock.h"
#include "saturn_jobrec.h"
#include "saturn_rehold.h"
#include "saturn_snapshot.h"

/* --- re-hold (write locks) ------------------------------------------- */

static void env_unset(job_record_t *job_ptr, const char *name)
{
	job_details_t *d = job_ptr->details;
	size_t len = strlen(name);

	for (uint32_t i = 0; i < d->env_cnt;) {
		if (d->env_sup[i] && !strncmp(d->env_sup[i], name, len) && d->env_sup[i][len] == '=') {
			xfree(d->env_sup[i]);
			memmove(&d->env_sup[i], &d->env_sup[i + 1], (d->env_cnt - i - 1) * sizeof(char *));
			d->env_sup[--d->env_cnt] = NULL;
			continue;
		}
		i++;
	}
}

/* A re-hold gives the task back its user's node count (SATURN_REQ_NODES,
 * saved by the release that changed it), as it does the GPU request. */
static void rehold_nodes(job_desc_msg_t *desc, job_record_t *job_ptr)
{
	const char *own = saturn_env_value(job_ptr->details->env_sup, job_ptr->details->env_cnt,
					   SATURN_REQ_NODES_ENV);
	long k = own ? strtol(own, NULL, 10) : 0;

	if (k < 1 || k > SATURN_MAX_TASK_NODES || job_ptr->details->min_nodes == (uint32_t)k)
		return;
	desc->min_nodes = (uint32_t)k;
	desc->max_nodes = (uint32_t)k;
}

/* Put a released (or exit-held) task back into the admin hold, as
 * job_submit/saturn holds a new one: priority 0 and WAIT_HELD through the
 * update RPC's code (as an operator: an admin hold), no pinned node, no
 * SATURN_* variables of the old release, no begin time of Slurm's requeue
 * (kept as SATURN_NOT_BEFORE: the plan counts it as release_s; a begin
 * time on the job would make a later release wait for it, GPUs idle), the
 * reason saying why, and its user's own GPU request back in tres_per_node
 * (SATURN_USER_GRES, saved at release), so that a held task always asks
 * for what its user asked. Returns 1 when re-held, 0 when it already is
 * in our hold, -1 when it changed since the snapshot, -2 when Slurm
 * refused (why: Slurm's answer, for the caller to log). A task still in
 * its array's meta record (an operator released the whole array) is split
 * off and held by itself, like a release. */
static int rehold_task(const saturn_snap_job_t *j, const saturn_rehold_t *r, time_t now, char *why,
		       size_t len)
{
	job_record_t *job_ptr = saturn_pending_record(j);
	job_desc_msg_t *desc;
	uint32_t job_id;
	int rc, detached = 0;

	if (!job_ptr)
		return -1;
	if (job_ptr->priority == 0 && job_ptr->state_reason == WAIT_HELD)
		return 0;
	if (job_ptr->priority == 0 &&
	    !(job_ptr->state_reason == WAIT_HELD_USER && (job_ptr->job_state & JOB_SPECIAL_EXIT)))
		return -1; /* held by its user since the snapshot: leave it */
	job_id = job_ptr->job_id;
	desc = xmalloc(sizeof(*desc));
	slurm_init_job_desc_msg(desc);
	/* "A_T", never the bare array id (which updates every task of the
	 * array, running ones too); a task still in the array's meta record
	 * is split off by itself */
	if (j->task_id >= 0 && j->array_job_id)
		desc->job_id_str = xstrdup_printf("%u_%d", j->array_job_id, j->task_id);
	else
		desc->job_id_str = xstrdup_printf("%u", job_id);
	desc->priority = 0;
	if (job_ptr->details->req_nodes)
		desc->req_nodes = xstrdup("");
	{
		/* back to the user's own request (saved at release) */
		const char *g = saturn_env_value(job_ptr->details->env_sup,
						 job_ptr->details->env_cnt, SATURN_USER_GRES_ENV);

		if (g && xstrcmp(g, job_ptr->tres_per_node)) {
			desc->tres_per_node = xstrdup(g);
			/* A release retyped it (gres:gpu:TYPE:N, retype_gres)
			 * and the user asked untyped: Slurm refuses the untyped
			 * request beside the typed one left in the job's GRES
			 * list ("invalid GRES", ESLURM_INVALID_GRES_TYPE) and
			 * holds nothing. The list is taken off for the update
			 * and put back when Slurm did not set a new one. A
			 * task still in its array's meta record is split off
			 * by the update: its list stays. */
			detached = !job_ptr->array_recs || !job_ptr->array_recs->task_id_bitmap;
		}
	}
	rehold_nodes(desc, job_ptr);
	rc = detached ? saturn_update_gres_detached(job_ptr, desc) : saturn_update_as_controller(desc);
	if (rc != SLURM_SUCCESS) {
		snprintf(why, len, "%s", slurm_strerror(rc));
		slurm_free_job_desc_msg(desc);
		return -2;
	}
	slurm_free_job_desc_msg(desc);
	if (j->task_id >= 0 && j->array_job_id)
		job_ptr = find_job_array_rec(j->array_job_id, j->task_id);
	else
		job_ptr = find_job_record(job_id);
	if (!job_ptr || !job_ptr->details || job_ptr->priority != 0) {
		snprintf(why, len, "not held after update (record %s)",
			 job_ptr ? "released" : "missing");
		return -2;
	}
	job_ptr->state_reason = WAIT_HELD;
	job_ptr->job_state &= ~JOB_SPECIAL_EXIT;
	if (job_ptr->restart_cnt > 0 && job_ptr->details->begin_time > now) {
		char num[32];

		snprintf(num, sizeof(num), "%ld", (long)job_ptr->details->begin_time);
		saturn_job_env_set(job_ptr, SATURN_NOT_BEFORE_ENV, num);
		job_ptr->details->begin_time = 0;
	}
	env_unset(job_ptr, SATURN_TECHNIQUE_ENV);
	env_unset(job_ptr, SATURN_TECHNIQUE_PARAMS_ENV);
	env_unset(job_ptr, SATURN_GPUS_ENV);
	env_unset(job_ptr, SATURN_NODES_ENV);
	env_unset(job_ptr, SATURN_PLAN_ID_ENV);
	env_unset(job_ptr, SATURN_RELEASED_AT_ENV);
	if (r->cause == SATURN_REHOLD_NEVER) {
		char note[300];

		saturn_never_note(job_ptr, j->never, note, sizeof(note));
		saturn_job_env_set(job_ptr, SATURN_NEVER_ENV, note);
	}
	if (r->self_requeued) {
		char num[32];
		time_t from =
		    j->released_at > 0 && j->released_at <= now ? (time_t)j->released_at : now;

		/* charged from the release of the run it gave up, queued
		 * from now (requeue.c) */
		snprintf(num, sizeof(num), "%ld", (long)from);
		saturn_job_env_set(job_ptr, SATURN_CHARGED_FROM_ENV, num);
		info("sched/saturn: %pJ (batch %s) requeued itself (restart %u): charged like a running task from %s, queued behind the tasks submitted before now",
		     job_ptr, j->batch, job_ptr->restart_cnt, num);
		snprintf(num, sizeof(num), "%ld", (long)now);
		saturn_job_env_set(job_ptr, SATURN_REQUEUED_AT_ENV, num);
	} else if (r->cause == SATURN_REHOLD_REQUEUED) {
		env_unset(job_ptr, SATURN_CHARGED_FROM_ENV);
	}
	if (r->cause == SATURN_REHOLD_LATE) {
		char num[32];

		/* counted, never reset: it bounces at most SATURN_MAX_BOUNCES times */
		snprintf(num, sizeof(num), "%d", j->bounces + 1);
		saturn_job_env_set(job_ptr, SATURN_BOUNCES_ENV, num);
	}
	saturn_set_reason(job_ptr, r->reason, now);
	last_job_update = now;
	info("sched/saturn: re-held %pJ (task %d of batch %s, was %s%s): %s; asks for %s again", job_ptr,
	     j->task_id, j->batch, j->pinned[0] ? "pinned to " : "not pinned", j->pinned, r->reason,
	     job_ptr->tres_per_node ? job_ptr->tres_per_node : "no GRES");
	return 1;
}

/* A task released onto GPUs that stayed busy past its planned start: the
 * running Saturn tasks on that node overran what their reports or profile
 * told the plan. Each is marked (SATURN_OVERRAN in its own record, kept
 * across restarts) and planned until its time limit from now on, so only
 * its own batch pays for the claim (doc/security.md). Job write lock. */
static void blame_holders(saturn_snapshot_t *s, const saturn_snap_job_t *late)
{
	int h[16], n = saturn_sched_late_holders(s, late, h, 16);

	for (int k = 0; k < n; k++) {
		saturn_snap_job_t *r = &s->jobs[h[k]];
		job_record_t *job_ptr = find_job_record(r->job_id);

		if (r->overran || !job_ptr || !IS_JOB_RUNNING(job_ptr) || !job_ptr->details)
			continue;
		saturn_job_env_set(job_ptr, SATURN_OVERRAN_ENV, "1");
		r->overran = 1;
		info("sched/saturn: %pJ (batch %s) still holds %s past the planned start of JobId=%u: planned until its time limit from now on",
		     job_ptr, r->batch, late->pinned, late->job_id);
	}
}

/* Re-hold what saturn_sched_decide_rehold lists, under the job write
 * locks; the re-held tasks become held tasks of this cycle's snapshot.
 * Returns the number re-held; *charged: how many of them requeued
 * themselves. */
int rehold_pass(saturn_ctx_t *ctx, saturn_snapshot_t *s, int *charged)
{
	static saturn_rehold_wait_t refused; /* the agent's thread only */
	slurmctld_lock_t write_lock = {.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
				       .part = READ_LOCK, .fed = READ_LOCK};
	saturn_rehold_t *r = NULL;
	int n = saturn_sched_decide_rehold(s, &r), done = 0, waiting = 0;
	char *ok, *skip;
	time_t now = time(NULL);
	double t0, t1;

	*charged = 0;
	if (n < 0)
		error("sched/saturn: out of memory deciding re-holds");
	if (n <= 0)
		return 0;
	ok = xcalloc(n, 1);
	skip = xcalloc(n, 1);
	/* Slurm refused it lately: the same update would be refused again,
	 * under these locks (rehold_wait.h); none left: no locks at all */
	for (int i = 0; i < n; i++) {
		skip[i] = saturn_rehold_wait_skip(&refused, s->jobs[r[i].job].job_id,
						  s->jobs[r[i].job].task_id, (double)now);
		waiting += skip[i];
	}
	if (waiting == n)
		goto out;
	lock_slurmctld(write_lock);
	t0 = now_mono();
	for (int i = 0; i < n; i++) {
		const saturn_snap_job_t *j = &s->jobs[r[i].job];
		char why[160] = "";
		int rc = -3, k = 0;

		if (!skip[i])
			rc = rehold_task(j, &r[i], now, why, sizeof(why));
		if (rc == -2)
			k = saturn_rehold_wait_refused(&refused, j->job_id, j->task_id, (double)now);
		if (rc == -2 && k == 1)
			error("sched/saturn: JobId=%u task %d of batch %s: re-hold failed: %s (tried again every %.0f s, logged once)",
			      j->job_id, j->task_id, j->batch, why, SATURN_REHOLD_RETRY_S);
		else if (rc == -2)
			debug("sched/saturn: JobId=%u task %d: re-hold refused again (%d times): %s",
			      j->job_id, j->task_id, k, why);
		else if (rc > 0 && (k = saturn_rehold_wait_done(&refused, j->job_id, j->task_id)))
			info("sched/saturn: JobId=%u task %d re-held after %d refusal(s)", j->job_id,
			     j->task_id, k);
		ok[i] = rc >= 0;
		done += rc > 0;
		*charged += rc > 0 && r[i].self_requeued;
		if (rc > 0 && r[i].cause == SATURN_REHOLD_LATE)
			blame_holders(s, &s->jobs[r[i].job]);
		if (rc == -1)
			debug("sched/saturn: JobId=%u task %d changed since the snapshot: not re-held this cycle",
			      s->jobs[r[i].job].job_id, s->jobs[r[i].job].task_id);
	}
	t1 = now_mono();
	ctx->own_update = last_job_update;
	unlock_slurmctld(write_lock);
	for (int i = 0; i < n; i++)
		if (ok[i])
			saturn_snapshot_mark_held(s, &s->jobs[r[i].job]);
	if (done)
		schedule_job_save();
	debug("sched/saturn: %d task(s) re-held, %.3f ms under write locks", done, (t1 - t0) * 1e3);
out:
	xfree(skip);
	xfree(ok);
	free(r);
	return done;
}
