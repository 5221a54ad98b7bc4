/* profile.h - a batch's throughput profile (saturn-profile/1, doc/formats.md).
 *
 * Written by saturn-profile (the companion job) or supplied by the user;
 * read by sched/saturn to build the planner's options. Per task signature
 * (what changes speed: model, batch size, command; not the learning rate) and
 * per technique x GPU count: seconds per batch, peak memory and a status.
 * Only "measured" and "predicted" options are usable by the planner.
 *
 * Profiles come from files written by user jobs: the parser is defensive
 * (size-limited, every field checked, fuzzed) and names the field it
 * rejects.
 */
#ifndef SATURN_PROFILE_H
#define SATURN_PROFILE_H

#include <stddef.h>

#include "model.h"

#define SATURN_PROFILE_FORMAT "saturn-profile/1"
#define SATURN_PROFILE_MAX_BYTES (16u << 20)

typedef enum saturn_opt_status {
	SATURN_OPT_MEASURED = 0,
	SATURN_OPT_PREDICTED,
	SATURN_OPT_OOM,
	SATURN_OPT_FAILED,
	SATURN_OPT_TIMEOUT,
	SATURN_OPT_SKIPPED, /* not measured on purpose: never the fastest */
} saturn_opt_status_t;

/* "measured", "predicted", "oom", "failed", "timeout", "skipped"; NULL for
 * bad values.
 * saturn_opt_status_parse returns -1 for an unknown name. */
const char *saturn_opt_status_name(saturn_opt_status_t s);
int saturn_opt_status_parse(const char *name, saturn_opt_status_t *s);

typedef struct saturn_profile_option {
	char *technique;
	int gpus;
	double sec_per_batch; /* > 0 when usable; 0 when oom/failed/timeout */
	double peak_mem_mb;   /* 0 = unknown */
	saturn_opt_status_t status;
	char *reason;         /* why oom/failed/timeout, or NULL */
	char *params;         /* technique parameters as a JSON object text, or NULL */
	int nodes;            /* nodes the option spans (gpus on each); 0 or 1 = one
			       * node ("nodes" key, 1 to SATURN_MAX_TASK_NODES,
			       * written only when > 1) */
} saturn_profile_option_t;

/* Nodes a profile option spans (nodes, 0 read as 1). */
static inline int saturn_profile_option_nodes(const saturn_profile_option_t *o)
{
	return o->nodes > 1 ? o->nodes : 1;
}

typedef struct saturn_profile_task {
	char *signature;     /* e.g. "gpt2-xl/bs16"; unique in the profile */
	int ntask_ids;
	int *task_ids;       /* array task ids of the batch with this signature */
	double batches;      /* total batches each of these tasks runs */
	char *klass;         /* node class measured on, or NULL = default */
	int noptions;
	saturn_profile_option_t *options;
} saturn_profile_task_t;

typedef struct saturn_nccl_bw {
	int gpus;
	double allreduce_busbw_gbs; /* nccl-tests bus bandwidth, GB/s */
	double allgather_busbw_gbs;
} saturn_nccl_bw_t;

/* Hardware summary of one node class. */
typedef struct saturn_profile_hw {
	char *klass;        /* NULL = default class */
	char *node;         /* node the probe ran on */
	char *gpu_model;    /* e.g. "NVIDIA H100 80GB HBM3", or "cpu-standin" */
	int gpus;
	double gpu_mem_mb;
	char *interconnect; /* "nvswitch", "nvlink", "pcie", "unknown" */
	double *link_gbs;   /* gpus*gpus matrix of GPU-to-GPU bandwidth (GB/s), or NULL */
	int nnccl;
	saturn_nccl_bw_t *nccl;
	double gemm_tflops; /* dense GEMM throughput of GPU 0, TFLOP/s (2n^3 per
			       n x n product; FP32 on the CPU stand-in, FP16
			       tensor cores on CUDA); 0 = not measured */
} saturn_profile_hw_t;

typedef struct saturn_profile {
	char *batch;        /* batch name (--saturn-batch) */
	double created;     /* seconds since the epoch */
	int nhw;
	saturn_profile_hw_t *hw;
	int ntasks;
	saturn_profile_task_t *tasks;
} saturn_profile_t;

/* Allocate an empty profile; NULL on ENOMEM. */
saturn_profile_t *saturn_profile_create(void);

/* Free a profile and everything it owns; NULL is allowed. */
void saturn_profile_destroy(saturn_profile_t *pr);

/* Parse len bytes. Returns a profile or NULL with err naming the field
 * ("tasks[2] (gpt2/bs16).options[1].sec_per_batch: ..."). The planner's
 * limits (model.h) are checked here: batches at most SATURN_MAX_BATCHES,
 * sec_per_batch and every usable option's batches x sec_per_batch at most
 * SATURN_MAX_RUNTIME_S, technique names of at most
 * SATURN_TECHNIQUE_NAME_MAX characters. Every string is inside a safe
 * character set (safetext.h): technique, status and class names are
 * SATURN_TEXT_NAME; signatures, reasons, hardware descriptions, the batch
 * and the params' JSON text one line of printable ASCII (SATURN_TEXT_LINE),
 * so that nothing a user writes here can break a log line, a reason or a
 * record. */
saturn_profile_t *saturn_profile_parse(const char *buf, size_t len,
				       saturn_error_t *err);

/* Load a file written by a user job: refuses symlinks (O_NOFOLLOW), files
 * not owned by expect_uid (when expect_uid != (uid_t)-1, pass as long) and
 * files over SATURN_PROFILE_MAX_BYTES. NULL with err ("PATH: ..."). */
saturn_profile_t *saturn_profile_load(const char *path, long expect_uid,
				      saturn_error_t *err);

/* Serialise. malloc'd string or NULL (ENOMEM). */
char *saturn_profile_to_json(const saturn_profile_t *pr);

/* The profile task that covers array task id `task_id`, or NULL. */
const saturn_profile_task_t *saturn_profile_find(const saturn_profile_t *pr,
						 int task_id);

/* The index of pt's option with technique, gpus (per node) and nodes (0
 * reads as 1), or -1: the key a profile task's options are unique by (the
 * parser refuses a second one), for a task reported from outside (a
 * running job's technique and GPU count); whether the option is usable is
 * the caller's to check. */
int saturn_profile_task_option(const saturn_profile_task_t *pt, const char *technique, int gpus,
			       int nodes);

/* Planner options of a profile task: the usable (measured or predicted)
 * options, as a malloc'd array of saturn_option_t whose strings are copies
 * (class copied from the task's klass), each with its identity: prof_opt
 * its index in pt->options (where its params are), source "" (the caller
 * of a class's own profile puts the class name there). Returns the
 * count (>= 0) and stores the array in *opts (NULL when 0), or -1 on
 * ENOMEM. Free each option (saturn_option_clear()) and the array. */
int saturn_profile_options(const saturn_profile_task_t *pt,
			   saturn_option_t **opts);

#endif /* SATURN_PROFILE_H */
