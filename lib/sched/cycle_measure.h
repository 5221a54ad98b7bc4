/* cycle_measure.h - the measurement step of a cycle (saturn_measure_predicted
 * with saturn_profiler): before a task is released onto an option its
 * profile only predicts, the cycle holds it and asks for a short job
 * (saturn-measure:NAME) that measures the option first. The decisions are
 * lib/sched/bpol_measure.c's; this step runs them inside saturn_cycle_run
 * on the cycle's own decisions, over the batches' measurement records
 * given as input, and returns the holds (in the decisions), the jobs to
 * submit and the records as they now are. The plugin submits the jobs
 * and keeps the records (plugin/sched/saturn_measure.c).
 */
#ifndef SATURN_CYCLE_MEASURE_H
#define SATURN_CYCLE_MEASURE_H

#include "batch_policy.h"
#include "node_class.h"
#include "saturn_limits.h"

/* --- the batches' measurement records --------------------------------- */

/* One record: the batch (uid, batch) measured on its own profile (klass
 * "") or on node class klass's own profile (NAME@KLASS.json). */
typedef struct saturn_measset_entry {
	long uid;
	char batch[SATURN_BATCH_NAME_MAX + 1];
	char klass[SATURN_CLASS_NAME_MAX + 1];
	saturn_meas_rec_t rec; /* owned */
} saturn_measset_entry_t;

typedef struct saturn_measset {
	int n, cap;
	saturn_measset_entry_t *e;
} saturn_measset_t;

/* The index of (uid, batch, klass) in ms (klass NULL = ""), or -1. */
int saturn_measset_index(const saturn_measset_t *ms, long uid, const char *batch,
			 const char *klass);
/* Put (uid, batch, klass) -> *rec into ms, taking rec's strings (rec is
 * zeroed); an entry of the same key is replaced. The entry's index, or -1
 * (ENOMEM, or a name over its limit: EINVAL; rec unchanged). */
int saturn_measset_put(saturn_measset_t *ms, long uid, const char *batch, const char *klass,
		       saturn_meas_rec_t *rec);
/* Free every record and the array; ms is zeroed. NULL allowed. */
void saturn_measset_free(saturn_measset_t *ms);

/* --- what a cycle asks the plugin to submit ------------------------------ */

/* A measurement job for the batch (uid, batch) (klass "": its profile;
 * else node class klass's own, on that class's GPUs). */
typedef struct saturn_cycle_measure {
	long uid;
	char batch[SATURN_BATCH_NAME_MAX + 1];
	char klass[SATURN_CLASS_NAME_MAX + 1];
	/* the snapshot job whose owner and script the job takes (the batch's
	 * first task due) */
	int owner;
	int gpus, nodes; /* GPUs per node; nodes (1 = one) */
	char *list;	 /* the --measure list "TASK:TECHNIQUE:GPUS[xNODES],..." */
	int ntasks;
	int *tasks; /* the decisions held for it */
} saturn_cycle_measure_t;

/* The batch's key in logs and file names: "NAME" or "NAME@CLASS", into
 * buf (at least SATURN_MEAS_KEY_LEN bytes). Returns buf. */
#define SATURN_MEAS_KEY_LEN (SATURN_BATCH_NAME_MAX + SATURN_CLASS_NAME_MAX + 2)
const char *saturn_meas_key(const char *batch, const char *klass, char *buf, size_t len);

#endif /* SATURN_CYCLE_MEASURE_H */
