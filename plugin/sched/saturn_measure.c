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
 * The decisions are lib/batch_policy.c's (saturn_bpol_measure_*); this
 * file reads and writes the records, gathers the facts (one read lock per
 * pass), submits the jobs and turns HOLD actions into held decisions.
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

#include "saturn_companion.h"
#include "saturn_measure.h"
#include "saturn_profcache.h"
#include "saturn_profiles.h"

/* A batch's measurement record (lib/batch_policy.h decides what it
 * becomes; its limits: SATURN_BPOL_MEASURE_ROUNDS jobs per submission,
 * SATURN_BPOL_MEASURE_ITEMS options per job, a job pending longer than
 * SATURN_BPOL_MEASURE_WAIT_S not waited for). */
typedef struct measure_rec {
	char batch[SATURN_NAME_LEN];
	long uid;
	/* the node class whose own profile (NAME@CLASS.json) it measures;
	 * "" = the batch's profile. Its file: measure-UID-NAME@CLASS.job */
	char klass[SATURN_CLASS_NAME_MAX + 1];
	char *key; /* NAME or NAME@CLASS, the record's file name part */
	saturn_meas_rec_t r;
} measure_rec_t;

static measure_rec_t *recs;
static int nrecs;

static void rec_save(const saturn_ctx_t *ctx, const measure_rec_t *m)
{
	char *txt = saturn_meas_rec_format(&m->r);

	if (!txt) {
		error("sched/saturn: batch %s of uid %ld: out of memory recording measurement job %u",
		      m->batch, m->uid, m->r.job_id);
		return;
	}
	saturn_record_write(ctx, "measure", m->uid, m->key, m->r.job_id, txt);
	free(txt);
}

/* The record of the batch (of its class klass's own profile, NULL =
 * the batch's): from memory, else from its file (once), else new. May
 * move the records: returns an index. */
static int rec_get(const saturn_ctx_t *ctx, const char *batch, long uid, const char *klass)
{
	measure_rec_t *m;
	char *buf;

	if (!klass)
		klass = "";
	for (int i = 0; i < nrecs; i++)
		if (recs[i].uid == uid && !strcmp(recs[i].batch, batch) &&
		    !strcmp(recs[i].klass, klass))
			return i;
	xrecalloc(recs, nrecs + 1, sizeof(*recs));
	m = &recs[nrecs++];
	memset(m, 0, sizeof(*m));
	snprintf(m->batch, sizeof(m->batch), "%s", batch);
	snprintf(m->klass, sizeof(m->klass), "%s", klass);
	m->key = klass[0] ? xstrdup_printf("%s@%s", batch, klass) : xstrdup(batch);
	m->uid = uid;
	if ((buf = saturn_record_read(ctx, "measure", uid, m->key))) {
		if (saturn_meas_rec_parse(buf, &m->r) == 0)
			info("sched/saturn: batch %s of uid %ld: measurement record found (job %u, %d round(s))",
			     m->key, uid, m->r.job_id, m->r.rounds);
		else
			error("sched/saturn: batch %s of uid %ld: ignoring %s/measure-%ld-%s.job: not \"JOBID ARRAYID ROUNDS ITEMS\" and keys",
			      m->key, uid, ctx->state_dir, uid, m->key);
		free(buf);
	}
	return nrecs - 1;
}

/* The profiles as last loaded, for the policy (no file access). */
static const saturn_profile_t *cached(const char *batch, long uid, void *arg)
{
	(void)arg;
	return saturn_profile_cached(batch, uid);
}

void saturn_measure_poll(const saturn_ctx_t *ctx)
{
	slurmctld_lock_t read_lock = {.job = READ_LOCK};
	saturn_bpol_actions_t acts = {0};
	saturn_companion_t *job;
	int any = 0;

	for (int r = 0; r < nrecs && !any; r++)
		any = recs[r].r.job_id != 0;
	if (!any)
		return;
	job = xcalloc(nrecs, sizeof(*job));
	lock_slurmctld(read_lock);
	for (int r = 0; r < nrecs; r++)
		if (recs[r].r.job_id)
			saturn_companion_state(recs[r].r.job_id, &job[r]);
	unlock_slurmctld(read_lock);
	for (int r = 0; r < nrecs; r++)
		if (saturn_bpol_measure_poll(&recs[r].r, &job[r], (double)time(NULL), r, &acts) < 0)
			error("sched/saturn: batch %s of uid %ld: out of memory polling measurement job %u",
			      recs[r].batch, recs[r].uid, recs[r].r.job_id);
	for (int i = 0; i < acts.n; i++) {
		measure_rec_t *m = &recs[acts.a[i].tag];

		if (acts.a[i].kind == SATURN_BPOL_LOG)
			saturn_bpol_log(&acts.a[i], m->key, m->uid);
		else if (acts.a[i].kind == SATURN_BPOL_SAVE)
			rec_save(ctx, m);
	}
	saturn_bpol_actions_free(&acts);
	xfree(job);
}

/* What to measure and hold is saturn_bpol_measure_batch's decision
 * (lib/batch_policy.h); here the records are read, the owners gathered
 * under one read lock, the jobs submitted without locks, and the holds
 * written into the decisions. */
void saturn_measure_pass(saturn_ctx_t *ctx, const saturn_snapshot_t *s, saturn_decision_t *d,
			 int nd)
{
	/* as for reading a job's script anywhere in slurmctld */
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .part = READ_LOCK};
	saturn_bpol_measure_t w;
	saturn_bpol_actions_t acts = {0};
	saturn_batch_owner_t *owner = NULL; /* per action: SUBMIT_MEASURE's owner */
	int *rec, nact, nsubmit = 0;
	saturn_snapshot_t sc;

	if (!ctx->cfg.profiler || !ctx->cfg.measure_predicted || nd <= 0)
		return;
	/* the class profiles as last loaded too: the policy keeps pointers
	 * into them (a reload would free them); sc is s but for that */
	sc = *s;
	if (sc.class_profile)
		sc.class_profile = saturn_profile_cached_class;
	s = &sc;
	if (saturn_bpol_measure_prepare(s, d, nd, cached, NULL, &w) < 0) {
		error("sched/saturn: out of memory grouping decisions by batch: no measurement this cycle");
		return;
	}
	if (w.nbatches == 0) {
		saturn_bpol_measure_free(&w);
		return;
	}
	/* the records of the batches with a decision due (read once) */
	rec = xcalloc(w.nbatches, sizeof(*rec));
	for (int b = 0; b < w.nbatches; b++) {
		const saturn_snap_job_t *j = &s->jobs[d[w.due[b]].job];

		rec[b] = rec_get(ctx, j->batch, j->uid, w.bclass[b]);
	}
	for (int b = 0; b < w.nbatches; b++) {
		measure_rec_t *m = &recs[rec[b]];
		/* the record as it was, should the user's companion jobs be
		 * at their limit (the submission then waits, nothing tried) */
		char *was = saturn_meas_rec_format(&m->r);
		int n0 = acts.n, st = was ? saturn_bpol_measure_batch(s, d, &w, b, &m->r, b, &acts) : -1;

		if (st < 0)
			error("sched/saturn: batch %s of uid %ld: out of memory deciding on measurement: none this cycle",
			      m->batch, m->uid);
		else if (st > 0 && saturn_companion_gate(ctx, &acts, n0, m->uid) == 1) {
			saturn_meas_rec_free(&m->r);
			if (saturn_meas_rec_parse(was, &m->r) < 0)
				error("sched/saturn: batch %s of uid %ld: out of memory keeping the measurement record",
				      m->batch, m->uid);
		}
		free(was);
	}
	nact = acts.n;
	for (int i = 0; i < nact; i++)
		nsubmit += acts.a[i].kind == SATURN_BPOL_SUBMIT_MEASURE;
	if (nsubmit) {
		owner = xcalloc(nact, sizeof(*owner));
		lock_slurmctld(read_lock);
		for (int i = 0; i < nact; i++)
			if (acts.a[i].kind == SATURN_BPOL_SUBMIT_MEASURE)
				saturn_batch_owner(s->jobs[d[w.due[acts.a[i].tag]].job].job_id,
						   &owner[i]);
		unlock_slurmctld(read_lock);
	}
	/* carry out, without locks; a submission's outcome is appended */
	for (int i = 0; i < acts.n; i++) {
		measure_rec_t *m = &recs[rec[acts.a[i].tag]];
		const char *type;
		uint32_t id = 0;

		switch (acts.a[i].kind) {
		case SATURN_BPOL_LOG:
			saturn_bpol_log(&acts.a[i], m->key, m->uid);
			break;
		case SATURN_BPOL_SUBMIT_MEASURE:
			if (owner[i].script && (long)owner[i].uid == m->uid) {
				char *args = xstrdup_printf("--measure '%s'", acts.a[i].text);

				if (!m->klass[0])
					id = saturn_submit_measure(ctx, m->batch, &owner[i], args,
								   acts.a[i].gpus, acts.a[i].nodes);
				else if ((type = saturn_bpol_class_gpu_type(s, m->klass)))
					/* on that class's GPUs, into NAME@CLASS.json */
					id = saturn_submit_class_companion(ctx, "measure", m->batch,
									   &owner[i], args,
									   acts.a[i].gpus,
									   m->klass, type);
				else
					error("sched/saturn: batch %s of uid %ld: class %s has no single GPU type: no measurement job for its profile",
					      m->batch, m->uid, m->klass);
				xfree(args);
			}
			/* acts.a may move here */
			if (saturn_bpol_measure_submitted(d, &acts, i, id, &m->r) < 0) {
				error("sched/saturn: batch %s of uid %ld: out of memory recording measurement job %u",
				      m->batch, m->uid, id);
				m->r.job_id = id;
				rec_save(ctx, m);
			}
			break;
		case SATURN_BPOL_SAVE:
			rec_save(ctx, m);
			break;
		case SATURN_BPOL_HOLD:
			for (int k = 0; k < acts.a[i].ntasks; k++) {
				saturn_decision_t *dk = &d[acts.a[i].tasks[k]];

				dk->release = 0;
				snprintf(dk->reason, sizeof(dk->reason), "%s", acts.a[i].text);
			}
			break;
		default:
			break;
		}
	}
	for (int i = 0; owner && i < nact; i++)
		saturn_batch_owner_free(&owner[i]);
	xfree(owner);
	xfree(rec);
	saturn_bpol_actions_free(&acts);
	saturn_bpol_measure_free(&w);
}

void saturn_measure_prune(const saturn_ctx_t *ctx, const saturn_live_t *live,
			  saturn_uidtab_t *active)
{
	int w = 0;

	for (int i = 0; i < nrecs; i++) {
		measure_rec_t *m = &recs[i];

		/* a job recorded as running counts and keeps its record
		 * (saturn_measure_poll forgets it once it ended) */
		if (m->r.job_id && saturn_uidtab_add(active, m->uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		if (m->r.job_id || saturn_live_has(live, m->uid, m->batch)) {
			recs[w++] = *m;
			continue;
		}
		saturn_companion_files_remove(ctx, "measure", m->uid, m->key);
		saturn_meas_rec_free(&m->r);
		xfree(m->key);
	}
	/* zeroed: a new record starts from nothing (rec_get) */
	if (w < nrecs)
		memset(&recs[w], 0, (size_t)(nrecs - w) * sizeof(*recs));
	nrecs = w;
}

int saturn_measure_active(long uid, const char *key)
{
	for (int i = 0; i < nrecs; i++)
		if (recs[i].uid == uid && recs[i].r.job_id && !strcmp(recs[i].key, key))
			return 1;
	return 0;
}

void saturn_measure_fini(void)
{
	for (int i = 0; i < nrecs; i++) {
		saturn_meas_rec_free(&recs[i].r);
		xfree(recs[i].key);
	}
	xfree(recs);
	nrecs = 0;
}
