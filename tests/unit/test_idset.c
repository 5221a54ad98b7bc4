/* test_idset.c - id lists like "0-15", "1,3,5-7", "0-15:2" (lib/model/idset.c):
 * the forms, bounds, overflow, duplicates, empty and malformed input. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"

#define MAXID 100
#define MAXN 50

static const struct idset_case {
	const char *s;
	int n;            /* ids expected, -1 for an error */
	int ids[12];      /* the first ones, in order */
	const char *why;  /* substring of the message, for errors */
} cases[] = {
	{"0", 1, {0}, NULL},
	{"7", 1, {7}, NULL},
	{"0-3", 4, {0, 1, 2, 3}, NULL},
	{"1,3,5-7", 5, {1, 3, 5, 6, 7}, NULL},
	{"0-15:2", 8, {0, 2, 4, 6, 8, 10, 12, 14}, NULL},
	{"0-15:5", 4, {0, 5, 10, 15}, NULL},
	{"3-3", 1, {3}, NULL},
	{"3-3:7", 1, {3}, NULL},
	{"9,0-2", 4, {9, 0, 1, 2}, NULL}, /* order as written */
	{"0-7,9,12-20:4", 12, {0, 1, 2, 3, 4, 5, 6, 7, 9, 12, 16, 20}, NULL},
	{"007", 1, {7}, NULL},
	/* bounds */
	{"100", 1, {100}, NULL},
	{"101", -1, {0}, "'101': id out of range (ids 0 to 100)"},
	{"90-101", -1, {0}, "out of range"},
	{"0-49", 50, {0, 1, 2}, NULL},
	{"0-50", -1, {0}, "more than 50 ids"},
	{"0-98:2", 50, {0, 2, 4}, NULL},
	{"0-100:2", -1, {0}, "more than 50 ids"},
	/* overflow */
	{"99999999999999999999", -1, {0}, "out of range"},
	{"0-99999999999999999999", -1, {0}, "out of range"},
	{"0-9:99999999999999999999", -1, {0}, "is not an id range"},
	/* duplicates */
	{"1,1", -1, {0}, "id 1 listed twice"},
	{"0-5,3", -1, {0}, "id 3 listed twice"},
	{"0-10:2,4-5", -1, {0}, "id 4 listed twice"},
	{"0-10:2,5", 7, {0, 2, 4, 6, 8, 10, 5}, NULL},
	/* empty and malformed */
	{"", -1, {0}, "empty"},
	{",", -1, {0}, "'' is not an id range like 0-15, 1,3,5-7 or 0-15:2"},
	{"1,", -1, {0}, "is not an id range"},
	{",1", -1, {0}, "is not an id range"},
	{"1,,2", -1, {0}, "is not an id range"},
	{"0-", -1, {0}, "'0-' is not"},
	{"-3", -1, {0}, "'-3' is not"},
	{"7-3", -1, {0}, "'7-3' is not"},
	{"0-3:0", -1, {0}, "'0-3:0' is not"},
	{"0-3:", -1, {0}, "is not"},
	{"5:2", -1, {0}, "'5:2' is not"},
	{"0-3-5", -1, {0}, "is not"},
	{"+1", -1, {0}, "is not"},
	{" 1", -1, {0}, "is not"},
	{"1 ", -1, {0}, "'1 ' is not"},
	{"1;rm", -1, {0}, "is not"},
	{"a", -1, {0}, "'a' is not"},
	{"0x10", -1, {0}, "is not"},
	{"[0-3]", -1, {0}, "is not"},
};

START_TEST(test_parse)
{
	const struct idset_case *c = &cases[_i];
	saturn_error_t err = {{0}};
	int *ids = (int *)1;
	int n;

	errno = 0;
	n = saturn_idset_parse("ids", c->s, MAXID, MAXN, &ids, &err);
	ck_assert_msg(n == c->n, "'%s': %d ids, want %d (%s)", c->s, n, c->n, err.text);
	if (n < 0) {
		ck_assert_ptr_null(ids);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_msg(!strncmp(err.text, "ids: ", 5), "'%s': '%s'", c->s, err.text);
		ck_assert_msg(strstr(err.text, c->why) != NULL,
			      "'%s': message '%s' lacks '%s'", c->s, err.text, c->why);
		return;
	}
	for (int i = 0; i < n && i < 12; i++)
		if (c->ids[i] || i < 3)
			ck_assert_msg(ids[i] == c->ids[i], "'%s': ids[%d] = %d, want %d",
				      c->s, i, ids[i], c->ids[i]);
	free(ids);
}
END_TEST

START_TEST(test_edges)
{
	saturn_error_t err = {{0}};
	int *ids;

	/* NULL input, no name in the message */
	ck_assert_int_eq(saturn_idset_parse(NULL, NULL, 10, 10, &ids, &err), -1);
	ck_assert_ptr_null(ids);
	ck_assert_msg(!strncmp(err.text, "the id list is empty", 20), "%s", err.text);
	/* NULL err is allowed */
	ck_assert_int_eq(saturn_idset_parse("x", "1-", 10, 10, &ids, NULL), -1);
	/* the largest task id we take, and one more */
	ck_assert_int_eq(saturn_idset_parse("x", "67108863", SATURN_TASK_ID_MAX, 1, &ids, &err), 1);
	ck_assert_int_eq(ids[0], SATURN_TASK_ID_MAX);
	free(ids);
	ck_assert_int_eq(saturn_idset_parse("x", "67108864", SATURN_TASK_ID_MAX, 1, &ids, &err), -1);
	/* a huge range is refused at the count limit, not expanded */
	ck_assert_int_eq(saturn_idset_parse("x", "0-67108863", SATURN_TASK_ID_MAX, 100000, &ids, &err), -1);
	ck_assert_msg(strstr(err.text, "more than 100000 ids") != NULL, "%s", err.text);
	/* a long bad item is cut in the message */
	{
		char s[300];

		memset(s, 'z', sizeof(s) - 1);
		s[sizeof(s) - 1] = '\0';
		ck_assert_int_eq(saturn_idset_parse("x", s, 10, 10, &ids, &err), -1);
		ck_assert_uint_lt(strlen(err.text), 120);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("idset");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_parse, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_edges);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
