/* test_profile.c - saturn-profile/1: parsing, range strings, round trips,
 * planner options, rejection of bad input (table-driven) and the defensive
 * loader (symlinks, FIFOs, owner, size).
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats.h"
#include "profile.h"
#include "safetext.h"

static const char good[] =
	"{ \"format\": \"saturn-profile/1\", \"batch\": \"lr-sweep\", \"created\": 1764400000.5,\n"
	"  \"future_field\": {\"ignored\": true},\n"
	"  \"hardware\": [ { \"class\": \"h100\", \"node\": \"n1\", \"gpu_model\": \"NVIDIA H100 80GB HBM3\",\n"
	"                  \"gpus\": 2, \"gpu_mem_mb\": 81559, \"interconnect\": \"nvlink\",\n"
	"                  \"gemm_tflops\": 612.25,\n"
	"                  \"link_gbs\": [[0, 450], [450, 0]],\n"
	"                  \"nccl\": [ {\"gpus\": 2, \"allreduce_busbw_gbs\": 360.5, \"allgather_busbw_gbs\": 340} ] } ],\n"
	"  \"tasks\": [ { \"signature\": \"gpt2-xl/bs16\", \"task_ids\": \"0-3,8,10-14:2\", \"batches\": 15000,\n"
	"                 \"class\": \"h100\",\n"
	"                 \"options\": [ { \"technique\": \"fsdp\", \"gpus\": 2, \"sec_per_batch\": 0.41,\n"
	"                                \"peak_mem_mb\": 60000, \"status\": \"measured\",\n"
	"                                \"params\": {\"activation_checkpointing\": true, \"stages\": [1, 2]} },\n"
	"                              { \"technique\": \"single\", \"gpus\": 1, \"status\": \"oom\",\n"
	"                                \"reason\": \"CUDA out of memory\" },\n"
	"                              { \"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.5,\n"
	"                                \"status\": \"predicted\" } ] },\n"
	"               { \"signature\": \"gptj/bs8\", \"task_ids\": [4, 5, 6], \"batches\": 100,\n"
	"                 \"options\": [] } ] }\n";

START_TEST(test_parse_good)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(good, strlen(good), &err);
	const saturn_profile_task_t *t;
	saturn_option_t *opts;
	int n;

	ck_assert_msg(pr != NULL, "%s", err.text);
	ck_assert_str_eq(pr->batch, "lr-sweep");
	ck_assert_double_eq(pr->created, 1764400000.5);
	ck_assert_int_eq(pr->nhw, 1);
	ck_assert_int_eq(pr->hw[0].gpus, 2);
	ck_assert_double_eq(pr->hw[0].link_gbs[1], 450);
	ck_assert_double_eq(pr->hw[0].gemm_tflops, 612.25);
	ck_assert_int_eq(pr->hw[0].nnccl, 1);
	ck_assert_double_eq(pr->hw[0].nccl[0].allreduce_busbw_gbs, 360.5);
	ck_assert_int_eq(pr->ntasks, 2);
	/* 0-3,8,10-14:2 = 0 1 2 3 8 10 12 14 */
	ck_assert_int_eq(pr->tasks[0].ntask_ids, 8);
	ck_assert_int_eq(pr->tasks[0].task_ids[4], 8);
	ck_assert_int_eq(pr->tasks[0].task_ids[7], 14);
	ck_assert_ptr_nonnull(strstr(pr->tasks[0].options[0].params, "\"activation_checkpointing\":true"));
	ck_assert_str_eq(pr->tasks[0].options[1].reason, "CUDA out of memory");
	ck_assert_int_eq(pr->tasks[0].options[1].status, SATURN_OPT_OOM);
	t = saturn_profile_find(pr, 12);
	ck_assert_ptr_eq(t, &pr->tasks[0]);
	ck_assert_ptr_eq(saturn_profile_find(pr, 5), &pr->tasks[1]);
	ck_assert_ptr_null(saturn_profile_find(pr, 9));
	n = saturn_profile_options(t, &opts);
	ck_assert_int_eq(n, 2); /* measured + predicted, not oom */
	ck_assert_str_eq(opts[0].technique, "fsdp");
	ck_assert_str_eq(opts[1].technique, "ddp");
	ck_assert_str_eq(opts[1].klass, "h100");
	ck_assert_int_eq(opts[1].class_idx, -1);
	/* identity: the option's index in the profile task (the oom one in
	 * between is not an option), its params, the batch's own profile */
	ck_assert_int_eq(opts[0].prof_opt, 0);
	ck_assert_int_eq(opts[1].prof_opt, 2);
	ck_assert_str_eq(opts[0].source, "");
	ck_assert_ptr_nonnull(strstr(t->options[opts[0].prof_opt].params, "\"stages\":[1,2]"));
	for (int i = 0; i < n; i++)
		saturn_option_clear(&opts[i]);
	free(opts);
	ck_assert_int_eq(saturn_profile_options(&pr->tasks[1], &opts), 0);
	ck_assert_ptr_null(opts);
	saturn_profile_destroy(pr);
}
END_TEST

START_TEST(test_roundtrip)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(good, strlen(good), &err), *again;
	char *a, *b;

	ck_assert_ptr_nonnull(pr);
	a = saturn_profile_to_json(pr);
	ck_assert_ptr_nonnull(a);
	again = saturn_profile_parse(a, strlen(a), &err);
	ck_assert_msg(again != NULL, "%s\n%s", err.text, a);
	b = saturn_profile_to_json(again);
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(again->tasks[0].ntask_ids, 8);
	ck_assert_double_eq(again->hw[0].gemm_tflops, 612.25);
	ck_assert_ptr_nonnull(strstr(a, "\"gemm_tflops\""));
	ck_assert_str_eq(again->tasks[0].options[0].params, pr->tasks[0].options[0].params);
	free(a);
	free(b);
	saturn_profile_destroy(again);
	saturn_profile_destroy(pr);
}
END_TEST

/* gemm_tflops is optional: absent reads as 0 (not measured) and 0 is not
 * written back. */
START_TEST(test_gemm_absent)
{
	static const char doc[] =
		"{\"format\": \"saturn-profile/1\", \"batch\": \"b\", \"hardware\": "
		"[{\"gpu_model\": \"x\", \"gpus\": 1}], \"tasks\": []}";
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(doc, strlen(doc), &err);
	char *a;

	ck_assert_msg(pr != NULL, "%s", err.text);
	ck_assert_double_eq(pr->hw[0].gemm_tflops, 0);
	a = saturn_profile_to_json(pr);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(strstr(a, "gemm_tflops"));
	free(a);
	saturn_profile_destroy(pr);
}
END_TEST

START_TEST(test_status_names)
{
	saturn_opt_status_t s;

	for (int i = SATURN_OPT_MEASURED; i <= SATURN_OPT_SKIPPED; i++) {
		ck_assert_ptr_nonnull(saturn_opt_status_name((saturn_opt_status_t)i));
		ck_assert_int_eq(saturn_opt_status_parse(saturn_opt_status_name((saturn_opt_status_t)i), &s), 0);
		ck_assert_int_eq(s, i);
	}
	ck_assert_ptr_null(saturn_opt_status_name((saturn_opt_status_t)99));
	ck_assert_int_eq(saturn_opt_status_parse("oops", &s), -1);
}
END_TEST

/* "skipped" (not measured on purpose, no time) reads, writes back and
 * never reaches the planner. */
START_TEST(test_skipped)
{
	static const char doc[] =
	    "{\"format\": \"saturn-profile/1\", \"batch\": \"b\", \"tasks\": "
	    "[{\"signature\": \"s\", \"task_ids\": [0], \"batches\": 10, "
	    "\"options\": [{\"technique\": \"single\", \"gpus\": 1, "
	    "\"sec_per_batch\": 1, \"status\": \"measured\"}, "
	    "{\"technique\": \"offload\", \"gpus\": 1, \"status\": "
	    "\"skipped\", \"reason\": \"never faster\"}]}]}";
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(doc, strlen(doc), &err), *back;
	saturn_option_t *opts;
	char *text;
	int n;

	ck_assert_msg(pr != NULL, "%s", err.text);
	ck_assert_int_eq(pr->tasks[0].options[1].status, SATURN_OPT_SKIPPED);
	ck_assert_str_eq(pr->tasks[0].options[1].reason, "never faster");
	n = saturn_profile_options(&pr->tasks[0], &opts);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(opts[0].technique, "single");
	saturn_option_clear(&opts[0]);
	free(opts);
	text = saturn_profile_to_json(pr);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "\"skipped\""));
	back = saturn_profile_parse(text, strlen(text), &err);
	ck_assert_msg(back != NULL, "%s", err.text);
	ck_assert_int_eq(back->tasks[0].options[1].status, SATURN_OPT_SKIPPED);
	free(text);
	saturn_profile_destroy(back);
	saturn_profile_destroy(pr);
}
END_TEST

#define HEAD "{\"format\": \"saturn-profile/1\", \"batch\": \"b\", "
#define T(ids, opts) HEAD "\"tasks\": [{\"signature\": \"s\", \"task_ids\": " ids ", \"batches\": 10, \"options\": [" opts "]}]}"
#define OK_OPT "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\"}"
static const struct bad_case {
	const char *doc;
	const char *expect1, *expect2;
} bad[] = {
	{"", "empty input", ""},
	{"{\"format\": \"saturn-profile/1\", \"batch\": \"b\", \"tasks\": [", "truncated", ""},
	{"{\"format\": \"saturn-profile/0\", \"batch\": \"b\", \"tasks\": []}", "format: unsupported", ""},
	{"{\"format\": \"saturn-profile/1\", \"tasks\": []}", "batch: missing", ""},
	{HEAD "\"tasks\": 3}", "tasks: must be an array", ""},
	{HEAD "\"created\": -1, \"tasks\": []}", "created", ">= 0"},
	{T("\"0-\"", OK_OPT), "tasks[0] (s).task_ids", "range"},
	{T("\"7-3\"", OK_OPT), "tasks[0] (s).task_ids", "range"},
	{T("\"1,,2\"", OK_OPT), "tasks[0] (s).task_ids", "range"},
	{T("\"0-99999999999\"", OK_OPT), "tasks[0] (s).task_ids", "range"},
	{T("\"0-1:0\"", OK_OPT), "tasks[0] (s).task_ids", "range"},
	{T("[1, -2]", OK_OPT), "tasks[0] (s).task_ids[1]", "integer"},
	{T("[1, 1.5]", OK_OPT), "tasks[0] (s).task_ids[1]", "integer"},
	{T("[]", OK_OPT), "tasks[0] (s).task_ids", "at least one"},
	{T("[1, 1]", OK_OPT), "tasks[0] (s).task_ids", "array task 1 listed twice"},
	{T("{}", OK_OPT), "tasks[0] (s).task_ids", "array of integers"},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"status\": \"measured\"}"), "options[0].sec_per_batch: missing", ""},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0, \"status\": \"predicted\"}"), "options[0].sec_per_batch", "> 0"},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"great\"}"), "options[0].status", "unknown status \"great\""},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1}"), "options[0].status: missing", ""},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\", \"params\": [1]}"), "options[0].params", "object"},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\", \"peak_mem_mb\": NaN}"), "options[0].peak_mem_mb", "finite"},
	{T("[1]", OK_OPT ", " OK_OPT), "options[1]", "listed twice"},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 99, \"sec_per_batch\": 1, \"status\": \"measured\"}"), "tasks[0] (s).options[0].gpus", "integer"},
	/* the planner's limits (model.h) */
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 2e11, \"status\": \"measured\"}"), "tasks[0] (s).options[0]: batches x sec_per_batch = 10 x 2e+11 s", "beyond the limit"},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1e13, \"status\": \"predicted\"}"), "options[0].sec_per_batch: 1e+13 s is beyond the limit", ""},
	{T("[1]", "{\"technique\": \"abcdefghijklmnopqrstuvwxyz0123456\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\"}"), "options[0].technique", ""},
	{HEAD "\"tasks\": [{\"signature\": \"s\", \"task_ids\": [1], \"batches\": 1e13, \"options\": []}]}", "tasks[0] (s).batches: 1e+13 is beyond the limit", ""},
	{HEAD "\"tasks\": [{\"signature\": \"s\", \"task_ids\": [1], \"batches\": 1, \"options\": []},"
	      "{\"signature\": \"s\", \"task_ids\": [2], \"batches\": 1, \"options\": []}]}", "tasks[1].signature", "duplicate"},
	{HEAD "\"tasks\": [{\"signature\": \"s\", \"task_ids\": \"0-4\", \"batches\": 1, \"options\": []},"
	      "{\"signature\": \"t\", \"task_ids\": [4], \"batches\": 1, \"options\": []}]}", "task_ids", "array task 4 listed twice"},
#define HW(x) HEAD "\"hardware\": [" x "], \"tasks\": []}"
	{HW("{\"gpus\": 2}"), "hardware[0].gpu_model: missing", ""},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"link_gbs\": [[0, 1]]}"), "hardware[0].link_gbs", "2 x 2"},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"link_gbs\": [[0, 1], [1]]}"), "hardware[0].link_gbs[1]", ""},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"link_gbs\": [[0, 1], [1, -3]]}"), "hardware[0].link_gbs[1][1]", ""},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"link_gbs\": [[0, 1], [1, \"a\"]]}"), "hardware[0].link_gbs[1][1]", "number"},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"nccl\": [{\"gpus\": 4}]}"), "hardware[0].nccl[0].gpus", ""},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"nccl\": [{\"gpus\": 2, \"allreduce_busbw_gbs\": Infinity}]}"), "hardware[0].nccl[0].allreduce_busbw_gbs", "finite"},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"gemm_tflops\": -1}"), "hardware[0].gemm_tflops", ">= 0"},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"gemm_tflops\": \"fast\"}"), "hardware[0].gemm_tflops", "number"},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2, \"gemm_tflops\": NaN}"), "hardware[0].gemm_tflops", "finite"},
	{HW("{\"gpu_model\": \"x\", \"gpus\": 2}, {\"gpu_model\": \"y\", \"gpus\": 2}"), "hardware[1].class", "twice"},
	/* text from a user's file that reaches logs, reasons and records
	 * (safetext.h): refused with the field and the byte named, the byte
	 * never echoed (doc/security.md, "Clean text") */
	{T("[1]", "{\"technique\": \"x\\nerror: forged line by mallory\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\"}"),
	 "tasks[0] (s).options[0].technique: character 0x0a at offset 1 is not allowed", "a name"},
	{T("[1]", "{\"technique\": \"ddp;x=1\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\"}"), "options[0].technique: character 0x3b at offset 3", ""},
	{T("[1]", "{\"technique\": \"-rf\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\"}"), "options[0].technique: character 0x2d at offset 0", ""},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"status\": \"oom\", \"reason\": \"a\\u001b[2Jb\"}"), "options[0].reason: character 0x1b at offset 1", "printable"},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\\r\"}"), "options[0].status: character 0x0d", ""},
	{T("[1]", "{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"status\": \"measured\", \"params\": {\"k\": \"\u00e9\"}}"), "options[0].params: character 0xc3", ""},
	{HEAD "\"tasks\": [{\"signature\": \"s\\nerror: x\", \"task_ids\": [1], \"batches\": 1, \"options\": []}]}", "tasks[0].signature: character 0x0a at offset 1", ""},
	{HEAD "\"tasks\": [{\"signature\": \"s\", \"class\": \"a b\", \"task_ids\": [1], \"batches\": 1, \"options\": []}]}", "tasks[0] (s).class: character 0x20", ""},
	{"{\"format\": \"saturn-profile/1\", \"batch\": \"b\\u0007\", \"tasks\": []}", "batch: character 0x07 at offset 1", ""},
	{"{\"format\": \"saturn-profile/1\\nerror: x\", \"batch\": \"b\", \"tasks\": []}", "format: unsupported value, not one line", ""},
	{HW("{\"gpu_model\": \"x\\tgpu\", \"gpus\": 2}"), "hardware[0].gpu_model: character 0x09", ""},
	{HW("{\"gpu_model\": \"x\", \"node\": \"n\\n1\", \"gpus\": 2}"), "hardware[0].node: character 0x0a", ""},
	{HW("{\"gpu_model\": \"x\", \"interconnect\": \"nv\\u007flink\", \"gpus\": 2}"), "hardware[0].interconnect: character 0x7f", ""},
	{HW("{\"gpu_model\": \"x\", \"class\": \"h100/x\", \"gpus\": 2}"), "hardware[0].class: character 0x2f", ""},
};

START_TEST(test_bad)
{
	const struct bad_case *c = &bad[_i];
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(c->doc, strlen(c->doc), &err);

	ck_assert_msg(pr == NULL, "accepted: %s", c->doc);
	ck_assert_msg(strstr(err.text, c->expect1) && strstr(err.text, c->expect2),
		      "message \"%s\" lacks \"%s\"/\"%s\" for %s", err.text,
		      c->expect1, c->expect2, c->doc);
	/* the message is logged: it never carries a byte of the bad text */
	ck_assert_msg(saturn_text_ok(err.text, SATURN_TEXT_LINE), "message not clean text: %s",
		      err.text);
}
END_TEST

START_TEST(test_load)
{
	char dir[] = "/tmp/saturn-profile-XXXXXX", path[96], link_[96], fifo[96], big[96];
	saturn_error_t err = {{0}};
	saturn_profile_t *pr;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/profile.json", dir);
	snprintf(link_, sizeof(link_), "%s/link.json", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.json", dir);
	snprintf(big, sizeof(big), "%s/big.json", dir);
	ck_assert_int_eq(saturn_write_file_atomic(path, good, strlen(good), &err), 0);
	pr = saturn_profile_load(path, (long)getuid(), &err);
	ck_assert_msg(pr != NULL, "%s", err.text);
	saturn_profile_destroy(pr);
	pr = saturn_profile_load(path, -1, &err);
	ck_assert_ptr_nonnull(pr);
	saturn_profile_destroy(pr);

	ck_assert_ptr_null(saturn_profile_load(path, (long)getuid() + 1, &err));
	ck_assert_msg(strstr(err.text, path) && strstr(err.text, "owned by"), "%s", err.text);

	ck_assert_int_eq(symlink(path, link_), 0);
	ck_assert_ptr_null(saturn_profile_load(link_, -1, &err));
	ck_assert_msg(strstr(err.text, "symbolic link"), "%s", err.text);

	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_ptr_null(saturn_profile_load(fifo, -1, &err)); /* no hang */
	ck_assert_msg(strstr(err.text, "not a regular file"), "%s", err.text);

	fd = open(big, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, SATURN_PROFILE_MAX_BYTES + 1), 0);
	close(fd);
	ck_assert_ptr_null(saturn_profile_load(big, -1, &err));
	ck_assert_msg(strstr(err.text, "larger than"), "%s", err.text);

	ck_assert_ptr_null(saturn_profile_load(dir, -1, &err));
	ck_assert_ptr_null(saturn_profile_load("/nonexistent/p.json", -1, &err));
	ck_assert_msg(strstr(err.text, "/nonexistent/p.json"), "%s", err.text);

	/* parse errors carry the path */
	ck_assert_int_eq(saturn_write_file_atomic(path, "{}", 2, &err), 0);
	ck_assert_ptr_null(saturn_profile_load(path, -1, &err));
	ck_assert_msg(strncmp(err.text, path, strlen(path)) == 0 && strstr(err.text, "format"), "%s", err.text);

	unlink(path);
	unlink(link_);
	unlink(fifo);
	unlink(big);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("profile");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_gemm_absent);
	tcase_add_test(tc, test_status_names);
	tcase_add_test(tc, test_skipped);
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_load);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
