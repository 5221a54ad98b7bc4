/* saturn_profiles.c - sched/saturn's companion profiler jobs
 * (saturn_profiler=): one saturn-profile:NAME job per batch without a
 * profile (saturn_profcache.c reads and caches the profiles), submitted
 * without locks through libslurm, at most saturn_companion_jobs per user
 * (saturn_companion.c), its record kept in STATE_DIR/profiler-UID-NAME.job
 * while the batch has tasks, fallback to the users' requests when it ends
 * without a profile. A batch is (user, name) everywhere here: the job,
 * its record and the fallback note are per (uid, name), so one user's
 * batch never sees, suppresses or replaces another user's of the same
 * name. What to do about a batch without a profile is decided by
 * saturn_bpol_profiler (lib/batch_policy.c); this file gathers the facts,
 * carries out the actions and keeps the records.
 */
#include "config.h" /* Slurm's */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jobenv.h"
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
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "batch_policy.h"
#include "budget.h"
#include "formats.h"
#include "jobreq.h"
#include "profile.h"
#include "progress.h"
#include "safefile.h"
#include "sched_core.h"

#include "saturn_companion.h"
#include "saturn_files.h"
#include "saturn_profcache.h"
#include "saturn_profiles.h"

/* --- companion profiler job (saturn_profiler) -------------------------- */

/* A batch's profiler record (lib/batch_policy.h decides what it becomes). */
typedef struct prof_job {
	char batch[SATURN_NAME_LEN];
	long uid;
	saturn_prof_rec_t r;
	int active; /* its job pending or running at the last prune */
} prof_job_t;

static prof_job_t *prof_jobs;
static int nprof_jobs;

static prof_job_t *prof_find(const char *batch, long uid)
{
	for (int i = 0; i < nprof_jobs; i++)
		if (prof_jobs[i].uid == uid && !strcmp(prof_jobs[i].batch, batch))
			return &prof_jobs[i];
	return NULL;
}

/* The batch's record: from memory, else from its file (once), else new.
 * May move the records: pointers into prof_jobs are stale after it. */
static int prof_entry(const saturn_ctx_t *ctx, const char *batch, long uid)
{
	prof_job_t *e;
	char *buf;

	if ((e = prof_find(batch, uid)))
		return (int)(e - prof_jobs);
	xrecalloc(prof_jobs, nprof_jobs + 1, sizeof(*prof_jobs));
	e = &prof_jobs[nprof_jobs++];
	memset(e, 0, sizeof(*e));
	snprintf(e->batch, sizeof(e->batch), "%s", batch);
	e->uid = uid;
	if ((buf = saturn_record_read(ctx, "profiler", uid, batch))) {
		if (saturn_prof_rec_parse(buf, &e->r) < 0)
			error("sched/saturn: batch %s of uid %ld: ignoring %s/profiler-%ld-%s.job: not \"JOBID ARRAYID[ fallback]\"",
			      batch, uid, ctx->state_dir, uid, batch);
		else
			info("sched/saturn: batch %s of uid %ld: profiler job %u recorded before restart%s",
			     batch, uid, e->r.job_id,
			     e->r.fell_back ? " (fell back to the users' requests)" : "");
		free(buf);
	}
	return nprof_jobs - 1;
}

static void prof_save(const saturn_ctx_t *ctx, const prof_job_t *e)
{
	char txt[64];

	saturn_prof_rec_format(&e->r, txt, sizeof(txt));
	saturn_record_write(ctx, "profiler", e->uid, e->batch, e->r.job_id, txt);
}

int saturn_batch_owner(uint32_t job_id, saturn_batch_owner_t *o)
{
	job_record_t *jr;

	memset(o, 0, sizeof(*o));
	if ((jr = find_job_record(job_id))) {
		buf_t *b = get_job_script(jr);

		o->uid = jr->user_id;
		o->gid = jr->group_id;
		o->account = xstrdup(jr->account);
		o->partition = xstrdup(jr->partition);
		if (b) {
			o->script_len = strnlen(get_buf_data(b), size_buf(b));
			o->script = xstrndup(get_buf_data(b), o->script_len);
			FREE_NULL_BUFFER(b);
		}
	}
	return o->script ? 0 : -1;
}

void saturn_batch_owner_free(saturn_batch_owner_t *o)
{
	xfree(o->account);
	xfree(o->partition);
	xfree(o->script);
}

static uint32_t submit_companion(const saturn_ctx_t *ctx, const char *kind, const char *batch,
				 const saturn_batch_owner_t *o, const char *args, int gpus,
				 int nodes, const char *klass, const char *gpu_type);

/* The per-class profiler jobs submitted (submit_class_profilers), kept in
 * memory; after a restart found again among the jobs by their names
 * (saturn-profile:NAME@CLASS, its owner the batch's user: class_jobs_find),
 * so the tasks wait for them as before. An entry goes once its job has
 * ended. */
typedef struct class_job {
	char batch[SATURN_NAME_LEN];
	long uid;
	char klass[SATURN_CLASS_NAME_MAX + 1];
	uint32_t job_id;
} class_job_t;

static class_job_t *class_jobs;
static int nclass_jobs;
static int class_jobs_found; /* the job records looked through once */

uint32_t saturn_submit_profiler(const saturn_ctx_t *ctx, const char *kind, const char *batch,
				const saturn_batch_owner_t *o, const char *args, int gpus)
{
	return submit_companion(ctx, kind, batch, o, args, gpus, 1, NULL, NULL);
}

uint32_t saturn_submit_measure(const saturn_ctx_t *ctx, const char *batch,
			       const saturn_batch_owner_t *o, const char *args, int gpus, int nodes)
{
	return submit_companion(ctx, "measure", batch, o, args, gpus, nodes > 1 ? nodes : 1, NULL,
				NULL);
}

uint32_t saturn_submit_class_companion(const saturn_ctx_t *ctx, const char *kind, const char *batch,
				       const saturn_batch_owner_t *o, const char *args, int gpus,
				       const char *klass, const char *gpu_type)
{
	return submit_companion(ctx, kind, batch, o, args, gpus, 1, klass, gpu_type);
}

/* saturn_internode_bw: " --internode-bw GBS --internode-nodes K" for a
 * profiler job (xmalloc'd), K the cluster's node count, at least 2, at
 * most 8 (predictions beyond a partition's MaxNodes are left out of the
 * plans). */
static char *internode_args(const saturn_ctx_t *ctx)
{
	int k = node_record_count < 2 ? 2 : node_record_count > 8 ? 8 : node_record_count;

	return xstrdup_printf(" --internode-bw %g --internode-nodes %d", ctx->cfg.internode_gbs, k);
}

static uint32_t submit_companion(const saturn_ctx_t *ctx, const char *kind, const char *batch,
				 const saturn_batch_owner_t *o, const char *args, int gpus,
				 int nodes, const char *klass, const char *gpu_type)
{
	/* STATE_DIR/jobs/UID: work folder and output; STATE_DIR/scripts/: the
	 * script copy, 0600 the user's (per user: two users' batches of one
	 * name never share a copy); PROFILE_DIR/UID/NAME.json: the profile,
	 * PROFILE_DIR/UID/cache: made by the profiler itself, as the user */
	char *dir = xstrdup_printf("%s/jobs/%u", ctx->state_dir, o->uid);
	char *sname = klass ? xstrdup_printf("%u-%s@%s.%s.script", o->uid, batch, klass, kind)
			    : xstrdup_printf("%u-%s.%s.script", o->uid, batch, kind);
	char *sdir = xstrdup_printf("%s/scripts", ctx->state_dir);
	char *copy = xstrdup_printf("%s/%s", sdir, sname);
	char *out = saturn_profile_path(ctx, o->uid, batch, klass);
	char *what = klass ? xstrdup_printf("%s@%s", batch, klass) : xstrdup(batch);
	char *cache = NULL, *internode = NULL;
	job_desc_msg_t desc;
	submit_response_msg_t *resp = NULL;
	saturn_error_t err = {{0}};
	uint32_t id = 0;
	int jfd, pfd;

	{
		char *jobs = xstrdup_printf("%s/jobs", ctx->state_dir);

		jfd = saturn_user_dir(ctx, ctx->jobs_fd, jobs, o->uid, o->gid);
		xfree(jobs);
	}
	pfd = saturn_user_dir(ctx, ctx->profile_fd, ctx->profile_dir, o->uid, o->gid);
	if (jfd < 0 || pfd < 0) {
		error("sched/saturn: batch %s of uid %u: no %s job: the user's folders are not usable (logged above)",
		      batch, o->uid, kind);
		goto done;
	}
	if (ctx->cfg.profile_cache)
		cache = xstrdup_printf("%s/%u/cache", ctx->profile_dir, o->uid);
	if (ctx->scripts_fd < 0 ||
	    saturn_file_write_at(ctx->scripts_fd, sdir, sname, o->script, o->script_len,
				 (long)o->uid, (long)o->gid, 0600, &err) < 0) {
		error("sched/saturn: batch %s of uid %u: cannot write the script copy %s: %s",
		      batch, o->uid, copy, ctx->scripts_fd < 0 ? "no scripts folder" : err.text);
		goto done;
	}
	slurm_init_job_desc_msg(&desc);
	desc.name = xstrdup_printf("saturn-%s:%s", kind, what);
	desc.user_id = o->uid;
	desc.group_id = o->gid;
	desc.account = xstrdup(o->account);
	desc.partition = xstrdup(o->partition);
	desc.min_nodes = (uint32_t)nodes;
	desc.max_nodes = (uint32_t)nodes;
	if (gpu_type && gpu_type[0])
		desc.tres_per_node = xstrdup_printf(SATURN_TRES_GRES_PREFIX "gpu:%s:%d", gpu_type, gpus);
	else
		desc.tres_per_node = xstrdup_printf(SATURN_TRES_GRES_PREFIX "gpu:%d", gpus);
	desc.time_limit = ctx->cfg.profile_time_min;
	desc.work_dir = xstrdup(dir);
	desc.std_out = xstrdup_printf("%s/%u-%s-%s-%%j.out", dir, o->uid, what, kind);
	if (!strcmp(kind, "profile") && ctx->cfg.internode_gbs > 0)
		internode = internode_args(ctx);
	desc.script = xstrdup_printf("#!/bin/sh\nexec '%s' --batch '%s' --script '%s' %s%s%s%s --output '%s'%s%s%s%s\n",
				     ctx->cfg.profiler, batch, copy, args,
				     klass ? " --class '" : "", klass ? klass : "", klass ? "'" : "",
				     out, cache ? " --cache '" : " --no-cache", cache ? cache : "",
				     cache ? "'" : "", internode ? internode : "");
	desc.env_size = 2;
	desc.environment = xcalloc(3, sizeof(char *));
	desc.environment[0] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	desc.environment[1] = xstrdup_printf(SATURN_PROFILE_BATCH_ENV "=%s", batch);
	if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS || !resp) {
		error("sched/saturn: batch %s of uid %u: cannot submit the %s job: %m", batch,
		      o->uid, !strcmp(kind, "profile") ? "profiler" : "measurement");
	} else {
		id = SATURN_SUBMIT_RESP_JOB_ID(resp);
		info("sched/saturn: batch %s of uid %u: submitted %s job %u (%s, %d node(s), %d min): %s %s --output %s",
		     batch, o->uid, !strcmp(kind, "profile") ? "profiler" : "measurement", id,
		     desc.tres_per_node, nodes, ctx->cfg.profile_time_min, ctx->cfg.profiler, args,
		     out);
	}
	slurm_free_submit_response_response_msg(resp);
	xfree(desc.name);
	xfree(desc.account);
	xfree(desc.partition);
	xfree(desc.tres_per_node);
	xfree(desc.work_dir);
	xfree(desc.std_out);
	xfree(desc.script);
	for (int i = 0; i < 2; i++)
		xfree(desc.environment[i]);
	xfree(desc.environment);
done:
	if (jfd >= 0)
		close(jfd);
	if (pfd >= 0)
		close(pfd);
	xfree(dir);
	xfree(sname);
	xfree(sdir);
	xfree(copy);
	xfree(out);
	xfree(what);
	xfree(cache);
	xfree(internode);
	return id;
}

/* After a batch's profiler job was submitted: one more profiler job per
 * node class (node_class.h) the batch's partitions offer (and its GPU type
 * and --constraint allow), when they offer more than one, each on that
 * class's GPU type and writing PROFILE_DIR/UID/NAME@CLASS.json (the build plans each class with its
 * own profile once it is there: saturn_lookup_class_profile). A class
 * whose nodes have no single GPU type cannot be asked for by type and is
 * left to the batch's profile. Not tracked: the batch's tasks wait only
 * for the first job, the class profiles refine the plan as they come. */
/* Whether the batch of j0 may use snapshot node i: one of its
 * partitions, its GPU type and --constraint. */
static int usable(const saturn_snapshot_t *s, const saturn_snap_job_t *j0, int i)
{
	const saturn_snap_node_t *n = &s->nodes[i];

	if (j0->part_mask && !(n->part_mask & j0->part_mask))
		return 0;
	return saturn_snap_job_fits_node(j0, n) == 1;
}

static void submit_class_profilers(saturn_ctx_t *ctx, const saturn_snapshot_t *s,
				   const saturn_snap_job_t *j0, const saturn_batch_owner_t *o,
				   const char *args, int gpus)
{
	int nclass = 0, w = 0;

	/* a new submission of the batch: the old class jobs are not waited for */
	for (int i = 0; i < nclass_jobs; i++)
		if (class_jobs[i].uid != j0->uid || strcmp(class_jobs[i].batch, j0->batch))
			class_jobs[w++] = class_jobs[i];
	nclass_jobs = w;
	/* the nodes' classes: set by the gather (saturn_snapshot_classify) */
	for (int i = 0; i < s->nnodes; i++) {
		const saturn_snap_node_t *n = &s->nodes[i];
		int seen = 0;

		if (!usable(s, j0, i))
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = usable(s, j0, k) && !strcmp(s->nodes[k].klass, n->klass);
		nclass += !seen;
	}
	if (nclass < 2)
		return;
	for (int i = 0; i < s->nnodes; i++) {
		const saturn_snap_node_t *n = &s->nodes[i];
		int seen = 0, maxg = 0, typed = 1;

		if (!usable(s, j0, i))
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = usable(s, j0, k) && !strcmp(s->nodes[k].klass, n->klass);
		if (seen)
			continue;
		for (int k = i; k < s->nnodes; k++) {
			const saturn_snap_node_t *m = &s->nodes[k];

			if (strcmp(m->klass, n->klass) || !usable(s, j0, k))
				continue;
			if (m->gpus > maxg)
				maxg = m->gpus;
			if (!m->gpu_types[0] || strchr(m->gpu_types, ',') ||
			    strcmp(m->gpu_types, n->gpu_types))
				typed = 0;
		}
		if (!typed || !saturn_class_name_ok(n->klass)) {
			info("sched/saturn: batch %s of uid %ld: class %s has no single GPU type: planned from the batch's profile",
			     j0->batch, j0->uid, n->klass);
			continue;
		}
		{
			uint32_t id =
			    submit_companion(ctx, "profile", j0->batch, o, args,
					     gpus < maxg ? gpus : maxg, 1, n->klass, n->gpu_types);
			class_job_t *c;

			if (!id)
				continue;
			/* counted against saturn_companion_jobs from now on */
			if (saturn_uidtab_add(&ctx->companions, j0->uid, 1) < 0)
				error("sched/saturn: out of memory counting companion jobs");
			xrecalloc(class_jobs, nclass_jobs + 1, sizeof(*class_jobs));
			c = &class_jobs[nclass_jobs++];
			snprintf(c->batch, sizeof(c->batch), "%s", j0->batch);
			c->uid = j0->uid;
			snprintf(c->klass, sizeof(c->klass), "%s", n->klass);
			c->job_id = id;
		}
	}
}

/* After a start: the class profiler jobs not ended, from the job records
 * (one pass over the jobs under a read lock, once). A job named so by its
 * user makes that user's batch wait until it ends, nobody else's. */
static void class_jobs_find(void)
{
	slurmctld_lock_t read_lock = {.job = READ_LOCK};
	struct listIterator *it;
	job_record_t *jr;
	int found = 0;

	lock_slurmctld(read_lock);
	it = list_iterator_create(job_list);
	while ((jr = list_next(it))) {
		char batch[SATURN_NAME_LEN], klass[SATURN_CLASS_NAME_MAX + 1];
		int known = 0;
		class_job_t *c;

		if (IS_JOB_FINISHED(jr) || IS_JOB_COMPLETING(jr) ||
		    saturn_bpol_class_job_name(jr->name, batch, sizeof(batch), klass,
					       sizeof(klass)) < 0)
			continue;
		for (int i = 0; i < nclass_jobs && !known; i++)
			known = class_jobs[i].job_id == jr->job_id;
		if (known)
			continue;
		xrecalloc(class_jobs, nclass_jobs + 1, sizeof(*class_jobs));
		c = &class_jobs[nclass_jobs++];
		snprintf(c->batch, sizeof(c->batch), "%s", batch);
		snprintf(c->klass, sizeof(c->klass), "%s", klass);
		c->uid = (long)jr->user_id;
		c->job_id = jr->job_id;
		found++;
	}
	list_iterator_destroy(it);
	unlock_slurmctld(read_lock);
	if (found)
		info("sched/saturn: %d class profiler job(s) found among the jobs: their batches' tasks wait for them",
		     found);
}

/* Whether PROFILE_DIR/UID/NAME.json is there (whatever it is: the
 * lookup judges it). */
static int profile_exists(const saturn_ctx_t *ctx, const char *batch, long uid)
{
	struct stat st;
	int ufd;

	if (saturn_profile_stat(ctx, batch, NULL, uid, &ufd, &st) < 0)
		return 0;
	close(ufd);
	return 1;
}

/* The facts the cycle decides each batch's profiler job from
 * (cycle_profiler.h): for every batch (uid, name) of s, whether its
 * profile file is there, its record (read from its file once) and the
 * state of its profiler job, and its per-class profiler jobs not ended.
 * Files without locks; the jobs' states under one read lock; ended class
 * jobs are forgotten afterwards. Valid until the next call. */
static saturn_profstate_t facts;

const saturn_profstate_t *saturn_profiler_facts(saturn_ctx_t *ctx, const saturn_snapshot_t *s)
{
	slurmctld_lock_t read_lock = {.job = READ_LOCK};
	saturn_companion_t *cst = NULL;
	saturn_batch_groups_t g;
	int *rec, any_job = 0, w = 0;

	facts.n = 0;
	if (!ctx->cfg.profiler || s->njobs == 0)
		return NULL;
	if (saturn_batch_groups(s, NULL, s->njobs, &g) < 0) {
		error("sched/saturn: out of memory grouping tasks by batch: no profiler jobs this cycle");
		return NULL;
	}
	if (!class_jobs_found) {
		class_jobs_find();
		class_jobs_found = 1;
	}
	rec = xcalloc(g.ngroups + 1, sizeof(*rec));
	/* without locks: the profile files, the records (read once) */
	for (int b = 0; b < g.ngroups; b++) {
		const saturn_snap_job_t *j0 = &s->jobs[g.member[g.first[b]]];
		saturn_profstate_entry_t e;

		memset(&e, 0, sizeof(e));
		e.uid = j0->uid;
		snprintf(e.batch, sizeof(e.batch), "%s", j0->batch);
		e.exists = profile_exists(ctx, j0->batch, j0->uid);
		/* the policy reads no record of a batch with a profile */
		rec[b] = e.exists ? -1 : prof_entry(ctx, j0->batch, j0->uid);
		if (rec[b] >= 0)
			e.rec = prof_jobs[rec[b]].r;
		any_job |= e.rec.job_id != 0;
		for (int i = 0; i < nclass_jobs && e.nclass < SATURN_CLASS_RULES_MAX; i++)
			if (class_jobs[i].uid == e.uid && !strcmp(class_jobs[i].batch, e.batch)) {
				snprintf(e.cls[e.nclass].klass, sizeof(e.cls[e.nclass].klass), "%s",
					 class_jobs[i].klass);
				e.cls[e.nclass++].job.job_id = class_jobs[i].job_id;
			}
		if (saturn_profstate_put(&facts, &e) < 0)
			error("sched/saturn: batch %s of uid %ld: out of memory gathering its "
			      "profiler facts: planned as it is",
			      e.batch, e.uid);
	}
	/* the jobs' states, under one read lock */
	if (any_job || nclass_jobs) {
		cst = xcalloc(nclass_jobs + 1, sizeof(*cst));
		lock_slurmctld(read_lock);
		for (int i = 0; i < facts.n; i++) {
			saturn_profstate_entry_t *e = &facts.e[i];

			if (e->rec.job_id)
				saturn_companion_state(e->rec.job_id, &e->job);
			for (int k = 0; k < e->nclass; k++)
				saturn_companion_state(e->cls[k].job.job_id, &e->cls[k].job);
		}
		for (int i = 0; i < nclass_jobs; i++)
			saturn_companion_state(class_jobs[i].job_id, &cst[i]);
		unlock_slurmctld(read_lock);
	}
	/* an ended class job is waited for no more */
	for (int i = 0; i < nclass_jobs; i++)
		if (!cst || cst[i].state != SATURN_COMPANION_ENDED)
			class_jobs[w++] = class_jobs[i];
	nclass_jobs = w;
	xfree(cst);
	xfree(rec);
	saturn_batch_groups_free(&g);
	return &facts;
}

int saturn_profiler_apply(saturn_ctx_t *ctx, const saturn_snapshot_t *s, saturn_cycle_out_t *out)
{
	/* as for reading a job's script anywhere in slurmctld */
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .part = READ_LOCK};
	saturn_bpol_actions_t acts = {0};
	saturn_batch_owner_t *owner;
	int failed = 0;

	/* the records the cycle changed, kept and written */
	for (int i = 0; i < out->nprof_records; i++) {
		const saturn_cycle_prof_rec_t *r = &out->prof_records[i];
		int k = prof_entry(ctx, r->batch, r->uid);

		prof_jobs[k].r = r->rec;
		prof_save(ctx, &prof_jobs[k]);
	}
	if (!out->nprofilers)
		return 0;
	owner = xcalloc(out->nprofilers, sizeof(*owner));
	lock_slurmctld(read_lock);
	for (int i = 0; i < out->nprofilers; i++)
		saturn_batch_owner(out->profilers[i].owner, &owner[i]);
	unlock_slurmctld(read_lock);
	/* submit without locks; each outcome into its record and reasons */
	for (int i = 0; i < out->nprofilers; i++) {
		const saturn_cycle_profiler_t *p = &out->profilers[i];
		const saturn_snap_job_t *j0 = NULL;
		int k = prof_entry(ctx, p->batch, p->uid);
		uint32_t id = 0;

		/* one of its tasks as gathered (they wait for it, out of s) */
		for (int h = 0; h < out->nprof_holds && !j0; h++)
			if (out->prof_holds[h].profiler == i)
				j0 = &out->prof_holds[h].job;
		if (owner[i].script && (long)owner[i].uid == p->uid) {
			char *args = xstrdup_printf("--task-ids '%s'", p->task_ids);

			id = saturn_submit_profiler(ctx, "profile", p->batch, &owner[i], args,
						    p->gpus);
			if (id && j0)
				submit_class_profilers(ctx, s, j0, &owner[i], args, p->gpus);
			xfree(args);
		} else {
			error("sched/saturn: batch %s of uid %ld: no script for a profiler job "
			      "(job %u or its script is gone)",
			      p->batch, p->uid, p->owner);
		}
		failed += id == 0;
		/* counted against saturn_companion_jobs from now on */
		if (saturn_uidtab_add(&ctx->companions, p->uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		if (saturn_cycle_profiler_submitted(out, i, id, &prof_jobs[k].r, &acts) < 0) {
			error("sched/saturn: batch %s of uid %ld: out of memory recording profiler "
			      "job %u",
			      p->batch, p->uid, id);
			prof_jobs[k].r.job_id = id;
			prof_jobs[k].r.fell_back = !id;
			prof_save(ctx, &prof_jobs[k]);
		}
		for (int a = 0; a < acts.n; a++)
			if (acts.a[a].kind == SATURN_BPOL_LOG)
				saturn_bpol_log(&acts.a[a], p->batch, p->uid);
			else if (acts.a[a].kind == SATURN_BPOL_SAVE)
				prof_save(ctx, &prof_jobs[k]);
		saturn_bpol_actions_free(&acts);
	}
	for (int i = 0; i < out->nprofilers; i++)
		saturn_batch_owner_free(&owner[i]);
	xfree(owner);
	return failed;
}

/* Whether job is one to count and keep: pending or running (not looked
 * up counts as running). */
static int job_active(const saturn_companion_t *c)
{
	return c->job_id && c->state != SATURN_COMPANION_ENDED;
}

void saturn_profiles_prune(const saturn_ctx_t *ctx, const saturn_live_t *live,
			   saturn_uidtab_t *active)
{
	slurmctld_lock_t read_lock = {.job = READ_LOCK};
	saturn_companion_t *pj = NULL, *cj = NULL;
	int w = 0, any = nclass_jobs > 0;

	for (int i = 0; i < nprof_jobs && !any; i++)
		any = prof_jobs[i].r.job_id != 0;
	if (any) {
		pj = xcalloc(nprof_jobs + 1, sizeof(*pj));
		cj = xcalloc(nclass_jobs + 1, sizeof(*cj));
		lock_slurmctld(read_lock);
		for (int i = 0; i < nprof_jobs; i++)
			saturn_companion_state(prof_jobs[i].r.job_id, &pj[i]);
		for (int i = 0; i < nclass_jobs; i++)
			saturn_companion_state(class_jobs[i].job_id, &cj[i]);
		unlock_slurmctld(read_lock);
	}
	for (int i = 0; i < nprof_jobs; i++) {
		prof_job_t *e = &prof_jobs[i];
		int act = pj && job_active(&pj[i]);

		e->active = act;
		if (act && saturn_uidtab_add(active, e->uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		if (act || saturn_live_has(live, e->uid, e->batch)) {
			prof_jobs[w++] = *e;
			continue;
		}
		/* no task and no job left: the record and the script copy go */
		saturn_companion_files_remove(ctx, "profiler", e->uid, e->batch);
	}
	/* zeroed: a new record starts from nothing (prof_entry) */
	if (w < nprof_jobs)
		memset(&prof_jobs[w], 0, (size_t)(nprof_jobs - w) * sizeof(*prof_jobs));
	nprof_jobs = w;
	w = 0;
	for (int i = 0; i < nclass_jobs; i++) {
		if (cj && !job_active(&cj[i]))
			continue;
		if (saturn_uidtab_add(active, class_jobs[i].uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		class_jobs[w++] = class_jobs[i];
	}
	if (w < nclass_jobs)
		memset(&class_jobs[w], 0, (size_t)(nclass_jobs - w) * sizeof(*class_jobs));
	nclass_jobs = w;
	xfree(pj);
	xfree(cj);
}

int saturn_profiles_active(long uid, const char *key)
{
	const char *at = strchr(key, '@');
	size_t len = at ? (size_t)(at - key) : strlen(key);

	for (int i = 0; i < nprof_jobs; i++)
		if (prof_jobs[i].uid == uid && prof_jobs[i].active && !at &&
		    !strcmp(prof_jobs[i].batch, key))
			return 1;
	for (int i = 0; i < nclass_jobs && at; i++)
		if (class_jobs[i].uid == uid && !strncmp(class_jobs[i].batch, key, len) &&
		    !class_jobs[i].batch[len] && !strcmp(class_jobs[i].klass, at + 1))
			return 1;
	return 0;
}

void saturn_profiles_fini(void)
{
	saturn_profcache_fini();
	xfree(prof_jobs);
	nprof_jobs = 0;
	xfree(class_jobs);
	nclass_jobs = 0;
	class_jobs_found = 0;
	saturn_profstate_free(&facts);
}
