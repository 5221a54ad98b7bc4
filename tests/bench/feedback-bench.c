/* feedback-bench.c - whether runtime feedback pays (doc/benchmarks.md,
 * "Runtime feedback"), in simulation with libsaturn only: no Slurm.
 *
 * Per seed, a batch of 16 tasks over 4 model sizes (4 tasks per signature,
 * technique ddp at 1, 2, 4 and 8 GPUs, profile t(g) = a/g + b + c log2 g)
 * on 2 nodes of 8 GPUs. The true speed of each model differs from its
 * profile by a factor drawn from [0.7, 1.5], and each GPU count by another
 * +-10 % around it (so scaling the whole curve by one ratio is not exact).
 * An event-driven replay runs sched/saturn's own cycle (saturn_cycle_run,
 * lib/sched/sched_cycle.h, as the plugin calls it): at each task end and
 * each time the cycle is due (a planned start; 0.5 s after a cycle that
 * released from the carried plan and left the solve to the next), a
 * snapshot (running tasks with their progress file: batches done and the
 * job's own sec_per_batch, reported every REPORT_S seconds; held tasks),
 * then the cycle (build, carried plan, warm-started solve, the switch
 * rule with min_gain 5 %, decisions), and the tasks it releases started
 * on free GPUs of their node. Tasks run at their TRUE speed.
 *   none      today: running tasks' remaining time from the progress
 *             file's batches left x the profile's speed;
 *   feedback  saturn_sched_feedback before each build: observed speeds for
 *             the running tasks, corrections for the held ones;
 *   clairv.   the same replay with the true speeds as the profile (what a
 *             perfect profile gives: the floor);
 *   uniform   every task gpu:G (G = 1, 2, 4 or 8) at its true speed,
 *             first-come-first-served (saturn_planner_baseline): the best G.
 * Printed: per seed the executed makespans; then per method the median and
 * the spread (min..max) over seeds, and the median ratio to clairvoyant.
 * lo and hi set the per-model factor's range (0.7 and 1.5), per_model the
 * tasks per model (4: 16 tasks).
 *   usage: feedback-bench [seeds=8] [budget_s=0.3] [first_seed=1] [lo] [hi]
 *                         [per_model]
 *          feedback-bench mixed|scaling [budget_s=2] [seeds=1]
 * "mixed" replays tests/bench/slurm-bench.sh's sweep instead (its profile,
 * 50-batch tasks reporting every 5 batches, the "true" variant's factors),
 * variants exact and true, seeds 1..seeds. No Slurm latency. "scaling":
 * the same with BENCH_FAMILY=scaling (150 batches, its factors).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedback.h"
#include "planner.h"
#include "profile.h"
#include "sched_core.h"
#include "sched_cycle.h"

#define NODES 2
#define NODE_GPUS 8
#define NMODELS 4
#define MAX_PER_MODEL 16
static int PER_MODEL = 4; /* tasks per model: argument 6 */
#define NTASKS (NMODELS * PER_MODEL)
#define NCOUNTS 4
#define REPORT_S 60.0
#define MIN_GAIN 0.05
#define SLACK_S 0.5
#define T0 1000000.0 /* epoch of the batch's submission */

/* per model: compute a (s/batch at 1 GPU), overhead b, communication c,
 * batches per task */
static const double model_a[NMODELS] = {0.2, 0.5, 1.0, 2.0};
static const double model_b[NMODELS] = {0.01, 0.02, 0.03, 0.05};
static const double model_c[NMODELS] = {0.004, 0.012, 0.03, 0.07};
static const double model_batches[NMODELS] = {4000, 2400, 1600, 1000};
static const int counts[NCOUNTS] = {1, 2, 4, 8};
/* "mixed" mode (argument 1 "mixed"): the sweep of tests/bench/slurm-bench.sh
 * instead: its 4 models, their profile (0: out of memory), techniques,
 * 50 batches per task, a progress report every 5 batches, the "true"
 * variant's factors per model (exactly, no per-count noise). */
static int mixed;
static const double mixed_spb[NMODELS][NCOUNTS] = {
	{0.20, 0.12, 0.085, 0.075}, {0.40, 0.22, 0.13, 0.10}, {0, 0.60, 0.34, 0.22}, {0, 0, 0.70, 0.42}};
static const double mixed_factor[NMODELS] = {0.7, 1.5, 0.9, 1.3};
static const char *const mixed_sig[NMODELS] = {"bert-large/bs32", "gpt2-medium/bs16", "gpt2-xl/bs8",
					       "llama-7b/bs4"};
#define MIXED_BATCHES 50.0
/* "scaling" mode (argument 1 "scaling"): slurm-bench.sh's BENCH_FAMILY=scaling
 * (150 batches a task, DDP but the 7B model's FSDP), same replay. */
static int scaling;
static const double scaling_spb[NMODELS][NCOUNTS] = {
	{0.40, 0.21, 0.11, 0.058}, {0.10, 0.09, 0.085, 0.08}, {0.20, 0.12, 0.085, 0.075}, {0, 0, 0.70, 0.42}};
static const double scaling_factor[NMODELS] = {0.7, 1.5, 1.3, 0.9};
static const char *const scaling_sig[NMODELS] = {"resnet50/bs256", "lstm-lm/bs64", "bert-large/bs32",
						 "llama-7b/bs4"};
#define SCALING_BATCHES 150.0
#define MIXED_REPORT_BATCHES 5.0

static const char *technique_of(int m, int k)
{
	if (!mixed)
		return "ddp";
	if (counts[k] == 1)
		return "single";
	if (scaling)
		return m < 3 ? "ddp" : "fsdp";
	return m < 2 ? "ddp" : "fsdp";
}

static double batches_of(int m)
{
	return scaling ? SCALING_BATCHES : mixed ? MIXED_BATCHES : model_batches[m];
}
static int verbose; /* SATURN_BENCH_VERBOSE=1: running tasks' estimate/true left per event */

static double profile_spb(int m, int g)
{
	return model_a[m] / g + model_b[m] + model_c[m] * log2((double)g);
}

/* xorshift: the same figures on every machine */
static unsigned long long rng_state;

static double urand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* saturn-profile/1 text with spb[m][k] (k: index into counts) */
static saturn_profile_t *make_profile(double spb[NMODELS][NCOUNTS])
{
	char buf[8192];
	size_t off = 0;
	saturn_error_t err = {{0}};
	saturn_profile_t *pr;

	off += (size_t)snprintf(buf + off, sizeof(buf) - off,
				"{\"format\":\"saturn-profile/1\",\"batch\":\"bench\",\"created\":1,\"tasks\":[");
	for (int m = 0; m < NMODELS; m++) {
		char sig[64];

		if (mixed)
			snprintf(sig, sizeof(sig), "%s", scaling ? scaling_sig[m] : mixed_sig[m]);
		else
			snprintf(sig, sizeof(sig), "model%d/bs16", m);
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"%s{\"signature\":\"%s\",\"task_ids\":\"%d-%d\",\"batches\":%g,\"options\":[",
					m ? "," : "", sig, m * PER_MODEL, m * PER_MODEL + PER_MODEL - 1,
					batches_of(m));
		for (int k = 0; k < NCOUNTS; k++)
			if (spb[m][k] > 0)
				off += (size_t)snprintf(buf + off, sizeof(buf) - off,
							"%s{\"technique\":\"%s\",\"gpus\":%d,\"sec_per_batch\":%.9g,\"status\":\"measured\"}",
							k ? "," : "", technique_of(m, k), counts[k], spb[m][k]);
			else
				off += (size_t)snprintf(buf + off, sizeof(buf) - off,
							"%s{\"technique\":\"%s\",\"gpus\":%d,\"status\":\"oom\",\"reason\":\"out of memory\"}",
							k ? "," : "", technique_of(m, k), counts[k]);
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "]}");
	}
	snprintf(buf + off, sizeof(buf) - off, "]}");
	pr = saturn_profile_parse(buf, strlen(buf), &err);
	if (!pr)
		fprintf(stderr, "feedback-bench: profile: %s\n", err.text);
	return pr;
}

static const saturn_profile_t *lookup(const char *batch, long uid, void *arg)
{
	(void)batch;
	(void)uid;
	return arg;
}

typedef struct simtask {
	int state; /* SATURN_SNAP_* */
	int node, gpus, k; /* k: index into counts */
	uint64_t mask;
	double start, end; /* epochs, running */
} simtask_t;

/* True speed of task i with counts[k]. */
static double true_spb(double truth[NMODELS][NCOUNTS], int i, int k)
{
	return truth[i / PER_MODEL][k];
}

/* The GPUs of node n no running task holds. */
static uint64_t busy_mask(const simtask_t *tk, int n)
{
	uint64_t m = 0;

	for (int i = 0; i < NTASKS; i++)
		if (tk[i].state == SATURN_SNAP_RUNNING && tk[i].node == n)
			m |= tk[i].mask;
	return m;
}

/* One replay through sched/saturn's own cycle (saturn_cycle_run, as the
 * plugin calls it); returns the executed makespan (s) or -1. */
static double replay(const saturn_profile_t *believed, double truth[NMODELS][NCOUNTS],
		     int use_feedback, double budget_s, unsigned seed, int *nplans)
{
	simtask_t tk[NMODELS * MAX_PER_MODEL];
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_settings_t cfg;
	saturn_profset_t ps = {0};
	saturn_cycle_state_t st;
	double t = T0, last_end = T0;
	int done = 0, guard = 0;

	(void)seed;
	memset(tk, 0, sizeof(tk));
	*nplans = 0;
	saturn_sched_settings_init(&cfg);
	cfg.solver_time_s = budget_s;
	cfg.min_gain = MIN_GAIN;
	cfg.release_slack_s = SLACK_S;
	cfg.feedback = use_feedback;
	saturn_cycle_state_init(&st);
	if (!s || saturn_profset_add(&ps, 1000, "bench", "", believed) < 0)
		goto fail;
	while (done < NTASKS && guard++ < 20 * NTASKS + 100) {
		saturn_cycle_in_t in = {0};
		saturn_cycle_out_t out;
		double next = INFINITY;

		/* snapshot */
		saturn_snapshot_reset(s);
		s->now = t;
		for (int n = 0; n < NODES; n++) {
			saturn_snap_node_t *nd = saturn_snapshot_add_node(s);

			snprintf(nd->name, sizeof(nd->name), "n%d", n + 1);
			nd->gpus = NODE_GPUS;
		}
		for (int i = 0; i < NTASKS; i++) {
			saturn_snap_job_t *j;

			if (tk[i].state < 0)
				continue; /* done */
			j = saturn_snapshot_add_job(s);
			j->job_id = 100 + (uint32_t)i;
			j->array_job_id = 100;
			j->task_id = i;
			j->uid = 1000;
			snprintf(j->batch, sizeof(j->batch), "bench");
			j->req_gpus = 1;
			j->submit_time = T0;
			j->state = tk[i].state;
			j->node = -1;
			j->batches_left = j->batches_done = -1;
			if (tk[i].state == SATURN_SNAP_RUNNING) {
				double spb = true_spb(truth, i, tk[i].k);
				double every = mixed ? MIXED_REPORT_BATCHES * spb : REPORT_S;
				double upd = tk[i].start + floor((t - tk[i].start) / every + 1e-9) * every;

				j->start_time = tk[i].start;
				j->node = tk[i].node;
				j->gpu_mask = tk[i].mask;
				j->gpus = tk[i].gpus;
				snprintf(j->technique, sizeof(j->technique), "%s",
					 technique_of(i / PER_MODEL, tk[i].k));
				if (upd > tk[i].start) { /* a progress file */
					double dn = (upd - tk[i].start) / spb;

					j->batches_done = dn;
					j->batches_left = batches_of(i / PER_MODEL) > dn
								  ? batches_of(i / PER_MODEL) - dn
								  : 0;
					j->progress_spb = spb;
					j->progress_updated = upd;
				}
			}
		}
		in.snap = s;
		in.profiles = &ps;
		in.cfg = &cfg;
		if (saturn_cycle_run(&in, &st, &out) < 0) {
			for (int l = 0; l < out.nlog; l++)
				fprintf(stderr, "feedback-bench: %s\n", out.log[l].text);
			saturn_cycle_out_free(&out);
			goto fail;
		}
		if (verbose)
			for (int l = 0; l < out.nlog; l++)
				fprintf(stderr, "  t=%.1f fb=%d %s\n", t - T0, use_feedback,
					out.log[l].text);
		*nplans += out.kind == SATURN_CYCLE_NEW;
		/* start what the cycle releases, on free GPUs of its node */
		for (int q = 0; q < out.nd; q++) {
			const saturn_decision_t *d = &out.d[q];
			int i = s->jobs[d->job].task_id, n = saturn_snapshot_node_index(s, d->node);
			uint64_t busy;

			if (!d->release || n < 0)
				continue;
			busy = busy_mask(tk, n);
			tk[i].state = SATURN_SNAP_RUNNING;
			tk[i].node = n;
			tk[i].gpus = d->gpus;
			tk[i].mask = 0;
			for (int g = 0, got = 0; g < NODE_GPUS && got < d->gpus; g++)
				if (!(busy >> g & 1)) {
					tk[i].mask |= 1ULL << g;
					got++;
				}
			for (int k = 0; k < NCOUNTS; k++)
				if (counts[k] == d->gpus)
					tk[i].k = k;
			tk[i].start = t;
			tk[i].end = t + batches_of(i / PER_MODEL) * true_spb(truth, i, tk[i].k);
			if (verbose)
				fprintf(stderr, "  t=%.1f start task %d on n%d x%d\n", t - T0, i, n + 1,
					d->gpus);
		}
		/* the next event: a task ends (truly), or the cycle is due again
		 * (a planned start; at once: the plugin's 0.5 s between cycles) */
		if (out.next_due_s >= 0)
			next = t + (out.next_due_s > 0.5 ? out.next_due_s : 0.5);
		saturn_cycle_out_free(&out);
		for (int i = 0; i < NTASKS; i++)
			if (tk[i].state == SATURN_SNAP_RUNNING && tk[i].end < next)
				next = tk[i].end;
		if (!isfinite(next)) {
			fprintf(stderr, "feedback-bench: no next event with %d task(s) left\n",
				NTASKS - done);
			goto fail;
		}
		t = next;
		for (int i = 0; i < NTASKS; i++)
			if (tk[i].state == SATURN_SNAP_RUNNING && tk[i].end <= t) {
				tk[i].state = -1;
				done++;
				if (tk[i].end > last_end)
					last_end = tk[i].end;
			}
	}
	saturn_cycle_state_free(&st);
	saturn_profset_free(&ps);
	saturn_sched_settings_free(&cfg);
	saturn_snapshot_destroy(s);
	return done == NTASKS ? last_end - T0 : -1;
fail:
	saturn_cycle_state_free(&st);
	saturn_profset_free(&ps);
	saturn_sched_settings_free(&cfg);
	saturn_snapshot_destroy(s);
	return -1;
}

/* The best uniform request at the true speeds, first-come-first-served. */
static double uniform(const saturn_profile_t *truth_pr, int *best_g)
{
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t b;
	saturn_error_t err = {{0}};
	double best = INFINITY;

	for (int n = 0; n < NODES; n++) {
		saturn_snap_node_t *nd = saturn_snapshot_add_node(s);

		snprintf(nd->name, sizeof(nd->name), "n%d", n + 1);
		nd->gpus = NODE_GPUS;
	}
	for (int i = 0; i < NTASKS; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);

		j->job_id = 100 + (uint32_t)i;
		j->array_job_id = 100;
		j->task_id = i;
		j->uid = 1000;
		snprintf(j->batch, sizeof(j->batch), "bench");
		j->state = SATURN_SNAP_HELD;
	}
	s->now = T0;
	if (saturn_sched_build(s, lookup, (void *)truth_pr, &b, &err) == 0) {
		for (int k = 0; k < NCOUNTS; k++) {
			saturn_plan_t *p = saturn_planner_baseline(b.problem, counts[k], &err);

			if (p && p->makespan_s < best) {
				best = p->makespan_s;
				*best_g = counts[k];
			}
			saturn_plan_destroy(p);
		}
		saturn_sched_build_free(&b);
	}
	saturn_snapshot_destroy(s);
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double c[256];

	memcpy(c, v, sizeof(double) * (size_t)n);
	qsort(c, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

static void summary(const char *name, double *v, double *floor_v, int n)
{
	double lo = INFINITY, hi = 0, r[256];

	for (int i = 0; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
		r[i] = v[i] / floor_v[i];
	}
	qsort(r, (size_t)n, sizeof(double), cmp_double);
	printf("%-10s median %7.0f s  spread %7.0f .. %7.0f s  median / clairvoyant %.3f (%.3f .. %.3f)\n",
	       name, median(v, n), lo, hi, median(r, n), r[0], r[n - 1]);
}

/* "mixed": the slurm-bench sweep, variants exact and true, feedback off and
 * on, against the clairvoyant replay and the best uniform request. */
static int mixed_main(double budget, int nseeds)
{
	double prof[NMODELS][NCOUNTS], truth[NMODELS][NCOUNTS];
	saturn_profile_t *pp, *tp;

	mixed = 1;
	PER_MODEL = 4;
	printf("feedback-bench %s: the sweep of tests/bench/slurm-bench.sh (16 tasks, %.0f batches, progress every %.0f batches),\n"
	       "no Slurm latency; planner budget %.2f s per plan, min_gain %.0f %%\n\n",
	       scaling ? "scaling" : "mixed", batches_of(0), MIXED_REPORT_BATCHES, budget,
	       100 * MIN_GAIN);
	printf("%-6s %9s %9s %9s %9s  %s\n", "variant", "none", "feedback", "clairv.", "uniform",
	       "plans none/fb/clairv.; feedback / uniform, / clairv.");
	for (int v = 0; v < 2; v++) {
		double mk[3];
		int np[3], g = 0;

		for (int m = 0; m < NMODELS; m++)
			for (int k = 0; k < NCOUNTS; k++) {
				double spb = scaling ? scaling_spb[m][k] : mixed_spb[m][k];

				prof[m][k] = spb;
				truth[m][k] = spb * (v ? (scaling ? scaling_factor[m] : mixed_factor[m]) : 1);
			}
		pp = make_profile(prof);
		tp = make_profile(truth);
		if (!pp || !tp)
			return 1;
		for (int sd = 1; sd <= nseeds; sd++) {
			mk[0] = replay(pp, truth, 0, budget, (unsigned)sd, &np[0]);
			mk[1] = replay(pp, truth, 1, budget, (unsigned)sd, &np[1]);
			mk[2] = replay(tp, truth, 0, budget, (unsigned)sd, &np[2]);
			double un = uniform(tp, &g);

			printf("%-7s %8.1f %9.1f %9.1f %9.1f  %d/%d/%d; %.3f (gpu:%d), %.3f (seed %d)\n",
			       v ? "true" : "exact", mk[0], mk[1], mk[2], un, np[0], np[1], np[2],
			       mk[1] / un, g, mk[1] / mk[2], sd);
			fflush(stdout);
		}
		saturn_profile_destroy(pp);
		saturn_profile_destroy(tp);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "mixed") == 0 || strcmp(argv[1], "scaling") == 0)) {
		scaling = strcmp(argv[1], "scaling") == 0;
		verbose = getenv("SATURN_BENCH_VERBOSE") && atoi(getenv("SATURN_BENCH_VERBOSE")) > 0;
		return mixed_main(argc > 2 ? atof(argv[2]) : 2.0, argc > 3 ? atoi(argv[3]) : 1);
	}

	int nseeds = argc > 1 ? atoi(argv[1]) : 8, first = argc > 3 ? atoi(argv[3]) : 1;
	double budget = argc > 2 ? atof(argv[2]) : 0.3;
	double flo = argc > 4 ? atof(argv[4]) : 0.7, fhi = argc > 5 ? atof(argv[5]) : 1.5;

	PER_MODEL = argc > 6 ? atoi(argv[6]) : 4;
	double v_none[256], v_fb[256], v_cl[256], v_un[256];
	int n = 0;

	verbose = getenv("SATURN_BENCH_VERBOSE") && atoi(getenv("SATURN_BENCH_VERBOSE")) > 0;
	if (nseeds < 1 || nseeds > 256 || !(budget > 0) || !(flo > 0) || !(fhi >= flo) || fhi > 10 ||
	    PER_MODEL < 1 || PER_MODEL > MAX_PER_MODEL) {
		fprintf(stderr, "usage: feedback-bench [seeds=8 (1..256)] [budget_s=0.3] [first_seed=1] [lo=0.7] [hi=1.5] [per_model=4 (1..16)]\n");
		return 2;
	}
	printf("feedback-bench: %d tasks (%d models x %d), %d nodes x %d GPUs, true speed = profile x [%.2f, %.2f] per model x [0.9, 1.1] per GPU count;\n"
	       "progress every %.0f s, re-plan at each end and planned start, min_gain %.0f %%, planner budget %.2f s per plan\n\n",
	       NTASKS, NMODELS, PER_MODEL, NODES, NODE_GPUS, flo, fhi, REPORT_S, 100 * MIN_GAIN, budget);
	printf("%4s  %-23s  %9s %9s %9s %9s  %5s  %s\n", "seed", "true/profile per model", "none",
	       "feedback", "clairv.", "uniform", "fb/no", "plans none/fb/clairv.");
	for (int sd = first; sd < first + nseeds; sd++) {
		double prof[NMODELS][NCOUNTS], truth[NMODELS][NCOUNTS], f[NMODELS];
		saturn_profile_t *pp, *tp;
		int np[3], g = 0;
		char fs[64];

		rng_state = 0x9E3779B97F4A7C15ULL * (unsigned long long)sd + 1;
		for (int m = 0; m < NMODELS; m++) {
			f[m] = flo + (fhi - flo) * urand();
			for (int k = 0; k < NCOUNTS; k++) {
				prof[m][k] = profile_spb(m, counts[k]);
				truth[m][k] = prof[m][k] * f[m] * (0.9 + 0.2 * urand());
			}
		}
		snprintf(fs, sizeof(fs), "%.2f %.2f %.2f %.2f", f[0], f[1], f[2], f[3]);
		pp = make_profile(prof);
		tp = make_profile(truth);
		if (!pp || !tp)
			return 1;
		v_none[n] = replay(pp, truth, 0, budget, (unsigned)sd, &np[0]);
		v_fb[n] = replay(pp, truth, 1, budget, (unsigned)sd, &np[1]);
		v_cl[n] = replay(tp, truth, 0, budget, (unsigned)sd, &np[2]);
		v_un[n] = uniform(tp, &g);
		saturn_profile_destroy(pp);
		saturn_profile_destroy(tp);
		if (v_none[n] < 0 || v_fb[n] < 0 || v_cl[n] < 0 || !isfinite(v_un[n]))
			return 1;
		printf("%4d  %-23s  %9.0f %9.0f %9.0f %9.0f  %5.3f  %d/%d/%d (uniform best: gpu:%d)\n", sd,
		       fs, v_none[n], v_fb[n], v_cl[n], v_un[n], v_fb[n] / v_none[n], np[0], np[1],
		       np[2], g);
		fflush(stdout);
		n++;
	}
	printf("\n%d seeds:\n", n);
	summary("none", v_none, v_cl, n);
	summary("feedback", v_fb, v_cl, n);
	summary("clairv.", v_cl, v_cl, n);
	summary("uniform", v_un, v_cl, n);
	{
		double r[256];

		for (int i = 0; i < n; i++)
			r[i] = v_fb[i] / v_none[i];
		printf("feedback / none: median %.3f\n", median(r, n));
	}
	return 0;
}
