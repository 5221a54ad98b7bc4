/* saturn_apply.c - sched/saturn's hands on slurmctld's job records, under
 * the job write locks: release a planned task (the update RPC's own code
 * path: split the array task, set gres:gpu:N (gres:gpu:TYPE:N on typed
 * GPUs), pin the node, release the
 * admin hold, plus the SATURN_* variables in its supplemental environment),
 * put released tasks that left the plan back into the hold (re-hold), and
 * show the plan as the reason of the tasks not due yet (the re-hold:
 * saturn_rehold.c). Every decision is
 * re-validated against the live record first. saturn_apply_decisions()
 * carries out the decisions saturn_cycle_run made (lib/sched/sched_cycle.h);
 * saturn_agent.c's cycle() calls it.
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

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"

#include "envarray.h"
#include "jobreq.h"
#include "multiuser.h"
#include "sched_core.h"

#include "saturn_apply.h"
#include "saturn_clock.h"
#include "saturn_files.h"
#include "saturn_jobrec.h"
#include "saturn_planrec.h"
#include "saturn_profcache.h"

/* --- apply (write locks) ---------------------------------------------- */

/* The user's own GPU request of a held task: SATURN_USER_GRES when an
 * earlier release saved it, else its tres_per_node (as job_submit/saturn
 * normalised it). xmalloc'd or NULL. */
static char *user_gres(job_record_t *job_ptr)
{
	const char *saved = saturn_env_value(job_ptr->details->env_sup, job_ptr->details->env_cnt,
					     SATURN_USER_GRES_ENV);

	return xstrdup(saved ? saved : job_ptr->tres_per_node);
}

/* "gres/gpu:TYPE:N", or "gres/gpu:N" when type is "" (the prefix of the
 * release compiled for: slurm_compat.h), xmalloc'd. */
static char *typed_gres(const char *type, int gpus)
{
	char buf[SATURN_GPU_TYPE_MAX + 48];

	if (saturn_gres_string(buf, sizeof(buf), SATURN_TRES_GRES_PREFIX, type, gpus) < 0)
		return xstrdup_printf(SATURN_TRES_GRES_PREFIX "gpu:%d", gpus);
	return xstrdup(buf);
}

/* A task released with what its user asked for (typed or not) whose plan
 * gives it a type the user did not name (d->gpu_type: the planned node's
 * only GPU type): set gres:gpu:TYPE:N on the released record job_ptr.
 * Slurm refuses a typed request beside the untyped one it replaces in a
 * job's GRES list (ESLURM_INVALID_GRES_TYPE), so the old list is taken
 * off for the update and put back when Slurm refuses the new one: the
 * task then runs untyped on its pinned node, whose GPUs are all of that
 * type. Caller holds the job write lock. Returns 0 or -1 (logged). */
static int retype_gres(job_record_t *job_ptr, const saturn_snap_job_t *j,
		       const saturn_decision_t *d)
{
	job_desc_msg_t *desc;
	int rc;

	if (!d->gpu_type[0] || !strcmp(d->gpu_type, j->gpu_type))
		return 0;
	desc = xmalloc(sizeof(*desc));
	slurm_init_job_desc_msg(desc);
	/* "A_T" for an array task: the bare id of the array's last task is
	 * the array's own and would update every task */
	if (j->task_id >= 0 && j->array_job_id)
		desc->job_id_str = xstrdup_printf("%u_%d", j->array_job_id, j->task_id);
	else
		desc->job_id_str = xstrdup_printf("%u", job_ptr->job_id);
	desc->tres_per_node = typed_gres(d->gpu_type, d->gpus);
	rc = saturn_update_gres_detached(job_ptr, desc);
	if (rc != SLURM_SUCCESS) {
		error("sched/saturn: %pJ: typed GRES %s refused (%s): runs with %s on %s",
		      job_ptr, desc->tres_per_node, slurm_strerror(rc), job_ptr->tres_per_node,
		      d->node);
		slurm_free_job_desc_msg(desc);
		return -1;
	}
	slurm_free_job_desc_msg(desc);
	return 0;
}

/* The nodes of a release (desc not yet sent): exactly the planned ones,
 * all of them required (ReqNodeList) and NumNodes=k..k, so Slurm can start
 * the task only when every one is free and never on a subset; gres:gpu:N
 * is per node. The job's own count before the release goes into the
 * environment the first time a release changes it (release_note_nodes). */
static void release_nodes(job_desc_msg_t *desc, const saturn_decision_t *d, const char *nodelist)
{
	int k = d->nnodes > 1 ? d->nnodes : 1;

	desc->req_nodes = xstrdup(k > 1 ? nodelist : d->node);
	desc->min_nodes = (uint32_t)k;
	desc->max_nodes = (uint32_t)k;
}

/* After a release: remember the user's node count (SATURN_REQ_NODES) when
 * it differs from the planned one, and the planned one (SATURN_NODES) for
 * the job's programs. */
static void release_note_nodes(job_record_t *job_ptr, const saturn_snap_job_t *j,
			       const saturn_decision_t *d)
{
	job_details_t *det = job_ptr->details;
	int k = d->nnodes > 1 ? d->nnodes : 1, own = j->req_nodes > 1 ? j->req_nodes : 1;
	char num[32];

	if (own != k && !saturn_env_value(det->env_sup, det->env_cnt, SATURN_REQ_NODES_ENV)) {
		snprintf(num, sizeof(num), "%d", own);
		saturn_job_env_set(job_ptr, SATURN_REQ_NODES_ENV, num);
	}
	snprintf(num, sizeof(num), "%d", k);
	saturn_job_env_set(job_ptr, SATURN_NODES_ENV, num);
}

/* Slurm's record after the update still has the planned node count and
 * nodes? (A multi-node task released onto fewer would run wrongly.) */
static int release_nodes_kept(job_record_t *job_ptr, const saturn_decision_t *d)
{
	int k = d->nnodes > 1 ? d->nnodes : 1;

	if (k == 1)
		return 1;
	return job_ptr->details->min_nodes == (uint32_t)k && job_ptr->details->req_nodes &&
	       job_ptr->details->req_node_bitmap &&
	       bit_set_count(job_ptr->details->req_node_bitmap) == k;
}

static int release_task(const saturn_ctx_t *ctx, const saturn_snap_job_t *j,
			const saturn_decision_t *d, const char *nodelist)
{
	job_desc_msg_t *desc = xmalloc(sizeof(*desc));
	job_record_t *job_ptr = saturn_pending_record(j);
	char num[32], *orig = job_ptr ? user_gres(job_ptr) : NULL;
	int rc;

	slurm_init_job_desc_msg(desc);
	if (j->task_id >= 0 && j->array_job_id)
		desc->job_id_str = xstrdup_printf("%u_%d", j->array_job_id, j->task_id);
	else
		desc->job_id_str = xstrdup_printf("%u", j->job_id);
	desc->tres_per_node = typed_gres(j->gpu_type, d->gpus);
	release_nodes(desc, d, nodelist);
	desc->priority = INFINITE;
	rc = saturn_update_as_controller(desc);
	if (rc != SLURM_SUCCESS) {
		error("sched/saturn: JobId=%s: release with %d GPUs on %s failed: %s",
		      desc->job_id_str, d->gpus, desc->req_nodes, slurm_strerror(rc));
		slurm_free_job_desc_msg(desc);
		xfree(orig);
		return -1;
	}
	if (j->task_id >= 0 && j->array_job_id)
		job_ptr = find_job_array_rec(j->array_job_id, j->task_id);
	else
		job_ptr = find_job_record(j->job_id);
	if (!job_ptr || !job_ptr->details || job_ptr->priority == 0) {
		error("sched/saturn: JobId=%s: not released after update (record %s)",
		      desc->job_id_str, job_ptr ? "still held" : "missing");
		slurm_free_job_desc_msg(desc);
		xfree(orig);
		return -1;
	}
	if (!release_nodes_kept(job_ptr, d)) {
		/* never let it start on fewer nodes than planned */
		error("sched/saturn: JobId=%s: released on %d nodes (%s) but Slurm's record differs: held again",
		      desc->job_id_str, d->nnodes, desc->req_nodes);
		last_job_update = time(NULL);
		job_ptr->priority = 0;
		job_ptr->state_reason = WAIT_HELD;
		slurm_free_job_desc_msg(desc);
		return -1;
	}
	release_note_nodes(job_ptr, j, d);
	/* the user's request, which a re-hold puts back (so a task that is
	 * held, by us or after Saturn is turned off, always asks for what its
	 * user asked: `saturn release --all`) */
	if (orig)
		saturn_job_env_set(job_ptr, SATURN_USER_GRES_ENV, orig);
	xfree(orig);
	retype_gres(job_ptr, j, d);
	saturn_job_env_set(job_ptr, SATURN_BATCH_ENV, j->batch);
	saturn_job_env_set(job_ptr, SATURN_TECHNIQUE_ENV, d->technique);
	snprintf(num, sizeof(num), "%d", d->gpus);
	saturn_job_env_set(job_ptr, SATURN_GPUS_ENV, num);
	saturn_job_env_set(job_ptr, SATURN_TECHNIQUE_PARAMS_ENV, saturn_option_params(j, d));
	saturn_job_env_set(job_ptr, SATURN_PLAN_ID_ENV, ctx->plan_id);
	snprintf(num, sizeof(num), "%ld", (long)time(NULL));
	saturn_job_env_set(job_ptr, SATURN_RELEASED_AT_ENV, num);
	{
		/* STATE_DIR/progress/UID/JOBID.json; the folder was made before
		 * the locks were taken (saturn_progress_prepare) */
		char *pf = saturn_progress_path(ctx, (long)job_ptr->user_id, job_ptr->job_id);

		if (pf)
			saturn_job_env_set(job_ptr, SATURN_PROGRESS_FILE_ENV, pf);
		xfree(pf);
	}
	info("sched/saturn: released %pJ (task %s of batch %s): %d GPU(s)%s on %s, technique %s, plan %s, %s, class %s",
	     job_ptr, desc->job_id_str, j->batch, d->gpus, d->nnodes > 1 ? " per node" : "",
	     desc->req_nodes, d->technique, ctx->plan_id, job_ptr->tres_per_node,
	     d->klass[0] ? d->klass : "-");
	slurm_free_job_desc_msg(desc);
	return 0;
}

/* The record of task j right after its release (split off its array). */
static job_record_t *released_record(const saturn_snap_job_t *j)
{
	if (j->task_id >= 0 && j->array_job_id)
		return find_job_array_rec(j->array_job_id, j->task_id);
	return find_job_record(j->job_id);
}

/* Returns the number of tasks released. */
static int apply(const saturn_ctx_t *ctx, saturn_snapshot_t *s, const saturn_sched_build_t *b,
		 saturn_decision_t *d, int nd, const int *rel_order, const char *primary,
		 const int *count, char **nodelists, const saturn_cycle_prof_hold_t *holds,
		 int nholds)
{
	time_t now = time(NULL);
	int released = 0;

	/* releases first: splitting changes which record a reason belongs to;
	 * in the order of their planned starts (rel_order) */
	for (int r = 0; r < nd; r++) {
		int i = rel_order[r];
		const saturn_snap_job_t *j = &s->jobs[d[i].job];

		if (!d[i].release)
			continue;
		if (!saturn_revalidate(j)) {
			debug("sched/saturn: JobId=%u task %d changed since the snapshot: not released this cycle",
			      j->job_id, j->task_id);
			continue;
		}
		if (release_task(ctx, j, &d[i], nodelists[i]) == 0) {
			released++;
			saturn_planrec_release(ctx, released_record(j), b, j, &d[i]);
			/* for the persisted state and a second apply this cycle */
			s->jobs[d[i].job].state = SATURN_SNAP_RELEASED;
			s->jobs[d[i].job].gpus = d[i].gpus;
		}
	}
	/* reasons: per job record, the earliest planned start among its tasks
	 * (primary/count worked out before taking the locks) */
	for (int i = 0; i < nd; i++) {
		const saturn_snap_job_t *j = &s->jobs[d[i].job];
		job_record_t *job_ptr;
		char text[256];

		if (d[i].release || !primary[i] || !(job_ptr = saturn_revalidate(j)))
			continue;
		if (count[i] > 1)
			snprintf(text, sizeof(text), "%s (task %d; %d tasks held)", d[i].reason,
				 j->task_id, count[i]);
		else
			snprintf(text, sizeof(text), "%s", d[i].reason);
		saturn_set_reason(job_ptr, text, now);
	}
	for (int i = 0; b && i < b->nskipped; i++) {
		job_record_t *job_ptr = saturn_revalidate(&s->jobs[b->skipped[i]]);

		if (job_ptr)
			saturn_set_reason(job_ptr, b->skip_reason[i], now);
	}
	/* the tasks waiting for a profiler job (out of the cycle's snapshot) */
	for (int i = 0; i < nholds; i++) {
		job_record_t *job_ptr = saturn_revalidate(&holds[i].job);

		if (job_ptr)
			saturn_set_reason(job_ptr, holds[i].reason, now);
	}
	return released;
}

/* --- decisions -> records (no locks) --------------------------------- */

static const saturn_snapshot_t *sort_s;
static const saturn_decision_t *sort_d;

static int cmp_record(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	uint32_t ja = sort_s->jobs[sort_d[a].job].job_id, jb = sort_s->jobs[sort_d[b].job].job_id;

	if (ja != jb)
		return ja < jb ? -1 : 1;
	if (sort_d[a].start_s != sort_d[b].start_s)
		return sort_d[a].start_s < sort_d[b].start_s ? -1 : 1;
	return a - b;
}

/* The releases in the order of their planned starts (sched_decision.h,
 * saturn_sched_release_order: why). */
static int *release_order(const saturn_decision_t *d, int nd)
{
	int *order = xcalloc(nd ? nd : 1, sizeof(int));

	saturn_sched_release_order(d, nd, order);
	return order;
}

/* For the held (not released) decisions: primary[i] = 1 for the earliest
 * of each job record, count[i] = held tasks of that record. O(n log n),
 * outside the locks. */
static void group_records(const saturn_snapshot_t *s, const saturn_decision_t *d, int nd,
			  char *primary, int *count)
{
	int *idx = xcalloc(nd ? nd : 1, sizeof(int)), n = 0;

	for (int i = 0; i < nd; i++) {
		primary[i] = 0;
		count[i] = 0;
		if (!d[i].release)
			idx[n++] = i;
	}
	sort_s = s;
	sort_d = d;
	qsort(idx, (size_t)n, sizeof(int), cmp_record);
	for (int k = 0; k < n;) {
		int e = k;
		uint32_t id = s->jobs[d[idx[k]].job].job_id;

		while (e < n && s->jobs[d[idx[e]].job].job_id == id)
			e++;
		primary[idx[k]] = 1;
		count[idx[k]] = e - k;
		k = e;
	}
	xfree(idx);
}

/* Before the locks: the node list of each multi-node release (NULL for
 * the others), from the plan. A list that cannot be made keeps its task
 * held (logged): never released onto part of its nodes. */
static char **release_nodelists(const saturn_ctx_t *ctx, const saturn_snapshot_t *s,
				const saturn_plan_t *plan, saturn_decision_t *d, int nd)
{
	char **l = xcalloc(nd ? nd : 1, sizeof(char *));

	for (int i = 0; i < nd; i++) {
		size_t len;

		if (!d[i].release || d[i].nnodes <= 1)
			continue;
		len = (size_t)d[i].nnodes * (SATURN_NODE_NAME_MAX + 1) + 1;
		l[i] = xmalloc(len);
		if (saturn_sched_nodelist(plan, &d[i], l[i], len) < 0) {
			error("sched/saturn: JobId=%u task %d: no node list for its %d nodes in plan %s: held",
			      s->jobs[d[i].job].job_id, s->jobs[d[i].job].task_id, d[i].nnodes,
			      ctx->plan_id);
			xfree(l[i]);
			d[i].release = 0;
			snprintf(d[i].reason, sizeof(d[i].reason),
				 "saturn: held: no node list for its %d nodes", d[i].nnodes);
		}
	}
	return l;
}

/* Apply the cycle's decisions under the job write locks. Adds the time
 * under the locks to *t_lock0..*t_lock1 and the releases to *released. */
void saturn_apply_decisions(saturn_ctx_t *ctx, saturn_snapshot_t *s, const saturn_sched_build_t *b,
			    const saturn_plan_t *plan, saturn_decision_t *d, int nd,
			    const saturn_cycle_prof_hold_t *holds, int nholds, double *t_lock0,
			    double *t_lock1, double *cpu_lock, int *released)
{
	slurmctld_lock_t write_lock = {.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
				       .part = READ_LOCK, .fed = READ_LOCK};
	char *primary, **nodelists;
	int *count, *rel_order;

	*released = 0;
	if (!b || !b->problem) {
		b = NULL;
		plan = NULL;
	}
	if (plan) {
		for (int i = 0; i < nd; i++)
			debug2("sched/saturn: plan %s (%s): task %u_%d %s at %.1fs on %s, %d GPUs",
			       ctx->plan_id, plan->status, s->jobs[d[i].job].array_job_id,
			       s->jobs[d[i].job].task_id, d[i].release ? "release" : "hold",
			       d[i].start_s, d[i].node, d[i].gpus);
	} else {
		nd = 0;
	}
	if (nd == 0 && (!b || b->nskipped == 0) && nholds == 0)
		return;
	primary = xcalloc(nd ? nd : 1, 1);
	count = xcalloc(nd ? nd : 1, sizeof(int));
	nodelists = release_nodelists(ctx, s, plan, d, nd);
	group_records(s, d, nd, primary, count);
	rel_order = release_order(d, nd);
	/* progress folders of the tasks about to be released, before the locks */
	for (int i = 0; i < nd; i++)
		if (d[i].release)
			saturn_progress_prepare(ctx, s->jobs[d[i].job].uid);
	lock_slurmctld(write_lock);
	*t_lock0 = now_mono();
	*cpu_lock = now_thread_cpu();
	*released = apply(ctx, s, b, d, nd, rel_order, primary, count, nodelists, holds, nholds);
	*cpu_lock = now_thread_cpu() - *cpu_lock;
	*t_lock1 = now_mono();
	ctx->own_update = last_job_update;
	unlock_slurmctld(write_lock);
	if (*released) {
		schedule_job_save();
		/* Wake Slurm's scheduler thread now: queue_job_scheduler() is
		 * served by slurmctld's background loop, up to 1 s later, and
		 * a task released onto free GPUs would wait for it.
		 * schedule() only signals that thread (no locks taken here). */
		schedule(false);
	}
	xfree(primary);
	xfree(count);
	xfree(rel_order);
	for (int i = 0; i < nd; i++)
		xfree(nodelists[i]);
	xfree(nodelists);
}
