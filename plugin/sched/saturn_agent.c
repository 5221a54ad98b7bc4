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

#include "formats.h"
#include "planner.h"
#include "profile.h"
#include "progress.h"
#include "sched_core.h"

#include "saturn_agent.h"

/* --- thread control and settings -------------------------------------- */

static pthread_mutex_t agent_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t agent_cond = PTHREAD_COND_INITIALIZER;
static volatile int stop_agent = 0;
static volatile int reconfig_pending = 0;

static saturn_sched_settings_t settings;
static char *state_dir, *profile_dir, *progress_dir;

/* sched/backfill, loaded beside us for every other job */
static void *bf_handle;
static void (*bf_fini)(void);
static int (*bf_reconfig)(void);

/* plan kept between cycles */
static saturn_plan_t *prev_plan;
static char plan_id[64];
static unsigned long plan_seq;
static double prev_makespan_end;
static double prev_now;

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void mkdir_mode(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST) {
		error("sched/saturn: mkdir %s: %m", path);
		return;
	}
	if (chmod(path, mode) < 0)
		error("sched/saturn: chmod %s: %m", path);
}

static void load_settings(void)
{
	saturn_error_t err = {{0}};
	int bad;

	saturn_sched_settings_free(&settings);
	saturn_sched_settings_init(&settings);
	bad = saturn_sched_settings_parse(&settings, slurm_conf.sched_params, &err);
	if (bad)
		error("sched/saturn: %d bad saturn_* setting(s), keeping defaults for them; first: %s",
		      bad, err.text);
	xfree(state_dir);
	xfree(profile_dir);
	xfree(progress_dir);
	if (settings.state_dir)
		state_dir = xstrdup(settings.state_dir);
	else
		state_dir = xstrdup_printf("%s/saturn", slurm_conf.state_save_location);
	if (settings.profile_dir)
		profile_dir = xstrdup(settings.profile_dir);
	else
		profile_dir = xstrdup_printf("%s/profiles", state_dir);
	progress_dir = xstrdup_printf("%s/progress", state_dir);
	mkdir_mode(state_dir, 0755);
	mkdir_mode(progress_dir, 01733);
	if (!settings.profile_dir)
		mkdir_mode(profile_dir, 01733);
	info("sched/saturn: interval %.0fs, solver time %.2fs, min gain %.2f, release slack %.0fs, backfill %s, state %s, profiles %s",
	     settings.interval_s, settings.solver_time_s, settings.min_gain,
	     settings.release_slack_s, settings.backfill ? "yes" : "no", state_dir,
	     profile_dir);
}

static void load_backfill(void)
{
	char *dirs, *dir, *save = NULL;

	if (!settings.backfill) {
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
	char *path = xstrdup_printf("%s/state.json", state_dir);
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st;
	size_t len;
	char *buf = saturn_read_file(path, 64u << 20, &len, &err);

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
		prev_makespan_end = st->makespan_end;
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
	xfree(state_dir);
	xfree(profile_dir);
	xfree(progress_dir);
	saturn_sched_settings_free(&settings);
}

/* --- snapshot (read locks) ---------------------------------------------- */

/* Value of NAME=... in a NULL-free array of n "K=V" strings, or NULL. */
static const char *env_get(char **env, uint32_t n, const char *name)
{
	size_t len = strlen(name);

	for (uint32_t i = 0; env && i < n; i++)
		if (env[i] && !strncmp(env[i], name, len) && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

static const char *job_batch(job_record_t *job_ptr)
{
	return env_get(job_ptr->spank_job_env, job_ptr->spank_job_env_size, "SATURN_BATCH");
}

/* GPUs per node from "gres:gpu:4" / "gres:gpu:a100:4" / "gres/gpu=4". */
static int gpus_from_tres(const char *tres)
{
	const char *p;
	int n = 0;

	if (!tres || !(p = strstr(tres, "gpu")))
		return 0;
	p += 3;
	while (*p && *p != ',') {
		if (*p == ':' || *p == '=') {
			char *end;
			long v = strtol(p + 1, &end, 10);

			if (end != p + 1 && (*end == '\0' || *end == ',')) {
				n = (int)v;
				break;
			}
		}
		p++;
	}
	return n > 0 ? n : (strstr(tres, "gpu") ? 1 : 0);
}

static int node_gpus(node_record_t *node_ptr)
{
	ListIterator it;
	gres_state_t *gs;
	int n = 0;

	if (!node_ptr->gres_list)
		return 0;
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		if (xstrcmp(gs->gres_name, "gpu"))
			continue;
		n = (int)((gres_node_state_t *)gs->gres_data)->gres_cnt_avail;
	}
	list_iterator_destroy(it);
	return n > 64 ? 64 : n;
}

/* For each node of a running job's allocation: call fn with the snapshot
 * node index and the GPU mask the job holds there. */
static void job_gpu_masks(job_record_t *job_ptr, const int *snap_of_node,
			  void (*fn)(int snode, uint64_t mask, void *arg), void *arg)
{
	bitstr_t *nodes = job_ptr->job_resrcs && job_ptr->job_resrcs->node_bitmap ?
				  job_ptr->job_resrcs->node_bitmap : job_ptr->node_bitmap;
	ListIterator it;
	gres_state_t *gs;

	if (!job_ptr->gres_list_alloc || !nodes)
		return;
	it = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(it))) {
		gres_job_state_t *gj = gs->gres_data;
		int k = 0;

		if (xstrcmp(gs->gres_name, "gpu") || !gj || !gj->gres_bit_alloc)
			continue;
		for (int n = bit_ffs(nodes); n >= 0 && n < bit_size(nodes); n++) {
			uint64_t mask = 0;

			if (!bit_test(nodes, n))
				continue;
			if (k >= (int)gj->node_cnt)
				break;
			if (gj->gres_bit_alloc[k]) {
				bitstr_t *b = gj->gres_bit_alloc[k];

				for (int g = 0; g < bit_size(b) && g < 64; g++)
					if (bit_test(b, g))
						mask |= 1ULL << g;
			}
			k++;
			if (snap_of_node[n] >= 0 && mask)
				fn(snap_of_node[n], mask, arg);
		}
	}
	list_iterator_destroy(it);
}

struct mask_acc {
	int node;
	uint64_t mask;
};

static void take_first(int snode, uint64_t mask, void *arg)
{
	struct mask_acc *a = arg;

	if (a->node < 0) {
		a->node = snode;
		a->mask = mask;
	}
}

struct busy_ctx {
	saturn_snapshot_t *s;
	double until;
	int failed;
};

static void add_busy(int snode, uint64_t mask, void *arg)
{
	struct busy_ctx *c = arg;
	saturn_snap_busy_t *b = saturn_snapshot_add_busy(c->s);

	if (!b) {
		c->failed = 1;
		return;
	}
	b->node = snode;
	b->gpu_mask = mask;
	b->until = c->until;
}

static void fill_common(saturn_snap_job_t *j, job_record_t *job_ptr, const char *batch)
{
	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->uid = job_ptr->user_id;
	j->req_gpus = gpus_from_tres(job_ptr->tres_per_node);
	if (job_ptr->time_limit != NO_VAL && job_ptr->time_limit != INFINITE)
		j->time_limit_s = job_ptr->time_limit * 60.0;
	j->submit_time = job_ptr->details ? (double)job_ptr->details->submit_time : 0;
	j->array_job_id = job_ptr->array_job_id;
	if (job_ptr->details) {
		const char *tech = env_get(job_ptr->details->env_sup, job_ptr->details->env_cnt,
					   "SATURN_TECHNIQUE");
		const char *g = env_get(job_ptr->details->env_sup, job_ptr->details->env_cnt,
					"SATURN_GPUS");

		snprintf(j->technique, sizeof(j->technique), "%s", tech ? tech : "user");
		j->gpus = g ? atoi(g) : j->req_gpus;
	}
}

/* Fill s under the read locks. Returns the number of Saturn jobs, or -1 on
 * ENOMEM (snapshot incomplete: the cycle is skipped). */
static int take_snapshot(saturn_snapshot_t *s, int **snap_of_node_p)
{
	node_record_t *node_ptr;
	job_record_t *job_ptr;
	ListIterator it;
	int *snap_of_node, nsaturn = 0;

	saturn_snapshot_reset(s);
	s->now = (double)time(NULL);
	xrecalloc(*snap_of_node_p, node_record_count ? node_record_count : 1, sizeof(int));
	snap_of_node = *snap_of_node_p;
	for (int i = 0; i < node_record_count; i++)
		snap_of_node[i] = -1;
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		saturn_snap_node_t *n;
		int g;

		if (IS_NODE_DOWN(node_ptr) || IS_NODE_DRAIN(node_ptr) ||
		    IS_NODE_FUTURE(node_ptr) || IS_NODE_NO_RESPOND(node_ptr))
			continue;
		g = node_gpus(node_ptr);
		if (g <= 0)
			continue;
		if (!(n = saturn_snapshot_add_node(s)))
			return -1;
		snprintf(n->name, sizeof(n->name), "%s", node_ptr->name);
		n->gpus = g;
		snap_of_node[node_ptr->index] = s->nnodes - 1;
	}

	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		const char *batch = job_batch(job_ptr);
		saturn_snap_job_t *j;

		if (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) {
			if (!batch) {
				struct busy_ctx c = {s, (double)job_ptr->end_time, 0};

				job_gpu_masks(job_ptr, snap_of_node, add_busy, &c);
				if (c.failed)
					goto nomem;
			} else {
				struct mask_acc a = {-1, 0};

				if (!(j = saturn_snapshot_add_job(s)))
					goto nomem;
				nsaturn++;
				fill_common(j, job_ptr, batch);
				j->job_id = job_ptr->job_id;
				j->task_id = job_ptr->array_task_id == NO_VAL ? -1 : (int)job_ptr->array_task_id;
				j->state = SATURN_SNAP_RUNNING;
				j->start_time = (double)job_ptr->start_time;
				job_gpu_masks(job_ptr, snap_of_node, take_first, &a);
				j->node = a.node;
				j->gpu_mask = a.mask;
			}
			continue;
		}
		if (!batch || !IS_JOB_PENDING(job_ptr) || !job_ptr->details)
			continue;
		if (job_ptr->priority == 0 && job_ptr->state_reason != WAIT_HELD)
			continue; /* held by the user (or failed): not ours to release */
		if (job_ptr->array_recs && job_ptr->array_recs->task_id_bitmap) {
			bitstr_t *b = job_ptr->array_recs->task_id_bitmap;

			for (int t = bit_ffs(b); t >= 0 && t < bit_size(b); t++) {
				if (!bit_test(b, t))
					continue;
				if (!(j = saturn_snapshot_add_job(s)))
					goto nomem;
				nsaturn++;
				fill_common(j, job_ptr, batch);
				j->job_id = job_ptr->job_id;
				j->task_id = t;
				j->state = job_ptr->priority == 0 ? SATURN_SNAP_HELD : SATURN_SNAP_RELEASED;
			}
			continue;
		}
		if (!(j = saturn_snapshot_add_job(s)))
			goto nomem;
		nsaturn++;
		fill_common(j, job_ptr, batch);
		j->job_id = job_ptr->job_id;
		j->task_id = job_ptr->array_task_id == NO_VAL ? -1 : (int)job_ptr->array_task_id;
		j->state = job_ptr->priority == 0 ? SATURN_SNAP_HELD : SATURN_SNAP_RELEASED;
		if (j->state == SATURN_SNAP_RELEASED && job_ptr->details->req_nodes)
			j->node = saturn_snapshot_node_index(s, job_ptr->details->req_nodes);
	}
	list_iterator_destroy(it);
	return nsaturn;
nomem:
	list_iterator_destroy(it);
	return -1;
}

/* --- profiles and progress (no locks) ------------------------------------ */

typedef struct profile_entry {
	char batch[SATURN_NAME_LEN];
	time_t mtime;
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

static const saturn_profile_t *lookup_profile(const char *batch, long uid, void *arg)
{
	profile_entry_t *e = NULL;
	saturn_error_t err = {{0}};
	struct stat st;
	char *path;

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
	path = xstrdup_printf("%s/%s.json", profile_dir, batch);
	if (lstat(path, &st) < 0) {
		if (!e->missing)
			info("sched/saturn: batch %s: no profile at %s: planning from the users' requests",
			     batch, path);
		e->missing = 1;
		saturn_profile_destroy(e->profile);
		e->profile = NULL;
		xfree(path);
		return NULL;
	}
	if (e->profile && st.st_mtime == e->mtime) {
		xfree(path);
		return e->profile;
	}
	if (!e->missing && e->mtime == st.st_mtime && !e->profile) {
		xfree(path);
		return NULL; /* already rejected this version */
	}
	e->missing = 0;
	e->mtime = st.st_mtime;
	saturn_profile_destroy(e->profile);
	e->profile = NULL;
	if (st.st_uid != 0 && (long)st.st_uid != uid) {
		error("sched/saturn: batch %s: profile %s is owned by uid %ld, not the batch's user %ld or root: ignored",
		      batch, path, (long)st.st_uid, uid);
	} else if (!(e->profile = saturn_profile_load(path, (long)st.st_uid, &err))) {
		error("sched/saturn: batch %s: profile rejected: %s; planning from the users' requests",
		      batch, err.text);
	} else {
		info("sched/saturn: batch %s: profile %s loaded (%d task signature(s))", batch, path,
		     e->profile->ntasks);
	}
	xfree(path);
	return e->profile;
}

static void read_progress(saturn_snapshot_t *s)
{
	for (int i = 0; i < s->njobs; i++) {
		saturn_snap_job_t *j = &s->jobs[i];
		saturn_error_t err = {{0}};
		char path[PATH_MAX];
		double left;

		if (j->state != SATURN_SNAP_RUNNING)
			continue;
		snprintf(path, sizeof(path), "%s/%u.json", progress_dir, j->job_id);
		if (access(path, F_OK) < 0)
			continue;
		if (saturn_progress_remaining(path, j->uid, &left, &err) == 0)
			j->batches_left = left;
		else
			debug("sched/saturn: JobId=%u: progress file ignored: %s", j->job_id, err.text);
	}
}

/* --- apply (write locks) ---------------------------------------------- */

static void env_set(job_record_t *job_ptr, const char *name, const char *value)
{
	struct job_details *d = job_ptr->details;
	size_t len = strlen(name);

	for (uint32_t i = 0; i < d->env_cnt; i++) {
		if (d->env_sup[i] && !strncmp(d->env_sup[i], name, len) && d->env_sup[i][len] == '=') {
			xfree(d->env_sup[i]);
			d->env_sup[i] = xstrdup_printf("%s=%s", name, value);
			return;
		}
	}
	xrecalloc(d->env_sup, d->env_cnt + 2, sizeof(char *));
	d->env_sup[d->env_cnt++] = xstrdup_printf("%s=%s", name, value);
}

/* Still the held task the snapshot saw? */
static job_record_t *revalidate(const saturn_snap_job_t *j)
{
	job_record_t *job_ptr = find_job_record(j->job_id);

	if (!job_ptr || !IS_JOB_PENDING(job_ptr) || !job_ptr->details)
		return NULL;
	if (job_ptr->priority != 0 || job_ptr->state_reason != WAIT_HELD)
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

static const char *option_params(const saturn_snap_job_t *j, const saturn_decision_t *d)
{
	const saturn_profile_t *pr = NULL;
	const saturn_profile_task_t *pt;

	for (int i = 0; i < nprofiles; i++)
		if (!strcmp(profiles[i].batch, j->batch))
			pr = profiles[i].profile;
	if (!pr || !(pt = saturn_profile_find(pr, j->task_id >= 0 ? j->task_id : 0)))
		return "{}";
	for (int o = 0; o < pt->noptions; o++)
		if (pt->options[o].gpus == d->gpus && !xstrcmp(pt->options[o].technique, d->technique))
			return pt->options[o].params ? pt->options[o].params : "{}";
	return "{}";
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
	env_set(job_ptr, "SATURN_TECHNIQUE_PARAMS", option_params(j, d));
	env_set(job_ptr, "SATURN_PLAN_ID", plan_id);
	{
		char *pf = xstrdup_printf("%s/%u.json", progress_dir, job_ptr->job_id);

		env_set(job_ptr, "SATURN_PROGRESS_FILE", pf);
		xfree(pf);
	}
	info("sched/saturn: released %pJ (task %s of batch %s): %d GPU(s) on %s, technique %s, plan %s",
	     job_ptr, desc->job_id_str, j->batch, d->gpus, d->node, d->technique, plan_id);
	slurm_free_job_desc_msg(desc);
	return 0;
}

static void set_reason(job_record_t *job_ptr, const char *reason, time_t now)
{
	if (!xstrcmp(job_ptr->state_desc, reason))
		return;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = xstrdup(reason);
	last_job_update = now;
}

static const char *prof_note(const char *batch, char *buf, size_t len);

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
		if (!revalidate(j)) {
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

		if (d[i].release || !primary[i] || !(job_ptr = revalidate(j)))
			continue;
		/* "saturn: profiler job N failed, users' requests; starts in ..." */
		prof_note(j->batch, note, sizeof(note));
		if (note[0] && !strncmp(r, "saturn: ", 8))
			r += 8;
		if (count[i] > 1)
			snprintf(text, sizeof(text), "%s%s (task %d; %d tasks held)", note, r,
				 j->task_id, count[i]);
		else
			snprintf(text, sizeof(text), "%s%s", note, r);
		set_reason(job_ptr, text, now);
	}
	for (int i = 0; i < b->nskipped; i++) {
		job_record_t *job_ptr = revalidate(&s->jobs[b->skipped[i]]);

		if (job_ptr)
			set_reason(job_ptr, b->skip_reason[i], now);
	}
	return released;
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

static prof_job_t *prof_entry(const char *batch)
{
	prof_job_t *e;
	char *path, buf[32] = "";
	FILE *f;

	for (int i = 0; i < nprof_jobs; i++)
		if (!strcmp(prof_jobs[i].batch, batch))
			return &prof_jobs[i];
	xrecalloc(prof_jobs, nprof_jobs + 1, sizeof(*prof_jobs));
	e = &prof_jobs[nprof_jobs++];
	snprintf(e->batch, sizeof(e->batch), "%s", batch);
	/* persisted: STATE_DIR/profiler-NAME.job (root only) holds "JOBID ARRAYID [fallback]" */
	path = xstrdup_printf("%s/profiler-%s.job", state_dir, batch);
	if ((f = fopen(path, "r"))) {
		if (fgets(buf, sizeof(buf), f)) {
			char *end;

			e->job_id = (uint32_t)strtoul(buf, &end, 10);
			e->array_id = (uint32_t)strtoul(end, NULL, 10);
			e->fell_back = strstr(buf, "fallback") != NULL;
			info("sched/saturn: batch %s: profiler job %u recorded before restart%s", batch,
			     e->job_id, e->fell_back ? " (fell back to the users' requests)" : "");
		}
		fclose(f);
	}
	xfree(path);
	return e;
}

static void prof_save(const prof_job_t *e)
{
	char *path = xstrdup_printf("%s/profiler-%s.job", state_dir, e->batch);
	char txt[64];
	saturn_error_t err = {{0}};

	snprintf(txt, sizeof(txt), "%u %u%s\n", e->job_id, e->array_id,
		 e->fell_back ? " fallback" : "");
	if (saturn_write_file_atomic(path, txt, strlen(txt), &err) < 0)
		error("sched/saturn: batch %s: cannot record profiler job %u: %s", e->batch,
		      e->job_id, err.text);
	xfree(path);
}

/* "profiler job N failed; " for a batch that fell back, else "". */
static const char *prof_note(const char *batch, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < nprof_jobs; i++)
		if (!strcmp(prof_jobs[i].batch, batch) && prof_jobs[i].fell_back)
			snprintf(buf, len, "saturn: profiler job %u failed, users' requests; ",
				 prof_jobs[i].job_id);
	return buf;
}

/* Submit the companion job (no locks held). Returns the job id or 0. */
static uint32_t prof_submit(const char *batch, uint32_t uid, uint32_t gid, const char *account,
			    const char *partition, const char *script, size_t script_len,
			    const char *ids, int gpus)
{
	char *dir = xstrdup_printf("%s/profiler", state_dir);
	char *copy = xstrdup_printf("%s/%s.script", dir, batch);
	char *out = xstrdup_printf("%s/%s.json", profile_dir, batch);
	job_desc_msg_t desc;
	submit_response_msg_t *resp = NULL;
	saturn_error_t err = {{0}};
	uint32_t id = 0;

	unlink(copy);
	if (saturn_write_file_atomic(copy, script, script_len, &err) < 0 ||
	    chown(copy, uid, gid) < 0 || chmod(copy, 0600) < 0) {
		error("sched/saturn: batch %s: cannot write the script copy %s: %s %m", batch, copy,
		      err.text);
		goto done;
	}
	slurm_init_job_desc_msg(&desc);
	desc.name = xstrdup_printf("saturn-profile:%s", batch);
	desc.user_id = uid;
	desc.group_id = gid;
	desc.account = xstrdup(account);
	desc.partition = xstrdup(partition);
	desc.min_nodes = 1;
	desc.max_nodes = 1;
	desc.tres_per_node = xstrdup_printf("gres:gpu:%d", gpus);
	desc.time_limit = settings.profile_time_min;
	desc.work_dir = xstrdup(dir);
	desc.std_out = xstrdup_printf("%s/%s-%%j.out", dir, batch);
	desc.script = xstrdup_printf("#!/bin/sh\nexec '%s' --batch '%s' --script '%s' --task-ids '%s' --output '%s'\n",
				     settings.profiler, batch, copy, ids, out);
	desc.env_size = 2;
	desc.environment = xcalloc(3, sizeof(char *));
	desc.environment[0] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	desc.environment[1] = xstrdup_printf("SATURN_PROFILE_BATCH=%s", batch);
	if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS || !resp) {
		error("sched/saturn: batch %s: cannot submit the profiler job: %m", batch);
	} else {
		id = resp->job_id;
		info("sched/saturn: batch %s: submitted profiler job %u (%d GPUs, %d min): %s --task-ids %s --output %s",
		     batch, id, gpus, settings.profile_time_min, settings.profiler, ids, out);
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
	xfree(dir);
	xfree(copy);
	xfree(out);
	return id;
}

/* Before building the problem: for batches with held tasks, no profile
 * file and saturn_profiler set, submit one profiler job, and take their
 * tasks out of this cycle's snapshot (held, reason "saturn: profiling")
 * until the profile appears or the job ends without one. */
static void profiler_pass(saturn_snapshot_t *s)
{
	slurmctld_lock_t read_lock = {.conf = READ_LOCK, .job = READ_LOCK, .part = READ_LOCK};
	slurmctld_lock_t write_lock = {.conf = READ_LOCK, .job = WRITE_LOCK};
	int maxg = 0;

	if (!settings.profiler)
		return;
	for (int n = 0; n < s->nnodes; n++)
		if (s->nodes[n].gpus > maxg)
			maxg = s->nodes[n].gpus;
	for (int i = 0; i < s->njobs; i++) {
		const char *batch = s->jobs[i].batch;
		char *path;
		struct stat st;
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
		path = xstrdup_printf("%s/%s.json", profile_dir, batch);
		if (stat(path, &st) == 0) {
			xfree(path);
			continue; /* planned from the file (lookup_profile) */
		}
		xfree(path);
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
			job_record_t *jr;
			char *ids = NULL, *account = NULL, *partition = NULL, *script = NULL;
			uint32_t uid = 0, gid = 0;
			size_t len = 0;

			for (int k = i; k < s->njobs; k++)
				if (!strcmp(s->jobs[k].batch, batch))
					xstrfmtcat(ids, "%s%d", ids ? "," : "",
						   s->jobs[k].task_id < 0 ? 0 : s->jobs[k].task_id);
			lock_slurmctld(read_lock);
			if ((jr = find_job_record(s->jobs[i].job_id))) {
				buf_t *b = get_job_script(jr);

				uid = jr->user_id;
				gid = jr->group_id;
				account = xstrdup(jr->account);
				partition = xstrdup(jr->partition);
				if (b) {
					len = strnlen(get_buf_data(b), size_buf(b));
					script = xstrndup(get_buf_data(b), len);
					FREE_NULL_BUFFER(b);
				}
			}
			unlock_slurmctld(read_lock);
			if (script && maxg > 0) {
				mkdir_mode(path = xstrdup_printf("%s/profiler", state_dir), 01733);
				xfree(path);
				e->job_id = prof_submit(batch, uid, gid, account, partition, script, len,
							ids, maxg);
				e->array_id = s->jobs[i].array_job_id ? s->jobs[i].array_job_id :
									s->jobs[i].job_id;
				if (e->job_id)
					prof_save(e);
			} else {
				error("sched/saturn: batch %s: no script or no GPU node for a profiler job",
				      batch);
			}
			xfree(ids);
			xfree(account);
			xfree(partition);
			xfree(script);
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
				if ((jr = revalidate(&s->jobs[k])))
					set_reason(jr, reason, now);
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
	char *path = xstrdup_printf("%s/state.json", state_dir);
	char *txt = saturn_sched_state_to_json(s, b, plan, plan_id, s->now);
	saturn_error_t err = {{0}};
	static int warned;

	if (!txt) {
		error("sched/saturn: out of memory serialising the state");
	} else if (saturn_write_file_atomic(path, txt, strlen(txt), &err) < 0) {
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

/* last_job_update right after our own changes: not news for the loop */
static time_t own_update;

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
	int nd = saturn_sched_decide(s, b, plan, settings.release_slack_s, &d);

	if (nd < 0) {
		error("sched/saturn: out of memory deciding: cycle skipped");
		return -1;
	}
	for (int i = 0; i < nd; i++)
		debug2("sched/saturn: plan %s (%s): task %u_%d %s at %.1fs on %s, %d GPUs",
		       plan_id, plan->status, s->jobs[d[i].job].array_job_id, s->jobs[d[i].job].task_id,
		       d[i].release ? "release" : "hold", d[i].start_s, d[i].node, d[i].gpus);
	if (nd == 0 && b->nskipped == 0)
		return 0;
	primary = xcalloc(nd ? nd : 1, 1);
	count = xcalloc(nd ? nd : 1, sizeof(int));
	group_records(s, d, nd, primary, count);
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
				      .part = NO_LOCK, .fed = NO_LOCK};
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL, *carried = NULL;
	double t0, t1, t2, t3, t4 = 0, t5 = 0;
	int nsaturn, released = 0, new_plan = 0;

	t0 = now_mono();
	lock_slurmctld(read_lock);
	t1 = now_mono();
	nsaturn = take_snapshot(s, snap_of_node);
	t2 = now_mono();
	unlock_slurmctld(read_lock);
	if (nsaturn < 0) {
		error("sched/saturn: out of memory taking the snapshot: cycle skipped");
		return;
	}
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
	if (s->nnodes == 0) {
		static time_t warned;

		if (time(NULL) - warned > 600) {
			info("sched/saturn: %d Saturn task(s) but no usable node with GPUs (down, drained or not responding): waiting",
			     nsaturn);
			warned = time(NULL);
		}
		return;
	}
	read_progress(s);
	profiler_pass(s);
	if (s->njobs == 0)
		return;
	if (saturn_sched_build(s, lookup_profile, NULL, &b, &err) < 0) {
		error("sched/saturn: cannot build the problem: %s", err.text);
		return;
	}
	for (int i = 0; i < b.nskipped; i++) {
		const saturn_snap_job_t *j = &s->jobs[b.skipped[i]];

		error("sched/saturn: JobId=%u task %d of batch %s left held: %s", j->job_id,
		      j->task_id, j->batch, b.skip_reason[i]);
	}
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
		opts.time_limit_s = settings.solver_time_s;
		opts.abort_cb = abort_cb;
		opts.warm = prev_plan;
		plan = saturn_planner_solve(b.problem, &opts, &err);
		if (!plan)
			error("sched/saturn: planner failed (%s): using first-come-first-served", err.text);
	}
	if (!plan)
		plan = saturn_sched_fcfs(b.problem);
	if (!plan) {
		error("sched/saturn: out of memory planning: cycle skipped");
		goto out;
	}
	t3 = now_mono();

	/* keep the carried plan unless the new one is better by min_gain */
	if (carried && !saturn_sched_should_switch(plan->makespan_s, carried->makespan_s, 0,
						   settings.min_gain)) {
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
	prev_makespan_end = s->now + plan->makespan_s;

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
		    now - last_cycle >= settings.interval_s) {
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
	for (int i = 0; i < nprofiles; i++)
		saturn_profile_destroy(profiles[i].profile);
	xfree(profiles);
	nprofiles = 0;
	xfree(prof_jobs);
	nprof_jobs = 0;
	return NULL;
}
