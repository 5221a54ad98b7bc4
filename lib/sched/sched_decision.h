/* sched_decision.h - the decisions: release or hold each task with its
 * reason, re-holds (sched_decide.c), and whether a new plan replaces the
 * carried one, the carried plan itself (sched_plan.c). Included by
 * sched_core.h.
 */
#ifndef SATURN_SCHED_DECISION_H
#define SATURN_SCHED_DECISION_H

#include "model.h"
#include "sched_build.h"
#include "sched_snapshot.h"

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
	/* Which option it is, from the plan entry (saturn_option_t's
	 * identity): task and option index the build's problem (option -1:
	 * the entry named none); prof_opt is the option's index in the
	 * profile task it came from and source that profile ("" the batch's
	 * own, else the hardware class of a class's own profile), prof_opt -1
	 * (source "") when it came from no profile (the user's request). */
	int task;
	int option;
	int prof_opt;
	char source[SATURN_CLASS_NAME_MAX + 1];
} saturn_decision_t;

/* The option decision d releases its task with (d->task, d->option in
 * b's problem, the build d was decided from), or NULL when unknown. */
const saturn_option_t *saturn_sched_decision_option(const saturn_sched_build_t *b,
						    const saturn_decision_t *d);

/* The profile option decision d names in pr, the profile d->source names
 * (the batch's own for "", else that class's own), and its task there
 * (*pt, may be NULL): the option of task task_id at index d->prof_opt,
 * read there, never matched by name. NULL when d names no profile option
 * (prof_opt < 0), pr is NULL or has no task task_id, or pr no longer lists
 * that option at that index (reloaded since the build: technique, GPUs or
 * nodes differ). */
const saturn_profile_option_t *
saturn_sched_decision_profile_option(const saturn_profile_t *pr, int task_id,
				     const saturn_decision_t *d, const saturn_profile_task_t **pt);

/* The technique parameters (JSON object text) of d's option: the params
 * of saturn_sched_decision_profile_option(pr, task_id, d), exactly the
 * option the plan chose (a class's own profile's when it came from one);
 * "{}" when there is none or it has none. Points into pr (or a
 * constant). */
const char *saturn_sched_decision_params(const saturn_profile_t *pr, int task_id,
					 const saturn_decision_t *d);

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

/* The order in which to apply decisions d[0..nd): order[0..nd) gets the
 * indices by planned start (decision index among equal starts). Slurm
 * gives a released array task its own job id when it splits it off the
 * array, in the order of the releases, and its main and backfill
 * schedulers try an array's tasks of one priority in job id order and skip
 * the rest of the array for the pass once one of them cannot start: a task
 * released ahead of its room (slack_s) before a sibling whose room is free
 * would hold that sibling back until it starts itself
 * (doc/benchmarks-site.md, "The hand-over"). */
void saturn_sched_release_order(const saturn_decision_t *d, int nd, int *order);

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

/* The previous cycle's plan as a plan of the new problem p (p's clock:
 * now is 0): running tasks as pinned in p; the others keep their option,
 * node(s) and order (by planned start) and start, in that order, as early
 * as their release and the GPUs of their planned node(s) allow. So a task
 * moves right where a GPU is not free yet (a task overran, another job
 * holds it) and left where its GPUs free up early (a task ended early or
 * is gone): never later than its planned start less the time since, and
 * due at once when its room is free. GPU ids are re-chosen (earliest
 * free), because Slurm picks the ids itself. Each keeps an option of the
 * same technique and GPU count that fits its node's class (partitions).
 * The result is always a valid schedule; users' limits are applied after
 * (saturn_mu_apply_limits). Tasks of prev that are gone from p (finished,
 * cancelled) are dropped. NULL when p has a task prev does not know (a
 * new submission) or whose option or node is gone or no longer fits (GPU
 * count or class, e.g. the partitions changed), or on ENOMEM. The caller
 * keeps the carried plan unless a fresh one beats it by saturn_min_gain
 * (saturn_sched_should_switch). */
saturn_plan_t *saturn_sched_carry(const saturn_plan_t *prev, const saturn_problem_t *p);

#endif /* SATURN_SCHED_DECISION_H */
