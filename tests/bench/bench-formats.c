/* bench-formats.c - how long the JSON formats and the plan validator take at
 * the size limit (not part of `make check`; figures in doc/benchmarks.md).
 *
 * Builds a problem of N tasks (default SATURN_MAX_TASKS) on 4 nodes x 8
 * GPUs, a back-to-back plan for it, and times, R times each (default 5):
 * problem check, GPU id assignment, validation (by indices and by names),
 * problem and plan JSON writing and parsing. Prints median, min and max.
 *
 *   tests/bench/bench-formats [N [R]]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, double *t, int r)
{
	qsort(t, (size_t)r, sizeof(double), cmp_double);
	printf("%-30s median %9.1f ms   min %9.1f   max %9.1f   (%d runs)\n", what,
	       1e3 * t[r / 2], 1e3 * t[0], 1e3 * t[r - 1], r);
}

static saturn_problem_t *make_problem(int n)
{
	saturn_problem_t *p = saturn_problem_create();

	for (int i = 0; i < 4; i++) {
		saturn_node_t node = {0};
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		node.name = strdup(name);
		node.gpus = 8;
		saturn_problem_add_node(p, &node);
	}
	for (int i = 0; i < n; i++) {
		saturn_task_t t = {0};
		char id[32];

		snprintf(id, sizeof(id), "lr-sweep_%d", i);
		t.id = strdup(id);
		t.batches = 1000 + i % 7;
		t.noptions = 1;
		t.options = calloc(1, sizeof(saturn_option_t));
		t.options[0].technique = strdup("fsdp");
		t.options[0].gpus = 1 << (i % 4);
		t.options[0].sec_per_batch = 0.25 * (1 + i % 3);
		saturn_problem_add_task(p, &t);
	}
	return p;
}

static saturn_plan_t *make_plan(const saturn_problem_t *p)
{
	saturn_plan_t *plan = saturn_plan_create(p->ntasks);
	double clock_[4][8] = {{0}};

	for (int i = 0; i < p->ntasks; i++) {
		int node = i % 4, w = 1 << (i % 4), blk = (i / 4) % (8 / w);
		double s = 0;

		for (int g = blk * w; g < blk * w + w; g++)
			if (clock_[node][g] > s)
				s = clock_[node][g];
		saturn_plan_set(plan, i, p, i, 0, node, s, NULL);
		for (int g = blk * w; g < blk * w + w; g++)
			clock_[node][g] = plan->assign[i].end_s;
		if (plan->assign[i].end_s > plan->makespan_s)
			plan->makespan_s = plan->assign[i].end_s;
	}
	return plan;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : SATURN_MAX_TASKS;
	int r = argc > 2 ? atoi(argv[2]) : 5;
	double t[7][64];
	saturn_error_t err = {{0}};
	saturn_problem_t *p;
	saturn_plan_t *plan;
	size_t plen = 0, llen = 0;

	if (n < 1 || n > SATURN_MAX_TASKS || r < 1 || r > 64) {
		fprintf(stderr, "usage: %s [TASKS (1..%d) [RUNS (1..64)]]\n", argv[0], SATURN_MAX_TASKS);
		return 64;
	}
	p = make_problem(n);
	plan = make_plan(p);
	for (int k = 0; k < r; k++) {
		double t0 = now_s();
		char *s;
		saturn_problem_t *q;
		saturn_plan_t *pl;

		if (saturn_problem_check(p, &err) < 0)
			goto fail;
		t[0][k] = now_s() - t0;
		t0 = now_s();
		if (saturn_plan_assign_gpus(plan, p, &err) < 0)
			goto fail;
		t[1][k] = now_s() - t0;
		t0 = now_s();
		if (saturn_plan_validate(plan, p, &err) < 0)
			goto fail;
		t[2][k] = now_s() - t0;
		t0 = now_s();
		s = saturn_problem_to_json(p);
		t[3][k] = now_s() - t0;
		plen = strlen(s);
		t0 = now_s();
		q = saturn_problem_parse(s, plen, &err);
		t[4][k] = now_s() - t0;
		free(s);
		if (!q)
			goto fail;
		saturn_problem_destroy(q);
		t0 = now_s();
		s = saturn_plan_to_json(plan, 1);
		t[5][k] = now_s() - t0;
		llen = strlen(s);
		t0 = now_s();
		pl = saturn_plan_parse(s, llen, &err);
		free(s);
		if (!pl)
			goto fail;
		if (saturn_plan_validate(pl, p, &err) < 0)
			goto fail;
		t[6][k] = now_s() - t0;
		saturn_plan_destroy(pl);
	}
	printf("%d tasks on 4 nodes x 8 GPUs; problem JSON %zu bytes, plan JSON %zu bytes\n",
	       n, plen, llen);
	report("problem check", t[0], r);
	report("assign GPU ids", t[1], r);
	report("validate (indices)", t[2], r);
	report("problem to JSON", t[3], r);
	report("problem parse + check", t[4], r);
	report("plan to JSON (pretty)", t[5], r);
	report("plan parse + validate (names)", t[6], r);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
	return 0;
fail:
	fprintf(stderr, "bench-formats: %s\n", err.text);
	return 1;
}
