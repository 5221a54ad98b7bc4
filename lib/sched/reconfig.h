/* reconfig.h - should a running task be restarted with another option?
 *
 * A task released by a plan keeps its node, GPU count and technique until
 * it ends. When the plan changes under it (the tail of a batch leaves GPUs
 * idle, the task runs much slower than its profile said, a node was lost),
 * restarting it from its checkpoint with another option can end the batch
 * sooner. This module decides that, without Slurm: from the problem as
 * built (running tasks pinned) and the plan chosen for it, it builds a
 * second problem in which every qualifying running task is free again --
 * its remaining batches, every option of its profile, and a restart cost as
 * its earliest start -- solves it with the planner, and proposes the tasks
 * whose option or node changes when the gain beats both saturn_min_gain
 * and an absolute margin.
 *
 * The restart cost of a task is the time to checkpoint and exit (its GPUs
 * stay busy that long), Slurm's requeue delay (cred_expire + 1 s: a
 * requeued batch job may not start sooner) and a fixed start-up (the job
 * starting again and loading its checkpoint).
 *
 * The plugin (plugin/sched/saturn_reconfig.c) carries a decision out:
 * SIGUSR1 to the task's steps; saturn-run checkpoints and exits 75; Slurm
 * requeues it (RequeueExit=75 or RequeueExitHold=75); sched/saturn re-holds
 * it and the next plan releases it with its new option.
 */
#ifndef SATURN_RECONFIG_H
#define SATURN_RECONFIG_H

#include "planner.h"
#include "sched_core.h"

/* saturn_reconfig_settings_t, the saturn_reconfigure* keys, is in
 * sched_settings.h (the .reconfig member of saturn_sched_settings_t, parsed
 * with every other key by saturn_sched_settings_parse). */

/* Its defaults (the table's, as saturn_sched_settings_init gives them). */
void saturn_reconfig_settings_init(saturn_reconfig_settings_t *rs);

/* saturn-run's exit status after a checkpoint. */
#define SATURN_RECONFIG_EXIT 75

/* Whether slurm.conf's RequeueExit or RequeueExitHold (Slurm's strings,
 * either may be NULL: "75", "1-9,75") lists code: 1 or 0 (0 also for a
 * list that does not parse). Without it a task that checkpoints for a
 * reconfiguration would end failed, so the plugin reconfigures nothing. */
int saturn_reconfig_requeues(const char *requeue_exit, const char *requeue_exit_hold, int code);

/* Seconds from the decision until the restarted task may run its first
 * batch: checkpoint + requeue delay + start-up. */
double saturn_reconfig_restart_cost(const saturn_reconfig_settings_t *rs);

/* Whether snapshot job j may be reconfigured: running, opted in (its
 * reconfigure field, else rs->default_on), requeue-able, restarted fewer
 * than rs->max_restarts times, and running under saturn-run (it has
 * reported progress: batches_done >= 0). 1 or 0; why (may be NULL) gets
 * the first reason it may not ("not requeue-able (--no-requeue)"). */
int saturn_reconfig_eligible(const saturn_snap_job_t *j, const saturn_reconfig_settings_t *rs,
			     char *why, size_t len);

/* The problem of b with every eligible running task that has a profile
 * (lookup as for the build) unpinned: a held task again with its remaining
 * batches (batches_left, else the profile's total less batches_done), the
 * profile's options (within the model's limits; speeds corrected by
 * s->feedback like a task not started yet; the option it runs with at its
 * observed speed, blended as for the running estimate; restricted to the
 * node class of its node when the problem has classes), release_s the
 * restart cost, and its GPUs busy on its node for rs->checkpoint_s.
 * unpinned (b->problem->ntasks entries, caller's) gets 1 per unpinned
 * task. Returns the number unpinned (>= 0) with *out a checked problem the
 * caller destroys (NULL when 0), or -1 with err (ENOMEM, or the copy fails
 * saturn_problem_check: a bug), *out NULL. */
int saturn_reconfig_problem(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			    saturn_profile_lookup_fn lookup, void *arg,
			    const saturn_reconfig_settings_t *rs, char *unpinned,
			    saturn_problem_t **out, saturn_error_t *err);

/* One task to restart. */
typedef struct saturn_reconfig_choice {
	int job;               /* snapshot job index */
	int task;              /* task index in b->problem */
	char node[SATURN_NODE_NAME_MAX + 1]; /* the new plan's node, GPUs, technique */
	int gpus;
	char technique[SATURN_TECH_LEN];
	double start_s;        /* planned new start (relative to the snapshot) */
	double old_end_s;      /* its end in the current plan */
	double new_end_s;      /* its end in the new plan */
} saturn_reconfig_choice_t;

typedef struct saturn_reconfig_result {
	int ncandidates;       /* running tasks unpinned */
	int nchoices;
	saturn_reconfig_choice_t *choices; /* malloc'd; NULL when none */
	double old_makespan_s; /* the current plan's */
	double new_makespan_s; /* the plan with the candidates free (0 when not solved) */
	double gain_s;         /* old - new (expected gain of the choices);
				* saturn_reconfig_decide_mu: of the objective,
				* in seconds (see there) */
	double old_value;      /* saturn_reconfig_decide_mu: the objective's
				* value (saturn_mu_value) now and with the */
	double new_value;      /* choices (0 when not solved) */
	char why[192];         /* no choice: why ("gain 12s below the margin 60s") */
} saturn_reconfig_result_t;

/* Decide: unpin (saturn_reconfig_problem); when the cheap lower bound of
 * that problem already leaves no gain large enough, stop there (no
 * solve); else solve with opts (may be NULL; give it the cycle's time
 * budget), and choose the unpinned tasks whose
 * node, GPU count or technique differ in the new plan -- only when the
 * new makespan is below old x (1 - min_gain) and the gain is at least
 * rs->margin_s. The gain is an estimate: unpinned tasks that keep their
 * option pay the restart cost in the new plan, though they go on running.
 * Returns the number of choices (>= 0, out filled; free with
 * saturn_reconfig_result_free), or -1 with err (ENOMEM, planner failure),
 * out emptied. */
int saturn_reconfig_decide(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			   const saturn_plan_t *plan, saturn_profile_lookup_fn lookup, void *arg,
			   const saturn_reconfig_settings_t *rs, double min_gain,
			   const saturn_planner_opts_t *opts, saturn_reconfig_result_t *out,
			   saturn_error_t *err);

struct saturn_mu;

/* saturn_reconfig_decide under a multi-batch objective (multiuser.h,
 * objective SATURN_FAIR_WEIGHTED or SATURN_FAIR_BOUNDED, m the cycle's
 * batches of b->problem with its bound in m->deadline when
 * saturn_bound=stock): the problem with the candidates free is planned by
 * saturn_mu_plan (m's limits and candidates) and judged by the objective,
 * not the joint makespan:
 *   weighted  gain = (old - new weighted flow time) / sum of the weights
 *             (seconds of flow time per unit weight); the new value below
 *             old x (1 - min_gain);
 *   bounded   when the current plan keeps every batch within its bound
 *             (saturn_mu_deadlines), the makespan rule of
 *             saturn_reconfig_decide, the new plan within every bound too;
 *             else gain = how much sooner the latest batch past its bound
 *             (largest completion - bound) ends, the new stretch lower;
 * and the gain at least rs->margin_s and min_gain x the current makespan.
 * No harm: a decision is refused whole when a batch with a task to
 * restart would end later than both its end in the current plan and its
 * bound (one user's running task is never restarted to benefit another
 * beyond the restarted user's bound). Other objectives, m NULL, one batch
 * or m not of b->problem: saturn_reconfig_decide. Returns as it. */
int saturn_reconfig_decide_mu(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			      const saturn_plan_t *plan, saturn_profile_lookup_fn lookup, void *arg,
			      const saturn_reconfig_settings_t *rs, double min_gain,
			      const saturn_planner_opts_t *opts, int objective,
			      const struct saturn_mu *m, saturn_reconfig_result_t *out,
			      saturn_error_t *err);

/* The planner's stop_ratio for the decision's solve: the plan with the
 * candidates free must end before need_s (the current makespan less the
 * larger of min_gain and the margin) to restart anything, and no plan ends
 * before bound_s (its lower bound). A plan within min(1 / (1 - min_gain),
 * need_s / bound_s) x bound_s ends before need_s, so it restarts tasks
 * whatever a longer search finds, and no later plan is shorter by
 * min_gain: the search may stop there instead of using its whole budget
 * while the GPUs that freed up wait. 0 (off) when that is not above 1
 * (need_s <= bound_s, bound_s <= 0, min_gain 0, NaN). saturn_reconfig_decide
 * uses it unless its opts set stop_ratio. */
double saturn_reconfig_stop_ratio(double need_s, double bound_s, double min_gain);

/* Free what a decision filled (not out itself); NULL allowed. */
void saturn_reconfig_result_free(saturn_reconfig_result_t *out);

#endif /* SATURN_RECONFIG_H */
