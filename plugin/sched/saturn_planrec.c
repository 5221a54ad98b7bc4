/* saturn_planrec.c - sched/saturn writes each released task's plan record
 * (lib/sched/planrec.h: batch, task, technique, GPUs, node, plan id,
 * predicted and observed seconds per batch) into its job's AdminComment
 * (saturn_record=admin_comment, the default) or Comment
 * (saturn_record=comment), so that slurmdbd keeps it: sacct -o
 * JobID,State,Start,End,AllocTRES,AdminComment shows it after the job
 * ended. Written at release; while the task runs, its observed speed is
 * added from its progress reports, so the record slurmctld hands slurmdbd
 * at the job's end carries the last one seen.
 */
#include "config.h" /* Slurm's */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"

#include "planrec.h"
#include "sched_core.h"

#include "saturn_clock.h"
#include "saturn_planrec.h"

/* The field of job_ptr that holds the record, or NULL for none. */
static char **planrec_field(const saturn_ctx_t *ctx, job_record_t *job_ptr)
{
	switch (ctx->cfg.record) {
	case SATURN_PLANREC_ADMIN_COMMENT:
		return &job_ptr->admin_comment;
	case SATURN_PLANREC_COMMENT:
		return &job_ptr->comment;
	default:
		return NULL;
	}
}

/* Put text (malloc'd, taken) into *field as an xmalloc'd string. */
static void planrec_set(char **field, char *text)
{
	xfree(*field);
	*field = xstrdup(text);
	free(text);
}

void saturn_planrec_release(const saturn_ctx_t *ctx, job_record_t *job_ptr,
			    const saturn_sched_build_t *b, const saturn_snap_job_t *j,
			    const saturn_decision_t *d)
{
	char **field = job_ptr ? planrec_field(ctx, job_ptr) : NULL;
	char rec[SATURN_PLANREC_MAX], *text;
	saturn_planrec_t r = {
	    .batch = j->batch,
	    .task_id = j->array_job_id ? j->task_id : -1,
	    .technique = d->technique,
	    .gpus = d->gpus,
	    .node = d->node,
	    .plan_id = ctx->plan_id,
	    .pred_spb = saturn_planrec_predicted_spb(b, d),
	};

	if (!field)
		return;
	saturn_planrec_format(&r, rec, sizeof(rec));
	text = saturn_planrec_merge(*field, rec);
	if (!text) {
		error("sched/saturn: %pJ: out of memory writing its plan record", job_ptr);
		return;
	}
	planrec_set(field, text);
}

/* The speed a running task's record gets: the smoothed one (runtime
 * feedback), else its own last report (saturn_feedback=no); 0: none. */
static double observed_spb(const saturn_snap_job_t *j)
{
	if (j->state != SATURN_SNAP_RUNNING)
		return 0;
	return j->obs_spb > 0 ? j->obs_spb : j->progress_spb > 0 ? j->progress_spb : 0;
}

/* FNV-1a over the running tasks' (job id, speed): the last pass's value
 * means nothing changed, and the write lock is not taken. */
static uint64_t observed_hash(const saturn_snapshot_t *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (int i = 0; i < s->njobs; i++) {
		double spb = observed_spb(&s->jobs[i]);
		unsigned char b[sizeof(uint32_t) + sizeof(double)];

		if (!(spb > 0))
			continue;
		memcpy(b, &s->jobs[i].job_id, sizeof(uint32_t));
		memcpy(b + sizeof(uint32_t), &spb, sizeof(double));
		for (size_t k = 0; k < sizeof(b); k++)
			h = (h ^ b[k]) * 1099511628211ULL;
	}
	return h;
}

void saturn_planrec_observe_pass(const saturn_ctx_t *ctx, const saturn_snapshot_t *s)
{
	slurmctld_lock_t write_lock = {.job = WRITE_LOCK};
	static uint64_t last_hash;
	uint64_t h;
	int n = 0;
	double t0, t1;

	if (ctx->cfg.record == SATURN_PLANREC_NONE)
		return;
	h = observed_hash(s);
	if (h == last_hash || h == 1469598103934665603ULL) /* same as before, or none */
		return;
	last_hash = h;
	lock_slurmctld(write_lock);
	t0 = now_mono();
	for (int i = 0; i < s->njobs; i++) {
		const saturn_snap_job_t *j = &s->jobs[i];
		double spb = observed_spb(j);
		job_record_t *job_ptr;
		char **field, *text;

		if (!(spb > 0) || !(job_ptr = find_job_record(j->job_id)) ||
		    !IS_JOB_RUNNING(job_ptr) || !(field = planrec_field(ctx, job_ptr)))
			continue;
		/* NULL: no record of ours there, or the same value */
		text = saturn_planrec_observe(*field, spb);
		if (!text)
			continue;
		planrec_set(field, text);
		n++;
	}
	t1 = now_mono();
	unlock_slurmctld(write_lock);
	if (n) {
		schedule_job_save();
		debug("sched/saturn: %d plan record(s) updated, %.3f ms under write lock", n,
		      (t1 - t0) * 1e3);
	}
}
