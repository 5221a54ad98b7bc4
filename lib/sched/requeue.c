/* requeue.c - a task that requeues itself (sched_core.h; doc/security.md,
 * "A task that requeues itself"). Slurm-free.
 *
 * The rule: a task that Slurm requeued after it ran, when neither
 * sched/saturn's own reconfiguration signal nor a dead node made it stop,
 * is charged like a running task. The run it gave up keeps the GPUs it was
 * planned to use, in the plan only, until the end the plan allowed it: the
 * task starts again no earlier than the release of that run plus its least
 * claimed runtime. Other tasks use the GPUs meanwhile; only its own batch
 * waits. Among the held tasks it stands where a task submitted at its
 * requeue would (behind those submitted before), so that a plan that
 * follows the queue's order does not put it first again, and the cycle
 * that re-holds it plans afresh (the plugin's agent) instead of carrying
 * the plan that had it running first. Exiting early (exit 75 under
 * RequeueExit, `scontrol requeue`) thus buys no place ahead of other
 * users' tasks: before this, the re-held task was planned again at once
 * for its whole claimed runtime, ahead of them, run after run.
 */
#include "config.h"

#include "build_int.h" /* saturn_bld_fits_some_node: the build's own test */
#include "sched_core.h"

int saturn_sched_self_requeued(const saturn_snapshot_t *s, const saturn_snap_job_t *j)
{
	if (saturn_sched_rehold_cause(s, j, NULL, 0) != SATURN_REHOLD_REQUEUED)
		return 0;
	/* sched/saturn's reconfiguration signal asked for this requeue */
	if (j->restarts <= j->excused)
		return 0;
	/* its node died or went away: Slurm's requeue, not the task's */
	if (j->pinned[0] && (j->node < 0 || j->node >= s->nnodes))
		return 0;
	return 1;
}

double saturn_sched_charge_from(const saturn_snapshot_t *s, const saturn_snap_job_t *j)
{
	return j->released_at > 0 && j->released_at <= s->now ? j->released_at : s->now;
}

double saturn_sched_requeue_charge(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
				   const saturn_task_t *t)
{
	double least = -1, left;

	if (!(j->charged_from > 0) || j->state != SATURN_SNAP_HELD || !t->options)
		return 0;
	for (int o = 0; o < t->noptions; o++) {
		double r = saturn_task_runtime(t, o);

		/* an option that fits no node is never planned: its claim must
		 * not lower the charge */
		if (r > 0 && saturn_bld_fits_some_node(s, &t->options[o], 1) &&
		    (least < 0 || r < least))
			least = r;
	}
	if (least < 0)
		return 0;
	left = j->charged_from + least - s->now;
	if (!(left > 0))
		return 0;
	return left < SATURN_MAX_RUNTIME_S ? left : SATURN_MAX_RUNTIME_S;
}

double saturn_sched_queued_at(const saturn_snap_job_t *j)
{
	if (j->state == SATURN_SNAP_HELD && j->requeued_at > j->submit_time)
		return j->requeued_at;
	return j->submit_time;
}
