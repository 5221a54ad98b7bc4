/* class-bench.c - a fine-tuning sweep on a two-class cluster: 2 "a100"
 * PCIe nodes and 2 "h100" NVLink nodes of 8 GPUs each, planned by
 * sched/saturn with per-class profiles (one option per technique x GPU
 * count x class), against what users do today and against planning with
 * one profile for every class (before node classes).
 *
 * Cost model: tests/bench/bench_model.h (README.md, "Planner benchmark"),
 * the same sweep grid as saturn-bench: an a100 node runs a task at the
 * model's speed with PCIe bus bandwidth (BW_PCIE), an h100 node with
 * NVLink bandwidth (BW_NVL) and H100_SPEEDUP times the compute. So
 * collectives (DDP, FSDP at 4-8 GPUs) are cheap on h100 and dear on a100,
 * where pipelining or fewer GPUs pay.
 *
 * Per instance (a sweep of N tasks, N from 48 to 128):
 *   saturn     the planner on the class-aware problem, --time-limit s;
 *              makespan / saturn_planner_bounds() best (its dual bound is
 *              class-aware: the best fractional split of the tasks over
 *              the two classes, bounds.c) and the solve time
 *   untyped    best uniform untyped request: every task asks for G GPUs
 *              (G = 1, 2, 4, 8, the best G of the instance) with its
 *              fastest technique at G on the class it lands on, list-
 *              scheduled in submission order onto the node where it can
 *              start first (Slurm's main scheduler plus backfill)
 *   typed      best uniform typed request: the same with every task asking
 *              for one GPU type (a100 or h100, the best of the two and of G)
 *   1-profile  sched/saturn before node classes: planned with the h100
 *              profile for every node, then executed in the plan's order
 *              on its nodes with the true speed of each node's class
 * It prints the makespans and the ratios untyped / saturn, typed / saturn,
 * 1-profile / saturn; then mean, min and max and the number of runs.
 *
 * Usage: class-bench [--time-limit S] [--runs N] [--seed N]
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "planner.h"

#include "bench_model.h"

#define NNODES 4
#define GPUS 8
#define H100_SPEEDUP 2.0 /* compute, h100 over a100 (dense bf16: ~3x peak, ~2x achieved) */

static const model_spec_t models[] = {{"gpt2xl", 1.5e9}, {"gptj", 6.0e9}};
static const char *const cls_name[2] = {"a100", "h100"};

/* One sweep task: its batches and, per class, tech and GPU count, the
 * seconds per batch (0 = does not fit). */
typedef struct job {
	double batches;
	double spb[2][NTECH][4]; /* class, technique, log2(GPUs) */
} job_t;

/* Seconds per batch on class c: compute / H100_SPEEDUP on h100. The
 * compute share is what the model gives with infinite bandwidth. */
static double class_spb(double P, int B, int tech, int g, int c)
{
	double bw = c ? BW_NVL : BW_PCIE;
	double t = sec_per_batch(P, B, tech, g, bw), comp, comm;

	if (t <= 0 || c == 0)
		return t;
	comp = sec_per_batch(P, B, tech, g, 1e30) - STEP_OVERHEAD;
	comm = t - STEP_OVERHEAD - comp;
	return comp / H100_SPEEDUP + comm + STEP_OVERHEAD;
}

static void make_jobs(job_t *jobs, int n)
{
	for (int i = 0; i < n; i++) {
		const model_spec_t *m = &models[irand(2)];
		int B = batch_sizes[irand(4)];
		double samples = 4000 + 16000 * unif();
		int epochs = 1 + irand(3);

		jobs[i].batches = ceil(samples * epochs / B);
		for (int c = 0; c < 2; c++)
			for (int tech = 0; tech < NTECH; tech++)
				for (int k = 0; k < 4; k++)
					jobs[i].spb[c][tech][k] = class_spb(m->params, B, tech, 1 << k, c);
	}
}

/* The problem: per class its nodes; each task's options per class
 * (one_profile: the h100 numbers for every node, no classes). */
static saturn_problem_t *make_problem(const job_t *jobs, int n, int one_profile)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};

	if (!p)
		exit(2);
	for (int k = 0; k < NNODES; k++) {
		saturn_node_t nd = {0};
		char name[16];

		snprintf(name, sizeof(name), "n%d", k + 1);
		nd.name = xstrdup(name);
		nd.gpus = GPUS;
		nd.klass = one_profile ? NULL : xstrdup(cls_name[k < NNODES / 2 ? 0 : 1]);
		if (saturn_problem_add_node(p, &nd) < 0)
			exit(2);
	}
	for (int i = 0; i < n; i++) {
		saturn_task_t t = {0};
		char id[32];

		snprintf(id, sizeof(id), "t%d", i);
		t.id = xstrdup(id);
		t.batches = jobs[i].batches;
		t.options = calloc(2 * NTECH * 4, sizeof(*t.options));
		if (!t.options)
			exit(2);
		for (int c = one_profile ? 1 : 0; c < 2; c++)
			for (int tech = 0; tech < NTECH; tech++)
				for (int k = 0; k < 4; k++) {
					saturn_option_t *o;

					if (jobs[i].spb[c][tech][k] <= 0)
						continue;
					o = &t.options[t.noptions++];
					o->technique = xstrdup(tech_names[tech]);
					o->gpus = 1 << k;
					o->sec_per_batch = jobs[i].spb[c][tech][k];
					o->klass = one_profile ? NULL : xstrdup(cls_name[c]);
				}
		if (saturn_problem_add_task(p, &t) < 0)
			exit(2);
	}
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "class-bench: bad instance: %s\n", err.text);
		exit(2);
	}
	return p;
}

static int node_class(int k)
{
	return k < NNODES / 2 ? 0 : 1;
}

/* Earliest time g GPUs of node k are free (free[k][]: when each GPU is),
 * and the GPUs, into ids. */
static double earliest(double fr[NNODES][GPUS], int k, int g, int *ids)
{
	int used[GPUS] = {0};
	double t = 0;

	for (int i = 0; i < g; i++) {
		int best = -1;

		for (int j = 0; j < GPUS; j++)
			if (!used[j] && (best < 0 || fr[k][j] < fr[k][best]))
				best = j;
		used[best] = 1;
		ids[i] = best;
		if (fr[k][best] > t)
			t = fr[k][best];
	}
	return t;
}

/* Best technique's seconds per batch at 2^lg GPUs on class c; 0 = none. */
static double best_spb(const job_t *j, int c, int lg)
{
	double b = 0;

	for (int tech = 0; tech < NTECH; tech++) {
		double s = j->spb[c][tech][lg];

		if (s > 0 && (b == 0 || s < b))
			b = s;
	}
	return b;
}

/* Uniform request of 2^lg GPUs, list-scheduled in submission order: each
 * task on the allowed node (type -1 = any class) where it starts first,
 * with its fastest technique there; a task with no option at that count
 * on a class cannot go there. Makespan, or INFINITY when some task fits
 * nowhere. */
static double uniform(const job_t *jobs, int n, int lg, int type)
{
	double fr[NNODES][GPUS] = {{0}}, mk = 0;
	int g = 1 << lg;

	for (int i = 0; i < n; i++) {
		int bk = -1, bids[GPUS], ids[GPUS];
		double bs = 0, bd = 0;

		for (int k = 0; k < NNODES; k++) {
			int c = node_class(k);
			double s = best_spb(&jobs[i], c, lg), st;

			if ((type >= 0 && c != type) || s <= 0)
				continue;
			st = earliest(fr, k, g, ids);
			if (bk < 0 || st < bs) {
				bk = k;
				bs = st;
				bd = s * jobs[i].batches;
				memcpy(bids, ids, sizeof(ids));
			}
		}
		if (bk < 0)
			return INFINITY;
		for (int q = 0; q < g; q++)
			fr[bk][bids[q]] = bs + bd;
		if (bs + bd > mk)
			mk = bs + bd;
	}
	return mk;
}

static const saturn_plan_t *sort_plan;
static int cmp_start(const void *a, const void *b)
{
	double x = sort_plan->assign[*(const int *)a].start_s, y = sort_plan->assign[*(const int *)b].start_s;

	return x < y ? -1 : x > y;
}

/* Execute a one-profile plan: tasks in planned start order, each on its
 * planned node with its planned technique and GPU count, started when
 * enough GPUs of that node are free, for the true time of that node's
 * class. */
static double replay(const job_t *jobs, const saturn_plan_t *pl)
{
	double fr[NNODES][GPUS] = {{0}}, mk = 0;
	int *ord = calloc((size_t)pl->nassign, sizeof(int));

	if (!ord)
		exit(2);
	for (int i = 0; i < pl->nassign; i++)
		ord[i] = i;
	sort_plan = pl;
	qsort(ord, (size_t)pl->nassign, sizeof(int), cmp_start);
	for (int q = 0; q < pl->nassign; q++) {
		const saturn_assign_t *a = &pl->assign[ord[q]];
		int k = a->node, ids[GPUS], tech = 0, lg = 0, c = node_class(k);
		double st, s;

		while (strcmp(tech_names[tech], a->technique))
			tech++;
		while ((1 << lg) < a->gpus)
			lg++;
		s = jobs[a->task].spb[c][tech][lg];
		if (s <= 0) /* fits on h100 only: the slowest option of its class */
			s = best_spb(&jobs[a->task], c, lg);
		st = earliest(fr, k, a->gpus, ids);
		for (int i = 0; i < a->gpus; i++)
			fr[k][ids[i]] = st + s * jobs[a->task].batches;
		if (st + s * jobs[a->task].batches > mk)
			mk = st + s * jobs[a->task].batches;
	}
	free(ord);
	return mk;
}

static void stat_print(const char *what, const stat_t *s)
{
	printf("# %-22s mean %.3f  min %.3f  max %.3f  (%d runs)\n", what, s->sum / s->n, s->min,
	       s->max, s->n);
}

int main(int argc, char **argv)
{
	double limit = 10;
	int runs = 4;
	unsigned long seed = 1;
	stat_t rb = {0}, ru = {0}, rt = {0}, r1 = {0}, ts = {0};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--time-limit") && i + 1 < argc)
			limit = atof(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: class-bench [--time-limit S] [--runs N] [--seed N]\n");
			return 2;
		}
	}
	if (runs < 1 || !(limit > 0))
		return 2;
	printf("# two-class sweep: 2 a100 PCIe + 2 h100 NVLink nodes x %d GPUs, planner %.3g s\n",
	       GPUS, limit);
	printf("%4s %4s | %9s %9s %6s %6s | %9s %3s | %9s %8s | %9s | %6s %6s %6s\n", "run", "jobs",
	       "saturn", "bound", "mk/lb", "solve", "untyped", "G", "typed", "type/G", "1-prof",
	       "u/sat", "t/sat", "1p/sat");
	for (int r = 0; r < runs; r++) {
		int n = 48 + (runs > 1 ? 80 * r / (runs - 1) : 80);
		job_t *jobs = calloc((size_t)n, sizeof(*jobs));
		saturn_problem_t *p, *p1;
		saturn_planner_opts_t o;
		saturn_bounds_t b;
		saturn_error_t err = {{0}};
		saturn_plan_t *pl, *pl1;
		double t0, dt, bu = INFINITY, bt = INFINITY, mk1;
		int gu = 0, gt = 0, ty = 0;

		if (!jobs)
			return 2;
		rng_state = seed_mix(seed * 1000003ULL + (unsigned)r);
		make_jobs(jobs, n);
		p = make_problem(jobs, n, 0);
		if (saturn_planner_bounds(p, &b, &err) < 0) {
			fprintf(stderr, "class-bench: %s\n", err.text);
			return 1;
		}
		saturn_planner_opts_init(&o);
		o.time_limit_s = limit;
		o.seed = (unsigned)seed;
		t0 = now_s();
		pl = saturn_planner_solve(p, &o, &err);
		dt = now_s() - t0;
		if (!pl) {
			fprintf(stderr, "class-bench: %s\n", err.text);
			return 1;
		}
		for (int lg = 0; lg < 4; lg++) {
			double u = uniform(jobs, n, lg, -1);

			if (u < bu) {
				bu = u;
				gu = 1 << lg;
			}
			for (int c = 0; c < 2; c++) {
				double t = uniform(jobs, n, lg, c);

				if (t < bt) {
					bt = t;
					gt = 1 << lg;
					ty = c;
				}
			}
		}
		p1 = make_problem(jobs, n, 1);
		pl1 = saturn_planner_solve(p1, &o, &err);
		if (!pl1) {
			fprintf(stderr, "class-bench: %s\n", err.text);
			return 1;
		}
		mk1 = replay(jobs, pl1);
		printf("%4d %4d | %9.0f %9.0f %6.3f %6.2f | %9.0f %3d | %9.0f %4s/%-3d | %9.0f | %6.2f %6.2f %6.2f\n",
		       r, n, pl->makespan_s, b.best, pl->makespan_s / b.best, dt, bu, gu, bt,
		       cls_name[ty], gt, mk1, bu / pl->makespan_s, bt / pl->makespan_s,
		       mk1 / pl->makespan_s);
		fflush(stdout);
		stat_add(&rb, pl->makespan_s / b.best);
		stat_add(&ts, dt);
		stat_add(&ru, bu / pl->makespan_s);
		stat_add(&rt, bt / pl->makespan_s);
		stat_add(&r1, mk1 / pl->makespan_s);
		saturn_plan_destroy(pl);
		saturn_plan_destroy(pl1);
		saturn_problem_destroy(p);
		saturn_problem_destroy(p1);
		free(jobs);
	}
	stat_print("saturn makespan/bound", &rb);
	stat_print("saturn solve s", &ts);
	stat_print("untyped/saturn", &ru);
	stat_print("typed/saturn", &rt);
	stat_print("1-profile/saturn", &r1);
	return 0;
}
