/* test_multinode.c - tasks that span several nodes (a gang of k whole or
 * partial nodes of one class): saturn-problem/2 and saturn-plan/2, the
 * validator, GPU id assignment, and the planner (heuristics, annealing,
 * warm start, baseline) with its bounds, checked against exhaustive search
 * on tiny instances with integer runtimes. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "planner_fixtures.h"
#include "sched_core.h"

/* fx_task() and then give option o k nodes. */
static void set_nodes(saturn_problem_t *p, int t, int o, int k)
{
	p->tasks[t].options[o].nodes = k;
}

static saturn_plan_t *solve_mn(saturn_problem_t *p, double limit,
			       const saturn_plan_t *warm)
{
	saturn_planner_opts_t o;
	saturn_error_t err = {{0}};
	saturn_plan_t *pl;

	saturn_planner_opts_init(&o);
	o.time_limit_s = limit;
	o.seed = 7;
	o.warm = warm;
	pl = saturn_planner_solve(p, &o, &err);
	ck_assert_msg(pl != NULL, "solve: %s", err.text);
	ck_assert_msg(saturn_plan_validate(pl, p, &err) == 0, "validate: %s",
		      err.text);
	return pl;
}

/* An independent check of GPU exclusivity over every node of every entry
 * (not the library's sweep): no GPU id of a node is held by two entries
 * whose intervals overlap; each entry has its option's node count. */
static const char *own_check(const saturn_problem_t *p,
			     const saturn_plan_t *pl)
{
	for (int i = 0; i < pl->nassign; i++) {
		const saturn_assign_t *a = &pl->assign[i];
		const saturn_option_t *o = &p->tasks[a->task].options[a->option];

		if (saturn_assign_nnodes(a) != saturn_option_nodes(o))
			return "node count differs from the option's";
		for (int j = 0; j < saturn_assign_nnodes(a); j++)
			for (int m = 0; m < j; m++)
				if (saturn_assign_node_at(a, j) ==
				    saturn_assign_node_at(a, m))
					return "a node twice in one entry";
		for (int b = 0; b < i; b++) {
			const saturn_assign_t *c = &pl->assign[b];

			if (!(a->start_s < c->end_s - 1e-9 &&
			      c->start_s < a->end_s - 1e-9))
				continue;
			for (int j = 0; j < saturn_assign_nnodes(a); j++)
				for (int m = 0; m < saturn_assign_nnodes(c); m++) {
					if (saturn_assign_node_at(a, j) !=
					    saturn_assign_node_at(c, m))
						continue;
					for (int g = 0; g < a->gpus; g++)
						for (int h = 0; h < c->gpus; h++)
							if (a->gpu_ids[j * a->gpus + g] ==
							    c->gpu_ids[m * c->gpus + h])
								return "a GPU shared in time";
				}
		}
	}
	return NULL;
}

/* --- formats ------------------------------------------------------------- */

static const char *PROBLEM2 =
	"{\"format\": \"saturn-problem/2\", \"nodes\": ["
	"{\"name\": \"a\", \"gpus\": 4}, {\"name\": \"b\", \"gpus\": 4},"
	"{\"name\": \"c\", \"gpus\": 4}],"
	"\"tasks\": [{\"id\": \"big\", \"batches\": 100, \"options\": ["
	"{\"technique\": \"fsdp\", \"gpus\": 4, \"nodes\": 2, \"sec_per_batch\": 0.5}]},"
	"{\"id\": \"small\", \"batches\": 100, \"options\": ["
	"{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.4}]}]}";

START_TEST(test_problem_v2_roundtrip)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(PROBLEM2, strlen(PROBLEM2), &err), *q;
	char *js;

	ck_assert_msg(p != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_option_nodes(&p->tasks[0].options[0]), 2);
	ck_assert_int_eq(saturn_option_nodes(&p->tasks[1].options[0]), 1);
	ck_assert(saturn_problem_multinode(p));
	js = saturn_problem_to_json(p);
	ck_assert_ptr_nonnull(strstr(js, "saturn-problem/2"));
	q = saturn_problem_parse(js, strlen(js), &err);
	ck_assert_msg(q != NULL, "%s", err.text);
	ck_assert_int_eq(q->tasks[0].options[0].nodes, 2);
	free(js);
	saturn_problem_destroy(q);
	/* single-node problems are still written as version 1 */
	p->tasks[0].options[0].nodes = 1;
	js = saturn_problem_to_json(p);
	ck_assert_ptr_nonnull(strstr(js, "saturn-problem/1"));
	ck_assert_ptr_null(strstr(js, "\"nodes\": 1"));
	free(js);
	saturn_problem_destroy(p);
}
END_TEST

static const struct {
	const char *json, *want;
} bad_problems[] = {
	/* a version 1 file may not carry multi-node fields */
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"a\", \"gpus\": 4}, {\"name\": \"b\", \"gpus\": 4}],"
	 "\"tasks\": [{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"x\", \"gpus\": 4, \"nodes\": 2, \"sec_per_batch\": 1}]}]}",
	 "nodes: needs format version 2"},
	{"{\"format\": \"saturn-problem/2\", \"nodes\": [{\"name\": \"a\", \"gpus\": 4}, {\"name\": \"b\", \"gpus\": 4}],"
	 "\"tasks\": [{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"x\", \"gpus\": 4, \"nodes\": 0, \"sec_per_batch\": 1}]}]}",
	 "nodes"},
	{"{\"format\": \"saturn-problem/2\", \"nodes\": [{\"name\": \"a\", \"gpus\": 4}, {\"name\": \"b\", \"gpus\": 4}],"
	 "\"tasks\": [{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"x\", \"gpus\": 4, \"nodes\": 3, \"sec_per_batch\": 1}]}]}",
	 "no option fits"},
	/* two nodes, but of different classes */
	{"{\"format\": \"saturn-problem/2\", \"nodes\": [{\"name\": \"a\", \"gpus\": 4, \"class\": \"x\"}, {\"name\": \"b\", \"gpus\": 4}],"
	 "\"tasks\": [{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"x\", \"gpus\": 4, \"nodes\": 2, \"sec_per_batch\": 1}]}]}",
	 "no option fits"},
	{"{\"format\": \"saturn-problem/9\", \"nodes\": [], \"tasks\": []}", "saturn-problem/2"},
};

START_TEST(test_problem_bad)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(bad_problems[_i].json,
						   strlen(bad_problems[_i].json), &err);

	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err.text, bad_problems[_i].want) != NULL,
		      "message \"%s\" lacks \"%s\"", err.text, bad_problems[_i].want);
}
END_TEST

START_TEST(test_plan_v2_roundtrip)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(PROBLEM2, strlen(PROBLEM2), &err);
	saturn_plan_t *pl, *back;
	char *js;

	ck_assert_msg(p != NULL, "%s", err.text);
	pl = solve_mn(p, 0.2, NULL);
	ck_assert_int_eq(saturn_assign_nnodes(&pl->assign[0]), 2);
	ck_assert_ptr_null(own_check(p, pl));
	js = saturn_plan_to_json(pl, 1);
	ck_assert_ptr_nonnull(strstr(js, "saturn-plan/2"));
	back = saturn_plan_parse(js, strlen(js), &err);
	ck_assert_msg(back != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_assign_nnodes(&back->assign[0]), 2);
	ck_assert_str_eq(saturn_assign_name_at(&back->assign[0], 1),
			 saturn_assign_name_at(&pl->assign[0], 1));
	for (int g = 0; g < 8; g++)
		ck_assert_int_eq(back->assign[0].gpu_ids[g], pl->assign[0].gpu_ids[g]);
	ck_assert_msg(saturn_plan_validate(back, p, &err) == 0, "%s", err.text);
	ck_assert_msg(saturn_plan_resolve(back, p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(back->assign[0].more_nodes[0], pl->assign[0].more_nodes[0]);
	free(js);
	saturn_plan_destroy(back);
	/* the copy keeps every node */
	back = saturn_plan_copy(pl);
	ck_assert_msg(saturn_plan_validate(back, p, &err) == 0, "%s", err.text);
	saturn_plan_destroy(back);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

static const struct {
	const char *json, *want;
} bad_plans[] = {
	{"{\"format\": \"saturn-plan/1\", \"makespan_s\": 1, \"tasks\": [{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"a\", \"gpu_ids\": [0], \"start_s\": 0, \"end_s\": 1,"
	 "\"nodes\": [{\"node\": \"a\", \"gpu_ids\": [0]}, {\"node\": \"b\", \"gpu_ids\": [0]}]}]}",
	 "needs format version 2"},
	{"{\"format\": \"saturn-plan/2\", \"makespan_s\": 1, \"tasks\": [{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"a\", \"gpu_ids\": [0], \"start_s\": 0, \"end_s\": 1,"
	 "\"nodes\": [{\"node\": \"b\", \"gpu_ids\": [0]}, {\"node\": \"a\", \"gpu_ids\": [0]}]}]}",
	 "must repeat the entry's node"},
	{"{\"format\": \"saturn-plan/2\", \"makespan_s\": 1, \"tasks\": [{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"a\", \"gpu_ids\": [0], \"start_s\": 0, \"end_s\": 1,"
	 "\"nodes\": [{\"node\": \"a\", \"gpu_ids\": [0]}, {\"node\": \"b\", \"gpu_ids\": [0, 1]}]}]}",
	 "lists 2 ids for 1 GPUs per node"},
	{"{\"format\": \"saturn-plan/2\", \"makespan_s\": 1, \"tasks\": [{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"a\", \"gpu_ids\": [0], \"start_s\": 0, \"end_s\": 1,"
	 "\"nodes\": []}]}",
	 "must list 1 to"},
};

START_TEST(test_plan_bad)
{
	saturn_error_t err = {{0}};
	saturn_plan_t *pl = saturn_plan_parse(bad_plans[_i].json,
					      strlen(bad_plans[_i].json), &err);

	ck_assert_ptr_null(pl);
	ck_assert_msg(strstr(err.text, bad_plans[_i].want) != NULL,
		      "message \"%s\" lacks \"%s\"", err.text, bad_plans[_i].want);
}
END_TEST

/* --- validator ------------------------------------------------------------- */

/* Nodes a, b, c (4 GPUs; c of class "y"), task big (2 nodes x 4 GPUs, 50 s)
 * and small (2 GPUs, 40 s). */
static saturn_problem_t *vproblem(void)
{
	static const opt_spec_t big[] = {{"fsdp", 4, 0.5, NULL}};
	static const opt_spec_t small[] = {{"ddp", 2, 0.4, NULL}};
	saturn_problem_t *p = fx_problem();

	fx_node(p, "a", 4, NULL);
	fx_node(p, "b", 4, NULL);
	fx_node(p, "c", 4, "y");
	fx_task(p, "big", 100, 0, big, 1);
	set_nodes(p, 0, 0, 2);
	fx_task(p, "small", 100, 0, small, 1);
	fx_check(p);
	return p;
}

START_TEST(test_validate_multinode)
{
	saturn_problem_t *p = vproblem();
	saturn_plan_t *pl = saturn_plan_create(2);
	saturn_error_t err = {{0}};
	int ab[] = {0, 1}, aa[] = {0, 0}, ac[] = {0, 2}, b[] = {1};

	/* big on a+b at 0, small on b after it: valid */
	ck_assert_int_eq(saturn_plan_set_nodes(pl, 0, p, 0, 0, ab, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(pl, 1, p, 1, 0, b[0], 50, NULL), 0);
	ck_assert_msg(saturn_plan_assign_gpus(pl, p, &err) == 0, "%s", err.text);
	pl->makespan_s = 90;
	ck_assert_msg(saturn_plan_validate(pl, p, &err) == 0, "%s", err.text);
	ck_assert_ptr_null(own_check(p, pl));
	/* small overlapping big on node b */
	pl->assign[1].start_s = 10;
	pl->assign[1].end_s = 50;
	pl->makespan_s = 50;
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), -1);
	ck_assert_msg(strstr(err.text, "overlaps") && strstr(err.text, "node b"), "%s", err.text);
	/* the same overlap on the planned ids is what assign_gpus refuses */
	ck_assert_int_eq(saturn_plan_assign_gpus(pl, p, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "overloaded"));
	pl->assign[1].start_s = 50;
	pl->assign[1].end_s = 90;
	pl->makespan_s = 90;
	ck_assert_int_eq(saturn_plan_assign_gpus(pl, p, &err), 0);
	/* a GPU id out of range on the second node */
	pl->assign[0].gpu_ids[5] = 7;
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), -1);
	ck_assert_msg(strstr(err.text, "out of range on node b"), "%s", err.text);
	pl->assign[0].gpu_ids[5] = 1;
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), 0);
	/* one node twice is refused at construction and by the validator */
	ck_assert_int_eq(saturn_plan_set_nodes(pl, 0, p, 0, 0, aa, 0, NULL), -1);
	free(pl->assign[0].more_names[0]);
	pl->assign[0].more_names[0] = strdup("a");
	pl->assign[0].more_nodes[0] = 0;
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), -1);
	ck_assert_msg(strstr(err.text, "listed twice"), "%s", err.text);
	/* nodes of two classes */
	ck_assert_int_eq(saturn_plan_set_nodes(pl, 0, p, 0, 0, ac, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_assign_gpus(pl, p, &err), 0);
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), -1);
	ck_assert_msg(strstr(err.text, "does not fit node c") ||
		      strstr(err.text, "different classes"), "%s", err.text);
	/* a multi-node option needs saturn_plan_set_nodes() */
	ck_assert_int_eq(saturn_plan_set(pl, 0, p, 0, 0, 0, 0, NULL), -1);
	/* a one-node entry for a two-node option */
	saturn_plan_destroy(pl);
	pl = saturn_plan_create(2);
	ck_assert_int_eq(saturn_plan_set_nodes(pl, 0, p, 0, 0, ab, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(pl, 1, p, 1, 0, 1, 50, NULL), 0);
	ck_assert_int_eq(saturn_plan_assign_gpus(pl, p, &err), 0);
	pl->makespan_s = 90;
	pl->assign[0].nnodes = 1;
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), -1);
	ck_assert_msg(strstr(err.text, "x 1 nodes is not an option") ||
		      strstr(err.text, "planned on 1 nodes"), "%s", err.text);
	pl->assign[0].nnodes = 2;
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

/* A task running on two nodes: read from saturn-problem/2, written back,
 * pinned by the planner on both nodes with its GPU ids, its GPUs on the
 * second node taken out for the others. */
static const char *RUNNING2 =
	"{\"format\": \"saturn-problem/2\", \"nodes\": ["
	"{\"name\": \"a\", \"gpus\": 4}, {\"name\": \"b\", \"gpus\": 4}],"
	"\"tasks\": [{\"id\": \"big\", \"batches\": 100, \"options\": ["
	"{\"technique\": \"fsdp\", \"gpus\": 2, \"nodes\": 2, \"sec_per_batch\": 1}],"
	"\"running\": {\"node\": \"a\", \"gpu_ids\": [2, 3], \"technique\": \"fsdp\", \"gpus\": 2,"
	"\"nodes\": [{\"node\": \"a\", \"gpu_ids\": [2, 3]}, {\"node\": \"b\", \"gpu_ids\": [0, 1]}]}},"
	"{\"id\": \"w\", \"batches\": 10, \"options\": ["
	"{\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 1}]}]}";

START_TEST(test_running_multinode)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(RUNNING2, strlen(RUNNING2), &err), *q;
	saturn_plan_t *pl;
	char *js, *bad;

	ck_assert_msg(p != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_running_nnodes(&p->tasks[0].running), 2);
	ck_assert_int_eq(saturn_running_node_at(&p->tasks[0].running, 1), 1);
	ck_assert_int_eq(p->tasks[0].running.gpu_ids[2], 0);
	js = saturn_problem_to_json(p);
	q = saturn_problem_parse(js, strlen(js), &err);
	ck_assert_msg(q != NULL, "%s: %s", err.text, js);
	ck_assert_int_eq(saturn_running_node_at(&q->tasks[0].running, 1), 1);
	free(js);
	saturn_problem_destroy(q);
	q = saturn_problem_copy(p);
	ck_assert_int_eq(q->tasks[0].running.more_nodes[0], 1);
	saturn_problem_destroy(q);
	/* pinned at 0 on a and b with its ids; w (4 GPUs) waits for it */
	pl = solve_mn(p, 0.2, NULL);
	ck_assert_int_eq(saturn_assign_nnodes(&pl->assign[0]), 2);
	ck_assert_double_eq_tol(pl->assign[0].start_s, 0, 1e-9);
	ck_assert_int_eq(pl->assign[0].gpu_ids[0], 2);
	ck_assert_int_eq(pl->assign[0].gpu_ids[2], 0);
	ck_assert_double_eq_tol(pl->assign[1].start_s, 100, 1e-9);
	ck_assert_ptr_null(own_check(p, pl));
	/* moving it to other GPUs of node b is refused */
	pl->assign[0].gpu_ids[2] = 2;
	pl->assign[0].gpu_ids[3] = 3;
	ck_assert_int_eq(saturn_plan_validate(pl, p, &err), -1);
	ck_assert_msg(strstr(err.text, "keep its GPU ids"), "%s", err.text);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
	/* the list must repeat node and ids first, and only in version 2 */
	bad = strdup(RUNNING2);
	strstr(bad, "[2, 3]}")[4] = '1'; /* the first node's ids differ */
	p = saturn_problem_parse(bad, strlen(bad), &err);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err.text, "must repeat the running task's node"), "%s", err.text);
	free(bad);
	bad = strdup(RUNNING2);
	memcpy(strstr(bad, "problem/2"), "problem/1", 9);
	p = saturn_problem_parse(bad, strlen(bad), &err);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err.text, "needs format version 2"), "%s", err.text);
	free(bad);
}
END_TEST

/* Two running tasks sharing a GPU on the second node of one of them. */
START_TEST(test_running_multinode_overlap)
{
	saturn_problem_t *p = vproblem();
	saturn_error_t err = {{0}};
	int ids[] = {0, 1, 2, 3, 0, 1, 2, 3}, sids[] = {3};
	saturn_running_t *r = &p->tasks[0].running;

	fx_running(p, 0, 0, 0, ids);
	free(r->gpu_ids);
	r->gpu_ids = malloc(sizeof(ids));
	memcpy(r->gpu_ids, ids, sizeof(ids));
	ck_assert_int_eq(saturn_problem_check(p, &err), -1);
	ck_assert_msg(strstr(err.text, "on 1 nodes but its option spans 2"), "%s", err.text);
	r->nnodes = 2;
	r->more_nodes = malloc(sizeof(int));
	r->more_nodes[0] = 1;
	fx_check(p);
	p->tasks[1].options[0].gpus = 1;
	fx_running(p, 1, 1, 0, sids);
	ck_assert_int_eq(saturn_problem_check(p, &err), -1);
	ck_assert_msg(strstr(err.text, "GPU 3 of node b is used by another running task"), "%s", err.text);
	saturn_problem_destroy(p);
}
END_TEST

/* --- planner ------------------------------------------------------------- */

/* Two 2-node models and six 1-node ones on four 4-GPU nodes: every gang is
 * on two distinct nodes with 4 GPUs on each, the bound holds. */
START_TEST(test_gang_plan)
{
	static const opt_spec_t big[] = {{"fsdp", 4, 0.6, NULL},
					 {"fsdp", 4, 0.35, NULL}};
	static const opt_spec_t small[] = {{"ddp", 1, 1.0, NULL},
					   {"ddp", 2, 0.55, NULL},
					   {"ddp", 4, 0.3, NULL}};
	saturn_problem_t *p = fx_problem();
	saturn_plan_t *pl, *again, *bl;
	saturn_bounds_t b;
	saturn_error_t err = {{0}};
	char id[16];

	for (int n = 0; n < 4; n++) {
		snprintf(id, sizeof(id), "n%d", n);
		fx_node(p, id, 4, NULL);
	}
	for (int t = 0; t < 2; t++) {
		snprintf(id, sizeof(id), "big%d", t);
		fx_task(p, id, 100, 0, big, 2);
		set_nodes(p, t, 0, 2); /* 2 x 4 GPUs, 60 s */
		set_nodes(p, t, 1, 4); /* 4 x 4 GPUs, 35 s */
	}
	for (int t = 0; t < 6; t++) {
		snprintf(id, sizeof(id), "s%d", t);
		fx_task(p, id, 50 + 10 * t, 0, small, 3);
	}
	fx_check(p);
	pl = solve_mn(p, 0.5, NULL);
	ck_assert_ptr_null(own_check(p, pl));
	ck_assert_int_eq(saturn_planner_bounds(p, &b, &err), 0);
	ck_assert_double_le(b.best, pl->makespan_s * (1 + 1e-9));
	ck_assert_double_le(pl->lower_bound_s, pl->makespan_s * (1 + 1e-9));
	for (int i = 0; i < 2; i++)
		ck_assert_int_ge(saturn_assign_nnodes(&pl->assign[i]), 2);
	/* warm start from its own plan: never worse */
	again = solve_mn(p, 0.3, pl);
	ck_assert_double_le(again->makespan_s, pl->makespan_s * (1 + 1e-9));
	ck_assert_ptr_null(own_check(p, again));
	/* current practice places the gangs too */
	bl = saturn_planner_baseline(p, 4, &err);
	ck_assert_msg(bl != NULL, "%s", err.text);
	ck_assert_msg(saturn_plan_validate(bl, p, &err) == 0, "%s", err.text);
	ck_assert_ptr_null(own_check(p, bl));
	saturn_plan_destroy(bl);
	saturn_plan_destroy(again);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

/* A gang waits for both its nodes: node n1 is busy until 100 s, so a
 * 2-node task on {n0, n1} starts at 100 unless n2 is free: with n2 it
 * starts at 0 on {n0, n2}. */
START_TEST(test_gang_busy)
{
	static const opt_spec_t big[] = {{"fsdp", 8, 0.5, NULL}};
	saturn_problem_t *p = fx_problem();
	saturn_plan_t *pl;
	int ids[] = {3};

	fx_node(p, "n0", 8, NULL);
	fx_node(p, "n1", 8, NULL);
	fx_busy(p, 1, ids, 1, 100);
	fx_task(p, "big", 100, 0, big, 1);
	set_nodes(p, 0, 0, 2);
	fx_check(p);
	pl = solve_mn(p, 0.2, NULL);
	ck_assert_double_eq_tol(pl->assign[0].start_s, 100, 1e-9);
	saturn_plan_destroy(pl);
	fx_node(p, "n2", 8, NULL);
	fx_check(p);
	pl = solve_mn(p, 0.2, NULL);
	ck_assert_double_eq_tol(pl->assign[0].start_s, 0, 1e-9);
	ck_assert_str_eq(saturn_assign_name_at(&pl->assign[0], 0), "n0");
	ck_assert_str_eq(saturn_assign_name_at(&pl->assign[0], 1), "n2");
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

/* The simple plans of sched/saturn (placement by id): FCFS starts a gang
 * when its nodes' GPUs are free, a carried plan keeps every node. */
START_TEST(test_fcfs_carry_gang)
{
	static const opt_spec_t big[] = {{"fsdp", 4, 0.5, NULL}};
	static const opt_spec_t small[] = {{"ddp", 4, 0.4, NULL}};
	saturn_problem_t *p = fx_problem();
	saturn_plan_t *fc, *cr;
	saturn_error_t err = {{0}};
	int busy[] = {0};

	fx_node(p, "a", 4, NULL);
	fx_node(p, "b", 4, NULL);
	fx_node(p, "c", 4, NULL);
	fx_busy(p, 0, busy, 1, 30); /* a: one GPU busy until 30 s */
	fx_task(p, "big", 100, 0, big, 1);
	set_nodes(p, 0, 0, 2);
	fx_task(p, "s1", 100, 0, small, 1);
	fx_task(p, "s2", 100, 0, small, 1);
	fx_check(p);
	fc = saturn_sched_fcfs(p);
	ck_assert_ptr_nonnull(fc);
	ck_assert_msg(saturn_plan_validate(fc, p, &err) == 0, "%s", err.text);
	ck_assert_ptr_null(own_check(p, fc));
	/* big on the two free nodes b and c at 0; s1 on a at 30; s2 after */
	ck_assert_str_eq(saturn_assign_name_at(&fc->assign[0], 0), "b");
	ck_assert_str_eq(saturn_assign_name_at(&fc->assign[0], 1), "c");
	ck_assert_double_eq_tol(fc->assign[0].start_s, 0, 1e-9);
	ck_assert_double_eq_tol(fc->assign[1].start_s, 30, 1e-9);
	ck_assert_double_eq_tol(fc->assign[2].start_s, 50, 1e-9);
	cr = saturn_sched_carry(fc, p);
	ck_assert_ptr_nonnull(cr);
	ck_assert_msg(saturn_plan_validate(cr, p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(saturn_assign_nnodes(&cr->assign[0]), 2);
	ck_assert_str_eq(saturn_assign_name_at(&cr->assign[0], 1), "c");
	saturn_plan_destroy(cr);
	saturn_plan_destroy(fc);
	saturn_problem_destroy(p);
}
END_TEST

/* A carried gang whose second node no longer fits (its GPU count fell
 * below the option's, or it moved to another class): no carried plan.
 * Only the first node was checked; the GPU pick then read and wrote past
 * the smaller node's GPUs (heap overflow under AddressSanitizer). */
START_TEST(test_carry_gang_node_shrunk)
{
	static const opt_spec_t big[] = {{"fsdp", 8, 0.5, NULL},
					 {"ddp", 4, 2.0, NULL}};
	saturn_problem_t *p = fx_problem(), *q = fx_problem(), *r = fx_problem();
	saturn_plan_t *pl, *cr;
	saturn_error_t err = {{0}};

	fx_node(p, "a", 8, NULL);
	fx_node(p, "b", 8, NULL);
	fx_task(p, "big", 100, 0, big, 2);
	set_nodes(p, 0, 0, 2);
	fx_check(p);
	pl = saturn_sched_fcfs(p);
	ck_assert_ptr_nonnull(pl);
	ck_assert_int_eq(saturn_assign_nnodes(&pl->assign[0]), 2);
	/* the next cycle: b has 2 GPUs */
	fx_node(q, "a", 8, NULL);
	fx_node(q, "b", 2, NULL);
	fx_task(q, "big", 100, 0, big, 2);
	set_nodes(q, 0, 0, 2);
	fx_check(q);
	ck_assert_ptr_null(saturn_sched_carry(pl, q));
	/* or b is of another class now */
	fx_node(r, "a", 8, NULL);
	fx_node(r, "b", 8, "other");
	fx_node(r, "c", 8, "other");
	fx_task(r, "big", 100, 0, big, 2);
	set_nodes(r, 0, 0, 2);
	fx_check(r);
	cr = saturn_sched_carry(pl, r);
	ck_assert_msg(!cr || saturn_plan_validate(cr, r, &err) == 0, "%s", err.text);
	ck_assert_ptr_null(cr);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
	saturn_problem_destroy(q);
	saturn_problem_destroy(r);
}
END_TEST

/* --- exact optimum of tiny instances --------------------------------------- */

/* Tiny instance: nn nodes of G GPUs each (one class), tasks with integer
 * runtimes; options (g per node, k nodes, d). Exhaustive search over
 * option, start time (integers: with integer runtimes and releases some
 * optimal schedule starts every task at an integer, by left-shifting) and
 * node set. */
#define XN 3
#define XH 40
typedef struct xopt {
	int g, k, d;
} xopt_t;
typedef struct xinst {
	int nn, G, nt;
	int nopt[5];
	xopt_t opt[5][3];
	int rel[5];
	int busy_until; /* node 0's GPU 0 is busy until then (0: never) */
} xinst_t;

static int xfree[XN][XH];

static void x_dfs(const xinst_t *x, int t, int mk, int *best)
{
	if (mk >= *best)
		return;
	if (t == x->nt) {
		*best = mk;
		return;
	}
	for (int o = 0; o < x->nopt[t]; o++) {
		const xopt_t *op = &x->opt[t][o];

		for (int s = x->rel[t]; s + op->d < *best && s + op->d <= XH; s++) {
			/* node subsets of size k (bit masks) */
			for (int m = 1; m < (1 << x->nn); m++) {
				int ok = __builtin_popcount((unsigned)m) == op->k;

				for (int n = 0; ok && n < x->nn; n++)
					for (int u = s; ok && (m >> n & 1) && u < s + op->d; u++)
						ok = xfree[n][u] >= op->g;
				if (!ok)
					continue;
				for (int n = 0; n < x->nn; n++)
					for (int u = s; (m >> n & 1) && u < s + op->d; u++)
						xfree[n][u] -= op->g;
				x_dfs(x, t + 1, mk > s + op->d ? mk : s + op->d, best);
				for (int n = 0; n < x->nn; n++)
					for (int u = s; (m >> n & 1) && u < s + op->d; u++)
						xfree[n][u] += op->g;
			}
		}
	}
}

static int x_opt(const xinst_t *x)
{
	int best = XH + 1;

	for (int n = 0; n < XN; n++)
		for (int u = 0; u < XH; u++)
			xfree[n][u] = n < x->nn ? x->G - (n == 0 && u < x->busy_until) : 0;
	x_dfs(x, 0, 0, &best);
	return best;
}

static saturn_problem_t *x_problem(const xinst_t *x)
{
	saturn_problem_t *p = fx_problem();
	char id[16];

	for (int n = 0; n < x->nn; n++) {
		snprintf(id, sizeof(id), "n%d", n);
		fx_node(p, id, x->G, NULL);
	}
	if (x->busy_until > 0) {
		int g0[] = {0};

		fx_busy(p, 0, g0, 1, x->busy_until);
	}
	for (int t = 0; t < x->nt; t++) {
		opt_spec_t o[3];

		for (int q = 0; q < x->nopt[t]; q++) {
			o[q].tech = q == 0 ? "a" : q == 1 ? "b" : "c";
			o[q].gpus = x->opt[t][q].g;
			o[q].spb = x->opt[t][q].d;
			o[q].klass = NULL;
		}
		snprintf(id, sizeof(id), "t%d", t);
		fx_task(p, id, 1, x->rel[t], o, x->nopt[t]);
		for (int q = 0; q < x->nopt[t]; q++)
			set_nodes(p, t, q, x->opt[t][q].k);
	}
	fx_check(p);
	return p;
}

/* Random tiny instances: 2..3 nodes of 2 GPUs (half of them with a GPU of
 * node 0 busy for 1..4 s), 3..4 tasks with options of 1..2 GPUs per node on
 * 1..nn nodes, runtimes 1..6; the bounds never pass the exact optimum and
 * every plan is at least the optimum. */
START_TEST(test_bounds_exact)
{
	uint64_t seed = 12345u + (uint64_t)_i * 7919u;
	int rounds = 0, multi = 0;

	for (int r = 0; r < 12; r++) {
		xinst_t x = {0};
		saturn_problem_t *p;
		saturn_bounds_t b;
		saturn_error_t err = {{0}};
		saturn_plan_t *pl;
		int opt;

		x.nn = 2 + fx_rand(&seed, 2);
		x.G = 2;
		x.nt = 3 + fx_rand(&seed, 2);
		x.busy_until = fx_rand(&seed, 2) ? 0 : 1 + fx_rand(&seed, 4);
		for (int t = 0; t < x.nt; t++) {
			x.nopt[t] = 1 + fx_rand(&seed, 2);
			x.rel[t] = fx_rand(&seed, 3) == 0 ? fx_rand(&seed, 3) : 0;
			for (int q = 0; q < x.nopt[t]; q++) {
				x.opt[t][q].g = 1 + fx_rand(&seed, 2);
				x.opt[t][q].k = 1 + fx_rand(&seed, x.nn);
				x.opt[t][q].d = 1 + fx_rand(&seed, 6);
				multi += x.opt[t][q].k > 1;
			}
		}
		opt = x_opt(&x);
		ck_assert_int_le(opt, XH);
		p = x_problem(&x);
		ck_assert_int_eq(saturn_planner_bounds(p, &b, &err), 0);
		ck_assert_msg(b.best <= opt * (1 + 1e-9),
			      "round %d: bound %g (length %g area %g dual %g) > optimum %d",
			      r, b.best, b.length, b.area, b.dual, opt);
		pl = solve_mn(p, 0.05, NULL);
		ck_assert_msg(pl->makespan_s >= opt * (1 - 1e-9),
			      "round %d: plan %g < optimum %d", r, pl->makespan_s, opt);
		ck_assert_double_le(pl->lower_bound_s, opt * (1 + 1e-9));
		ck_assert_ptr_null(own_check(p, pl));
		rounds++;
		saturn_plan_destroy(pl);
		saturn_problem_destroy(p);
	}
	ck_assert_int_eq(rounds, 12);
	ck_assert_int_gt(multi, 0);
}
END_TEST

/* Larger random instances with 2- and 4-node options: valid plans, bound
 * below the plan. */
START_TEST(test_random_valid)
{
	uint64_t seed = 99u + (uint64_t)_i;
	saturn_problem_t *p = fx_problem();
	saturn_plan_t *pl;
	saturn_bounds_t b;
	saturn_error_t err = {{0}};
	int nn = 4 + fx_rand(&seed, 5), nt = 10 + fx_rand(&seed, 20);
	char id[16];

	for (int n = 0; n < nn; n++) {
		snprintf(id, sizeof(id), "n%d", n);
		fx_node(p, id, 8, n % 3 == 2 ? "x" : NULL);
	}
	for (int t = 0; t < nt; t++) {
		opt_spec_t o[4];
		int no = 1 + fx_rand(&seed, 4);

		for (int q = 0; q < no; q++) {
			o[q].tech = q % 2 ? "fsdp" : "ddp";
			o[q].gpus = 1 << fx_rand(&seed, 4);
			o[q].spb = 0.1 + fx_rand(&seed, 100) / 50.0;
			o[q].klass = NULL;
		}
		snprintf(id, sizeof(id), "t%d", t);
		fx_task(p, id, 50 + fx_rand(&seed, 200), fx_rand(&seed, 4) ? 0 : fx_rand(&seed, 100), o, no);
		for (int q = 0; q < no; q++)
			if (fx_rand(&seed, 3) == 0)
				set_nodes(p, t, q, 2 << fx_rand(&seed, 2));
	}
	if (saturn_problem_check(p, &err) < 0) {
		/* a 4-node option with too few nodes of a class: drop it */
		for (int t = 0; t < nt; t++)
			for (int q = 0; q < p->tasks[t].noptions; q++)
				if (p->tasks[t].options[q].nodes > 2)
					p->tasks[t].options[q].nodes = 2;
	}
	fx_check(p);
	pl = solve_mn(p, 0.3, NULL);
	ck_assert_ptr_null(own_check(p, pl));
	ck_assert_int_eq(saturn_planner_bounds(p, &b, &err), 0);
	ck_assert_double_le(b.best, pl->makespan_s * (1 + 1e-9));
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("multinode");
	TCase *tc = tcase_create("multinode");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_problem_v2_roundtrip);
	tcase_add_loop_test(tc, test_problem_bad, 0,
			    (int)(sizeof(bad_problems) / sizeof(bad_problems[0])));
	tcase_add_test(tc, test_plan_v2_roundtrip);
	tcase_add_loop_test(tc, test_plan_bad, 0,
			    (int)(sizeof(bad_plans) / sizeof(bad_plans[0])));
	tcase_add_test(tc, test_validate_multinode);
	tcase_add_test(tc, test_running_multinode);
	tcase_add_test(tc, test_running_multinode_overlap);
	tcase_add_test(tc, test_gang_plan);
	tcase_add_test(tc, test_gang_busy);
	tcase_add_test(tc, test_fcfs_carry_gang);
	tcase_add_test(tc, test_carry_gang_node_shrunk);
	tcase_add_loop_test(tc, test_bounds_exact, 0, 10);
	tcase_add_loop_test(tc, test_random_valid, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
