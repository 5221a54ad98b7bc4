/* test_formats.c - saturn-problem/1 and saturn-plan/1: parsing, rejection of
 * bad input (each row names the words the message must carry), round trips
 * through JSON, and the file helpers.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats.h"

static const char good_problem[] =
	"{ \"format\": \"saturn-problem/1\", \"comment\": \"ignored\",\n"
	"  \"nodes\": [ { \"name\": \"n1\", \"gpus\": 8, \"class\": \"h100\",\n"
	"                 \"busy\": [ {\"gpu_ids\": [6,7], \"until_s\": 900} ] },\n"
	"               { \"name\": \"n2\", \"gpus\": 4, \"class\": \"a100\" } ],\n"
	"  \"tasks\": [ { \"id\": \"lr-sweep_3\", \"batches\": 15000,\n"
	"                 \"options\": [ { \"technique\": \"fsdp\", \"gpus\": 4, \"sec_per_batch\": 0.41,\n"
	"                                \"class\": \"h100\" },\n"
	"                              { \"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.7 } ],\n"
	"                 \"running\": { \"node\": \"n1\", \"gpu_ids\": [3,0,1,2],\n"
	"                              \"technique\": \"fsdp\", \"gpus\": 4 } },\n"
	"               { \"id\": \"lr-sweep_4\", \"batches\": 100, \"release_s\": 60,\n"
	"                 \"options\": [ { \"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 1e-1 } ] } ] }\n";

START_TEST(test_problem_good)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(good_problem, strlen(good_problem), &err);

	ck_assert_msg(p != NULL, "%s", err.text);
	ck_assert_int_eq(p->nnodes, 2);
	ck_assert_int_eq(p->nclasses, 2);
	ck_assert_int_eq(p->nodes[0].nbusy, 1);
	ck_assert_int_eq(p->nodes[0].busy[0].gpu_ids[1], 7);
	ck_assert_double_eq(p->nodes[0].busy[0].until_s, 900);
	ck_assert_int_eq(p->ntasks, 2);
	ck_assert(p->tasks[0].is_running);
	ck_assert_int_eq(p->tasks[0].running.node, 0);
	ck_assert_int_eq(p->tasks[0].running.option, 0);
	ck_assert_int_eq(p->tasks[0].running.ngpus, 4);
	ck_assert_int_eq(p->tasks[0].options[0].class_idx, 0);
	ck_assert_int_eq(p->tasks[0].options[1].class_idx, -1);
	ck_assert_double_eq(p->tasks[1].release_s, 60);
	ck_assert_double_eq(p->tasks[1].options[0].sec_per_batch, 0.1);
	saturn_problem_destroy(p);
}
END_TEST

/* Serialise, parse again, serialise again: same text, same numbers. */
START_TEST(test_problem_roundtrip)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(good_problem, strlen(good_problem), &err), *q;
	char *a, *b;

	ck_assert_ptr_nonnull(p);
	p->tasks[1].options[0].sec_per_batch = 0.1 + 0.2; /* not short */
	a = saturn_problem_to_json(p);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(strstr(a, "\"sec_per_batch\": 0.41"));
	q = saturn_problem_parse(a, strlen(a), &err);
	ck_assert_msg(q != NULL, "%s\n%s", err.text, a);
	ck_assert_double_eq(q->tasks[1].options[0].sec_per_batch, 0.1 + 0.2);
	ck_assert_int_eq(q->tasks[0].running.option, 0);
	ck_assert_int_eq(q->nodes[0].busy[0].ngpus, 2);
	b = saturn_problem_to_json(q);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	saturn_problem_destroy(p);
	saturn_problem_destroy(q);
}
END_TEST

/* A document is built from a template where "%s" is the part under test. */
static const struct bad_case {
	const char *doc;
	const char *expect1, *expect2;
} bad_problems[] = {
	{"", "empty input", ""},
	{"   \n\t ", "empty input", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [", "truncated", ""},
	{"{\"format\": \"saturn-problem/1\",\n \"nodes\": [}", "malformed JSON", "line 2"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [],}", "malformed JSON", ""},
	{"{\"format\": \"saturn-problem/1\"} trailing", "malformed JSON", ""},
	{"[1, 2]", "must be a JSON object", ""},
	{"{\"nodes\": [], \"tasks\": []}", "format: missing", ""},
	{"{\"format\": \"saturn-problem/3\", \"nodes\": [], \"tasks\": []}", "format: unsupported", "saturn-problem/2"},
	{"{\"format\": 1}", "format: must be a string", ""},
	{"{\"format\": \"saturn-problem/1\", \"tasks\": []}", "nodes: missing", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": {}, \"tasks\": []}", "nodes: must be an array", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [], \"tasks\": []}", "nodes: at least one", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8}]}", "tasks: missing", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"gpus\": 8}], \"tasks\": []}", "nodes[0].name: missing", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"\", \"gpus\": 8}], \"tasks\": []}", "nodes[0].name: must not be empty", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n\\u0000x\", \"gpus\": 8}], \"tasks\": []}", "nodes[0].name", "NUL"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8.5}], \"tasks\": []}", "nodes[0] (n1).gpus", "integer"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": \"8\"}], \"tasks\": []}", "nodes[0] (n1).gpus", "integer"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 99999999999999999999}], \"tasks\": []}", "nodes[0] (n1).gpus", "integer"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": -8}], \"tasks\": []}", "nodes[0] (n1).gpus", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8}, {\"name\": \"n1\", \"gpus\": 8}], \"tasks\": []}", "nodes[1].name", "duplicate"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8, \"busy\": [{\"gpu_ids\": [8], \"until_s\": 1}]}], \"tasks\": []}", "nodes[0] (n1).busy[0].gpu_ids[0]", ""},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8, \"busy\": [{\"gpu_ids\": [1,1], \"until_s\": 1}]}], \"tasks\": []}", "busy[0].gpu_ids", "twice"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8, \"busy\": [{\"gpu_ids\": [1], \"until_s\": NaN}]}], \"tasks\": []}", "busy[0].until_s", "finite"},
	{"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8, \"class\": 3}], \"tasks\": []}", "nodes[0] (n1).class", "string"},
#define N1 "{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8, \"class\": \"h100\"}], \"tasks\": ["
#define OPT "\"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1}]"
	{N1 "{\"batches\": 1, " OPT "}]}", "tasks[0].id: missing", ""},
	{N1 "{\"id\": \"t\", " OPT "}]}", "tasks[0] (t).batches: missing", ""},
	{N1 "{\"id\": \"t\", \"batches\": -1, " OPT "}]}", "tasks[0] (t).batches", ">= 0"},
	{N1 "{\"id\": \"t\", \"batches\": Infinity, " OPT "}]}", "tasks[0] (t).batches", "finite"},
	{N1 "{\"id\": \"t\", \"batches\": -Infinity, " OPT "}]}", "tasks[0] (t).batches", "finite"},
	{N1 "{\"id\": \"t\", \"batches\": 1e999, " OPT "}]}", "tasks[0] (t).batches", "finite"},
	{N1 "{\"id\": \"t\", \"batches\": \"10\", " OPT "}]}", "tasks[0] (t).batches", "number"},
	{N1 "{\"id\": \"t\", \"batches\": true, " OPT "}]}", "tasks[0] (t).batches", "number"},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"release_s\": -5, " OPT "}]}", "tasks[0] (t).release_s", ""},
	{N1 "{\"id\": \"t\", \"batches\": 1}]}", "tasks[0] (t).options: missing", ""},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": []}]}", "tasks[0] (t).options", "at least one"},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": [7]}]}", "tasks[0] (t).options[0]", "object"},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": [{\"gpus\": 2, \"sec_per_batch\": 1}]}]}", "options[0].technique: missing", ""},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 0, \"sec_per_batch\": 1}]}]}", "tasks[0] (t).options[0].gpus", "integer"},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0}]}]}", "tasks[0] (t).options[0].sec_per_batch", "> 0"},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": NaN}]}]}", "options[0].sec_per_batch", "finite"},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"class\": \"v100\"}]}]}", "tasks[0] (t).options[0].class", "v100"},
	{N1 "{\"id\": \"t\", \"batches\": 1, \"options\": [{\"technique\": \"ddp\", \"gpus\": 16, \"sec_per_batch\": 1}]}]}", "tasks[0] (t)", "no option fits"},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT "}, {\"id\": \"t\", \"batches\": 2, " OPT "}]}", "tasks[1].id", "duplicate task id \"t\""},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT ", \"running\": {\"node\": \"n9\", \"gpu_ids\": [0,1], \"technique\": \"ddp\"}}]}", "tasks[0] (t).running.node", "unknown node \"n9\""},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT ", \"running\": {\"node\": \"n1\", \"gpu_ids\": [0,1], \"technique\": \"fsdp\"}}]}", "tasks[0] (t).running", "matches none"},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT ", \"running\": {\"node\": \"n1\", \"gpu_ids\": [0,1], \"technique\": \"ddp\", \"gpus\": 4}}]}", "tasks[0] (t).running.gpus", ""},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT ", \"running\": {\"node\": \"n1\", \"gpu_ids\": [0,9], \"technique\": \"ddp\"}}]}", "tasks[0] (t).running.gpu_ids[1]", ""},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT ", \"running\": {\"node\": \"n1\", \"gpu_ids\": [0,1], \"technique\": \"ddp\"}, \"release_s\": 5}]}", "tasks[0] (t)", "release_s"},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT ", \"running\": [1]}]}", "tasks[0] (t).running", "object"},
	{N1 "{\"id\": \"a\", \"batches\": 1, " OPT ", \"running\": {\"node\": \"n1\", \"gpu_ids\": [0,1], \"technique\": \"ddp\"}}, "
	    "{\"id\": \"b\", \"batches\": 1, " OPT ", \"running\": {\"node\": \"n1\", \"gpu_ids\": [1,2], \"technique\": \"ddp\"}}]}", "tasks[1] (b).running.gpu_ids", "GPU 1"},
	{N1 "{\"id\": \"t\", \"batches\": 1, " OPT "}, 7]}", "tasks[1]", "object"},
	{N1 "{\"id\": 12, \"batches\": 1, " OPT "}]}", "tasks[0].id", "string"},
};

START_TEST(test_problem_bad)
{
	const struct bad_case *c = &bad_problems[_i];
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(c->doc, strlen(c->doc), &err);

	ck_assert_msg(p == NULL, "accepted: %s", c->doc);
	ck_assert_msg(strstr(err.text, c->expect1) && strstr(err.text, c->expect2),
		      "message \"%s\" lacks \"%s\"/\"%s\" for %s", err.text,
		      c->expect1, c->expect2, c->doc);
}
END_TEST

/* Every prefix of a good document is refused cleanly (never accepted,
 * never a crash). */
START_TEST(test_problem_truncated)
{
	size_t len = strlen(good_problem);
	saturn_error_t err = {{0}};

	for (size_t n = 0; n < len - 2; n++) {
		saturn_problem_t *p = saturn_problem_parse(good_problem, n, &err);

		ck_assert_msg(p == NULL, "prefix of %zu bytes accepted", n);
		ck_assert(err.text[0] != '\0');
	}
}
END_TEST

static const char good_plan[] =
	"{ \"format\": \"saturn-plan/1\", \"makespan_s\": 6150.0, \"lower_bound_s\": 6000,\n"
	"  \"solver\": { \"method\": \"milp\", \"status\": \"feasible\", \"solve_s\": 1.8 },\n"
	"  \"tasks\": [ { \"id\": \"lr-sweep_3\", \"technique\": \"fsdp\", \"gpus\": 4, \"node\": \"n1\",\n"
	"               \"gpu_ids\": [3,1,2,0], \"start_s\": 0.0, \"end_s\": 6150.0 },\n"
	"             { \"id\": \"lr-sweep_4\", \"technique\": \"single\", \"gpus\": 1, \"node\": \"n2\",\n"
	"               \"gpu_ids\": [0], \"start_s\": 60, \"end_s\": 70 } ] }";

START_TEST(test_plan_roundtrip)
{
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = saturn_plan_parse(good_plan, strlen(good_plan), &err), *again;
	char *a, *b;

	ck_assert_msg(plan != NULL, "%s", err.text);
	ck_assert_int_eq(plan->nassign, 2);
	ck_assert_str_eq(plan->method, "milp");
	ck_assert_str_eq(plan->status, "feasible");
	ck_assert_double_eq(plan->solve_s, 1.8);
	ck_assert_double_eq(plan->lower_bound_s, 6000);
	ck_assert_int_eq(plan->assign[0].task, -1);
	ck_assert_int_eq(plan->assign[0].gpu_ids[0], 0); /* sorted */
	ck_assert_int_eq(plan->assign[0].gpu_ids[3], 3);
	ck_assert_str_eq(plan->assign[1].node_name, "n2");
	for (int pretty = 0; pretty < 2; pretty++) {
		a = saturn_plan_to_json(plan, pretty);
		ck_assert_ptr_nonnull(a);
		again = saturn_plan_parse(a, strlen(a), &err);
		ck_assert_msg(again != NULL, "%s\n%s", err.text, a);
		b = saturn_plan_to_json(again, pretty);
		ck_assert_str_eq(a, b);
		ck_assert_double_eq(again->assign[1].start_s, 60);
		free(a);
		free(b);
		saturn_plan_destroy(again);
	}
	saturn_plan_destroy(plan);
}
END_TEST

/* The plan parses, resolves against the problem and validates. */
START_TEST(test_plan_resolve)
{
	static const char problem[] =
		"{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8}, {\"name\": \"n2\", \"gpus\": 2}],"
		" \"tasks\": [{\"id\": \"lr-sweep_3\", \"batches\": 15000, \"options\": [{\"technique\": \"fsdp\", \"gpus\": 4, \"sec_per_batch\": 0.41}]},"
		" {\"id\": \"lr-sweep_4\", \"batches\": 100, \"release_s\": 60, \"options\": [{\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 0.1}]}]}";
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(problem, strlen(problem), &err);
	saturn_plan_t *plan;

	ck_assert_msg(p != NULL, "%s", err.text);
	plan = saturn_plan_parse(good_plan, strlen(good_plan), &err);
	ck_assert_ptr_nonnull(plan);
	ck_assert_msg(saturn_plan_resolve(plan, p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(plan->assign[1].node, 1);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

/* Option identity: ddp on 2 GPUs twice at one speed, for any class and
 * for class a100 (the batch's profile and the class's own, say), and ddp
 * on 4. A plan entry's "option" names which; without it (an older plan)
 * the first that fits is taken, once, at resolve. */
START_TEST(test_plan_option)
{
	static const char problem[] =
	    "{\"format\": \"saturn-problem/1\", \"nodes\": [{\"name\": \"n1\", \"gpus\": 8, "
	    "\"class\": \"a100\"}],"
	    " \"tasks\": [{\"id\": \"t\", \"batches\": 10, \"options\": ["
	    "  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1},"
	    "  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1, \"class\": \"a100\"},"
	    "  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 1}]}]}";
	static const char *const plans[] = {
	    "{\"format\": \"saturn-plan/1\", \"makespan_s\": 10, \"tasks\": [{\"id\": \"t\", "
	    "\"technique\": \"ddp\","
	    " \"gpus\": 2, \"node\": \"n1\", \"gpu_ids\": [0, 1], \"start_s\": 0, \"end_s\": 10, "
	    "\"option\": 1}]}",
	    "{\"format\": \"saturn-plan/1\", \"makespan_s\": 10, \"tasks\": [{\"id\": \"t\", "
	    "\"technique\": \"ddp\","
	    " \"gpus\": 2, \"node\": \"n1\", \"gpu_ids\": [0, 1], \"start_s\": 0, \"end_s\": 10}]}",
	    "{\"format\": \"saturn-plan/1\", \"makespan_s\": 10, \"tasks\": [{\"id\": \"t\", "
	    "\"technique\": \"ddp\","
	    " \"gpus\": 2, \"node\": \"n1\", \"gpu_ids\": [0, 1], \"start_s\": 0, \"end_s\": 10, "
	    "\"option\": 2}]}",
	    "{\"format\": \"saturn-plan/1\", \"makespan_s\": 10, \"tasks\": [{\"id\": \"t\", "
	    "\"technique\": \"ddp\","
	    " \"gpus\": 2, \"node\": \"n1\", \"gpu_ids\": [0, 1], \"start_s\": 0, \"end_s\": 10, "
	    "\"option\": 3}]}",
	};
	const int want[] = {1, 0, 2, -1};
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse(problem, strlen(problem), &err);

	ck_assert_msg(p != NULL, "%s", err.text);
	for (int i = 0; i < 4; i++) {
		saturn_plan_t *plan = saturn_plan_parse(plans[i], strlen(plans[i]), &err);
		char *js;

		ck_assert_msg(plan != NULL, "%s", err.text);
		ck_assert_int_eq(plan->assign[0].option, i == 1 ? -1 : i == 0 ? 1 : i);
		if (want[i] < 0) {
			ck_assert_int_eq(saturn_plan_resolve(plan, p, &err), -1);
			ck_assert_msg(strstr(err.text, "option index 3 out of range"), "%s",
				      err.text);
			saturn_plan_destroy(plan);
			continue;
		}
		ck_assert_msg(saturn_plan_resolve(plan, p, &err) == 0, "%s", err.text);
		ck_assert_int_eq(plan->assign[0].option, want[i]);
		if (want[i] == 2) {
			/* the option it names is on 4 GPUs: not a valid entry */
			ck_assert_int_eq(saturn_plan_validate(plan, p, &err), -1);
			ck_assert_msg(strstr(err.text, "GPU"), "%s", err.text);
			saturn_plan_destroy(plan);
			continue;
		}
		ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
		/* written back with the option it now knows */
		js = saturn_plan_to_json(plan, 0);
		ck_assert_ptr_nonnull(js);
		ck_assert_ptr_nonnull(strstr(js, want[i] ? "\"option\":1" : "\"option\":0"));
		free(js);
		saturn_plan_destroy(plan);
	}
	saturn_problem_destroy(p);
}
END_TEST

#define PL "{\"format\": \"saturn-plan/1\", \"makespan_s\": 10, \"tasks\": ["
static const struct bad_case bad_plans[] = {
    {"", "empty input", ""},
    {"{\"format\": \"saturn-problem/1\"}", "format: unsupported", ""},
    {"{\"format\": \"saturn-plan/1\", \"tasks\": []}", "makespan_s: missing", ""},
    {"{\"format\": \"saturn-plan/1\", \"makespan_s\": -1, \"tasks\": []}", "makespan_s", ">= 0"},
    {"{\"format\": \"saturn-plan/1\", \"makespan_s\": 1, \"solver\": 3, \"tasks\": []}", "solver",
     "object"},
    {"{\"format\": \"saturn-plan/1\", \"makespan_s\": 1, \"solver\": {\"method\": "
     "\"a-very-long-method-name-beyond-31-chars\"}, \"tasks\": []}",
     "solver.method", "longer"},
    {PL "{\"technique\": \"x\", \"gpus\": 1, \"node\": \"n\", \"gpu_ids\": [0], \"start_s\": 0, "
	"\"end_s\": 1}]}",
     "tasks[0].id: missing", ""},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 2, \"node\": \"n\", \"gpu_ids\": [0], "
	"\"start_s\": 0, \"end_s\": 1}]}",
     "tasks[0] (t).gpu_ids", "1 ids for 2 GPUs"},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"n\", \"gpu_ids\": [0], "
	"\"start_s\": 5, \"end_s\": 1}]}",
     "tasks[0] (t).end_s", "before"},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"n\", \"gpu_ids\": [0], "
	"\"start_s\": NaN, \"end_s\": 1}]}",
     "tasks[0] (t).start_s", "finite"},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"gpu_ids\": [0], \"start_s\": 0, "
	"\"end_s\": 1}]}",
     "tasks[0] (t).node: missing", ""},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"n\", \"gpu_ids\": [0.5], "
	"\"start_s\": 0, \"end_s\": 1}]}",
     "tasks[0] (t).gpu_ids[0]", "integer"},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"n\", \"gpu_ids\": [0], "
	"\"start_s\": 0, \"end_s\": 1}",
     "truncated", ""},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"n\", \"gpu_ids\": [0], "
	"\"start_s\": 0, \"end_s\": 1, \"option\": -1}]}",
     "tasks[0] (t).option", ""},
    {PL "{\"id\": \"t\", \"technique\": \"x\", \"gpus\": 1, \"node\": \"n\", \"gpu_ids\": [0], "
	"\"start_s\": 0, \"end_s\": 1, \"option\": 256}]}",
     "tasks[0] (t).option", ""},
};

START_TEST(test_plan_bad)
{
	const struct bad_case *c = &bad_plans[_i];
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = saturn_plan_parse(c->doc, strlen(c->doc), &err);

	ck_assert_msg(plan == NULL, "accepted: %s", c->doc);
	ck_assert_msg(strstr(err.text, c->expect1) && strstr(err.text, c->expect2),
		      "message \"%s\" lacks \"%s\"/\"%s\" for %s", err.text,
		      c->expect1, c->expect2, c->doc);
}
END_TEST

START_TEST(test_files)
{
	char dir[] = "/tmp/saturn-test-XXXXXX", path[64], big[64];
	saturn_error_t err = {{0}};
	saturn_problem_t *p;
	size_t len = 0;
	char *buf;
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/problem.json", dir);
	ck_assert_int_eq(saturn_write_file_atomic(path, good_problem, strlen(good_problem), &err), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	buf = saturn_read_file(path, 1 << 20, &len, &err);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(len, strlen(good_problem));
	ck_assert_str_eq(buf, good_problem);
	free(buf);
	/* overwrite in place */
	ck_assert_int_eq(saturn_write_file_atomic(path, "{}", 2, &err), 0);
	buf = saturn_read_file(path, 1 << 20, &len, &err);
	ck_assert_str_eq(buf, "{}");
	free(buf);
	/* size limit, missing file, directory, load errors carry the name */
	ck_assert_ptr_null(saturn_read_file(path, 1, &len, &err));
	ck_assert_ptr_nonnull(strstr(err.text, "larger than"));
	snprintf(big, sizeof(big), "%s/nope.json", dir);
	ck_assert_ptr_null(saturn_read_file(big, 100, &len, &err));
	ck_assert_ptr_nonnull(strstr(err.text, big));
	ck_assert_ptr_null(saturn_read_file(dir, 100, &len, &err));
	ck_assert_ptr_nonnull(strstr(err.text, "directory"));
	p = saturn_problem_load(path, &err);
	ck_assert_ptr_null(p);
	ck_assert_msg(strncmp(err.text, path, strlen(path)) == 0 && strstr(err.text, "format: missing"), "%s", err.text);
	ck_assert_int_eq(saturn_write_file_atomic(path, good_problem, strlen(good_problem), &err), 0);
	p = saturn_problem_load(path, &err);
	ck_assert_msg(p != NULL, "%s", err.text);
	saturn_problem_destroy(p);
	/* unwritable directory */
	snprintf(big, sizeof(big), "%s/no/such/dir.json", dir);
	ck_assert_int_eq(saturn_write_file_atomic(big, "x", 1, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, big));
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0); /* no temporary files left */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("formats");
	TCase *tc = tcase_create("formats");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_problem_good);
	tcase_add_test(tc, test_problem_roundtrip);
	tcase_add_loop_test(tc, test_problem_bad, 0, sizeof(bad_problems) / sizeof(bad_problems[0]));
	tcase_add_test(tc, test_problem_truncated);
	tcase_add_test(tc, test_plan_roundtrip);
	tcase_add_test(tc, test_plan_resolve);
	tcase_add_test(tc, test_plan_option);
	tcase_add_loop_test(tc, test_plan_bad, 0, sizeof(bad_plans) / sizeof(bad_plans[0]));
	tcase_add_test(tc, test_files);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
