/* saturn_measure.c - re-measure a predicted option before a task runs on it
 * (saturn_measure_predicted=yes, with saturn_profiler set).
 *
 * The profiler measures a few GPU counts per technique and predicts the
 * rest from a scaling fit. When the plan is about to release a task onto a
 * `predicted` option, the task stays held ("saturn: measuring predicted ddp
 * on 4 GPUs (job N)") while a short job saturn-measure:NAME runs
 * "saturn-profile --measure TASK:TECHNIQUE:GPUS,..." as the batch's user on
 * every predicted option the plan uses for the batch (the due ones first);
 * it rewrites the profile with those options measured (or oom/failed) and
 * their techniques' other predictions re-fitted, and the next cycle plans
 * from that. Each option (signature, technique, GPU count) is tried once per
 * submission: when the job ends without measuring it, the prediction is
 * relied on and the log says so. The record of the running job survives a
 * slurmctld restart (STATE_DIR/measure-UID-NAME.job, root only). A batch is
 * (uid, name): each user's batch of a name has its own record and job.
 * A task planned on node class X from X's own profile (NAME@X.json) has
 * that profile's predicted options measured the same way, by a job
 * saturn-measure:NAME@X on X's GPU type that rewrites NAME@X.json; its
 * record is STATE_DIR/measure-UID-NAME@X.job.
 *
 * The decisions are made in the cycle (lib/sched/cycle_measure.c, on
 * lib/sched/bpol_measure.c's rules): it holds the tasks and names the jobs
 * to submit. This file keeps the records (in memory and in their files),
 * hands them to the cycle, polls the running jobs (one read lock), and
 * submits the jobs the cycle asks for (the owners under one read lock).
 */
#include "config.h" /* Slurm's */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "batch_policy.h"
#include "budget.h"
#include "formats.h"
#include "profile.h"
#include "sched_core.h"

#include "cycle_measure.h"
#include "sched_cycle.h"

#include "saturn_companion.h"
#include "saturn_measure.h"
#include "saturn_profiles.h"

/* The batches' measurement records (lib/sched/cycle_measure.h; the cycle
 * decides what they become; their limits: SATURN_BPOL_MEASURE_ROUNDS jobs
 * per submission, SATURN_BPOL_MEASURE_ITEMS options per job, a job
 * pending longer than SATURN_BPOL_MEASURE_WAIT_S not waited for). Each
 * record's file: STATE_DIR/measure-UID-KEY.job, KEY NAME or NAME@CLASS
 * (saturn_meas_key). */
static saturn_measset_t recs;

static void rec_save(const saturn_ctx_t *ctx, const saturn_measset_entry_t *m)
{
	char key[SATURN_MEAS_KEY_LEN], *txt = saturn_meas_rec_format(&m->rec);

	saturn_meas_key(m->batch, m->klass, key, sizeof(key));
	if (!txt) {
		error(
		    "sched/saturn: batch %s of uid %ld: out of memory recording measurement job %u",
		    key, m->uid, m->rec.job_id);
		return;
	}
	saturn_record_write(ctx, "measure", m->uid, key, m->rec.job_id, txt);
	free(txt);
}

/* The record of the batch (of its class klass's own profile, "" = the
 * batch's) in memory, read from its file the first time. */
static void rec_load(const saturn_ctx_t *ctx, const char *batch, long uid, const char *klass)
{
	saturn_meas_rec_t r = {0};
	char key[SATURN_MEAS_KEY_LEN], *buf;

	if (saturn_measset_index(&recs, uid, batch, klass) >= 0)
		return;
	saturn_meas_key(batch, klass, key, sizeof(key));
	if ((buf = saturn_record_read(ctx, "measure", uid, key))) {
		if (saturn_meas_rec_parse(buf, &r) == 0)
			info("sched/saturn: batch %s of uid %ld: measurement record found (job %u, "
			     "%d round(s))",
			     key, uid, r.job_id, r.rounds);
		else
			error("sched/saturn: batch %s of uid %ld: ignoring %s/measure-%ld-%s.job: "
			      "not \"JOBID ARRAYID ROUNDS ITEMS\" and keys",
			      key, uid, ctx->state_dir, uid, key);
		free(buf);
	}
	if (saturn_measset_put(&recs, uid, batch, klass, &r) < 0) {
		error("sched/saturn: batch %s of uid %ld: out of memory keeping its measurement "
		      "record",
		      key, uid);
		saturn_meas_rec_free(&r);
	}
}

const saturn_measset_t *saturn_measure_records(const saturn_ctx_t *ctx,
					       const saturn_profset_t *profiles)
{
	if (!ctx->cfg.profiler || !ctx->cfg.measure_predicted)
		return NULL;
	for (int i = 0; i < profiles->n; i++)
		if (profiles->e[i].prof)
			rec_load(ctx, profiles->e[i].batch, profiles->e[i].uid,
				 profiles->e[i].klass);
	return &recs;
}

void saturn_measure_poll(const saturn_ctx_t *ctx)
{
	slurmctld_lock_t read_lock = {.job = READ_LOCK};
	saturn_bpol_actions_t acts = {0};
	saturn_companion_t *job;
	int any = 0;

	for (int r = 0; r < recs.n && !any; r++)
		any = recs.e[r].rec.job_id != 0;
	if (!any)
		return;
	job = xcalloc(recs.n, sizeof(*job));
	lock_slurmctld(read_lock);
	for (int r = 0; r < recs.n; r++)
		if (recs.e[r].rec.job_id)
			saturn_companion_state(recs.e[r].rec.job_id, &job[r]);
	unlock_slurmctld(read_lock);
	for (int r = 0; r < recs.n; r++)
		if (saturn_bpol_measure_poll(&recs.e[r].rec, &job[r], (double)time(NULL), r,
					     &acts) < 0)
			error("sched/saturn: batch %s of uid %ld: out of memory polling "
			      "measurement job %u",
			      recs.e[r].batch, recs.e[r].uid, recs.e[r].rec.job_id);
	for (int i = 0; i < acts.n; i++) {
		const saturn_measset_entry_t *m = &recs.e[acts.a[i].tag];
		char key[SATURN_MEAS_KEY_LEN];

		if (acts.a[i].kind == SATURN_BPOL_LOG)
			saturn_bpol_log(&acts.a[i],
					saturn_meas_key(m->batch, m->klass, key, sizeof(key)),
					m->uid);
		else if (acts.a[i].kind == SATURN_BPOL_SAVE)
			rec_save(ctx, m);
	}
	saturn_bpol_actions_free(&acts);
	xfree(job);
}

/* Submit measurement job i of the cycle's outputs (owner: its task's
 * owner and script, gathered under the read lock); 0 when it cannot be. */
static uint32_t submit(saturn_ctx_t *ctx, const saturn_snapshot_t *s,
		       const saturn_cycle_measure_t *m, const saturn_batch_owner_t *owner)
{
	char key[SATURN_MEAS_KEY_LEN], *args;
	const char *type;
	uint32_t id = 0;

	if (!owner->script || (long)owner->uid != m->uid)
		return 0;
	args = xstrdup_printf("--measure '%s'", m->list);
	if (!m->klass[0])
		id = saturn_submit_measure(ctx, m->batch, owner, args, m->gpus, m->nodes);
	else if ((type = saturn_bpol_class_gpu_type(s, m->klass)))
		/* on that class's GPUs, into NAME@CLASS.json */
		id = saturn_submit_class_companion(ctx, "measure", m->batch, owner, args, m->gpus,
						   m->klass, type);
	else
		error("sched/saturn: batch %s of uid %ld: class %s has no single GPU type: no "
		      "measurement job for its profile",
		      saturn_meas_key(m->batch, m->klass, key, sizeof(key)), m->uid, m->klass);
	xfree(args);
	return id;
}

int saturn_measure_apply(saturn_ctx_t *ctx, const saturn_snapshot_t *s, saturn_cycle_out_t *out)
{
	/* as for reading a job's script anywhere in slurmctld */
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .part = READ_LOCK};
	saturn_bpol_actions_t acts = {0};
	saturn_batch_owner_t *owner;
	int failed = 0;

	/* the records the cycle changed, kept and written */
	for (int i = 0; i < out->meas_records.n; i++) {
		saturn_measset_entry_t *e = &out->meas_records.e[i];
		saturn_meas_rec_t r;
		int k;

		if (saturn_meas_rec_copy(&r, &e->rec) < 0 ||
		    (k = saturn_measset_put(&recs, e->uid, e->batch, e->klass, &r)) < 0) {
			error("sched/saturn: batch %s of uid %ld: out of memory keeping its "
			      "measurement record",
			      e->batch, e->uid);
			saturn_meas_rec_free(&r);
			continue;
		}
		rec_save(ctx, &recs.e[k]);
	}
	if (!out->nmeasure)
		return 0;
	owner = xcalloc(out->nmeasure, sizeof(*owner));
	lock_slurmctld(read_lock);
	for (int i = 0; i < out->nmeasure; i++)
		saturn_batch_owner(s->jobs[out->measure[i].owner].job_id, &owner[i]);
	unlock_slurmctld(read_lock);
	/* submit without locks; each outcome into its record and reasons */
	for (int i = 0; i < out->nmeasure; i++) {
		const saturn_cycle_measure_t *m = &out->measure[i];
		int k = saturn_measset_index(&recs, m->uid, m->batch, m->klass);
		uint32_t id = submit(ctx, s, m, &owner[i]);
		char key[SATURN_MEAS_KEY_LEN];

		saturn_meas_key(m->batch, m->klass, key, sizeof(key));
		failed += id == 0;
		if (saturn_uidtab_add(&ctx->companions, m->uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		if (k < 0) {
			/* the cycle changes the record of every job it asks
			 * for; without it (out of memory above) not recorded */
			error("sched/saturn: batch %s of uid %ld: no measurement record for job %u",
			      key, m->uid, id);
			continue;
		}
		if (saturn_cycle_measure_submitted(out, i, id, &recs.e[k].rec, &acts) < 0) {
			error("sched/saturn: batch %s of uid %ld: out of memory recording "
			      "measurement job %u",
			      key, m->uid, id);
			recs.e[k].rec.job_id = id;
			rec_save(ctx, &recs.e[k]);
		}
		for (int a = 0; a < acts.n; a++)
			if (acts.a[a].kind == SATURN_BPOL_LOG)
				saturn_bpol_log(&acts.a[a], key, m->uid);
			else if (acts.a[a].kind == SATURN_BPOL_SAVE)
				rec_save(ctx, &recs.e[k]);
		saturn_bpol_actions_free(&acts);
	}
	for (int i = 0; i < out->nmeasure; i++)
		saturn_batch_owner_free(&owner[i]);
	xfree(owner);
	return failed;
}

void saturn_measure_prune(const saturn_ctx_t *ctx, const saturn_live_t *live,
			  saturn_uidtab_t *active)
{
	int w = 0;

	for (int i = 0; i < recs.n; i++) {
		saturn_measset_entry_t *m = &recs.e[i];
		char key[SATURN_MEAS_KEY_LEN];

		/* a job recorded as running counts and keeps its record
		 * (saturn_measure_poll forgets it once it ended) */
		if (m->rec.job_id && saturn_uidtab_add(active, m->uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		if (m->rec.job_id || saturn_live_has(live, m->uid, m->batch)) {
			recs.e[w++] = *m;
			continue;
		}
		saturn_companion_files_remove(
		    ctx, "measure", m->uid, saturn_meas_key(m->batch, m->klass, key, sizeof(key)));
		saturn_meas_rec_free(&m->rec);
	}
	recs.n = w;
}

int saturn_measure_active(long uid, const char *key)
{
	char k[SATURN_MEAS_KEY_LEN];

	for (int i = 0; i < recs.n; i++)
		if (recs.e[i].uid == uid && recs.e[i].rec.job_id &&
		    !strcmp(saturn_meas_key(recs.e[i].batch, recs.e[i].klass, k, sizeof(k)), key))
			return 1;
	return 0;
}

void saturn_measure_fini(void)
{
	saturn_measset_free(&recs);
}
