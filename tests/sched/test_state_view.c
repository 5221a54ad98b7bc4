/* test_state_view.c - the per-user views of sched/saturn's state
 * (lib/sched/state_view.c; doc/security.md, "PrivateData"): which tasks
 * and corrections land in which view. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sched_core.h"
#include "state_view.h"

/* alice (1001) and bob (1002) with two tasks each, one correction each,
 * and carol (1003) with only a correction */
static const char state[] =
	"{\"format\": \"" SATURN_SCHED_STATE_FORMAT "\", \"plan_id\": \"p-7\", \"updated\": 1000,"
	" \"makespan_s\": 60, \"makespan_end\": 1060, \"lower_bound_s\": 50, \"solve_s\": 0.1,"
	" \"method\": \"milp\", \"tasks\": ["
	"  {\"id\": \"a0\", \"batch\": \"secret-a\", \"uid\": 1001, \"job_id\": 11, \"state\": \"running\","
	"   \"technique\": \"ddp\", \"gpus\": 2, \"node\": \"n1\", \"start\": 1000, \"end\": 1030},"
	"  {\"id\": \"b0\", \"batch\": \"secret-b\", \"uid\": 1002, \"job_id\": 21, \"state\": \"planned\","
	"   \"technique\": \"fsdp\", \"gpus\": 4, \"node\": \"n2\", \"start\": 1000, \"end\": 1060},"
	"  {\"id\": \"a1\", \"batch\": \"secret-a\", \"uid\": 1001, \"job_id\": 12, \"state\": \"planned\","
	"   \"technique\": \"ddp\", \"gpus\": 2, \"node\": \"n1\", \"start\": 1030, \"end\": 1060},"
	"  {\"id\": \"b1\", \"batch\": \"other-b\", \"uid\": 1002, \"job_id\": 22, \"state\": \"planned\","
	"   \"technique\": \"single\", \"gpus\": 1, \"node\": \"n1\", \"start\": 1030, \"end\": 1040}],"
	" \"nodes\": [{\"name\": \"n1\", \"gpus\": 4}, {\"name\": \"n2\", \"gpus\": 4}],"
	" \"corrections\": ["
	"  {\"uid\": 1002, \"batch\": \"secret-b\", \"signature\": \"model=bob-llm bs=8\", \"technique\": \"fsdp\","
	"   \"gpus\": 4, \"ratio\": 1.5, \"batches\": 10, \"updated\": 990},"
	"  {\"uid\": 1003, \"batch\": \"carols\", \"signature\": \"model=carol bs=4\", \"technique\": \"ddp\","
	"   \"gpus\": 2, \"ratio\": 0.9, \"batches\": 5, \"updated\": 980},"
	"  {\"uid\": 1001, \"batch\": \"secret-a\", \"signature\": \"model=alice-vit bs=16\", \"technique\": \"ddp\","
	"   \"gpus\": 2, \"ratio\": 1.1, \"batches\": 7, \"updated\": 995}]}";

static saturn_sched_state_t *parse_view(const saturn_state_view_t *v)
{
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st = saturn_sched_state_parse(v->text, strlen(v->text), &err);

	ck_assert_msg(st != NULL, "view of %ld: %s", v->uid, err.text);
	return st;
}

START_TEST(test_views_per_user)
{
	saturn_state_view_t *v = NULL;
	saturn_error_t err = {{0}};
	int n = -1;

	ck_assert_int_eq(saturn_state_views(state, strlen(state), &v, &n, &err), 0);
	/* one view per uid with a task or a correction, in uid order */
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(v[0].uid, 1001);
	ck_assert_int_eq(v[1].uid, 1002);
	ck_assert_int_eq(v[2].uid, 1003);
	for (int i = 0; i < n; i++) {
		saturn_sched_state_t *st = parse_view(&v[i]);

		/* only that user's tasks and corrections */
		for (int k = 0; k < st->ntasks; k++)
			ck_assert_int_eq(st->tasks[k].uid, v[i].uid);
		for (int k = 0; k < st->ncorr; k++)
			ck_assert_int_eq(st->corr[k].key.uid, v[i].uid);
		/* the plan's figures and the nodes are kept */
		ck_assert_str_eq(st->plan_id, "p-7");
		ck_assert_int_eq(st->nnodes, 2);
		saturn_sched_state_destroy(st);
	}
	/* alice: her two tasks in order, her signature, nothing of bob's */
	{
		saturn_sched_state_t *st = parse_view(&v[0]);

		ck_assert_int_eq(st->ntasks, 2);
		ck_assert_str_eq(st->tasks[0].id, "a0");
		ck_assert_str_eq(st->tasks[1].id, "a1");
		ck_assert_int_eq(st->ncorr, 1);
		saturn_sched_state_destroy(st);
	}
	ck_assert_ptr_null(strstr(v[0].text, "secret-b"));
	ck_assert_ptr_null(strstr(v[0].text, "other-b"));
	ck_assert_ptr_null(strstr(v[0].text, "bob-llm"));
	ck_assert_ptr_null(strstr(v[0].text, "carol"));
	ck_assert_ptr_nonnull(strstr(v[0].text, "alice-vit"));
	/* bob: both his batches, none of alice's */
	ck_assert_ptr_nonnull(strstr(v[1].text, "secret-b"));
	ck_assert_ptr_nonnull(strstr(v[1].text, "other-b"));
	ck_assert_ptr_null(strstr(v[1].text, "secret-a"));
	ck_assert_ptr_null(strstr(v[1].text, "alice-vit"));
	/* carol: no task, only her correction */
	{
		saturn_sched_state_t *st = parse_view(&v[2]);

		ck_assert_int_eq(st->ntasks, 0);
		ck_assert_int_eq(st->ncorr, 1);
		saturn_sched_state_destroy(st);
	}
	ck_assert_ptr_null(strstr(v[2].text, "secret-"));
	saturn_state_views_free(v, n);
}
END_TEST

START_TEST(test_views_empty_and_bad)
{
	static const char empty[] = "{\"format\": \"" SATURN_SCHED_STATE_FORMAT
				    "\", \"plan_id\": \"p-1\", \"updated\": 1, \"tasks\": []}";
	saturn_state_view_t *v = (void *)1;
	saturn_error_t err = {{0}};
	int n = -1;

	/* nobody has a task: no views (and every old one is swept) */
	ck_assert_int_eq(saturn_state_views(empty, strlen(empty), &v, &n, &err), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(saturn_state_views("[1,", 3, &v, &n, &err), -1);
	ck_assert_int_eq(n, 0);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(saturn_state_views("[1]", 3, &v, &n, &err), -1);
}
END_TEST

START_TEST(test_view_hash)
{
	/* a view is rewritten only when its text changes */
	ck_assert(saturn_state_view_hash("abc", 3) == saturn_state_view_hash("abc", 3));
	ck_assert(saturn_state_view_hash("abc", 3) != saturn_state_view_hash("abd", 3));
	ck_assert(saturn_state_view_hash("", 0) != 0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("state_view");
	TCase *tc = tcase_create("views");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_views_per_user);
	tcase_add_test(tc, test_views_empty_and_bad);
	tcase_add_test(tc, test_view_hash);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
