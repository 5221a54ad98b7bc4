/* saturn_agent.c - sched/saturn's thread: the Slurm side of a planning
 * cycle. Snapshot Saturn jobs and the nodes' GPU state under read locks into
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

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
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
#include "src/slurmctld/state_save.h"

#include "envarray.h"
#include "formats.h"
#include "planner.h"
#include "profile.h"
#include "progress.h"
#include "safefile.h"
#include "sched_core.h"

#include "saturn_agent.h"
#include "saturn_int.h"

/* --- thread control and settings -------------------------------------- */

static pthread_mutex_t agent_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t agent_cond = PTHREAD_COND_INITIALIZER;
static volatile int stop_agent = 0;
static volatile int reconfig_pending = 0;

saturn_sched_settings_t saturn_cfg;
char *saturn_state_dir, *saturn_profile_dir, *saturn_progress_dir;

/* sched/backfill, loaded beside us for every other job */
static void *bf_handle;
static void (*bf_fini)(void);
static int (*bf_reconfig)(void);

/* plan kept between cycles */
static saturn_plan_t *prev_plan;
static char plan_id[64];
static unsigned long plan_seq;
static double prev_now;
/* runtime feedback kept across cycles (feedback.h), restored from the state */
static saturn_fb_t *feedback;

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void load_settings(void)
{
	saturn_error_t err = {{0}};
	int bad;

	saturn_sched_settings_free(&saturn_cfg);
	saturn_sched_settings_init(&saturn_cfg);
	bad = saturn_sched_settings_parse(&saturn_cfg, slurm_conf.sched_params, &err);
	if (bad)
		error("sched/saturn: %d bad saturn_* setting(s), keeping defaults for them; first: %s",
		      bad, err.text);
	xfree(saturn_state_dir);
	xfree(saturn_profile_dir);
	xfree(saturn_progress_dir);
	if (saturn_cfg.state_dir)
		saturn_state_dir = xstrdup(saturn_cfg.state_dir);
	else
		saturn_state_dir = xstrdup_printf("%s/saturn", slurm_conf.state_save_location);
	if (saturn_cfg.profile_dir)
		saturn_profile_dir = xstrdup(saturn_cfg.profile_dir);
	else
		saturn_profile_dir = xstrdup_printf("%s/profiles", saturn_state_dir);
	saturn_progress_dir = xstrdup_printf("%s/progress", saturn_state_dir);
	saturn_files_open();
	info("sched/saturn: interval %.0fs, solver time %.2fs, min gain %.2f, release slack %.0fs, backfill %s, state %s, profiles %s",
	     saturn_cfg.interval_s, saturn_cfg.solver_time_s, saturn_cfg.min_gain,
	     saturn_cfg.release_slack_s, saturn_cfg.backfill ? "yes" : "no", saturn_state_dir,
	     saturn_profile_dir);
}

static void load_backfill(void)
{
	char *dirs, *dir, *save = NULL;

	if (!saturn_cfg.backfill) {
		info("sched/saturn: saturn_backfill=no: other jobs are scheduled by the main scheduler only");
		return;
	}
	dirs = xstrdup(slurm_conf.plugindir);
	for (dir = strtok_r(dirs, ":", &save); dir && !bf_handle;
	     dir = strtok_r(NULL, ":", &save)) {
		char *path = xstrdup_printf("%s/sched_backfill.so", dir);
		const uint32_t *version;
		int (*bf_init)(void);

		if (access(path, R_OK) == 0) {
			bf_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (!bf_handle) {
				error("sched/saturn: cannot load %s: %s", path, dlerror());
			} else {
				version = dlsym(bf_handle, "plugin_version");
				bf_init = (int (*)(void))dlsym(bf_handle, "init");
				bf_fini = (void (*)(void))dlsym(bf_handle, "fini");
				bf_reconfig = (int (*)(void))dlsym(bf_handle, "sched_p_reconfig");
				if (!version || *version != SLURM_VERSION_NUMBER || !bf_init ||
				    !bf_fini || !bf_reconfig) {
					error("sched/saturn: %s is not a matching sched/backfill plugin", path);
					dlclose(bf_handle);
					bf_handle = NULL;
				} else if (bf_init() != SLURM_SUCCESS) {
					error("sched/saturn: sched/backfill init failed");
					bf_fini = NULL;
					bf_reconfig = NULL;
				} else {
					info("sched/saturn: sched/backfill loaded from %s for non-Saturn jobs", path);
				}
			}
		}
		xfree(path);
	}
	xfree(dirs);
	if (!bf_handle)
		error("sched/saturn: sched/backfill not found in PluginDir %s: other jobs are scheduled by the main scheduler only",
		      slurm_conf.plugindir);
}

static void load_prev_state(void)
{
	char *path = xstrdup_printf("%s/state.json", saturn_state_dir);
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st;
	size_t len;
	long owners[2] = {(long)geteuid(), 0};
	char *buf = saturn_state_fd < 0 ? NULL :
		saturn_file_read_at(saturn_state_fd, saturn_state_dir, "state.json", owners, 2,
				    64u << 20, &len, NULL, &err);

	if (!buf && saturn_state_fd >= 0 && errno != ENOENT) {
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
	if (!st) {
		error("sched/saturn: %s: %s (ignored: the jobs' own state is authoritative)", path, err.text);
	} else {
		info("sched/saturn: resuming after restart: previous plan %s with %d task(s), planned end in %.0fs",
		     st->plan_id ? st->plan_id : "?", st->ntasks, st->makespan_end - (double)time(NULL));
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

void saturn_agent_init(void)
{
	stop_agent = 0;
	load_settings();
	load_prev_state();
	load_backfill();
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
	if (bf_reconfig)
		bf_reconfig();
	slurm_mutex_lock(&agent_mutex);
	slurm_cond_broadcast(&agent_cond);
	slurm_mutex_unlock(&agent_mutex);
}

void saturn_agent_fini(void)
{
	if (bf_fini)
		bf_fini();
	/* bf_handle stays loaded: its thread is joined, and unloading code a
	 * late callback might still reach buys nothing. */
	bf_fini = NULL;
	bf_reconfig = NULL;
	saturn_plan_destroy(prev_plan);
	prev_plan = NULL;
	saturn_files_close();
	saturn_fb_destroy(feedback);
	feedback = NULL;
	saturn_reconfig_fini();
	xfree(saturn_state_dir);
	xfree(saturn_profile_dir);
	xfree(saturn_progress_dir);
	saturn_sched_settings_free(&saturn_cfg);
}

/* last_job_update right after our own changes: not news for the loop */
static time_t own_update;

/* --- apply (write locks) ---------------------------------------------- */

static void env_set(job_record_t *job_ptr, const char *name, const char *value)
{
	struct job_details *d = job_ptr->details;
	long i = saturn_env_index(d->env_sup, d->env_cnt, name);

	if (i >= 0) {
		xfree(d->env_sup[i]);
		d->env_sup[i] = xstrdup_printf("%s=%s", name, value);
		return;
	}
	xrecalloc(d->env_sup, d->env_cnt + 2, sizeof(char *));
	d->env_sup[d->env_cnt++] = xstrdup_printf("%s=%s", name, value);
}

/* The pending record of snapshot job j (the task's own, or its array's
 * meta record while the task is not split off), or NULL. */
static job_record_t *pending_record(const saturn_snap_job_t *j)
{
	job_record_t *job_ptr = find_job_record(j->job_id);

	if (!job_ptr || !IS_JOB_PENDING(job_ptr) || !job_ptr->details)
		return NULL;
	if (job_ptr->array_recs && job_ptr->array_recs->task_id_bitmap) {
		bitstr_t *b = job_ptr->array_recs->task_id_bitmap;

		if (j->task_id < 0 || j->task_id >= bit_size(b) || !bit_test(b, j->task_id))
			return NULL;
		return job_ptr;
	}
	if ((j->task_id < 0 && job_ptr->array_task_id != NO_VAL) ||
	    (j->task_id >= 0 && job_ptr->array_task_id != (uint32_t)j->task_id))
		return NULL;
	return job_ptr;
}

/* Still the held task the snapshot saw? */
job_record_t *saturn_revalidate(const saturn_snap_job_t *j)
{
	job_record_t *job_ptr = pending_record(j);

	if (!job_ptr || job_ptr->priority != 0 || job_ptr->state_reason != WAIT_HELD)
		return NULL;
	return job_ptr;
}

static int release_task(const saturn_snap_job_t *j, const saturn_decision_t *d)
{
	job_desc_msg_t *desc = xmalloc(sizeof(*desc));
	slurm_msg_t msg;
	job_record_t *job_ptr;
	char num[32];
	int rc;

	slurm_init_job_desc_msg(desc);
	if (j->task_id >= 0 && j->array_job_id)
		desc->job_id_str = xstrdup_printf("%u_%d", j->array_job_id, j->task_id);
	else
		desc->job_id_str = xstrdup_printf("%u", j->job_id);
	desc->tres_per_node = xstrdup_printf("gres:gpu:%d", d->gpus);
	desc->req_nodes = xstrdup(d->node);
	desc->priority = INFINITE;
	slurm_msg_t_init(&msg);
	msg.conn_fd = -1;
	msg.data = desc;
	msg.msg_type = REQUEST_UPDATE_JOB;
	rc = update_job_str(&msg, 0);
	if (rc != SLURM_SUCCESS) {
		error("sched/saturn: JobId=%s: release with %d GPUs on %s failed: %s",
		      desc->job_id_str, d->gpus, d->node, slurm_strerror(rc));
		slurm_free_job_desc_msg(desc);
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
		return -1;
	}
	env_set(job_ptr, "SATURN_BATCH", j->batch);
	env_set(job_ptr, "SATURN_TECHNIQUE", d->technique);
	snprintf(num, sizeof(num), "%d", d->gpus);
	env_set(job_ptr, "SATURN_GPUS", num);
	env_set(job_ptr, "SATURN_TECHNIQUE_PARAMS", saturn_option_params(j, d));
	env_set(job_ptr, "SATURN_PLAN_ID", plan_id);
	{
		/* STATE_DIR/progress/UID/JOBID.json; the folder was made before
		 * the locks were taken (saturn_progress_prepare) */
		char *pf = saturn_progress_path((long)job_ptr->user_id, job_ptr->job_id);

		if (pf)
			env_set(job_ptr, "SATURN_PROGRESS_FILE", pf);
		xfree(pf);
	}
	info("sched/saturn: released %pJ (task %s of batch %s): %d GPU(s) on %s, technique %s, plan %s",
	     job_ptr, desc->job_id_str, j->batch, d->gpus, d->node, d->technique, plan_id);
	slurm_free_job_desc_msg(desc);
	return 0;
}

/* --- re-hold (write locks) ------------------------------------------- */

static void env_unset(job_record_t *job_ptr, const char *name)
{
	struct job_details *d = job_ptr->details;
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

/* Put a released (or exit-held) task back into the admin hold, as
 * job_submit/saturn holds a new one: priority 0 and WAIT_HELD through the
 * update RPC's code (as an operator: an admin hold), no pinned node, no
 * SATURN_* variables of the old release, no begin time of Slurm's requeue
 * (kept as SATURN_NOT_BEFORE: the plan counts it as release_s; a begin
 * time on the job would make a later release wait for it, GPUs idle), the
 * reason saying why. The GPUs it was released with stay in tres_per_node
 * until the next release sets them. Returns 1 when re-held, 0 when it
 * already is in our hold, -1 when it changed since the snapshot or Slurm
 * refused. A task still in its array's meta record (an operator released
 * the whole array) is split off and held by itself, like a release. */
static int rehold_task(const saturn_snap_job_t *j, const saturn_rehold_t *r, time_t now)
{
	job_record_t *job_ptr = pending_record(j);
	job_desc_msg_t *desc;
	slurm_msg_t msg;
	uint32_t job_id;
	int rc;

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
	slurm_msg_t_init(&msg);
	msg.conn_fd = -1;
	msg.data = desc;
	msg.msg_type = REQUEST_UPDATE_JOB;
	rc = update_job_str(&msg, 0);
	if (rc != SLURM_SUCCESS) {
		error("sched/saturn: JobId=%u task %d of batch %s: re-hold failed: %s", j->job_id,
		      j->task_id, j->batch, slurm_strerror(rc));
		slurm_free_job_desc_msg(desc);
		return -1;
	}
	slurm_free_job_desc_msg(desc);
	if (j->task_id >= 0 && j->array_job_id)
		job_ptr = find_job_array_rec(j->array_job_id, j->task_id);
	else
		job_ptr = find_job_record(job_id);
	if (!job_ptr || !job_ptr->details || job_ptr->priority != 0) {
		error("sched/saturn: JobId=%u task %d: not held after update (record %s)", j->job_id,
		      j->task_id, job_ptr ? "released" : "missing");
		return -1;
	}
	job_ptr->state_reason = WAIT_HELD;
	job_ptr->job_state &= ~JOB_SPECIAL_EXIT;
	if (job_ptr->restart_cnt > 0 && job_ptr->details->begin_time > now) {
		char num[32];

		snprintf(num, sizeof(num), "%ld", (long)job_ptr->details->begin_time);
		env_set(job_ptr, "SATURN_NOT_BEFORE", num);
		job_ptr->details->begin_time = 0;
	}
	env_unset(job_ptr, "SATURN_TECHNIQUE");
	env_unset(job_ptr, "SATURN_TECHNIQUE_PARAMS");
	env_unset(job_ptr, "SATURN_GPUS");
	env_unset(job_ptr, "SATURN_PLAN_ID");
	saturn_set_reason(job_ptr, r->reason, now);
	last_job_update = now;
	info("sched/saturn: re-held %pJ (task %d of batch %s, was %s%s): %s", job_ptr, j->task_id,
	     j->batch, j->pinned[0] ? "pinned to " : "not pinned", j->pinned, r->reason);
	return 1;
}

/* Re-hold what saturn_sched_decide_rehold lists, under the job write
 * locks; the re-held tasks become held tasks of this cycle's snapshot.
 * Returns the number re-held. */
static int rehold_pass(saturn_snapshot_t *s)
{
	slurmctld_lock_t write_lock = {.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
				       .part = READ_LOCK, .fed = READ_LOCK};
	saturn_rehold_t *r = NULL;
	int n = saturn_sched_decide_rehold(s, &r), done = 0;
	char *ok;
	time_t now = time(NULL);
	double t0, t1;

	if (n < 0)
		error("sched/saturn: out of memory deciding re-holds");
	if (n <= 0)
		return 0;
	ok = xcalloc(n, 1);
	lock_slurmctld(write_lock);
	t0 = now_mono();
	for (int i = 0; i < n; i++) {
		int rc = rehold_task(&s->jobs[r[i].job], &r[i], now);

		ok[i] = rc >= 0;
		done += rc > 0;
		if (rc < 0)
			debug("sched/saturn: JobId=%u task %d changed since the snapshot: not re-held this cycle",
			      s->jobs[r[i].job].job_id, s->jobs[r[i].job].task_id);
	}
	t1 = now_mono();
	own_update = last_job_update;
	unlock_slurmctld(write_lock);
	for (int i = 0; i < n; i++)
		if (ok[i])
			saturn_snapshot_mark_held(s, &s->jobs[r[i].job]);
	if (done)
		schedule_job_save();
	debug("sched/saturn: %d task(s) re-held, %.3f ms under write locks", done, (t1 - t0) * 1e3);
	xfree(ok);
	free(r);
	return done;
}

void saturn_set_reason(job_record_t *job_ptr, const char *reason, time_t now)
{
	if (!xstrcmp(job_ptr->state_desc, reason))
		return;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = xstrdup(reason);
	last_job_update = now;
}


/* Returns the number of tasks released. */
static int apply(saturn_snapshot_t *s, const saturn_sched_build_t *b,
		 saturn_decision_t *d, int nd, const char *primary, const int *count)
{
	time_t now = time(NULL);
	int released = 0;

	/* releases first: splitting changes which record a reason belongs to */
	for (int i = 0; i < nd; i++) {
		const saturn_snap_job_t *j = &s->jobs[d[i].job];

		if (!d[i].release)
			continue;
		if (!saturn_revalidate(j)) {
			debug("sched/saturn: JobId=%u task %d changed since the snapshot: not released this cycle",
			      j->job_id, j->task_id);
			continue;
		}
		if (release_task(j, &d[i]) == 0) {
			released++;
			s->jobs[d[i].job].state = SATURN_SNAP_RELEASED; /* for the persisted state */
		}
	}
	/* reasons: per job record, the earliest planned start among its tasks
	 * (primary/count worked out before taking the locks) */
	for (int i = 0; i < nd; i++) {
		const saturn_snap_job_t *j = &s->jobs[d[i].job];
		job_record_t *job_ptr;
		char text[256], note[80];
		const char *r = d[i].reason;

		if (d[i].release || !primary[i] || !(job_ptr = saturn_revalidate(j)))
			continue;
		/* "saturn: profiler job N failed, users' requests; starts in ..." */
		saturn_profiler_note(j->batch, j->uid, note, sizeof(note));
		if (note[0] && !strncmp(r, "saturn: ", 8))
			r += 8;
		if (count[i] > 1)
			snprintf(text, sizeof(text), "%s%s (task %d; %d tasks held)", note, r,
				 j->task_id, count[i]);
		else
			snprintf(text, sizeof(text), "%s%s", note, r);
		saturn_set_reason(job_ptr, text, now);
	}
	for (int i = 0; i < b->nskipped; i++) {
		job_record_t *job_ptr = saturn_revalidate(&s->jobs[b->skipped[i]]);

		if (job_ptr)
			saturn_set_reason(job_ptr, b->skip_reason[i], now);
	}
	return released;
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

static void persist(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
		    const saturn_plan_t *plan)
{
	char *path = xstrdup_printf("%s/state.json", saturn_state_dir);
	char *txt = saturn_sched_state_to_json(s, b, plan, plan_id, s->now);
	saturn_error_t err = {{0}};
	static int warned;

	if (saturn_state_fd < 0)
		saturn_error_set(&err, "%s: the state folder was refused (logged at start)",
				 path);
	if (!txt) {
		error("sched/saturn: out of memory serialising the state");
	} else if (saturn_state_fd < 0 ||
		   saturn_file_write_at(saturn_state_fd, saturn_state_dir, "state.json", txt,
					strlen(txt), SATURN_ANY_UID, SATURN_ANY_UID, 0644, &err) < 0) {
		if (!warned++)
			error("sched/saturn: cannot persist the plan: %s", err.text);
	} else {
		warned = 0;
	}
	free(txt);
	xfree(path);
}

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

/* tasks left held by the last cycle, and when that was last logged */
static int skipped_logged;
static double skipped_at;


/* Decide from plan and apply under the job write locks. Adds the time
 * under the locks to *t_lock0..*t_lock1 (the last apply's bounds) and the
 * releases to *released. -1 on ENOMEM. */
static int apply_plan(saturn_snapshot_t *s, const saturn_sched_build_t *b,
		      const saturn_plan_t *plan, double *t_lock0, double *t_lock1,
		      int *released)
{
	slurmctld_lock_t write_lock = {.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK,
				       .part = READ_LOCK, .fed = READ_LOCK};
	saturn_decision_t *d = NULL;
	char *primary;
	int *count;
	int nd = saturn_sched_decide(s, b, plan, saturn_cfg.release_slack_s, &d);

	if (nd < 0) {
		error("sched/saturn: out of memory deciding: cycle skipped");
		return -1;
	}
	saturn_measure_pass(s, d, nd);
	for (int i = 0; i < nd; i++)
		debug2("sched/saturn: plan %s (%s): task %u_%d %s at %.1fs on %s, %d GPUs",
		       plan_id, plan->status, s->jobs[d[i].job].array_job_id, s->jobs[d[i].job].task_id,
		       d[i].release ? "release" : "hold", d[i].start_s, d[i].node, d[i].gpus);
	if (nd == 0 && b->nskipped == 0)
		return 0;
	primary = xcalloc(nd ? nd : 1, 1);
	count = xcalloc(nd ? nd : 1, sizeof(int));
	group_records(s, d, nd, primary, count);
	/* progress folders of the tasks about to be released, before the locks */
	for (int i = 0; i < nd; i++)
		if (d[i].release)
			saturn_progress_prepare(s->jobs[d[i].job].uid);
	lock_slurmctld(write_lock);
	*t_lock0 = now_mono();
	*released = apply(s, b, d, nd, primary, count);
	*t_lock1 = now_mono();
	own_update = last_job_update;
	unlock_slurmctld(write_lock);
	if (*released) {
		schedule_job_save();
		queue_job_scheduler();
	}
	xfree(primary);
	xfree(count);
	free(d);
	return 0;
}

static void cycle(saturn_snapshot_t *s, int **snap_of_node)
{
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .node = READ_LOCK,
				      .part = READ_LOCK, .fed = NO_LOCK};
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL, *carried = NULL;
	double t0, t1, t2, t3, t4 = 0, t5 = 0;
	int nsaturn, released = 0, new_plan = 0;

	t0 = now_mono();
	lock_slurmctld(read_lock);
	t1 = now_mono();
	nsaturn = saturn_take_snapshot(s, snap_of_node);
	t2 = now_mono();
	unlock_slurmctld(read_lock);
	if (nsaturn < 0) {
		error("sched/saturn: out of memory taking the snapshot: cycle skipped");
		return;
	}
	saturn_progress_sweep(s);
	saturn_reconfig_follow(s);
	if (nsaturn == 0) {
		if (prev_plan) {
			info("sched/saturn: no Saturn jobs left: plan %s done", plan_id);
			saturn_plan_destroy(prev_plan);
			prev_plan = NULL;
			memset(&b, 0, sizeof(b));
			persist(s, &b, NULL);
		}
		debug("sched/saturn: cycle: no Saturn jobs (snapshot %.3f ms under read locks)",
		      (t2 - t1) * 1e3);
		return;
	}
	rehold_pass(s);
	if (s->nnodes == 0) {
		static time_t warned;

		if (time(NULL) - warned > 600) {
			info("sched/saturn: %d Saturn task(s) but no usable node with GPUs (down, drained or not responding): waiting",
			     nsaturn);
			warned = time(NULL);
		}
		return;
	}
	saturn_read_progress(s);
	if (!feedback)
		feedback = saturn_fb_create();
	if (!feedback || saturn_sched_feedback(feedback, s, saturn_lookup_profile, NULL) < 0)
		error("sched/saturn: out of memory keeping the runtime feedback: planning with what it has");
	saturn_profiler_pass(s);
	saturn_measure_poll();
	if (s->njobs == 0)
		return;
	if (saturn_sched_build(s, saturn_lookup_profile, NULL, &b, &err) < 0) {
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
	if (b.problem->ntasks == 0)
		goto out;

	/* Fast path: the previous plan carried over (finished tasks dropped,
	 * late ones shifted) decides releases now, before the solve, so a
	 * task due when another ends starts without waiting for the solver. */
	carried = saturn_sched_carry(prev_plan, s->now - prev_now, b.problem);
	if (carried && apply_plan(s, &b, carried, &t4, &t5, &released) < 0)
		goto out;

	if (b.any_profile) {
		saturn_planner_opts_t opts;

		saturn_planner_opts_init(&opts);
		opts.time_limit_s = saturn_cfg.solver_time_s;
		opts.abort_cb = abort_cb;
		/* The carried plan is replaced only by one shorter by min_gain, and
		 * no plan beats the bound: once carried <= bound / (1 - min_gain)
		 * a search cannot change anything, so the planner may stop there
		 * (at once when the carried plan itself meets it). */
		opts.warm = carried ? carried : prev_plan;
		if (carried)
			opts.stop_ratio = saturn_cfg.min_gain < 1 ? 1.0 / (1.0 - saturn_cfg.min_gain) :
								    INFINITY;
		plan = saturn_planner_solve(b.problem, &opts, &err);
		if (!plan)
			error("sched/saturn: planner failed (%s): using first-come-first-served", err.text);
		else if (carried && plan->lower_bound_s > 0 && !strcmp(plan->status, "good-enough"))
			debug("sched/saturn: solver stopped early (method %s): makespan %.0fs within %.1f%% of the bound %.0fs",
			      plan->method, plan->makespan_s,
			      100.0 * (plan->makespan_s / plan->lower_bound_s - 1), plan->lower_bound_s);
	}
	if (!plan)
		plan = saturn_sched_fcfs(b.problem);
	if (!plan) {
		error("sched/saturn: out of memory planning: cycle skipped");
		goto out;
	}
	t3 = now_mono();

	/* keep the carried plan unless the new one is better by min_gain */
	if (carried && !saturn_sched_should_switch(plan->makespan_s, carried->makespan_s,
						   saturn_cfg.min_gain)) {
		saturn_plan_destroy(plan);
		plan = carried;
		carried = NULL;
	} else {
		int more = 0;

		new_plan = 1;
		snprintf(plan_id, sizeof(plan_id), "p%ld-%lu", (long)s->now, ++plan_seq);
		if (apply_plan(s, &b, plan, &t4, &t5, &more) < 0)
			goto out;
		released += more;
	}

	if (new_plan) {
		char tech[256];

		describe(plan, b.problem, tech, sizeof(tech));
		info("sched/saturn: plan %s: %d task(s) on %d node(s), makespan %.0fs, bound %.0fs, gap %.1f%%, method %s/%s, solve %.3fs, techniques: %s; %d released now",
		     plan_id, b.problem->ntasks, b.problem->nnodes, plan->makespan_s,
		     plan->lower_bound_s,
		     plan->lower_bound_s > 0 ? 100.0 * (plan->makespan_s / plan->lower_bound_s - 1) : 0.0,
		     plan->method, plan->status[0] ? plan->status : "-", t3 - t2, tech, released);
	}
	debug("sched/saturn: cycle: %d Saturn task(s), snapshot %.3f ms under read locks (waited %.3f ms), plan %.3f ms, apply %.3f ms under write locks, %d released",
	      nsaturn, (t2 - t1) * 1e3, (t1 - t0) * 1e3, (t3 - t2) * 1e3, (t5 - t4) * 1e3, released);
	persist(s, &b, plan);
	saturn_reconfig_pass(s, &b, plan);
	saturn_plan_destroy(prev_plan);
	prev_plan = plan;
	prev_now = s->now;
	plan = NULL;
out:
	saturn_plan_destroy(carried);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
}

void *saturn_agent(void *arg)
{
	saturn_snapshot_t *s = saturn_snapshot_create();
	int *snap_of_node = NULL;
	time_t seen_update = 0;
	double last_cycle = 0;

	if (!s) {
		error("sched/saturn: out of memory: agent not started");
		return NULL;
	}
	while (!stop_agent) {
		struct timespec ts;
		double now;

		/* wake twice a second: a job change is noticed within 0.5 s */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500000000L;
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
			load_settings();
			unlock_slurmctld(conf_lock);
			last_cycle = 0;
		}
		now = now_mono();
		/* a job changed (submit, end, cancel, ...) or the interval passed */
		if ((last_job_update != seen_update && now - last_cycle >= 0.5) ||
		    now - last_cycle >= saturn_cfg.interval_s) {
			time_t before = last_job_update;

			cycle(s, &snap_of_node);
			/* our own updates are not news; changes by others during
			 * the cycle (a job ended while we solved) are */
			seen_update = last_job_update == own_update ? own_update : before;
			last_cycle = now_mono();
		}
	}
	xfree(snap_of_node);
	saturn_snapshot_destroy(s);
	saturn_profiles_fini();
	saturn_measure_fini();
	return NULL;
}
