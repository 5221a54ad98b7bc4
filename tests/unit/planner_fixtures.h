/* planner_fixtures.h - building problems for the planner tests, an
 * independent plan checker and a random instance generator (header-only,
 * shared by test_planner.c and test_bounds.c). */
#ifndef SATURN_TEST_PLANNER_FIXTURES_H
#define SATURN_TEST_PLANNER_FIXTURES_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "planner.h"

typedef struct opt_spec {
	const char *tech;
	int gpus;
	double spb;
	const char *klass;
} opt_spec_t;

static inline saturn_problem_t *fx_problem(void)
{
	saturn_problem_t *p = saturn_problem_create();

	ck_assert_ptr_nonnull(p);
	return p;
}

static inline int fx_node(saturn_problem_t *p, const char *name, int gpus,
			  const char *klass)
{
	saturn_node_t n = {0};
	int i;

	n.name = strdup(name);
	n.gpus = gpus;
	n.klass = klass ? strdup(klass) : NULL;
	i = saturn_problem_add_node(p, &n);
	ck_assert_int_ge(i, 0);
	return i;
}

/* Mark GPUs ids[0..n) of node busy until until_s. */
static inline void fx_busy(saturn_problem_t *p, int node, const int *ids,
			   int n, double until_s)
{
	saturn_node_t *nd = &p->nodes[node];
	saturn_busy_t *b = realloc(nd->busy, sizeof(*b) * (size_t)(nd->nbusy + 1));

	ck_assert_ptr_nonnull(b);
	nd->busy = b;
	b[nd->nbusy].ngpus = n;
	b[nd->nbusy].gpu_ids = calloc((size_t)n, sizeof(int));
	memcpy(b[nd->nbusy].gpu_ids, ids, sizeof(int) * (size_t)n);
	b[nd->nbusy].until_s = until_s;
	nd->nbusy++;
}

static inline int fx_task(saturn_problem_t *p, const char *id, double batches,
			  double release, const opt_spec_t *o, int nopt)
{
	saturn_task_t t = {0};
	int i;

	t.id = strdup(id);
	t.batches = batches;
	t.release_s = release;
	t.noptions = nopt;
	t.options = calloc((size_t)nopt, sizeof(*t.options));
	for (int k = 0; k < nopt; k++) {
		t.options[k].technique = strdup(o[k].tech);
		t.options[k].gpus = o[k].gpus;
		t.options[k].sec_per_batch = o[k].spb;
		t.options[k].klass = o[k].klass ? strdup(o[k].klass) : NULL;
	}
	i = saturn_problem_add_task(p, &t);
	ck_assert_int_ge(i, 0);
	return i;
}

/* Make task t running on node with option o and the given GPU ids. */
static inline void fx_running(saturn_problem_t *p, int t, int node, int o,
			      const int *ids)
{
	saturn_task_t *tk = &p->tasks[t];
	int g = tk->options[o].gpus;

	tk->is_running = true;
	tk->running.node = node;
	tk->running.option = o;
	tk->running.ngpus = g;
	tk->running.gpu_ids = calloc((size_t)g, sizeof(int));
	memcpy(tk->running.gpu_ids, ids, sizeof(int) * (size_t)g);
}

static inline void fx_check(saturn_problem_t *p)
{
	saturn_error_t err = {{0}};

	ck_assert_msg(saturn_problem_check(p, &err) == 0, "problem: %s",
		      err.text);
}

/* Independent plan check (does not use the library's validator): each task
 * once with one of its options on a node of the right class, times, release,
 * running tasks pinned, GPU ids in range/distinct/not busy, no GPU shared by
 * overlapping tasks (zero-length tasks hold no GPU time), makespan. Returns NULL or a static message. */
static inline const char *fx_validate(const saturn_problem_t *p,
				      const saturn_plan_t *pl)
{
	static char msg[256];
	double mk = 0;

	if (pl->nassign != p->ntasks)
		return "wrong number of assignments";
	for (int i = 0; i < pl->nassign; i++) {
		const saturn_assign_t *a = &pl->assign[i];
		const saturn_task_t *t = &p->tasks[i];
		const saturn_option_t *o;
		double d, tol;

		if (a->task != i || strcmp(a->task_id, t->id) != 0)
			return "task order";
		if (a->option < 0 || a->option >= t->noptions || a->node < 0 ||
		    a->node >= p->nnodes)
			return "bad indices";
		o = &t->options[a->option];
		if (strcmp(a->technique, o->technique) != 0 ||
		    a->gpus != o->gpus ||
		    strcmp(a->node_name, p->nodes[a->node].name) != 0)
			return "names";
		if (!saturn_option_fits(p, i, a->option, a->node))
			return "option does not fit node";
		d = t->batches * o->sec_per_batch;
		tol = 1e-6 * (a->end_s > 1 ? a->end_s : 1);
		if (fabs(a->end_s - a->start_s - d) > tol)
			return "duration";
		if (a->start_s < t->release_s - tol || a->start_s < -tol)
			return "start before release";
		if (t->is_running) {
			if (a->node != t->running.node ||
			    a->option != t->running.option || a->start_s != 0)
				return "running task moved";
			for (int g = 0; g < a->gpus; g++) {
				int found = 0;

				for (int h = 0; h < a->gpus; h++)
					found |= a->gpu_ids[g] ==
						 t->running.gpu_ids[h];
				if (!found)
					return "running task GPU ids";
			}
		}
		for (int g = 0; g < a->gpus; g++) {
			int id = a->gpu_ids[g];
			const saturn_node_t *n = &p->nodes[a->node];

			if (id < 0 || id >= n->gpus)
				return "GPU id out of range";
			for (int h = 0; h < g; h++)
				if (a->gpu_ids[h] == id)
					return "GPU id twice";
			for (int b = 0; b < n->nbusy && !t->is_running && d > 0;
			     b++)
				for (int k = 0; k < n->busy[b].ngpus; k++)
					if (n->busy[b].gpu_ids[k] == id &&
					    a->start_s < n->busy[b].until_s - tol) {
						snprintf(msg, sizeof(msg),
							 "task %s uses busy GPU %d",
							 t->id, id);
						return msg;
					}
		}
		for (int j = 0; j < i; j++) {
			const saturn_assign_t *c = &pl->assign[j];

			/* Zero-length tasks hold no GPU time (validate.c). */
			if (c->node != a->node || !(a->start_s < c->end_s - tol &&
						    c->start_s < a->end_s - tol) ||
			    d <= 0 || c->end_s <= c->start_s)
				continue;
			for (int g = 0; g < a->gpus; g++)
				for (int h = 0; h < c->gpus; h++)
					if (a->gpu_ids[g] == c->gpu_ids[h]) {
						snprintf(msg, sizeof(msg),
							 "tasks %s and %s share GPU %d",
							 a->task_id, c->task_id,
							 a->gpu_ids[g]);
						return msg;
					}
		}
		if (a->end_s > mk)
			mk = a->end_s;
	}
	if (fabs(mk - pl->makespan_s) > 1e-6 * (mk > 1 ? mk : 1))
		return "makespan";
	return NULL;
}

static inline uint64_t fx_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline int fx_rand(uint64_t *s, int n)
{
	return (int)(fx_rng(s) % (uint64_t)n);
}

/* A random instance: 1..maxnodes nodes of 2/4/8 GPUs in up to two classes,
 * some busy GPUs, 1..maxtasks tasks with ddp/fsdp options (some class
 * restricted, some zero batches, some released later), some running. */
static inline saturn_problem_t *fx_random(uint64_t *s, int maxnodes,
					  int maxtasks)
{
	static const int sizes[] = {2, 4, 8};
	saturn_problem_t *p = fx_problem();
	int nn = 1 + fx_rand(s, maxnodes), nt = 1 + fx_rand(s, maxtasks);
	int two_classes = nn > 1 && fx_rand(s, 2);
	unsigned long long used[8] = {0};

	for (int n = 0; n < nn; n++) {
		char name[16];
		int g = sizes[fx_rand(s, 3)];

		snprintf(name, sizeof(name), "n%d", n);
		fx_node(p, name, g,
			two_classes ? (n % 2 ? "pcie" : "nvl") : NULL);
		if (fx_rand(s, 3) == 0) {
			int ids[8], k = 0;

			for (int i = 0; i < g; i++)
				if (fx_rand(s, 2))
					ids[k++] = i;
			if (k > 0)
				fx_busy(p, n, ids, k, 10.0 * fx_rand(s, 30));
		}
	}
	for (int t = 0; t < nt; t++) {
		opt_spec_t o[8];
		int no = 0;
		char id[16];
		double base = 1 + fx_rand(s, 20);
		double batches = fx_rand(s, 12) == 0 ? 0 : 10 + fx_rand(s, 90);

		snprintf(id, sizeof(id), "t%d", t);
		for (int g = 1; g <= 8 && no < 8; g *= 2) {
			double eff = 0.5 + 0.5 * (fx_rand(s, 100) / 100.0);

			if (fx_rand(s, 4) == 0)
				continue;
			o[no].tech = fx_rand(s, 2) ? "ddp" : "fsdp";
			o[no].gpus = g;
			o[no].spb = base / (g * eff) + 0.01 * fx_rand(s, 10);
			o[no].klass = two_classes && fx_rand(s, 3) == 0
					      ? (fx_rand(s, 2) ? "pcie" : "nvl")
					      : NULL;
			no++;
		}
		if (no == 0) {
			o[0].tech = "ddp";
			o[0].gpus = 1;
			o[0].spb = base;
			o[0].klass = NULL;
			no = 1;
		}
		fx_task(p, id, batches,
			fx_rand(s, 4) == 0 ? 10.0 * fx_rand(s, 20) : 0, o, no);
	}
	/* Make a few tasks running where their option fits on free ids. */
	for (int t = 0; t < nt; t++) {
		saturn_task_t *tk = &p->tasks[t];
		int n = fx_rand(s, nn), ids[8], k = 0, o;
		saturn_node_t *nd = &p->nodes[n];

		if (fx_rand(s, 5) != 0 || tk->release_s > 0 || n >= 8)
			continue;
		o = fx_rand(s, tk->noptions);
		if (tk->options[o].gpus > nd->gpus ||
		    (tk->options[o].klass &&
		     (!nd->klass || strcmp(nd->klass, tk->options[o].klass))))
			continue;
		for (int i = 0; i < nd->gpus && k < tk->options[o].gpus; i++) {
			int busy = 0;

			for (int b = 0; b < nd->nbusy; b++)
				for (int j = 0; j < nd->busy[b].ngpus; j++)
					busy |= nd->busy[b].gpu_ids[j] == i &&
						nd->busy[b].until_s > 0;
			if (!busy && !(used[n] & (1ULL << i)))
				ids[k++] = i;
		}
		if (k < tk->options[o].gpus)
			continue;
		for (int i = 0; i < k; i++)
			used[n] |= 1ULL << ids[i];
		fx_running(p, t, n, o, ids);
	}
	/* Options that fit no node of their class are dropped, so that the
	 * problem is valid (each task keeps at least one option). */
	for (int t = 0; t < nt; t++) {
		saturn_task_t *tk = &p->tasks[t];

		for (int o = tk->noptions - 1; o >= 0 && !tk->is_running; o--) {
			int fits = 0;

			for (int n = 0; n < nn; n++)
				fits |= tk->options[o].gpus <= p->nodes[n].gpus &&
					(!tk->options[o].klass ||
					 (p->nodes[n].klass &&
					  !strcmp(p->nodes[n].klass,
						  tk->options[o].klass)));
			if (fits || tk->noptions == 1)
				continue;
			free(tk->options[o].technique);
			free(tk->options[o].klass);
			memmove(&tk->options[o], &tk->options[o + 1],
				sizeof(*tk->options) *
					(size_t)(tk->noptions - o - 1));
			tk->noptions--;
		}
		if (!tk->is_running && tk->noptions == 1) {
			int fits = 0;

			for (int n = 0; n < nn; n++)
				fits |= tk->options[0].gpus <= p->nodes[n].gpus &&
					(!tk->options[0].klass ||
					 (p->nodes[n].klass &&
					  !strcmp(p->nodes[n].klass,
						  tk->options[0].klass)));
			if (!fits) {
				/* The one option left fits nowhere. */
				tk->options[0].gpus = 1;
				free(tk->options[0].klass);
				tk->options[0].klass = NULL;
			}
		}
	}
	fx_check(p);
	return p;
}

#endif
