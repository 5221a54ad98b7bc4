/* sched_build.h - the problem: building the planner problem from a
 * snapshot and the batches' profiles (sched_build.c), the task cap
 * (task_cap.c), pinning the tasks released this cycle and the
 * first-come-first-served plan (sched_plan.c). Included by sched_core.h.
 */
#ifndef SATURN_SCHED_BUILD_H
#define SATURN_SCHED_BUILD_H

#include "model.h"
#include "profile.h"
#include "sched_snapshot.h"

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

#endif /* SATURN_SCHED_BUILD_H */
