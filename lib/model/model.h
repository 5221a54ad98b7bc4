/* model.h - the planner's world: nodes, tasks, options, and plans.
 *
 * A problem (saturn-problem/1, doc/formats.md) is a set of nodes with GPU
 * counts and a set of tasks, each with remaining work (batches) and a list of
 * options (technique x GPU count x seconds per batch, optionally restricted to
 * one node class). A plan (saturn-plan/1) gives every task one option, one
 * node, concrete GPU ids and a start time.
 *
 * The structs are public on purpose: the planner's inner loops and the Slurm
 * adapters walk these arrays directly, and accessors for every field would
 * double the code without hiding anything worth hiding. Ownership is simple:
 * a problem owns every string and array reachable from it, a plan likewise;
 * saturn_problem_destroy()/saturn_plan_destroy() free all of it and accept
 * NULL. Times are seconds relative to "now" (the moment the problem was taken).
 *
 * No Slurm, lp_solve, hwloc or JSON type appears here.
 */
#ifndef SATURN_MODEL_H
#define SATURN_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "saturn_limits.h"

#define SATURN_PROBLEM_FORMAT "saturn-problem/1"
#define SATURN_PLAN_FORMAT "saturn-plan/1"
/* Version 2 of both formats adds multi-node options and plan entries
 * (doc/formats.md). Writers emit version 1 unless something spans more than
 * one node, so older readers keep reading every single-node file; readers
 * take both, and refuse multi-node fields in a version 1 file. */
#define SATURN_PROBLEM_FORMAT_2 "saturn-problem/2"
#define SATURN_PLAN_FORMAT_2 "saturn-plan/2"

/* Limits enforced by the parsers and by saturn_problem_check(). They bound
 * memory and solve time for input that comes from users. */
#define SATURN_MAX_NODES 4096
#define SATURN_MAX_GPUS_PER_NODE 64
#define SATURN_MAX_TASKS 100000
#define SATURN_MAX_OPTIONS 256 /* per task */
#define SATURN_MAX_TASK_NODES 256 /* nodes one option may span */
#define SATURN_MAX_ID_LEN SATURN_ID_MAX
/* Longest runtime of one task with one option (batches x sec_per_batch),
 * seconds: about 31700 years. Larger numbers only come from bad input and
 * would wreck the planner's arithmetic (sums of runtimes must stay exact
 * to well below a second). */
#define SATURN_MAX_RUNTIME_S 1e12
/* Most batches a task may state (total or done): 1e12 batches take 31
 * years at a millisecond each. */
#define SATURN_MAX_BATCHES 1e12

/* GPUs of a node that are not free until a given time (another job holds
 * them). */
typedef struct saturn_busy {
	int ngpus;
	int *gpu_ids;   /* ngpus distinct ids in [0, node.gpus) */
	double until_s; /* >= 0 */
} saturn_busy_t;

typedef struct saturn_node {
	char *name;  /* unique, non-empty */
	int gpus;    /* 1 .. SATURN_MAX_GPUS_PER_NODE */
	char *klass; /* node class name, or NULL (= the default class) */
	int class_idx; /* index into problem.classes, filled by saturn_problem_check() */
	int nbusy;
	saturn_busy_t *busy;
} saturn_node_t;

typedef struct saturn_option {
	char *technique;      /* e.g. "ddp", "fsdp"; non-empty */
	int gpus;             /* >= 1; per node when the option spans nodes */
	double sec_per_batch; /* > 0, finite (cross-node cost included) */
	char *klass;          /* NULL = any node class */
	int class_idx;        /* -1 = any; filled by saturn_problem_check() */
	/* Nodes the task spans at once with this option (a gang of k nodes,
	 * gpus on each, all of one class): 1 .. SATURN_MAX_TASK_NODES; 0 reads
	 * as 1 (saturn_option_nodes()). */
	int nodes;
	/* Identity: which profile option this is, carried from the build
	 * through the plan entry (saturn_assign_t.option) to the decision and
	 * the plan record, so nothing downstream matches it again. source is
	 * the profile it came from: "" the batch's own profile, a hardware
	 * class name that class's own profile (per-class profiles), NULL not
	 * from a profile (the user's request, a problem file); prof_opt its
	 * index in that profile task's options (meaningful only when source
	 * is not NULL; -1 unknown). source is owned by the option and kept by
	 * copies (saturn_option_copy()); problem files do not carry either.
	 * The option's params (up to 64 KiB of JSON each) stay in the profile
	 * and are read there by this index: a copy per task would multiply a
	 * profile's size by the tasks it covers. */
	char *source;
	int prof_opt;
} saturn_option_t;

/* A task that already runs: its node, GPUs and option are fixed; it started
 * before "now" and needs batches * sec_per_batch more seconds from 0. */
typedef struct saturn_running {
	int node;     /* index into problem.nodes */
	int ngpus;    /* per node */
	int *gpu_ids; /* ngpus distinct ids on that node; for a task on
		       * several nodes nnodes x ngpus, node after node */
	int option;   /* index into task.options matching technique and gpus */
	/* A task running on several nodes (its option's node count): nnodes
	 * in all, node the first, the others in more_nodes[nnodes - 1]. 0
	 * reads as 1; more_nodes is NULL then. */
	int nnodes;
	int *more_nodes;
} saturn_running_t;

typedef struct saturn_task {
	char *id;        /* unique, non-empty */
	double batches;  /* remaining batches, >= 0, finite */
	int noptions;
	saturn_option_t *options;
	bool is_running;
	saturn_running_t running; /* valid when is_running */
	double release_s; /* earliest start, >= 0 */
	/* Handed to the resource manager, not started yet (sched/saturn's
	 * released tasks): it starts on node released_node as soon as its
	 * GPUs there are free, ahead of every task not released, and no
	 * plan can move it elsewhere or later (the planner ignores the node
	 * when none of the task's options fits it). Not for a running task;
	 * problem files do not carry it (false, released_node ignored). */
	bool is_released;
	int released_node; /* index into problem.nodes, when is_released */
} saturn_task_t;

typedef struct saturn_problem {
	int nnodes;
	saturn_node_t *nodes;
	int ntasks;
	saturn_task_t *tasks;
	/* Distinct node class names (filled by saturn_problem_check()); a node
	 * with klass == NULL belongs to class "" (the default). */
	int nclasses;
	char **classes;
	/* allocated lengths of nodes[] and tasks[] (saturn_problem_add_*) */
	int cap_nodes;
	int cap_tasks;
} saturn_problem_t;

/* One task's placement. Strings are copies, so a plan stays meaningful
 * without its problem (it is persisted by the Slurm plugin). */
typedef struct saturn_assign {
	char *task_id;
	char *technique;
	char *node_name;
	int task;   /* index into problem.tasks, or -1 when unknown */
	int option; /* index into task.options, or -1 when unknown */
	int node;   /* index into problem.nodes, or -1 when unknown */
	int gpus;     /* per node */
	int *gpu_ids; /* gpus ids per node, ascending within each node, node
		       * after node: nnodes x gpus entries */
	double start_s;
	double end_s;
	/* Multi-node entries (option.nodes > 1): nnodes nodes in all, node /
	 * node_name being the first; the others in more_nodes[] and
	 * more_names[] (nnodes - 1 each, distinct). nnodes 0 reads as 1, and
	 * the more_ arrays are NULL then. */
	int nnodes;
	int *more_nodes;   /* indices into problem.nodes, or -1 when unknown */
	char **more_names;
} saturn_assign_t;

typedef struct saturn_plan {
	double makespan_s;
	double lower_bound_s;
	char method[32];  /* "milp", "anneal", "heuristic", "baseline", ... */
	char status[32];  /* "optimal", "feasible", "timeout", ... */
	double solve_s;
	int nassign;
	saturn_assign_t *assign; /* one per task, in problem task order */
} saturn_plan_t;

/* --- problems -------------------------------------------------------- */

/* Allocate an empty problem. Returns NULL (ENOMEM) on failure. */
saturn_problem_t *saturn_problem_create(void);

/* Free a problem and everything it owns. NULL is allowed. */
void saturn_problem_destroy(saturn_problem_t *p);

/* Append a node / a task. The struct is copied shallowly: ownership of its
 * strings and arrays passes to the problem on success; on failure (-1,
 * ENOMEM) the caller still owns them. Returns the new index. */
int saturn_problem_add_node(saturn_problem_t *p, const saturn_node_t *n);
int saturn_problem_add_task(saturn_problem_t *p, const saturn_task_t *t);

/* Check the whole problem for consistency and fill the derived fields
 * (classes, class_idx). Returns 0, or -1 with err naming the first problem
 * found: duplicate ids, bad numbers, unknown classes, running tasks on
 * unknown nodes or GPUs, a task with no option that fits any node, ... The
 * problem is unchanged on failure except for derived fields. */
int saturn_problem_check(saturn_problem_t *p, saturn_error_t *err);

/* For a problem saturn_problem_check() refused: the tasks it refuses for
 * reasons of their own (bad fields or options; GPUs an earlier running task
 * holds; the later of two tasks with one id), each reported once through
 * on_bad(t, why, arg), so a caller can drop them and check again. Returns
 * their number (0: the fault is not a task's), or -1 with err when the
 * nodes are what is wrong, or on ENOMEM. Fills the derived fields as
 * saturn_problem_check() does. */
int saturn_problem_bad_tasks(saturn_problem_t *p,
			     void (*on_bad)(int t, const char *why, void *arg),
			     void *arg, saturn_error_t *err);

/* Deep copy. NULL on ENOMEM. */
saturn_problem_t *saturn_problem_copy(const saturn_problem_t *p);

/* Free the strings option o owns (technique, klass, source) and
 * set them to NULL; the struct itself is the caller's. NULL is allowed. */
void saturn_option_clear(saturn_option_t *o);

/* Deep copy of src into *dst (dst's previous contents are not freed).
 * Returns 0, or -1 (ENOMEM) with *dst zeroed. */
int saturn_option_copy(saturn_option_t *dst, const saturn_option_t *src);

/* The option of task t that a task reported from outside runs with (a
 * running job's technique and GPU count, a plan read from a file): the
 * first whose key (technique, gpus per node, nodes, class) equals the
 * given one. klass NULL matches any option's class; an option without a
 * class (NULL: any) matches every klass. nodes 0 reads as 1. This is the
 * one key such matches use; code that has the identity (a plan entry's
 * option, a decision's) uses it instead. Returns the index, or -1. */
int saturn_task_find_option(const saturn_task_t *t, const char *technique, int gpus, int nodes,
			    const char *klass);

/* Runtime of task t with option o (batches * sec_per_batch). */
double saturn_task_runtime(const saturn_task_t *t, int o);

/* Whether option o of task t may run on node n (class and GPU count); for a
 * multi-node option, whether n may be one of its nodes. */
bool saturn_option_fits(const saturn_problem_t *p, int t, int o, int n);

/* Whether option o of task t fits some set of its node count of nodes,
 * all of one class (saturn_option_fits() on each). Needs the derived fields
 * of saturn_problem_check(). */
bool saturn_option_placeable(const saturn_problem_t *p, int t, int o);

/* Nodes an option spans (option.nodes, 0 read as 1). */
static inline int saturn_option_nodes(const saturn_option_t *o)
{
	return o->nodes > 1 ? o->nodes : 1;
}

/* Nodes a running task spans, and its j-th node. */
static inline int saturn_running_nnodes(const saturn_running_t *r)
{
	return r->nnodes > 1 ? r->nnodes : 1;
}

static inline int saturn_running_node_at(const saturn_running_t *r, int j)
{
	return j == 0 || !r->more_nodes ? r->node : r->more_nodes[j - 1];
}

/* Nodes a plan entry spans (nnodes, 0 read as 1), and its j-th node's
 * index and name (j = 0 is node / node_name). */
static inline int saturn_assign_nnodes(const saturn_assign_t *a)
{
	return a->nnodes > 1 ? a->nnodes : 1;
}

static inline int saturn_assign_node_at(const saturn_assign_t *a, int j)
{
	return j == 0 || !a->more_nodes ? a->node : a->more_nodes[j - 1];
}

static inline const char *saturn_assign_name_at(const saturn_assign_t *a,
						 int j)
{
	return j == 0 || !a->more_names ? a->node_name : a->more_names[j - 1];
}

/* Whether any option of p spans more than one node / any entry of plan
 * does (the writers pick the format version by these). */
bool saturn_problem_multinode(const saturn_problem_t *p);
bool saturn_plan_multinode(const saturn_plan_t *plan);

/* --- plans ----------------------------------------------------------- */

/* Allocate a plan with nassign zeroed assignments (task/option/node = -1).
 * NULL on ENOMEM. */
saturn_plan_t *saturn_plan_create(int nassign);

/* Free a plan. NULL is allowed. */
void saturn_plan_destroy(saturn_plan_t *plan);

/* Deep copy. NULL on ENOMEM. */
saturn_plan_t *saturn_plan_copy(const saturn_plan_t *plan);

/* Fill assignment i of plan from indices into p (copies the strings,
 * allocates gpu_ids for the option's GPU count, sets end_s from the
 * runtime). gpu_ids may be NULL to leave ids for saturn_plan_assign_gpus().
 * Returns 0 or -1 (ENOMEM). */
int saturn_plan_set(saturn_plan_t *plan, int i, const saturn_problem_t *p,
		    int task, int option, int node, double start_s,
		    const int *gpu_ids);

/* saturn_plan_set() for an option on nodes[0..k) (k = the option's node
 * count, distinct nodes). gpu_ids, when not NULL, holds k x gpus ids node
 * after node. Returns 0 or -1 (ENOMEM; EINVAL when nodes repeat). */
int saturn_plan_set_nodes(saturn_plan_t *plan, int i,
			  const saturn_problem_t *p, int task, int option,
			  const int *nodes, double start_s, const int *gpu_ids);

/* Give every assignment concrete GPU ids: running tasks keep theirs, busy
 * GPUs are avoided until released, the rest are handed out in start order,
 * contiguous where possible. Fails (-1, err) only when the plan overloads a
 * node. */
int saturn_plan_assign_gpus(saturn_plan_t *plan, const saturn_problem_t *p,
			    saturn_error_t *err);

/* Resolve the names of a plan read from JSON against a problem (task,
 * option, node indices). Returns 0, or -1 with err naming the entry that
 * does not match. */
int saturn_plan_resolve(saturn_plan_t *plan, const saturn_problem_t *p,
			saturn_error_t *err);

/* Check that plan is a valid schedule of p: every task exactly once; each
 * assignment uses one of its task's options on a node of the right class;
 * durations match the option; no start before release_s; running tasks keep
 * node, GPUs and option and start at 0; GPU ids in range, distinct, not busy
 * before the busy entry's until_s, and disjoint between tasks that overlap in
 * time; makespan_s equals the latest end. Returns 0, or -1 with err naming
 * the first violation. Tolerance 1e-6 relative on times. */
int saturn_plan_validate(const saturn_plan_t *plan, const saturn_problem_t *p,
			 saturn_error_t *err);

#endif /* SATURN_MODEL_H */
