/* test_numparse.c - saturn_parse_long/int/double: the whole string or
 * nothing, ranges, and the error text naming the option. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"

struct long_case {
	const char *s;
	long lo, hi;
	int ok;
	long want;
};

static const struct long_case long_cases[] = {
    {"0", 0, LONG_MAX, 1, 0},
    {"42", 0, LONG_MAX, 1, 42},
    {"+7", 0, LONG_MAX, 1, 7},
    {"-3", -5, 5, 1, -3},
    {"5", -5, 5, 1, 5},
    {"6", -5, 5, 0, 0},
    {"-1", 0, LONG_MAX, 0, 0},
    {"", 0, LONG_MAX, 0, 0},
    {"abc", 0, LONG_MAX, 0, 0},
    {"1x", 0, LONG_MAX, 0, 0},
    {" 1", 0, LONG_MAX, 0, 0},
    {"1 ", 0, LONG_MAX, 0, 0},
    {"1.5", 0, LONG_MAX, 0, 0},
    {"0x10", 0, LONG_MAX, 0, 0},
    {"99999999999999999999999", 0, LONG_MAX, 0, 0},
    {"-", LONG_MIN, LONG_MAX, 0, 0},
};

START_TEST(test_long_table)
{
	const struct long_case *c = &long_cases[_i];
	saturn_error_t err = {{0}};
	long v = -999;
	int rc = saturn_parse_long("--n", c->s, c->lo, c->hi, &v, &err);

	if (c->ok) {
		ck_assert_msg(rc == 0, "'%s': %s", c->s, err.text);
		ck_assert_int_eq(v, c->want);
	} else {
		ck_assert_msg(rc == -1, "'%s' accepted as %ld", c->s, v);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_int_eq(v, -999); /* unchanged */
		ck_assert_msg(strncmp(err.text, "--n: '", 6) == 0, "text: %s",
			      err.text);
	}
}
END_TEST

START_TEST(test_messages)
{
	saturn_error_t err = {{0}};
	char big[200];
	double d;
	long l;
	int i;

	ck_assert_int_eq(
	    saturn_parse_int("--warmup", "abc", 0, INT_MAX, &i, &err), -1);
	ck_assert_str_eq(err.text, "--warmup: 'abc' is not an integer >= 0");
	ck_assert_int_eq(saturn_parse_long("--seed", "", 0, 9, &l, &err), -1);
	ck_assert_str_eq(err.text, "--seed: '' is not an integer from 0 to 9");
	ck_assert_int_eq(
	    saturn_parse_double("--batches", "", 0, INFINITY, 0, &d, &err), -1);
	ck_assert_str_eq(err.text, "--batches: '' is not a number >= 0");
	ck_assert_int_eq(saturn_parse_double("--timeout", "0", 0, INFINITY,
					     SATURN_NUM_LO_OPEN, &d, &err),
			 -1);
	ck_assert_str_eq(err.text, "--timeout: '0' is not a number > 0");
	ck_assert_int_eq(saturn_parse_double("-t", "x", 0, 60, 0, &d, &err),
			 -1);
	ck_assert_str_eq(err.text, "-t: 'x' is not a number from 0 to 60");
	ck_assert_int_eq(saturn_parse_double(NULL, NULL, 0, 60,
					     SATURN_NUM_LO_OPEN, &d, &err),
			 -1);
	ck_assert_str_eq(err.text, "'' is not a number > 0 and <= 60");
	/* long input is cut */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(saturn_parse_int("--n", big, 0, 1, &i, &err), -1);
	ck_assert_int_lt(strlen(err.text), 120);
	ck_assert_ptr_nonnull(strstr(err.text, "...'"));
	/* NULL err is allowed */
	ck_assert_int_eq(saturn_parse_int("--n", "z", 0, 1, &i, NULL), -1);
}
END_TEST

START_TEST(test_int_range)
{
	int v = 0;

	ck_assert_int_eq(
	    saturn_parse_int("--n", "2147483647", 0, INT_MAX, &v, NULL), 0);
	ck_assert_int_eq(v, INT_MAX);
	ck_assert_int_eq(
	    saturn_parse_int("--n", "2147483648", 0, INT_MAX, &v, NULL), -1);
	ck_assert_int_eq(
	    saturn_parse_int("--n", "-2147483649", INT_MIN, 0, &v, NULL), -1);
	ck_assert_int_eq(
	    saturn_parse_int("--n", "-2147483648", INT_MIN, 0, &v, NULL), 0);
	ck_assert_int_eq(v, INT_MIN);
}
END_TEST

struct dbl_case {
	const char *s;
	double lo, hi;
	int flags, ok;
	double want;
};

static const struct dbl_case dbl_cases[] = {
    {"0", 0, INFINITY, 0, 1, 0},
    {"2.5", 0, INFINITY, 0, 1, 2.5},
    {"1e3", 0, INFINITY, 0, 1, 1000},
    {"0x10", 0, INFINITY, 0, 1, 16},
    {"0", 0, INFINITY, SATURN_NUM_LO_OPEN, 0, 0},
    {"0.001", 0, INFINITY, SATURN_NUM_LO_OPEN, 1, 0.001},
    {"60", 0, 60, 0, 1, 60},
    {"60.5", 0, 60, 0, 0, 0},
    {"-0.1", 0, INFINITY, 0, 0, 0},
    {"", 0, INFINITY, 0, 0, 0},
    {" 1", 0, INFINITY, 0, 0, 0},
    {"1 ", 0, INFINITY, 0, 0, 0},
    {"1s", 0, INFINITY, 0, 0, 0},
    {"abc", 0, INFINITY, 0, 0, 0},
    {"nan", 0, INFINITY, 0, 0, 0},
    {"inf", 0, INFINITY, 0, 0, 0},
    {"1e999", 0, INFINITY, 0, 0, 0},
    {".", 0, INFINITY, 0, 0, 0},
};

START_TEST(test_double_table)
{
	const struct dbl_case *c = &dbl_cases[_i];
	saturn_error_t err = {{0}};
	double v = -999;
	int rc =
	    saturn_parse_double("--x", c->s, c->lo, c->hi, c->flags, &v, &err);

	if (c->ok) {
		ck_assert_msg(rc == 0, "'%s': %s", c->s, err.text);
		ck_assert_double_eq_tol(v, c->want, 1e-12);
	} else {
		ck_assert_msg(rc == -1, "'%s' accepted as %g", c->s, v);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_double_eq(v, -999);
		ck_assert_msg(strncmp(err.text, "--x: '", 6) == 0, "text: %s",
			      err.text);
	}
}
END_TEST

/* Environment variables: unset and empty leave the value alone. */
START_TEST(test_env_double)
{
	saturn_error_t err = {{0}};
	double v = 7;
	int have = 5;

	unsetenv("SATURN_TEST_NUM");
	ck_assert_int_eq(saturn_env_double("SATURN_TEST_NUM", 0, INFINITY, 0, &v, &have, &err), 0);
	ck_assert(v == 7 && have == 0);
	setenv("SATURN_TEST_NUM", "", 1);
	ck_assert_int_eq(saturn_env_double("SATURN_TEST_NUM", 0, INFINITY, 0, &v, &have, &err), 0);
	ck_assert(v == 7 && have == 0);
	setenv("SATURN_TEST_NUM", "2.5", 1);
	ck_assert_int_eq(saturn_env_double("SATURN_TEST_NUM", 0, INFINITY, 0, &v, &have, &err), 0);
	ck_assert(v == 2.5 && have == 1);
	ck_assert_int_eq(saturn_env_double("SATURN_TEST_NUM", 0, INFINITY, 0, &v, NULL, &err), 0);
	setenv("SATURN_TEST_NUM", "0", 1);
	ck_assert_int_eq(saturn_env_double("SATURN_TEST_NUM", 0, INFINITY, SATURN_NUM_LO_OPEN,
					   &v, &have, &err), -1);
	ck_assert(v == 2.5 && have == 0);
	ck_assert_str_eq(err.text, "SATURN_TEST_NUM: '0' is not a number > 0");
	setenv("SATURN_TEST_NUM", "4x", 1);
	ck_assert_int_eq(saturn_env_double("SATURN_TEST_NUM", 0, INFINITY, 0, &v, &have, &err), -1);
	ck_assert_int_eq(errno, EINVAL);
	unsetenv("SATURN_TEST_NUM");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("numparse");
	TCase *tc = tcase_create("numparse");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_long_table, 0,
			    sizeof(long_cases) / sizeof(long_cases[0]));
	tcase_add_loop_test(tc, test_double_table, 0,
			    sizeof(dbl_cases) / sizeof(dbl_cases[0]));
	tcase_add_test(tc, test_messages);
	tcase_add_test(tc, test_int_range);
	tcase_add_test(tc, test_env_double);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
