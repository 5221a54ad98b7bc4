/* test_internode.c - predicted multi-node options from an inter-node
 * bandwidth (lib/job/internode.c): the ring model against a profile whose
 * one-node times follow the scaling model exactly, what is left out, and
 * failure leaving the profile unchanged. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internode.h"
#include "profile.h"

/* One-node truth: t(g) = A/g + B + C·V(g)/bw(g) (V: 2(g-1)/g, fsdp 3(g-1)/g) */
#define A 8.0
#define B 0.05
#define C 1.5 /* GB */
static const double ar_g[9] = {0, 0, 100, 0, 130, 0, 0, 0, 150};
static const double ag_g[9] = {0, 0, 80, 0, 100, 0, 0, 0, 120};
static int flat; /* one bandwidth at every count: 150 / 120 */

static double AR(int g)
{
	return flat ? 150 : ar_g[g];
}

static double AG(int g)
{
	return flat ? 120 : ag_g[g];
}

static double truth(int fsdp, int N, double bw)
{
	double v = N < 2 ? 0 : (fsdp ? 3.0 : 2.0) * (N - 1) / N;

	return A / N + B + C * v / bw;
}

/* A profile of one task: ddp and fsdp measured at 1 (ddp), 2, 4, 8 GPUs,
 * a pipeline and an offload option, a measured ddp 8x2 option of the
 * user's own (sec 0.123), and nccl bandwidths unless nonccl. */
static saturn_profile_t *make(int nonccl)
{
	char buf[8192], opt[4096] = "";
	saturn_error_t err = {{0}};
	saturn_profile_t *pr;
	size_t o = 0;
	char nccl[512];

	snprintf(nccl, sizeof(nccl),
		 "{\"gpus\": 2, \"allreduce_busbw_gbs\": %g, "
		 "\"allgather_busbw_gbs\": %g},"
		 "{\"gpus\": 4, \"allreduce_busbw_gbs\": %g, "
		 "\"allgather_busbw_gbs\": %g},"
		 "{\"gpus\": 8, \"allreduce_busbw_gbs\": %g, "
		 "\"allgather_busbw_gbs\": %g}",
		 AR(2), AG(2), AR(4), AG(4), AR(8), AG(8));

	for (int g = 1; g <= 8; g *= 2) {
		o += snprintf(opt + o, sizeof(opt) - o,
			      "{\"technique\": \"ddp\", \"gpus\": %d, "
			      "\"sec_per_batch\": %.17g, \"peak_mem_mb\": 40000, "
			      "\"status\": \"measured\"},",
			      g, truth(0, g, g > 1 ? AR(g) : 1));
		if (g > 1)
			o += snprintf(opt + o, sizeof(opt) - o,
				      "{\"technique\": \"fsdp\", \"gpus\": %d, "
				      "\"sec_per_batch\": %.17g, \"peak_mem_mb\": "
				      "%d, \"status\": \"measured\"},",
				      g, truth(1, g, AG(g)), 64000 / g);
	}
	snprintf(buf, sizeof(buf),
		 "{\"format\": \"saturn-profile/1\", \"batch\": \"b\", "
		 "\"created\": 1,\n \"hardware\": [{\"node\": \"n1\", \"gpu_model\": "
		 "\"x\", \"gpus\": 8, \"gpu_mem_mb\": 81000, \"interconnect\": "
		 "\"nvswitch\", \"nccl\": [%s]}],\n"
		 " \"tasks\": [{\"signature\": \"m/bs8\", \"task_ids\": \"0-3\", "
		 "\"batches\": 100, \"options\": [%s"
		 "{\"technique\": \"pipeline\", \"gpus\": 4, \"sec_per_batch\": 3, "
		 "\"status\": \"measured\"},"
		 "{\"technique\": \"pipeline\", \"gpus\": 8, \"sec_per_batch\": 2, "
		 "\"status\": \"measured\"},"
		 "{\"technique\": \"offload\", \"gpus\": 1, \"sec_per_batch\": 9, "
		 "\"status\": \"measured\"},"
		 "{\"technique\": \"ddp\", \"gpus\": 8, \"nodes\": 2, "
		 "\"sec_per_batch\": 0.123, \"status\": \"measured\"}]}]}\n",
		 nonccl ? "" : nccl,
		 opt);
	pr = saturn_profile_parse(buf, strlen(buf), &err);
	ck_assert_msg(pr != NULL, "%s", err.text);
	return pr;
}

static const saturn_profile_option_t *find(const saturn_profile_t *pr,
					   const char *tech, int g, int k)
{
	const saturn_profile_task_t *pt = &pr->tasks[0];

	for (int i = 0; i < pt->noptions; i++)
		if (!strcmp(pt->options[i].technique, tech) &&
		    pt->options[i].gpus == g &&
		    saturn_profile_option_nodes(&pt->options[i]) == k)
			return &pt->options[i];
	return NULL;
}

START_TEST(test_ring_model)
{
	saturn_profile_t *pr = make(0);
	saturn_internode_t in = {25.0, 4, "saturn_internode_bw"};
	saturn_error_t err = {{0}};
	const saturn_profile_option_t *o;
	int n0 = pr->tasks[0].noptions, added;

	added = saturn_profile_predict_nodes(pr, &in, &err);
	ck_assert_msg(added > 0, "%s", err.text);
	ck_assert_int_eq(pr->tasks[0].noptions, n0 + added);
	/* ddp on 2 x 4 and 4 x 4, 3 x 8, 4 x 8 (8 x 2 is the user's) */
	for (int k = 2; k <= 4; k++) {
		for (int g = 4; g <= 8; g *= 2) {
			int fsdp;

			for (fsdp = 0; fsdp < 2; fsdp++) {
				o = find(pr, fsdp ? "fsdp" : "ddp", g, k);
				if (!fsdp && g == 8 && k == 2) {
					ck_assert_ptr_nonnull(o);
					ck_assert_int_eq(o->status,
							 SATURN_OPT_MEASURED);
					ck_assert(o->sec_per_batch == 0.123);
					continue;
				}
				ck_assert_msg(o != NULL, "%s %dx%d missing",
					      fsdp ? "fsdp" : "ddp", k, g);
				ck_assert_int_eq(o->status, SATURN_OPT_PREDICTED);
				ck_assert_double_eq_tol(
				    o->sec_per_batch, truth(fsdp, k * g, 25.0),
				    1e-6 * truth(fsdp, k * g, 25.0));
				ck_assert_ptr_nonnull(o->reason);
				ck_assert_ptr_nonnull(
				    strstr(o->reason, "25 GB/s"));
				ck_assert_ptr_nonnull(
				    strstr(o->reason, "saturn_internode_bw"));
				ck_assert(o->peak_mem_mb ==
					  (fsdp ? 64000.0 / (k * g) : 40000));
			}
		}
	}
	/* g below half the largest, pipelines and one-GPU techniques: none */
	ck_assert_ptr_null(find(pr, "ddp", 2, 2));
	ck_assert_ptr_null(find(pr, "ddp", 1, 2));
	ck_assert_ptr_null(find(pr, "pipeline", 8, 2));
	ck_assert_ptr_null(find(pr, "offload", 1, 2));
	ck_assert_ptr_null(find(pr, "ddp", 8, 5));
	/* predicted options are planner options, on their nodes */
	{
		saturn_option_t *opts = NULL;
		int n = saturn_profile_options(&pr->tasks[0], &opts), multi = 0;

		for (int i = 0; i < n; i++) {
			multi += opts[i].nodes > 1;
			saturn_option_clear(&opts[i]);
		}
		free(opts);
		ck_assert_int_eq(multi, added + 1);
	}
	/* the JSON keeps them */
	{
		char *js = saturn_profile_to_json(pr);
		saturn_profile_t *back =
		    saturn_profile_parse(js, strlen(js), &err);

		ck_assert_msg(back != NULL, "%s", err.text);
		o = find(back, "fsdp", 8, 4);
		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(o->status, SATURN_OPT_PREDICTED);
		saturn_profile_destroy(back);
		free(js);
	}
	/* a second call adds nothing */
	ck_assert_int_eq(saturn_profile_predict_nodes(pr, &in, &err), 0);
	saturn_profile_destroy(pr);
}
END_TEST

/* One bandwidth at every count: the size from the peak memory (ddp
 * 40000 MB / 8 = 5 GB; fsdp 8000 MB x 8 GPUs / 8 = 8 GB), a and b from the
 * fit (the intra-node constant 2C/150 moves from a to b). */
START_TEST(test_memory_size)
{
	saturn_profile_t *pr;
	saturn_internode_t in = {100.0, 2, "--internode-bw"};
	saturn_error_t err = {{0}};
	const saturn_profile_option_t *o;
	double a = A - 2 * C / 150, b = B + 2 * C / 150, want;

	flat = 1;
	pr = make(0);
	flat = 0;
	ck_assert_int_gt(saturn_profile_predict_nodes(pr, &in, &err), 0);
	o = find(pr, "ddp", 4, 2);
	ck_assert_ptr_nonnull(o);
	want = a / 8 + b + 5.0 * 2 * 7 / 8 / 100;
	ck_assert_double_eq_tol(o->sec_per_batch, want, 1e-6 * want);
	ck_assert_ptr_nonnull(strstr(o->reason, "peak memory"));
	ck_assert_ptr_nonnull(strstr(o->reason, "--internode-bw"));
	o = find(pr, "fsdp", 8, 2);
	ck_assert_ptr_nonnull(o);
	a = A - 3 * C / 120;
	b = B + 3 * C / 120;
	want = a / 16 + b + 8.0 * 3 * 15 / 16 / 100;
	ck_assert_double_eq_tol(o->sec_per_batch, want, 1e-6 * want);
	saturn_profile_destroy(pr);
}
END_TEST

START_TEST(test_slow_link_and_no_nccl)
{
	saturn_profile_t *pr = make(0);
	saturn_internode_t in = {0.05, 2, NULL};
	saturn_error_t err = {{0}};

	/* a link so slow that two nodes are slower than one: none */
	ck_assert_int_eq(saturn_profile_predict_nodes(pr, &in, &err), 0);
	saturn_profile_destroy(pr);
	/* without the one-node bus bandwidths c is no size: none */
	pr = make(1);
	in.gbs = 25;
	ck_assert_int_eq(saturn_profile_predict_nodes(pr, &in, &err), 0);
	saturn_profile_destroy(pr);
}
END_TEST

START_TEST(test_bad_arguments)
{
	saturn_profile_t *pr = make(0);
	saturn_internode_t in = {0, 2, NULL};
	saturn_error_t err = {{0}};
	int n0 = pr->tasks[0].noptions;

	ck_assert_int_eq(saturn_profile_predict_nodes(pr, &in, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "inter-node bandwidth"));
	in.gbs = NAN;
	ck_assert_int_eq(saturn_profile_predict_nodes(pr, &in, &err), -1);
	in.gbs = 25;
	in.max_nodes = 1;
	ck_assert_int_eq(saturn_profile_predict_nodes(pr, &in, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "nodes"));
	ck_assert_int_eq(pr->tasks[0].noptions, n0);
	saturn_profile_destroy(pr);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("internode");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_ring_model);
	tcase_add_test(tc, test_memory_size);
	tcase_add_test(tc, test_slow_link_and_no_nccl);
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
