/* test_safetext.c - the character sets of text from users' files
 * (lib/model/safetext.h): table-driven over names and lines, the error
 * naming the field and the byte without echoing it, and the cleaning copy.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "safetext.h"

static const struct text_case {
	const char *s;
	saturn_text_kind_t kind;
	long bad_at; /* -1: accepted */
} cases[] = {
	{"ddp", SATURN_TEXT_NAME, -1},
	{"fsdp_v2.1+x-y", SATURN_TEXT_NAME, -1},
	{"_private", SATURN_TEXT_NAME, -1},
	{"8gpu", SATURN_TEXT_NAME, -1},
	{"", SATURN_TEXT_NAME, -1},
	{"x\nerror: forged line by mallory", SATURN_TEXT_NAME, 1},
	{"-rf", SATURN_TEXT_NAME, 0},
	{".hidden", SATURN_TEXT_NAME, 0},
	{"a b", SATURN_TEXT_NAME, 1},
	{"a;b", SATURN_TEXT_NAME, 1},
	{"a=b", SATURN_TEXT_NAME, 1},
	{"a/b", SATURN_TEXT_NAME, 1},
	{"a'b", SATURN_TEXT_NAME, 1},
	{"a\x7f", SATURN_TEXT_NAME, 1},
	{"\xc3\xa9t\xc3\xa9", SATURN_TEXT_NAME, 0},
	{"gpt2 --batch-size 16 /data/x.bin", SATURN_TEXT_LINE, -1},
	{"~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./", SATURN_TEXT_LINE, -1},
	{"", SATURN_TEXT_LINE, -1},
	{"line\nnext", SATURN_TEXT_LINE, 4},
	{"cr\r", SATURN_TEXT_LINE, 2},
	{"tab\there", SATURN_TEXT_LINE, 3},
	{"\x1b[2J", SATURN_TEXT_LINE, 0},
	{"del\x7f", SATURN_TEXT_LINE, 3},
	{"caf\xc3\xa9", SATURN_TEXT_LINE, 3},
	{"nul-free\x01", SATURN_TEXT_LINE, 8},
};

START_TEST(test_sets)
{
	const struct text_case *c = &cases[_i];
	saturn_error_t err = {{0}};
	int rc = saturn_text_check("tasks[0].options[1].technique", c->s, c->kind, &err);

	ck_assert_int_eq(saturn_text_bad_at(c->s, c->kind), c->bad_at);
	ck_assert_int_eq(saturn_text_ok(c->s, c->kind), c->bad_at < 0);
	ck_assert_int_eq(rc, c->bad_at < 0 ? 0 : -1);
	if (c->bad_at >= 0) {
		char want[96];

		snprintf(want, sizeof(want),
			 "tasks[0].options[1].technique: character 0x%02x at offset %ld is not allowed",
			 (unsigned char)c->s[c->bad_at], c->bad_at);
		ck_assert_msg(strstr(err.text, want), "\"%s\" lacks \"%s\"", err.text, want);
		/* the message never carries the bad byte itself */
		ck_assert_msg(saturn_text_ok(err.text, SATURN_TEXT_LINE), "unclean: %s", err.text);
		ck_assert_ptr_nonnull(
			strstr(err.text, c->kind == SATURN_TEXT_NAME ? "a name" : "printable"));
	}
}
END_TEST

START_TEST(test_null_and_clean)
{
	saturn_error_t err = {{0}};
	char buf[16];

	ck_assert_int_eq(saturn_text_ok(NULL, SATURN_TEXT_LINE), 0);
	ck_assert_int_eq(saturn_text_check("f", NULL, SATURN_TEXT_LINE, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "f: missing"));
	ck_assert_str_eq(saturn_text_clean("x\nerror: y", SATURN_TEXT_LINE, buf, sizeof(buf)),
			 "x?error: y");
	ck_assert_str_eq(saturn_text_clean("-a b", SATURN_TEXT_NAME, buf, sizeof(buf)), "?a?b");
	/* truncated to fit, always terminated */
	ck_assert_str_eq(saturn_text_clean("abcdefghijklmnopqrstuvwxyz", SATURN_TEXT_LINE, buf, 5),
			 "abcd");
	ck_assert_str_eq(saturn_text_clean(NULL, SATURN_TEXT_LINE, buf, sizeof(buf)), "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("safetext");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_sets, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_null_and_clean);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
