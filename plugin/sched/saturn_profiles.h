/* saturn_profiles.h - companion profiler jobs and what they share with
 * the measurement jobs (saturn_profiles.c; no locks unless said).
 */
#ifndef SCHED_SATURN_PROFILES_H
#define SCHED_SATURN_PROFILES_H

#include <stddef.h>
#include <stdint.h>

#include "batch_policy.h"
#include "budget.h"
#include "sched_core.h"
#include "sched_cycle.h"

#include "saturn_ctx.h"

/* A batch is (uid, name) in all of these: two users' batches of the same
 * name have their own profile, profiler job, records and notes. */

/* The facts for the cycle's profiler step (saturn_cycle_in_t's
 * profiler): per batch (uid, name) of s, whether its profile file is
 * there, its record and the states of its profiler and per-class profiler
 * jobs (one read lock). NULL without saturn_profiler or tasks. Valid until
 * the next call. */
const saturn_profstate_t *saturn_profiler_facts(saturn_ctx_t *ctx, const saturn_snapshot_t *s);

/* After the cycle, before its decisions are applied: keep and write the
 * profiler records it changed, and submit the profiler jobs it asks for
 * (the owners under one read lock; with each, one job per node class the
 * batch may use when there are several: NAME@CLASS.json; each counted in
 * ctx->companions); a job's id goes into the reasons of the tasks
 * waiting for it. A job that cannot be submitted leaves its tasks held
 * this cycle (the next plans them from their requests). Returns the
 * number of jobs that could not be submitted. */
int saturn_profiler_apply(saturn_ctx_t *ctx, const saturn_snapshot_t *s, saturn_cycle_out_t *out);

/* The batch's owner and script, copied from job_id's record; the caller
 * holds the job read lock. 0, or -1 when the record or its script is gone.
 * Free with saturn_batch_owner_free() either way. */
typedef struct saturn_batch_owner {
	uint32_t uid, gid;
	char *account, *partition, *script;
	size_t script_len;
} saturn_batch_owner_t;
int saturn_batch_owner(uint32_t job_id, saturn_batch_owner_t *o);
void saturn_batch_owner_free(saturn_batch_owner_t *o);

/* Submit (no locks held) a one-node job saturn-KIND:BATCH as the batch's
 * owner with gpus GPUs that runs "saturn_profiler --batch BATCH --script
 * COPY ARGS --output PROFILE_DIR/UID/BATCH.json" plus --cache
 * PROFILE_DIR/UID/cache (or --no-cache), in STATE_DIR/jobs/UID with the
 * script copied to STATE_DIR/scripts/UID-BATCH.KIND.script; ARGS is
 * shell text the caller has quoted. Returns the job id, 0 on failure
 * (logged). */
uint32_t saturn_submit_profiler(const saturn_ctx_t *ctx, const char *kind, const char *batch,
				const saturn_batch_owner_t *o, const char *args, int gpus);

/* The measurement job saturn-measure:BATCH as saturn_submit_profiler
 * ("measure"), on nodes nodes (-N nodes, gpus GPUs per node) for items of
 * options on several nodes (#12). */
uint32_t saturn_submit_measure(const saturn_ctx_t *ctx, const char *batch,
			       const saturn_batch_owner_t *o, const char *args, int gpus,
			       int nodes);

/* As saturn_submit_profiler, on node class klass's GPUs (gres
 * gpu:GPU_TYPE:GPUS): named saturn-KIND:BATCH@CLASS, with --class CLASS,
 * writing PROFILE_DIR/UID/BATCH@CLASS.json. Returns the job id, 0 on
 * failure (logged). */
uint32_t saturn_submit_class_companion(const saturn_ctx_t *ctx, const char *kind, const char *batch,
				       const saturn_batch_owner_t *o, const char *args, int gpus,
				       const char *klass, const char *gpu_type);

/* Every cycle (no lock held; takes the job read lock once when a record
 * has a job): forget the profiler records of batches without tasks in
 * live whose job ended (their files go: saturn_companion_files_remove)
 * and the class profiler jobs that ended; add each user's jobs still
 * pending or running to active. */
void saturn_profiles_prune(const saturn_ctx_t *ctx, const saturn_live_t *live,
			   saturn_uidtab_t *active);

/* Whether uid's profiler job for key (NAME, or NAME@CLASS for a class
 * profiler job) is pending or running as of the last prune. 1 or 0. */
int saturn_profiles_active(long uid, const char *key);

/* Free the profile cache and profiler records (agent thread ending). */
void saturn_profiles_fini(void);

#endif /* SCHED_SATURN_PROFILES_H */
