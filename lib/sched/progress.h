/* progress.h - the job side's progress file and progress protocol.
 *
 * Progress file (saturn-progress/1, read by sched/saturn): one JSON object
 * {"format":"saturn-progress/1","job_id":N,"batches_done":N,
 *  "batches_total":N,"sec_per_batch":X,"updated":EPOCH}
 * written atomically (a fresh temporary file in the same directory created
 * with O_EXCL|O_NOFOLLOW, then rename), so a reader never sees half a file
 * and a symlink planted under the name is replaced, never followed. It
 * lives in STATE_DIR/progress/UID/ (0700, the job owner's).
 *
 * Progress protocol (training code -> saturn-run, saturn-run(1)): lines of
 * text, each at most SATURN_PROTO_MAX_LINE bytes,
 *   SATURN_PROGRESS batches_done=N [sec_per_batch=X] [batches_total=N]
 *                   [peak_mem_mb=X]
 *   SATURN_OOM [peak_mem_mb=X] [reason=TEXT...]
 *   SATURN_CHECKPOINTED batch=N
 * Unknown keys are ignored; unknown line kinds are ignored. Slurm-free.
 */
#ifndef SATURN_PROGRESS_H
#define SATURN_PROGRESS_H

#include <stddef.h>

#include "error.h"

#define SATURN_PROGRESS_FORMAT "saturn-progress/1"
#define SATURN_PROTO_MAX_LINE 1024
#define SATURN_PROGRESS_MAX_BYTES 65536

typedef struct saturn_progress {
	long job_id; /* 0 = unknown */
	double batches_done;
	double batches_total; /* 0 = unknown */
	double sec_per_batch; /* 0 = unknown */
	double updated;	      /* seconds since the epoch */
} saturn_progress_t;

/* Serialise as saturn-progress/1. malloc'd string or NULL (ENOMEM). */
char *saturn_progress_to_json(const saturn_progress_t *p);

/* Parse saturn-progress/1. Every number must be finite and >= 0, and
 * within the planner's limits (model.h): batches_done and batches_total at
 * most SATURN_MAX_BATCHES, sec_per_batch at most SATURN_MAX_RUNTIME_S, so
 * the work left derived from it is a runtime saturn_problem_check()
 * accepts. 0, or -1 with err naming the field ("batches_total: 1e+300 is
 * beyond the limit of 1000000000000"). */
int saturn_progress_parse(const char *buf, size_t len, saturn_progress_t *p,
			  saturn_error_t *err);

/* Write p to path atomically (see above), mode 0644. 0 or -1 with err. */
int saturn_progress_write(const char *path, const saturn_progress_t *p,
			  saturn_error_t *err);

/* Read a progress file written by a job, defensively: no symlinks
 * (O_NOFOLLOW), a regular file, owned by uid (unless uid < 0), at most
 * SATURN_PROGRESS_MAX_BYTES. 0, or -1 with err ("PATH: ..."). */
int saturn_progress_read(const char *path, long uid, saturn_progress_t *p,
			 saturn_error_t *err);

/* saturn_progress_read(), reduced to the batches still to run
 * (batches_total - batches_done, >= 0); -1 with err when the file does not
 * state batches_total. */
int saturn_progress_remaining(const char *path, long uid, double *batches_left,
			      saturn_error_t *err);

/* What the controller takes from a progress file. */
typedef struct saturn_progress_obs {
	double batches_left;  /* batches_total - batches_done (>= 0); -1 when
			       * the file does not state batches_total */
	double batches_done;
	double sec_per_batch; /* the job's own measurement; 0 = absent */
	double updated;	      /* epoch of the report; 0 = absent */
} saturn_progress_obs_t;

/* Reduce a parsed progress file to what the controller plans with. */
void saturn_progress_summary(const saturn_progress_t *p, saturn_progress_obs_t *o);

/* saturn_progress_read(), reduced by saturn_progress_summary(). 0, or -1
 * with err (o unchanged). */
int saturn_progress_observe(const char *path, long uid, saturn_progress_obs_t *o,
			    saturn_error_t *err);

typedef enum saturn_proto_kind {
	SATURN_PROTO_NONE = 0, /* not a protocol line */
	SATURN_PROTO_PROGRESS,
	SATURN_PROTO_OOM,
	SATURN_PROTO_CHECKPOINTED,
} saturn_proto_kind_t;

typedef struct saturn_proto_msg {
	saturn_proto_kind_t kind;
	double batches_done;  /* PROGRESS; CHECKPOINTED: batch; -1 = absent */
	double sec_per_batch; /* -1 = absent */
	double batches_total; /* -1 = absent */
	double peak_mem_mb;   /* -1 = absent */
	char reason[256];     /* OOM: the rest of the line after reason= */
} saturn_proto_msg_t;

/* Parse one protocol line (without its newline). Returns the kind (NONE for
 * other text); -1 with err for a protocol line with a malformed value
 * ("SATURN_PROGRESS: batches_done: not a number"). */
int saturn_proto_parse(const char *line, saturn_proto_msg_t *m,
		       saturn_error_t *err);

#endif /* SATURN_PROGRESS_H */
