/* saturn_companion.c - what sched/saturn's companion jobs (profiler,
 * measurement) share: each user's count of them against
 * saturn_companion_jobs (lib/sched/budget.h decides); a batch's companion
 * record (STATE_DIR/KIND-UID-KEY.job) read, written, and removed with its
 * script copy (STATE_DIR/scripts/UID-KEY.K.script); a companion job's
 * state in slurmctld; a policy's log action. Used by saturn_profiles.c
 * and saturn_measure.c; the counts are taken by saturn_prune.c every
 * cycle. Agent thread only; saturn_companion_state under the job read
 * lock.
 */
#include "config.h" /* Slurm's */

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "batch_policy.h"
#include "budget.h"
#include "safefile.h"

#include "saturn_companion.h"
#include "saturn_files.h"

int saturn_companion_gate(saturn_ctx_t *ctx, saturn_bpol_actions_t *acts, int n0, long uid)
{
	for (int i = n0; i < acts->n; i++) {
		int rc;

		if (acts->a[i].kind != SATURN_BPOL_SUBMIT_PROFILER &&
		    acts->a[i].kind != SATURN_BPOL_SUBMIT_MEASURE)
			continue;
		rc = saturn_budget_companion_wait(acts, i,
						  (int)saturn_uidtab_get(&ctx->companions, uid),
						  ctx->cfg.companion_jobs);
		if (rc == 0 && saturn_uidtab_add(&ctx->companions, uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		if (rc < 0)
			error("sched/saturn: uid %ld: out of memory limiting companion jobs: submitted",
			      uid);
		return rc;
	}
	return 0;
}

void saturn_companion_files_remove(const saturn_ctx_t *ctx, const char *kind, long uid,
				   const char *key)
{
	int profiler = !strcmp(kind, "profiler");
	char *rec = xstrdup_printf("%s-%ld-%s.job", kind, uid, key);
	char *script = xstrdup_printf("%ld-%s.%s.script", uid, key, profiler ? "profile" : "measure");
	char *sdir = xstrdup_printf("%s/scripts", ctx->state_dir);
	int n = saturn_remove_at(ctx->state_fd, ctx->state_dir, rec);

	n += saturn_remove_at(ctx->scripts_fd, sdir, script);
	if (n)
		debug("sched/saturn: batch %s of uid %ld: no tasks and no %s job left: removed its record and script copy",
		      key, uid, profiler ? "profiler" : "measurement");
	xfree(rec);
	xfree(script);
	xfree(sdir);
}

/* STATE_DIR/KIND-UID-BATCH.job: the plugin's record of a batch's companion
 * job (root only, not in the users' folders), kept across restarts. A
 * record STATE_DIR/KIND-BATCH.job from before batches were per user does
 * not say whose batch it was: it is ignored (with a note). */
char *saturn_record_read(const saturn_ctx_t *ctx, const char *kind, long uid, const char *batch)
{
	char *name = xstrdup_printf("%s-%ld-%s.job", kind, uid, batch);
	long owners[2] = {(long)geteuid(), 0};
	size_t len;
	struct stat st;
	char *buf = ctx->state_fd < 0 ? NULL :
		saturn_file_read_at(ctx->state_fd, ctx->state_dir, name, owners, 2, 1 << 20,
				    &len, NULL, NULL);

	xfree(name);
	if (buf || ctx->state_fd < 0)
		return buf;
	name = xstrdup_printf("%s-%s.job", kind, batch);
	if (fstatat(ctx->state_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		info("sched/saturn: batch %s of uid %ld: ignoring %s/%s, a record from before batches were per user (it does not say whose batch it was)",
		     batch, uid, ctx->state_dir, name);
	xfree(name);
	return NULL;
}

void saturn_record_write(const saturn_ctx_t *ctx, const char *kind, long uid, const char *batch,
			 uint32_t job_id, const char *text)
{
	char *name = xstrdup_printf("%s-%ld-%s.job", kind, uid, batch);
	saturn_error_t err = {{0}};

	if (ctx->state_fd < 0)
		saturn_error_set(&err, "no state folder");
	if (ctx->state_fd < 0 ||
	    saturn_file_write_at(ctx->state_fd, ctx->state_dir, name, text, strlen(text),
				 SATURN_ANY_UID, SATURN_ANY_UID, 0600, &err) < 0)
		error("sched/saturn: batch %s of uid %ld: cannot record %s job %u: %s", batch, uid,
		      kind, job_id, err.text);
	xfree(name);
}

void saturn_bpol_log(const saturn_bpol_action_t *a, const char *batch, long uid)
{
	if (a->level == SATURN_BPOL_ERROR)
		error("sched/saturn: batch %s of uid %ld: %s", batch, uid, a->text);
	else if (a->level == SATURN_BPOL_INFO)
		info("sched/saturn: batch %s of uid %ld: %s", batch, uid, a->text);
	else
		debug("sched/saturn: batch %s of uid %ld: %s", batch, uid, a->text);
}

void saturn_companion_state(uint32_t job_id, saturn_companion_t *c)
{
	job_record_t *jr = job_id ? find_job_record(job_id) : NULL;

	memset(c, 0, sizeof(*c));
	c->job_id = job_id;
	if (!job_id)
		return;
	if (!jr || IS_JOB_FINISHED(jr) || IS_JOB_COMPLETING(jr)) {
		c->state = SATURN_COMPANION_ENDED;
	} else if (IS_JOB_PENDING(jr)) {
		c->state = SATURN_COMPANION_PENDING;
		c->pending_since =
		    jr->details ? (double)jr->details->submit_time : (double)time(NULL);
	} else {
		c->state = SATURN_COMPANION_RUNNING;
	}
}
