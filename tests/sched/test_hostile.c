/* test_hostile.c - the second round of hostile users (issue 20) in the
 * controller's Slurm-free half: a plan that one user's numbers cannot
 * stop or bend. Each case is an attack of doc/security.md's table. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"
#include "profile.h"
#include "rehold_wait.h"
#include "sched_core.h"
#include "sched_fixture.h"

/* --- the task cap ---------------------------------------------------- */

/* Past saturn_max_tasks the first held tasks in Slurm's queue order are
 * planned and the others are left held with the cap's reason; before,
 * the whole problem failed (E2BIG) and nobody was planned. */
START_TEST(test_task_cap_queue_order)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 2, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	int planned[8] = {0};

	/* attacker (uid 2): 5 tasks, submitted first but at a lower priority;
	 * victim (uid 1): 2 tasks at a higher priority, submitted later */
	for (int t = 0; t < 5; t++) {
		saturn_snap_job_t *j = fx_add_held(s, 100, t, "flood");

		j->uid = 2;
		j->submit_time = 10;
		j->prio = 100;
		j->time_limit_s = 600;
	}
	for (int t = 0; t < 2; t++) {
		saturn_snap_job_t *j = fx_add_held(s, 200, t, "small");

		j->uid = 1;
		j->submit_time = 20;
		j->prio = 500;
		j->time_limit_s = 600;
	}
	s->max_tasks = 4;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 4);
	ck_assert_int_eq(b.nskipped, 3);
	for (int t = 0; t < b.problem->ntasks; t++)
		planned[b.job_of_task[t]] = 1;
	/* the victim's (higher priority) both, then the attacker's first two */
	ck_assert(planned[5] && planned[6] && planned[0] && planned[1]);
	for (int k = 0; k < b.nskipped; k++) {
		ck_assert_int_ge(b.skipped[k], 2);
		ck_assert_int_le(b.skipped[k], 4);
		ck_assert_str_eq(b.skip_reason[k], SATURN_CAP_REASON);
	}
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* One more held task than the planner's limit: the plan still takes
 * SATURN_MAX_TASKS of them (was: "cannot build the problem", nobody
 * planned). */
START_TEST(test_task_cap_over_limit)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 4, 8);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};

	for (int t = 0; t <= SATURN_MAX_TASKS; t++) {
		saturn_snap_job_t *j = fx_add_held(s, 100 + (uint32_t)(t / 1000), t % 1000, "flood");

		j->uid = 2;
		j->submit_time = 10;
		j->time_limit_s = 60;
	}
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, SATURN_MAX_TASKS);
	ck_assert_int_eq(b.nskipped, 1);
	ck_assert_int_eq(b.skipped[0], SATURN_MAX_TASKS);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_task_cap_setting)
{
	saturn_sched_settings_t ss;

	saturn_sched_settings_init(&ss);
	ck_assert_int_eq(ss.max_tasks, SATURN_MAX_TASKS);
	fx_setting(&ss, "saturn_max_tasks=5000", 0, NULL);
	ck_assert_int_eq(ss.max_tasks, 5000);
	fx_setting(&ss, "saturn_max_tasks=0", 1, "saturn_max_tasks=0: must be a whole number of tasks");
	fx_setting(&ss, "saturn_max_tasks=100001", 1, "from 1 to 100000");
	ck_assert_int_eq(ss.max_tasks, 5000);
	saturn_sched_settings_free(&ss);
}
END_TEST

/* --- a released task whose node stays busy -------------------------- */

/* n1 (4 GPUs) runs the liar's task (uid 2), which claims 1 s left; n2 (4
 * GPUs) is held by another job for 300 s more. The victim (uid 1, 4 GPUs)
 * was released onto n1 90 s ago and still waits. */
static saturn_snapshot_t *stranded(double released_ago, int bounces)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 2, 4);
	saturn_snap_job_t *liar = saturn_snapshot_add_job(s), *v;
	saturn_snap_busy_t *busy = saturn_snapshot_add_busy(s);

	busy->node = 1;
	busy->gpu_mask = 0xF;
	busy->until = 1300;
	liar->job_id = 50;
	liar->task_id = -1;
	snprintf(liar->batch, sizeof(liar->batch), "liar");
	liar->uid = 2;
	liar->state = SATURN_SNAP_RUNNING;
	liar->node = 0;
	liar->gpu_mask = 0xF;
	liar->gpus = liar->req_gpus = 4;
	snprintf(liar->technique, sizeof(liar->technique), "user");
	liar->start_time = 0;
	liar->time_limit_s = 3600;
	liar->batches_left = 1;
	liar->batches_done = 999;
	liar->progress_spb = 0.001;
	v = fx_add_held(s, 60, -1, "victim");
	v->array_job_id = 0;
	v->uid = 1;
	v->state = SATURN_SNAP_RELEASED;
	v->req_gpus = v->gpus = 4;
	snprintf(v->technique, sizeof(v->technique), "user");
	v->time_limit_s = 600;
	v->node = 0;
	snprintf(v->pinned, sizeof(v->pinned), "n1");
	v->planned = 1;
	v->released_at = 1000 - released_ago;
	v->bounces = bounces;
	return s;
}

/* The victim goes back to the plan after SATURN_LATE_GRACE_S, at most
 * SATURN_MAX_BOUNCES times; the liar is blamed and, planned until its
 * time limit, no longer draws the victim onto its node (before: the
 * victim stayed pinned to n1 for as long as the liar ran). */
START_TEST(test_late_release_replanned)
{
	saturn_snapshot_t *s = stranded(90, 0);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_rehold_t *r = NULL;
	char why[160];
	int h[4], n, vt = -1;

	ck_assert_int_eq(saturn_snap_free_gpus(s, 0), 0);
	ck_assert_int_eq(saturn_snap_free_gpus(s, 1), 0);
	ck_assert_int_eq(saturn_sched_rehold_cause(s, &s->jobs[1], why, sizeof(why)),
			 SATURN_REHOLD_LATE);
	ck_assert_msg(strstr(why, "n1 still busy 90 s"), "%s", why);
	ck_assert_int_eq(saturn_sched_decide_rehold(s, &r), 1);
	ck_assert_int_eq(r[0].job, 1);
	free(r);
	n = saturn_sched_late_holders(s, &s->jobs[1], h, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(h[0], 0);
	/* what the plugin does: re-hold the victim, blame the liar */
	saturn_snapshot_mark_held(s, &s->jobs[1]);
	s->jobs[0].overran = 1;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	for (int t = 0; t < b.problem->ntasks; t++)
		if (b.job_of_task[t] == 0)
			ck_assert_double_eq_tol(b.problem->tasks[t].batches, 2600, 1e-6);
		else
			vt = t;
	ck_assert_int_ge(vt, 0);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	for (int i = 0; i < plan->nassign; i++)
		if (plan->assign[i].task == vt) {
			ck_assert_str_eq(plan->assign[i].node_name, "n2");
			ck_assert_double_eq_tol(plan->assign[i].start_s, 300, 1e-6);
		}
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Not late: within the grace, bounced enough, the node's GPUs free, or
 * the release time unknown (a release before this version). */
START_TEST(test_late_release_bounds)
{
	saturn_snapshot_t *s = stranded(30, 0);

	ck_assert_int_eq(saturn_sched_rehold_cause(s, &s->jobs[1], NULL, 0), SATURN_REHOLD_NONE);
	saturn_snapshot_destroy(s);
	s = stranded(90, SATURN_MAX_BOUNCES);
	ck_assert_int_eq(saturn_sched_rehold_cause(s, &s->jobs[1], NULL, 0), SATURN_REHOLD_NONE);
	saturn_snapshot_destroy(s);
	s = stranded(90, 0);
	s->jobs[0].gpu_mask = 0x3; /* 2 GPUs free: not enough */
	ck_assert_int_eq(saturn_sched_rehold_cause(s, &s->jobs[1], NULL, 0), SATURN_REHOLD_LATE);
	s->jobs[1].gpus = 2; /* enough: Slurm's to start */
	ck_assert_int_eq(saturn_sched_rehold_cause(s, &s->jobs[1], NULL, 0), SATURN_REHOLD_NONE);
	saturn_snapshot_destroy(s);
	s = stranded(90, 0);
	s->jobs[1].released_at = 0;
	ck_assert_int_eq(saturn_sched_rehold_cause(s, &s->jobs[1], NULL, 0), SATURN_REHOLD_NONE);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- tasks Slurm will never start ------------------------------------ */

/* A held task Slurm would never start (its --time over every partition's
 * MaxTime) is left out of the plan, held with a reason naming it; a
 * released one Slurm reports such a reason for is re-held (before: it was
 * planned as "starting now" on its pinned node in every cycle). */
START_TEST(test_never_started)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 1, 8);
	saturn_snap_job_t *bad = fx_add_held(s, 70, 0, "forever"), *good;
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	char why[160];

	bad->uid = 2;
	bad->req_gpus = 8;
	bad->time_limit_s = 1800;
	snprintf(bad->never, sizeof(bad->never), "PartitionTimeLimit (partition gpu)");
	good = fx_add_held(s, 80, 0, "small");
	good->uid = 1;
	good->req_gpus = 8;
	good->time_limit_s = 120;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 1);
	ck_assert_int_eq(b.job_of_task[0], 1);
	ck_assert_int_eq(b.nskipped, 1);
	ck_assert_str_eq(b.skip_reason[0],
			 "saturn: held: Slurm will not start it: PartitionTimeLimit (partition gpu)");
	saturn_sched_build_free(&b);
	/* released, pinned, planned: Slurm's reason sends it back */
	bad->state = SATURN_SNAP_RELEASED;
	bad->planned = 1;
	bad->node = 0;
	snprintf(bad->pinned, sizeof(bad->pinned), "n1");
	snprintf(bad->never, sizeof(bad->never), "PartitionConfig");
	ck_assert_int_eq(saturn_sched_rehold_cause(s, bad, why, sizeof(why)), SATURN_REHOLD_NEVER);
	ck_assert_str_eq(why, "saturn: held: Slurm will not start it: PartitionConfig");
	saturn_snapshot_mark_held(s, bad);
	ck_assert_str_eq(bad->never, "PartitionConfig"); /* stays out of the plan */
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 1);
	ck_assert_int_eq(b.job_of_task[0], 1);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- a task that requeues itself ------------------------------------- */

/* The attacker (uid 2) claims 600 s on all 8 GPUs of n1 (and 0.6 s on 16
 * GPUs, which fit no node), was released at 995, ran 3 s and exited 75:
 * Slurm requeued it, pinned to n1, with the credential delay (begin time
 * 1010). The victim (uid 1) waits for the same 8 GPUs for 900 s. */
static const char loop_profile[] =
	"{ \"format\": \"saturn-profile/1\", \"batch\": \"loop\","
	"  \"tasks\": [ { \"signature\": \"l\", \"task_ids\": \"0\", \"batches\": 600,"
	"    \"options\": [ { \"technique\": \"ddp\", \"gpus\": 8, \"sec_per_batch\": 1,"
	"                     \"status\": \"measured\" },"
	"                   { \"technique\": \"ddp\", \"gpus\": 16, \"sec_per_batch\": 0.001,"
	"                     \"status\": \"measured\" } ] } ] }";

static const saturn_profile_t *lookup_loop(const char *batch, long uid, void *arg)
{
	return uid == 2 && !strcmp(batch, "loop") ? arg : NULL;
}

static saturn_snapshot_t *requeued_itself(void)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 1, 8);
	saturn_snap_job_t *a = fx_add_held(s, 90, 0, "loop"), *v;

	a->uid = 2;
	a->state = SATURN_SNAP_RELEASED;
	a->req_gpus = a->gpus = 8;
	snprintf(a->technique, sizeof(a->technique), "ddp");
	a->time_limit_s = 3600;
	a->node = 0;
	snprintf(a->pinned, sizeof(a->pinned), "n1");
	a->planned = 1;
	a->requeued = 1;
	a->restarts = 1;
	a->begin_time = 1010;
	a->released_at = 995;
	a->submit_time = 900;
	v = fx_add_held(s, 91, 0, "victim");
	v->uid = 1;
	v->submit_time = 998; /* while the attacker's run was planned */
	v->req_gpus = 8;
	v->time_limit_s = 900;
	return s;
}

/* The problem index of the attacker's task after the build. */
static int attacker_task(const saturn_snapshot_t *s, saturn_profile_t *pr, saturn_sched_build_t *b)
{
	saturn_error_t err = {{0}};

	ck_assert_int_eq(saturn_sched_build(s, lookup_loop, pr, b, &err), 0);
	ck_assert_int_eq(b->problem->ntasks, 2);
	return b->job_of_task[0] == 0 ? 0 : 1;
}

/* Its release_s. */
static double attacker_release(const saturn_snapshot_t *s, saturn_profile_t *pr,
			       saturn_sched_build_t *b)
{
	int t = attacker_task(s, pr, b);

	return b->problem->tasks[t].release_s;
}

/* Charged like a running task: not before 995 + 600 (was: 1010, the
 * credential delay, so the carried plan kept it ahead of the victim and
 * the victim "started in ~10m" run after run), and queued behind the
 * victim, submitted before its requeue (was: ahead, by its submit time,
 * so a first-come-first-served plan put the victim after it). The
 * victim gets n1 now, from the planner and from the FCFS plan alike. */
START_TEST(test_requeue_charged)
{
	saturn_snapshot_t *s = requeued_itself();
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(loop_profile, strlen(loop_profile), &err);
	saturn_planner_opts_t o = fx_opts(2);
	saturn_sched_build_t b;
	saturn_rehold_t *r = NULL;
	saturn_plan_t *plan, *fcfs;
	saturn_decision_t *d = NULL;
	int nd, victim_released = 0;

	ck_assert_msg(pr != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_sched_decide_rehold(s, &r), 1);
	ck_assert_int_eq(r[0].cause, SATURN_REHOLD_REQUEUED);
	ck_assert_int_eq(r[0].self_requeued, 1);
	free(r);
	saturn_snapshot_mark_held(s, &s->jobs[0]);
	ck_assert_double_eq(s->jobs[0].charged_from, 995);
	ck_assert_double_eq(s->jobs[0].requeued_at, 1000);
	ck_assert_double_eq(s->jobs[0].not_before, 1010);
	/* 600 s (the 8-GPU option): the 16-GPU claim fits no node */
	ck_assert_double_eq_tol(attacker_release(s, pr, &b), 595, 1e-6);
	plan = saturn_planner_solve(b.problem, &o, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	nd = saturn_sched_decide(s, &b, plan, 5, &d);
	ck_assert_int_eq(nd, 2);
	for (int i = 0; i < nd; i++) {
		if (d[i].job == 1)
			victim_released = d[i].release;
		else
			ck_assert_msg(!d[i].release && strstr(d[i].reason, SATURN_REQUEUE_NOTE),
				      "%s", d[i].reason);
	}
	ck_assert(victim_released);
	/* first come, first served: the victim first, now */
	saturn_sched_build_free(&b);
	ck_assert_int_eq(attacker_task(s, pr, &b), 1);
	saturn_sched_build_free(&b);
	ck_assert_int_eq(attacker_task(s, pr, &b), 1);
	fcfs = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(fcfs);
	for (int i = 0; i < fcfs->nassign; i++)
		if (fcfs->assign[i].task == 1)
			ck_assert_double_ge(fcfs->assign[i].start_s, 595);
		else
			ck_assert_double_eq(fcfs->assign[i].start_s, 0);
	free(d);
	saturn_plan_destroy(fcfs);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	/* the next cycles read it back (SATURN_CHARGED_FROM): still charged */
	s->now = 1300;
	ck_assert_double_eq_tol(attacker_release(s, pr, &b), 295, 1e-6);
	saturn_sched_build_free(&b);
	/* past the run's planned end: no charge left */
	s->now = 1700;
	ck_assert_double_eq(attacker_release(s, pr, &b), 0);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Not charged: the requeue sched/saturn's reconfiguration asked for
 * (SATURN_EXCUSED), and one after the pinned node died; a task that ran
 * past its claim is charged nothing more; a release time unknown is
 * charged from the re-hold. */
START_TEST(test_requeue_excused)
{
	saturn_snapshot_t *s = requeued_itself();
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(loop_profile, strlen(loop_profile), &err);
	saturn_sched_build_t b;

	ck_assert_msg(pr != NULL, "%s", err.text);
	s->jobs[0].excused = 1;
	ck_assert_int_eq(saturn_sched_self_requeued(s, &s->jobs[0]), 0);
	saturn_snapshot_mark_held(s, &s->jobs[0]);
	ck_assert_double_eq(s->jobs[0].charged_from, 0);
	ck_assert_double_eq(s->jobs[0].requeued_at, 0);
	ck_assert_double_eq_tol(attacker_release(s, pr, &b), 10, 1e-6);
	ck_assert_int_eq(b.job_of_task[0], 0); /* its place in the queue kept */
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	/* a second requeue after the excused one is the task's own */
	s = requeued_itself();
	s->jobs[0].excused = 1;
	s->jobs[0].restarts = 2;
	ck_assert_int_eq(saturn_sched_self_requeued(s, &s->jobs[0]), 1);
	/* its node is down: Slurm's requeue */
	s->jobs[0].node = -1;
	snprintf(s->jobs[0].pinned_state, sizeof(s->jobs[0].pinned_state), "down");
	ck_assert_int_eq(saturn_sched_self_requeued(s, &s->jobs[0]), 0);
	saturn_snapshot_destroy(s);
	/* not a requeue at all: a late release, an unplanned one */
	s = requeued_itself();
	s->jobs[0].requeued = 0;
	s->jobs[0].begin_time = 0;
	ck_assert_int_eq(saturn_sched_self_requeued(s, &s->jobs[0]), 0);
	saturn_snapshot_destroy(s);
	/* ran 700 s of its 600: nothing left to charge */
	s = requeued_itself();
	s->jobs[0].released_at = 300;
	saturn_snapshot_mark_held(s, &s->jobs[0]);
	ck_assert_double_eq(s->jobs[0].charged_from, 300);
	ck_assert_double_eq_tol(attacker_release(s, pr, &b), 10, 1e-6);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	/* release time unknown: charged from now */
	s = requeued_itself();
	s->jobs[0].released_at = 0;
	saturn_snapshot_mark_held(s, &s->jobs[0]);
	ck_assert_double_eq(s->jobs[0].charged_from, 1000);
	ck_assert_double_eq_tol(attacker_release(s, pr, &b), 600, 1e-6);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
}
END_TEST

/* --- re-holds Slurm refuses (rehold_wait.h) --------------------------- */

/* A re-hold Slurm refused is not tried again every cycle (each time under
 * the write locks, with an error line: 1,574 lines for one task in the
 * site-scale benchmark) but SATURN_REHOLD_RETRY_S later; the caller logs
 * the first refusal only; other tasks, even of the same array record,
 * are not held up; a success forgets it; a full table reuses the entry
 * due first. */
START_TEST(test_rehold_refused_backoff)
{
	static saturn_rehold_wait_t w;
	double t = 1000;

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 984, 364, t), 0);
	ck_assert_int_eq(saturn_rehold_wait_refused(&w, 984, 364, t), 1);
	/* every 3 s cycle of the requeue delay: skipped, no update */
	for (double c = t + 3; c < t + SATURN_REHOLD_RETRY_S; c += 3)
		ck_assert_int_eq(saturn_rehold_wait_skip(&w, 984, 364, c), 1);
	/* another task of the same record, and another record: not held up */
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 984, 365, t + 3), 0);
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 985, 364, t + 3), 0);
	/* tried again after the wait; refused again: not logged again */
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 984, 364, t + SATURN_REHOLD_RETRY_S), 0);
	ck_assert_int_eq(saturn_rehold_wait_refused(&w, 984, 364, t + SATURN_REHOLD_RETRY_S), 2);
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 984, 364, t + SATURN_REHOLD_RETRY_S + 3), 1);
	/* re-held at last: forgotten, a later refusal is logged again */
	ck_assert_int_eq(saturn_rehold_wait_done(&w, 984, 364), 2);
	ck_assert_int_eq(saturn_rehold_wait_done(&w, 984, 364), 0);
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 984, 364, t + SATURN_REHOLD_RETRY_S + 3), 0);
	ck_assert_int_eq(saturn_rehold_wait_refused(&w, 984, 364, t + 100), 1);
	/* a full table: the entry due first goes */
	for (uint32_t k = 0; k < SATURN_REHOLD_WAIT_MAX - 1; k++)
		ck_assert_int_eq(saturn_rehold_wait_refused(&w, 2000 + k, -1, t + 200 + k), 1);
	ck_assert_int_eq(saturn_rehold_wait_refused(&w, 5000, -1, t + 300), 1);
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 984, 364, t + 101), 0);
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 5000, -1, t + 301), 1);
	ck_assert_int_eq(saturn_rehold_wait_skip(&w, 2000, -1, t + 201), 1);
	/* no table, no job id: nothing */
	ck_assert_int_eq(saturn_rehold_wait_skip(NULL, 1, -1, t), 0);
	ck_assert_int_eq(saturn_rehold_wait_refused(NULL, 1, -1, t), 0);
	ck_assert_int_eq(saturn_rehold_wait_refused(&w, 0, -1, t), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_task_cap_queue_order);
	tcase_add_test(tc, test_task_cap_over_limit);
	tcase_add_test(tc, test_task_cap_setting);
	tcase_add_test(tc, test_late_release_replanned);
	tcase_add_test(tc, test_late_release_bounds);
	tcase_add_test(tc, test_never_started);
	tcase_add_test(tc, test_requeue_charged);
	tcase_add_test(tc, test_requeue_excused);
	tcase_add_test(tc, test_rehold_refused_backoff);
}

int main(void)
{
	return fx_run_suite("hostile", 120, add_tests);
}
