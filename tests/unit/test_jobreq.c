/* test_jobreq.c - the rules of a Saturn job request (lib/model/jobreq.c): batch
 * names, default names, TRES request strings in every form Slurm writes
 * them; and the lookup in "NAME=value" arrays (lib/model/envarray.c). */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "envarray.h"
#include "jobreq.h"

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
	{"..", 0, "must not start"},
	{"a..b", 1, NULL},
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

/* Every form Slurm 22.05.8 writes into tres_per_node (and the other
 * tres_per_X): sbatch --gres=X becomes gres_prepend_tres_type(X) ("gres:"
 * before each entry, "gres:gres:" folded); --gpus-per-node=X and
 * --gpus=X become xfmt_tres("gres:gpu", X); slurmctld's TRES strings use
 * "gres/NAME=COUNT"; sched/saturn releases with "gres:gpu:N". */
static const struct tres_case {
	const char *tres;
	int rc, gpus, other;
	const char *first_other;
} tres_cases[] = {
	/* nothing asked for */
	{NULL, 0, 0, 0, ""},
	{"", 0, 0, 0, ""},
	/* --gres=gpu:2, --gpus-per-node=2, --gres=gres:gpu:2 */
	{"gres:gpu:2", 0, 2, 0, ""},
	/* --gres=gpu: one GPU */
	{"gres:gpu", 0, 1, 0, ""},
	/* --gres=gpu:a100:3, --gpus-per-node=a100:3 */
	{"gres:gpu:a100:3", 0, 3, 0, ""},
	/* --gres=gpu:a100: one GPU of the type */
	{"gres:gpu:a100", 0, 1, 0, ""},
	/* a type that starts with a digit (MIG) is a type, as in Slurm */
	{"gres:gpu:3g.20gb", 0, 1, 0, ""},
	{"gres:gpu:3g.20gb:2", 0, 2, 0, ""},
	{"gres:gpu:2x", 0, 1, 0, ""},
	/* count suffixes (x1024) */
	{"gres:gpu:1k", 0, 1024, 0, ""},
	{"gres:gpu:a100:1K", 0, 1024, 0, ""},
	/* the TRES form */
	{"gres/gpu=4", 0, 4, 0, ""},
	{"gres/gpu:a100=2", 0, 2, 0, ""},
	{"gres/gpu:4", 0, 4, 0, ""},
	/* bare entries */
	{"gpu:8", 0, 8, 0, ""},
	{"gpu", 0, 1, 0, ""},
	/* comma lists: --gres=gpu:2,mps:100; --gres=mps:10 --gpus-per-node=2 */
	{"gres:gpu:2,gres:mps:100", 0, 2, 1, "mps:100"},
	{"gres:mps:10,gres:gpu:2", 0, 2, 1, "mps:10"},
	{"gres:gpu:a100:1,gres:gpu:v100:2", 0, 3, 0, ""},
	{"gres:shard:1", 0, 0, 1, "shard:1"},
	{"gres:gpus:2", 0, 0, 1, "gpus:2"},
	{"gres:gpu:2,", 0, 2, 0, ""},
	/* Slurm 23.11 and later: -c 2 puts cpu=2 into tres_per_task, beside
	 * the gres/ form of GPUs (a CPU count, neither GPU nor other) */
	{"cpu=2", 0, 0, 0, ""},
	{"cpu=2,gres/gpu:1", 0, 1, 0, ""},
	{"gres/gpu:1,cpu=4", 0, 1, 0, ""},
	{"gres/cpu=2", 0, 0, 1, "cpu=2"},
	{"cpu:2", 0, 0, 1, "cpu:2"},
	{"mem=2", 0, 0, 1, "mem=2"},
	/* --gres=none */
	{"none", 0, 0, 1, "none"},
	/* malformed */
	{"gres:gpu:0", -1, 0, 0, ""},
	{"gres:gpu:a100:0", -1, 0, 0, ""},
	{"gres/gpu=0", -1, 0, 0, ""},
	{"gres/gpu=", -1, 0, 0, ""},
	{"gres/gpu=x", -1, 0, 0, ""},
	{"gres:gpu:a100:x", -1, 0, 0, ""},
	{"gres:gpu:", -1, 0, 0, ""},
	{"gres:gpu::2", -1, 0, 0, ""},
	{"gres:gpu:a:b:2", -1, 0, 0, ""},
	{"gres:gpu:a:2=3", -1, 0, 0, ""},
	{"gres::2", -1, 0, 0, ""},
	{"gres:", -1, 0, 0, ""},
	{",gres:gpu:1", -1, 0, 0, ""},
	{"gres:gpu:1,,gres:gpu:1", -1, 0, 0, ""},
	/* bounds and overflow */
	{"gres:gpu:1000000", 0, 1000000, 0, ""},
	{"gres:gpu:1000001", -1, 0, 0, ""},
	{"gres:gpu:99999999999999999999", -1, 0, 0, ""},
	{"gres:gpu:976k", 0, 999424, 0, ""},
	{"gres:gpu:977k", -1, 0, 0, ""},
	{"gres:gpu:1g", -1, 0, 0, ""},
	{"gres:gpu:9999999999999g", -1, 0, 0, ""},
	{"gres:gpu:9223372036854775807k", -1, 0, 0, ""},
	{"gres:gpu:600000,gres:gpu:400000", 0, 1000000, 0, ""},
	{"gres:gpu:600000,gres:gpu:400001", -1, 0, 0, ""},
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

/* --- "NAME=value" arrays ---------------------------------------------------- */

START_TEST(test_env_lookup)
{
	char *env[] = {"SATURN_BATCHX=no", NULL, "SATURN_BATCH", "SATURN_BATCH=b1",
		       "SATURN_BATCH=b2", "A=", "B==x", "saturn_batch=lower"};
	size_t n = sizeof(env) / sizeof(env[0]);

	ck_assert_int_eq(saturn_env_index(env, n, "SATURN_BATCH"), 3);
	ck_assert_str_eq(saturn_env_value(env, n, "SATURN_BATCH"), "b1");
	ck_assert_str_eq(saturn_env_value(env, n, "SATURN_BATCHX"), "no");
	ck_assert_str_eq(saturn_env_value(env, n, "A"), "");
	ck_assert_str_eq(saturn_env_value(env, n, "B"), "=x");
	ck_assert_str_eq(saturn_env_value(env, n, "saturn_batch"), "lower");
	/* a prefix of a name is not the name */
	ck_assert_ptr_null(saturn_env_value(env, n, "SATURN"));
	ck_assert_ptr_null(saturn_env_value(env, n, "SATURN_BATC"));
	/* only the first n entries are looked at */
	ck_assert_int_eq(saturn_env_index(env, 3, "SATURN_BATCH"), -1);
	ck_assert_ptr_null(saturn_env_value(env, 0, "A"));
	/* bad arguments */
	ck_assert_int_eq(saturn_env_index(NULL, 4, "A"), -1);
	ck_assert_int_eq(saturn_env_index(env, n, NULL), -1);
	ck_assert_int_eq(saturn_env_index(env, n, ""), -1);
	ck_assert_int_eq(saturn_env_index(env, n, "B="), -1);
	ck_assert_ptr_null(saturn_env_value(env, n, "B=="));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jobreq");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_name_check, 0,
			    sizeof(name_cases) / sizeof(name_cases[0]));
	tcase_add_loop_test(tc, test_name_default, 0,
			    sizeof(default_cases) / sizeof(default_cases[0]));
	tcase_add_loop_test(tc, test_tres_parse, 0,
			    sizeof(tres_cases) / sizeof(tres_cases[0]));
	tcase_add_test(tc, test_env_lookup);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
