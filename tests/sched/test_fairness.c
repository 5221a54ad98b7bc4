/* test_fairness.c - lib/sched/fairness.c: the users' fair-share finish tags
 * (one user, two users, a user's batches stacked, running tasks' work),
 * planning users one after the other in tag order (the user with the
 * earlier tag first, running tasks and busy GPUs respected, the plan valid),
 * and the saturn_fairness setting. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "planner.h"
#include "sched_core.h"

#include "sched_fixture.h"

/* --- tags -------------------------------------------------------------- */

/* Up to 4 tasks: user, batch, submit (seconds before now), GPU-seconds
 * of work (one option: 1 GPU, `work` batches of 1 s), running. */
static const struct tag_case {
	const char *what;
	int ntasks;
	struct {
		long uid;
		const char *batch;
		double ago, work;
		int running;
	} t[4];
	int gpus; /* one node */
	int nusers;
	double tag[4];
} tag_cases[] = {
    /* clang-format off */
	/* one user: W / all GPUs from the submission */
	{"one user", 2, {{1, "a", 100, 400, 0}, {1, "a", 100, 400, 0}}, 8, 1, {0, 0}},
	/* A at -100 with 800, B at 0 with 80: share 4 GPUs each */
	{"two users", 3, {{1, "a", 100, 400, 0}, {1, "a", 100, 400, 0}, {2, "b", 0, 80, 0}}, 8, 2,
	 {100, 100, 20}},
	/* A's second batch, submitted before the first's tag, waits for it:
	 * -100 + 400 / 4 = 0, then max(-50, 0) + 200 / 4 = 50 */
	{"stacked", 3, {{1, "a", 100, 400, 0}, {1, "a2", 50, 200, 0}, {2, "b", 10, 40, 0}}, 8, 2,
	 {50, 50, 0}},
	/* a batch submitted after its user's earlier one ended starts anew */
	{"gap", 3, {{1, "a", 1000, 40, 0}, {1, "a2", 20, 40, 0}, {2, "b", 0, 400, 0}}, 8, 2,
	 {-10, -10, 100}},
	/* a running task counts its running option's remaining work */
	{"running", 2, {{1, "a", 100, 200, 1}, {2, "b", 0, 40, 0}}, 4, 2, {0, 20}},
    /* clang-format on */
};

START_TEST(test_tags)
{
	const struct tag_case *c = &tag_cases[_i];
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t b = {0};
	saturn_error_t err = {{0}};
	int map[4], one = 1;
	double spb = 1, tag[4];

	s->now = 10000;
	b.problem = saturn_problem_create();
	b.job_of_task = map;
	fx_add_node(b.problem, "n1", c->gpus);
	for (int i = 0; i < c->ntasks; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);
		char id[16];

		j->uid = c->t[i].uid;
		snprintf(j->batch, sizeof(j->batch), "%s", c->t[i].batch);
		j->submit_time = s->now - c->t[i].ago;
		snprintf(id, sizeof(id), "t%d", i);
		ck_assert_int_eq(fx_add_task(b.problem, id, c->t[i].work, 1, &one, &spb), i);
		/* a running task runs on GPU 0 */
		if (c->t[i].running)
			fx_set_running(b.problem, i, 0);
		map[i] = i;
	}
	ck_assert_msg(saturn_problem_check(b.problem, &err) == 0, "%s: %s", c->what, err.text);
	ck_assert_int_eq(saturn_fair_tags(s, &b, tag), c->nusers);
	for (int i = 0; i < c->ntasks; i++)
		ck_assert_msg(fabs(tag[i] - c->tag[i]) < 1e-9, "%s: task %d: tag %g, expected %g",
			      c->what, i, tag[i], c->tag[i]);
	saturn_problem_destroy(b.problem);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_tags_empty)
{
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t b = {0};
	double tag[1] = {7};

	b.problem = saturn_problem_create();
	ck_assert_int_eq(saturn_fair_tags(s, &b, tag), 0);
	ck_assert_double_eq(tag[0], 7);
	saturn_problem_destroy(b.problem);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- planning in tag order --------------------------------------------- */

/* One node of 8 GPUs. User A: a running task on all 8 GPUs for 10 more
 * seconds and 3 held tasks of 100 s on 8 GPUs (or 400 s on 2); user B:
 * one task of 10 s on 8 GPUs (or 40 s on 2). b_first: B's tag is the
 * earlier one. A busy entry (another job) holds GPUs 0-1 for 500 s when
 * busy is set. */
static saturn_problem_t *two_users(double *tag, int b_first, int busy)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	int g8 = 8, g[2] = {8, 2};
	double s10 = 0.1, sa[2] = {1, 4}, sb[2] = {0.1, 0.4};

	fx_add_node(p, "n1", 8);
	if (busy) {
		saturn_node_t *n = &p->nodes[0];

		n->busy = calloc(1, sizeof(*n->busy));
		n->busy[0].ngpus = 2;
		n->busy[0].gpu_ids = calloc(2, sizeof(int));
		n->busy[0].gpu_ids[1] = 1;
		n->busy[0].until_s = 500;
		n->nbusy = 1;
	}
	fx_add_task(p, "a-run", 100, 1, &g8, &s10);
	if (!busy)
		fx_set_running(p, 0, 0);
	else
		p->tasks[0].release_s = 0; /* busy case: no running task on GPUs 0-1 */
	fx_add_task(p, "a-1", 100, 2, g, sa);
	fx_add_task(p, "b-0", 100, 2, g, sb);
	fx_add_task(p, "a-2", 100, 2, g, sa);
	fx_add_task(p, "a-3", 100, 2, g, sa);
	ck_assert_msg(saturn_problem_check(p, &err) == 0, "%s", err.text);
	for (int t = 0; t < p->ntasks; t++)
		tag[t] = t == 2 ? (b_first ? 5 : 500) : 50;
	return p;
}

START_TEST(test_plan_b_first)
{
	double tag[5];
	saturn_problem_t *p = two_users(tag, 1, 0);
	saturn_planner_opts_t o;
	saturn_error_t err = {{0}};
	saturn_plan_t *pl;

	o = fx_opts(1);
	pl = saturn_fair_plan(p, tag, &o, &err);
	ck_assert_msg(pl != NULL, "%s", err.text);
	ck_assert_str_eq(pl->method, "share");
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), 0);
	/* the running task stays; B takes all 8 GPUs the moment it ends */
	ck_assert_double_eq(pl->assign[0].start_s, 0);
	ck_assert_int_eq(pl->assign[0].gpus, 8);
	ck_assert_double_eq_tol(pl->assign[2].start_s, 10, 1e-6);
	ck_assert_double_eq_tol(pl->assign[2].end_s, 20, 1e-6);
	/* A's held tasks after B */
	for (int t = 1; t < 5; t += (t == 1 ? 2 : 1))
		ck_assert_double_ge(pl->assign[t].start_s, 20 - 1e-6);
	/* and A still gets a sound plan: 3 x 100 s on 8 GPUs after B */
	ck_assert_double_eq_tol(pl->makespan_s, 320, 1e-6);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_plan_b_last)
{
	double tag[5];
	saturn_problem_t *p = two_users(tag, 0, 0);
	saturn_error_t err = {{0}};
	saturn_plan_t *pl = saturn_fair_plan(p, tag, NULL, &err);

	ck_assert_msg(pl != NULL, "%s", err.text);
	/* A's three held tasks end before B starts */
	for (int t = 1; t < 5; t++)
		if (t != 2)
			ck_assert_double_le(pl->assign[t].end_s, pl->assign[2].start_s + 1e-6);
	ck_assert_double_ge(pl->assign[2].start_s, 310 - 1e-6);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_plan_busy)
{
	double tag[5];
	saturn_problem_t *p = two_users(tag, 1, 1);
	saturn_error_t err = {{0}};
	saturn_plan_t *pl = saturn_fair_plan(p, tag, NULL, &err);

	ck_assert_msg(pl != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), 0);
	/* GPUs 0-1 are another job's until 500 s: B (first) takes 2 of the
	 * 6 free GPUs at once (40 s) rather than wait for 8 */
	ck_assert_double_eq_tol(pl->assign[2].start_s, 0, 1e-6);
	ck_assert_int_eq(pl->assign[2].gpus, 2);
	for (int t = 0; t < 5; t++) {
		if (pl->assign[t].start_s >= 500 - 1e-6)
			continue;
		for (int i = 0; i < pl->assign[t].gpus; i++)
			ck_assert_int_ge(pl->assign[t].gpu_ids[i], 2);
	}
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

/* --- the setting ---------------------------------------------------------- */

START_TEST(test_setting)
{
	saturn_sched_settings_t ss;

	saturn_sched_settings_init(&ss);
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_NONE);
	fx_setting(&ss, "saturn_fairness=share", 0, NULL);
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_SHARE);
	fx_setting(&ss, "saturn_fairness=fair", 1, "saturn_fairness=fair: must be none or share");
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_SHARE);
	fx_setting(&ss, "saturn_fairness=none", 0, NULL);
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_NONE);
	saturn_sched_settings_free(&ss);
}
END_TEST

/* Tags come from what Slurm enforces, not from claims alone (security.md,
 * "a profile that understates its work"): the liar claims 1 s with a
 * 600 s time limit, the honest user 100 s with 120 s; a third user claims
 * 1 s and sets no limit. One GPU, three users: share 1/3. */
START_TEST(test_tags_enforced)
{
	static const struct {
		long uid;
		double claim, limit;
		double tag; /* 3 x max(claim, limit); no limit: max(claim, 600) */
	} u[] = {{1, 1, 600, 1800}, {2, 100, 120, 360}, {3, 1, 0, 1800}};
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t b = {0};
	saturn_error_t err = {{0}};
	int map[3], one = 1;
	double spb = 1, tag[3];

	s->now = 10000;
	b.problem = saturn_problem_create();
	b.job_of_task = map;
	fx_add_node(b.problem, "n1", 1);
	for (int i = 0; i < 3; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);
		char id[16];

		j->uid = u[i].uid;
		snprintf(j->batch, sizeof(j->batch), "b%d", i);
		j->submit_time = s->now;
		j->time_limit_s = u[i].limit;
		snprintf(id, sizeof(id), "t%d", i);
		ck_assert_int_eq(fx_add_task(b.problem, id, u[i].claim, 1, &one, &spb), i);
		map[i] = i;
	}
	ck_assert_msg(saturn_problem_check(b.problem, &err) == 0, "%s", err.text);
	ck_assert_int_eq(saturn_fair_tags(s, &b, tag), 3);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(fabs(tag[i] - u[i].tag) < 1e-9, "user %ld: tag %g, expected %g", u[i].uid,
			      tag[i], u[i].tag);
	/* the honest user goes first, the liar gains nothing by its claim */
	ck_assert(tag[1] < tag[0]);
	/* a running task: its time limit left (600 - 500 s elapsed) */
	s->jobs[0].start_time = s->now - 500;
	fx_set_running(b.problem, 0, 0);
	ck_assert_int_eq(saturn_fair_tags(s, &b, tag), 3);
	ck_assert_msg(fabs(tag[0] - 300) < 1e-9, "running liar: tag %g, expected 300", tag[0]);
	ck_assert(saturn_task_work_enforced(s, &s->jobs[2], &b.problem->tasks[2]) < 0);
	saturn_problem_destroy(b.problem);
	saturn_snapshot_destroy(s);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_loop_test(tc, test_tags, 0, sizeof(tag_cases) / sizeof(tag_cases[0]));
	tcase_add_test(tc, test_tags_enforced);
	tcase_add_test(tc, test_tags_empty);
	tcase_add_test(tc, test_plan_b_first);
	tcase_add_test(tc, test_plan_b_last);
	tcase_add_test(tc, test_plan_busy);
	tcase_add_test(tc, test_setting);
}

int main(void)
{
	return fx_run_suite("fairness", 60, add_tests);
}
