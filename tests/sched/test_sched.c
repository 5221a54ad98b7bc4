/* test_sched.c - the Slurm-free half of sched/saturn: settings, snapshot to
 * problem, the FCFS fallback plan, decisions, progress and state files. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats.h"
#include "planner.h"
#include "profile.h"
#include "progress.h"
#include "sched_core.h"

static const char profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-5\", \"batches\": 100,"
	" \"class\": \"somewhere\", \"options\": ["
	"  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.52, \"status\": \"measured\","
	"   \"params\": {\"bucket_mb\": 25}},"
	"  {\"technique\": \"fsdp\", \"gpus\": 4, \"sec_per_batch\": 0.3, \"status\": \"predicted\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 8, \"status\": \"oom\"} ] } ] }";

static const saturn_profile_t *lookup_one(const char *batch, long uid, void *arg)
{
	return strcmp(batch, "sweep") ? NULL : arg;
}

static const struct settings_case {
	const char *params;
	int bad;
	double interval, solver, gain;
	int backfill;
	const char *state_dir;
	const char *expect; /* substring of the error, or NULL */
	const char *profiler;
	int profile_time;
	int measure, cache; /* expected saturn_measure_predicted, saturn_profile_cache */
} settings_cases[] = {
	{NULL, 0, 10, 2, 0.05, 1, NULL, NULL, NULL, 0, 1, 1},
	{"bf_interval=30,saturn_interval=5,saturn_solver_time=0.5", 0, 5, 0.5, 0.05, 1, NULL, NULL, NULL, 0, 1, 1},
	{"saturn_min_gain=0.2,saturn_backfill=no,saturn_state_dir=/var/x", 0, 10, 2, 0.2, 0, "/var/x", NULL, NULL, 0, 1, 1},
	{"saturn_interval=abc", 1, 10, 2, 0.05, 1, NULL, "saturn_interval=abc: must be a number", NULL, 0, 1, 1},
	{"saturn_interval=0", 1, 10, 2, 0.05, 1, NULL, "from 1 to 3600", NULL, 0, 1, 1},
	{"saturn_backfill=maybe,saturn_min_gain=2", 2, 10, 2, 0.05, 1, NULL, "saturn_backfill=maybe: must be yes or no", NULL, 0, 1, 1},
	{"saturn_state_dir=relative", 1, 10, 2, 0.05, 1, NULL, "absolute path", NULL, 0, 1, 1},
	{"saturn_bogus=1", 1, 10, 2, 0.05, 1, NULL, "unknown saturn_ key", NULL, 0, 1, 1},
	{"saturn_interval", 1, 10, 2, 0.05, 1, NULL, "needs a value", NULL, 0, 1, 1},
	{"saturn_profiler=/usr/bin/saturn-profile,saturn_profile_time=45", 0, 10, 2, 0.05, 1, NULL, NULL,
	 "/usr/bin/saturn-profile", 45, 1, 1},
	{"saturn_profiler=/x,saturn_profiler=none", 0, 10, 2, 0.05, 1, NULL, NULL, NULL, 30, 1, 1},
	{"saturn_profiler=rel", 1, 10, 2, 0.05, 1, NULL, "absolute path or none", NULL, 30, 1, 1},
	{"saturn_profile_time=0", 1, 10, 2, 0.05, 1, NULL, "whole number of minutes", NULL, 30, 1, 1},
	{"saturn_profile_time=2.5", 1, 10, 2, 0.05, 1, NULL, "whole number of minutes", NULL, 30, 1, 1},
	{"saturn_measure_predicted=no,saturn_profile_cache=0", 0, 10, 2, 0.05, 1, NULL, NULL, NULL, 30, 0, 0},
	{"saturn_measure_predicted=often", 1, 10, 2, 0.05, 1, NULL, "saturn_measure_predicted=often: must be yes or no",
	 NULL, 30, 1, 1},
	{"saturn_profile_cache=", 1, 10, 2, 0.05, 1, NULL, "must be yes or no", NULL, 30, 1, 1},
};

START_TEST(test_settings)
{
	const struct settings_case *c = &settings_cases[_i];
	saturn_sched_settings_t s;
	saturn_error_t err = {{0}};

	saturn_sched_settings_init(&s);
	ck_assert_int_eq(saturn_sched_settings_parse(&s, c->params, &err), c->bad);
	ck_assert_double_eq(s.interval_s, c->interval);
	ck_assert_double_eq(s.solver_time_s, c->solver);
	ck_assert_double_eq(s.min_gain, c->gain);
	ck_assert_int_eq(s.backfill, c->backfill);
	if (c->state_dir)
		ck_assert_str_eq(s.state_dir, c->state_dir);
	else
		ck_assert_ptr_null(s.state_dir);
	if (c->profiler)
		ck_assert_str_eq(s.profiler, c->profiler);
	else
		ck_assert_ptr_null(s.profiler);
	ck_assert_int_eq(s.profile_time_min, c->profile_time ? c->profile_time : 30);
	ck_assert_int_eq(s.measure_predicted, c->measure);
	ck_assert_int_eq(s.profile_cache, c->cache);
	if (c->expect)
		ck_assert_msg(strstr(err.text, c->expect), "error '%s' lacks '%s'", err.text, c->expect);
	saturn_sched_settings_free(&s);
}
END_TEST

/* saturn_internode_bw: GB/s, 0 = none (the default); bad values named */
START_TEST(test_settings_internode)
{
	saturn_sched_settings_t s;
	saturn_error_t err = {{0}};

	saturn_sched_settings_init(&s);
	ck_assert_double_eq(s.internode_gbs, 0);
	ck_assert_int_eq(saturn_sched_settings_parse(&s, "saturn_internode_bw=25", &err), 0);
	ck_assert_double_eq(s.internode_gbs, 25);
	ck_assert_int_eq(saturn_sched_settings_parse(&s, "saturn_internode_bw=-3", &err), 1);
	ck_assert_msg(strstr(err.text, "saturn_internode_bw=-3: must be a bandwidth in GB/s"), "%s", err.text);
	ck_assert_double_eq(s.internode_gbs, 25);
	ck_assert_int_eq(saturn_sched_settings_parse(&s, "saturn_internode_bw=fast", &err), 1);
	saturn_sched_settings_free(&s);
}
END_TEST

/* Two nodes of 8 GPUs, a batch of `n` held tasks asking for `gpus` each
 * with a 60 s limit, submitted in task order. */
static saturn_snapshot_t *cluster(int n, int gpus)
{
	saturn_snapshot_t *s = saturn_snapshot_create();

	ck_assert_ptr_nonnull(s);
	s->now = 1000;
	for (int k = 0; k < 2; k++) {
		saturn_snap_node_t *node = saturn_snapshot_add_node(s);

		snprintf(node->name, sizeof(node->name), "n%d", k + 1);
		node->gpus = 8;
	}
	for (int i = 0; i < n; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);

		j->job_id = 7;
		j->array_job_id = 7;
		j->task_id = i;
		snprintf(j->batch, sizeof(j->batch), "sweep");
		j->uid = 0;
		j->state = SATURN_SNAP_HELD;
		j->req_gpus = gpus;
		j->time_limit_s = 60;
		j->submit_time = 900;
	}
	return s;
}

/* No GPU of a node is planned for two tasks at once: every pair of
 * assignments on one node that overlaps in time has disjoint GPU ids. */
static void assert_gpus_exclusive(const saturn_plan_t *plan)
{
	for (int i = 0; i < plan->nassign; i++)
		for (int j = i + 1; j < plan->nassign; j++) {
			const saturn_assign_t *a = &plan->assign[i], *c = &plan->assign[j];

			if (a->node != c->node || a->end_s <= c->start_s + 1e-9 ||
			    c->end_s <= a->start_s + 1e-9)
				continue;
			for (int g = 0; g < a->gpus; g++)
				for (int h = 0; h < c->gpus; h++)
					ck_assert_msg(a->gpu_ids[g] != c->gpu_ids[h],
						      "tasks %d and %d share GPU %d of node %d at once", i, j,
						      a->gpu_ids[g], a->node);
		}
}

START_TEST(test_fallback_fcfs)
{
	saturn_snapshot_t *s = cluster(6, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_decision_t *d;
	int nd, released = 0;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 6);
	ck_assert_int_eq(b.any_profile, 0);
	ck_assert_str_eq(b.problem->tasks[0].id, "7_0");
	ck_assert_str_eq(b.problem->tasks[0].options[0].technique, "user");
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	/* 4 tasks of 4 GPUs fit at once on 16 GPUs, the last two at 60 s */
	ck_assert_double_eq_tol(plan->makespan_s, 120, 1e-9);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq(plan->assign[i].start_s, 0);
	ck_assert_double_eq(plan->assign[4].start_s, 60);
	/* the four at 0 fill both nodes: two per node, on disjoint GPUs */
	ck_assert_int_eq(plan->assign[0].node + plan->assign[1].node + plan->assign[2].node +
				 plan->assign[3].node,
			 2);
	assert_gpus_exclusive(plan);
	ck_assert_int_eq(saturn_plan_validate(plan, b.problem, &err), 0);
	nd = saturn_sched_decide(s, &b, plan, 2, &d);
	ck_assert_int_eq(nd, 6);
	for (int i = 0; i < nd; i++) {
		if (d[i].release) {
			released++;
			ck_assert_int_eq(d[i].gpus, 4);
		} else {
			ck_assert_msg(strstr(d[i].reason, "saturn: starts in ~1m on n"), "%s", d[i].reason);
		}
	}
	ck_assert_int_eq(released, 4);
	/* the next cycle: at once while a due task is still held, then when
	 * the two at 60 s come within the slack, never with nothing held */
	ck_assert_double_eq(saturn_sched_next_due(s, &b, plan, 2), 0);
	for (int i = 0; i < nd; i++)
		if (d[i].release)
			s->jobs[d[i].job].state = SATURN_SNAP_RELEASED;
	ck_assert_double_eq_tol(saturn_sched_next_due(s, &b, plan, 2), 58, 1e-9);
	ck_assert_double_eq_tol(saturn_sched_next_due(s, &b, plan, 100), 0, 1e-9);
	b.problem->tasks[plan->assign[5].task >= 0 ? plan->assign[5].task : 5].release_s = 70;
	b.problem->tasks[plan->assign[4].task >= 0 ? plan->assign[4].task : 4].release_s = 65;
	ck_assert_double_eq_tol(saturn_sched_next_due(s, &b, plan, 2), 65, 1e-9);
	for (int i = 0; i < s->njobs; i++)
		s->jobs[i].state = SATURN_SNAP_RUNNING;
	ck_assert_double_eq(saturn_sched_next_due(s, &b, plan, 2), -1);
	ck_assert_double_eq(saturn_sched_next_due(s, &b, NULL, 2), -1);
	free(d);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A running task is pinned; a foreign job's GPUs are busy until its end; a
 * task wider than any node is skipped with a reason. */
START_TEST(test_running_busy_skip)
{
	saturn_snapshot_t *s = cluster(3, 8);
	saturn_snap_busy_t *bz = saturn_snapshot_add_busy(s);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;

	s->jobs[0].state = SATURN_SNAP_RUNNING;
	s->jobs[0].node = 0;
	s->jobs[0].gpu_mask = 0xff;
	s->jobs[0].gpus = 8;
	snprintf(s->jobs[0].technique, SATURN_TECH_LEN, "user");
	s->jobs[0].start_time = 970; /* 30 s in: 30 s left */
	s->jobs[2].req_gpus = 16;
	bz->node = 1;
	bz->gpu_mask = 0x0f;
	bz->until = 1050; /* 50 s */
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 2);
	ck_assert_int_eq(b.nskipped, 1);
	ck_assert_int_eq(b.skipped[0], 2);
	ck_assert_msg(strstr(b.skip_reason[0], "no option fits"), "%s", b.skip_reason[0]);
	ck_assert(b.problem->tasks[0].is_running);
	ck_assert_double_eq_tol(saturn_task_runtime(&b.problem->tasks[0], 0), 30, 1e-9);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	/* task 1 (8 GPUs): n1 free at 30, n2 at 50 -> n1 at 30 */
	ck_assert_str_eq(plan->assign[1].node_name, "n1");
	ck_assert_double_eq_tol(plan->assign[1].start_s, 30, 1e-9);
	ck_assert_double_eq_tol(plan->makespan_s, 90, 1e-9);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A released task (pinned to its node by the release, not started) is
 * released in the problem: the plan keeps it on that node, first, even
 * with another node free; not one held by RequeueExitHold, one waiting for
 * its begin time or one whose pinned node is not usable. */
START_TEST(test_released_pinned)
{
	saturn_snapshot_t *s = cluster(3, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_planner_opts_t o;

	s->jobs[0].state = SATURN_SNAP_RUNNING;
	s->jobs[0].node = 0;
	s->jobs[0].gpu_mask = 0xff;
	s->jobs[0].gpus = 8;
	snprintf(s->jobs[0].technique, SATURN_TECH_LEN, "user");
	s->jobs[0].start_time = 970; /* 30 s left */
	s->jobs[1].state = SATURN_SNAP_RELEASED;
	s->jobs[1].node = 0;
	s->jobs[1].gpus = 4;
	snprintf(s->jobs[1].technique, SATURN_TECH_LEN, "user");
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 3);
	ck_assert(!b.problem->tasks[0].is_released);
	ck_assert(b.problem->tasks[1].is_released);
	ck_assert_int_eq(b.problem->tasks[1].released_node, 0);
	ck_assert(!b.problem->tasks[2].is_released);
	saturn_planner_opts_init(&o);
	o.time_limit_s = 0.2;
	plan = saturn_planner_solve(b.problem, &o, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	ck_assert_str_eq(plan->assign[1].node_name, "n1");
	ck_assert_double_eq_tol(plan->assign[1].start_s, 30, 1e-9);
	ck_assert_str_eq(plan->assign[2].node_name, "n2");
	ck_assert_double_eq_tol(plan->assign[2].start_s, 0, 1e-9);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);

	s->jobs[1].exit_held = 1;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert(!b.problem->tasks[1].is_released);
	saturn_sched_build_free(&b);
	s->jobs[1].exit_held = 0;
	s->jobs[1].begin_time = 1100;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert(!b.problem->tasks[1].is_released);
	saturn_sched_build_free(&b);
	s->jobs[1].begin_time = 0;
	s->jobs[1].node = -1;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert(!b.problem->tasks[1].is_released);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

static const struct reason_case {
	double start;
	int gpus;
	const char *expect;
} reason_cases[] = {
	{5, 1, "saturn: starts in ~5s on n2, 1 GPU, fsdp"},
	{600, 4, "saturn: starts in ~10m on n2, 4 GPUs, fsdp"},
	{7800, 4, "saturn: starts in ~2h10m on n2, 4 GPUs, fsdp"},
	{-3, 2, "saturn: starts in ~0s on n2, 2 GPUs, fsdp"},
	{365 * 86400.0, 8, "saturn: waits for GPUs held by other jobs; then n2, 8 GPUs, fsdp"},
};

START_TEST(test_reason)
{
	char buf[160];

	saturn_sched_reason(buf, sizeof(buf), reason_cases[_i].start, "n2", reason_cases[_i].gpus, "fsdp");
	ck_assert_str_eq(buf, reason_cases[_i].expect);
}
END_TEST

START_TEST(test_switch)
{
	ck_assert_int_eq(saturn_sched_should_switch(100, 100, 0.05), 0);
	ck_assert_int_eq(saturn_sched_should_switch(90, 100, 0.05), 1);
	ck_assert_int_eq(saturn_sched_should_switch(100, 0, 0.05), 1);
}
END_TEST

/* A plan carries over while the world follows it; an overrunning task or
 * a changed task set breaks it. */
START_TEST(test_carry)
{
	saturn_snapshot_t *s = cluster(6, 4);
	saturn_sched_build_t b, b2;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan, *carried;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	plan = saturn_sched_fcfs(b.problem);
	/* 10 s later, the first four run as planned */
	s->now += 10;
	for (int i = 0; i < 4; i++) {
		s->jobs[i].state = SATURN_SNAP_RUNNING;
		s->jobs[i].start_time = s->now - 10;
		s->jobs[i].node = plan->assign[i].node;
		s->jobs[i].gpus = 4;
		snprintf(s->jobs[i].technique, SATURN_TECH_LEN, "user");
		s->jobs[i].gpu_mask = 0;
		for (int g = 0; g < 4; g++)
			s->jobs[i].gpu_mask |= 1ULL << plan->assign[i].gpu_ids[g];
	}
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	carried = saturn_sched_carry(plan, b2.problem);
	ck_assert_ptr_nonnull(carried);
	ck_assert_double_eq_tol(carried->makespan_s, 110, 1e-6);
	ck_assert_double_eq_tol(carried->assign[4].start_s, 50, 1e-6);
	ck_assert_int_eq(saturn_sched_should_switch(110, carried->makespan_s, 0.05), 0);
	saturn_plan_destroy(carried);
	saturn_sched_build_free(&b2);
	/* 60 s later task 0 still runs (limit raised to 200 s: 130 s left):
	 * the task planned after it on its GPUs is shifted right */
	s->now += 60;
	for (int i = 0; i < 4; i++)
		s->jobs[i].time_limit_s = 200;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	carried = saturn_sched_carry(plan, b2.problem);
	ck_assert_ptr_nonnull(carried);
	for (int i = 4; i < 6; i++) {
		const saturn_assign_t *a = &carried->assign[i];

		/* either behind a running task on its GPUs, or (if none
		 * shares them) at 0 */
		ck_assert(a->start_s == 0 || fabs(a->start_s - 130) < 1e-6);
	}
	ck_assert_double_eq_tol(carried->makespan_s, 190, 1e-6);
	saturn_plan_destroy(carried);
	saturn_sched_build_free(&b2);
	/* tasks that ended are dropped */
	s->njobs--;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	carried = saturn_sched_carry(plan, b2.problem);
	ck_assert_ptr_nonnull(carried);
	ck_assert_int_eq(carried->nassign, 5);
	saturn_plan_destroy(carried);
	saturn_sched_build_free(&b2);
	/* a task the old plan does not know: no carry */
	s->njobs++;
	s->jobs[5].task_id = 42;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	ck_assert_ptr_null(saturn_sched_carry(plan, b2.problem));
	saturn_sched_build_free(&b2);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A carried plan's lower bound is a bound of the problem it is carried
 * into, never above its makespan. It used to be the previous plan's bound
 * copied: from the previous origin and the remaining times known then,
 * so after a minute (tasks run, one overran its estimate and was cut to
 * its time limit) it stood above the plan it labelled and was persisted
 * and shown like that. */
START_TEST(test_carry_bound)
{
	saturn_snapshot_t *s = cluster(4, 8);
	saturn_sched_build_t b, b2;
	saturn_error_t err = {{0}};
	saturn_planner_opts_t opts;
	saturn_plan_t *plan, *carried;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	saturn_planner_opts_init(&opts);
	opts.time_limit_s = 0.2;
	plan = saturn_planner_solve(b.problem, &opts, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	/* four 8-GPU tasks of 60 s on two 8-GPU nodes: 120 s, and provably */
	ck_assert_double_eq_tol(plan->makespan_s, 120, 1e-6);
	ck_assert_double_eq_tol(plan->lower_bound_s, 120, 1e-3);
	/* 59 s later the first two run as planned (1 s left) */
	s->now += 59;
	for (int i = 0; i < 2; i++) {
		const saturn_assign_t *a = &plan->assign[i];

		ck_assert_double_eq(a->start_s, 0);
		s->jobs[i].state = SATURN_SNAP_RUNNING;
		s->jobs[i].start_time = s->now - 59;
		s->jobs[i].node = a->node;
		s->jobs[i].gpus = 8;
		snprintf(s->jobs[i].technique, SATURN_TECH_LEN, "user");
		s->jobs[i].gpu_mask = 0xff;
	}
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	carried = saturn_sched_carry(plan, b2.problem);
	ck_assert_ptr_nonnull(carried);
	ck_assert_int_eq(saturn_plan_validate(carried, b2.problem, &err), 0);
	ck_assert_double_eq_tol(carried->makespan_s, 61, 1e-6);
	ck_assert_msg(carried->lower_bound_s <= carried->makespan_s * (1 + 1e-9),
		      "bound %.3f above makespan %.3f", carried->lower_bound_s, carried->makespan_s);
	ck_assert_double_eq_tol(carried->lower_bound_s, 61, 1e-3);
	saturn_plan_destroy(carried);
	saturn_sched_build_free(&b2);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* With a profile: every usable option, the profile's batches, planned by
 * the planner into a valid plan. */
START_TEST(test_profile_plan)
{
	saturn_snapshot_t *s = cluster(6, 8);
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_sched_build_t b;
	saturn_planner_opts_t opts;
	saturn_plan_t *plan;
	saturn_decision_t *d;
	int nd;

	ck_assert_msg(pr != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_sched_build(s, lookup_one, pr, &b, &err), 0);
	ck_assert_int_eq(b.any_profile, 1);
	ck_assert_int_eq(b.problem->tasks[0].noptions, 3);
	ck_assert_double_eq(b.problem->tasks[0].batches, 100);
	saturn_planner_opts_init(&opts);
	opts.time_limit_s = 0.3;
	plan = saturn_planner_solve(b.problem, &opts, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_plan_validate(plan, b.problem, &err), 0);
	/* the users' 8-GPU requests would take 6 x 100 s / 2 nodes = 300 s */
	ck_assert_double_le(plan->makespan_s, 300);
	nd = saturn_sched_decide(s, &b, plan, 2, &d);
	ck_assert_int_eq(nd, 6);
	free(d);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Partitions: two nodes n1, n2 (gpus each), four held tasks asking for
 * req GPUs each (60 s), each in the partitions of job_mask; nodes in
 * node_mask's. fcfs[k]: the node the FCFS plan puts task k on, or NULL
 * when it is skipped with a reason containing why. */
static const struct part_case {
	const char *what;
	uint64_t node_mask[2];
	int node_gpus[2];
	uint64_t job_mask[4];
	int req;
	int classes; /* expect node classes (0: none, as without partitions) */
	const char *fcfs[4];
	const char *why;
	int profile_fits; /* with the profile (1-4 GPUs), nothing is skipped */
} part_cases[] = {
	{"disjoint", {1, 2}, {8, 8}, {1, 1, 2, 2}, 8, 1, {"n1", "n1", "n2", "n2"}, NULL, 0},
	{"disjoint, late ones", {1, 2}, {8, 8}, {2, 2, 2, 1}, 8, 1, {"n2", "n2", "n2", "n1"}, NULL, 0},
	/* task 3 may use both: FCFS takes n2, the only free one */
	{"one in both", {1, 2}, {8, 8}, {1, 1, 1, 3}, 8, 1, {"n1", "n1", "n1", "n2"}, NULL, 0},
	{"all in both", {1, 2}, {8, 8}, {3, 3, 3, 3}, 8, 0, {"n1", "n2", "n1", "n2"}, NULL, 0},
	{"node in both", {3, 2}, {8, 8}, {1, 1, 2, 2}, 8, 1, {"n1", "n1", "n2", "n2"}, NULL, 0},
	/* task 3 (p1 only) waits for n1 although n2 is free sooner */
	{"node in both, busy", {3, 2}, {8, 8}, {2, 2, 2, 1}, 8, 1, {"n1", "n2", "n1", "n1"}, NULL, 0},
	{"node in none", {1, 0}, {8, 8}, {1, 1, 1, 1}, 8, 1, {"n1", "n1", "n1", "n1"}, NULL, 0},
	{"no node in partition", {1, 1}, {8, 8}, {1, 2, 1, 2}, 8, 1, {"n1", NULL, "n2", NULL},
	 "saturn: no usable GPU node in partition(s) of this job", 0},
	{"partition's nodes too small", {1, 2}, {8, 4}, {1, 2, 1, 2}, 8, 1, {"n1", NULL, "n1", NULL},
	 "saturn: no usable GPU node in partition(s) of this job with 8 GPUs (largest: 4)", 1},
	{"one partition", {1, 1}, {8, 8}, {1, 1, 1, 1}, 8, 0, {"n1", "n2", "n1", "n2"}, NULL, 0},
	{"unknown (0)", {1, 2}, {8, 8}, {0, 0, 0, 0}, 8, 0, {"n1", "n2", "n1", "n2"}, NULL, 0},
};

static saturn_snapshot_t *part_cluster(const struct part_case *c)
{
	saturn_snapshot_t *s = cluster(4, c->req);

	for (int n = 0; n < 2; n++) {
		s->nodes[n].part_mask = c->node_mask[n];
		s->nodes[n].gpus = c->node_gpus[n];
	}
	for (int i = 0; i < 4; i++)
		s->jobs[i].part_mask = c->job_mask[i];
	return s;
}

/* Whether the snapshot allows task (snapshot job) j on node n. */
static int part_allows(const saturn_snapshot_t *s, int j, int n)
{
	return !s->jobs[j].part_mask || (s->jobs[j].part_mask & s->nodes[n].part_mask);
}

START_TEST(test_partitions)
{
	const struct part_case *c = &part_cases[_i];
	saturn_snapshot_t *s = part_cluster(c);
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_sched_build_t b;
	saturn_planner_opts_t opts;
	saturn_plan_t *plan;
	int nskip = 0;

	ck_assert_msg(pr != NULL, "%s", err.text);
	/* the largest node of task 1's partitions (companion jobs) */
	ck_assert_int_eq(saturn_snapshot_max_gpus(s, c->job_mask[1]),
			 !c->fcfs[1] && !c->profile_fits ? 0 : c->job_mask[1] == 2 ? c->node_gpus[1] : 8);
	/* users' requests: FCFS */
	ck_assert_msg(saturn_sched_build(s, NULL, NULL, &b, &err) == 0, "%s: %s", c->what, err.text);
	for (int n = 0; n < 2; n++)
		ck_assert_msg((b.problem->nodes[n].klass != NULL) == c->classes, "%s: node %d class %s",
			      c->what, n, b.problem->nodes[n].klass ? b.problem->nodes[n].klass : "-");
	for (int k = 0; k < 4; k++)
		if (!c->fcfs[k]) {
			ck_assert_int_lt(nskip, b.nskipped);
			ck_assert_int_eq(b.skipped[nskip], k);
			ck_assert_msg(!strcmp(b.skip_reason[nskip], c->why), "%s: %s", c->what,
				      b.skip_reason[nskip]);
			nskip++;
		}
	ck_assert_int_eq(b.nskipped, nskip);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	ck_assert_msg(saturn_plan_validate(plan, b.problem, &err) == 0, "%s: %s", c->what, err.text);
	for (int i = 0; i < plan->nassign; i++) {
		int j = b.job_of_task[i];

		ck_assert_msg(!strcmp(plan->assign[i].node_name, c->fcfs[j]), "%s: task %d on %s, not %s",
			      c->what, j, plan->assign[i].node_name, c->fcfs[j]);
	}
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);

	/* with a profile (measured in class "somewhere"): the planner */
	ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s: %s", c->what, err.text);
	ck_assert_int_eq(b.nskipped, c->profile_fits ? 0 : nskip);
	for (int t = 0; t < b.problem->ntasks; t++) {
		const saturn_task_t *task = &b.problem->tasks[t];
		int j = b.job_of_task[t];

		/* every profile option is there, once per eligible class */
		ck_assert_int_ge(task->noptions, 3);
		for (int o = 0; o < task->noptions; o++) {
			ck_assert_double_eq(task->batches, 100);
			for (int n = 0; n < 2; n++)
				if (saturn_option_fits(b.problem, t, o, n))
					ck_assert_msg(part_allows(s, j, n), "%s: task %d option %d fits n%d",
						      c->what, j, o, n + 1);
		}
	}
	saturn_planner_opts_init(&opts);
	opts.time_limit_s = 0.2;
	plan = saturn_planner_solve(b.problem, &opts, &err);
	ck_assert_msg(plan != NULL, "%s: %s", c->what, err.text);
	ck_assert_msg(saturn_plan_validate(plan, b.problem, &err) == 0, "%s: %s", c->what, err.text);
	for (int i = 0; i < plan->nassign; i++)
		ck_assert_msg(part_allows(s, b.job_of_task[i], plan->assign[i].node), "%s: task %d on %s",
			      c->what, b.job_of_task[i], plan->assign[i].node_name);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* One partition with every node: exactly the problem of a snapshot that
 * does not know partitions (no classes; the profile's own class dropped). */
START_TEST(test_partitions_same_problem)
{
	saturn_snapshot_t *s = cluster(6, 4);
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_sched_build_t b;
	char *plain[2], *parts[2];

	ck_assert_ptr_nonnull(pr);
	s->jobs[0].state = SATURN_SNAP_RUNNING;
	s->jobs[0].node = 1;
	s->jobs[0].gpu_mask = 0x3;
	s->jobs[0].gpus = 2;
	s->jobs[0].start_time = 990;
	snprintf(s->jobs[0].technique, SATURN_TECH_LEN, "ddp");
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
		plain[k] = saturn_problem_to_json(b.problem);
		saturn_sched_build_free(&b);
		ck_assert_int_eq(saturn_sched_build(s, lookup_one, pr, &b, &err), 0);
		ck_assert_ptr_null(b.problem->tasks[1].options[0].klass);
		parts[k] = saturn_problem_to_json(b.problem);
		saturn_sched_build_free(&b);
		/* now the same in one partition (bit 5) */
		for (int n = 0; n < s->nnodes; n++)
			s->nodes[n].part_mask = 1ULL << 5;
		for (int i = 0; i < s->njobs; i++)
			s->jobs[i].part_mask = 1ULL << 5;
	}
	ck_assert_ptr_nonnull(plain[0]);
	ck_assert_ptr_nonnull(parts[0]);
	ck_assert_str_eq(plain[0], plain[1]);
	ck_assert_str_eq(parts[0], parts[1]);
	ck_assert_ptr_null(strstr(parts[0], "class"));
	for (int k = 0; k < 2; k++) {
		free(plain[k]);
		free(parts[k]);
	}
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Running and released tasks under partitions: a running one stays pinned
 * (even on a node outside its partition now), a released one is planned in
 * its partition; a carried plan survives while the partitions stay, and is
 * dropped when a task's node leaves its partitions. */
START_TEST(test_partitions_running_carry)
{
	static const struct part_case c = {"carry", {1, 2}, {8, 8}, {1, 1, 2, 2}, 4, 1,
					   {NULL}, NULL, 0};
	saturn_snapshot_t *s = part_cluster(&c);
	saturn_error_t err = {{0}};
	saturn_sched_build_t b, b2;
	saturn_plan_t *plan, *carried;

	saturn_snapshot_add_job(s);
	s->jobs[4] = s->jobs[3];
	s->jobs[4].task_id = 4;
	/* task 0 runs on n2 although in partition 1 (moved since) */
	s->jobs[0].state = SATURN_SNAP_RUNNING;
	s->jobs[0].node = 1;
	s->jobs[0].gpu_mask = 0xf0;
	s->jobs[0].gpus = 4;
	s->jobs[0].start_time = 990;
	snprintf(s->jobs[0].technique, SATURN_TECH_LEN, "user");
	/* task 2 was released (partition 2) */
	s->jobs[2].state = SATURN_SNAP_RELEASED;
	s->jobs[2].gpus = 4;
	snprintf(s->jobs[2].technique, SATURN_TECH_LEN, "user");
	ck_assert_msg(saturn_sched_build(s, NULL, NULL, &b, &err) == 0, "%s", err.text);
	ck_assert_int_eq(b.nskipped, 0);
	ck_assert_int_eq(b.problem->ntasks, 5);
	ck_assert(b.problem->tasks[0].is_running);
	ck_assert_ptr_null(b.problem->tasks[0].options[0].klass);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	ck_assert_int_eq(saturn_plan_validate(plan, b.problem, &err), 0);
	for (int i = 0; i < plan->nassign; i++) {
		int j = b.job_of_task[i];

		if (j != 0)
			ck_assert_msg(part_allows(s, j, plan->assign[i].node), "task %d on %s", j,
				      plan->assign[i].node_name);
	}
	/* 5 s later, nothing changed: carried */
	s->now += 5;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	carried = saturn_sched_carry(plan, b2.problem);
	ck_assert_ptr_nonnull(carried);
	ck_assert_int_eq(saturn_plan_validate(carried, b2.problem, &err), 0);
	saturn_plan_destroy(carried);
	saturn_sched_build_free(&b2);
	/* partitions gone (every job may use every node): still carried */
	for (int i = 0; i < s->njobs; i++)
		s->jobs[i].part_mask = 3;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	ck_assert_ptr_null(b2.problem->nodes[0].klass);
	carried = saturn_sched_carry(plan, b2.problem);
	ck_assert_ptr_nonnull(carried);
	ck_assert_int_eq(saturn_plan_validate(carried, b2.problem, &err), 0);
	saturn_plan_destroy(carried);
	saturn_sched_build_free(&b2);
	/* the nodes swap partitions: the held tasks' planned nodes are
	 * outside their partitions now, the carried plan is dropped */
	for (int i = 0; i < s->njobs; i++)
		s->jobs[i].part_mask = c.job_mask[i < 4 ? i : 3];
	s->nodes[0].part_mask = 2;
	s->nodes[1].part_mask = 1;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b2, &err), 0);
	ck_assert_ptr_nonnull(b2.problem->nodes[0].klass);
	ck_assert_ptr_null(saturn_sched_carry(plan, b2.problem));
	saturn_sched_build_free(&b2);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_state_roundtrip)
{
	saturn_snapshot_t *s = cluster(3, 8);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_sched_state_t *st;
	char *txt;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	plan = saturn_sched_fcfs(b.problem);
	txt = saturn_sched_state_to_json(s, &b, plan, "p7", s->now);
	ck_assert_ptr_nonnull(txt);
	st = saturn_sched_state_parse(txt, strlen(txt), &err);
	ck_assert_msg(st != NULL, "%s", err.text);
	ck_assert_str_eq(st->plan_id, "p7");
	ck_assert_int_eq(st->ntasks, 3);
	ck_assert_str_eq(st->tasks[2].id, "7_2");
	ck_assert_str_eq(st->tasks[2].batch, "sweep");
	ck_assert_str_eq(st->tasks[2].state, "planned");
	ck_assert_int_eq(st->tasks[2].uid, 0);
	ck_assert_double_eq_tol(st->tasks[2].start, 1060, 1e-6);
	ck_assert_double_eq_tol(st->makespan_end, 1120, 1e-6);
	/* the nodes planned on, with their sizes, for `saturn status` */
	ck_assert_int_gt(st->nnodes, 0);
	ck_assert_int_eq(st->nnodes, b.problem->nnodes);
	for (int n = 0; n < st->nnodes; n++) {
		ck_assert_str_eq(st->nodes[n].name, b.problem->nodes[n].name);
		ck_assert_int_eq(st->nodes[n].gpus, b.problem->nodes[n].gpus);
	}
	/* every field the writer writes comes back */
	ck_assert_str_eq(st->method, plan->method);
	ck_assert_double_eq(st->updated, s->now);
	ck_assert_double_eq(st->makespan_s, plan->makespan_s);
	ck_assert_double_eq(st->lower_bound_s, plan->lower_bound_s);
	ck_assert_double_eq(st->solve_s, plan->solve_s);
	ck_assert_int_eq(st->ntasks, plan->nassign);
	for (int i = 0; i < st->ntasks; i++) {
		const saturn_assign_t *a = &plan->assign[i];
		const saturn_snap_job_t *j = &s->jobs[b.job_of_task[a->task >= 0 ? a->task : i]];
		const saturn_sched_state_task_t *t = &st->tasks[i];

		ck_assert_str_eq(t->id, a->task_id);
		ck_assert_str_eq(t->batch, j->batch);
		ck_assert_int_eq(t->uid, (long)j->uid);
		ck_assert_int_eq(t->job_id, (long)j->job_id);
		ck_assert_str_eq(t->technique, a->technique);
		ck_assert_str_eq(t->node, a->node_name);
		ck_assert_int_eq(t->gpus, a->gpus);
		ck_assert_ptr_nonnull(a->gpu_ids);
		ck_assert_ptr_nonnull(t->gpu_ids);
		for (int g = 0; g < t->gpus; g++)
			ck_assert_int_eq(t->gpu_ids[g], a->gpu_ids[g]);
		ck_assert_double_eq(t->start, s->now + a->start_s);
		ck_assert_double_eq(t->end, s->now + a->end_s);
	}
	saturn_sched_state_destroy(st);
	ck_assert_ptr_null(saturn_sched_state_parse("{\"format\":\"x\"}", 14, &err));
	ck_assert_msg(strstr(err.text, "format"), "%s", err.text);
	ck_assert_ptr_null(saturn_sched_state_parse("[1,", 3, &err));
	/* bad fields are named, not dropped */
	{
		static const struct {
			const char *task, *why;
		} bad[] = {
			{",\"gpus\":2,\"gpu_ids\":[0]", "tasks[0].gpu_ids: must list gpus (2) ids, not 1"},
			{",\"gpus\":2,\"gpu_ids\":[1,1]", "tasks[0].gpu_ids: 1 listed twice"},
			{",\"gpus\":1,\"gpu_ids\":[-1]", "tasks[0].gpu_ids[0]"},
			{",\"gpus\":1,\"gpu_ids\":\"0\"", "tasks[0].gpu_ids: must be an array"},
			{",\"gpus\":65", "tasks[0].gpus"},
			{",\"job_id\":-3", "tasks[0].job_id"},
			{",\"node\":7", "tasks[0].node"},
			{",\"start\":\"x\"", "tasks[0].start"},
			{",\"gpus\":2,\"gpu_ids\":[3,1]", NULL},
			{",\"gpus\":0", NULL},
		};

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			char buf[256];

			snprintf(buf, sizeof(buf),
				 "{\"format\":\"saturn-sched-state/1\",\"tasks\":[{\"id\":\"1\",\"start\":1,\"end\":2%s}]}",
				 bad[k].task);
			st = saturn_sched_state_parse(buf, strlen(buf), &err);
			if (!bad[k].why) {
				ck_assert_msg(st != NULL, "%s: %s", bad[k].task, err.text);
				if (st->tasks[0].gpus)
					ck_assert_int_eq(st->tasks[0].gpu_ids[0], 3);
				else
					ck_assert_ptr_null(st->tasks[0].gpu_ids);
				saturn_sched_state_destroy(st);
				continue;
			}
			ck_assert_msg(st == NULL, "%s accepted", bad[k].task);
			ck_assert_msg(strstr(err.text, bad[k].why), "%s: '%s' lacks '%s'", bad[k].task,
				      err.text, bad[k].why);
		}
		st = saturn_sched_state_parse("{\"format\":\"saturn-sched-state/1\",\"tasks\":[],\"nodes\":[{\"name\":\"n1\",\"gpus\":0}]}",
					      77, &err);
		ck_assert_ptr_null(st);
		ck_assert_msg(strstr(err.text, "nodes[0].gpus"), "%s", err.text);
	}
	/* uid: optional (-1 when absent, older states), else a user id */
	{
		static const char *const uids[] = {"", ",\"uid\":1001", ",\"uid\":-1",
						   ",\"uid\":\"root\"", ",\"uid\":4294967296"};
		static const long want[] = {-1, 1001, -2, -2, -2};

		for (int k = 0; k < 5; k++) {
			char buf[256];

			snprintf(buf, sizeof(buf),
				 "{\"format\":\"saturn-sched-state/1\",\"tasks\":[{\"id\":\"1\",\"batch\":\"b\",\"start\":1,\"end\":2%s}]}",
				 uids[k]);
			st = saturn_sched_state_parse(buf, strlen(buf), &err);
			if (want[k] == -2) {
				ck_assert_msg(st == NULL, "%s accepted", uids[k]);
				ck_assert_msg(strstr(err.text, "tasks[0].uid"), "%s", err.text);
				continue;
			}
			ck_assert_msg(st != NULL, "%s: %s", uids[k], err.text);
			ck_assert_int_eq(st->tasks[0].uid, want[k]);
			saturn_sched_state_destroy(st);
		}
	}
	free(txt);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

static const struct progress_case {
	const char *text;
	int rc;
	double left;
	const char *expect;
} progress_cases[] = {
	{"{\"format\":\"saturn-progress/1\",\"job_id\":3,\"batches_done\":30,\"batches_total\":100,\"sec_per_batch\":0.5,\"updated\":1}", 0, 70, NULL},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":300,\"batches_total\":100}", 0, 0, NULL},
	{"{\"format\":\"saturn-progress/2\",\"batches_done\":1,\"batches_total\":2}", -1, 0, "format"},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":-1,\"batches_total\":2}", -1, 0, "batches_done"},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":1}", -1, 0, "batches_total"},
	{"not json", -1, 0, "1.json"},
	/* the model's limits (model.h), the file named */
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":1,\"batches_total\":1e300}", -1, 0,
	 "1.json: batches_total: 1e+300 is beyond the limit of 1000000000000"},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":1e13,\"batches_total\":2}", -1, 0,
	 "batches_done: 1e+13 is beyond the limit"},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":1,\"batches_total\":NaN}", -1, 0,
	 "batches_total: must be a finite number"},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":1,\"batches_total\":-Infinity}", -1, 0,
	 "batches_total: must be a finite number"},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":1,\"batches_total\":2,\"sec_per_batch\":1e13}", -1, 0,
	 "sec_per_batch: 1e+13 is beyond the limit"},
	{"{\"format\":\"saturn-progress/1\",\"batches_done\":0,\"batches_total\":1e12}", 0, 1e12, NULL},
};

START_TEST(test_progress)
{
	const struct progress_case *c = &progress_cases[_i];
	char dir[] = "/tmp/saturn-test-XXXXXX", path[128], link[128];
	saturn_error_t err = {{0}};
	double left = -1;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/1.json", dir);
	snprintf(link, sizeof(link), "%s/2.json", dir);
	f = fopen(path, "w");
	fputs(c->text, f);
	fclose(f);
	ck_assert_int_eq(saturn_progress_remaining(path, (long)getuid(), &left, &err), c->rc);
	if (!c->rc)
		ck_assert_double_eq(left, c->left);
	else
		ck_assert_msg(strstr(err.text, c->expect), "%s", err.text);
	/* symlinks and foreign owners are refused */
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_int_eq(saturn_progress_remaining(link, -1, &left, &err), -1);
	ck_assert_int_eq(saturn_progress_remaining(path, (long)getuid() + 1, &left, &err), -1);
	ck_assert_msg(strstr(err.text, "owned by"), "%s", err.text);
	unlink(link);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A batch is (uid, name): grouping keeps two users' batches of one name
 * apart, lists every input once, in input order within a group. */
static const struct group_case {
	const char *what;
	int n;
	long uid[8];
	const char *name[8];
	int ngroups;
} group_cases[] = {
	{"none", 0, {0}, {NULL}, 0},
	{"one", 1, {5}, {"sweep"}, 1},
	{"same name, two users", 4, {1001, 1002, 1001, 1002}, {"sweep", "sweep", "sweep", "sweep"}, 2},
	{"interleaved", 7, {1002, 1001, 1001, 1002, 0, 1001, 1002},
	 {"sweep", "sweep", "other", "sweep", "sweep", "sweep", "other"}, 5},
	{"name prefix", 3, {1, 1, 1}, {"a", "ab", "a"}, 2},
};

START_TEST(test_batch_groups)
{
	const struct group_case *c = &group_cases[_i];
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_batch_groups_t g;
	int seen[8] = {0}, jobs[8];

	for (int i = 0; i < c->n; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);

		j->uid = c->uid[i];
		snprintf(j->batch, sizeof(j->batch), "%s", c->name[i]);
	}
	for (int pass = 0; pass < 2; pass++) {
		/* pass 1: through a job index array, reversed */
		for (int i = 0; i < c->n; i++)
			jobs[i] = c->n - 1 - i;
		ck_assert_int_eq(saturn_batch_groups(s, pass ? jobs : NULL, c->n, &g), 0);
		ck_assert_msg(g.ngroups == c->ngroups, "%s: %d groups", c->what, g.ngroups);
		ck_assert_int_eq(g.first[0], 0);
		ck_assert_int_eq(g.first[g.ngroups], c->n);
		memset(seen, 0, sizeof(seen));
		for (int b = 0; b < g.ngroups; b++) {
			int m0 = g.member[g.first[b]];
			const saturn_snap_job_t *j0 = &s->jobs[pass ? jobs[m0] : m0];

			ck_assert_int_lt(g.first[b], g.first[b + 1]);
			for (int k = g.first[b]; k < g.first[b + 1]; k++) {
				int m = g.member[k];
				const saturn_snap_job_t *j = &s->jobs[pass ? jobs[m] : m];

				ck_assert_msg(saturn_snap_same_batch(j, j0), "%s: group %d mixes batches",
					      c->what, b);
				if (k > g.first[b])
					ck_assert_int_lt(g.member[k - 1], m);
				seen[m]++;
			}
			/* no other group holds the same batch */
			for (int o = b + 1; o < g.ngroups; o++) {
				int mo = g.member[g.first[o]];

				ck_assert(!saturn_snap_same_batch(&s->jobs[pass ? jobs[mo] : mo], j0));
			}
		}
		for (int i = 0; i < c->n; i++)
			ck_assert_int_eq(seen[i], 1);
		saturn_batch_groups_free(&g);
		saturn_batch_groups_free(&g); /* emptied: safe twice */
	}
	saturn_snapshot_destroy(s);
}
END_TEST

/* The lookup is asked per (batch, uid): a profile that only user 1001 has
 * for "sweep" plans 1001's tasks, never 1002's, even when the two users'
 * tasks are adjacent in submission order. */
static int lookups;
static const saturn_profile_t *lookup_uid_1001(const char *batch, long uid, void *arg)
{
	lookups++;
	return (!strcmp(batch, "sweep") && uid == 1001) ? arg : NULL;
}

START_TEST(test_profile_per_user)
{
	saturn_snapshot_t *s = cluster(6, 1);
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_sched_build_t b;
	saturn_sched_state_t *st;
	saturn_plan_t *plan;
	char *txt;

	ck_assert_msg(pr != NULL, "%s", err.text);
	for (int i = 0; i < s->njobs; i++) {
		/* one array each; same name, same submit time, alternating */
		s->jobs[i].uid = i % 2 ? 1002 : 1001;
		s->jobs[i].job_id = s->jobs[i].array_job_id = i % 2 ? 8 : 7;
	}
	lookups = 0;
	ck_assert_int_eq(saturn_sched_build(s, lookup_uid_1001, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 6);
	ck_assert_int_ge(lookups, 2);
	for (int t = 0; t < b.problem->ntasks; t++) {
		const saturn_snap_job_t *j = &s->jobs[b.job_of_task[t]];
		const saturn_task_t *task = &b.problem->tasks[t];

		if (j->uid == 1001) {
			ck_assert_int_gt(task->noptions, 1);
			ck_assert_str_ne(task->options[0].technique, "user");
		} else {
			/* the user's own request: 1 GPU, not the other user's options */
			ck_assert_int_eq(task->noptions, 1);
			ck_assert_str_eq(task->options[0].technique, "user");
			ck_assert_int_eq(task->options[0].gpus, 1);
		}
	}
	/* the persisted state says whose each task is */
	plan = saturn_sched_fcfs(b.problem);
	txt = saturn_sched_state_to_json(s, &b, plan, "p1", s->now);
	st = saturn_sched_state_parse(txt, strlen(txt), &err);
	ck_assert_msg(st != NULL, "%s", err.text);
	for (int i = 0; i < st->ntasks; i++)
		ck_assert_int_eq(st->tasks[i].uid, !strncmp(st->tasks[i].id, "8_", 2) ? 1002 : 1001);
	saturn_sched_state_destroy(st);
	free(txt);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* 1,000 held tasks build and plan quickly (the plugin does this outside
 * the locks every cycle). */
START_TEST(test_many)
{
	saturn_snapshot_t *s = cluster(1000, 2);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	ck_assert_double_eq_tol(plan->makespan_s, 1000 / 8 * 60, 1e-6);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	/* the same in two partitions, one node each, odd tasks in the second */
	s->nodes[0].part_mask = 1;
	s->nodes[1].part_mask = 2;
	for (int i = 0; i < s->njobs; i++)
		s->jobs[i].part_mask = i % 2 ? 2 : 1;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	ck_assert_double_eq_tol(plan->makespan_s, 1000 / 8 * 60, 1e-6);
	for (int i = 0; i < plan->nassign; i++)
		ck_assert_int_eq(plan->assign[i].node, b.job_of_task[i] % 2);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- fault isolation: one user's bad numbers cost that user's task ---- */

/* Two users on two 8-GPU nodes: "good" (uid 1001: four held tasks with a
 * sane profile) and "bad" (uid 1002). */
static const char good_profile[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"good\", \"tasks\": ["
	" {\"signature\": \"g\", \"task_ids\": \"0-3\", \"batches\": 100, \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.5, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.3, \"status\": \"measured\"} ] } ] }";
/* beyond the model's limits: 1e10 batches x 1e10 s = 1e20 s */
static const char huge_profile[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"bad\", \"tasks\": ["
	" {\"signature\": \"b\", \"task_ids\": \"0-3\", \"batches\": 1e10, \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1e10, \"status\": \"measured\"} ] } ] }";

struct two_users {
	const saturn_profile_t *good, *bad;
};

static const saturn_profile_t *lookup_two(const char *batch, long uid, void *arg)
{
	const struct two_users *u = arg;

	if (!strcmp(batch, "good") && uid == 1001)
		return u->good;
	if (!strcmp(batch, "bad") && uid == 1002)
		return u->bad;
	return NULL;
}

static saturn_snap_job_t *user_job(saturn_snapshot_t *s, uint32_t id, int task, const char *batch,
				   long uid)
{
	saturn_snap_job_t *j = saturn_snapshot_add_job(s);

	ck_assert_ptr_nonnull(j);
	j->job_id = j->array_job_id = id;
	j->task_id = task;
	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->uid = uid;
	j->req_gpus = 2;
	j->time_limit_s = 3600;
	j->submit_time = 900;
	return j;
}

static saturn_snapshot_t *two_users_cluster(void)
{
	saturn_snapshot_t *s = saturn_snapshot_create();

	ck_assert_ptr_nonnull(s);
	s->now = 1000;
	for (int k = 0; k < 2; k++) {
		saturn_snap_node_t *node = saturn_snapshot_add_node(s);

		snprintf(node->name, sizeof(node->name), "n%d", k + 1);
		node->gpus = 8;
	}
	for (int i = 0; i < 4; i++)
		user_job(s, 10, i, "good", 1001);
	return s;
}

/* Every "good" task is in the problem, planned, and decided on. */
static void assert_good_planned(const saturn_snapshot_t *s, const saturn_sched_build_t *b)
{
	saturn_error_t err = {{0}};
	saturn_planner_opts_t opts;
	saturn_plan_t *plan;
	saturn_decision_t *d;
	int found = 0, nd, ngood = 0;

	for (int t = 0; t < b->problem->ntasks; t++)
		found += !strcmp(s->jobs[b->job_of_task[t]].batch, "good");
	ck_assert_int_eq(found, 4);
	for (int k = 0; k < b->nskipped; k++)
		ck_assert_str_ne(s->jobs[b->skipped[k]].batch, "good");
	saturn_planner_opts_init(&opts);
	opts.time_limit_s = 0.2;
	plan = saturn_planner_solve(b->problem, &opts, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_plan_validate(plan, b->problem, &err), 0);
	ck_assert_double_le(plan->lower_bound_s, plan->makespan_s * (1 + 1e-9));
	nd = saturn_sched_decide(s, b, plan, 2, &d);
	ck_assert_int_ge(nd, 4);
	for (int i = 0; i < nd; i++)
		ngood += !strcmp(s->jobs[d[i].job].batch, "good");
	ck_assert_int_eq(ngood, 4);
	free(d);
	saturn_plan_destroy(plan);
}

/* (a) a profile whose batches x sec_per_batch is beyond the model's
 * limits: refused by the loader with the field and the file named; handed
 * over anyway (a lookup may return any profile), it costs the bad user's
 * held task only, skipped with the reason. */
START_TEST(test_isolate_huge_profile)
{
	char dir[] = "/tmp/saturn-test-XXXXXX", path[128];
	saturn_error_t err = {{0}};
	saturn_profile_t *good = saturn_profile_parse(good_profile, strlen(good_profile), &err);
	saturn_profile_t *bad;
	struct two_users u;
	saturn_snapshot_t *s = two_users_cluster();
	saturn_sched_build_t b;
	FILE *f;

	ck_assert_msg(good != NULL, "%s", err.text);
	ck_assert_ptr_null(saturn_profile_parse(huge_profile, strlen(huge_profile), &err));
	ck_assert_msg(strstr(err.text, "tasks[0] (b).options[0]: batches x sec_per_batch") &&
		      strstr(err.text, "beyond the limit"), "%s", err.text);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(huge_profile, f);
	fclose(f);
	ck_assert_ptr_null(saturn_profile_load(path, -1, &err));
	ck_assert_msg(strstr(err.text, path) && strstr(err.text, "batches x sec_per_batch"), "%s",
		      err.text);
	unlink(path);
	rmdir(dir);

	/* the same numbers in a profile built in memory */
	bad = saturn_profile_parse(good_profile, strlen(good_profile), &err);
	ck_assert_ptr_nonnull(bad);
	bad->tasks[0].batches = 1e10;
	for (int o = 0; o < bad->tasks[0].noptions; o++)
		bad->tasks[0].options[o].sec_per_batch = 1e10;
	u.good = good;
	u.bad = bad;
	user_job(s, 20, 0, "bad", 1002);
	ck_assert_int_eq(saturn_sched_build(s, lookup_two, &u, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 4);
	ck_assert_int_eq(b.nskipped, 1);
	ck_assert_str_eq(s->jobs[b.skipped[0]].batch, "bad");
	ck_assert_msg(strstr(b.skip_reason[0], "saturn: profile: ddp/2 GPUs: batches x sec_per_batch = 1e+20 s"),
		      "%s", b.skip_reason[0]);
	assert_good_planned(s, &b);
	saturn_sched_build_free(&b);

	/* NaN and negative numbers the same way */
	bad->tasks[0].batches = 10;
	bad->tasks[0].options[0].sec_per_batch = NAN;
	bad->tasks[0].options[1].sec_per_batch = -1;
	ck_assert_int_eq(saturn_sched_build(s, lookup_two, &u, &b, &err), 0);
	ck_assert_int_eq(b.nskipped, 1);
	ck_assert_msg(strstr(b.skip_reason[0], "sec_per_batch nan not a number > 0"), "%s",
		      b.skip_reason[0]);
	assert_good_planned(s, &b);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(bad);
	saturn_profile_destroy(good);
	saturn_snapshot_destroy(s);
}
END_TEST

/* (b) a progress file with batches_total 1e300 for a task that runs longer
 * than its profile says: refused by the reader (field and file named); the
 * number handed over anyway is clamped to what the task's time limit
 * leaves, the task stays pinned on its GPUs, and the other user's tasks
 * are planned. */
START_TEST(test_isolate_huge_progress)
{
	char dir[] = "/tmp/saturn-test-XXXXXX", path[128];
	saturn_error_t err = {{0}};
	saturn_profile_t *good = saturn_profile_parse(good_profile, strlen(good_profile), &err);
	saturn_profile_t *bad = saturn_profile_parse(good_profile, strlen(good_profile), &err);
	struct two_users u = {good, bad};
	saturn_snapshot_t *s = two_users_cluster();
	saturn_snap_job_t *j;
	saturn_sched_build_t b;
	double left = -1;
	int t = -1;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/21.json", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs("{\"format\":\"saturn-progress/1\",\"job_id\":21,\"batches_done\":5,\"batches_total\":1e300}", f);
	fclose(f);
	ck_assert_int_eq(saturn_progress_remaining(path, -1, &left, &err), -1);
	ck_assert_msg(strstr(err.text, path) && strstr(err.text, "batches_total: 1e+300 is beyond the limit"),
		      "%s", err.text);
	unlink(path);
	rmdir(dir);

	/* running 2 h (its profile says 100 x 0.5 s = 50 s), time limit 3 h */
	j = user_job(s, 21, -1, "bad", 1002);
	j->array_job_id = 0;
	j->state = SATURN_SNAP_RUNNING;
	j->node = 1;
	j->gpu_mask = 0x3;
	j->gpus = 2;
	snprintf(j->technique, sizeof(j->technique), "ddp");
	j->start_time = s->now - 7200;
	j->time_limit_s = 3 * 3600;
	j->batches_left = 1e300;
	ck_assert_int_eq(saturn_sched_build(s, lookup_two, &u, &b, &err), 0);
	ck_assert_int_eq(b.nskipped, 0);
	ck_assert_int_eq(b.problem->ntasks, 5);
	for (int k = 0; k < b.problem->ntasks; k++)
		if (b.job_of_task[k] == 4)
			t = k;
	ck_assert_int_ge(t, 0);
	ck_assert(b.problem->tasks[t].is_running);
	ck_assert_double_eq_tol(saturn_task_runtime(&b.problem->tasks[t], 0), 3600, 1e-6);
	assert_good_planned(s, &b);
	saturn_sched_build_free(&b);

	/* no time limit: the model's limit; past its limit: 1 s; NaN: the cap */
	j->time_limit_s = 0;
	ck_assert_int_eq(saturn_sched_build(s, lookup_two, &u, &b, &err), 0);
	ck_assert_double_eq_tol(saturn_task_runtime(&b.problem->tasks[t], 0), SATURN_MAX_RUNTIME_S, 1);
	assert_good_planned(s, &b);
	saturn_sched_build_free(&b);
	j->time_limit_s = 3600;
	ck_assert_int_eq(saturn_sched_build(s, lookup_two, &u, &b, &err), 0);
	ck_assert_double_eq_tol(saturn_task_runtime(&b.problem->tasks[t], 0), 1, 1e-9);
	saturn_sched_build_free(&b);
	j->batches_left = NAN;
	j->time_limit_s = 0;
	ck_assert_int_eq(saturn_sched_build(s, lookup_two, &u, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 5);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(bad);
	saturn_profile_destroy(good);
	saturn_snapshot_destroy(s);
}
END_TEST

/* What the checks while building cannot see (here: a snapshot listing one
 * job twice, two running tasks on one GPU) costs the offending task, with
 * a reason, never the problem. */
START_TEST(test_isolate_check_fallback)
{
	saturn_snapshot_t *s = two_users_cluster();
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_snap_job_t *j;

	user_job(s, 10, 3, "good", 1001); /* task 10_3 once more */
	for (int k = 0; k < 2; k++) {
		j = user_job(s, 30 + k, -1, "bad", 1002);
		j->array_job_id = 0;
		j->state = SATURN_SNAP_RUNNING;
		j->node = 0;
		j->gpu_mask = k ? 0x6 : 0x3; /* GPU 1 twice */
		j->gpus = 2;
		j->start_time = 990;
	}
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 5);
	ck_assert_int_eq(b.nskipped, 2);
	for (int k = 0; k < b.nskipped; k++) {
		if (b.skipped[k] == 4)
			ck_assert_msg(strstr(b.skip_reason[k], "left out of the plan: duplicate task id"), "%s",
				      b.skip_reason[k]);
		else
			ck_assert_msg(b.skipped[k] == 6 &&
				      strstr(b.skip_reason[k], "running on GPUs another running task holds"),
				      "%d: %s", b.skipped[k], b.skip_reason[k]);
	}
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- name limits ------------------------------------------------------- */

static int nlookups;
static char looked_up[4][SATURN_BATCH_NAME_MAX + 1];

static const saturn_profile_t *lookup_record(const char *batch, long uid, void *arg)
{
	(void)uid;
	if (nlookups < 4)
		snprintf(looked_up[nlookups++], sizeof(looked_up[0]), "%s", batch);
	return !strcmp(batch, "t") ? arg : NULL;
}

/* A batch name of SATURN_BATCH_NAME_MAX characters stays whole from the
 * snapshot through the build to the persisted state, distinct from its
 * prefix one shorter (they were one batch when the buffers held 63). */
START_TEST(test_limits_batch_name)
{
	saturn_snapshot_t *s = saturn_snapshot_create();
	char full[SATURN_BATCH_NAME_MAX + 1], prefix[SATURN_BATCH_NAME_MAX + 1];
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st;
	saturn_plan_t *plan;
	saturn_snap_node_t *node;
	char *txt;

	for (int i = 0; i < SATURN_BATCH_NAME_MAX; i++)
		full[i] = "abcdefghij"[i % 10];
	full[SATURN_BATCH_NAME_MAX] = '\0';
	snprintf(prefix, sizeof(prefix), "%.*s", SATURN_BATCH_NAME_MAX - 1, full);
	s->now = 1000;
	node = saturn_snapshot_add_node(s);
	for (int i = 0; i < SATURN_NODE_NAME_MAX; i++)
		node->name[i] = 'n';
	node->gpus = 8;
	ck_assert_int_eq(strlen(node->name), SATURN_NODE_NAME_MAX);
	user_job(s, 40, -1, full, 1001)->array_job_id = 0;
	user_job(s, 41, -1, prefix, 1001)->array_job_id = 0;
	ck_assert_int_eq(strlen(s->jobs[0].batch), SATURN_BATCH_NAME_MAX);
	nlookups = 0;
	ck_assert_int_eq(saturn_sched_build(s, lookup_record, NULL, &b, &err), 0);
	ck_assert_int_eq(nlookups, 2); /* two batches, not one */
	ck_assert_str_eq(looked_up[0], full);
	ck_assert_str_eq(looked_up[1], prefix);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	txt = saturn_sched_state_to_json(s, &b, plan, "p1", s->now);
	ck_assert_ptr_nonnull(txt);
	st = saturn_sched_state_parse(txt, strlen(txt), &err);
	ck_assert_msg(st != NULL, "%s", err.text);
	ck_assert_int_eq(st->ntasks, 2);
	ck_assert_str_eq(st->tasks[0].batch, full);
	ck_assert_str_eq(st->tasks[1].batch, prefix);
	ck_assert_str_eq(st->tasks[0].node, s->nodes[0].name);
	saturn_sched_state_destroy(st);
	free(txt);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Which pending tasks go back into the admin hold (saturn_sched_rehold_cause). */
static const struct rehold_case {
	saturn_snap_state_t state;
	const char *pinned, *pinned_state;
	int node, planned, requeued, exit_held;
	double begin; /* relative to now; 0 = none */
	saturn_rehold_cause_t cause;
	const char *reason; /* substring, or NULL */
} rehold_cases[] = {
	/* released onto a node that went down: re-hold */
	{SATURN_SNAP_RELEASED, "n1", "down", -1, 1, 0, 0, 0, SATURN_REHOLD_NODE,
	 "saturn: re-planning (node n1 down)"},
	{SATURN_SNAP_RELEASED, "n9", "gone", -1, 1, 0, 0, 0, SATURN_REHOLD_NODE, "node n9 gone"},
	{SATURN_SNAP_RELEASED, "n3", "", -1, 1, 0, 0, 0, SATURN_REHOLD_NODE, "node n3 not usable"},
	/* released onto a usable node, not started yet: left to Slurm */
	{SATURN_SNAP_RELEASED, "n2", "", 1, 1, 0, 0, 0, SATURN_REHOLD_NONE, NULL},
	{SATURN_SNAP_RELEASED, "", "", -1, 1, 0, 0, 0, SATURN_REHOLD_NONE, NULL},
	/* requeued after running: pinned, begin time in the future */
	{SATURN_SNAP_RELEASED, "n2", "", 1, 1, 1, 0, 121, SATURN_REHOLD_REQUEUED,
	 "requeued after running on n2"},
	/* ... but released again by a plan after its re-hold: no begin time */
	{SATURN_SNAP_RELEASED, "n2", "", 1, 1, 1, 0, 0, SATURN_REHOLD_NONE, NULL},
	{SATURN_SNAP_RELEASED, "n2", "", 1, 1, 1, 0, -30, SATURN_REHOLD_NONE, NULL},
	/* requeued, its node down meanwhile: the requeue is said first */
	{SATURN_SNAP_RELEASED, "n1", "down", -1, 1, 1, 0, 121, SATURN_REHOLD_REQUEUED, "requeued"},
	/* held by RequeueExitHold */
	{SATURN_SNAP_RELEASED, "n2", "", 1, 1, 1, 1, 121, SATURN_REHOLD_REQUEUED, "held by its exit code"},
	/* pending, priority > 0, never released by a plan */
	{SATURN_SNAP_RELEASED, "", "", -1, 0, 0, 0, 0, SATURN_REHOLD_UNPLANNED, "outside the plan"},
	{SATURN_SNAP_RELEASED, "n2", "", 1, 0, 0, 0, 0, SATURN_REHOLD_UNPLANNED, "outside the plan"},
	/* held and running tasks are never re-held */
	{SATURN_SNAP_HELD, "", "", -1, 0, 1, 0, 121, SATURN_REHOLD_NONE, NULL},
	{SATURN_SNAP_RUNNING, "n1", "down", -1, 0, 1, 1, 121, SATURN_REHOLD_NONE, NULL},
};

START_TEST(test_rehold_cause)
{
	const struct rehold_case *c = &rehold_cases[_i];
	saturn_snapshot_t *s = cluster(1, 4);
	saturn_snap_job_t *j = &s->jobs[0];
	saturn_rehold_t *r;
	char buf[160];
	int n;

	j->state = c->state;
	snprintf(j->pinned, sizeof(j->pinned), "%s", c->pinned);
	snprintf(j->pinned_state, sizeof(j->pinned_state), "%s", c->pinned_state);
	j->node = c->node;
	j->planned = c->planned;
	j->requeued = c->requeued;
	j->exit_held = c->exit_held;
	j->begin_time = c->begin ? s->now + c->begin : 0;
	ck_assert_int_eq(saturn_sched_rehold_cause(s, j, buf, sizeof(buf)), c->cause);
	if (c->reason)
		ck_assert_msg(strstr(buf, c->reason), "reason '%s' lacks '%s'", buf, c->reason);
	else
		ck_assert_str_eq(buf, "");
	n = saturn_sched_decide_rehold(s, &r);
	ck_assert_int_eq(n, c->cause != SATURN_REHOLD_NONE);
	if (n) {
		ck_assert_int_eq(r[0].job, 0);
		ck_assert_int_eq(r[0].cause, c->cause);
		ck_assert_str_eq(r[0].reason, buf);
	} else {
		ck_assert_ptr_null(r);
	}
	free(r);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A technique name of SATURN_TECHNIQUE_NAME_MAX characters: accepted in a
 * profile (one more is refused), planned, decided on and matched back
 * when the task runs with it. */
START_TEST(test_limits_technique_name)
{
	char tech[SATURN_TECHNIQUE_NAME_MAX + 2], doc[1024];
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_profile_t *pr;
	saturn_plan_t *plan;
	saturn_decision_t *d;
	saturn_snap_node_t *node;
	saturn_snap_job_t *j;
	int nd;

	memset(tech, 'x', sizeof(tech));
	tech[SATURN_TECHNIQUE_NAME_MAX + 1] = '\0';
#define TDOC "{\"format\": \"saturn-profile/1\", \"batch\": \"t\", \"tasks\": [{\"signature\": \"s\"," \
	" \"task_ids\": [0, 1], \"batches\": 10, \"options\": [{\"technique\": \"%s\", \"gpus\": 2," \
	" \"sec_per_batch\": 1, \"status\": \"measured\"}]}]}"
	snprintf(doc, sizeof(doc), TDOC, tech);
	ck_assert_ptr_null(saturn_profile_parse(doc, strlen(doc), &err));
	ck_assert_msg(strstr(err.text, "technique"), "%s", err.text);
	tech[SATURN_TECHNIQUE_NAME_MAX] = '\0';
	snprintf(doc, sizeof(doc), TDOC, tech);
	pr = saturn_profile_parse(doc, strlen(doc), &err);
	ck_assert_msg(pr != NULL, "%s", err.text);
	s->now = 1000;
	node = saturn_snapshot_add_node(s);
	snprintf(node->name, sizeof(node->name), "n1");
	node->gpus = 8;
	user_job(s, 50, 0, "t", 1001);
	j = user_job(s, 50, 1, "t", 1001);
	j->state = SATURN_SNAP_RUNNING;
	j->node = 0;
	j->gpu_mask = 0x3;
	j->gpus = 2;
	j->start_time = 995;
	snprintf(j->technique, sizeof(j->technique), "%s", tech);
	ck_assert_str_eq(j->technique, tech);
	ck_assert_int_eq(saturn_sched_build(s, lookup_record, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 2);
	/* running: matched to the profile's option (5 s of 10 left) */
	ck_assert(b.problem->tasks[0].is_running);
	ck_assert_str_eq(b.problem->tasks[0].options[0].technique, tech);
	ck_assert_double_eq_tol(saturn_task_runtime(&b.problem->tasks[0], 0), 5, 1e-9);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	nd = saturn_sched_decide(s, &b, plan, 2, &d);
	ck_assert_int_eq(nd, 1);
	ck_assert_str_eq(d[0].technique, tech);
	free(d);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* n1 is down: a task released onto it and one requeued off it are re-held
 * and planned again like held tasks on n2; the requeued one not before
 * Slurm's credential delay is over, and not released before that. */
START_TEST(test_rehold_replan)
{
	saturn_snapshot_t *s = cluster(3, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_rehold_t *r;
	saturn_decision_t *d;
	saturn_plan_t *plan;
	int n, nd;

	/* only n2 is usable */
	snprintf(s->nodes[0].name, sizeof(s->nodes[0].name), "n2");
	s->nnodes = 1;
	s->jobs[1].state = SATURN_SNAP_RELEASED;
	snprintf(s->jobs[1].pinned, sizeof(s->jobs[1].pinned), "n1");
	snprintf(s->jobs[1].pinned_state, sizeof(s->jobs[1].pinned_state), "down");
	s->jobs[1].planned = 1;
	s->jobs[1].gpus = 4;
	snprintf(s->jobs[1].technique, sizeof(s->jobs[1].technique), "user");
	s->jobs[2] = s->jobs[1];
	s->jobs[2].task_id = 2;
	s->jobs[2].requeued = 1;
	s->jobs[2].begin_time = s->now + 121;

	n = saturn_sched_decide_rehold(s, &r);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(r[0].job, 1);
	ck_assert_int_eq(r[0].cause, SATURN_REHOLD_NODE);
	ck_assert_int_eq(r[1].job, 2);
	ck_assert_int_eq(r[1].cause, SATURN_REHOLD_REQUEUED);
	for (int i = 0; i < n; i++)
		saturn_snapshot_mark_held(s, &s->jobs[r[i].job]);
	free(r);
	ck_assert_int_eq(s->jobs[1].state, SATURN_SNAP_HELD);
	ck_assert_str_eq(s->jobs[1].pinned, "");
	ck_assert_double_eq(s->jobs[1].not_before, 0);
	ck_assert_double_eq(s->jobs[2].not_before, s->now + 121);
	ck_assert_double_eq(s->jobs[2].begin_time, 0);
	/* nothing left to re-hold */
	ck_assert_int_eq(saturn_sched_decide_rehold(s, &r), 0);

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 3);
	for (int t = 0; t < 3; t++)
		ck_assert_double_eq(b.problem->tasks[t].release_s, b.job_of_task[t] == 2 ? 121 : 0);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	nd = saturn_sched_decide(s, &b, plan, 2, &d);
	ck_assert_int_eq(nd, 3);
	for (int i = 0; i < nd; i++) {
		ck_assert_str_eq(d[i].node, "n2");
		ck_assert_int_eq(d[i].release, d[i].job != 2);
		if (d[i].job == 2) {
			ck_assert_double_ge(d[i].start_s, 121);
			ck_assert_msg(strstr(d[i].reason, "starts in ~2m on n2"), "%s", d[i].reason);
		}
	}
	free(d);
	saturn_plan_destroy(plan);

	/* the two others are done: only the requeued one is left; 119 s
	 * later (its start within the slack) it is still not released
	 * before the delay is over, at 121 s it is */
	s->jobs[0] = s->jobs[2];
	s->njobs = 1;
	for (int k = 0; k < 2; k++) {
		s->now += k ? 2 : 119;
		saturn_sched_build_free(&b);
		ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
		ck_assert_double_eq(b.problem->tasks[0].release_s, k ? 0 : 2);
		plan = saturn_sched_fcfs(b.problem);
		ck_assert_ptr_nonnull(plan);
		nd = saturn_sched_decide(s, &b, plan, 5, &d);
		ck_assert_int_eq(nd, 1);
		ck_assert_int_eq(d[0].release, k);
		free(d);
		saturn_plan_destroy(plan);
	}
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Release slack: a held task planned to start within slack_s of now is
 * released, the boundary included (FCFS of cluster(6, 4): four tasks at
 * 0 s, two at 60 s). */
static const struct slack_case {
	double slack;
	int released;
} slack_cases[] = {
	{-1, 0}, {0, 4}, {59.5, 4}, {60, 6}, {61, 6},
};

START_TEST(test_decide_slack)
{
	const struct slack_case *c = &slack_cases[_i];
	saturn_snapshot_t *s = cluster(6, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_decision_t *d;
	int nd, released = 0;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	nd = saturn_sched_decide(s, &b, plan, c->slack, &d);
	ck_assert_int_eq(nd, 6);
	for (int i = 0; i < nd; i++) {
		const saturn_assign_t *a = &plan->assign[i];

		ck_assert_int_eq(d[i].job, b.job_of_task[i]);
		ck_assert_double_eq(d[i].start_s, a->start_s);
		ck_assert_int_eq(d[i].release, a->start_s <= c->slack);
		ck_assert_str_eq(d[i].node, a->node_name);
		ck_assert_int_eq(d[i].gpus, 4);
		ck_assert_str_eq(d[i].technique, "user");
		if (d[i].release)
			ck_assert_str_eq(d[i].reason, "");
		else
			ck_assert_msg(!strncmp(d[i].reason, "saturn: starts in", 17), "%s", d[i].reason);
		released += d[i].release;
	}
	ck_assert_int_eq(released, c->released);
	free(d);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Releases go to Slurm by planned start (ties in decision order): a task
 * released ahead of its room before a sibling of the same array whose
 * room is free would hold that sibling back in Slurm's passes. */
START_TEST(test_release_order)
{
	saturn_decision_t d[5] = {0};
	const double start[5] = {4.0, 0.0, 2.5, 0.0, -1.0};
	const int want[5] = {4, 1, 3, 2, 0};
	int order[5];

	for (int i = 0; i < 5; i++) {
		d[i].start_s = start[i];
		d[i].release = 1;
	}
	saturn_sched_release_order(d, 5, order);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(order[i], want[i]);
	saturn_sched_release_order(d, 0, order); /* nothing to order */
}
END_TEST

/* Only held tasks get a decision: released and running ones are in the
 * plan (they hold GPUs) but are never released again nor given a reason.
 * state[k]: H(eld), R(eleased) or U (running) for job k of cluster(4, 4). */
static const struct held_case {
	const char *state;
	int decisions;
} held_cases[] = {
	{"HHHH", 4}, {"RHHH", 3}, {"UHHH", 3}, {"HURH", 2}, {"RRRR", 0}, {"UUUU", 0}, {"URUR", 0},
};

START_TEST(test_decide_held_only)
{
	const struct held_case *c = &held_cases[_i];
	saturn_snapshot_t *s = cluster(4, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_decision_t *d = NULL;
	int nd, seen[4] = {0}, ngpu[2] = {0};

	for (int k = 0; k < 4; k++) {
		saturn_snap_job_t *j = &s->jobs[k];

		if (c->state[k] == 'H')
			continue;
		j->state = c->state[k] == 'R' ? SATURN_SNAP_RELEASED : SATURN_SNAP_RUNNING;
		j->gpus = 4;
		snprintf(j->technique, SATURN_TECH_LEN, "user");
		if (c->state[k] == 'U') {
			/* two running per node at most: 4 GPUs each */
			j->node = k % 2;
			j->gpu_mask = 0xfULL << ngpu[k % 2];
			ngpu[k % 2] += 4;
			j->start_time = 990;
		}
	}
	ck_assert_msg(saturn_sched_build(s, NULL, NULL, &b, &err) == 0, "%s", err.text);
	ck_assert_int_eq(b.problem->ntasks, 4);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	ck_assert_int_eq(plan->nassign, 4);
	/* a slack that would release every task of the plan */
	nd = saturn_sched_decide(s, &b, plan, 1e9, &d);
	ck_assert_msg(nd == c->decisions, "%s: %d decisions", c->state, nd);
	ck_assert(nd > 0 || d == NULL);
	for (int i = 0; i < nd; i++) {
		ck_assert_int_ge(d[i].job, 0);
		ck_assert_int_lt(d[i].job, 4);
		ck_assert_msg(c->state[d[i].job] == 'H', "%s: job %d (%c) got a decision", c->state,
			      d[i].job, c->state[d[i].job]);
		ck_assert_int_eq(d[i].release, 1);
		seen[d[i].job]++;
	}
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(seen[k], c->state[k] == 'H');
	free(d);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Keep the old plan unless the new one is better by more than min_gain;
 * exactly min_gain better keeps it (factors exact in binary). */
static const struct switch_case {
	double new_mk, old_left, min_gain;
	int expect;
} switch_cases[] = {
	{75, 100, 0.25, 0},   /* exactly 25 % better: keep */
	{74.9, 100, 0.25, 1}, /* more than 25 %: switch */
	{75.1, 100, 0.25, 0},
	{100, 100, 0, 0},     /* no gain asked, none given: keep */
	{99.5, 100, 0, 1},
	{101, 100, 0, 0},     /* worse: keep */
	{50, 100, 0.5, 0},
	{49, 100, 0.5, 1},
	{1000, 0, 0.05, 1},   /* the old plan has no time left */
	{1000, -5, 0.05, 1},
	{0, 0.5, 0.5, 1},
};

START_TEST(test_switch_boundary)
{
	const struct switch_case *c = &switch_cases[_i];

	ck_assert_msg(saturn_sched_should_switch(c->new_mk, c->old_left, c->min_gain) == c->expect,
		      "new %g, old %g, min_gain %g: want %d", c->new_mk, c->old_left, c->min_gain,
		      c->expect);
}
END_TEST

/* Plans of every shape reach decide: none, empty, assignments in another
 * order than the tasks (decisions follow each assignment's task index),
 * and a stale plan whose task indices are beyond this problem (skipped:
 * they name no snapshot job). */
static const struct shape_case {
	const char *what;
	int decisions;
} shape_cases[] = {
	{"no plan", 0}, {"empty plan", 0}, {"reversed", 6}, {"stale index", 5},
};

START_TEST(test_decide_plan_shapes)
{
	const struct shape_case *c = &shape_cases[_i];
	saturn_snapshot_t *s = cluster(6, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = NULL;
	static saturn_decision_t dummy;
	saturn_decision_t *d = &dummy; /* decide sets it to NULL when none */
	int nd, n;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	n = b.problem->ntasks;
	if (!strcmp(c->what, "empty plan")) {
		plan = saturn_plan_create(0);
	} else if (c->what[0] != 'n') {
		/* task t in slot n - 1 - t, on node t % 2, at 60 s x (t / 4) */
		plan = saturn_plan_create(n);
		for (int t = 0; t < n; t++)
			ck_assert_int_eq(saturn_plan_set(plan, n - 1 - t, b.problem, t, 0, t % 2,
							 60.0 * (t / 4), NULL),
					 0);
		if (!strcmp(c->what, "stale index"))
			plan->assign[0].task = n + 1000; /* the slot of task n - 1 */
	}
	nd = saturn_sched_decide(s, &b, plan, 0, &d);
	ck_assert_msg(nd == c->decisions, "%s: %d decisions", c->what, nd);
	if (!nd)
		ck_assert_ptr_null(d);
	for (int i = 0; i < nd; i++) {
		int t = b.problem->ntasks - 1 - i - (c->what[0] == 's');

		/* slot k holds task n - 1 - k */
		ck_assert_int_eq(d[i].job, b.job_of_task[t]);
		ck_assert_double_eq(d[i].start_s, 60.0 * (t / 4));
		ck_assert_int_eq(d[i].release, t < 4);
		ck_assert_str_eq(d[i].node, t % 2 ? "n2" : "n1");
	}
	free(nd > 0 ? d : NULL);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A carried plan keeps the planned order (by start, not by task index):
 * four 8-GPU tasks planned in reverse, t3 and t2 first. */
/* The persisted state's format version (saturn-sched-state/N): only
 * SATURN_SCHED_STATE_VERSION is read; an older or newer one is refused with
 * a message naming the version, which the plugin logs before planning
 * afresh from the job records. */
static const struct {
	const char *format; /* NULL: no "format" key */
	int version;        /* saturn_sched_state_version() */
	const char *why;    /* NULL: parsed */
} version_cases[] = {
	{"saturn-sched-state/1", 1, NULL},
	{"saturn-sched-state/0", 0, "version 0 is older than the version 1"},
	{"saturn-sched-state/2", 2, "version 2 was written by a newer sched/saturn"},
	{"saturn-sched-state/17", 17, "version 17 was written by a newer"},
	{"saturn-sched-state/01", 1, "unsupported"},
	{"saturn-sched-state/1x", -1, "is not a saturn-sched-state document"},
	{"saturn-sched-state/", -1, "is not a saturn-sched-state document"},
	{"saturn-sched-state/99999999999", -1, "is not a saturn-sched-state document"},
	{"saturn-plan/1", -1, "is not a saturn-sched-state document"},
	{NULL, -1, "format: missing"},
};

START_TEST(test_state_version)
{
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st;
	char buf[256];

	ck_assert_int_eq(saturn_sched_state_version(version_cases[_i].format),
			 version_cases[_i].version);
	if (version_cases[_i].format)
		snprintf(buf, sizeof(buf), "{\"format\":\"%s\",\"tasks\":[]}",
			 version_cases[_i].format);
	else
		snprintf(buf, sizeof(buf), "{\"tasks\":[]}");
	st = saturn_sched_state_parse(buf, strlen(buf), &err);
	if (!version_cases[_i].why) {
		ck_assert_msg(st != NULL, "%s: %s", buf, err.text);
		saturn_sched_state_destroy(st);
		return;
	}
	ck_assert_msg(st == NULL, "%s accepted", buf);
	ck_assert_msg(strstr(err.text, version_cases[_i].why), "%s: '%s' lacks '%s'", buf, err.text,
		      version_cases[_i].why);
	ck_assert_msg(!strncmp(err.text, "format:", 7), "%s: '%s' must start with 'format:'", buf,
		      err.text);
}
END_TEST

START_TEST(test_carry_order)
{
	saturn_snapshot_t *s = cluster(4, 8);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *prev, *carried;
	static const double want[4] = {60, 60, 0, 0};

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	prev = saturn_plan_create(4);
	for (int t = 0; t < 4; t++)
		ck_assert_int_eq(saturn_plan_set(prev, t, b.problem, t, 0, t % 2, want[t], NULL), 0);
	prev->makespan_s = 120;
	carried = saturn_sched_carry(prev, b.problem);
	ck_assert_ptr_nonnull(carried);
	for (int t = 0; t < 4; t++) {
		ck_assert_str_eq(carried->assign[t].node_name, t % 2 ? "n2" : "n1");
		ck_assert_msg(fabs(carried->assign[t].start_s - want[t]) < 1e-6, "task %d at %g, not %g", t,
			      carried->assign[t].start_s, want[t]);
	}
	ck_assert_double_eq_tol(carried->makespan_s, 120, 1e-6);
	ck_assert_str_eq(carried->status, "carried");
	ck_assert_int_eq(saturn_plan_validate(carried, b.problem, &err), 0);
	saturn_plan_destroy(carried);
	saturn_plan_destroy(prev);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A carried task starts as early as its planned GPUs and its release
 * allow, however long ago the plan was made: planned at 100 s behind task 0 (60 s on all
 * 8 GPUs of n1, still held, so carried to 0), it starts when task 0 ends,
 * at 60, or at its release when that is later; never at its planned 100 s
 * less the time elapsed, which left the GPUs idle for 40 s. */
static const struct shift_case {
	double release, start;
} shift_cases[] = {
	{0, 60}, {30, 60}, {60, 60}, {95, 95}, {200, 200},
};

START_TEST(test_carry_shift)
{
	const struct shift_case *c = &shift_cases[_i];
	saturn_snapshot_t *s = cluster(2, 8);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *prev, *carried;

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	prev = saturn_plan_create(2);
	ck_assert_int_eq(saturn_plan_set(prev, 0, b.problem, 0, 0, 0, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(prev, 1, b.problem, 1, 0, 0, 100, NULL), 0);
	prev->makespan_s = 160;
	b.problem->tasks[1].release_s = c->release;
	carried = saturn_sched_carry(prev, b.problem);
	ck_assert_ptr_nonnull(carried);
	ck_assert_double_eq_tol(carried->assign[0].start_s, 0, 1e-9);
	ck_assert_msg(fabs(carried->assign[1].start_s - c->start) < 1e-9,
		      "release %g: starts at %g, not %g", c->release, carried->assign[1].start_s,
		      c->start);
	ck_assert_double_eq_tol(carried->makespan_s, c->start + 60 > 60 ? c->start + 60 : 60, 1e-9);
	saturn_plan_destroy(carried);
	saturn_plan_destroy(prev);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* One cycle, two plans: the carried plan releases task 1 onto n1 (due in
 * 30 s, when the running task 0 there ends: within the slack) and task 2
 * onto n2, and holds task 3 (all 8 GPUs) behind task 1 on n1; then a new
 * plan is solved. Slurm holds task 1 to n1, so the new plan must start it
 * there and plan task 3 on n2 when task 2 ends (60 s), not on n1 behind
 * task 1 (150 s), and not with task 1 moved to n2, as an unpinned plan
 * would (the symptom: tasks released onto a node behind others while
 * another frees first). */
START_TEST(test_carry_release_pinned)
{
	saturn_snapshot_t *s = cluster(4, 4);
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *prev, *carried, *plan;
	saturn_planner_opts_t o;
	saturn_decision_t *d = NULL;
	unsigned char held[4];
	int nd, found = 0;

	s->jobs[0].state = SATURN_SNAP_RUNNING;
	s->jobs[0].node = 0;
	s->jobs[0].gpu_mask = 0xff;
	s->jobs[0].gpus = 8;
	snprintf(s->jobs[0].technique, SATURN_TECH_LEN, "user");
	s->jobs[0].start_time = 970; /* 30 s left */
	/* task 1 takes 120 s: unpinned, the best plan moves it to n2 (ends
	 * at 120) and task 3 to n1 at 30 */
	s->jobs[1].time_limit_s = 120;
	s->jobs[3].req_gpus = 8;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 4);
	prev = saturn_plan_create(4);
	ck_assert_int_eq(saturn_plan_set(prev, 0, b.problem, 0, 0, 0, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(prev, 1, b.problem, 1, 0, 0, 30, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(prev, 2, b.problem, 2, 0, 1, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(prev, 3, b.problem, 3, 0, 0, 150, NULL), 0);
	prev->makespan_s = 210;
	carried = saturn_sched_carry(prev, b.problem);
	ck_assert_ptr_nonnull(carried);
	/* the carried plan's releases, as apply_plan marks them */
	for (int t = 0; t < 4; t++)
		held[t] = s->jobs[b.job_of_task[t]].state == SATURN_SNAP_HELD;
	nd = saturn_sched_decide(s, &b, carried, 30, &d);
	for (int i = 0; i < nd; i++)
		if (d[i].release)
			s->jobs[d[i].job].state = SATURN_SNAP_RELEASED;
	free(d);
	ck_assert_int_eq(s->jobs[b.job_of_task[1]].state, SATURN_SNAP_RELEASED);
	ck_assert_int_eq(s->jobs[b.job_of_task[2]].state, SATURN_SNAP_RELEASED);
	ck_assert_int_eq(s->jobs[b.job_of_task[3]].state, SATURN_SNAP_HELD);

	ck_assert_int_eq(saturn_sched_pin_released(s, &b, carried, held), 2);
	ck_assert(b.problem->tasks[1].is_released);
	ck_assert_int_eq(b.problem->tasks[1].released_node, 0);
	ck_assert_int_eq(b.problem->tasks[1].noptions, 1);
	ck_assert(b.problem->tasks[2].is_released);
	ck_assert_int_eq(b.problem->tasks[2].released_node, 1);
	ck_assert(!b.problem->tasks[3].is_released);
	/* pinned once: a second call finds nothing new */
	ck_assert_int_eq(saturn_sched_pin_released(s, &b, carried, held), 0);
	ck_assert_int_eq(saturn_plan_validate(carried, b.problem, &err), 0);

	saturn_planner_opts_init(&o);
	o.time_limit_s = 0.2;
	plan = saturn_planner_solve(b.problem, &o, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	ck_assert_str_eq(plan->assign[1].node_name, "n1");
	ck_assert_double_eq_tol(plan->assign[1].start_s, 30, 1e-9);
	ck_assert_str_eq(plan->assign[2].node_name, "n2");
	assert_gpus_exclusive(plan);
	nd = saturn_sched_decide(s, &b, plan, 30, &d);
	for (int i = 0; i < nd; i++) {
		ck_assert_int_ne(d[i].job, b.job_of_task[1]);
		if (d[i].job != b.job_of_task[3])
			continue;
		found = 1;
		ck_assert_str_eq(d[i].node, "n2");
		ck_assert(!d[i].release);
		ck_assert_double_eq_tol(d[i].start_s, 60, 1e-9);
	}
	ck_assert(found);
	free(d);
	saturn_plan_destroy(plan);
	saturn_plan_destroy(carried);
	saturn_plan_destroy(prev);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("sched");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_settings, 0, sizeof(settings_cases) / sizeof(settings_cases[0]));
	tcase_add_test(tc, test_settings_internode);
	tcase_add_test(tc, test_fallback_fcfs);
	tcase_add_test(tc, test_running_busy_skip);
	tcase_add_test(tc, test_released_pinned);
	tcase_add_loop_test(tc, test_reason, 0, sizeof(reason_cases) / sizeof(reason_cases[0]));
	tcase_add_test(tc, test_switch);
	tcase_add_test(tc, test_carry);
	tcase_add_test(tc, test_carry_bound);
	tcase_add_test(tc, test_profile_plan);
	tcase_add_test(tc, test_state_roundtrip);
	tcase_add_loop_test(tc, test_partitions, 0, sizeof(part_cases) / sizeof(part_cases[0]));
	tcase_add_test(tc, test_partitions_same_problem);
	tcase_add_test(tc, test_partitions_running_carry);
	tcase_add_loop_test(tc, test_progress, 0, sizeof(progress_cases) / sizeof(progress_cases[0]));
	tcase_add_test(tc, test_many);
	tcase_add_loop_test(tc, test_batch_groups, 0, sizeof(group_cases) / sizeof(group_cases[0]));
	tcase_add_test(tc, test_profile_per_user);
	tcase_add_test(tc, test_isolate_huge_profile);
	tcase_add_test(tc, test_isolate_huge_progress);
	tcase_add_test(tc, test_isolate_check_fallback);
	tcase_add_test(tc, test_limits_batch_name);
	tcase_add_test(tc, test_limits_technique_name);
	tcase_add_loop_test(tc, test_rehold_cause, 0, sizeof(rehold_cases) / sizeof(rehold_cases[0]));
	tcase_add_test(tc, test_rehold_replan);
	tcase_add_loop_test(tc, test_decide_slack, 0, sizeof(slack_cases) / sizeof(slack_cases[0]));
	tcase_add_loop_test(tc, test_decide_held_only, 0, sizeof(held_cases) / sizeof(held_cases[0]));
	tcase_add_loop_test(tc, test_switch_boundary, 0, sizeof(switch_cases) / sizeof(switch_cases[0]));
	tcase_add_loop_test(tc, test_decide_plan_shapes, 0, sizeof(shape_cases) / sizeof(shape_cases[0]));
	tcase_add_test(tc, test_carry_order);
	tcase_add_test(tc, test_release_order);
	tcase_add_test(tc, test_carry_release_pinned);
	tcase_add_loop_test(tc, test_state_version, 0, sizeof(version_cases) / sizeof(version_cases[0]));
	tcase_add_loop_test(tc, test_carry_shift, 0, sizeof(shift_cases) / sizeof(shift_cases[0]));
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
