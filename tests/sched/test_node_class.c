/* test_node_class.c - node classes (lib/sched/node_class.c) and how the
 * scheduler core uses them, table-driven: class names derived from the
 * hardware, the admin's saturn_node_classes rules, --constraint
 * expressions, the typed GRES string of a release, the GPU type of a
 * TRES request; and on a two-class snapshot (2 "a100" PCIe nodes, 2
 * "h100" NVLink nodes): a typed request planned only on its type, a
 * constraint honoured, options measured on a class kept to that class,
 * the decisions' GRES typed. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_policy.h"
#include "jobreq.h"
#include "node_class.h"
#include "planner.h"
#include "planrec.h"
#include "sched_core.h"

#include "sched_fixture.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const struct derive_case {
	const char *types;
	int gpus;
	const char *link, *features, *want;
} derive_cases[] = {
	{"a100", 4, "pcie", "a100,pcie", "a100x4-pcie"},
	{"h100", 8, "nvlink", "h100,nvlink,ib", "h100x8-nvlink+ib"},
	{"", 2, "", "", "gpux2"},
	{NULL, 2, NULL, NULL, "gpux2"},
	{"a100,h100", 4, "", "", "a100+h100x4"},
	{"a 100", 1, "", "x/y", "a_100x1+x_y"},
};

START_TEST(test_derive)
{
	const struct derive_case *c = &derive_cases[_i];
	char buf[SATURN_CLASS_NAME_MAX + 1];

	saturn_node_class_derive(buf, sizeof(buf), c->types, c->gpus, c->link, c->features);
	ck_assert_str_eq(buf, c->want);
}
END_TEST

START_TEST(test_derive_cut)
{
	char buf[12];

	saturn_node_class_derive(buf, sizeof(buf), "verylongtype", 8, "nvlink", "");
	ck_assert_str_eq(buf, "verylongtyp");
	saturn_node_class_derive(buf, 4, "a100", 8, "", "");
	ck_assert_str_eq(buf, "");
}
END_TEST

static const struct rules_case {
	const char *text;
	int ok, count;
	const char *err; /* substring */
	/* a node to classify with the rules */
	const char *node, *types, *features, *want;
} rules_cases[] = {
	{"fast:h100;slow:a100+v100", 1, 2, NULL, "n3", "h100", "", "fast"},
	{"fast:h100;slow:a100+v100", 1, 2, NULL, "n1", "v100", "", "slow"},
	{"fast:h100;slow:a100+v100", 1, 2, NULL, "n9", "l40", "", "l40x2"},
	{"big:bigmem", 1, 1, NULL, "n1", "a100", "bigmem,ib", "big"},
	{"one:n7", 1, 1, NULL, "n7", "a100", "", "one"},
	{"", 1, 0, NULL, "n1", "a100", "", "a100x2"},
	{"a:x;;b:y;", 1, 2, NULL, "n1", "y", "", "b"},
	{"fast", 0, 0, "has no ':MATCH'", NULL, NULL, NULL, NULL},
	{"fa st:h100", 0, 0, "class name 'fa st'", NULL, NULL, NULL, NULL},
	{"fast:", 0, 0, "match word ''", NULL, NULL, NULL, NULL},
	{"fast:h100+", 0, 0, "match word ''", NULL, NULL, NULL, NULL},
	{"fast:h1/00", 0, 0, "match word 'h1/00'", NULL, NULL, NULL, NULL},
};

START_TEST(test_rules)
{
	const struct rules_case *c = &rules_cases[_i];
	saturn_error_t err = {""};
	saturn_class_rules_t *r = saturn_class_rules_parse(c->text, &err);
	char buf[SATURN_CLASS_NAME_MAX + 1];

	if (!c->ok) {
		ck_assert_ptr_null(r);
		ck_assert_msg(strstr(err.text, c->err), "%s: got '%s'", c->text, err.text);
		return;
	}
	ck_assert_msg(r != NULL, "%s: %s", c->text, err.text);
	ck_assert_int_eq(saturn_class_rules_count(r), c->count);
	saturn_node_class(r, c->node, c->types, 2, "", c->features, buf, sizeof(buf));
	ck_assert_str_eq(buf, c->want);
	saturn_class_rules_free(r);
}
END_TEST

START_TEST(test_rules_limits)
{
	char text[4096] = "";
	saturn_error_t err = {""};

	for (int i = 0; i <= SATURN_CLASS_RULES_MAX; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "c%d:m%d;", i, i);
	ck_assert_ptr_null(saturn_class_rules_parse(text, &err));
	ck_assert_ptr_nonnull(strstr(err.text, "more than 32 classes"));
	saturn_class_rules_free(NULL);
	ck_assert_int_eq(saturn_class_rules_count(NULL), 0);
}
END_TEST

static const struct constraint_case {
	const char *expr, *features;
	int want;
} constraint_cases[] = {
	{NULL, "a", 1},
	{"", "", 1},
	{"nvlink", "h100,nvlink", 1},
	{"nvlink", "a100,pcie", 0},
	{"h100&nvlink", "h100,nvlink", 1},
	{"h100&ib", "h100,nvlink", 0},
	{"h100,nvlink", "h100,nvlink", 1},
	{"a100|h100", "a100,pcie", 1},
	{"v100|l40", "a100,pcie", 0},
	{"v100&x|a100", "a100", 1},
	{"a100&pcie|h100&nvlink", "h100,nvlink", 1},
	{"nvl", "nvlink", 0},
	{"[a100|h100]", "a100", -1},
	{"(a|b)&c", "a,c", -1},
	{"a100*2", "a100", -1},
	{"!a100", "h100", -1},
	{"a&&b", "a,b", -1},
	{"|a", "a", -1},
};

START_TEST(test_constraint)
{
	const struct constraint_case *c = &constraint_cases[_i];

	ck_assert_msg(saturn_constraint_match(c->expr, c->features) == c->want, "'%s' on '%s'",
		      c->expr ? c->expr : "(null)", c->features);
}
END_TEST

START_TEST(test_gres_string)
{
	char buf[32], small[12];

	/* Slurm 22.05's in-process form */
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "gres:", "a100", 2), 0);
	ck_assert_str_eq(buf, "gres:gpu:a100:2");
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "gres:", NULL, 4), 0);
	ck_assert_str_eq(buf, "gres:gpu:4");
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "gres:", "", 1), 0);
	ck_assert_str_eq(buf, "gres:gpu:1");
	/* 23.11 and later (24.11 refuses the form above in an update) */
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "gres/", "a100", 2), 0);
	ck_assert_str_eq(buf, "gres/gpu:a100:2");
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "gres/", NULL, 4), 0);
	ck_assert_str_eq(buf, "gres/gpu:4");
	/* no other prefix */
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "", "a100", 2), -1);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), NULL, "a100", 2), -1);
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "gres=", "a100", 2), -1);
	ck_assert_int_eq(saturn_gres_string(buf, sizeof(buf), "gres:", "a100", 0), -1);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(saturn_gres_string(small, sizeof(small), "gres/", "a100", 2), -1);
	ck_assert_str_eq(small, "");
	/* the type to release with */
	ck_assert_str_eq(saturn_release_type("a100", "a100"), "a100");
	ck_assert_str_eq(saturn_release_type("", "h100"), "h100");
	ck_assert_str_eq(saturn_release_type(NULL, "h100"), "h100");
	ck_assert_ptr_null(saturn_release_type("", "a100,h100"));
	ck_assert_ptr_null(saturn_release_type("", ""));
	ck_assert_str_eq(saturn_release_type("h100", "a100,h100"), "h100");
	ck_assert_int_eq(saturn_gpu_type_match("h100", "a100,h100"), 1);
	ck_assert_int_eq(saturn_gpu_type_match("h10", "a100,h100"), 0);
	ck_assert_int_eq(saturn_gpu_type_match("", "a100"), 1);
}
END_TEST

static const struct tres_case {
	const char *tres;
	int gpus;
	const char *type;
	int mixed;
} tres_cases[] = {
	{"gres:gpu:a100:2", 2, "a100", 0},
	{"gres/gpu:h100=4", 4, "h100", 0},
	{"gres:gpu:3g.20gb", 1, "3g.20gb", 0},
	{"gres:gpu:2", 2, "", 0},
	{"gpu", 1, "", 0},
	{"gres:gpu:a100:1,gres:gpu:a100:1", 2, "a100", 0},
	{"gres:gpu:a100:1,gres:gpu:h100:1", 2, "", 1},
	{"gres:gpu:2,gres:gpu:h100:1", 3, "", 1},
};

START_TEST(test_tres_type)
{
	const struct tres_case *c = &tres_cases[_i];
	saturn_tres_req_t r;
	char why[160];

	ck_assert_int_eq(saturn_tres_parse(c->tres, &r, why, sizeof(why)), 0);
	ck_assert_int_eq(r.gpus, c->gpus);
	ck_assert_str_eq(r.gpu_type, c->type);
	ck_assert_int_eq(r.gpu_types_mixed, c->mixed);
}
END_TEST

/* --- the scheduler core on two classes ------------------------------- */

/* n1, n2: 2 a100 GPUs each over PCIe; n3, n4: 2 h100 over NVLink. */
static saturn_snapshot_t *two_classes(int ntasks, const char *type, const char *constraint)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 4, 2);

	for (int k = 0; k < 4; k++) {
		saturn_snap_node_t *n = &s->nodes[k];

		snprintf(n->gpu_types, sizeof(n->gpu_types), "%s", k < 2 ? "a100" : "h100");
		snprintf(n->link, sizeof(n->link), "%s", k < 2 ? "pcie" : "nvlink");
		snprintf(n->features, sizeof(n->features), "%s", k < 2 ? "a100,pcie" : "h100,nvlink");
	}
	for (int i = 0; i < ntasks; i++) {
		saturn_snap_job_t *j = fx_add_held(s, 7, i, "sweep");

		j->time_limit_s = 60;
		j->submit_time = 900;
		j->node = -1;
		snprintf(j->gpu_type, sizeof(j->gpu_type), "%s", type ? type : "");
		snprintf(j->constraint, sizeof(j->constraint), "%s", constraint ? constraint : "");
	}
	return s;
}

/* Plan b's problem, decide with a large slack (everything due now is
 * released), and check every task's node against want_prefix ("n3|n4"
 * style: the allowed nodes) and its GRES type. */
static void plan_and_check(saturn_snapshot_t *s, saturn_sched_build_t *b, const char *allowed,
			   const char *want_type)
{
	saturn_planner_opts_t opts = fx_opts(0.2);
	saturn_error_t err = {""};
	saturn_plan_t *plan;
	saturn_decision_t *d = NULL;
	int nd;

	plan = saturn_planner_solve(b->problem, &opts, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	nd = saturn_sched_decide(s, b, plan, 1e9, &d);
	ck_assert_int_eq(nd, b->problem->ntasks);
	for (int i = 0; i < nd; i++) {
		char gres[64];

		ck_assert_msg(strstr(allowed, d[i].node) != NULL, "task on %s, allowed %s", d[i].node,
			      allowed);
		if (want_type) {
			ck_assert_str_eq(d[i].gpu_type, want_type);
			ck_assert_int_eq(saturn_gres_string(gres, sizeof(gres), "gres/", d[i].gpu_type,
								 d[i].gpus),
					 0);
			ck_assert_ptr_nonnull(strstr(gres, want_type));
		} else {
			/* untyped request: typed with its node's type */
			ck_assert_str_eq(d[i].gpu_type, strstr("n1 n2", d[i].node) ? "a100" : "h100");
		}
		ck_assert_str_eq(d[i].klass, strstr("n1 n2", d[i].node) ? "a100x2-pcie" : "h100x2-nvlink");
	}
	free(d);
	saturn_plan_destroy(plan);
}

START_TEST(test_build_typed)
{
	saturn_snapshot_t *s = two_classes(4, "h100", NULL);
	saturn_sched_build_t b;
	saturn_error_t err = {""};

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 4);
	for (int n = 0; n < b.problem->nnodes; n++)
		ck_assert_str_eq(b.problem->nodes[n].klass, n < 2 ? "a100x2-pcie" : "h100x2-nvlink");
	for (int t = 0; t < b.problem->ntasks; t++)
		for (int o = 0; o < b.problem->tasks[t].noptions; o++)
			ck_assert_str_eq(b.problem->tasks[t].options[o].klass, "h100x2-nvlink");
	plan_and_check(s, &b, "n3 n4", "h100");
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_build_untyped_uses_both)
{
	saturn_snapshot_t *s = two_classes(8, NULL, NULL);
	saturn_sched_build_t b;
	saturn_error_t err = {""};
	char line[256];

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	/* usable on every class: one option of no class */
	ck_assert_int_eq(b.problem->tasks[0].noptions, 1);
	ck_assert_ptr_null(b.problem->tasks[0].options[0].klass);
	plan_and_check(s, &b, "n1 n2 n3 n4", NULL);
	ck_assert_int_eq(saturn_snapshot_classes_line(s, line, sizeof(line)), 2);
	ck_assert_str_eq(line, "a100x2-pcie: 2 nodes, 4 GPUs; h100x2-nvlink: 2 nodes, 4 GPUs");
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_build_constraint)
{
	saturn_snapshot_t *s = two_classes(3, NULL, "pcie");
	saturn_sched_build_t b;
	saturn_error_t err = {""};

	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 3);
	plan_and_check(s, &b, "n1 n2", "a100");
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Features are not part of a class's name, but a constraint splits a
 * class by them in the problem: n1 has "ib", n2 not; a job asking for ib
 * is planned on n1 only, its sibling without a constraint anywhere. */
START_TEST(test_build_constraint_split)
{
	saturn_snapshot_t *s = two_classes(2, NULL, NULL);
	saturn_sched_build_t b;
	saturn_error_t err = {""};
	char line[256];

	snprintf(s->nodes[0].features, sizeof(s->nodes[0].features), "a100,pcie,ib");
	snprintf(s->jobs[0].constraint, sizeof(s->jobs[0].constraint), "ib");
	ck_assert_int_eq(saturn_snapshot_classes_line(s, line, sizeof(line)), 2);
	ck_assert_str_eq(line, "a100x2-pcie: 2 nodes, 4 GPUs; h100x2-nvlink: 2 nodes, 4 GPUs");
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_str_eq(b.problem->nodes[0].klass, "a100x2-pcie{a100,pcie,ib}");
	ck_assert_str_eq(b.problem->nodes[1].klass, "a100x2-pcie{a100,pcie}");
	for (int t = 0; t < b.problem->ntasks; t++) {
		const saturn_task_t *tk = &b.problem->tasks[t];

		if (!strcmp(tk->id, "7_0")) {
			ck_assert_int_eq(tk->noptions, 1);
			ck_assert_str_eq(tk->options[0].klass, "a100x2-pcie{a100,pcie,ib}");
		} else {
			ck_assert_ptr_null(tk->options[0].klass);
		}
	}
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A type no node has, an unreadable constraint, several GPU types: the
 * task is left held with a reason naming what is wrong. */
static const struct skip_case {
	const char *type, *constraint;
	int bad;
	const char *reason;
} skip_cases[] = {
	{"v100", NULL, 0, "no usable GPU node has GPU type v100"},
	{NULL, "ib", 0, "no usable GPU node has features ib"},
	{"a100", "nvlink", 0, "GPU type a100 and features nvlink"},
	{NULL, "[a100|h100]", 0, "--constraint '[a100|h100]' cannot be planned"},
	{NULL, NULL, 1, "cannot be planned"},
};

START_TEST(test_build_skip)
{
	const struct skip_case *c = &skip_cases[_i];
	saturn_snapshot_t *s = two_classes(2, c->type, c->constraint);
	saturn_sched_build_t b;
	saturn_error_t err = {""};

	s->jobs[1].constraint_bad = c->bad;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	ck_assert_int_eq(b.nskipped, c->bad ? 1 : 2);
	ck_assert_msg(strstr(b.skip_reason[b.nskipped - 1], c->reason), "got '%s'",
		      b.skip_reason[b.nskipped - 1]);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The admin groups both kinds into one class: no class in the problem
 * (every node alike), GRES still typed by each node's type. */
START_TEST(test_build_rules_one_class)
{
	saturn_snapshot_t *s = two_classes(4, NULL, NULL);
	saturn_class_rules_t *r = saturn_class_rules_parse("gpu:a100+h100", NULL);
	saturn_sched_build_t b;
	saturn_error_t err = {""};

	ck_assert_ptr_nonnull(r);
	s->class_rules = r;
	ck_assert_int_eq(saturn_sched_build(s, NULL, NULL, &b, &err), 0);
	for (int n = 0; n < b.problem->nnodes; n++)
		ck_assert_ptr_null(b.problem->nodes[n].klass);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	saturn_class_rules_free(r);
}
END_TEST

/* A profile measured on one class (h100x2-nvlink) and no other: the
 * a100 class, with no option of its own, gets the same numbers (measured
 * elsewhere applies everywhere, as before classes), one copy per class. */
static const char profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m\", \"task_ids\": \"0-3\", \"batches\": 100,"
	" \"class\": \"h100x2-nvlink\", \"options\": ["
	"  {\"technique\": \"fsdp\", \"gpus\": 2, \"sec_per_batch\": 1.0, \"status\": \"measured\"} ] } ] }";

static const saturn_profile_t *lookup_one(const char *batch, long uid, void *arg)
{
	(void)uid;
	return strcmp(batch, "sweep") ? NULL : arg;
}

START_TEST(test_build_class_options)
{
	saturn_snapshot_t *s = two_classes(4, NULL, NULL);
	saturn_error_t err = {""};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_sched_build_t b;
	const saturn_task_t *t;

	ck_assert_msg(pr != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_sched_build(s, lookup_one, pr, &b, &err), 0);
	t = &b.problem->tasks[0];
	ck_assert_int_eq(t->noptions, 2);
	ck_assert_str_eq(t->options[0].klass, "a100x2-pcie");
	ck_assert_str_eq(t->options[1].klass, "h100x2-nvlink");
	ck_assert_double_eq(t->options[0].sec_per_batch, 1.0);
	ck_assert_double_eq(t->options[1].sec_per_batch, 1.0);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
}
END_TEST

/* Per-class profiles: the batch's profile (measured on no class) and one
 * measured on a100x2-pcie (3x slower per batch, over twice the batches'
 * length unit: 200 batches of 1.5 s = 300 s of work against 100 of 1 s):
 * the a100 class plans with its own numbers, the h100 class, with none of
 * its own, with the batch's. */
static const char main_profile[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m\", \"task_ids\": \"0-3\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"fsdp\", \"gpus\": 2, \"sec_per_batch\": 1.0, \"status\": \"measured\"} ] } ] }";
static const char a100_profile[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m\", \"task_ids\": \"0-3\", \"batches\": 200,"
	" \"class\": \"a100x2-pcie\", \"options\": ["
	"  {\"technique\": \"pipeline\", \"gpus\": 2, \"sec_per_batch\": 1.5, \"status\": \"measured\"} ] } ] }";

static saturn_profile_t *class_pr;
static int class_asked;
static const saturn_profile_t *class_lookup(const char *batch, long uid, const char *klass, void *arg)
{
	(void)uid;
	(void)arg;
	class_asked++;
	return !strcmp(batch, "sweep") && !strcmp(klass, "a100x2-pcie") ? class_pr : NULL;
}

START_TEST(test_build_per_class_profiles)
{
	saturn_snapshot_t *s = two_classes(4, NULL, NULL);
	saturn_error_t err = {""};
	saturn_profile_t *pr = saturn_profile_parse(main_profile, strlen(main_profile), &err);
	saturn_sched_build_t b;
	const saturn_task_t *t;
	int seen_a = 0, seen_h = 0;

	class_pr = saturn_profile_parse(a100_profile, strlen(a100_profile), &err);
	ck_assert_msg(pr && class_pr, "%s", err.text);
	s->class_profile = class_lookup;
	ck_assert_int_eq(saturn_sched_build(s, lookup_one, pr, &b, &err), 0);
	/* once per class for the batch's 4 tasks, not once per task */
	ck_assert_int_eq(class_asked, 2);
	t = &b.problem->tasks[0];
	ck_assert_int_eq(t->noptions, 2);
	for (int o = 0; o < t->noptions; o++) {
		const saturn_option_t *op = &t->options[o];

		if (!strcmp(op->klass, "a100x2-pcie")) {
			seen_a = 1;
			ck_assert_str_eq(op->technique, "pipeline");
			/* 300 s of work over the task's 100 batches */
			ck_assert_double_eq_tol(op->sec_per_batch * t->batches, 300, 1e-9);
		} else {
			seen_h = 1;
			ck_assert_str_eq(op->klass, "h100x2-nvlink");
			ck_assert_str_eq(op->technique, "fsdp");
			ck_assert_double_eq_tol(op->sec_per_batch * t->batches, 100, 1e-9);
		}
	}
	ck_assert(seen_a && seen_h);
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
	saturn_profile_destroy(class_pr);
}
END_TEST

/* Option identity: fsdp on 2 GPUs in the batch's profile and again in
 * class a100x2-pcie's own (slower, other params, another index). A plan
 * that puts the task on an a100 node with the class's option is released
 * with that option's params and planned speed, not with the batch
 * profile's option of the same technique and GPU count. */
static const char id_main[] =
    "{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
    " \"tasks\": [ {\"signature\": \"m\", \"task_ids\": \"0-3\", \"batches\": 100,"
    " \"options\": ["
    "  {\"technique\": \"fsdp\", \"gpus\": 2, \"sec_per_batch\": 1.0, \"status\": \"measured\","
    "   \"params\": {\"shard\": \"full\"}} ] } ] }";
static const char id_a100[] =
    "{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
    " \"tasks\": [ {\"signature\": \"m\", \"task_ids\": \"0-3\", \"batches\": 100,"
    " \"class\": \"a100x2-pcie\", \"options\": ["
    "  {\"technique\": \"ddp\", \"gpus\": 1, \"status\": \"oom\"},"
    "  {\"technique\": \"fsdp\", \"gpus\": 2, \"sec_per_batch\": 3.0, \"status\": \"measured\","
    "   \"params\": {\"shard\": \"hybrid\"}} ] } ] }";

START_TEST(test_decide_class_identity)
{
	saturn_snapshot_t *s = two_classes(1, NULL, NULL);
	saturn_error_t err = {""};
	saturn_profile_t *pr = saturn_profile_parse(id_main, strlen(id_main), &err);
	saturn_sched_build_t b;
	saturn_decision_t *d = NULL;
	saturn_plan_t *plan;
	const saturn_task_t *t;
	int oa = -1, oh = -1;

	class_pr = saturn_profile_parse(id_a100, strlen(id_a100), &err);
	ck_assert_msg(pr && class_pr, "%s", err.text);
	s->class_profile = class_lookup;
	ck_assert_int_eq(saturn_sched_build(s, lookup_one, pr, &b, &err), 0);
	t = &b.problem->tasks[0];
	for (int o = 0; o < t->noptions; o++) {
		ck_assert_str_eq(t->options[o].technique, "fsdp");
		ck_assert_int_eq(t->options[o].gpus, 2);
		if (!strcmp(t->options[o].klass, "a100x2-pcie"))
			oa = o;
		else
			oh = o;
	}
	ck_assert(oa >= 0 && oh >= 0);
	ck_assert_str_eq(t->options[oa].source, "a100x2-pcie");
	ck_assert_int_eq(t->options[oa].prof_opt, 1);
	ck_assert_str_eq(t->options[oh].source, "");
	ck_assert_int_eq(t->options[oh].prof_opt, 0);
	for (int pass = 0; pass < 2; pass++) {
		int o = pass ? oh : oa, node = pass ? 2 : 0;

		plan = saturn_plan_create(1);
		ck_assert_ptr_nonnull(plan);
		ck_assert_int_eq(saturn_plan_set(plan, 0, b.problem, 0, o, node, 0, NULL), 0);
		ck_assert_int_eq(saturn_plan_assign_gpus(plan, b.problem, &err), 0);
		ck_assert_int_eq(saturn_sched_decide(s, &b, plan, 1e9, &d), 1);
		ck_assert_int_eq(d[0].release, 1);
		ck_assert_int_eq(d[0].task, 0);
		ck_assert_int_eq(d[0].option, o);
		ck_assert_ptr_eq(saturn_sched_decision_option(&b, &d[0]), &t->options[o]);
		if (pass == 0) {
			ck_assert_str_eq(d[0].source, "a100x2-pcie");
			ck_assert_int_eq(d[0].prof_opt, 1);
			/* read in the profile it names (the class's own) */
			ck_assert_str_eq(saturn_sched_decision_params(class_pr, 0, &d[0]),
					 "{\"shard\":\"hybrid\"}");
			ck_assert_str_eq(saturn_sched_decision_params(pr, 0, &d[0]), "{}");
			ck_assert_double_eq_tol(saturn_planrec_predicted_spb(&b, &d[0]), 3.0, 1e-9);
		} else {
			ck_assert_str_eq(d[0].source, "");
			ck_assert_int_eq(d[0].prof_opt, 0);
			ck_assert_str_eq(saturn_sched_decision_params(pr, 0, &d[0]),
					 "{\"shard\":\"full\"}");
			/* index 0 of the class's own is another option */
			ck_assert_str_eq(saturn_sched_decision_params(class_pr, 0, &d[0]), "{}");
			ck_assert_double_eq_tol(saturn_planrec_predicted_spb(&b, &d[0]), 1.0, 1e-9);
		}
		/* an entry that does not know its option: the one of its
		 * technique, GPUs and nodes on its node's class */
		free(d);
		plan->assign[0].option = -1;
		ck_assert_int_eq(saturn_sched_decide(s, &b, plan, 1e9, &d), 1);
		ck_assert_int_eq(d[0].option, o);
		free(d);
		d = NULL;
		saturn_plan_destroy(plan);
	}
	ck_assert_str_eq(saturn_sched_decision_params(NULL, 0, NULL), "{}");
	saturn_sched_build_free(&b);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
	saturn_profile_destroy(class_pr);
}
END_TEST

/* Held tasks wait while a class profiler job is pending or running, not
 * once every one has ended; released ones are not held. */
START_TEST(test_class_wait)
{
	saturn_snapshot_t *s = two_classes(3, NULL, NULL);
	int m[3] = {0, 1, 2};
	saturn_companion_t jobs[2] = {{41, SATURN_COMPANION_ENDED, 0}, {42, SATURN_COMPANION_RUNNING, 0}};
	const char *names[2] = {"a100x2-pcie", "h100x2-nvlink"};
	saturn_bpol_actions_t out = {0};

	s->jobs[2].state = SATURN_SNAP_RELEASED;
	ck_assert_int_eq(saturn_bpol_class_wait(s, m, 3, jobs, names, 2, 7, &out), 1);
	ck_assert_int_eq(out.n, 3); /* LOG, HOLD, DROP */
	ck_assert_int_eq(out.a[1].kind, SATURN_BPOL_HOLD);
	ck_assert_int_eq(out.a[1].ntasks, 2);
	ck_assert_int_eq(out.a[1].tag, 7);
	ck_assert_str_eq(out.a[1].text, "saturn: profiling class h100x2-nvlink (job 42)");
	ck_assert_int_eq(out.a[2].kind, SATURN_BPOL_DROP);
	saturn_bpol_actions_free(&out);
	jobs[1].state = SATURN_COMPANION_ENDED;
	ck_assert_int_eq(saturn_bpol_class_wait(s, m, 3, jobs, names, 2, 7, &out), 0);
	ck_assert_int_eq(out.n, 0);
	ck_assert_int_eq(saturn_bpol_class_wait(s, m, 3, jobs, names, 0, 7, &out), 0);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_settings)
{
	saturn_sched_settings_t st;

	saturn_sched_settings_init(&st);
	fx_setting(&st, "saturn_node_classes=fast:h100;slow:a100", 0, NULL);
	ck_assert_int_eq(saturn_class_rules_count(st.node_classes), 2);
	ck_assert_str_eq(st.node_classes_text, "fast:h100;slow:a100");
	fx_setting(&st, "saturn_node_classes=fast", 1, "saturn_node_classes=fast: 'fast' has no ':MATCH'");
	/* the bad value keeps the previous one */
	ck_assert_int_eq(saturn_class_rules_count(st.node_classes), 2);
	fx_setting(&st, "saturn_node_classes=none", 0, NULL);
	ck_assert_ptr_null(st.node_classes);
	saturn_sched_settings_free(&st);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_loop_test(tc, test_derive, 0, N(derive_cases));
	tcase_add_test(tc, test_derive_cut);
	tcase_add_loop_test(tc, test_rules, 0, N(rules_cases));
	tcase_add_test(tc, test_rules_limits);
	tcase_add_loop_test(tc, test_constraint, 0, N(constraint_cases));
	tcase_add_test(tc, test_gres_string);
	tcase_add_loop_test(tc, test_tres_type, 0, N(tres_cases));
	tcase_add_test(tc, test_build_typed);
	tcase_add_test(tc, test_build_untyped_uses_both);
	tcase_add_test(tc, test_build_constraint);
	tcase_add_test(tc, test_build_constraint_split);
	tcase_add_loop_test(tc, test_build_skip, 0, N(skip_cases));
	tcase_add_test(tc, test_build_rules_one_class);
	tcase_add_test(tc, test_build_class_options);
	tcase_add_test(tc, test_build_per_class_profiles);
	tcase_add_test(tc, test_decide_class_identity);
	tcase_add_test(tc, test_class_wait);
	tcase_add_test(tc, test_settings);
}

int main(void)
{
	return fx_run_suite("node_class", 60, add_tests);
}
