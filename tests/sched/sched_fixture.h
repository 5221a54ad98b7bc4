/* sched_fixture.h - what the tests of lib/sched share: problem builders
 * (a node, a task of one technique, a running task), a snapshot of nodes
 * and a held task in it, the planner's options for a short solve,
 * settings parsed with their error text checked, and the Check suite
 * runner that is each test program's main. Static functions: each test
 * is one program. */
#ifndef SATURN_SCHED_FIXTURE_H
#define SATURN_SCHED_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner.h"
#include "sched_core.h"

/* Appends node `name` with gpus GPUs to p. */
static inline void fx_add_node(saturn_problem_t *p, const char *name, int gpus)
{
	saturn_node_t n = {0};

	n.name = strdup(name);
	n.gpus = gpus;
	ck_assert_int_ge(saturn_problem_add_node(p, &n), 0);
}

/* Appends a task with one option per (gpus[i], spb[i]), technique "ddp";
 * returns its index (saturn_problem_add_task()). */
static inline int fx_add_task(saturn_problem_t *p, const char *id, double batches, int nopt,
			      const int *gpus, const double *spb)
{
	saturn_task_t t = {0};

	t.id = strdup(id);
	t.batches = batches;
	t.options = calloc((size_t)nopt, sizeof(*t.options));
	for (int o = 0; o < nopt; o++) {
		t.options[o].technique = strdup("ddp");
		t.options[o].gpus = gpus[o];
		t.options[o].sec_per_batch = spb[o];
	}
	t.noptions = nopt;
	return saturn_problem_add_task(p, &t);
}

/* Makes task t run with option 0 on node 0, GPUs first .. first + gpus. */
static inline void fx_set_running(saturn_problem_t *p, int t, int first)
{
	saturn_task_t *task = &p->tasks[t];

	task->is_running = true;
	task->running.node = 0;
	task->running.option = 0;
	task->running.ngpus = task->options[0].gpus;
	task->running.gpu_ids = calloc((size_t)task->running.ngpus, sizeof(int));
	for (int g = 0; g < task->running.ngpus; g++)
		task->running.gpu_ids[g] = first + g;
}

/* The planner's default options with a time limit of limit_s. */
static inline saturn_planner_opts_t fx_opts(double limit_s)
{
	saturn_planner_opts_t o;

	saturn_planner_opts_init(&o);
	o.time_limit_s = limit_s;
	return o;
}

/* Options for a test whose result must not depend on the machine's load:
 * the search stops after `evals` decodes (a seed and a count of decodes
 * always give the same plan), with a wall-clock limit far above what
 * that takes, only so that a bug cannot hang the test. */
static inline saturn_planner_opts_t fx_opts_evals(unsigned long evals)
{
	saturn_planner_opts_t o;

	saturn_planner_opts_init(&o);
	o.time_limit_s = 60;
	o.max_evals = evals;
	return o;
}

/* A snapshot taken at `now` with nnodes nodes n1, n2, ... of gpus GPUs
 * each and no job yet. */
static inline saturn_snapshot_t *fx_snapshot(double now, int nnodes, int gpus)
{
	saturn_snapshot_t *s = saturn_snapshot_create();

	ck_assert_ptr_nonnull(s);
	s->now = now;
	for (int k = 0; k < nnodes; k++) {
		saturn_snap_node_t *n = saturn_snapshot_add_node(s);

		ck_assert_ptr_nonnull(n);
		snprintf(n->name, sizeof(n->name), "n%d", k + 1);
		n->gpus = gpus;
	}
	return s;
}

/* Appends a held task of job array `array` (job id `array` too), batch
 * `batch`, asking for 1 GPU; the caller sets the rest. */
static inline saturn_snap_job_t *fx_add_held(saturn_snapshot_t *s, uint32_t array, int task,
					     const char *batch)
{
	saturn_snap_job_t *j = saturn_snapshot_add_job(s);

	ck_assert_ptr_nonnull(j);
	j->job_id = array;
	j->array_job_id = array;
	j->task_id = task;
	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->state = SATURN_SNAP_HELD;
	j->req_gpus = 1;
	return j;
}

/* Parses setting `text` into ss and checks the return code; for rc 1 (a
 * bad value) also that the error text holds `want`. */
static inline void fx_setting(saturn_sched_settings_t *ss, const char *text, int rc,
			      const char *want)
{
	saturn_error_t err = {{0}};

	ck_assert_int_eq(saturn_sched_settings_parse(ss, text, &err), rc);
	if (want)
		ck_assert_msg(strstr(err.text, want), "'%s' lacks '%s'", err.text, want);
}

/* Runs the tests add_tests() puts in one test case of suite `name`, with a
 * timeout of timeout_s (0: Check's default). Returns main's exit status. */
static inline int fx_run_suite(const char *name, double timeout_s, void (*add_tests)(TCase *tc))
{
	Suite *su = suite_create(name);
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	if (timeout_s > 0)
		tcase_set_timeout(tc, timeout_s);
	add_tests(tc);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* SATURN_SCHED_FIXTURE_H */
