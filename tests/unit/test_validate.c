/* test_validate.c - plan validation, name resolution and GPU id assignment.
 *
 * One small problem (two nodes of different classes, a running task, a busy
 * GPU, a release time) and a valid plan for it; each table row breaks the
 * plan (or the problem) in one way and names the words the error must carry
 * (the task and the kind of violation). A large case checks the validator
 * and the GPU assigner stay fast at SATURN_MAX_TASKS tasks.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"

static saturn_option_t opt(const char *tech, int gpus, double spb,
			   const char *klass)
{
	saturn_option_t o = {0};

	o.technique = strdup(tech);
	o.gpus = gpus;
	o.sec_per_batch = spb;
	o.klass = klass ? strdup(klass) : NULL;
	return o;
}

static void add_node(saturn_problem_t *p, const char *name, int gpus,
		     const char *klass)
{
	saturn_node_t n = {0};

	n.name = strdup(name);
	n.gpus = gpus;
	n.klass = klass ? strdup(klass) : NULL;
	ck_assert_int_ge(saturn_problem_add_node(p, &n), 0);
}

/* Nodes n1 (8 GPUs, class a; GPU 7 busy until 30 s) and n2 (4 GPUs, class
 * b). t0 runs on n1 GPUs 0,1 (ddp/2, 100 s left); t1 has ddp/4 (100 s, any
 * class) and single/1 (300 s, class b only); t2 has fsdp/2 (50 s), released
 * at 50 s. */
static saturn_problem_t *base_problem(void)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_task_t t = {0};
	saturn_error_t err = {{0}};

	add_node(p, "n1", 8, "a");
	add_node(p, "n2", 4, "b");
	p->nodes[0].nbusy = 1;
	p->nodes[0].busy = calloc(1, sizeof(saturn_busy_t));
	p->nodes[0].busy[0].ngpus = 1;
	p->nodes[0].busy[0].gpu_ids = calloc(1, sizeof(int));
	p->nodes[0].busy[0].gpu_ids[0] = 7;
	p->nodes[0].busy[0].until_s = 30;

	t.id = strdup("t0");
	t.batches = 100;
	t.noptions = 1;
	t.options = calloc(1, sizeof(saturn_option_t));
	t.options[0] = opt("ddp", 2, 1.0, NULL);
	t.is_running = true;
	t.running.node = 0;
	t.running.ngpus = 2;
	t.running.gpu_ids = calloc(2, sizeof(int));
	t.running.gpu_ids[0] = 0;
	t.running.gpu_ids[1] = 1;
	t.running.option = 0;
	ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);

	memset(&t, 0, sizeof(t));
	t.id = strdup("t1");
	t.batches = 100;
	t.noptions = 2;
	t.options = calloc(2, sizeof(saturn_option_t));
	t.options[0] = opt("ddp", 4, 1.0, NULL);
	t.options[1] = opt("single", 1, 3.0, "b");
	ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);

	memset(&t, 0, sizeof(t));
	t.id = strdup("t2");
	t.batches = 100;
	t.noptions = 1;
	t.options = calloc(1, sizeof(saturn_option_t));
	t.options[0] = opt("fsdp", 2, 0.5, NULL);
	t.release_s = 50;
	ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);

	ck_assert_msg(saturn_problem_check(p, &err) == 0, "%s", err.text);
	return p;
}

static void set(saturn_plan_t *plan, const saturn_problem_t *p, int i, int t,
		int o, int n, double start, int g0)
{
	int ids[8];

	for (int g = 0; g < 8; g++)
		ids[g] = g0 + g;
	ck_assert_int_eq(saturn_plan_set(plan, i, p, t, o, n, start, ids), 0);
}

static saturn_plan_t *base_plan(const saturn_problem_t *p)
{
	saturn_plan_t *plan = saturn_plan_create(3);

	set(plan, p, 0, 0, 0, 0, 0, 0);  /* t0 n1 [0,1] 0-100 */
	set(plan, p, 1, 1, 0, 0, 0, 2);  /* t1 n1 [2..5] 0-100 */
	set(plan, p, 2, 2, 0, 0, 50, 6); /* t2 n1 [6,7] 50-100 */
	plan->makespan_s = 100;
	return plan;
}

/* As a plan read from JSON: names only. */
static void forget_indices(saturn_plan_t *plan)
{
	for (int i = 0; i < plan->nassign; i++)
		plan->assign[i].task = plan->assign[i].option =
			plan->assign[i].node = -1;
}

static void ids2(saturn_assign_t *a, int x, int y)
{
	a->gpu_ids[0] = x;
	a->gpu_ids[1] = y;
}

static void m_missing(saturn_problem_t *p, saturn_plan_t *pl) { pl->nassign = 2; }
static void m_twice(saturn_problem_t *p, saturn_plan_t *pl) { set(pl, p, 2, 1, 1, 1, 0, 0); }
static void m_unknown_task(saturn_problem_t *p, saturn_plan_t *pl)
{
	forget_indices(pl);
	free(pl->assign[2].task_id);
	pl->assign[2].task_id = strdup("t9");
}
static void m_unknown_node(saturn_problem_t *p, saturn_plan_t *pl)
{
	forget_indices(pl);
	free(pl->assign[2].node_name);
	pl->assign[2].node_name = strdup("n9");
}
static void m_technique(saturn_problem_t *p, saturn_plan_t *pl)
{
	forget_indices(pl);
	free(pl->assign[2].technique);
	pl->assign[2].technique = strdup("pipeline");
}
static void m_class_by_name(saturn_problem_t *p, saturn_plan_t *pl)
{
	set(pl, p, 1, 1, 1, 0, 0, 2); /* single/1 is class b; n1 is a */
	forget_indices(pl);
}
static void m_class_by_index(saturn_problem_t *p, saturn_plan_t *pl) { set(pl, p, 1, 1, 1, 0, 0, 2); }
static void m_gpu_count(saturn_problem_t *p, saturn_plan_t *pl) { pl->assign[1].gpus = 3; }
static void m_duration(saturn_problem_t *p, saturn_plan_t *pl) { pl->assign[1].end_s = 99; }
static void m_release(saturn_problem_t *p, saturn_plan_t *pl)
{
	pl->assign[2].start_s = 40;
	pl->assign[2].end_s = 90;
}
static void m_run_start(saturn_problem_t *p, saturn_plan_t *pl)
{
	pl->assign[0].start_s = 5;
	pl->assign[0].end_s = 105;
	pl->makespan_s = 105;
}
static void m_run_ids(saturn_problem_t *p, saturn_plan_t *pl) { ids2(&pl->assign[0], 0, 6); }
static void m_run_node(saturn_problem_t *p, saturn_plan_t *pl) { set(pl, p, 0, 0, 0, 1, 0, 0); }
static void m_range(saturn_problem_t *p, saturn_plan_t *pl) { ids2(&pl->assign[2], 6, 8); }
static void m_negative_id(saturn_problem_t *p, saturn_plan_t *pl) { ids2(&pl->assign[2], -1, 6); }
static void m_twice_id(saturn_problem_t *p, saturn_plan_t *pl) { ids2(&pl->assign[2], 6, 6); }
static void m_busy(saturn_problem_t *p, saturn_plan_t *pl) { p->nodes[0].busy[0].until_s = 60; }
static void m_overlap(saturn_problem_t *p, saturn_plan_t *pl) { ids2(&pl->assign[2], 5, 6); }
static void m_overlap_running(saturn_problem_t *p, saturn_plan_t *pl) { ids2(&pl->assign[2], 1, 6); }
static void m_makespan(saturn_problem_t *p, saturn_plan_t *pl) { pl->makespan_s = 120; }
static void m_nan(saturn_problem_t *p, saturn_plan_t *pl) { pl->assign[2].start_s = NAN; }
static void m_no_ids(saturn_problem_t *p, saturn_plan_t *pl)
{
	free(pl->assign[2].gpu_ids);
	pl->assign[2].gpu_ids = NULL;
}
static void m_wrong_name(saturn_problem_t *p, saturn_plan_t *pl)
{
	free(pl->assign[2].task_id);
	pl->assign[2].task_id = strdup("t1");
}

static void m_name_index0(saturn_problem_t *p, saturn_plan_t *pl)
{
	free(pl->assign[0].task_id);
	pl->assign[0].task_id = strdup("t1");
}
static void m_node_index0(saturn_problem_t *p, saturn_plan_t *pl)
{
	free(pl->assign[1].node_name);
	pl->assign[1].node_name = strdup("n2");
}
static void m_task_index_end(saturn_problem_t *p, saturn_plan_t *pl) { pl->assign[2].task = 3; }
static void m_node_index_end(saturn_problem_t *p, saturn_plan_t *pl) { pl->assign[2].node = 2; }
static void m_option_index_end(saturn_problem_t *p, saturn_plan_t *pl) { pl->assign[2].option = 1; }
static void m_twice_first(saturn_problem_t *p, saturn_plan_t *pl) { set(pl, p, 2, 0, 0, 0, 0, 0); }
/* t0 (running ddp/2) gets a second option o; the plan runs it with that */
static void run_other(saturn_problem_t *p, saturn_plan_t *pl, saturn_option_t o)
{
	saturn_task_t *t = &p->tasks[0];

	t->options = realloc(t->options, 2 * sizeof(saturn_option_t));
	t->options[1] = o;
	t->noptions = 2;
	set(pl, p, 0, 0, 1, 0, 0, 0);
}
static void m_run_technique(saturn_problem_t *p, saturn_plan_t *pl) { run_other(p, pl, opt("fsdp", 2, 1.0, NULL)); }
static void m_run_gpus(saturn_problem_t *p, saturn_plan_t *pl) { run_other(p, pl, opt("ddp", 4, 1.0, NULL)); }
static void m_bad_count(saturn_problem_t *p, saturn_plan_t *pl) { pl->nassign = -1; }

static const struct bad_case {
	const char *name;
	void (*mutate)(saturn_problem_t *, saturn_plan_t *);
	const char *expect1, *expect2;
} bad_cases[] = {
	{"missing task", m_missing, "t2", "missing from the plan"},
	{"task twice", m_twice, "t1", "planned twice"},
	{"unknown task", m_unknown_task, "t9", "no task with this id"},
	{"unknown node", m_unknown_node, "t2", "unknown node \"n9\""},
	{"unknown technique", m_technique, "t2", "not an option"},
	{"class (names)", m_class_by_name, "t1", "not an option"},
	{"class (indices)", m_class_by_index, "t1", "does not fit node n1"},
	{"GPU count", m_gpu_count, "t1", "3 GPUs planned"},
	{"duration", m_duration, "t1", "duration"},
	{"before release", m_release, "t2", "before its release_s"},
	{"running start", m_run_start, "t0", "must start at 0"},
	{"running GPU ids", m_run_ids, "t0", "keep its GPU ids"},
	{"running node", m_run_node, "t0", "running on node n1"},
	{"GPU id range", m_range, "t2", "out of range on node n1 (0..7)"},
	{"negative GPU id", m_negative_id, "t2", "out of range"},
	{"GPU id twice", m_twice_id, "t2", "listed twice"},
	{"busy GPU", m_busy, "t2", "busy until 60"},
	{"overlap", m_overlap, "t2", "overlaps task t1 on GPU 5"},
	{"overlap running", m_overlap_running, "t2", "overlaps task t0 on GPU 1"},
	{"makespan", m_makespan, "makespan_s", "120"},
	{"non-finite time", m_nan, "t2", "finite"},
	{"no GPU ids", m_no_ids, "t2", "no GPU ids"},
	{"name vs index", m_wrong_name, "t1", "names task \"t2\""},
	{"name vs index 0", m_name_index0, "tasks[0]", "task index 0 names task \"t0\""},
	{"node name vs index 0", m_node_index0, "t1", "node index 0 names node \"n1\", not \"n2\""},
	{"task index = ntasks", m_task_index_end, "t2", "task index 3 out of range"},
	{"node index = nnodes", m_node_index_end, "t2", "node index 2 out of range"},
	{"option index = noptions", m_option_index_end, "t2", "option index 1 out of range"},
	{"first task twice", m_twice_first, "t0", "planned twice (plan tasks[0] and [2])"},
	{"running, other technique", m_run_technique, "t0", "running with ddp/2 GPUs but planned with fsdp/2"},
	{"running, other GPU count", m_run_gpus, "t0", "running with ddp/2 GPUs but planned with ddp/4"},
	{"negative count", m_bad_count, "plan", "bad assignment array"},
};

START_TEST(test_valid)
{
	saturn_problem_t *p = base_problem();
	saturn_plan_t *plan = base_plan(p);
	saturn_error_t err = {{0}};

	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	forget_indices(plan);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(saturn_plan_resolve(plan, p, &err), 0);
	ck_assert_int_eq(plan->assign[1].task, 1);
	ck_assert_int_eq(plan->assign[1].option, 0);
	ck_assert_int_eq(plan->assign[1].node, 0);
	/* within tolerance */
	plan->assign[1].end_s += 5e-5;
	plan->makespan_s += 5e-5;
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_bad)
{
	const struct bad_case *c = &bad_cases[_i];
	saturn_problem_t *p = base_problem();
	saturn_plan_t *plan = base_plan(p);
	saturn_error_t err = {{0}};

	c->mutate(p, plan);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == -1,
		      "%s: accepted", c->name);
	ck_assert_msg(strstr(err.text, c->expect1) && strstr(err.text, c->expect2),
		      "%s: message \"%s\" lacks \"%s\"/\"%s\"", c->name,
		      err.text, c->expect1, c->expect2);
	if (plan->nassign == 2 || plan->nassign == -1)
		plan->nassign = 3; /* the mutation's count: every entry freed */
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_resolve_errors)
{
	saturn_problem_t *p = base_problem();
	saturn_plan_t *plan = base_plan(p);
	saturn_error_t err = {{0}};

	forget_indices(plan);
	free(plan->assign[1].technique);
	plan->assign[1].technique = strdup("zero");
	ck_assert_int_eq(saturn_plan_resolve(plan, p, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "t1"));
	ck_assert_ptr_nonnull(strstr(err.text, "zero"));
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

/* Touching intervals share GPUs; a zero-length task takes none. */
START_TEST(test_touching)
{
	saturn_problem_t *p = base_problem();
	saturn_plan_t *plan = base_plan(p);
	saturn_error_t err = {{0}};

	/* t2 right after t1 on t1's GPUs: 100-150 */
	set(plan, p, 2, 2, 0, 0, 100, 2);
	plan->makespan_s = 150;
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	/* ... but 1 s earlier it overlaps (and starts after release) */
	set(plan, p, 2, 2, 0, 0, 99, 2);
	plan->makespan_s = 149;
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "overlaps"));
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_assign_gpus)
{
	saturn_problem_t *p = base_problem();
	saturn_plan_t *plan = saturn_plan_create(3);
	saturn_error_t err = {{0}};

	ck_assert_int_eq(saturn_plan_set(plan, 0, p, 0, 0, 0, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(plan, 1, p, 1, 0, 0, 0, NULL), 0);
	ck_assert_int_eq(saturn_plan_set(plan, 2, p, 2, 0, 0, 50, NULL), 0);
	plan->makespan_s = 100;
	ck_assert_msg(saturn_plan_assign_gpus(plan, p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(plan->assign[0].gpu_ids[0], 0);
	ck_assert_int_eq(plan->assign[0].gpu_ids[1], 1);
	/* free at 0: 2..6 (7 busy); best fit for 4 is 2..5 */
	ck_assert_int_eq(plan->assign[1].gpu_ids[0], 2);
	ck_assert_int_eq(plan->assign[1].gpu_ids[3], 5);
	ck_assert_int_eq(plan->assign[2].gpu_ids[0], 6);
	ck_assert_int_eq(plan->assign[2].gpu_ids[1], 7);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);

	/* t2 at 20 s: GPU 7 is still busy, 6 is free: overloaded */
	plan->assign[2].start_s = 20;
	ck_assert_int_eq(saturn_plan_assign_gpus(plan, p, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.text, "t2"));
	ck_assert_ptr_nonnull(strstr(err.text, "overloaded"));
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

/* Best fit: with free runs {0,1} and {4..7}, a 2-GPU task takes 0,1. */
START_TEST(test_best_fit)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_plan_t *plan = saturn_plan_create(4);
	saturn_error_t err = {{0}};
	const int gpus[4] = {2, 2, 2, 2};
	const double start[4] = {0, 0, 10, 10};

	add_node(p, "n", 8, NULL);
	for (int i = 0; i < 4; i++) {
		saturn_task_t t = {0};
		char id[8];

		snprintf(id, sizeof(id), "x%d", i);
		t.id = strdup(id);
		t.batches = 10 + 10 * (i == 1);
		t.noptions = 1;
		t.options = calloc(1, sizeof(saturn_option_t));
		t.options[0] = opt("ddp", gpus[i], 1.0, NULL);
		ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);
	}
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	/* x0 [0,1] 0-10, x1 [2,3] 0-20; at 10: free 0,1 and 4..7 */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(saturn_plan_set(plan, i, p, i, 0, 0, start[i], NULL), 0);
	plan->makespan_s = 20;
	ck_assert_msg(saturn_plan_assign_gpus(plan, p, &err) == 0, "%s", err.text);
	ck_assert_int_eq(plan->assign[0].gpu_ids[0], 0);
	ck_assert_int_eq(plan->assign[1].gpu_ids[0], 2);
	ck_assert_int_eq(plan->assign[2].gpu_ids[0], 0); /* best fit */
	ck_assert_int_eq(plan->assign[3].gpu_ids[0], 4);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

/* What the validator must accept: a running task planned with another
 * copy (index) of its own option; a zero-length task, which takes no GPU
 * time, on a busy GPU and inside another task's interval; an empty plan
 * of an empty problem. And what it refuses before looking at entries. */
START_TEST(test_accepts)
{
	saturn_problem_t *p = base_problem(), *empty = saturn_problem_create();
	saturn_plan_t *plan = base_plan(p), *none = saturn_plan_create(0);
	saturn_error_t err = {{0}};
	saturn_assign_t *keep;

	/* t0's option ddp/2 again, for class a: same technique and count */
	run_other(p, plan, opt("ddp", 2, 1.0, "a"));
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);

	/* t2 without batches: at 50 s on busy GPU 7 (until 60 s) and on t1's
	 * GPUs 2, 3 (0-100 s) */
	p = base_problem();
	plan = base_plan(p);
	p->nodes[0].busy[0].until_s = 60;
	p->tasks[2].batches = 0;
	set(plan, p, 2, 2, 0, 0, 50, 6);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "busy: %s", err.text);
	set(plan, p, 2, 2, 0, 0, 50, 2);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "inside t1: %s", err.text);
	/* ... but a real t2 there is refused */
	p->tasks[2].batches = 100;
	set(plan, p, 2, 2, 0, 0, 50, 2);
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), -1);

	/* no plan, no problem, no assignments */
	ck_assert_int_eq(saturn_plan_validate(NULL, p, &err), -1);
	ck_assert_msg(strstr(err.text, "no plan or problem"), "%s", err.text);
	ck_assert_int_eq(saturn_plan_validate(plan, NULL, &err), -1);
	ck_assert_msg(strstr(err.text, "no plan or problem"), "%s", err.text);
	keep = plan->assign;
	plan->assign = NULL;
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), -1);
	ck_assert_msg(strstr(err.text, "bad assignment array"), "%s", err.text);
	plan->assign = keep;
	ck_assert_ptr_nonnull(none);
	ck_assert_msg(saturn_plan_validate(none, empty, &err) == 0, "%s", err.text);
	saturn_plan_destroy(none);
	saturn_problem_destroy(empty);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* SATURN_MAX_TASKS tasks on 4 x 8 GPUs, back to back with mixed widths.
 * assign + validate take about 0.1 s each here (-O2; ~1 s under ASan); the
 * 10 s limits only catch a quadratic algorithm, which would take minutes. */
START_TEST(test_large)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_plan_t *plan;
	saturn_error_t err = {{0}};
	double clock_[4][8] = {{0}};
	double t0, dt, makespan = 0;
	const int n = SATURN_MAX_TASKS;

	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		add_node(p, name, 8, NULL);
	}
	for (int i = 0; i < n; i++) {
		saturn_task_t t = {0};
		char id[16];

		snprintf(id, sizeof(id), "task-%d", i);
		t.id = strdup(id);
		t.batches = 1 + i % 7;
		t.noptions = 1;
		t.options = calloc(1, sizeof(saturn_option_t));
		t.options[0] = opt("ddp", 1 << (i % 4), 0.25 * (1 + i % 3), NULL);
		ck_assert_int_ge(saturn_problem_add_task(p, &t), 0);
	}
	t0 = now_s();
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	dt = now_s() - t0;
	ck_assert_msg(dt < 10.0, "problem check took %.2f s", dt);
	plan = saturn_plan_create(n);
	/* a simple list schedule: each task on a block of GPUs aligned to its
	 * width, starting when the block's latest GPU frees */
	for (int i = 0; i < n; i++) {
		int node = i % 4, w = 1 << (i % 4), blk = (i / 4) % (8 / w);
		double s = 0, e;

		for (int g = blk * w; g < blk * w + w; g++)
			if (clock_[node][g] > s)
				s = clock_[node][g];
		ck_assert_int_eq(saturn_plan_set(plan, i, p, i, 0, node, s, NULL), 0);
		e = plan->assign[i].end_s;
		for (int g = blk * w; g < blk * w + w; g++)
			clock_[node][g] = e;
		if (e > makespan)
			makespan = e;
	}
	plan->makespan_s = makespan;
	t0 = now_s();
	ck_assert_msg(saturn_plan_assign_gpus(plan, p, &err) == 0, "%s", err.text);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	forget_indices(plan);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	dt = now_s() - t0;
	ck_assert_msg(dt < 10.0, "assign + 2 x validate took %.2f s", dt);
	/* break the last task: found */
	plan->assign[n - 1].end_s += 1;
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), -1);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("validate");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_valid);
	tcase_add_loop_test(tc, test_bad, 0,
			    sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_resolve_errors);
	tcase_add_test(tc, test_accepts);
	tcase_add_test(tc, test_touching);
	tcase_add_test(tc, test_assign_gpus);
	tcase_add_test(tc, test_best_fit);
	tcase_add_test(tc, test_large);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
