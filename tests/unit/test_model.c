/* test_model.c - problem construction and consistency checks. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static saturn_problem_t *one_node(int gpus)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_node_t n = {.name = strdup("n1"), .gpus = gpus};

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(saturn_problem_add_node(p, &n), 0);
	return p;
}

static void add_task(saturn_problem_t *p, const char *id, double batches,
		     int gpus, double spb)
{
	saturn_task_t t = {0};

	t.id = strdup(id);
	t.batches = batches;
	t.noptions = 1;
	t.options = calloc(1, sizeof(*t.options));
	t.options[0].technique = strdup("ddp");
	t.options[0].gpus = gpus;
	t.options[0].sec_per_batch = spb;
	ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);
}

START_TEST(test_check_ok)
{
	saturn_problem_t *p = one_node(8);
	saturn_error_t err = {{0}};

	for (int i = 0; i < 40; i++) {
		char id[16];

		snprintf(id, sizeof(id), "t%d", i);
		add_task(p, id, 100, 1 + i % 8, 0.5);
	}
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	ck_assert_int_eq(p->nclasses, 1);
	ck_assert_double_eq(saturn_task_runtime(&p->tasks[3], 0), 50.0);
	saturn_problem_destroy(p);
}
END_TEST

static const struct bad_case {
	const char *id;
	double batches;
	int gpus;
	double spb;
	const char *expect;
} bad_cases[] = {
	{"t1", -1, 1, 1.0, "batches"},
	{"t1", 10, 0, 1.0, "gpus"},
	{"t1", 10, 1, 0.0, "sec_per_batch"},
	{"t1", 10, 16, 1.0, "no option fits"},
	{"", 10, 1, 1.0, "id"},
};

START_TEST(test_check_bad)
{
	const struct bad_case *c = &bad_cases[_i];
	saturn_problem_t *p = one_node(8);
	saturn_error_t err = {{0}};

	add_task(p, c->id, c->batches, c->gpus, c->spb);
	ck_assert_int_eq(saturn_problem_check(p, &err), -1);
	ck_assert_msg(strstr(err.text, c->expect), "message \"%s\" lacks \"%s\"",
		      err.text, c->expect);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_duplicate_id)
{
	saturn_problem_t *p = one_node(8);
	saturn_error_t err = {{0}};

	add_task(p, "a", 1, 1, 1);
	add_task(p, "a", 1, 1, 1);
	ck_assert_int_eq(saturn_problem_check(p, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "duplicate task id"));
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_copy)
{
	saturn_problem_t *p = one_node(4), *c;
	saturn_error_t err = {{0}};

	add_task(p, "a", 10, 2, 1.5);
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	c = saturn_problem_copy(p);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(c->tasks[0].id, "a");
	ck_assert_ptr_ne(c->tasks[0].id, p->tasks[0].id);
	add_task(c, "b", 1, 1, 1);
	ck_assert_int_eq(saturn_problem_check(c, &err), 0);
	saturn_problem_destroy(p);
	saturn_problem_destroy(c);
}
END_TEST

/* A task with ddp on 2 GPUs three times: any class, class "a100" on two
 * nodes, class "a100" on one node (from the class's own profile). */
static saturn_task_t three_ddp(void)
{
	saturn_task_t t = {0};

	t.id = strdup("x");
	t.noptions = 3;
	t.options = calloc(3, sizeof(*t.options));
	for (int o = 0; o < 3; o++) {
		t.options[o].technique = strdup("ddp");
		t.options[o].gpus = 2;
		t.options[o].sec_per_batch = 1 + o;
		t.options[o].prof_opt = o;
	}
	t.options[1].klass = strdup("a100");
	t.options[1].nodes = 2;
	t.options[2].klass = strdup("a100");
	t.options[2].source = strdup("a100");
	return t;
}

START_TEST(test_option_identity)
{
	saturn_problem_t *p = one_node(4), *c;
	saturn_task_t t = three_ddp();

	ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);
	c = saturn_problem_copy(p);
	ck_assert_ptr_nonnull(c);
	/* the copy keeps the identity, in strings of its own */
	ck_assert_str_eq(c->tasks[0].options[2].source, "a100");
	ck_assert_ptr_ne(c->tasks[0].options[2].source, p->tasks[0].options[2].source);
	ck_assert_int_eq(c->tasks[0].options[2].prof_opt, 2);
	ck_assert_ptr_null(c->tasks[0].options[0].source);
	/* one key: technique, GPUs, nodes, class */
	ck_assert_int_eq(saturn_task_find_option(&c->tasks[0], "ddp", 2, 1, NULL), 0);
	ck_assert_int_eq(saturn_task_find_option(&c->tasks[0], "ddp", 2, 2, "a100"), 1);
	ck_assert_int_eq(saturn_task_find_option(&c->tasks[0], "ddp", 2, 2, "v100"), -1);
	ck_assert_int_eq(saturn_task_find_option(&c->tasks[0], "ddp", 2, 0, "v100"), 0);
	ck_assert_int_eq(saturn_task_find_option(&c->tasks[0], "ddp", 4, 1, NULL), -1);
	ck_assert_int_eq(saturn_task_find_option(&c->tasks[0], "fsdp", 2, 1, NULL), -1);
	ck_assert_int_eq(saturn_task_find_option(&c->tasks[0], NULL, 2, 1, NULL), -1);
	saturn_option_clear(&c->tasks[0].options[2]);
	ck_assert_ptr_null(c->tasks[0].options[2].source);
	saturn_option_clear(NULL);
	saturn_problem_destroy(p);
	saturn_problem_destroy(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("check");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_check_ok);
	tcase_add_loop_test(tc, test_check_bad, 0,
			    sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_duplicate_id);
	tcase_add_test(tc, test_copy);
	tcase_add_test(tc, test_option_identity);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
