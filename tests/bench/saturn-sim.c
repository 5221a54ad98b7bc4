/* saturn-sim.c - a GPU cluster beyond one machine, by simulation: a public
 * trace replayed through Slurm-like backfill and through the planner that
 * sched/saturn runs, event by event (doc/benchmarks-site.md, "Simulation
 * beyond one machine").
 *
 * Usage: saturn-sim [--trace FILE] [--data FILE] [--first N] [--jobs N]
 *          [--gpus N] [--types k80,p100,v100] [--compress X] [--users U]
 *          [--latency S] [--latency-first S] [--limit-factor F]
 *          [--interval S] [--solve-s S] [--evals N] [--max-plan N] [--min-gain G]
 *          [--sched both|backfill|saturn] [--bf-prefer none|newest]
 *          [--bucket-h H] [--mixed]
 *
 * The model. A cluster of --gpus GPUs, nodes of 8 GPUs, the --types in
 * equal shares, nodes of the types interleaved. Jobs: a window of --jobs
 * jobs from the --first-th of a trace (gavel-msr-*.tsv: job type, GPU
 * count, arrival, steps), arrivals counted from the window's first and
 * divided by --compress (to load the cluster). Every speed is Gavel's
 * measurement (gavel-throughputs.csv): a job on GPU type T with G GPUs
 * runs steps / steps_per_s(type, T, G) seconds. GPU counts above 8 (the
 * table stops there; none in 6214e9, 103 of 2,000 in 11cb48) are capped
 * at 8. User = trace index mod --users. Each job is its own batch of one
 * task (no grouping of arrivals).
 *
 * Slurm's start latency: a job holds its GPUs from the scheduler's
 * decision and starts work --latency seconds later (default 1.0 s: the
 * end-of-one-job-to-start-of-the-next median measured on the one-machine
 * cluster, doc/benchmarks.md "Slurm's start latency" and "Slurm's own
 * latency": 0.96-1.00 s); --latency-first (0.61 s: submission to start
 * there) when the decision falls at the job's arrival. Both schedulers pay
 * the same latency. Time limits (backfill only): --limit-factor x the
 * job's true runtime on the type it runs on (default 2).
 *
 * Schedulers: sim-sched.c. Saturn cycles every --interval seconds (10)
 * after an arrival or an end (0: at every event), each solve with a time
 * limit of --solve-s (0.5) and at most --evals annealing decodes (2000),
 * seed 1, no MILP. As sched/saturn carries its plan, the last plan (its
 * times from now) is passed as the warm start and kept unless the search
 * finds one shorter by --min-gain (0.05, saturn_min_gain's default; 0: a
 * fresh plan each cycle).
 *
 * SATURN_SIM_FAULT set (tests/bench/sim-smoke.sh): the backfill model
 * asks for the first GPUs of a node whether free or not, so that the
 * over-commit check is seen to fire.
 *
 * SATURN_SIM_DEBUG set: one line per saturn cycle on stderr (held jobs,
 * the plan's makespan, bound, method, status).
 *
 * Checks, every run: no GPU given to two jobs at once, every job started
 * and ended exactly once. Exit status 1 on a violation, 2 on bad usage.
 *
 * --mixed: instead of a trace, tests/bench/slurm-bench.sh's mixed sweep
 * (16 tasks, 50 batches, 2 nodes x 8 GPUs), against the one-machine
 * cluster's recorded makespans.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "sim.h"
#include "sim_report.h"

#ifndef BENCH_DATA_DIR
#define BENCH_DATA_DIR "tests/bench/data"
#endif

double sim_runtime(const sim_t *s, const sim_job_t *j, int t, int k)
{
	double v = s->tab->sps[j->jt][t][k];

	return v > 0 ? j->steps / v : -1;
}

int sim_start(sim_t *s, int ji, int n, int k, const int *gpu)
{
	sim_job_t *j = &s->jobs[ji];
	sim_node_t *nd = &s->nodes[n];
	int need = 1 << k, got = 0;
	double rt = sim_runtime(s, j, nd->type, k);
	static int fault = -1;

	if (fault < 0)
		fault = getenv("SATURN_SIM_FAULT") != NULL;
	if (rt < 0 || j->state != SJ_QUEUED) {
		fprintf(stderr, "saturn-sim: job %d started in state %d / unmeasured option\n",
			ji, j->state);
		s->errors++;
		return -1;
	}
	for (int i = 0; i < need; i++) {
		int g = gpu ? gpu[i] : -1;

		if (!gpu && fault)
			g = i; /* the checker's own test: the node's first GPUs, free or not */
		if (!gpu)
			for (int x = 0; x < SIM_GPN && g < 0; x++)
				if (nd->owner[x] < 0)
					g = x;
		if (g < 0 || g >= SIM_GPN || nd->owner[g] >= 0) {
			fprintf(stderr, "saturn-sim: t=%.1f job %d: GPU %d of node %d not free\n",
				s->now, ji, g, n);
			s->errors++;
			for (int x = 0; x < got; x++)
				nd->owner[j->gpu[x]] = -1;
			return -1;
		}
		nd->owner[g] = ji;
		j->gpu[got++] = g;
	}
	j->state = SJ_RUNNING;
	j->starts++;
	j->type = nd->type;
	j->node = n;
	j->k = k;
	j->alloc_t = s->now;
	j->start = s->now + (s->now <= j->arrival ? s->latency_first : s->latency) + s->extra;
	j->end = j->start + rt;
	j->limit_end = j->start + s->limit_factor * rt;
	s->run[s->nrun++] = ji;
	s->busy_gpus += need;
	return 0;
}

/* Ends every running job due by now. Returns how many. */
static int end_due(sim_t *s)
{
	int out = 0, n = 0;

	for (int r = 0; r < s->nrun; r++) {
		sim_job_t *j = &s->jobs[s->run[r]];

		if (j->end > s->now + 1e-9) {
			s->run[out++] = s->run[r];
			continue;
		}
		for (int i = 0; i < (1 << j->k); i++) {
			if (s->nodes[j->node].owner[j->gpu[i]] != s->run[r])
				s->errors++;
			s->nodes[j->node].owner[j->gpu[i]] = -1;
		}
		s->busy_gpus -= 1 << j->k;
		j->state = SJ_DONE;
		n++;
	}
	s->nrun = out;
	return n;
}

/* Runs the events to the end. Returns 0, or -1 when stuck. */
static int simulate(sim_t *s, sim_util_t *u)
{
	int next_arr = 0, done = 0;
	double cycle = INFINITY;

	s->now = 0;
	while (done < s->njobs) {
		double t = INFINITY;
		int changed = 0;

		if (next_arr < s->njobs)
			t = s->jobs[next_arr].arrival;
		for (int r = 0; r < s->nrun; r++)
			if (s->jobs[s->run[r]].end < t)
				t = s->jobs[s->run[r]].end;
		if (s->use_saturn && cycle < t)
			t = cycle;
		if (t == INFINITY) {
			fprintf(stderr, "saturn-sim: stuck at t=%.0f with %d queued\n",
				s->now, s->nqueue);
			return -1;
		}
		if (t < s->now)
			t = s->now;
		sim_util_add(u, s->now, t, s->busy_gpus);
		s->now = t;
		changed = end_due(s);
		done += changed;
		while (next_arr < s->njobs && s->jobs[next_arr].arrival <= t) {
			s->jobs[next_arr].state = SJ_QUEUED;
			s->queue[s->nqueue++] = next_arr++;
			changed++;
		}
		if (!s->use_saturn) {
			if (changed)
				sim_backfill(s);
			continue;
		}
		if (changed) {
			double c = s->interval > 0 ? ceil(t / s->interval) * s->interval : t;

			if (c < cycle)
				cycle = c;
		}
		if (cycle <= t) {
			double next = sim_saturn_cycle(s);

			cycle = INFINITY;
			if (next >= 0)
				cycle = s->interval > 0 ? ceil(next / s->interval) * s->interval : next;
		}
	}
	return 0;
}

/* gavel-throughputs.csv: worker_type,"job_type",scale_factor,steps_per_s
 * for the types listed in `types` (comma-separated, in that order). */
static int load_tab(sim_tab_t *d, const char *path, const char *types)
{
	FILE *f = fopen(path, "r");
	char line[256], buf[128], *save = NULL;

	memset(d, 0, sizeof(*d));
	snprintf(buf, sizeof(buf), "%s", types);
	for (char *x = strtok_r(buf, ",", &save); x; x = strtok_r(NULL, ",", &save)) {
		if (d->ntypes == SIM_MAX_TYPES) {
			fprintf(stderr, "saturn-sim: --types: at most %d\n", SIM_MAX_TYPES);
			return -1;
		}
		snprintf(d->type[d->ntypes++], 24, "%s", x);
	}
	if (!f) {
		fprintf(stderr, "saturn-sim: --data %s: cannot open\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char wt[24], jt[64];
		int scale, ti = -1, ji = -1, k;
		double v;

		if (sscanf(line, "%23[^,],\"%63[^\"]\",%d,%lf", wt, jt, &scale, &v) != 4)
			continue;
		for (k = 0; k < SIM_NSCALE && (1 << k) != scale; k++)
			;
		for (int i = 0; i < d->ntypes; i++)
			if (!strcmp(d->type[i], wt))
				ti = i;
		if (k == SIM_NSCALE || ti < 0)
			continue;
		for (int i = 0; i < d->njt; i++)
			if (!strcmp(d->jt[i], jt))
				ji = i;
		if (ji < 0) {
			if (d->njt == SIM_MAX_JT)
				continue;
			ji = d->njt++;
			snprintf(d->jt[ji], 64, "%s", jt);
		}
		d->sps[ji][ti][k] = v > 0 ? v : 0;
	}
	fclose(f);
	for (int i = 0; i < d->ntypes; i++) {
		int any = 0;

		for (int j = 0; j < d->njt; j++)
			any |= d->sps[j][i][0] > 0;
		if (!any) {
			fprintf(stderr, "saturn-sim: --types: %s not in %s\n", d->type[i], path);
			return -1;
		}
	}
	return 0;
}

/* The user's request: its GPU count capped at 8, down to the largest count
 * measured on some type. */
static void set_request(const sim_tab_t *d, sim_job_t *j, int scale)
{
	int k = 0, any = 0;

	while (k + 1 < SIM_NSCALE && (2 << k) <= scale)
		k++;
	for (; k > 0; k--) {
		any = 0;
		for (int t = 0; t < d->ntypes; t++)
			any |= d->sps[j->jt][t][k] > 0;
		if (any)
			break;
	}
	j->kreq = k;
	j->g = 1 << k;
}

/* Reads the window [first, first + n) of a trace. Returns the number of
 * jobs read, or -1. */
static int load_trace(const sim_tab_t *d, const char *path, int first, int n,
		      double compress, int users, sim_job_t *jobs, int *capped)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int idx = -1, got = 0;
	double t0 = 0;

	if (!f) {
		fprintf(stderr, "saturn-sim: --trace %s: cannot open\n", path);
		return -1;
	}
	*capped = 0;
	while (got < n && fgets(line, sizeof(line), f)) {
		char jt[64];
		int scale, ji = -1;
		double arr, steps;

		if (sscanf(line, "%63[^\t]\t%d\t%lf\t%lf", jt, &scale, &arr, &steps) != 4)
			continue; /* the header */
		if (++idx < first)
			continue;
		for (int i = 0; i < d->njt; i++)
			if (!strcmp(d->jt[i], jt))
				ji = i;
		if (ji < 0 || scale < 1 || !(steps > 0) || !(arr >= 0)) {
			fprintf(stderr, "saturn-sim: %s: job %d: bad job_type, scale_factor, "
				"arrival_s or total_steps\n", path, idx);
			fclose(f);
			return -1;
		}
		if (got == 0)
			t0 = arr;
		memset(&jobs[got], 0, sizeof(jobs[got]));
		jobs[got].jt = ji;
		jobs[got].steps = steps;
		jobs[got].arrival = (arr - t0) / compress;
		jobs[got].user = idx % users;
		*capped += scale > 8;
		set_request(d, &jobs[got], scale);
		got++;
	}
	fclose(f);
	return got;
}

int sim_run(sim_t *base, const sim_job_t *jobs, int use_saturn,
		   double bucket_s, sim_result_t *res)
{
	sim_t s = *base;
	sim_util_t u;
	struct timespec a, b;
	int rc;

	s.use_saturn = use_saturn;
	s.jobs = malloc(sizeof(*s.jobs) * s.njobs);
	s.nodes = malloc(sizeof(*s.nodes) * s.nnodes);
	s.queue = malloc(sizeof(int) * s.njobs);
	s.run = malloc(sizeof(int) * s.njobs);
	if (!s.jobs || !s.nodes || !s.queue || !s.run || sim_util_init(&u, bucket_s) < 0) {
		fprintf(stderr, "saturn-sim: out of memory\n");
		exit(1);
	}
	memcpy(s.jobs, jobs, sizeof(*s.jobs) * s.njobs);
	u.span = jobs[s.njobs - 1].arrival;
	memcpy(s.nodes, base->nodes, sizeof(*s.nodes) * s.nnodes);
	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = simulate(&s, &u);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sim_result(&s, &u, res);
	res->wall_s = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
	res->errors += rc < 0;
	sim_saturn_free(s.sat);
	free(s.jobs);
	free(s.nodes);
	free(s.queue);
	free(s.run);
	sim_util_free(&u);
	return res->errors ? -1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: saturn-sim [--trace FILE] [--data FILE] [--first N] [--jobs N]\n"
		"  [--gpus N] [--types k80,p100,v100] [--compress X] [--users U]\n"
		"  [--latency S] [--latency-first S] [--limit-factor F] [--interval S]\n"
		"  [--solve-s S] [--evals N] [--max-plan N] [--min-gain G]\n"
		"  [--sched both|backfill|saturn] [--bf-prefer none|newest]\n"
		"  [--bucket-h H] [--mixed]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *trace = BENCH_DATA_DIR "/gavel-msr-6214e9.tsv";
	const char *data = BENCH_DATA_DIR "/gavel-throughputs.csv";
	const char *types = "k80,p100,v100", *sched = "both";
	int first = 0, njobs = 500, gpus = 1008, users = 10, mixed = 0, capped = 0;
	double compress = 1, bucket_h = 24;
	static sim_tab_t tab;
	sim_t s = {0};
	sim_job_t *jobs;
	sim_result_t res[2];
	int rc = 0, nres = 0;

	s.latency = 1.0;
	s.latency_first = 0.61;
	s.limit_factor = 2;
	s.interval = 10;
	s.solve_s = 0.5;
	s.evals = 2000;
	s.min_gain = 0.05;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--mixed")) {
			mixed = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--trace")) trace = v;
		else if (!strcmp(a, "--data")) data = v;
		else if (!strcmp(a, "--first")) first = atoi(v);
		else if (!strcmp(a, "--jobs")) njobs = atoi(v);
		else if (!strcmp(a, "--gpus")) gpus = atoi(v);
		else if (!strcmp(a, "--types")) types = v;
		else if (!strcmp(a, "--compress")) compress = atof(v);
		else if (!strcmp(a, "--users")) users = atoi(v);
		else if (!strcmp(a, "--latency")) s.latency = atof(v);
		else if (!strcmp(a, "--latency-first")) s.latency_first = atof(v);
		else if (!strcmp(a, "--limit-factor")) s.limit_factor = atof(v);
		else if (!strcmp(a, "--interval")) s.interval = atof(v);
		else if (!strcmp(a, "--solve-s")) s.solve_s = atof(v);
		else if (!strcmp(a, "--evals")) s.evals = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--max-plan")) s.max_plan = atoi(v);
		else if (!strcmp(a, "--min-gain")) s.min_gain = atof(v);
		else if (!strcmp(a, "--bf-prefer")) {
			if (strcmp(v, "newest") && strcmp(v, "none")) {
				fprintf(stderr, "saturn-sim: --bf-prefer: newest or none\n");
				return 2;
			}
			s.prefer_newest = !strcmp(v, "newest");
		}
		else if (!strcmp(a, "--sched")) sched = v;
		else if (!strcmp(a, "--bucket-h")) bucket_h = atof(v);
		else usage();
	}
	if (mixed)
		return sim_mixed(&s);
	if (njobs < 1 || first < 0 || users < 1 || !(compress > 0) || !(bucket_h > 0) ||
	    !(s.limit_factor >= 1) || !(s.latency >= 0) || !(s.latency_first >= 0) ||
	    !(s.interval >= 0) || !(s.solve_s > 0)) {
		fprintf(stderr, "saturn-sim: --jobs, --first, --users, --compress, --bucket-h, "
			"--limit-factor (>= 1), --latency, --interval or --solve-s out of range\n");
		return 2;
	}
	if (load_tab(&tab, data, types) < 0)
		return 2;
	s.tab = &tab;
	s.nnodes = gpus / SIM_GPN;
	if (s.nnodes < tab.ntypes || s.nnodes > 4096) {
		fprintf(stderr, "saturn-sim: --gpus: %d..%d\n", SIM_GPN * tab.ntypes, SIM_GPN * 4096);
		return 2;
	}
	s.nodes = malloc(sizeof(*s.nodes) * s.nnodes);
	jobs = malloc(sizeof(*jobs) * njobs);
	if (!s.nodes || !jobs)
		return 1;
	for (int n = 0; n < s.nnodes; n++) {
		s.nodes[n].type = n % tab.ntypes;
		for (int g = 0; g < SIM_GPN; g++)
			s.nodes[n].owner[g] = -1;
	}
	if (!(s.min_gain >= 0 && s.min_gain < 1)) {
		fprintf(stderr, "saturn-sim: --min-gain: 0 <= G < 1\n");
		return 2;
	}
	s.njobs = load_trace(&tab, trace, first, njobs, compress, users, jobs, &capped);
	if (s.njobs <= 0) {
		if (s.njobs == 0)
			fprintf(stderr, "saturn-sim: %s: no jobs in the window\n", trace);
		return 2;
	}
	printf("# saturn-sim: %s jobs %d..%d (%d), %d GPUs (%d nodes x %d, %s), arrivals / %g,"
	       " %d users, %d requests capped at 8 GPUs\n", trace, first, first + s.njobs - 1,
	       s.njobs, s.nnodes * SIM_GPN, s.nnodes, SIM_GPN, types, compress, users, capped);
	printf("# latency %.2f s (%.2f s at arrival), backfill limit %.1f x runtime%s, saturn"
	       " interval %.0f s, solve %.2f s / %lu evals, max plan %d, min gain %.2f\n",
	       s.latency, s.latency_first, s.limit_factor,
	       s.prefer_newest ? " (newest GPU type first)" : "", s.interval, s.solve_s, s.evals,
	       s.max_plan, s.min_gain);
	sim_offered(&s, jobs);
	for (int m = 0; m < 2; m++) {
		if ((m == 0 && !strcmp(sched, "saturn")) || (m == 1 && !strcmp(sched, "backfill")))
			continue;
		res[nres].name = m ? "saturn" : "backfill";
		if (sim_run(&s, jobs, m, bucket_h * 3600, &res[nres]) < 0)
			rc = 1;
		nres++;
	}
	sim_print(res, nres, users);
	for (int i = 0; i < nres; i++)
		sim_result_free(&res[i]);
	free(s.nodes);
	free(jobs);
	return rc;
}
