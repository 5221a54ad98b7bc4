/* bench_real.h - planner benchmark families built from measured speeds, not
 * from our cost model: batches of real training jobs whose seconds per step
 * on each GPU type and count come from a published measurement table
 * (tests/bench/data/README.md: where each file comes from, its licence and
 * how it was extracted). saturn-bench.c includes it for its real-data
 * families; static functions, one program.
 *
 * A family is a cluster (nodes per GPU type, GPUs per node), a range of
 * batch sizes and whether tasks arrive over time (release_s). An instance
 * draws 4-8 job types of the table (a few sweeps in one batch) and, per
 * task, one of them and its length: minutes = 10^U(1.5, 2.5) on one GPU
 * of the reference type, 30 min to 5.3 h (the lower part of what Gavel's
 * own job generator draws, 10^U(1.5, 3) for 80% of its jobs and 17 h to 7
 * days for the rest: with those, most instances are one long job and its
 * length bound, whatever the plan does).
 * A task's options are every (type, GPU count) the table measured with a
 * non-zero speed: one option of class TYPE per count, seconds per step =
 * 1 / steps_per_s. The table's quirks stay as measured: a job may be
 * slower on a newer GPU type, scale superlinearly, or be slower at 4 GPUs
 * than at 2 (the planner drops such dominated options itself).
 *
 * Current practice to compare with (rt_uniform()): every task asks for G
 * GPUs (G = 1, 2, 4, 8; a job measured only below G takes its largest
 * measured count), either of any type (untyped: it runs on whichever node
 * ends it first, at that type's speed) or of one type for all tasks
 * (typed), placed first-come-first-served in submission order by Slurm's
 * own rule (saturn_sched_fcfs(): the GPUs that free up first); and the
 * library's own current practice (saturn_planner_baseline()). The best of
 * all of them is the baseline.
 */
#ifndef SATURN_BENCH_REAL_H
#define SATURN_BENCH_REAL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "planner.h"
#include "sched_core.h"

#include "bench_model.h"

#ifndef BENCH_DATA_DIR
#define BENCH_DATA_DIR "tests/bench/data"
#endif

#define RT_MAX_TYPES 8
#define RT_MAX_JT 64
#define RT_NSCALE 4 /* 1, 2, 4, 8 GPUs */

/* The measurement table: steps per second per job type, GPU type and
 * GPU count (0: not measured, or did not run). */
typedef struct rt_data {
	int ntypes, njt;
	char type[RT_MAX_TYPES][24];
	char jt[RT_MAX_JT][64];
	double sps[RT_MAX_JT][RT_MAX_TYPES][RT_NSCALE];
	int ref; /* reference type: job lengths are drawn on one of its GPUs */
} rt_data_t;

/* A family: nodes[i] nodes of type types[i] with gpus[i] GPUs each. */
typedef struct rt_family {
	const char *file; /* under BENCH_DATA_DIR */
	const char *ref;  /* reference type */
	int ntypes;
	const char *types[RT_MAX_TYPES];
	int nodes[RT_MAX_TYPES];
	int gpus[RT_MAX_TYPES];
	int arrivals; /* tasks arrive over time (release_s) */
} rt_family_t;

typedef struct rt_job {
	int jt;
	double steps;
	double release;
} rt_job_t;

static int rt_find(char names[][64], int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* Reads a gavel-throughputs.csv-style table: worker_type,"job_type",
 * scale_factor,steps_per_s. Worker types with a suffix (Gavel's
 * "_unconsolidated": workers spread over servers) are not single-node
 * options and are skipped. Returns 0, or -1 with a message on stderr. */
static int rt_load(rt_data_t *d, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];

	memset(d, 0, sizeof(*d));
	d->ref = -1;
	if (!f) {
		fprintf(stderr, "saturn-bench: %s: cannot open (--data-dir)\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char wt[24], jt[64];
		int scale, ti, ji, k;
		double v;

		if (sscanf(line, "%23[^,],\"%63[^\"]\",%d,%lf", wt, jt, &scale, &v) != 4)
			continue; /* the header */
		if (strchr(wt, '_'))
			continue;
		for (k = 0; k < RT_NSCALE && (1 << k) != scale; k++)
			;
		if (k == RT_NSCALE)
			continue;
		ti = -1;
		for (int i = 0; i < d->ntypes; i++)
			if (!strcmp(d->type[i], wt))
				ti = i;
		if (ti < 0) {
			if (d->ntypes == RT_MAX_TYPES)
				goto bad;
			ti = d->ntypes++;
			snprintf(d->type[ti], sizeof(d->type[ti]), "%s", wt);
		}
		ji = rt_find(d->jt, d->njt, jt);
		if (ji < 0) {
			if (d->njt == RT_MAX_JT)
				goto bad;
			ji = d->njt++;
			snprintf(d->jt[ji], sizeof(d->jt[ji]), "%s", jt);
		}
		d->sps[ji][ti][k] = v > 0 ? v : 0;
	}
	fclose(f);
	if (d->njt == 0) {
		fprintf(stderr, "saturn-bench: %s: no measurements\n", path);
		return -1;
	}
	return 0;
bad:
	fclose(f);
	fprintf(stderr, "saturn-bench: %s: too many types\n", path);
	return -1;
}

/* The table's index of each family type (-1 when the table lacks it). */
static int rt_type(const rt_data_t *d, const char *name)
{
	for (int i = 0; i < d->ntypes; i++)
		if (!strcmp(d->type[i], name))
			return i;
	return -1;
}

/* Draws n tasks: 4-8 job types measured at one GPU on every type of the
 * family, each task one of them with minutes = 10^U(1.5, 2.5) on one
 * reference GPU. Releases (arrivals): sorted uniform over half of the
 * batch's area on the cluster (total one-reference-GPU time / GPUs). */
static int rt_draw(const rt_data_t *d, const rt_family_t *f, int n, rt_job_t *jobs)
{
	int pool[RT_MAX_JT], np = 0, k, ref = rt_type(d, f->ref), tix[RT_MAX_TYPES], gpus = 0;
	double total = 0;

	if (ref < 0)
		return -1;
	for (int i = 0; i < f->ntypes; i++) {
		tix[i] = rt_type(d, f->types[i]);
		if (tix[i] < 0)
			return -1;
		gpus += f->nodes[i] * f->gpus[i];
	}
	for (int j = 0; j < d->njt; j++) {
		int ok = d->sps[j][ref][0] > 0;

		for (int i = 0; i < f->ntypes && ok; i++)
			ok = d->sps[j][tix[i]][0] > 0;
		if (ok)
			pool[np++] = j;
	}
	if (np == 0)
		return -1;
	k = 4 + irand(5);
	if (k > np)
		k = np;
	for (int i = 0; i < k; i++) { /* a random k-subset in pool[0..k) */
		int r = i + irand(np - i), x = pool[i];

		pool[i] = pool[r];
		pool[r] = x;
	}
	for (int t = 0; t < n; t++) {
		double minutes = pow(10, 1.5 + unif());

		jobs[t].jt = pool[irand(k)];
		jobs[t].steps = ceil(60 * minutes * d->sps[jobs[t].jt][ref][0]);
		jobs[t].release = 0;
		total += 60 * minutes;
	}
	if (f->arrivals) {
		double span = 0.5 * total / gpus;

		for (int t = 1; t < n; t++)
			jobs[t].release = span * unif();
		for (int t = 1; t < n; t++) /* sorted: submission order */
			for (int u = t; u > 1 && jobs[u].release < jobs[u - 1].release; u--) {
				double x = jobs[u].release;

				jobs[u].release = jobs[u - 1].release;
				jobs[u - 1].release = x;
			}
	}
	return 0;
}

static void rt_option(saturn_task_t *t, const rt_data_t *d, int jt, int ti, int k)
{
	saturn_option_t *o = &t->options[t->noptions++];

	o->technique = xstrdup("ddp");
	o->gpus = 1 << k;
	o->sec_per_batch = 1.0 / d->sps[jt][ti][k];
	o->klass = xstrdup(d->type[ti]);
}

/* The problem of jobs[0..n) on family f's cluster. G == 0: every measured
 * option on every type; G > 0: the uniform request of G GPUs, per type the
 * largest measured count <= G (only type `only` when >= 0). NULL when a
 * task has no option (a typed request of a type it was not measured on). */
static saturn_problem_t *rt_problem(const rt_data_t *d, const rt_family_t *f, const rt_job_t *jobs,
				    int n, int G, int only)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};

	if (!p)
		exit(2);
	for (int i = 0; i < f->ntypes; i++)
		for (int j = 0; j < f->nodes[i]; j++) {
			saturn_node_t nd = {0};
			char name[48];

			snprintf(name, sizeof(name), "%s-%d", f->types[i], j);
			nd.name = xstrdup(name);
			nd.gpus = f->gpus[i];
			nd.klass = xstrdup(f->types[i]);
			if (saturn_problem_add_node(p, &nd) < 0)
				exit(2);
		}
	for (int t = 0; t < n; t++) {
		saturn_task_t tk = {0};
		char id[96];

		snprintf(id, sizeof(id), "%s-%d", d->jt[jobs[t].jt], t);
		for (char *c = id; *c; c++)
			if (*c == ' ' || *c == '(' || *c == ')')
				*c = *c == ' ' ? '_' : '.';
		tk.id = xstrdup(id);
		tk.batches = jobs[t].steps;
		tk.release_s = jobs[t].release;
		tk.options = xcalloc((size_t)f->ntypes * RT_NSCALE, sizeof(*tk.options));
		for (int i = 0; i < f->ntypes; i++) {
			int ti = rt_type(d, f->types[i]), best = -1;

			if (only >= 0 && i != only)
				continue;
			for (int k = 0; k < RT_NSCALE; k++) {
				if (d->sps[jobs[t].jt][ti][k] <= 0 || (1 << k) > f->gpus[i])
					continue;
				if (G == 0)
					rt_option(&tk, d, jobs[t].jt, ti, k);
				else if ((1 << k) <= G)
					best = k;
			}
			if (G > 0 && best >= 0)
				rt_option(&tk, d, jobs[t].jt, ti, best);
		}
		if (tk.noptions == 0) {
			free(tk.options);
			free(tk.id);
			saturn_problem_destroy(p);
			return NULL;
		}
		if (saturn_problem_add_task(p, &tk) < 0)
			exit(2);
	}
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "saturn-bench: bad real-data instance: %s\n", err.text);
		exit(2);
	}
	return p;
}

/* The best uniform request (see the header comment): its makespan, and
 * what it was into what[] ("any/4", "v100/8", "lib/2"). */
static double rt_uniform(const rt_data_t *d, const rt_family_t *f, const rt_job_t *jobs, int n,
			 const saturn_problem_t *full, char *what, size_t wlen)
{
	double best = INFINITY;
	saturn_error_t err = {{0}};

	for (int G = 1; G <= 8; G *= 2) {
		saturn_plan_t *bl = saturn_planner_baseline(full, G, &err);

		if (bl && bl->makespan_s < best) {
			best = bl->makespan_s;
			snprintf(what, wlen, "lib/%d", G);
		}
		saturn_plan_destroy(bl);
		for (int only = -1; only < f->ntypes; only++) {
			saturn_problem_t *q = rt_problem(d, f, jobs, n, G, only);
			saturn_plan_t *pl = q ? saturn_sched_fcfs(q) : NULL;

			if (pl && pl->makespan_s < best) {
				best = pl->makespan_s;
				snprintf(what, wlen, "%s/%d", only < 0 ? "any" : f->types[only], G);
			}
			saturn_plan_destroy(pl);
			saturn_problem_destroy(q);
		}
	}
	return best;
}

#endif /* SATURN_BENCH_REAL_H */
