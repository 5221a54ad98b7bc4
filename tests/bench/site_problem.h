/* site_problem.h - a site-sized planning problem (issue 22's scale): nodes
 * of 8 GPUs in three node classes, held tasks with several options per
 * class at differing speeds (header-only; shared by bench/site-plan-bench
 * and unit/test_plan_scale). Deterministic for a seed. */
#ifndef SATURN_TEST_SITE_PROBLEM_H
#define SATURN_TEST_SITE_PROBLEM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const site_classes[3] = {"h100", "a100", "v100"};
/* seconds per batch of a class against the fastest */
static const double site_class_speed[3] = {1.0, 1.7, 3.1};

static inline double site_unif(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;
}

static inline char *site_strdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		exit(2);
	return d;
}

/* A problem of ntasks held tasks on nnodes nodes x 8 GPUs (the classes
 * in thirds), every task with "ddp" and "fsdp" at 1, 2, 4 and 8 GPUs in
 * nclass (1-3) of the classes (8 options in each: one class is a task
 * whose partition has one type of node), each node with some GPUs busy (other jobs)
 * for up to 30 minutes. NULL when it does not check. */
static inline saturn_problem_t *site_problem(int ntasks, int nnodes, int nclass,
					     uint64_t seed)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	uint64_t s = seed * 2654435761ULL + 1;

	if (!p)
		return NULL;
	for (int i = 0; i < nnodes; i++) {
		saturn_node_t n = {0};
		char name[32];

		snprintf(name, sizeof(name), "gpu%03d", i);
		n.name = site_strdup(name);
		n.gpus = 8;
		n.klass = site_strdup(site_classes[i * 3 / nnodes]);
		/* a site's cluster is busy: each node has 0-8 of its GPUs
		 * held by other jobs (one job each) for 1-30 minutes */
		n.nbusy = (int)(9 * site_unif(&s));
		n.busy = n.nbusy ? calloc((size_t)n.nbusy, sizeof(*n.busy)) : NULL;
		if (n.nbusy && !n.busy)
			return NULL;
		for (int g = 0; g < n.nbusy; g++) {
			n.busy[g].ngpus = 1;
			n.busy[g].gpu_ids = calloc(1, sizeof(int));
			if (!n.busy[g].gpu_ids)
				return NULL;
			n.busy[g].gpu_ids[0] = g;
			n.busy[g].until_s = 60 + 1740 * site_unif(&s);
		}
		if (saturn_problem_add_node(p, &n) < 0)
			return NULL;
	}
	for (int i = 0; i < ntasks; i++) {
		saturn_task_t t = {0};
		char id[32];
		double base = 0.2 + 1.8 * site_unif(&s); /* s/batch on 1 fast GPU */
		double eff = 0.6 + 0.35 * site_unif(&s); /* scaling per doubling */

		snprintf(id, sizeof(id), "%d_%d", 1000 + i / 50, i % 50);
		t.id = site_strdup(id);
		t.batches = 50 + (int)(950 * site_unif(&s));
		t.options = calloc(24, sizeof(*t.options));
		if (!t.options)
			return NULL;
		for (int c0 = 0, c = i % 3; c0 < nclass; c0++, c = (c + 1) % 3)
			for (int tech = 0; tech < 2; tech++)
				for (int g = 1, k = 0; g <= 8; g *= 2, k++) {
					saturn_option_t *o = &t.options[t.noptions++];
					double spb = base * site_class_speed[c] / g;

					for (int j = 0; j < k; j++)
						spb /= tech ? eff * 0.97 : eff;
					o->technique = site_strdup(tech ? "fsdp" : "ddp");
					o->gpus = g;
					o->sec_per_batch = spb * (1 + 0.1 * site_unif(&s));
					o->klass = site_strdup(site_classes[c]);
				}
		if (saturn_problem_add_task(p, &t) < 0)
			return NULL;
	}
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "site_problem: %s\n", err.text);
		saturn_problem_destroy(p);
		return NULL;
	}
	return p;
}

#endif
