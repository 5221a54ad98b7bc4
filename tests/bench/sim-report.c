/* sim-report.c - saturn-sim's figures and its check against the
 * one-machine cluster (sim_report.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_report.h"

int sim_util_init(sim_util_t *u, double bucket_s)
{
	memset(u, 0, sizeof(*u));
	u->bucket_s = bucket_s;
	u->cap = 64;
	u->busy = calloc(u->cap, sizeof(double));
	return u->busy ? 0 : -1;
}

void sim_util_add(sim_util_t *u, double t0, double t1, int gpus)
{
	if (t0 < u->span && gpus > 0)
		u->in_span += gpus * ((t1 < u->span ? t1 : u->span) - t0);
	while (t1 > t0 && gpus > 0) {
		int b = (int)(t0 / u->bucket_s);
		double e = (b + 1) * u->bucket_s;

		if (e > t1)
			e = t1;
		if (b >= u->cap) {
			int nc = u->cap;
			double *x;

			while (nc <= b)
				nc *= 2;
			x = realloc(u->busy, sizeof(double) * nc);
			if (!x)
				return; /* the figure is short; reported as is */
			memset(x + u->cap, 0, sizeof(double) * (nc - u->cap));
			u->busy = x;
			u->cap = nc;
		}
		u->busy[b] += gpus * (e - t0);
		u->total += gpus * (e - t0);
		if (b + 1 > u->n)
			u->n = b + 1;
		t0 = e;
	}
}

void sim_util_free(sim_util_t *u)
{
	free(u->busy);
	u->busy = NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The job's shortest runtime over every measured option (slowdown's
 * reference: what it takes alone on an empty cluster at its best). */
static double best_runtime(const sim_t *s, const sim_job_t *j)
{
	double best = INFINITY;

	for (int t = 0; t < s->tab->ntypes; t++)
		for (int k = 0; k < SIM_NSCALE; k++) {
			double r = sim_runtime(s, j, t, k);

			if (r >= 0 && r < best)
				best = r;
		}
	return best;
}

/* Slowdown's reference: the job's runtime at its own request (GPU count)
 * on the type where that is shortest. */
static double req_runtime(const sim_t *s, const sim_job_t *j)
{
	double best = INFINITY;

	for (int t = 0; t < s->tab->ntypes; t++) {
		double r = sim_runtime(s, j, t, j->kreq);

		if (r >= 0 && r < best)
			best = r;
	}
	return best;
}

void sim_result(const sim_t *s, const sim_util_t *u, sim_result_t *r)
{
	const char *name = r->name;
	double *jct = malloc(sizeof(double) * s->njobs);
	double *sd = malloc(sizeof(double) * s->njobs);
	int users = 0;

	memset(r, 0, sizeof(*r));
	r->name = name;
	for (int i = 0; i < s->njobs; i++)
		if (s->jobs[i].user + 1 > users)
			users = s->jobs[i].user + 1;
	r->njobs = s->njobs;
	r->gpus = s->nnodes * SIM_GPN;
	r->users = users;
	r->user_done = calloc(users, sizeof(double));
	r->user_sd = calloc(users, sizeof(double));
	r->errors = s->errors;
	if (!jct || !sd || !r->user_done || !r->user_sd) {
		r->errors++;
		free(jct);
		free(sd);
		return;
	}
	for (int i = 0; i < s->njobs; i++) {
		const sim_job_t *j = &s->jobs[i];

		if (j->starts != 1 || j->state != SJ_DONE || j->end < j->arrival) {
			fprintf(stderr, "saturn-sim: %s: job %d started %d times, state %d\n",
				name, i, j->starts, j->state);
			r->errors++;
		}
		jct[i] = j->end - j->arrival;
		sd[i] = jct[i] / req_runtime(s, j);
		if (j->end > r->makespan)
			r->makespan = j->end;
		if (j->end > r->user_done[j->user])
			r->user_done[j->user] = j->end;
		r->user_sd[j->user] += sd[i];
		r->mean_jct += jct[i] / s->njobs;
		r->mean_sd += sd[i] / s->njobs;
	}
	for (int x = 0; x < users; x++) {
		int n = 0;

		for (int i = 0; i < s->njobs; i++)
			n += s->jobs[i].user == x;
		if (n)
			r->user_sd[x] /= n;
	}
	for (int i = 0; i < s->njobs; i++)
		sd[i] = s->jobs[i].end;
	qsort(sd, s->njobs, sizeof(double), cmp_d);
	r->done50 = sd[(int)(0.50 * (s->njobs - 1))];
	r->done90 = sd[(int)(0.90 * (s->njobs - 1))];
	r->done99 = sd[(int)(0.99 * (s->njobs - 1))];
	for (int i = 0; i < s->njobs; i++)
		sd[i] = (s->jobs[i].end - s->jobs[i].arrival) / req_runtime(s, &s->jobs[i]);
	qsort(jct, s->njobs, sizeof(double), cmp_d);
	qsort(sd, s->njobs, sizeof(double), cmp_d);
	r->median_jct = jct[s->njobs / 2];
	r->p95_jct = jct[(int)(0.95 * (s->njobs - 1))];
	r->median_sd = sd[s->njobs / 2];
	r->util = r->makespan > 0 ? u->total / (r->gpus * r->makespan) : 0;
	r->util_span = u->span > 0 ? u->in_span / (r->gpus * u->span) : 0;
	r->bucket_s = u->bucket_s;
	r->nbuckets = u->n;
	r->bucket_util = calloc(u->n ? u->n : 1, sizeof(double));
	for (int b = 0; r->bucket_util && b < u->n; b++)
		r->bucket_util[b] = u->busy[b] / (r->gpus * u->bucket_s);
	r->cycles = s->cycles;
	r->passes = s->passes;
	r->solve_wall = s->solve_wall;
	free(jct);
	free(sd);
}

void sim_result_free(sim_result_t *r)
{
	free(r->bucket_util);
	free(r->user_done);
	free(r->user_sd);
}

void sim_print(const sim_result_t *r, int n, int users)
{
	printf("%-34s", "figure");
	for (int i = 0; i < n; i++)
		printf(" %14s", r[i].name);
	printf("\n");
#define ROW(label, expr, fmt)                                  \
	do {                                                   \
		printf("%-34s", label);                        \
		for (int i = 0; i < n; i++)                    \
			printf(" %14" fmt, expr);              \
		printf("\n");                                  \
	} while (0)
	ROW("makespan (h)", r[i].makespan / 3600, ".2f");
	ROW("50% of jobs ended by (h)", r[i].done50 / 3600, ".2f");
	ROW("90% of jobs ended by (h)", r[i].done90 / 3600, ".2f");
	ROW("99% of jobs ended by (h)", r[i].done99 / 3600, ".2f");
	ROW("mean JCT (h)", r[i].mean_jct / 3600, ".2f");
	ROW("median JCT (h)", r[i].median_jct / 3600, ".2f");
	ROW("p95 JCT (h)", r[i].p95_jct / 3600, ".2f");
	ROW("mean slowdown", r[i].mean_sd, ".2f");
	ROW("median slowdown", r[i].median_sd, ".2f");
	ROW("GPU utilisation to makespan (%)", 100 * r[i].util, ".1f");
	ROW("GPU utilisation, arrival span (%)", 100 * r[i].util_span, ".1f");
	for (int x = 0; x < users && r[0].user_done; x++) {
		char l[40];

		snprintf(l, sizeof(l), "user %d: done (h) / mean slowdown", x);
		printf("%-34s", l);
		for (int i = 0; i < n; i++)
			printf(" %7.1f/%6.2f", r[i].user_done[x] / 3600, r[i].user_sd[x]);
		printf("\n");
	}
	ROW("saturn cycles / backfill passes", r[i].cycles + r[i].passes, "ld");
	ROW("planner wall (s)", r[i].solve_wall, ".1f");
	ROW("simulation wall (s)", r[i].wall_s, ".1f");
	ROW("invariant violations", r[i].errors, "d");
#undef ROW
	for (int i = 0; i < n; i++) {
		printf("# %s: GPUs busy per %.0f h (%%, the first 40):", r[i].name,
		       r[i].bucket_s / 3600);
		for (int b = 0; b < r[i].nbuckets && b < 40; b++)
			printf(" %.0f", 100 * r[i].bucket_util[b]);
		printf("\n");
	}
}

void sim_offered(const sim_t *s, const sim_job_t *jobs)
{
	double best = 0, req = 0, span = jobs[s->njobs - 1].arrival, lb = 0;

	for (int i = 0; i < s->njobs; i++) {
		double b = INFINITY, q = INFINITY;

		for (int t = 0; t < s->tab->ntypes; t++) {
			for (int k = 0; k < SIM_NSCALE; k++) {
				double r = sim_runtime(s, &jobs[i], t, k);

				if (r >= 0 && r * (1 << k) < b)
					b = r * (1 << k);
			}
			if (sim_runtime(s, &jobs[i], t, jobs[i].kreq) >= 0 &&
			    sim_runtime(s, &jobs[i], t, jobs[i].kreq) * jobs[i].g < q)
				q = sim_runtime(s, &jobs[i], t, jobs[i].kreq) * jobs[i].g;
		}
		best += b;
		req += q;
		if (jobs[i].arrival + best_runtime(s, &jobs[i]) > lb)
			lb = jobs[i].arrival + best_runtime(s, &jobs[i]);
	}
	printf("# offered work: %.0f GPU-h at each job's most GPU-efficient option, %.0f GPU-h"
	       " at its own request on its best type; arrivals over %.1f h; %.2f x / %.2f x the"
	       " cluster's GPU-h over that span\n", best / 3600, req / 3600, span / 3600,
	       span > 0 ? best / (span * s->nnodes * SIM_GPN) : 0,
	       span > 0 ? req / (span * s->nnodes * SIM_GPN) : 0);
	printf("# makespan lower bound (latest arrival + shortest runtime of a job): %.1f h\n",
	       lb / 3600);
}

/* slurm-bench.sh's mixed sweep: per model the seconds per batch at 1/2/4/8
 * GPUs (0: out of memory), 4 tasks of 50 batches each. */
static const double mixed_spb[4][SIM_NSCALE] = {
	{0.20, 0.12, 0.085, 0.075}, /* bert-large/bs32 */
	{0.40, 0.22, 0.13, 0.10},   /* gpt2-medium/bs16 */
	{0, 0.60, 0.34, 0.22},      /* gpt2-xl/bs8 */
	{0, 0, 0.70, 0.42},         /* llama-7b/bs4 */
};

int sim_mixed(const sim_t *params)
{
	static sim_tab_t tab;
	sim_node_t nodes[2];
	sim_job_t jobs[16];
	/* doc/benchmarks.md, "One cycle, one call", exact variant, the two
	 * runs of the final code (2026-12-07): executed makespans on the
	 * one-machine cluster, and the offline figures (no Slurm latency) of
	 * `saturn plan --compare` */
	static const struct {
		const char *what;
		int use_saturn, g;
		double lo, hi, offline;
	} c[3] = {
		{"stock gpu:4", 0, 4, 64.5, 65.8, 63},
		{"stock gpu:8", 0, 8, 84.9, 84.9, 82},
		{"sched/saturn", 1, 0, 63.9, 63.9, 61},
	};
	int rc = 0;

	memset(&tab, 0, sizeof(tab));
	tab.ntypes = 1;
	snprintf(tab.type[0], 24, "gpu");
	tab.njt = 4;
	for (int m = 0; m < 4; m++)
		for (int k = 0; k < SIM_NSCALE; k++)
			tab.sps[m][0][k] = mixed_spb[m][k] > 0 ? 1 / mixed_spb[m][k] : 0;
	for (int n = 0; n < 2; n++) {
		nodes[n].type = 0;
		for (int g = 0; g < SIM_GPN; g++)
			nodes[n].owner[g] = -1;
	}
	printf("# mixed sweep (tests/bench/slurm-bench.sh, exact variant): 16 tasks x 50 batches,"
	       " 2 nodes x 8 GPUs; recorded: doc/benchmarks.md, \"One cycle, one call\"\n");
	printf("%-14s %10s %10s %12s %10s %14s %8s\n", "scheduler", "sim (s)", "sim no-lat",
	       "recorded (s)", "offline", "sim/recorded", "errors");
	for (int i = 0; i < 3; i++) {
		double mk[2];
		int errs = 0;

		for (int lat = 0; lat < 2; lat++) {
			sim_t s = *params;
			sim_result_t r = {.name = c[i].what};

			s.tab = &tab;
			s.nnodes = 2;
			s.nodes = nodes;
			s.njobs = 16;
			s.interval = 0; /* sched/saturn re-plans on each end (its 0.1 s poll) */
			s.solve_s = 2;  /* saturn_solver_time=2 */
			s.evals = 0;    /* to the time limit, as the plugin */
			s.solve_delay = 2;
			if (!lat)
				s.latency = s.latency_first = s.solve_delay = 0;
			for (int t = 0; t < 16; t++) {
				memset(&jobs[t], 0, sizeof(jobs[t]));
				jobs[t].jt = t / 4;
				jobs[t].steps = 50;
				jobs[t].user = 0;
				jobs[t].kreq = c[i].g == 8 ? 3 : 2;
				jobs[t].g = c[i].g ? c[i].g : 4;
			}
			if (sim_run(&s, jobs, c[i].use_saturn, 3600, &r) < 0)
				rc = 1;
			mk[lat] = r.makespan;
			errs += r.errors;
			sim_result_free(&r);
		}
		printf("%-14s %10.1f %10.1f %5.1f-%-6.1f %10.0f %14.3f %8d\n", c[i].what, mk[1], mk[0],
		       c[i].lo, c[i].hi, c[i].offline, mk[1] / ((c[i].lo + c[i].hi) / 2), errs);
	}
	return rc;
}
