/* test_submit_rules.c - batch-name syntax, default names and TRES request
 * parsing shared by spank_saturn.so and job_submit_saturn.so. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "submit_rules.h"

static const struct name_case {
	const char *name;
	int ok;
	const char *why; /* substring of the reason, for bad names */
} name_cases[] = {
	{"lr-sweep", 1, NULL},
	{"a", 1, NULL},
	{"A.b_c-9", 1, NULL},
	{"0start", 1, NULL},
	{"x1234567890123456789012345678901234567890123456789012345678901" "23", 1, NULL},
	{"x1234567890123456789012345678901234567890123456789012345678901" "234", 0, "longer than 64"},
	{"", 0, "empty"},
	{NULL, 0, "empty"},
	{"-x", 0, "must not start"},
	{".hidden", 0, "must not start"},
	{"a b", 0, "0x20"},
	{"a/b", 0, "'/'"},
	{"a;rm", 0, "';'"},
	{"caf\xc3\xa9", 0, "0xc3"},
	{"tab\t", 0, "0x09"},
};

START_TEST(test_name_check)
{
	const struct name_case *c = &name_cases[_i];
	char why[160] = "";
	int rc = saturn_batch_name_check(c->name, why, sizeof(why));

	ck_assert_msg((rc == 0) == c->ok, "name '%s': rc %d (%s)",
		      c->name ? c->name : "(null)", rc, why);
	if (!c->ok)
		ck_assert_msg(strstr(why, c->why) != NULL,
			      "name '%s': reason '%s' lacks '%s'",
			      c->name ? c->name : "(null)", why, c->why);
}
END_TEST

static const struct default_case {
	const char *job_name;
	const char *expect;
} default_cases[] = {
	{"sweep.sbatch", "sweep.sbatch"},
	{"my job", "my_job"},
	{"--.x", "x"},
	{"...", "batch"},
	{"", "batch"},
	{NULL, "batch"},
	{"a/b:c", "a_b_c"},
	{"x12345678901234567890123456789012345678901234567890123456789012345678",
	 "x123456789012345678901234567890123456789012345678901234567890123"},
};

START_TEST(test_name_default)
{
	const struct default_case *c = &default_cases[_i];
	char out[SATURN_BATCH_NAME_MAX + 1];

	saturn_batch_name_default(c->job_name, out);
	ck_assert_str_eq(out, c->expect);
	ck_assert_int_eq(saturn_batch_name_check(out, NULL, 0), 0);
}
END_TEST

static const struct tres_case {
	const char *tres;
	int rc, gpus, other;
	const char *first_other;
} tres_cases[] = {
	{NULL, 0, 0, 0, ""},
	{"", 0, 0, 0, ""},
	{"gres:gpu:2", 0, 2, 0, ""},
	{"gres:gpu", 0, 1, 0, ""},
	{"gres/gpu:4", 0, 4, 0, ""},
	{"gpu:8", 0, 8, 0, ""},
	{"gres:gpu:a100:3", 0, 3, 0, ""},
	{"gres:gpu:a100", 0, 1, 0, ""},
	{"gres:gpu:2,gres:mps:100", 0, 2, 1, "mps:100"},
	{"gres:shard:1", 0, 0, 1, "shard:1"},
	{"gres:gpu:1k", 0, 1024, 0, ""},
	{"gres:gpu:0", -1, 0, 0, ""},
	{"gres:gpu:2x", -1, 0, 0, ""},
	{"gres::2", -1, 0, 0, ""},
	{"gres:gpu:99999999999999999999", -1, 0, 0, ""},
};

START_TEST(test_tres_parse)
{
	const struct tres_case *c = &tres_cases[_i];
	saturn_tres_req_t r;
	char why[160] = "";
	int rc = saturn_tres_parse(c->tres, &r, why, sizeof(why));

	ck_assert_msg(rc == c->rc, "'%s': rc %d, want %d (%s)",
		      c->tres ? c->tres : "(null)", rc, c->rc, why);
	if (rc < 0) {
		ck_assert_msg(why[0] != '\0', "'%s': no reason", c->tres);
		return;
	}
	ck_assert_int_eq(r.gpus, c->gpus);
	ck_assert_int_eq(r.other, c->other);
	ck_assert_str_eq(r.first_other, c->first_other);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("submit_rules");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_name_check, 0,
			    sizeof(name_cases) / sizeof(name_cases[0]));
	tcase_add_loop_test(tc, test_name_default, 0,
			    sizeof(default_cases) / sizeof(default_cases[0]));
	tcase_add_loop_test(tc, test_tres_parse, 0,
			    sizeof(tres_cases) / sizeof(tres_cases[0]));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
