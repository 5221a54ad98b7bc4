/* test_planrec.c - lib/sched/planrec.c: the plan record a released task
 * carries in its AdminComment or Comment (format, merging with text already
 * there, exactly one record after repeated releases, the observed speed
 * added and replaced, the planned speed of a task's option) and the
 * saturn_record setting. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planrec.h"
#include "sched_core.h"

#include "sched_fixture.h"

START_TEST(test_format)
{
	char buf[SATURN_PLANREC_MAX];
	saturn_planrec_t r = {.batch = "lr-sweep",
			      .task_id = 3,
			      .technique = "fsdp",
			      .gpus = 4,
			      .node = "n2",
			      .plan_id = "p17-2",
			      .pred_spb = 0.25};

	saturn_planrec_format(&r, buf, sizeof(buf));
	ck_assert_str_eq(
	    buf,
	    "saturn: batch=lr-sweep task=3 technique=fsdp gpus=4 node=n2 plan=p17-2 pred_spb=0.25");
	r.task_id = -1;
	r.pred_spb = 0;
	r.obs_spb = 1.5;
	saturn_planrec_format(&r, buf, sizeof(buf));
	ck_assert_str_eq(
	    buf, "saturn: batch=lr-sweep technique=fsdp gpus=4 node=n2 plan=p17-2 obs_spb=1.5");
	r.obs_spb = NAN;
	r.plan_id = NULL;
	saturn_planrec_format(&r, buf, sizeof(buf));
	ck_assert_str_eq(buf, "saturn: batch=lr-sweep technique=fsdp gpus=4 node=n2 plan=?");
	/* truncated, still terminated */
	ck_assert_uint_eq(saturn_planrec_format(&r, buf, 12), 11);
	ck_assert_str_eq(buf, "saturn: bat");
}
END_TEST

static const struct {
	const char *old, *want;
} merge_cases[] = {
    {NULL, "saturn: R2"},
    {"", "saturn: R2"},
    {"saturn: R1", "saturn: R2"},
    {"my run", "my run; saturn: R2"},
    {"my run  ", "my run; saturn: R2"},
    {"my run; saturn: R1 obs_spb=3", "my run; saturn: R2"},
    /* the user's text may mention saturn: only the last segment is ours */
    {"a; saturn: x; b; saturn: R1", "a; saturn: x; b; saturn: R2"},
    {"saturnine", "saturnine; saturn: R2"},
    {"saturn: notes; saturn: R1", "saturn: notes; saturn: R2"},
};

START_TEST(test_merge)
{
	char *m = saturn_planrec_merge(merge_cases[_i].old, "saturn: R2");

	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m, merge_cases[_i].want);
	/* merging again keeps exactly one record */
	{
		char *again = saturn_planrec_merge(m, "saturn: R2");

		ck_assert_str_eq(again, merge_cases[_i].want);
		free(again);
	}
	free(m);
}
END_TEST

START_TEST(test_observe)
{
	char *t;

	ck_assert_ptr_null(saturn_planrec_observe(NULL, 1.0));
	ck_assert_ptr_null(saturn_planrec_observe("no record here", 1.0));
	ck_assert_ptr_null(saturn_planrec_observe("saturn: batch=b plan=p", 0));
	ck_assert_ptr_null(saturn_planrec_observe("saturn: batch=b plan=p", INFINITY));
	t = saturn_planrec_observe("saturn: batch=b plan=p pred_spb=0.5", 0.55);
	ck_assert_str_eq(t, "saturn: batch=b plan=p pred_spb=0.5 obs_spb=0.55");
	free(t);
	t = saturn_planrec_observe("mine; saturn: batch=b plan=p obs_spb=0.55", 0.61);
	ck_assert_str_eq(t, "mine; saturn: batch=b plan=p obs_spb=0.61");
	free(t);
	/* unchanged at the precision written: nothing to do */
	ck_assert_ptr_null(saturn_planrec_observe("saturn: batch=b obs_spb=0.61", 0.610001));
	/* an "obs_spb=" in the user's text before the record is not ours */
	t = saturn_planrec_observe("x obs_spb=9; saturn: batch=b", 2);
	ck_assert_str_eq(t, "x obs_spb=9; saturn: batch=b obs_spb=2");
	free(t);
}
END_TEST

START_TEST(test_predicted)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_sched_build_t b = {0};
	saturn_task_t t = {0};
	saturn_decision_t d = {0};
	int job_of_task[2] = {5, 7};

	for (int k = 0; k < 2; k++) {
		memset(&t, 0, sizeof(t));
		t.id = strdup(k ? "1_1" : "1_0");
		t.batches = 10;
		t.noptions = 4;
		t.options = calloc(4, sizeof(*t.options));
		t.options[0].technique = strdup("ddp");
		t.options[0].gpus = 2;
		t.options[0].sec_per_batch = 0.5 + k;
		t.options[0].source = strdup("");
		t.options[1].technique = strdup("fsdp");
		t.options[1].gpus = 4;
		t.options[1].sec_per_batch = 0.3 + k;
		t.options[1].source = strdup("");
		/* ddp on 2 GPUs again, from class a100's own profile */
		t.options[2].technique = strdup("ddp");
		t.options[2].gpus = 2;
		t.options[2].sec_per_batch = 0.2 + k;
		t.options[2].klass = strdup("a100");
		t.options[2].source = strdup("a100");
		/* the user's request: no speed behind it */
		t.options[3].technique = strdup("user");
		t.options[3].gpus = 2;
		t.options[3].sec_per_batch = 1;
		ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);
	}
	b.problem = p;
	b.job_of_task = job_of_task;
	d.job = 7, d.task = 1, d.option = 1;
	ck_assert_double_eq_tol(saturn_planrec_predicted_spb(&b, &d), 1.3, 1e-12);
	d.job = 5, d.task = 0, d.option = 0;
	ck_assert_double_eq_tol(saturn_planrec_predicted_spb(&b, &d), 0.5, 1e-12);
	/* the option the plan chose, not the first of its technique and
	 * GPUs (the batch profile's): the class's own speed */
	d.option = 2;
	ck_assert_double_eq_tol(saturn_planrec_predicted_spb(&b, &d), 0.2, 1e-12);
	d.option = 3;
	ck_assert_double_eq(saturn_planrec_predicted_spb(&b, &d), 0);
	d.option = -1;
	ck_assert_double_eq(saturn_planrec_predicted_spb(&b, &d), 0);
	d.option = 4;
	ck_assert_double_eq(saturn_planrec_predicted_spb(&b, &d), 0);
	d.option = 0, d.task = 2;
	ck_assert_double_eq(saturn_planrec_predicted_spb(&b, &d), 0);
	d.task = 0;
	ck_assert_double_eq(saturn_planrec_predicted_spb(NULL, &d), 0);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_parse)
{
	saturn_planrec_read_t r;
	saturn_error_t err = {{0}};
	char buf[SATURN_PLANREC_MAX];
	saturn_planrec_t w = {.batch = "lr-sweep",
			      .task_id = 12,
			      .technique = "fsdp",
			      .gpus = 4,
			      .node = "n2",
			      .plan_id = "p17-2",
			      .pred_spb = 0.25,
			      .obs_spb = 0.3};

	/* what format writes, parse reads back, behind a user's text */
	snprintf(buf, sizeof(buf), "my note; ");
	saturn_planrec_format(&w, buf + strlen(buf), sizeof(buf) - strlen(buf));
	ck_assert_int_eq(saturn_planrec_parse(buf, &r, &err), 0);
	ck_assert_str_eq(r.batch, "lr-sweep");
	ck_assert_int_eq(r.task_id, 12);
	ck_assert_str_eq(r.technique, "fsdp");
	ck_assert_int_eq(r.gpus, 4);
	ck_assert_str_eq(r.node, "n2");
	ck_assert_str_eq(r.plan_id, "p17-2");
	ck_assert_double_eq_tol(r.pred_spb, 0.25, 1e-12);
	ck_assert_double_eq_tol(r.obs_spb, 0.3, 1e-12);
	/* optional fields absent, unknown keys ignored */
	ck_assert_int_eq(
	    saturn_planrec_parse("saturn: batch=b technique=ddp gpus=2 future=1", &r, &err), 0);
	ck_assert_int_eq(r.task_id, -1);
	ck_assert_double_eq(r.pred_spb, 0);
	ck_assert_int_eq(saturn_planrec_parse("nothing", &r, &err), -1);
	ck_assert_int_eq(saturn_planrec_parse(NULL, &r, &err), -1);
	ck_assert_int_eq(saturn_planrec_parse("saturn: batch=b gpus=x", &r, &err), -1);
	ck_assert_msg(strstr(err.text, "gpus=x"), "%s", err.text);
	ck_assert_int_eq(saturn_planrec_parse("saturn: batch=b obs_spb=-1", &r, &err), -1);
	ck_assert_int_eq(saturn_planrec_parse("saturn: technique=ddp", &r, &err), -1);
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, "saturn: batch=", 14);
	buf[400] = '\0';
	ck_assert_int_eq(saturn_planrec_parse(buf, &r, &err), -1);
}
END_TEST

START_TEST(test_setting)
{
	saturn_sched_settings_t ss;

	saturn_sched_settings_init(&ss);
	ck_assert_int_eq(ss.record, SATURN_PLANREC_ADMIN_COMMENT);
	fx_setting(&ss, "saturn_record=comment", 0, NULL);
	ck_assert_int_eq(ss.record, SATURN_PLANREC_COMMENT);
	ck_assert_str_eq(saturn_planrec_field_name(ss.record), "comment");
	fx_setting(&ss, "saturn_record=sacct", 1,
		   "saturn_record=sacct: must be admin_comment, comment or none");
	ck_assert_int_eq(ss.record, SATURN_PLANREC_COMMENT);
	fx_setting(&ss, "saturn_record=none", 0, NULL);
	ck_assert_int_eq(ss.record, SATURN_PLANREC_NONE);
	ck_assert_str_eq(saturn_planrec_field_name(ss.record), "none");
	fx_setting(&ss, "saturn_record=admin_comment", 0, NULL);
	ck_assert_str_eq(saturn_planrec_field_name(ss.record), "admin_comment");
	saturn_sched_settings_free(&ss);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_format);
	tcase_add_loop_test(tc, test_merge, 0, sizeof(merge_cases) / sizeof(merge_cases[0]));
	tcase_add_test(tc, test_observe);
	tcase_add_test(tc, test_predicted);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_setting);
}

int main(void)
{
	return fx_run_suite("planrec", 0, add_tests);
}
