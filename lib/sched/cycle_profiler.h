/* cycle_profiler.h - the profiler step of a cycle (saturn_profiler set): a
 * batch without a profile has its held tasks wait for a profiler job
 * (saturn-profile:NAME) instead of being planned; while the job, or a
 * per-class profiler job, runs they stay held ("saturn: profiling (job
 * N)"); a job that ends without a profile leaves the batch to its users'
 * requests. The decisions are lib/sched/batch_policy.c's; this step runs
 * them inside saturn_cycle_run on the facts the plugin gathered (which
 * batch has a profile file, the records, the jobs' states), takes the
 * waiting tasks out of the cycle's snapshot, and returns the jobs to
 * submit, the tasks held with their reasons and the records as they now
 * are. The plugin submits the jobs and keeps the records
 * (plugin/sched/saturn_profiles.c).
 */
#ifndef SATURN_CYCLE_PROFILER_H
#define SATURN_CYCLE_PROFILER_H

#include "batch_policy.h"
#include "node_class.h"
#include "saturn_limits.h"
#include "sched_snapshot.h"

/* --- what the plugin found, per batch ---------------------------------- */

/* A per-class profiler job of a batch (NAME@CLASS.json). */
typedef struct saturn_profclass_job {
	char klass[SATURN_CLASS_NAME_MAX + 1];
	saturn_companion_t job;
} saturn_profclass_job_t;

/* One batch (uid, batch) of the snapshot. */
typedef struct saturn_profstate_entry {
	long uid;
	char batch[SATURN_BATCH_NAME_MAX + 1];
	int exists;		/* PROFILE_DIR/UID/NAME.json is there (whatever it holds) */
	saturn_prof_rec_t rec;	/* its profiler record (as kept; read when !exists) */
	saturn_companion_t job; /* what the plugin found about rec.job_id */
	int nclass;		/* its per-class profiler jobs not seen ended */
	saturn_profclass_job_t cls[SATURN_CLASS_RULES_MAX];
} saturn_profstate_entry_t;

typedef struct saturn_profstate {
	int n, cap;
	saturn_profstate_entry_t *e;
} saturn_profstate_t;

/* The entry of (uid, batch) in ps, or NULL. */
const saturn_profstate_entry_t *saturn_profstate_find(const saturn_profstate_t *ps, long uid,
						      const char *batch);
/* Append a copy of *e (a batch already there is replaced). 0, or -1
 * (ENOMEM). */
int saturn_profstate_put(saturn_profstate_t *ps, const saturn_profstate_entry_t *e);
/* Free the array; ps is zeroed. NULL allowed. */
void saturn_profstate_free(saturn_profstate_t *ps);

/* --- what the cycle gives ------------------------------------------------ */

/* A profiler job to submit for the batch (uid, batch). */
typedef struct saturn_cycle_profiler {
	long uid;
	char batch[SATURN_BATCH_NAME_MAX + 1];
	uint32_t owner; /* the job id of the task whose user and script it takes */
	int gpus;	/* GPUs (the largest node of the batch's partitions) */
	char *task_ids; /* "0,1,2" (its --task-ids) */
} saturn_cycle_profiler_t;

/* A task taken out of the cycle to wait for a profiler job: held with
 * reason (the plugin sets it). profiler: the index of the job in
 * saturn_cycle_out_t.profilers it waits for (its id goes into the reason
 * once submitted), or -1. */
typedef struct saturn_cycle_prof_hold {
	saturn_snap_job_t job; /* as gathered */
	char reason[160];
	int profiler;
} saturn_cycle_prof_hold_t;

/* A batch's profiler record as the cycle left it. */
typedef struct saturn_cycle_prof_rec {
	long uid;
	char batch[SATURN_BATCH_NAME_MAX + 1];
	saturn_prof_rec_t rec;
} saturn_cycle_prof_rec_t;

#endif /* SATURN_CYCLE_PROFILER_H */
