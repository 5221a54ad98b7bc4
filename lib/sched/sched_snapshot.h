/* sched_snapshot.h - the snapshot: the plain structs sched/saturn copies
 * out of slurmctld under its read locks (jobs, nodes, busy GPUs; no Slurm
 * type), their helpers (sched_snapshot.c), and the batches' identity (uid,
 * name). Included by sched_core.h.
 */
#ifndef SATURN_SCHED_SNAPSHOT_H
#define SATURN_SCHED_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "feedback.h"
#include "model.h"
#include "node_class.h"
#include "profile.h"
#include "saturn_limits.h"

/* Buffer sizes of the snapshot's names: the limit + 1 for the NUL, so a
 * name at its limit is kept whole (saturn_limits.h). SATURN_NAME_LEN holds
 * a batch or a node name. */
#define SATURN_NAME_LEN ((SATURN_BATCH_NAME_MAX > SATURN_NODE_NAME_MAX ? SATURN_BATCH_NAME_MAX : SATURN_NODE_NAME_MAX) + 1)
#define SATURN_TECH_LEN (SATURN_TECHNIQUE_NAME_MAX + 1)

/* --- snapshot -------------------------------------------------------- */

typedef enum saturn_snap_state {
	SATURN_SNAP_HELD = 0,  /* pending, held by job_submit/saturn */
	SATURN_SNAP_RELEASED,  /* pending, released by us, not started yet */
	SATURN_SNAP_RUNNING,   /* running (or completing) */
} saturn_snap_state_t;

/* A Slurm limit on a job: its scope (key: the same for every job it
 * covers, never 0), the caps (0 = none) on GPUs held and jobs running at
 * once in the scope, and Slurm's own counts of what runs in it now (every
 * job, Saturn's included). */
#define SATURN_SNAP_LIMITS 4
typedef struct saturn_snap_limit {
	uint64_t key;
	int max_gpus, max_jobs;
	int used_gpus, used_jobs;
} saturn_snap_limit_t;

/* Nodes of one running task the snapshot records (the rest of a larger
 * allocation is busy GPUs to the planner). */
#define SATURN_SNAP_MAX_NODES 16

typedef struct saturn_snap_job {
	uint32_t job_id;       /* job record: for an unsplit task, the array's meta record */
	uint32_t array_job_id; /* 0 when not part of an array */
	int task_id;           /* array task id; -1 when not an array */
	char batch[SATURN_BATCH_NAME_MAX + 1];
	long uid;
	saturn_snap_state_t state;
	int req_gpus;          /* GPUs per node the user asked for (>= 0) */
	double time_limit_s;   /* user's time limit; 0 = none */
	double submit_time;    /* epoch */
	double start_time;     /* epoch, running jobs */
	int node;              /* index into snapshot nodes (running/released), else -1 */
	uint64_t gpu_mask;     /* running: allocated GPU ids on node */
	char technique[SATURN_TECH_LEN]; /* released/running: SATURN_TECHNIQUE or "user" */
	int gpus;              /* released/running: GPU count */
	/* Filled outside the locks (from the progress file): remaining
	 * batches, or -1 when unknown. */
	double batches_left;
	/* Also from the progress file (saturn_progress_summary): batches
	 * done (-1: no report), the job's own sec_per_batch (0: absent) and
	 * the report's time (epoch, 0: absent). */
	double batches_done;
	double progress_spb;
	double progress_updated;
	/* Filled by saturn_sched_feedback(): the smoothed observed
	 * sec_per_batch (0: unknown yet), the profile's for the option it
	 * runs with (0: none) and when the controller first saw a report
	 * of it (epoch, 0: none). */
	double obs_spb;
	double prior_spb;
	double first_report;
	/* Partitions the job may run in: bit k = the snapshot's partition k
	 * (see saturn_snap_node_t.part_mask). 0 = no restriction (unknown,
	 * or a snapshot that does not track partitions). */
	uint64_t part_mask;
	/* Pending tasks, for saturn_sched_decide_rehold (all zero = nothing
	 * to re-hold): */
	char pinned[SATURN_NAME_LEN]; /* node it is pinned to (ReqNodeList), "" = none */
	char pinned_state[16]; /* why the pinned node is unusable ("down", "drained",
				* "not responding", "future", "gone"), "" = usable */
	int planned;           /* released by a plan (SATURN_PLAN_ID set) */
	int requeued;          /* pending again after running (Slurm's restart count > 0) */
	int exit_held;         /* requeued and held by RequeueExitHold (special exit),
				* not by its user: state RELEASED in the snapshot */
	double begin_time;     /* Slurm's begin time, epoch; 0 = none */
	double not_before;     /* held: earliest start set by a re-hold (the requeue
				* credential delay), epoch; 0 = none */
	/* Running tasks, for reconfiguration (reconfig.h): */
	int reconfigure;       /* the job's --saturn-reconfigure: 1 yes, -1 no,
				* 0 not given (saturn_reconfigure decides) */
	int requeue;           /* Slurm may requeue it (--requeue, JobRequeue) */
	int restarts;          /* Slurm's restart count (requeues so far) */
	/* Several nodes (multi-node tasks; 0 reads as 1 everywhere): */
	int req_nodes;         /* held/released: the nodes the user asked for
				* (--nodes=k): the task needs at least k nodes' worth,
				* so options on fewer nodes are left out */
	int nnodes;            /* released: the node count it was released with;
				* running: nodes of its allocation kept here, node
				* being the first and the others in more_node[]
				* (at most SATURN_SNAP_MAX_NODES; the plugin turns
				* the GPUs of any further node into busy entries) */
	int more_node[SATURN_SNAP_MAX_NODES - 1];
	uint64_t more_mask[SATURN_SNAP_MAX_NODES - 1]; /* GPU ids there */
	int part_max_nodes;    /* held: the most nodes its partition(s) allow a
				* job (MaxNodes); options on more are left out;
				* 0 = no limit */
	/* held: per-job limits of its QOS and association (the smaller of
	 * the two; 0 = none): GPUs of one job (MaxTRESPerJob / MaxTRES
	 * gres/gpu), GPUs per node (MaxTRESPerNode gres/gpu), nodes of one job
	 * (MaxTRESPerJob / MaxTRES node). Slurm checks them when it starts a
	 * job, not when the controller releases it: an option beyond them
	 * would be released and then never start, its GPUs held idle in the
	 * plan, so such options are left out. */
	int max_job_gpus, max_node_gpus, max_job_nodes;
	/* Node classes (node_class.h), held and released jobs: */
	char gpu_type[SATURN_GPU_TYPE_MAX + 1]; /* GPU type the user asked for
						 * (--gres=gpu:a100:2), "" = any */
	char constraint[SATURN_CONSTRAINT_MAX + 1]; /* the job's --constraint, "" = none */
	int constraint_bad;    /* the constraint is longer than the buffer, or the
				* user asked for several GPU types: planned nowhere */
	/* Several users (multiuser.h): the priority Slurm's priority plugin
	 * would give the job were it not held (priority/multifactor's
	 * weighted factors, >= 1; 0 = unknown), and the QOS and association
	 * limits on it (slots with key 0 unused). */
	double prio;
	saturn_snap_limit_t limits[SATURN_SNAP_LIMITS];
	/* Facts over claims (doc/security.md, "A released task whose node
	 * stays busy"): */
	double released_at;    /* released: when the plan released it (epoch,
				* SATURN_RELEASED_AT); 0 = unknown */
	int bounces;           /* held/released: how often it was re-held because
				* its node stayed busy (SATURN_BOUNCES) */
	int overran;           /* running: it held the GPUs of a task released onto
				* them past their planned start (SATURN_OVERRAN):
				* planned until its time limit, its own reports and
				* profile no longer trusted */
	/* held/released: why Slurm will never start it as it is (its time
	 * limit over every partition's MaxTime, partitions or accounts its
	 * user may not use, a pending reason of Slurm's that is not about
	 * resources: "PartitionTimeLimit: ..."), "" = it may. Such a task
	 * is never released: held with this as its reason. */
	char never[96];
	/* A task that requeues itself (requeue.c; doc/security.md): */
	int excused;           /* pending: its requeues up to this restart count
				* were sched/saturn's own (its reconfiguration
				* signal, SATURN_EXCUSED): not charged */
	double charged_from;   /* held: it requeued itself, and the run it gave up
				* was released then (epoch, SATURN_CHARGED_FROM):
				* it starts again no earlier than this plus its
				* least claimed runtime; 0 = not charged */
	double requeued_at;    /* held: when it was re-held after requeueing
				* itself (epoch, SATURN_REQUEUED_AT); 0 = never */
} saturn_snap_job_t;

/* The plugin numbers the distinct partitions of the Saturn jobs of one
 * snapshot 0..63 (at most SATURN_MAX_PARTS; a job in a partition beyond
 * that gets part_mask 0). */
#define SATURN_MAX_PARTS 64

typedef struct saturn_snap_node {
	char name[SATURN_NODE_NAME_MAX + 1];
	int gpus; /* usable GPUs, 1..64 */
	/* Partitions (bits as in saturn_snap_job_t.part_mask) containing the
	 * node. A held or released job with a non-zero part_mask is planned
	 * only on nodes whose part_mask shares a bit with it. */
	uint64_t part_mask;
	/* Hardware (node_class.h): the GPU type(s) of the node's gres
	 * ("a100"; "a100,h100" for several; "" untyped), the interconnect
	 * its gres Links= record (SATURN_LINK_*), its features
	 * (comma-separated) and its class: set by the plugin, or derived by
	 * saturn_snapshot_classify() when left "". */
	char gpu_types[SATURN_GPU_TYPE_MAX + 1];
	char link[8];
	char features[SATURN_FEATURES_MAX + 1];
	char klass[SATURN_CLASS_NAME_MAX + 1];
} saturn_snap_node_t;

/* GPUs held by a job that is not a Saturn task. */
typedef struct saturn_snap_busy {
	int node;
	uint64_t gpu_mask;
	double until; /* epoch: the job's expected end */
} saturn_snap_busy_t;

typedef struct saturn_snapshot {
	double now; /* epoch when taken */
	int nnodes, cap_nodes;
	saturn_snap_node_t *nodes;
	int nbusy, cap_busy;
	saturn_snap_busy_t *busy;
	int njobs, cap_jobs;
	saturn_snap_job_t *jobs;
	/* The controller's runtime feedback (feedback.h), or NULL: the
	 * build corrects the speeds of tasks not started yet with it. Not
	 * owned; saturn_snapshot_reset leaves it. */
	const saturn_fb_t *feedback;
	/* The admin's saturn_node_classes rules, or NULL (classes derived
	 * from the nodes). Not owned; saturn_snapshot_reset leaves it. */
	const saturn_class_rules_t *class_rules;
	/* Per-class profiles, or NULL: the profile of batch (batch, uid)
	 * measured on node class klass (PROFILE_DIR/UID/NAME@CLASS.json),
	 * NULL when there is none. The build plans a held task's options
	 * on a class from that class's profile when it has one, else from
	 * the batch's profile (measured elsewhere, applies everywhere). Not
	 * owned; saturn_snapshot_reset leaves it. */
	const saturn_profile_t *(*class_profile)(const char *batch, long uid, const char *klass,
						 void *arg);
	void *class_profile_arg;
	/* At most this many tasks in one problem (saturn_max_tasks; 0 or
	 * more than SATURN_MAX_TASKS: SATURN_MAX_TASKS). Past it the held
	 * tasks are taken in Slurm's queue order and the rest are left held
	 * with a reason (saturn_sched_task_cap); the plan never fails for
	 * their number. Set by the caller. */
	int max_tasks;
	/* Predicted multi-node options of a batch's profile may be planned:
	 * they are measured on their nodes before a task runs on one
	 * (saturn_measure_predicted with saturn_profiler; batch_policy.h).
	 * 0: left out of the problem. Set by the caller. */
	int measure_multinode;
} saturn_snapshot_t;

/* Zeroed snapshot, or NULL (ENOMEM). */
saturn_snapshot_t *saturn_snapshot_create(void);
/* Empty it, keeping the allocations (for reuse every cycle). */
void saturn_snapshot_reset(saturn_snapshot_t *s);
/* Free; NULL is allowed. */
void saturn_snapshot_destroy(saturn_snapshot_t *s);
/* Append a zeroed entry and return it (NULL on ENOMEM, snapshot unchanged).
 * Cheap: amortised O(1), safe to call under slurmctld locks. */
saturn_snap_node_t *saturn_snapshot_add_node(saturn_snapshot_t *s);
saturn_snap_busy_t *saturn_snapshot_add_busy(saturn_snapshot_t *s);
saturn_snap_job_t *saturn_snapshot_add_job(saturn_snapshot_t *s);
/* Append a copy of jobs[src] and return it; NULL (snapshot unchanged) on
 * ENOMEM or when src is not in 0 .. njobs - 1. The unsplit tasks of an
 * array, thousands of them, are copies of one record's entry: written
 * once each, not zeroed first. */
saturn_snap_job_t *saturn_snapshot_add_job_copy(saturn_snapshot_t *s, int src);
/* Index of the node called name, or -1. */
int saturn_snapshot_node_index(const saturn_snapshot_t *s, const char *name);
/* GPUs of the largest snapshot node a job with part_mask may use (every
 * node when part_mask is 0); 0 when there is none. For the one-node
 * companion jobs (profiler, measurement) of a batch. */
int saturn_snapshot_max_gpus(const saturn_snapshot_t *s, uint64_t part_mask);

/* Give every node whose klass is "" its class (saturn_node_class with
 * s->class_rules). Idempotent; the build calls it too. */
void saturn_snapshot_classify(saturn_snapshot_t *s);

/* Whether held or released job j may run on node n as far as its typed
 * GPU request and its --constraint go (partitions aside): 1 yes, 0 no,
 * -1 when its constraint cannot be read (saturn_constraint_match) or
 * constraint_bad is set. */
int saturn_snap_job_fits_node(const saturn_snap_job_t *j, const saturn_snap_node_t *n);

/* The distinct classes of the snapshot's nodes (after classify), in order
 * of first appearance, with their node and GPU counts, as one line
 * "a100x2-pcie: 2 nodes, 4 GPUs; h100x2-nvlink: 2 nodes, 4 GPUs" into
 * buf (for `saturn status` and the log). Returns the class count. */
int saturn_snapshot_classes_line(saturn_snapshot_t *s, char *buf, size_t len);

/* --- batches: identity (uid, name) ----------------------------------- */

/* A batch is the pair (user, name): two users' batches of the same name are
 * two batches, with their own profile, companion jobs, notes and records.
 * 1 when a and b belong to the same batch, else 0. */
int saturn_snap_same_batch(const saturn_snap_job_t *a, const saturn_snap_job_t *b);

/* Snapshot jobs grouped by batch (uid, then name): group g is
 * member[first[g]] .. member[first[g + 1] - 1], positions into the input
 * in ascending order (so a group's first member is its earliest input). */
typedef struct saturn_batch_groups {
	int ngroups;
	int *member; /* n entries */
	int *first;  /* ngroups + 1 entries */
} saturn_batch_groups_t;

/* Group n snapshot jobs by batch in O(n log n) (one sort). jobs: the
 * snapshot job index of each input position (e.g. each decision's job);
 * NULL means the positions are the job indices 0..n-1 themselves. Returns
 * 0 with g filled (free with saturn_batch_groups_free), or -1 (ENOMEM, g
 * emptied). n = 0 gives 0 groups. */
int saturn_batch_groups(const saturn_snapshot_t *s, const int *jobs, int n,
			saturn_batch_groups_t *g);
/* Free what saturn_batch_groups() filled (not g itself); NULL allowed. */
void saturn_batch_groups_free(saturn_batch_groups_t *g);

/* Task id of a snapshot job in problems and plans: "ARRAYJOB_TASK" or
 * "JOB" for a job that is not an array. Writes into buf (>= 32 bytes). */
void saturn_sched_task_name(const saturn_snap_job_t *j, char *buf, size_t len);

#endif /* SATURN_SCHED_SNAPSHOT_H */
