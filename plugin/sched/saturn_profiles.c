/* saturn_profiles.c - sched/saturn's profiles: load and cache each batch's
 * saturn-profile/1 file (owner-checked, reloaded when it changes), and the
 * companion profiler jobs (saturn_profiler=): one saturn-profile:NAME job per
 * batch without a profile, submitted without locks through libslurm, its
 * record kept in STATE_DIR/profiler-NAME.job across restarts, fallback to the
 * users' requests when it ends without a profile.
 */
#include "config.h" /* Slurm's */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "formats.h"
#include "profile.h"
#include "progress.h"
#include "safefile.h"
#include "sched_core.h"

#include "saturn_int.h"

/* --- profile files (no locks) -------------------------------------------- */

/* A profile is rewritten by rename (saturn-profile --measure), so a new
 * version shows as a new inode even within the same second. */
typedef struct profile_entry {
	char batch[SATURN_NAME_LEN];
	time_t mtime;
	ino_t ino;
	int missing;
	saturn_profile_t *profile;
} profile_entry_t;

static profile_entry_t *profiles;
static int nprofiles;

static int batch_name_ok(const char *b)
{
	if (!b[0] || b[0] == '.')
		return 0;
	for (const char *c = b; *c; c++)
		if (*c == '/')
			return 0;
	return 1;
}

/* The status of PROFILE_DIR/UID/NAME.json without following a link: 0 (st
 * filled), -1 when absent or the user's folder is missing or refused. The
 * user's folder is made first (root controller), so users find it ready. */
static int profile_stat(const char *batch, long uid, int *ufd, struct stat *st)
{
	char name[SATURN_NAME_LEN + 8];

	*ufd = saturn_user_dir(saturn_profile_fd, saturn_profile_dir, uid, SATURN_ANY_UID);
	if (*ufd < 0)
		return -1;
	snprintf(name, sizeof(name), "%s.json", batch);
	if (fstatat(*ufd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(*ufd);
		*ufd = -1;
		return -1;
	}
	return 0;
}

const saturn_profile_t *saturn_lookup_profile(const char *batch, long uid, void *arg)
{
	profile_entry_t *e = NULL;
	saturn_error_t err = {{0}};
	struct stat st;
	char *path, *dname, name[SATURN_NAME_LEN + 8], *buf;
	long owners[2] = {uid, 0};
	size_t len;
	int ufd;

	if (!batch_name_ok(batch))
		return NULL;
	for (int i = 0; i < nprofiles; i++)
		if (!strcmp(profiles[i].batch, batch))
			e = &profiles[i];
	if (!e) {
		xrecalloc(profiles, nprofiles + 1, sizeof(*profiles));
		e = &profiles[nprofiles++];
		snprintf(e->batch, sizeof(e->batch), "%s", batch);
	}
	path = xstrdup_printf("%s/%ld/%s.json", saturn_profile_dir, uid, batch);
	if (profile_stat(batch, uid, &ufd, &st) < 0) {
		if (!e->missing)
			info("sched/saturn: batch %s: no profile at %s: planning from the users' requests",
			     batch, path);
		e->missing = 1;
		saturn_profile_destroy(e->profile);
		e->profile = NULL;
		xfree(path);
		return NULL;
	}
	if ((e->profile || !e->missing) && st.st_mtime == e->mtime && st.st_ino == e->ino) {
		/* unchanged: loaded, or already rejected this version */
		close(ufd);
		xfree(path);
		return e->profile;
	}
	e->missing = 0;
	e->mtime = st.st_mtime;
	e->ino = st.st_ino;
	saturn_profile_destroy(e->profile);
	e->profile = NULL;
	/* read through the user's folder: a regular file of the batch's user
	 * (or root), no link, FIFO or device, size-capped */
	dname = xstrdup_printf("%s/%ld", saturn_profile_dir, uid);
	snprintf(name, sizeof(name), "%s.json", batch);
	buf = saturn_file_read_at(ufd, dname, name, owners, uid == 0 ? 1 : 2,
				  SATURN_PROFILE_MAX_BYTES, &len, NULL, &err);
	if (!buf) {
		error("sched/saturn: batch %s: profile refused: %s; planning from the users' requests",
		      batch, err.text);
	} else if (!(e->profile = saturn_profile_parse(buf, len, &err))) {
		error("sched/saturn: batch %s: profile rejected: %s: %s; planning from the users' requests",
		      batch, path, err.text);
	} else {
		info("sched/saturn: batch %s: profile %s loaded (%d task signature(s))", batch, path,
		     e->profile->ntasks);
	}
	free(buf);
	xfree(dname);
	close(ufd);
	xfree(path);
	return e->profile;
}

const saturn_profile_t *saturn_profile_cached(const char *batch)
{
	for (int i = 0; i < nprofiles; i++)
		if (!strcmp(profiles[i].batch, batch))
			return profiles[i].profile;
	return NULL;
}

const char *saturn_option_params(const saturn_snap_job_t *j, const saturn_decision_t *d)
{
	const saturn_profile_t *pr = saturn_profile_cached(j->batch);
	const saturn_profile_task_t *pt;

	if (!pr || !(pt = saturn_profile_find(pr, j->task_id >= 0 ? j->task_id : 0)))
		return "{}";
	for (int o = 0; o < pt->noptions; o++)
		if (pt->options[o].gpus == d->gpus && !xstrcmp(pt->options[o].technique, d->technique))
			return pt->options[o].params ? pt->options[o].params : "{}";
	return "{}";
}

/* --- companion profiler job (saturn_profiler) -------------------------- */

typedef struct prof_job {
	char batch[SATURN_NAME_LEN];
	uint32_t job_id;  /* 0 = none submitted */
	uint32_t array_id; /* the batch's (array) job id it profiles */
	int fell_back;    /* ended without a usable profile: users' requests */
} prof_job_t;

static prof_job_t *prof_jobs;
static int nprof_jobs;

/* STATE_DIR/KIND-BATCH.job: the plugin's record of a batch's companion job
 * (root only, not in the users' folders), kept across restarts. */
char *saturn_record_read(const char *kind, const char *batch)
{
	char *name = xstrdup_printf("%s-%s.job", kind, batch);
	long owners[2] = {(long)geteuid(), 0};
	size_t len;
	char *buf = saturn_state_fd < 0 ? NULL :
		saturn_file_read_at(saturn_state_fd, saturn_state_dir, name, owners, 2, 1 << 20,
				    &len, NULL, NULL);

	xfree(name);
	return buf;
}

void saturn_record_write(const char *kind, const char *batch, uint32_t job_id, const char *text)
{
	char *name = xstrdup_printf("%s-%s.job", kind, batch);
	saturn_error_t err = {{0}};

	if (saturn_state_fd < 0)
		saturn_error_set(&err, "no state folder");
	if (saturn_state_fd < 0 ||
	    saturn_file_write_at(saturn_state_fd, saturn_state_dir, name, text, strlen(text),
				 SATURN_ANY_UID, SATURN_ANY_UID, 0600, &err) < 0)
		error("sched/saturn: batch %s: cannot record %s job %u: %s", batch, kind, job_id,
		      err.text);
	xfree(name);
}

static prof_job_t *prof_entry(const char *batch)
{
	prof_job_t *e;
	char *buf;

	for (int i = 0; i < nprof_jobs; i++)
		if (!strcmp(prof_jobs[i].batch, batch))
			return &prof_jobs[i];
	xrecalloc(prof_jobs, nprof_jobs + 1, sizeof(*prof_jobs));
	e = &prof_jobs[nprof_jobs++];
	snprintf(e->batch, sizeof(e->batch), "%s", batch);
	/* "JOBID ARRAYID [fallback]" written by prof_save */
	if ((buf = saturn_record_read("profiler", batch))) {
		char *end;

		e->job_id = (uint32_t)strtoul(buf, &end, 10);
		e->array_id = (uint32_t)strtoul(end, NULL, 10);
		e->fell_back = strstr(buf, "fallback") != NULL;
		info("sched/saturn: batch %s: profiler job %u recorded before restart%s", batch,
		     e->job_id, e->fell_back ? " (fell back to the users' requests)" : "");
		free(buf);
	}
	return e;
}

static void prof_save(const prof_job_t *e)
{
	char txt[64];

	snprintf(txt, sizeof(txt), "%u %u%s\n", e->job_id, e->array_id,
		 e->fell_back ? " fallback" : "");
	saturn_record_write("profiler", e->batch, e->job_id, txt);
}

/* "profiler job N failed; " for a batch that fell back, else "". */
const char *saturn_profiler_note(const char *batch, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < nprof_jobs; i++)
		if (!strcmp(prof_jobs[i].batch, batch) && prof_jobs[i].fell_back)
			snprintf(buf, len, "saturn: profiler job %u failed, users' requests; ",
				 prof_jobs[i].job_id);
	return buf;
}

int saturn_batch_owner(uint32_t job_id, saturn_batch_owner_t *o)
{
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .part = READ_LOCK};
	job_record_t *jr;

	memset(o, 0, sizeof(*o));
	lock_slurmctld(read_lock);
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
	unlock_slurmctld(read_lock);
	return o->script ? 0 : -1;
}

void saturn_batch_owner_free(saturn_batch_owner_t *o)
{
	xfree(o->account);
	xfree(o->partition);
	xfree(o->script);
}

uint32_t saturn_submit_profiler(const char *kind, const char *batch, const saturn_batch_owner_t *o,
				const char *args, int gpus)
{
	/* STATE_DIR/jobs/UID: work folder and output; STATE_DIR/scripts/: the
	 * script copy, 0600 the user's; PROFILE_DIR/UID/NAME.json: the profile,
	 * PROFILE_DIR/UID/cache: made by the profiler itself, as the user */
	char *dir = xstrdup_printf("%s/jobs/%u", saturn_state_dir, o->uid);
	char *sname = xstrdup_printf("%u-%s.%s.script", o->uid, batch, kind);
	char *sdir = xstrdup_printf("%s/scripts", saturn_state_dir);
	char *copy = xstrdup_printf("%s/%s", sdir, sname);
	char *out = xstrdup_printf("%s/%u/%s.json", saturn_profile_dir, o->uid, batch);
	char *cache = NULL;
	job_desc_msg_t desc;
	submit_response_msg_t *resp = NULL;
	saturn_error_t err = {{0}};
	uint32_t id = 0;
	int jfd, pfd;

	{
		char *jobs = xstrdup_printf("%s/jobs", saturn_state_dir);

		jfd = saturn_user_dir(saturn_jobs_fd, jobs, o->uid, o->gid);
		xfree(jobs);
	}
	pfd = saturn_user_dir(saturn_profile_fd, saturn_profile_dir, o->uid, o->gid);
	if (jfd < 0 || pfd < 0) {
		error("sched/saturn: batch %s: no %s job: the user's folders are not usable (logged above)",
		      batch, kind);
		goto done;
	}
	if (saturn_cfg.profile_cache)
		cache = xstrdup_printf("%s/%u/cache", saturn_profile_dir, o->uid);
	if (saturn_scripts_fd < 0 ||
	    saturn_file_write_at(saturn_scripts_fd, sdir, sname, o->script, o->script_len,
				 (long)o->uid, (long)o->gid, 0600, &err) < 0) {
		error("sched/saturn: batch %s: cannot write the script copy %s: %s", batch, copy,
		      saturn_scripts_fd < 0 ? "no scripts folder" : err.text);
		goto done;
	}
	slurm_init_job_desc_msg(&desc);
	desc.name = xstrdup_printf("saturn-%s:%s", kind, batch);
	desc.user_id = o->uid;
	desc.group_id = o->gid;
	desc.account = xstrdup(o->account);
	desc.partition = xstrdup(o->partition);
	desc.min_nodes = 1;
	desc.max_nodes = 1;
	desc.tres_per_node = xstrdup_printf("gres:gpu:%d", gpus);
	desc.time_limit = saturn_cfg.profile_time_min;
	desc.work_dir = xstrdup(dir);
	desc.std_out = xstrdup_printf("%s/%s-%s-%%j.out", dir, batch, kind);
	desc.script = xstrdup_printf("#!/bin/sh\nexec '%s' --batch '%s' --script '%s' %s --output '%s'%s%s%s\n",
				     saturn_cfg.profiler, batch, copy, args, out,
				     cache ? " --cache '" : " --no-cache", cache ? cache : "",
				     cache ? "'" : "");
	desc.env_size = 2;
	desc.environment = xcalloc(3, sizeof(char *));
	desc.environment[0] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	desc.environment[1] = xstrdup_printf("SATURN_PROFILE_BATCH=%s", batch);
	if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS || !resp) {
		error("sched/saturn: batch %s: cannot submit the %s job: %m", batch,
		      !strcmp(kind, "profile") ? "profiler" : "measurement");
	} else {
		id = resp->job_id;
		info("sched/saturn: batch %s: submitted %s job %u (%d GPUs, %d min): %s %s --output %s",
		     batch, !strcmp(kind, "profile") ? "profiler" : "measurement", id, gpus,
		     saturn_cfg.profile_time_min, saturn_cfg.profiler, args, out);
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
	xfree(cache);
	return id;
}

/* Before building the problem: for batches with held tasks, no profile
 * file and saturn_profiler set, submit one profiler job, and take their
 * tasks out of this cycle's snapshot (held, reason "saturn: profiling")
 * until the profile appears or the job ends without one. */
void saturn_profiler_pass(saturn_snapshot_t *s)
{
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .part = READ_LOCK};
	slurmctld_lock_t write_lock = {.conf = READ_LOCK, .job = WRITE_LOCK};
	int maxg;

	if (!saturn_cfg.profiler)
		return;
	for (int i = 0; i < s->njobs; i++) {
		const char *batch = s->jobs[i].batch;
		struct stat st;
		int ufd;
		prof_job_t *e;
		int seen = 0, has_running = 0;

		for (int k = 0; k < i; k++)
			if (!strcmp(s->jobs[k].batch, batch))
				seen = 1;
		if (seen)
			continue;
		for (int k = i; k < s->njobs; k++)
			if (!strcmp(s->jobs[k].batch, batch) && s->jobs[k].state != SATURN_SNAP_HELD)
				has_running = 1;
		if (profile_stat(batch, s->jobs[i].uid, &ufd, &st) == 0) {
			close(ufd);
			continue; /* planned from the file (saturn_lookup_profile) */
		}
		e = prof_entry(batch);
		if (e->job_id) {
			int same = 0;

			/* a batch name used again later is profiled again */
			for (int k = i; k < s->njobs; k++)
				if (!strcmp(s->jobs[k].batch, batch) &&
				    (s->jobs[k].array_job_id ? s->jobs[k].array_job_id :
							       s->jobs[k].job_id) == e->array_id)
					same = 1;
			if (!same) {
				info("sched/saturn: batch %s: profiler job %u was for job %u, not this submission: profiling anew",
				     batch, e->job_id, e->array_id);
				e->job_id = e->array_id = 0;
				e->fell_back = 0;
			}
		}
		if (e->fell_back || (has_running && !e->job_id))
			continue;
		if (e->job_id) {
			job_record_t *pj;
			int ended;

			lock_slurmctld(read_lock);
			pj = find_job_record(e->job_id);
			ended = !pj || IS_JOB_FINISHED(pj) || IS_JOB_COMPLETING(pj);
			unlock_slurmctld(read_lock);
			if (ended) {
				error("sched/saturn: batch %s: profiler job %u ended without a usable profile: falling back to the users' requests",
				      batch, e->job_id);
				e->fell_back = 1;
				prof_save(e);
				continue;
			}
		} else {
			/* gather under the read lock, submit without locks */
			saturn_batch_owner_t o;
			char *ids = NULL, *args;

			for (int k = i; k < s->njobs; k++)
				if (!strcmp(s->jobs[k].batch, batch))
					xstrfmtcat(ids, "%s%d", ids ? "," : "",
						   s->jobs[k].task_id < 0 ? 0 : s->jobs[k].task_id);
			args = xstrdup_printf("--task-ids '%s'", ids);
			/* the GPUs of the largest node the batch's partitions offer */
			maxg = saturn_snapshot_max_gpus(s, s->jobs[i].part_mask);
			if (saturn_batch_owner(s->jobs[i].job_id, &o) == 0 && maxg > 0) {
				e->job_id = saturn_submit_profiler("profile", batch, &o, args, maxg);
				e->array_id = s->jobs[i].array_job_id ? s->jobs[i].array_job_id :
									s->jobs[i].job_id;
				if (e->job_id)
					prof_save(e);
			} else {
				error("sched/saturn: batch %s: no script or no GPU node for a profiler job",
				      batch);
			}
			saturn_batch_owner_free(&o);
			xfree(ids);
			xfree(args);
			if (!e->job_id) {
				error("sched/saturn: batch %s: no profiler job: falling back to the users' requests",
				      batch);
				e->fell_back = 1;
				continue;
			}
		}
		/* profiling: hold the batch's tasks out of this cycle */
		{
			char reason[96];
			time_t now = time(NULL);
			int w = 0;

			snprintf(reason, sizeof(reason), "saturn: profiling (job %u)", e->job_id);
			lock_slurmctld(write_lock);
			for (int k = 0; k < s->njobs; k++) {
				job_record_t *jr;

				if (strcmp(s->jobs[k].batch, batch) || s->jobs[k].state != SATURN_SNAP_HELD)
					continue;
				if ((jr = saturn_revalidate(&s->jobs[k])))
					saturn_set_reason(jr, reason, now);
			}
			unlock_slurmctld(write_lock);
			debug("sched/saturn: batch %s: waiting for profiler job %u", batch, e->job_id);
			for (int k = 0; k < s->njobs; k++)
				if (strcmp(s->jobs[k].batch, batch) || s->jobs[k].state != SATURN_SNAP_HELD)
					s->jobs[w++] = s->jobs[k];
			s->njobs = w;
			i--; /* jobs[i] is now another batch's */
		}
	}
}


void saturn_profiles_fini(void)
{
	for (int i = 0; i < nprofiles; i++)
		saturn_profile_destroy(profiles[i].profile);
	xfree(profiles);
	nprofiles = 0;
	xfree(prof_jobs);
	nprof_jobs = 0;
}
