/* saturn-bench.c - planner benchmark on synthetic fine-tuning batches.
 *
 * Instances come from an analytic cost model (tests/bench/README.md has the
 * formulas and constants): sweeps of GPT-2-XL-like (1.5 B parameters) and
 * GPT-J-6B-like (6 B) fine-tuning jobs over batch sizes and learning rates,
 * each job with options ddp / fsdp / pipeline / offload x 1, 2, 4, 8 GPUs
 * where they fit in memory. Families:
 *   sweep1   8-32 jobs on 1 node x 8 GPUs
 *   sweep2   16-32 jobs on 2 nodes x 8 GPUs
 *   multi    24-128 jobs on 2-4 nodes x 8 GPUs
 *   large    64-128 jobs on 4 nodes x 8 GPUs
 *   classes  64-128 jobs on 2 NVLink + 2 PCIe nodes x 8 GPUs (options per
 *            class: collective bandwidth differs)
 * and families the planner was never tuned on ("unseen", marked U in the
 * summary):
 *   mix      64 jobs on 4 nodes x 8 GPUs: a random mix of five model
 *            sizes (0.35-6 B) with a wide runtime spread (samples
 *            log-uniform over 100x)
 *   mix8     128 jobs on 8 nodes x 8 GPUs, the same mix
 *   twonode  32-64 jobs on 4 nodes x 8 GPUs: the mix plus 40 B models
 *            that need two nodes; every model may also span 2 or 4 nodes
 *            (inter-node bandwidth BW_IB), the 40 B ones only that way
 * and families built from measured speeds (bench_real.h; "R" in the
 * summary): Gavel's K80 / P100 / V100 throughputs at 1-8 GPUs on 2-11
 * nodes of several types, with and without arrival times, and one family
 * of V100 nodes only (the same data, one type). Their target is on the
 * planner's best bound (mk/lb), and their baseline also counts untyped
 * and typed uniform requests placed by Slurm's rule (rt_uniform()).
 * Per instance it prints makespan / dual bound, makespan / the planner's
 * best lower bound, makespan / the best current-practice baseline (fixed
 * 1, 2, 4 or 8 GPUs, FCFS), solve time, method and status; then mean, min
 * and max per family and how many runs.
 *
 * Usage: saturn-bench [--time-limit S] [--runs N] [--family NAME]
 *                     [--seed N] [--quiet] [--warm-stop R]
 *                     [--data-dir DIR] [--write-problems DIR] [--evals N]
 *
 * --data-dir: where the real-data families' tables are (default: the
 * source tree's tests/bench/data). --write-problems: each instance is also
 * written there as saturn-problem JSON (FAMILY-RUN.json), for `saturn plan`.
 * --evals N: the annealing stops after N decodes (opts.max_evals), so that
 * runs compare at equal effort whatever the machine's load; give a time
 * limit long enough not to cut it.
 *
 * --warm-stop R (re-planning, as sched/saturn does every cycle): per
 * instance, a first solve gives the "previous" plan; then the same problem
 * is solved again warm-started from it, with opts.stop_ratio off and with
 * stop_ratio = R, and once cold (no warm plan) with stop_ratio = R. Each
 * solve gets the time limit (default 2 s, saturn_solver_time's default).
 * Prints solve time and makespan / the best lower bound of
 * saturn_planner_bounds() (the same bound for every column).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats.h"
#include "model.h"
#include "planner.h"

#include "bench_model.h"
#include "bench_real.h"

static const model_spec_t models[] = {{"gpt2xl", 1.5e9}, {"gptj", 6.0e9}};
/* The unseen families' mix; the last one needs two nodes (16 x P bytes of
 * state over 8 GPUs is past 85% of 80 GB). */
static const model_spec_t mix_models[] = {
	{"gpt2m", 0.35e9}, {"gpt2l", 0.77e9}, {"gpt2xl", 1.5e9},
	{"neo27", 2.7e9},  {"gptj", 6.0e9},   {"big40", 40e9}};
/* Bus bandwidth of a collective that crosses nodes: one 200 Gb/s NIC per
 * node, bytes/s. */
#define BW_IB 25e9
static const double lrs[] = {1e-5, 3e-5, 1e-4, 3e-4};

/* --- instances ------------------------------------------------------------ */

static void add_node(saturn_problem_t *p, const char *name, int gpus,
		     const char *klass)
{
	saturn_node_t n = {0};

	n.name = xstrdup(name);
	n.gpus = gpus;
	n.klass = klass ? xstrdup(klass) : NULL;
	if (saturn_problem_add_node(p, &n) < 0)
		exit(2);
}

static void add_option(saturn_task_t *t, int tech, int g, double spb,
		       const char *klass)
{
	saturn_option_t *o = &t->options[t->noptions++];

	o->technique = xstrdup(tech_names[tech]);
	o->gpus = g;
	o->sec_per_batch = spb;
	o->klass = klass ? xstrdup(klass) : NULL;
}

/* One fine-tuning job from the sweep grid. two_classes: options per class
 * (NVLink / PCIe bandwidth) for multi-GPU options. */
static void add_job(saturn_problem_t *p, int idx, int two_classes)
{
	saturn_task_t t = {0};
	const model_spec_t *m = &models[irand(2)];
	int B = batch_sizes[irand(4)];
	double lr = lrs[irand(4)];
	double samples = 4000 + 16000 * unif();
	int epochs = 1 + irand(3);
	char id[96];

	snprintf(id, sizeof(id), "%s-bs%d-lr%g-%d", m->name, B, lr, idx);
	t.id = xstrdup(id);
	t.batches = ceil(samples * epochs / B);
	t.options = calloc(2 * NTECH * 4, sizeof(*t.options));
	if (!t.options)
		exit(2);
	for (int tech = 0; tech < NTECH; tech++)
		for (int g = 1; g <= 8; g *= 2) {
			if (g == 1 || !two_classes) {
				double s = sec_per_batch(m->params, B, tech, g,
							 BW_NVL);

				if (s > 0)
					add_option(&t, tech, g, s, NULL);
				continue;
			}
			double s1 = sec_per_batch(m->params, B, tech, g, BW_NVL);
			double s2 = sec_per_batch(m->params, B, tech, g, BW_PCIE);

			if (s1 > 0)
				add_option(&t, tech, g, s1, "nvl");
			if (s2 > 0)
				add_option(&t, tech, g, s2, "pcie");
		}
	if (saturn_problem_add_task(p, &t) < 0)
		exit(2);
}

/* One job of the unseen families: a model of the mix (big: may be the 40 B
 * one), samples log-uniform in [500, 50000], options on one node and, with
 * multinode, on 2 and 4 whole nodes of 8 GPUs or 4 nodes x 4 GPUs (the
 * collective's bandwidth then the inter-node link's). */
static void add_mix_job(saturn_problem_t *p, int idx, int multinode)
{
	saturn_task_t t = {0};
	int nm = multinode ? 6 : 5;
	const model_spec_t *m = &mix_models[irand(nm)];
	int B = batch_sizes[irand(4)];
	double samples = 500 * pow(100, unif());
	int epochs = 1 + irand(3);
	static const int gang[][2] = {{8, 2}, {8, 4}, {4, 4}};
	char id[96];

	if (multinode && m->params > 10e9 && irand(2))
		m = &mix_models[irand(5)]; /* about 1 in 12 jobs is 40 B */
	snprintf(id, sizeof(id), "%s-bs%d-%d", m->name, B, idx);
	t.id = xstrdup(id);
	t.batches = ceil(samples * epochs / B);
	t.options = calloc(NTECH * 4 + NTECH * 3, sizeof(*t.options));
	if (!t.options)
		exit(2);
	for (int tech = 0; tech < NTECH; tech++) {
		for (int g = 1; g <= 8; g *= 2) {
			double s = sec_per_batch(m->params, B, tech, g, BW_NVL);

			if (s > 0)
				add_option(&t, tech, g, s, NULL);
		}
		for (int k = 0; multinode && k < 3; k++) {
			int g = gang[k][0], n = gang[k][1];
			double s = sec_per_batch(m->params, B, tech, g * n,
						 BW_IB);

			if (s > 0) {
				add_option(&t, tech, g, s, NULL);
				t.options[t.noptions - 1].nodes = n;
			}
		}
	}
	if (saturn_problem_add_task(p, &t) < 0)
		exit(2);
}

typedef struct family {
	const char *name;
	int min_jobs, max_jobs;
	int min_nodes, max_nodes;
	int two_classes;
	double target; /* makespan / dual bound */
	int mix;       /* 0: the sweep grid; 1: the mix; 2: the mix with
			* multi-node options (unseen families) */
	const rt_family_t *real; /* measured speeds (target on mk/lb) */
} family_t;

/* Gavel's table (tests/bench/data/README.md): 8-GPU servers except the
 * 4-GPU P100 ones of the 11-node cluster. */
#define GAVEL "gavel-throughputs.csv", "v100"
static const rt_family_t gavel2 = {GAVEL, 2, {"p100", "v100"}, {1, 1}, {8, 8}, 0};
static const rt_family_t gavel3 = {GAVEL, 3, {"k80", "p100", "v100"}, {1, 1, 1}, {8, 8, 8}, 0};
static const rt_family_t gavel6 = {GAVEL, 3, {"k80", "p100", "v100"}, {2, 2, 2}, {8, 8, 8}, 0};
static const rt_family_t gavel11 = {GAVEL, 3, {"k80", "p100", "v100"}, {4, 4, 3}, {8, 4, 8}, 0};
static const rt_family_t gavel6r = {GAVEL, 3, {"k80", "p100", "v100"}, {2, 2, 2}, {8, 8, 8}, 1};
static const rt_family_t gavel11r = {GAVEL, 3, {"k80", "p100", "v100"}, {4, 4, 3}, {8, 4, 8}, 1};
static const rt_family_t gavelv = {GAVEL, 1, {"v100"}, {2}, {8}, 0};

static const family_t families[] = {
	{"sweep1", 8, 32, 1, 1, 0, 1.05, 0, NULL},
	{"sweep2", 16, 32, 2, 2, 0, 1.05, 0, NULL},
	{"multi", 24, 128, 2, 4, 0, 0, 0, NULL},
	{"large", 64, 128, 4, 4, 0, 1.02, 0, NULL},
	{"classes", 64, 128, 4, 4, 1, 1.05, 0, NULL},
	{"mix", 64, 64, 4, 4, 0, 0, 1, NULL},
	{"mix8", 128, 128, 8, 8, 0, 0, 1, NULL},
	{"twonode", 32, 64, 4, 4, 0, 0, 2, NULL},
	{"gavel2", 24, 64, 2, 2, 0, 1.03, 0, &gavel2},
	{"gavel3", 24, 64, 3, 3, 0, 1.03, 0, &gavel3},
	{"gavel6", 48, 128, 6, 6, 0, 1.03, 0, &gavel6},
	{"gavel11", 96, 160, 11, 11, 0, 1.03, 0, &gavel11},
	{"gavel6r", 48, 128, 6, 6, 0, 1.03, 0, &gavel6r},
	{"gavel11r", 96, 160, 11, 11, 0, 1.03, 0, &gavel11r},
	{"gavelv", 32, 96, 2, 2, 0, 1.03, 0, &gavelv},
};

static const char *data_dir = BENCH_DATA_DIR;
static const char *write_dir; /* --write-problems */
static unsigned long max_evals; /* --evals */

/* --write-problems: the instance as DIR/FAMILY-RUN.json. */
static void write_problem(const saturn_problem_t *p, const char *family, int run)
{
	char path[4096], *js = saturn_problem_to_json(p);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%d.json", write_dir, family, run);
	f = fopen(path, "w");
	if (!js || !f || fputs(js, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "saturn-bench: cannot write %s\n", path);
		exit(2);
	}
	free(js);
}
/* The measurement tables loaded so far (by file name). */
static struct {
	const char *file;
	rt_data_t *d;
} tables[4];

static const rt_data_t *real_table(const char *file)
{
	char path[4096];
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]) && tables[i].file; i++)
		if (!strcmp(tables[i].file, file))
			return tables[i].d;
	if (i == sizeof(tables) / sizeof(tables[0]))
		exit(2);
	snprintf(path, sizeof(path), "%s/%s", data_dir, file);
	tables[i].d = xcalloc(1, sizeof(rt_data_t));
	if (rt_load(tables[i].d, path) < 0)
		exit(2);
	tables[i].file = file;
	return tables[i].d;
}

/* A real-data instance of n tasks: the problem (every option) and, into
 * *base and what, its best uniform request. */
static saturn_problem_t *real_instance(const family_t *f, int n, double *base, char *what,
				       size_t wlen)
{
	const rt_data_t *d = real_table(f->real->file);
	rt_job_t *jobs = xcalloc((size_t)n, sizeof(*jobs));
	saturn_problem_t *p;

	if (rt_draw(d, f->real, n, jobs) < 0) {
		fprintf(stderr, "saturn-bench: %s: types missing from %s\n", f->name, f->real->file);
		exit(2);
	}
	p = rt_problem(d, f->real, jobs, n, 0, -1);
	*base = rt_uniform(d, f->real, jobs, n, p, what, wlen);
	free(jobs);
	return p;
}

/* Instance `run` of `runs` of family f; a real-data family's best
 * uniform request into *base and what (INFINITY and "" otherwise). */
static saturn_problem_t *make_instance(const family_t *f, int run, int runs,
				       int *njobs, int *nnodes, double *base,
				       char *what, size_t wlen)
{
	saturn_problem_t *p;
	saturn_error_t err = {{0}};
	int span = f->max_jobs - f->min_jobs;
	int n = f->min_jobs + (runs > 1 ? span * run / (runs - 1) : span);
	int k;

	*base = INFINITY;
	what[0] = 0;
	if (f->real) {
		p = real_instance(f, n, base, what, wlen);
		*njobs = n;
		*nnodes = p->nnodes;
		return p;
	}
	p = saturn_problem_create();
	k = f->min_nodes + irand(f->max_nodes - f->min_nodes + 1);
	if (!p)
		exit(2);
	for (int i = 0; i < k; i++) {
		char name[16];

		snprintf(name, sizeof(name), "node%d", i);
		add_node(p, name, 8,
			 f->two_classes ? (i < k / 2 ? "nvl" : "pcie") : NULL);
	}
	for (int i = 0; i < n; i++)
		if (f->mix)
			add_mix_job(p, i, f->mix == 2);
		else
			add_job(p, i, f->two_classes);
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "saturn-bench: bad instance: %s\n", err.text);
		exit(2);
	}
	*njobs = n;
	*nnodes = k;
	return p;
}

/* --- main ----------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: saturn-bench [--time-limit S] [--runs N] "
			"[--family NAME] [--seed N] [--quiet] "
			"[--warm-stop R] [--data-dir DIR] "
			"[--write-problems DIR] [--evals N]\n");
	exit(2);
}

static saturn_plan_t *timed_solve(const saturn_problem_t *p,
				  const saturn_planner_opts_t *o, double *dt)
{
	saturn_error_t err = {{0}};
	saturn_plan_t *pl;
	double t0 = now_s();

	pl = saturn_planner_solve(p, o, &err);
	*dt = now_s() - t0;
	if (!pl) {
		fprintf(stderr, "saturn-bench: %s\n", err.text);
		exit(1);
	}
	return pl;
}

/* --warm-stop: see the header comment. */
static int warm_stop_bench(double limit, int runs, const char *only,
			   unsigned long seed, int quiet, double ratio)
{
	if (limit <= 0)
		limit = 2;
	printf("# re-plan warm-started from a previous solve, %.3g s each, "
	       "stop_ratio %.4g; mk/lb = makespan / saturn_planner_bounds() "
	       "best\n", limit, ratio);
	printf("%-8s %4s %5s %5s %8s | %7s %8s | %7s %8s %-9s %-11s | "
	       "%7s %8s\n",
	       "family", "run", "jobs", "nodes", "prev", "off_s", "off",
	       "stop_s", "stop", "method", "status", "cold_s", "cold");
	for (size_t fi = 0; fi < sizeof(families) / sizeof(families[0]); fi++) {
		const family_t *f = &families[fi];
		stat_t sp = {0}, to = {0}, ro = {0}, ts = {0}, rs = {0},
		       tc = {0}, rc = {0};
		int nwarm = 0;

		if ((only && strcmp(only, f->name)) || (!only && f->real))
			continue; /* real-data families: only when named */
		for (int r = 0; r < runs; r++) {
			int nj, nn;
			saturn_problem_t *p;
			saturn_planner_opts_t o;
			saturn_bounds_t b;
			saturn_plan_t *prev, *off, *stop, *cold;
			saturn_error_t err = {{0}};
			double d0, d1, d2, d3, ub;
			char uw[32];

			rng_state = seed_mix(seed * 1000003ULL + fi * 7919ULL +
					     (unsigned)r);
			p = make_instance(f, r, runs, &nj, &nn, &ub, uw, sizeof(uw));
			if (saturn_planner_bounds(p, &b, &err) < 0) {
				fprintf(stderr, "saturn-bench: %s\n", err.text);
				return 1;
			}
			saturn_planner_opts_init(&o);
			o.time_limit_s = limit;
			o.seed = (unsigned)seed;
			prev = timed_solve(p, &o, &d0);
			o.warm = prev;
			off = timed_solve(p, &o, &d1);
			o.stop_ratio = ratio;
			stop = timed_solve(p, &o, &d2);
			o.warm = NULL;
			cold = timed_solve(p, &o, &d3);
			stat_add(&sp, prev->makespan_s / b.best);
			stat_add(&to, d1);
			stat_add(&ro, off->makespan_s / b.best);
			stat_add(&ts, d2);
			stat_add(&rs, stop->makespan_s / b.best);
			stat_add(&tc, d3);
			stat_add(&rc, cold->makespan_s / b.best);
			nwarm += !strcmp(stop->method, "warm");
			if (!quiet)
				printf("%-8s %4d %5d %5d %8.4f | %7.3f %8.4f | "
				       "%7.3f %8.4f %-9s %-11s | %7.3f "
				       "%8.4f\n",
				       f->name, r, nj, nn,
				       prev->makespan_s / b.best, d1,
				       off->makespan_s / b.best, d2,
				       stop->makespan_s / b.best, stop->method,
				       stop->status, d3,
				       cold->makespan_s / b.best);
			fflush(stdout);
			saturn_plan_destroy(prev);
			saturn_plan_destroy(off);
			saturn_plan_destroy(stop);
			saturn_plan_destroy(cold);
			saturn_problem_destroy(p);
		}
		printf("SUMMARY %-8s runs %d  prev mk/lb mean %.4f  off: "
		       "solve_s mean %.3f mk/lb mean %.4f max %.4f  stop: "
		       "solve_s mean %.4f max %.4f mk/lb mean %.4f max %.4f "
		       "warm returned %d/%d  cold stop: solve_s mean %.3f "
		       "max %.4f mk/lb mean %.4f max %.4f\n",
		       f->name, sp.n, sp.sum / sp.n, to.sum / to.n,
		       ro.sum / ro.n, ro.max, ts.sum / ts.n, ts.max,
		       rs.sum / rs.n, rs.max, nwarm, sp.n, tc.sum / tc.n,
		       tc.max, rc.sum / rc.n, rc.max);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	double limit = 0; /* 0: 5 s up to 32 jobs, 10 s above */
	int runs = 6, quiet = 0;
	const char *only = NULL;
	unsigned long seed = 1;
	int missed = 0, worse = 0;
	double warm_stop = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--time-limit") && i + 1 < argc)
			limit = atof(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--family") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!strcmp(argv[i], "--warm-stop") && i + 1 < argc)
			warm_stop = atof(argv[++i]);
		else if (!strcmp(argv[i], "--data-dir") && i + 1 < argc)
			data_dir = argv[++i];
		else if (!strcmp(argv[i], "--write-problems") && i + 1 < argc)
			write_dir = argv[++i];
		else if (!strcmp(argv[i], "--evals") && i + 1 < argc)
			max_evals = strtoul(argv[++i], NULL, 10);
		else
			usage();
	}
	if (runs < 1)
		usage();
	if (warm_stop != 0) {
		if (!(warm_stop >= 1))
			usage();
		return warm_stop_bench(limit, runs, only, seed, quiet,
				       warm_stop);
	}
	printf("%-8s %4s %5s %5s %8s %8s %8s %7s %-9s %-11s %s\n", "family",
	       "run", "jobs", "nodes", "mk/dual", "mk/lb", "mk/base", "solve_s",
	       "method", "status", "base");
	for (size_t fi = 0; fi < sizeof(families) / sizeof(families[0]); fi++) {
		const family_t *f = &families[fi];
		stat_t sd = {0}, sl = {0}, sb = {0}, st = {0};
		double tmax = 0;

		if (only && strcmp(only, f->name))
			continue;
		for (int r = 0; r < runs; r++) {
			int nj, nn;
			saturn_problem_t *p;
			saturn_planner_opts_t o;
			saturn_bounds_t b;
			saturn_plan_t *pl;
			saturn_error_t err = {{0}};
			double base, t0, dt, tr;
			char what[32];

			rng_state = seed_mix(seed * 1000003ULL + fi * 7919ULL +
					     (unsigned)r);
			p = make_instance(f, r, runs, &nj, &nn, &base, what,
					  sizeof(what));
			if (write_dir)
				write_problem(p, f->name, r);
			saturn_planner_opts_init(&o);
			o.time_limit_s = limit > 0 ? limit : nj <= 32 && !f->real ? 5 : 10;
			o.seed = (unsigned)seed;
			o.max_evals = max_evals;
			t0 = now_s();
			pl = saturn_planner_solve(p, &o, &err);
			dt = now_s() - t0;
			if (!pl) {
				fprintf(stderr, "saturn-bench: %s\n", err.text);
				return 1;
			}
			if (saturn_planner_bounds(p, &b, &err) < 0) {
				fprintf(stderr, "saturn-bench: %s\n", err.text);
				return 1;
			}
			/* uniform requests: 1, 2, 4, 8 GPUs, and whole
			 * gangs of 2 and 4 nodes where a family has them
			 * (real-data families: already counted, with the
			 * untyped and typed requests) */
			for (int g = 1; !f->real && g <= (f->mix == 2 ? 32 : 8); g *= 2) {
				saturn_plan_t *x = saturn_planner_baseline(p, g, &err);

				if (!x) {
					fprintf(stderr, "saturn-bench: %s\n",
						err.text);
					return 1;
				}
				if (x->makespan_s < base) {
					base = x->makespan_s;
					snprintf(what, sizeof(what), "lib/%d", g);
				}
				saturn_plan_destroy(x);
			}
			/* the target's ratio: over the dual bound (the
			 * model's families), over the bound the planner
			 * reports (real-data families) */
			tr = pl->makespan_s / (f->real ? pl->lower_bound_s : b.dual);
			stat_add(&sd, pl->makespan_s / b.dual);
			stat_add(&sl, pl->makespan_s / pl->lower_bound_s);
			stat_add(&sb, pl->makespan_s / base);
			stat_add(&st, dt);
			if (tr > tmax)
				tmax = tr;
			if (f->target > 0 && tr > f->target)
				missed++;
			if (pl->makespan_s > base * (1 + 1e-9))
				worse++;
			if (!quiet)
				printf("%-8s %4d %5d %5d %8.4f %8.4f %8.4f %7.2f "
				       "%-9s %-11s %s\n",
				       f->name, r, nj, nn, pl->makespan_s / b.dual,
				       pl->makespan_s / pl->lower_bound_s,
				       pl->makespan_s / base, dt, pl->method,
				       pl->status, what);
			fflush(stdout);
			saturn_plan_destroy(pl);
			saturn_problem_destroy(p);
		}
		printf("SUMMARY %-8s %s runs %d  mk/dual mean %.4f min %.4f max "
		       "%.4f  mk/lb mean %.4f max %.4f  mk/base mean %.4f "
		       "max %.4f  solve_s mean %.2f max %.2f  target %s\n",
		       f->name, f->real ? "R" : f->mix ? "U" : "own", sd.n,
		       sd.sum / sd.n, sd.min, sd.max,
		       sl.sum / sl.n, sl.max, sb.sum / sb.n, sb.max,
		       st.sum / st.n, st.max,
		       f->target > 0 ? (tmax <= f->target ? "met" : "MISSED")
				     : "-");
		fflush(stdout);
	}
	printf("instances over target: %d, worse than baseline: %d\n", missed,
	       worse);
	return 0;
}
