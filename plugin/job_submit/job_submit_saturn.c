/* job_submit_saturn.c - job_submit/saturn: the controller-side gate for
 * Saturn jobs (those whose SPANK job environment carries SATURN_BATCH, set
 * by spank_saturn.so's --saturn-batch). At submission it re-checks the batch
 * name (a user could set the variable by hand), fills in the default name
 * (the job name, sanitized, or "batch"), rejects requests the planner cannot
 * honour with a message sbatch shows, and holds the job (priority 0) so that
 * Slurm's own schedulers cannot start it: sched/saturn releases it when the
 * plan says so. Every other job passes through untouched.
 *
 * Slurm turns a hold set at submission into a *user* hold (WAIT_HELD_USER),
 * which the user could release. Two things make it an administrator's hold:
 * job_modify accepts from non-operators only the updates on an allow-list
 * (submit_rules.c: Comment, JobName, MailType, MailUser, a shorter
 * TimeLimit), so hold, release, Priority, Nice and everything that would
 * break the rules below are refused; and a small thread turns the fresh
 * user hold into an admin hold (WAIT_HELD) with the reason "saturn: waiting
 * for plan (batch NAME)" right after the submission RPC has created the job
 * (no job_submit hook runs after creation). sched/saturn then owns the
 * reason.
 *
 * Rules (documented in saturn-slurm(8)): --nodes=k one count, not a range
 * (the task needs at least k nodes' worth),
 * GPUs requested per node (--gres=gpu[:type]:N or --gpus-per-node; --gpus=N
 * is turned into --gres=gpu:N; --gpus-per-task/--gpus-per-socket rejected),
 * no GRES other than gpu, no heterogeneous job, no --dependency (the plan
 * orders the batch), no array throttle (%N: the plan decides concurrency).
 */
#include "config.h" /* Slurm's, from the configured Slurm build folder */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np */
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
/* Map Slurm's unprefixed names (error, info, list_for_each, ...) to the
 * slurm_* symbols libslurmfull exports: without it `error` binds to glibc's
 * error(3), which prints and may exit. */
#include "src/common/slurm_xlator.h"

#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "envarray.h" /* lib/ */
#include "model.h" /* SATURN_MAX_TASK_NODES */

#include "../common/modify_fields.h"
#include "../common/slurm_compat.h"
#include "../common/submit_rules.h"

/* the unset owner of a request, as slurm_compat.h spells it without
 * slurmctld's headers */
#if SATURN_SLURM_AT_LEAST(23, 2)
_Static_assert(SATURN_JOB_DESC_UID_UNSET == SLURM_AUTH_NOBODY,
	       "slurm_compat.h: SATURN_JOB_DESC_UID_UNSET is not SLURM_AUTH_NOBODY");
#endif

const char plugin_name[] = "Saturn batch gate (validate and hold Saturn jobs)";
const char plugin_type[] = "job_submit/saturn";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init(void);
extern void fini(void);
extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg);
#if SATURN_JOB_MODIFY_HAS_ERR_MSG
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid,
		      char **err_msg);
#else
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid);
#endif

#define ENV_PREFIX SATURN_BATCH_ENV "="
#define ENV_PREFIX_LEN (sizeof(ENV_PREFIX) - 1)

/* How long after submission a user hold still counts as ours to convert. */
#define FRESH_SECS 120

/* --- the SATURN_BATCH entry of a SPANK environment ------------------------ */

/* The batch name of a job record, or NULL for a non-Saturn job. */
static const char *job_batch(job_record_t *job_ptr)
{
	return saturn_env_value(job_ptr->spank_job_env, job_ptr->spank_job_env_size,
				SATURN_BATCH_ENV);
}

/* --- hold conversion thread ----------------------------------------------- */

/* One per init(): fini() may have to leave a thread that waits for
 * slurmctld's locks behind (see fini), so the thread owns its state. */
typedef struct hold_ctx {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int stop;
	int pending; /* Saturn submissions not yet converted */
	time_t give_up; /* stop retrying after this time */
	int done;    /* the thread has left its loop */
} hold_ctx_t;

static hold_ctx_t *ctx;
static pthread_t hold_thread;
static pthread_mutex_t ctx_mutex = PTHREAD_MUTEX_INITIALIZER;

struct convert_arg {
	time_t now;
	int converted;
};

static int convert_one(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	struct convert_arg *a = arg;
	const char *batch;

	if (!IS_JOB_PENDING(job_ptr) || job_ptr->priority != 0 ||
	    job_ptr->state_reason != WAIT_HELD_USER || job_ptr->state_desc ||
	    !job_ptr->details || !(batch = job_batch(job_ptr)))
		return 0;
	if (job_ptr->details->submit_time + FRESH_SECS < a->now)
		return 0;
	job_ptr->state_reason = WAIT_HELD;
	job_ptr->state_desc =
		xstrdup_printf("saturn: waiting for plan (batch %s)", batch);
	a->converted++;
	debug("job_submit/saturn: %pJ held for batch %s", job_ptr, batch);
	return 0;
}

/* Wake-ups come while the submission RPC is still running: the job record
 * appears only after it takes the job write lock, which this thread may get
 * first. So it sweeps until it has converted as many jobs as were submitted,
 * retrying every RETRY_MS, for at most GIVE_UP_SECS after the last
 * submission (a submission that fails later never creates a record). */
#define RETRY_MS 50
#define GIVE_UP_SECS 5

static void *hold_loop(void *arg)
{
	hold_ctx_t *c = arg;
	slurmctld_lock_t job_write = {.job = WRITE_LOCK};

	pthread_mutex_lock(&c->mutex);
	while (!c->stop) {
		struct convert_arg a = {0};
		struct timespec until;

		if (!c->pending) {
			pthread_cond_wait(&c->cond, &c->mutex);
			continue;
		}
		pthread_mutex_unlock(&c->mutex);

		lock_slurmctld(job_write);
		pthread_mutex_lock(&c->mutex);
		if (!c->stop && job_list && !slurmctld_config.shutdown_time) {
			pthread_mutex_unlock(&c->mutex);
			a.now = time(NULL);
			list_for_each(job_list, convert_one, &a);
			if (a.converted)
				last_job_update = a.now;
			pthread_mutex_lock(&c->mutex);
		}
		unlock_slurmctld(job_write);

		c->pending -= a.converted;
		if (c->pending < 0 || time(NULL) > c->give_up)
			c->pending = 0;
		if (c->pending && !c->stop) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += RETRY_MS * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&c->cond, &c->mutex, &until);
		}
	}
	c->done = 1;
	pthread_mutex_unlock(&c->mutex);
	return NULL;
}

static void hold_ctx_free(hold_ctx_t *c)
{
	pthread_mutex_destroy(&c->mutex);
	pthread_cond_destroy(&c->cond);
	xfree(c);
}

/* Keep this object mapped for the life of the process: fini() may have to
 * leave the hold thread behind (see there), and Slurm dlclose()s plugins it
 * unloads. A second reference with RTLD_NODELETE makes that unload a no-op. */
static void pin_self(void)
{
	static int pinned;
	Dl_info info;

	if (pinned)
		return;
	if (dladdr((void *)pin_self, &info) && info.dli_fname &&
	    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
		pinned = 1;
	else
		error("job_submit/saturn: cannot pin the plugin in memory: %s",
		      dlerror());
}

extern int init(void)
{
	hold_ctx_t *c = xmalloc(sizeof(*c));

	pin_self();

	pthread_mutex_init(&c->mutex, NULL);
	pthread_cond_init(&c->cond, NULL);
	/* One sweep at start-up: a job submitted just before a restart (or
	 * reconfigure) may not have been converted yet. */
	c->pending = 1;
	c->give_up = time(NULL) + GIVE_UP_SECS;
	if (pthread_create(&hold_thread, NULL, hold_loop, c)) {
		error("job_submit/saturn: cannot start the hold thread: %m");
		hold_ctx_free(c);
		return SLURM_ERROR;
	}
	pthread_mutex_lock(&ctx_mutex);
	ctx = c;
	pthread_mutex_unlock(&ctx_mutex);
	info("job_submit/saturn: loaded");
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	hold_ctx_t *c;
	struct timespec until;
	int rc;

	pthread_mutex_lock(&ctx_mutex);
	c = ctx;
	ctx = NULL;
	pthread_mutex_unlock(&ctx_mutex);
	if (!c)
		return;
	pthread_mutex_lock(&c->mutex);
	c->stop = 1;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->mutex);
	/* The thread can only be slow to stop while it waits for the job
	 * write lock, which our caller may hold (scontrol reconfigure that
	 * drops this plugin). Joining would then deadlock: wait a little,
	 * and otherwise leave the thread (and its state) behind; it stops as
	 * soon as it gets the lock (the object stays mapped: pin_self). */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	rc = pthread_timedjoin_np(hold_thread, NULL, &until);
	if (rc == 0) {
		hold_ctx_free(c);
	} else {
		error("job_submit/saturn: hold thread busy at unload; leaving it to stop on its own");
		pthread_detach(hold_thread);
	}
}

static void hold_wake(void)
{
	pthread_mutex_lock(&ctx_mutex);
	if (ctx) {
		pthread_mutex_lock(&ctx->mutex);
		ctx->pending++;
		ctx->give_up = time(NULL) + GIVE_UP_SECS;
		pthread_cond_signal(&ctx->cond);
		pthread_mutex_unlock(&ctx->mutex);
	}
	pthread_mutex_unlock(&ctx_mutex);
}

/* --- the rules ------------------------------------------------------------ */

/* Nodes: a Saturn task may ask for k nodes (--nodes=k, one count, not a
 * range; k <= SATURN_MAX_TASK_NODES). The rule (saturn-slurm(8)): the task
 * then needs at least k nodes' worth; the plan picks k or more nodes of
 * its profile's options, or k nodes with the requested GPUs on each.
 * max_nodes is set to k. Returns NULL or a message (xmalloc'd). */
static char *check_nodes(job_desc_msg_t *d, const char *batch)
{
	uint32_t k = d->min_nodes != NO_VAL && d->min_nodes > 1 ? d->min_nodes : 1;

	if (d->max_nodes != NO_VAL && d->max_nodes != INFINITE && d->max_nodes != 0 &&
	    d->max_nodes != k)
		return xstrdup_printf("saturn: batch %s: give one node count (--nodes=%u), not a range up to %u; the plan picks the nodes",
				      batch, k, d->max_nodes);
	if (k > SATURN_MAX_TASK_NODES)
		return xstrdup_printf("saturn: batch %s: --nodes=%u is more than a Saturn task may span (%d)",
				      batch, k, SATURN_MAX_TASK_NODES);
	if (k > 1)
		d->max_nodes = k;
	return NULL;
}

/* Check the parts of a submission that a Saturn job must not have. Fields
 * at their "unset" value are fine. Returns NULL or a message (xmalloc'd).
 * (Updates go through the allow-list in job_modify instead.) */
static char *check_request(job_desc_msg_t *d, const char *batch)
{
	char *msg;
	saturn_tres_req_t r;
	char why[160];
	struct {
		const char *tres;
		const char *option;
	} per_x[] = {
		{d->tres_per_task, "--gpus-per-task"},
		{d->tres_per_socket, "--gpus-per-socket"},
	};

	if (d->het_job_offset != NO_VAL)
		return xstrdup_printf("saturn: batch %s: a heterogeneous job cannot be part of a Saturn batch",
				      batch);
	if ((msg = check_nodes(d, batch)))
		return msg;
	if (d->dependency && d->dependency[0])
		return xstrdup_printf("saturn: batch %s: --dependency is not supported for Saturn jobs (the plan orders the batch); submit the batch once its dependencies are done",
				      batch);
	if (d->array_inx && strchr(d->array_inx, '%'))
		return xstrdup_printf("saturn: batch %s: an array throttle (%%N in --array=%s) is not supported; the plan decides how many tasks run at once",
				      batch, d->array_inx);
	for (size_t i = 0; i < sizeof(per_x) / sizeof(per_x[0]); i++) {
		if (saturn_tres_parse(per_x[i].tres, &r, why, sizeof(why)) < 0)
			return xstrdup_printf("saturn: batch %s: %s", batch, why);
		/* cpu=N in tres_per_task is -c/--cpus-per-task (Slurm 23.11 on),
		 * which saturn_tres_parse counts apart: allowed */
		if (r.gpus || r.other)
			return xstrdup_printf("saturn: batch %s: %s is not supported for Saturn jobs; ask for GPUs per node with --gres=gpu:N (the plan then sets the count)",
					      batch, r.gpus ? per_x[i].option : "GRES per task/socket");
	}
	return NULL;
}

/* Check and normalise the GPU request: --gpus=N becomes gres:gpu:N per
 * node (N / k on k nodes, which must divide). Returns NULL or a message
 * (xmalloc'd). */
static char *check_gpus(job_desc_msg_t *d, const char *batch)
{
	saturn_tres_req_t node, job;
	char why[160];

	if (saturn_tres_parse(d->tres_per_node, &node, why, sizeof(why)) < 0 ||
	    saturn_tres_parse(d->tres_per_job, &job, why, sizeof(why)) < 0)
		return xstrdup_printf("saturn: batch %s: %s", batch, why);
	if (node.other || job.other)
		return xstrdup_printf("saturn: batch %s: only GPUs can be requested as GRES (got '%s'); the plan sets the GPU count",
				      batch, node.other ? node.first_other : job.first_other);
	if (node.gpus && job.gpus)
		return xstrdup_printf("saturn: batch %s: use either --gres=gpu:N or --gpus=N, not both",
				      batch);
	if (!node.gpus && !job.gpus)
		return xstrdup_printf("saturn: batch %s: a Saturn job must request GPUs, e.g. --gres=gpu:1 (the plan then sets the count)",
				      batch);
	if (job.gpus) {
		uint32_t k = d->min_nodes != NO_VAL && d->min_nodes > 1 ? d->min_nodes : 1;

		if (job.gpus % (int)k)
			return xstrdup_printf("saturn: batch %s: --gpus=%d cannot be split evenly over %u nodes; ask for GPUs per node with --gres=gpu:N",
					      batch, job.gpus, k);
		/* a per-job count is a per-node count on one node */
		xfree(d->tres_per_node);
		if (k == 1)
			d->tres_per_node = xstrdup(d->tres_per_job);
		else
			d->tres_per_node = xstrdup_printf(SATURN_TRES_GRES_PREFIX "gpu:%d",
							  job.gpus / (int)k);
		xfree(d->tres_per_job);
	}
	return NULL;
}

extern int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid,
		      char **err_msg)
{
	char name[SATURN_BATCH_NAME_MAX + 1];
	char why[160];
	const char *given;
	char *msg;
	long i;

	i = saturn_env_index(job_desc->spank_job_env, job_desc->spank_job_env_size,
			     SATURN_BATCH_ENV);
	if (i < 0)
		return SLURM_SUCCESS; /* not a Saturn job: untouched */

	given = job_desc->spank_job_env[i] + ENV_PREFIX_LEN;
	if (!*given) {
		saturn_batch_name_default(job_desc->name, name);
	} else if (saturn_batch_name_check(given, why, sizeof(why)) < 0) {
		*err_msg = xstrdup_printf("saturn: bad batch name '%s': %s",
					  given, why);
		info("job_submit/saturn: uid %u: rejected batch name '%s': %s",
		     submit_uid, given, why);
		return SLURM_ERROR;
	} else {
		snprintf(name, sizeof(name), "%s", given);
	}

	if ((msg = check_request(job_desc, name)) ||
	    (msg = check_gpus(job_desc, name))) {
		info("job_submit/saturn: uid %u: rejected: %s", submit_uid, msg);
		*err_msg = msg;
		return SLURM_ERROR;
	}

	/* exactly one SATURN_BATCH entry, with the final name */
	xfree(job_desc->spank_job_env[i]);
	job_desc->spank_job_env[i] = xstrdup_printf("%s%s", ENV_PREFIX, name);
	for (uint32_t k = (uint32_t)i + 1; k < job_desc->spank_job_env_size;) {
		char **env = job_desc->spank_job_env;

		if (env[k] && !strncmp(env[k], ENV_PREFIX, ENV_PREFIX_LEN)) {
			xfree(env[k]);
			memmove(&env[k], &env[k + 1],
				(job_desc->spank_job_env_size - k - 1) * sizeof(char *));
			job_desc->spank_job_env_size--;
			env[job_desc->spank_job_env_size] = NULL;
		} else {
			k++;
		}
	}

	/* sbatch also exports SLURM_SPANK_SATURN_BATCH (empty for a bare
	 * --saturn-batch) in the job's environment, where it would hide the
	 * final name: keep the two in step. */
	for (uint32_t k = 0; job_desc->environment && k < job_desc->env_size; k++) {
		char *e = job_desc->environment[k];

		if (e && !strncmp(e, "SLURM_SPANK_" ENV_PREFIX,
				  sizeof("SLURM_SPANK_" ENV_PREFIX) - 1)) {
			xfree(job_desc->environment[k]);
			job_desc->environment[k] =
				xstrdup_printf("SLURM_SPANK_%s%s", ENV_PREFIX, name);
		}
	}

	job_desc->priority = 0; /* held until sched/saturn releases it */
	hold_wake();
	debug("job_submit/saturn: uid %u: job '%s' joins batch %s (held)",
	      submit_uid, job_desc->name ? job_desc->name : "", name);
	return SLURM_SUCCESS;
}

/* Where the task stands, for the allow-list. */
static saturn_task_phase_t task_phase(job_record_t *job_ptr)
{
	if (IS_JOB_PENDING(job_ptr))
		return job_ptr->priority == 0 ? SATURN_PHASE_HELD
					      : SATURN_PHASE_RELEASED;
	return SATURN_PHASE_RUNNING; /* running, suspended, completing */
}

/* Slurm applies ArrayTaskThrottle before any job_submit hook runs
 * (_update_job), so refusing it must also undo it. A Saturn array never has
 * a throttle of its own (%N is refused at submission): back to 0, none. */
static void undo_throttle(job_desc_msg_t *job_desc, job_record_t *job_ptr)
{
	if (!job_desc->array_inx || !job_ptr->array_recs ||
	    !job_ptr->array_recs->max_run_tasks)
		return;
	info("job_submit/saturn: %pJ: ArrayTaskThrottle %u set by a refused update reset to 0",
	     job_ptr, job_ptr->array_recs->max_run_tasks);
	job_ptr->array_recs->max_run_tasks = 0;
}

/* For non-operators an update of a Saturn task is accepted only when every
 * part of the request that is set is on the allow-list of submit_rules.c
 * for the task's phase (held, released not started, running); anything
 * else, including members a later Slurm adds, is refused. Operators
 * (validate_operator: root, SlurmUser, AdminLevel Operator and
 * Administrator; sched/saturn updates as root) may change everything; see
 * saturn-slurm(8) for what that means for the plan. */
#if SATURN_JOB_MODIFY_HAS_ERR_MSG
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid,
		      char **err_msg)
#else
extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr, uint32_t submit_uid)
#endif
{
	saturn_modify_field_t set[SATURN_JOB_DESC_FIELDS_MAX];
	saturn_task_phase_t phase;
	const char *batch;
	char why[256];
	size_t n, bad = 0;

	if (!job_ptr || !(batch = job_batch(job_ptr)))
		return SLURM_SUCCESS; /* not a Saturn job */
	if (validate_operator(submit_uid))
		return SLURM_SUCCESS; /* root, SlurmUser, operators, sched/saturn */

	phase = task_phase(job_ptr);
	n = saturn_job_desc_fields(job_desc, set, SATURN_JOB_DESC_FIELDS_MAX);
	if (n > SATURN_JOB_DESC_FIELDS_MAX) {
		/* cannot happen with the table as it is: refuse, not guess */
		info("job_submit/saturn: uid %u: update of %pJ (batch %s) refused: %zu fields set",
		     submit_uid, job_ptr, batch, n);
		undo_throttle(job_desc, job_ptr);
		return ESLURM_ACCESS_DENIED;
	}
	for (size_t i = 0; i < n; i++) {
		if (!set[i].field)
			continue;
		if (!strcmp(set[i].field, "time_limit")) {
			/* unset (NO_VAL) or unlimited: any limit is shorter */
			set[i].current = job_ptr->time_limit == NO_VAL ?
						 INFINITE :
						 job_ptr->time_limit;
			set[i].has_current = 1;
		} else if (!strcmp(set[i].field, "user_id")) {
			set[i].current = job_ptr->user_id;
			set[i].has_current = 1;
		}
	}
	if (saturn_modify_check(set, n, phase, &bad, why, sizeof(why)) == 0)
		return SLURM_SUCCESS;

	info("job_submit/saturn: uid %u: update of %pJ (batch %s, %s task) refused: %s",
	     submit_uid, job_ptr, batch, saturn_task_phase_name(phase), why);
#if SATURN_JOB_MODIFY_HAS_ERR_MSG
	/* the user sees why (scontrol prints it) */
	if (err_msg && !*err_msg)
		*err_msg = xstrdup_printf("saturn: %s", why);
#endif
	undo_throttle(job_desc, job_ptr);
	/* "Job is in held state, pending scheduler release" says exactly
	 * why a hold, release or priority change of a held task fails */
	if (phase == SATURN_PHASE_HELD && saturn_modify_is_hold_field(set[bad].field))
		return ESLURM_JOB_HELD;
	return ESLURM_ACCESS_DENIED;
}
