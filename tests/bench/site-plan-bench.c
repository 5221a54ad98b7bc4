/* site-plan-bench.c - the planner at a site's scale (issue 22): a problem
 * of NTASKS held tasks on NODES nodes x 8 GPUs in three classes
 * (site_problem.h), timed through the entry points sched/saturn uses in one
 * cycle: the cheap bounds, the first-come-first-served plan, the solve, the
 * previous plan carried over (saturn_sched_carry) and a warm-started solve
 * from it.
 *
 * Usage: site-plan-bench NTASKS [NODES [BUDGET_S [SEED [CLASSES]]]] [--write FILE]
 * CLASSES (1-3, default 1): the node classes each task has options in.
 * --write: the problem as saturn-problem JSON (for `saturn plan -t 2 FILE`).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats.h"
#include "model.h"
#include "planner.h"
#include "sched_core.h"
#include "site_problem.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *write = NULL;
	int pos[5] = {0, 128, 0, 1, 1}, npos = 0;
	double budget = 2, t;
	saturn_problem_t *p;
	saturn_planner_opts_t o;
	saturn_bounds_t b;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan, *fcfs, *carried, *warm;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--write") && i + 1 < argc)
			write = argv[++i];
		else if (npos == 2)
			budget = atof(argv[i]), npos++;
		else if (npos < 5)
			pos[npos++] = atoi(argv[i]);
	}
	if (pos[0] <= 0 || pos[1] <= 0 || !(budget > 0)) {
		fprintf(stderr, "usage: site-plan-bench NTASKS [NODES [BUDGET_S [SEED [CLASSES]]]] [--write FILE]\n");
		return 2;
	}
	t = now_s();
	p = site_problem(pos[0], pos[1], pos[4] >= 1 && pos[4] <= 3 ? pos[4] : 1, (uint64_t)pos[3]);
	if (!p)
		return 2;
	printf("problem: %d tasks, %d nodes x 8 GPUs, 3 classes, %d option(s) a task: built in %.3f s\n",
	       p->ntasks, p->nnodes, p->tasks[0].noptions, now_s() - t);
	if (write) {
		char *js = saturn_problem_to_json(p);
		FILE *f = fopen(write, "w");

		if (!js || !f || fputs(js, f) < 0 || fclose(f) != 0) {
			fprintf(stderr, "site-plan-bench: cannot write %s\n", write);
			return 2;
		}
		free(js);
	}
	t = now_s();
	if (saturn_planner_bounds_cheap(p, &b, &err) < 0)
		return 2;
	printf("bounds_cheap: %.3f s (bound %.0f s: length %.0f, area %.0f, dual %.0f, lp %.0f)\n",
	       now_s() - t, b.best, b.length, b.area, b.dual, b.lp);
	t = now_s();
	fcfs = saturn_sched_fcfs(p);
	printf("fcfs: %.3f s (makespan %.0f s)\n", now_s() - t, fcfs ? fcfs->makespan_s : -1);
	saturn_planner_opts_init(&o);
	o.time_limit_s = budget;
	t = now_s();
	plan = saturn_planner_solve(p, &o, &err);
	if (!plan) {
		fprintf(stderr, "site-plan-bench: %s\n", err.text);
		return 1;
	}
	printf("solve (budget %.1f s): %.3f s, makespan %.0f s, bound %.0f s, plan/bound %.3f, method %s\n",
	       budget, now_s() - t, plan->makespan_s, plan->lower_bound_s,
	       plan->makespan_s / plan->lower_bound_s, plan->method);
	t = now_s();
	carried = saturn_sched_carry(plan, p);
	printf("carry: %.3f s\n", now_s() - t);
	o.warm = carried ? carried : plan;
	o.stop_ratio = 1.0 / (1.0 - 0.05);
	t = now_s();
	warm = saturn_planner_solve(p, &o, &err);
	if (!warm) {
		fprintf(stderr, "site-plan-bench: %s\n", err.text);
		return 1;
	}
	printf("warm solve (budget %.1f s): %.3f s, makespan %.0f s, plan/bound %.3f, method %s\n",
	       budget, now_s() - t, warm->makespan_s, warm->makespan_s / warm->lower_bound_s,
	       warm->method);
	saturn_plan_destroy(warm);
	saturn_plan_destroy(carried);
	saturn_plan_destroy(fcfs);
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
	return 0;
}
