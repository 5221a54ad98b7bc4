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

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_task_cap_queue_order);
	tcase_add_test(tc, test_task_cap_over_limit);
	tcase_add_test(tc, test_task_cap_setting);
}

int main(void)
{
	return fx_run_suite("hostile", 120, add_tests);
}
