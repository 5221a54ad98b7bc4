/* sched_core.h - the Slurm-free half of sched/saturn.
 *
 * sched/saturn copies what it needs out of slurmctld under read locks into a
 * plain snapshot (these structs), releases the locks, and everything from
 * there to "which job gets released with what" happens here, without Slurm:
 * settings parsing, building the planner problem from the snapshot and the
 * batches' profiles (or the users' own requests when a batch has none), the
 * first-come-first-served fallback plan, the decisions per job (release now
 * or show the plan as the reason text), progress files, and the persisted
 * state (saturn-sched-state/1). The plugin then re-validates and applies the
 * decisions under the write locks. All of it is unit-tested without Slurm.
 */
#ifndef SATURN_SCHED_CORE_H
#define SATURN_SCHED_CORE_H

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

/* --- settings (SchedulerParameters saturn_*= keys) ------------------- */

typedef struct saturn_sched_settings {
	double interval_s;     /* saturn_interval: seconds between cycles (10) */
	double solver_time_s;  /* saturn_solver_time: planner budget (2) */
	char *state_dir;       /* saturn_state_dir: NULL = StateSaveLocation/saturn */
	char *profile_dir;     /* saturn_profile_dir: NULL = STATE_DIR/profiles */
	double min_gain;       /* saturn_min_gain: fraction, 0..1 (0.05) */
	int backfill;          /* saturn_backfill: load sched/backfill (1) */
	double release_slack_s; /* saturn_release_slack: release when due within (5) */
	char *profiler;        /* saturn_profiler: saturn-profile program, NULL = none */
	int profile_time_min;  /* saturn_profile_time: profiler job time limit, min (30) */
	int measure_predicted; /* saturn_measure_predicted: re-measure a predicted option
				* before releasing a task onto it (1; needs saturn_profiler) */
	int profile_cache;     /* saturn_profile_cache: profiler jobs reuse PROFILE_DIR/cache/UID (1) */
	double internode_gbs;  /* saturn_internode_bw: bus bandwidth of a collective across
				* nodes, GB/s, handed to the profiler jobs (--internode-bw)
				* for predicted multi-node options; 0 = none (0) */
	int fairness;          /* saturn_fairness / saturn_objective: SATURN_FAIR_* */
	int bound;             /* saturn_bound: the no-harm bound of saturn_objective=bounded,
				* SATURN_BOUND_SHARE (fair-share split) or _STOCK (stock
				* Slurm with the users' requests) (multiuser.h) */
	int feedback;          /* saturn_feedback: runtime feedback (feedback.h) corrects
				* the profile's speeds (1); 0 = the profile only */
	int record;            /* saturn_record: where a released task's plan record
				* goes, SATURN_PLANREC_* (planrec.h; admin_comment) */
	saturn_class_rules_t *node_classes; /* saturn_node_classes: the admin's
					     * classes (node_class.h), NULL = derived */
	char *node_classes_text; /* the setting as given, NULL = none */
	int max_tasks;         /* saturn_max_tasks: most tasks one plan takes; past it
				* the first in Slurm's queue order (SATURN_MAX_TASKS) */
} saturn_sched_settings_t;

/* saturn_fairness: none = one plan of every user's tasks (shortest
 * makespan of all); share = users planned one after the other in order of
 * their fair-share finish tags (fairness.h). */
enum { SATURN_FAIR_NONE = 0, SATURN_FAIR_SHARE = 1 };
/* saturn_objective (multiuser.h) selects the same field: makespan (= none),
 * share, weighted (flow times weighted by Slurm's priorities) or bounded
 * (no batch later than its fair-share deadline where a plan can, then the
 * shortest makespan). */
enum { SATURN_FAIR_WEIGHTED = 2, SATURN_FAIR_BOUNDED = 3 };
enum { SATURN_BOUND_SHARE = 0, SATURN_BOUND_STOCK = 1 };

/* Defaults; strings NULL. */
void saturn_sched_settings_init(saturn_sched_settings_t *s);

/* One saturn_*= value as a number: a whole decimal string in [lo, hi],
 * finite. 0 with *out set, or -1 (*out unchanged). Shared by every
 * settings parser (saturn_reconfig_settings_parse too). */
int saturn_setting_num(const char *v, double lo, double hi, double *out);

/* Free the strings (s itself is the caller's). NULL is allowed. */
void saturn_sched_settings_free(saturn_sched_settings_t *s);

/* Parse the saturn_* keys out of a SchedulerParameters string (comma
 * separated key=value; other keys are ignored; NULL is an empty string)
 * into s, which must have been initialised. Bad values keep the previous
 * value; returns the number of bad keys (0 = all good) with err describing
 * the first ("saturn_interval=abc: must be a number of seconds from 1 to
 * 3600"). */
int saturn_sched_settings_parse(saturn_sched_settings_t *s, const char *params,
				saturn_error_t *err);

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

/* --- problem --------------------------------------------------------- */

/* Where a batch's throughputs come from. Return the batch's profile (owned
 * by the callee, valid until the build returns) or NULL for "none: use the
 * users' requests". */
typedef const saturn_profile_t *(*saturn_profile_lookup_fn)(const char *batch,
							     long uid, void *arg);

typedef struct saturn_sched_build {
	saturn_problem_t *problem; /* checked; owned by the caller */
	int *job_of_task;          /* problem task index -> snapshot job index */
	int any_profile;           /* at least one task planned from a profile */
	/* Jobs left out (no option fits any node, input beyond the model's
	 * limits): snapshot indices, with a reason each, so the plugin can
	 * show them. */
	int nskipped;
	int *skipped;
	char (*skip_reason)[128];
} saturn_sched_build_t;

/* Turn the snapshot into a problem. Held and released tasks get the options
 * of their batch's profile (all usable technique x GPU-count options, total
 * batches from the profile) or, without a profile, one option: technique
 * "user", the requested GPU count, runtime = time limit (1 h when none).
 * Released tasks keep the option they were released with. A held task
 * starts no earlier than its begin time or not_before (release_s: the
 * requeue credential delay of a re-held task). Running tasks are
 * pinned (node, GPU ids, option) with their remaining work: from the
 * progress file (batches_left) when known, else the planned runtime minus
 * the time they have run (at least 1 s). GPUs of other jobs become busy
 * entries until those jobs' expected end. Tasks whose options fit no node
 * are skipped (listed in out).
 * Partitions: when some job's part_mask misses some node's part_mask, the
 * nodes get a class per distinct part_mask ("partitions:0x3") and each held
 * or released job's options are restricted to the classes of the nodes that
 * share a partition with it (one copy of an option per such class; klass
 * stays NULL when that is every class). A held job without such a node
 * with enough GPUs is skipped ("saturn: no usable GPU node in partition(s)
 * of this job"); a released one (Slurm places it) stays unrestricted.
 * Running tasks are pinned with klass NULL. When every job may use every
 * node (one partition, or part_mask 0), no class is set: the problem is
 * the same as without partitions.
 * Hardware (node_class.h): when the nodes are of several classes
 * (saturn_node_class with s->class_rules, or their klass), or a held or
 * released job asks for a GPU type or a --constraint, the classes are the
 * hardware classes (named by them, "CLASS@partitions:0xM" when the
 * partitions matter too); a job is planned only on classes every node of
 * which fits its type and constraint (saturn_snap_job_fits_node), else
 * skipped with a reason naming them ("saturn: no usable GPU node has GPU
 * type v100"). A profile option measured on a class (the profile task's
 * klass names it) and the options of a class's own profile
 * (s->class_profile) go to that class only; the batch profile's other
 * options go to the classes without options of their own.
 * Fault isolation: one job's bad input costs that job, never the problem.
 * Profile options beyond the model's limits (model.h: runtime batches x
 * sec_per_batch over SATURN_MAX_RUNTIME_S, batches over SATURN_MAX_BATCHES,
 * sec_per_batch not > 0, GPU counts, technique names over
 * SATURN_TECHNIQUE_NAME_MAX) are dropped; a held job left with none is
 * skipped ("saturn: profile: fsdp/4 GPUs: batches x sec_per_batch = ...");
 * a released or running one goes by its time limit. A running task's
 * remaining time is clamped to [1 s, what its time limit leaves, the
 * model's limit] (an absurd progress file cannot push it out), its GPU ids
 * to those its node has; one on GPUs another running task holds is
 * skipped. Busy GPUs' ends are clamped into [0, SATURN_MAX_RUNTIME_S].
 * Should saturn_problem_check() still refuse the result, the tasks it
 * refuses on their own are dropped into the skipped list ("saturn: left
 * out of the plan: CHECK'S MESSAGE") and the check is retried. Returns 0,
 * or -1 with err (ENOMEM, no usable node, or a fault in the nodes). On
 * failure out is emptied. */
int saturn_sched_build(const saturn_snapshot_t *s, saturn_profile_lookup_fn lookup,
		       void *arg, saturn_sched_build_t *out, saturn_error_t *err);

/* Free what a build produced (not out itself). */
void saturn_sched_build_free(saturn_sched_build_t *out);

/* --- the task cap (task_cap.c) --------------------------------------- */

/* Which jobs of s a problem of at most cap tasks (cap <= 0 or above
 * SATURN_MAX_TASKS: SATURN_MAX_TASKS) holds: every running and released
 * one (they hold GPUs or are Slurm's to start), then held ones in Slurm's
 * queue order (saturn_sched_queue_cmp) while there is room. keep[i] (s->njobs
 * entries) is set to 1 for those, 0 for the held ones left out. Returns
 * the number left out (0 when all fit), or -1 (ENOMEM: keep all 1). One
 * user's many tasks can thus delay only the tasks behind them in Slurm's
 * queue, never stop the plan of all (doc/security.md, "The task cap"). */
int saturn_sched_task_cap(const saturn_snapshot_t *s, int cap, unsigned char *keep);

/* Slurm's queue order of two held jobs: the priority Slurm would give them
 * (prio, higher first, when both know it), then submission time, job id
 * (the array's), task id. <0, 0, >0 like strcmp. */
int saturn_sched_queue_cmp(const saturn_snap_job_t *a, const saturn_snap_job_t *b);

/* The reason of a held task Slurm will never start (j->never). */
#define SATURN_NEVER_PREFIX "saturn: held: Slurm will not start it: "

/* The reason of a held task left out by the cap. */
#define SATURN_CAP_REASON "saturn: waits: more tasks held than a plan takes (saturn_max_tasks); planned once among the first in the queue"

/* After plan's releases were applied this cycle (sched/saturn's fast path
 * applies the carried plan before the solve): each task of b->problem
 * that was held at the build (held_before[t] != 0) and whose job is now
 * SATURN_SNAP_RELEASED in s is pinned as the next cycle's build would
 * pin it: is_released on the node plan gave it, with only the option
 * plan gave it (plan's entry then points to option 0). A plan solved
 * afterwards in the same cycle then starts those tasks where Slurm will,
 * and decides the held tasks around them, not around a placement of its
 * own. A task plan does not place is left as it is. Returns the number
 * of tasks pinned. */
int saturn_sched_pin_released(const saturn_snapshot_t *s, saturn_sched_build_t *b,
			      saturn_plan_t *plan, const unsigned char *held_before);

/* First-come-first-served plan: tasks in problem order (running first as
 * pinned), each with its first option, at the earliest time that many GPUs
 * are free on one node (GPU timelines never overlap, so the plan is valid).
 * Used for batches without a profile ("users' requests, in submission
 * order") and as the safety net when the planner fails. Returns a plan with
 * method "fcfs" or NULL (ENOMEM). */
saturn_plan_t *saturn_sched_fcfs(const saturn_problem_t *p);

/* --- decisions ------------------------------------------------------- */

typedef struct saturn_decision {
	int job;        /* snapshot job index */
	int release;    /* 1: release now with the fields below; 0: keep held */
	char node[SATURN_NODE_NAME_MAX + 1];
	int gpus;
	char technique[SATURN_TECH_LEN];
	double start_s; /* planned start, relative to the snapshot */
	char reason[160]; /* held: "saturn: starts in ~2h10m on n2, 4 GPUs, fsdp" */
	/* Nodes of the plan entry (1 for one node: node). gpus is per node.
	 * A multi-node task is released onto exactly these nodes
	 * (saturn_sched_nodelist: ReqNodeList, NumNodes=nnodes), never onto
	 * fewer. */
	int nnodes;
	int assign; /* index of the entry in the plan it was decided from */
	/* release: the GPU type to release it with (saturn_release_type:
	 * the user's, else the node's only one; "" = untyped) and the
	 * node's class (node_class.h) */
	char gpu_type[SATURN_GPU_TYPE_MAX + 1];
	char klass[SATURN_CLASS_NAME_MAX + 1];
} saturn_decision_t;

/* The comma-separated node names ("n1,n2", in the plan's order) of
 * decision d's plan entry; plan is the one d was decided from. Returns 0,
 * or -1 (buf "") when a name is missing or the list does not fit len; a
 * buffer of d->nnodes x (SATURN_NODE_NAME_MAX + 1) + 1 bytes always fits
 * a plan of checked names. */
int saturn_sched_nodelist(const saturn_plan_t *plan, const saturn_decision_t *d, char *buf,
			  size_t len);

/* For every held task in the plan: release when its start is within
 * slack_s (and its release_s has passed), otherwise a reason text. Returns the number of decisions written
 * into a malloc'd array (*out, NULL when 0) or -1 (ENOMEM). */
int saturn_sched_decide(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			const saturn_plan_t *plan, double slack_s,
			saturn_decision_t **out);

/* When the next cycle must run so that a task of plan still held in s is
 * released on time: seconds from the snapshot until the earliest such task
 * comes within slack_s of its planned start and its release_s has passed
 * (0 when one is due already), or -1 when plan holds none. Without it a
 * task due between two cycles waits for the next one (saturn_interval). */
double saturn_sched_next_due(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			     const saturn_plan_t *plan, double slack_s);

/* Pending tasks that must go back into the admin hold and be planned again
 * like any held task. */
typedef enum saturn_rehold_cause {
	SATURN_REHOLD_NONE = 0,
	SATURN_REHOLD_NODE,      /* released, not started, its pinned node unusable */
	SATURN_REHOLD_REQUEUED,  /* requeued by Slurm after running (pinned, begin
				  * time in the future), or held by RequeueExitHold */
	SATURN_REHOLD_UNPLANNED, /* pending with priority > 0 but never released by
				  * a plan (escaped the hold) */
	SATURN_REHOLD_NEVER,     /* released, and Slurm will never start it (never) */
	SATURN_REHOLD_LATE,      /* released, not started SATURN_LATE_GRACE_S after
				  * its release, its pinned node's GPUs still busy
				  * (another task overran its plan) */
} saturn_rehold_cause_t;

/* A released task still pending this long after its release, on a node
 * without the GPUs it needs free, goes back to the plan ... */
#define SATURN_LATE_GRACE_S 60.0
/* ... at most this many times (SATURN_BOUNCES): then it stays released and
 * waits for its node, as Slurm would have it. */
#define SATURN_MAX_BOUNCES 3

/* GPUs of snapshot node n that no running task and no other job holds. */
int saturn_snap_free_gpus(const saturn_snapshot_t *s, int n);

/* The running Saturn tasks holding GPUs of released job j's pinned node
 * (the ones a SATURN_REHOLD_LATE blames): their snapshot indices into out
 * (at most max). Returns the number written. */
int saturn_sched_late_holders(const saturn_snapshot_t *s, const saturn_snap_job_t *j, int *out,
			      int max);

typedef struct saturn_rehold {
	int job;                     /* snapshot job index */
	saturn_rehold_cause_t cause;
	char reason[160];            /* "saturn: re-planning (node n1 down)" */
	int self_requeued;           /* saturn_sched_self_requeued(): charge it */
} saturn_rehold_t;

/* Whether snapshot job j must be re-held, and why (reason into buf, may be
 * NULL). Only RELEASED jobs can be; in this order: exit_held; requeued with
 * a pin and a begin time after s->now; pinned to a node that is not among
 * the snapshot's usable nodes (pinned_state says why; a released job without
 * a pin is left to Slurm); never (Slurm will not start it); not planned;
 * released more than
 * SATURN_LATE_GRACE_S ago (released_at) onto a node with fewer free GPUs
 * than it needs, bounced fewer than SATURN_MAX_BOUNCES times (LATE). A task held on purpose by its user
 * is not in the snapshot at all. */
saturn_rehold_cause_t saturn_sched_rehold_cause(const saturn_snapshot_t *s,
						const saturn_snap_job_t *j, char *buf, size_t len);

/* Every job of s to re-hold: the number written into a malloc'd array
 * (*out, NULL when 0), or -1 (ENOMEM, *out NULL). Consecutive snapshot jobs
 * of one array meta record share a record: each is listed (the plugin
 * re-holds the record once). */
int saturn_sched_decide_rehold(const saturn_snapshot_t *s, saturn_rehold_t **out);

/* Turn job j of the snapshot into a held task after the plugin has re-held
 * it, so this cycle's plan counts it like any held task: state HELD, no
 * node, pin, plan or technique; not_before = the begin time Slurm set for
 * a requeue when still ahead (the credential delay becomes its release_s;
 * see saturn_sched_build); when it requeued itself
 * (saturn_sched_self_requeued), charged_from = saturn_sched_charge_from()
 * and requeued_at = s->now. */
void saturn_snapshot_mark_held(saturn_snapshot_t *s, saturn_snap_job_t *j);

/* --- a task that requeues itself (requeue.c) ------------------------- */

/* 1 when released job j is re-held because Slurm requeued it after it ran
 * (SATURN_REHOLD_REQUEUED) and the task itself made it stop: exit 75 under
 * RequeueExit or RequeueExitHold, `scontrol requeue` by its user (or an
 * operator, or anything else Slurm does not tell apart). Not charged, 0:
 * a requeue sched/saturn's reconfiguration signal asked for (restarts <=
 * excused), and one after its pinned node became unusable (Slurm's
 * requeue after a node failure). */
int saturn_sched_self_requeued(const saturn_snapshot_t *s, const saturn_snap_job_t *j);

/* When the run that job j gave up started to be charged: its release
 * (released_at, when known and not in the future), else s->now. */
double saturn_sched_charge_from(const saturn_snapshot_t *s, const saturn_snap_job_t *j);

/* The release_s a held task t (built from job j) gets for requeueing
 * itself: seconds from s->now until j->charged_from plus t's least
 * runtime (saturn_task_runtime) among its options that fit some node;
 * 0 when not charged (charged_from 0, not held) or that time has passed;
 * at most SATURN_MAX_RUNTIME_S. So the task is charged like a running
 * task that keeps its GPUs until its claimed end: a longer claim costs
 * longer, a shorter one blocks nobody for long. */
double saturn_sched_requeue_charge(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
				   const saturn_task_t *t);

/* Where held job j stands in the problem's order of held tasks (which
 * the first-come-first-served plan follows): its submit time, or, once it
 * requeued itself, requeued_at: behind every task submitted before it
 * gave up its run, as if submitted anew then. */
double saturn_sched_queued_at(const saturn_snap_job_t *j);

/* The end of a held task's reason while the charge delays it. */
#define SATURN_REQUEUE_NOTE " (requeued itself: not before its last run's planned end)"

/* "saturn: starts in ~2h10m on n2, 4 GPUs, fsdp" into buf. */
void saturn_sched_reason(char *buf, size_t len, double start_s,
			 const char *node, int gpus, const char *technique);

/* Keep the previous plan unless the new one is better by min_gain?
 * old_makespan_left_s is the old plan's end minus now. Returns 1 to switch
 * to the new plan: its makespan is below old_makespan_left_s x (1 -
 * min_gain), or the old plan has no time left. (A changed task set never
 * gets here: saturn_sched_carry() gives no plan to keep.) */
int saturn_sched_should_switch(double new_makespan_s, double old_makespan_left_s,
			       double min_gain);

/* The gain a new plan needs over the carried one (the min_gain of
 * saturn_sched_should_switch). carried_left_s is the carried plan's
 * makespan now, re-timed on this cycle's problem (observed speeds,
 * overruns); expected_left_s what the plan expected when it was made, less
 * the time since (<= 0: unknown). min_gain keeps a plan against the
 * solver's noise on the same problem; a plan that has slipped by min_gain
 * or more since it was made was made on speeds now known to be wrong, and
 * any plan shorter by SATURN_SLIPPED_GAIN replaces it (the new one expects
 * what it is measured by, so it keeps min_gain until it slips in turn). */
#define SATURN_SLIPPED_GAIN 0.01
double saturn_sched_switch_gain(double carried_left_s, double expected_left_s, double min_gain);

/* The previous cycle's plan, elapsed_s later, as a plan of the new problem
 * p: running tasks as pinned in p; the others keep their option, node and
 * order, with start times moved by elapsed_s (never before 0) and shifted
 * right until enough GPUs of their node are free (a task overran, another
 * job holds them); GPU ids are re-chosen (earliest free), because Slurm
 * picks the ids itself. Each keeps an option of the same technique and
 * GPU count that fits its node's class (partitions). The result is always
 * a valid schedule. Tasks of prev that are gone from p (finished,
 * cancelled) are dropped. NULL when p has a task prev does not know (a new submission) or
 * whose option or node is gone or no longer fits (GPU count or class,
 * e.g. the partitions changed), or on ENOMEM. The caller keeps the carried
 * plan unless a fresh one beats it by saturn_min_gain
 * (saturn_sched_should_switch). */
saturn_plan_t *saturn_sched_carry(const saturn_plan_t *prev, double elapsed_s,
				  const saturn_problem_t *p);

/* --- runtime feedback (feedback.h) ----------------------------------- */

/* Once per cycle, after the progress files are read into s: fold every
 * running job's report into fb (saturn_fb_job_report), fill its obs_spb,
 * prior_spb (from its batch's profile: lookup as for the build, may be
 * NULL) and first_report, record the ratio observed / profiled for its
 * key (saturn_fb_record, at s->now), forget ended jobs and the
 * corrections of batches with no job left in s, and set
 * s->feedback = fb. Returns 0, or -1 (ENOMEM: fb keeps what it had, the
 * snapshot's feedback fields may be partly filled; s->feedback is set
 * all the same). fb NULL is saturn_feedback=no: s->feedback = NULL and
 * every job's obs_spb, prior_spb and first_report 0, so that the build
 * plans with the profile only, as before feedback existed; returns 0. */
int saturn_sched_feedback(saturn_fb_t *fb, saturn_snapshot_t *s, saturn_profile_lookup_fn lookup,
			  void *arg);

/* --- persisted state (saturn-sched-state/1) -------------------------- */

/* Serialise the plan (times made absolute with now), per task its snapshot
 * state and batch (name and uid), and the GPU nodes planned on with their GPU counts;
 * with s->feedback, the corrections and, per running task, the profiled
 * and observed sec_per_batch.
 * malloc'd JSON text or NULL (ENOMEM). */
char *saturn_sched_state_to_json(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
				 const saturn_plan_t *plan, const char *plan_id,
				 double now);

/* The parts of a persisted state the plugin and `saturn status` need. */
typedef struct saturn_sched_state_task {
	char *id, *batch, *technique, *node, *state;
	long uid; /* the batch's user; -1 in states written before it was recorded */
	long job_id; /* the Slurm job; 0 when absent */
	int gpus;
	int *gpu_ids; /* gpus ids per node (nnodes x gpus, node after node), or
		       * NULL when absent (the plan named none) */
	int nnodes;   /* nodes it spans ("nodes"); 0 reads as 1 */
	char **more_nodes; /* the nodes after node (nnodes - 1), or NULL */
	double start, end; /* epochs */
	/* running tasks: the profile's and the observed sec_per_batch
	 * (runtime feedback); 0 when unknown or absent */
	double spb_profile, spb_observed;
} saturn_sched_state_task_t;

typedef struct saturn_sched_state_node {
	char *name;
	int gpus;
	char *klass; /* its node class (node_class.h); NULL in states written before */
} saturn_sched_state_node_t;

typedef struct saturn_sched_state {
	char *plan_id;
	double updated, makespan_end; /* epochs */
	double makespan_s, lower_bound_s, solve_s;
	char *method;
	int ntasks;
	saturn_sched_state_task_t *tasks;
	int nnodes; /* the GPU nodes planned on (0 in states written before) */
	saturn_sched_state_node_t *nodes;
	int ncorr; /* the runtime feedback's corrections (0 in states written before) */
	saturn_fb_corr_t *corr;
} saturn_sched_state_t;

/* The state's format and its version. A change that an older reader
 * would misread bumps the version; fields added within a version are
 * optional (absent in states written before). */
#define SATURN_SCHED_STATE_VERSION 1
#define SATURN_SCHED_STATE_FORMAT "saturn-sched-state/1"

/* N of a format string "saturn-sched-state/N"; -1 when format is NULL, of
 * another document or N is not a plain number. */
int saturn_sched_state_version(const char *format);

/* Parse (every field saturn_sched_state_to_json writes; unknown keys are
 * ignored); NULL with err naming the field. A state of another version
 * than SATURN_SCHED_STATE_VERSION is refused with a message that says
 * "format: version N ..." (older, or written by a newer sched/saturn):
 * callers ignore it, since the job records, not the state, say which task
 * is held, released or running. */
saturn_sched_state_t *saturn_sched_state_parse(const char *buf, size_t len,
					       saturn_error_t *err);
void saturn_sched_state_destroy(saturn_sched_state_t *st);

#endif /* SATURN_SCHED_CORE_H */
