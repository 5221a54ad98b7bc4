/* measure-bench.c - what re-measuring predicted options before the plan
 * relies on them buys (doc/benchmarks.md, "Profiler"), in simulation with
 * libsaturn only. Per run, a batch of 8-16 tasks (3-6 signatures: emulator
 * models x batch sizes, several tasks per signature) on one NVLink and one
 * PCIe node of 8 GPUs is profiled the way saturn-profile does it (lib/job/sweep.h
 * sweeps per technique and node class, memory-saving parameter candidates
 * below the OOM boundary, noisy "measurements" from lib/job/emulate.c, the rest
 * predicted), and planned (saturn_planner_solve, fixed budget and seed) from
 *   a) the truth (noise-free emulator times of every option),
 *   b) the profile as is,
 *   c) the profile with re-measuring: plan, measure the predicted options the
 *      plan uses (noisy), re-fit each touched technique's other predictions
 *      from its measured counts as profiler/measure.c does, re-plan; at most
 *      8 rounds, until the plan uses no prediction. "all" measures the
 *      options of every task of the plan; "t0" only those of tasks the plan
 *      starts at time 0 (what sched/saturn saw before its first release);
 *      "all" is what sched/saturn's cycle (lib/sched/cycle_measure.c) does. "all+esc" is
 *      "all" with saturn-profile --measure --escalate 15: a measurement more
 *      than 15 % off its prediction adds that technique's other predicted
 *      counts (same candidate, within the round's allocation) to the same
 *      round. sched/saturn passes no --escalate, so it gets the default 15.
 * Every plan is then re-timed with the true durations, keeping each task's
 * node, GPUs and the plan's start order, and its true makespan compared with
 * (a)'s. Optionally, predictions for more than 4 GPUs are scaled by a bias
 * factor (a fit that misses communication cost; re-fitted predictions keep
 * it). Controls: "exh" plans from an exhaustive profile with the same noise,
 * "a2" from the truth with another planner seed (the planner's own spread:
 * its time budget makes runs differ slightly between invocations).
 * Columns: trials = profiling trials of the batch; a/lb = truth plan over
 * its lower bound; X/a = true makespan of plan X over (a)'s; bpred =
 * predicted options plan (b) uses; rnds/extra = measuring rounds and extra
 * trials (esc = of which escalation added); left = predicted options the
 * final plan still uses. Medians are printed for b) and c).
 *   usage: measure-bench [noise=0.05] [runs=10] [budget_s=1] [bias=1]
 *                        [seed=1]
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate.h"
#include "model.h"
#include "planner.h"
#include "sweep.h"
#include "technique.h"

#define NODE_GPUS 8
#define NCLS 2 /* 0 = NVLink, 1 = PCIe */
#define MAX_CAND 3
#define MAX_TECH 8
#define MAX_OPT (MAX_TECH * NODE_GPUS)
#define MAX_SIG 6
#define MAX_TASKS 16
#define MAX_ROUNDS 8
#define ESCALATE_PCT 15.0 /* saturn-profile --escalate's default */

enum { ST_NONE = 0, ST_MEASURED, ST_PREDICTED };

/* One technique x GPU count of a profile. */
struct opt {
	const saturn_technique_t *t;
	int gpus;
	int cand; /* parameter candidate the option was profiled with */
	int micro;
	int status;
	double est;   /* the profile's seconds per batch */
	double truth; /* noise-free */
};

/* The profile of one signature on one node class. */
struct prof {
	const saturn_emu_model_t *m;
	int bs;
	int cls;
	int nopt;
	struct opt opt[MAX_OPT];
	int trials;
};

struct world {
	saturn_emu_hw_t hw[NCLS];
	double ar[NCLS][NODE_GPUS + 1], ag[NCLS][NODE_GPUS + 1];
	saturn_bw_table_t bw[NCLS];
	int nsig;
	struct prof prof[MAX_SIG][NCLS];
	int ntasks;
	int task_sig[MAX_TASKS];
	double task_batches[MAX_TASKS];
};

static const char *const class_name[NCLS] = {"nvlink", "pcie"};
static double noise = 0.05, bias = 1.0;
static unsigned long long rng;

static double unif(void)
{
	unsigned long long z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return ((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
	double u = unif(), v = unif();

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

static double noisy(double t)
{
	double f = 1 + noise * gauss();

	return t * (f < 0.2 ? 0.2 : f);
}

static void *xcalloc(size_t n, size_t s)
{
	void *p = calloc(n ? n : 1, s);

	if (!p) {
		fprintf(stderr, "measure-bench: out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fprintf(stderr, "measure-bench: out of memory\n");
		exit(1);
	}
	return d;
}

/* The emulator's time of t on g GPUs with parameter candidate c; 0 = does
 * not run (OOM or impossible). */
static double emu_time(const struct prof *pf, const saturn_technique_t *t,
		       int g, int c, const struct world *w, double *mem)
{
	char params[512], sig[64];
	saturn_emu_result_t r;

	snprintf(sig, sizeof(sig), "%s/bs%d", pf->m->name, pf->bs);
	if (saturn_technique_candidate(t, g, c, sig, params, sizeof(params),
				       NULL) != 0 ||
	    saturn_emu_eval(pf->m, pf->bs, t->name, g, params, &w->hw[pf->cls],
			    &r, NULL) != 0)
		return 0;
	if (mem)
		*mem = r.mem_mb;
	return r.oom ? 0 : r.sec_per_batch;
}

/* A fitted prediction as the profile shows it (biased above 4 GPUs). */
static double predicted(const saturn_scale_fit_t *fit, int g,
			const saturn_bw_table_t *bw)
{
	return saturn_scale_predict(fit, g, bw) * (g > 4 ? bias : 1.0);
}

/* Drive one sweep of t (candidate c) over [lo, hi] to completion. */
static saturn_sweep_t *run_sweep(struct prof *pf, const saturn_technique_t *t,
				 int c, int lo, int hi, int *micro,
				 const struct world *w)
{
	char params[512];
	saturn_sweep_t *sw;
	int gl[NODE_GPUS], n;

	if (saturn_technique_candidate(t, hi, c, "", params, sizeof(params),
				       NULL) != 0)
		return NULL;
	*micro = (int)saturn_technique_param(params, "micro_batches", 8);
	sw = saturn_sweep_create(saturn_scale_kind(t->name), *micro, lo, hi,
				 &w->bw[pf->cls], 0);
	if (!sw) {
		fprintf(stderr, "measure-bench: cannot create a sweep\n");
		exit(1);
	}
	while ((n = saturn_sweep_next(sw, gl, NODE_GPUS)) > 0)
		for (int i = 0; i < n; i++) {
			double mem = 0, v = emu_time(pf, t, gl[i], c, w, &mem);

			saturn_sweep_report(sw, gl[i],
					    v > 0 ? SATURN_PT_MEASURED
						  : SATURN_PT_OOM,
					    v > 0 ? noisy(v) : 0, mem, NULL);
			pf->trials++;
		}
	return sw;
}

/* Profile one signature on one class as saturn-profile does: per technique
 * a sweep of the default parameters, then the next candidate's below the
 * count from which the previous one fits; each count takes the first
 * candidate that runs. */
static void profile(struct prof *pf, const saturn_techniques_t *reg,
		    const struct world *w)
{
	pf->nopt = 0;
	pf->trials = 0;
	for (int k = 0; k < saturn_techniques_count(reg) && k < MAX_TECH; k++) {
		const saturn_technique_t *t = saturn_techniques_get(reg, k);
		int lo = t->min_gpus,
		    hi = saturn_technique_max_gpus(t, NODE_GPUS);
		saturn_sweep_t *sw[MAX_CAND] = {NULL};
		int micro[MAX_CAND] = {8, 8, 8}, chi = hi;

		if (lo > hi)
			continue;
		for (int c = 0; c < MAX_CAND && chi >= lo; c++) {
			int from;

			if (!(sw[c] =
				  run_sweep(pf, t, c, lo, chi, &micro[c], w)))
				break;
			from = saturn_sweep_feasible_from(sw[c]);
			chi = from ? from - 1 : chi;
		}
		for (int g = lo; g <= hi; g++)
			for (int c = 0; c < MAX_CAND && sw[c]; c++) {
				const saturn_point_t *p =
				    saturn_sweep_point(sw[c], g);
				struct opt *o = &pf->opt[pf->nopt];

				if (!p || (p->state != SATURN_PT_MEASURED &&
					   p->state != SATURN_PT_PREDICTED))
					continue;
				o->t = t;
				o->gpus = g;
				o->cand = c;
				o->micro = micro[c];
				o->status = p->state == SATURN_PT_MEASURED
						? ST_MEASURED
						: ST_PREDICTED;
				o->est =
				    p->sec_per_batch *
				    (o->status == ST_PREDICTED && g > 4 ? bias
									: 1.0);
				o->truth = emu_time(pf, t, g, c, w, NULL);
				if (!(o->truth > 0)) {
					/* predicted where the emulator says
					 * it cannot run: not expected (memory
					 * never grows with g); drop it */
					fprintf(stderr,
						"measure-bench: %s/bs%d %s:%d "
						"predicted but infeasible\n",
						pf->m->name, pf->bs, t->name,
						g);
					continue;
				}
				pf->nopt++;
				break;
			}
		for (int c = 0; c < MAX_CAND; c++)
			saturn_sweep_destroy(sw[c]);
	}
}

/* Measure option o (noisy), as one trial. */
static void measure(struct prof *pf, struct opt *o)
{
	o->status = ST_MEASURED;
	o->est = noisy(o->truth);
	pf->trials++;
}

/* Re-fit the still-predicted options of o's technique and candidate from
 * all their measured counts (profiler/measure.c's refit). */
static void refit(struct prof *pf, const struct opt *o, const struct world *w)
{
	int g[NODE_GPUS + 1], n = 0;
	double t[NODE_GPUS + 1];
	saturn_scale_fit_t fit;

	for (int i = 0; i < pf->nopt; i++) {
		const struct opt *q = &pf->opt[i];

		if (q->t == o->t && q->cand == o->cand &&
		    q->status == ST_MEASURED) {
			g[n] = q->gpus;
			t[n++] = q->est;
		}
	}
	if (saturn_scale_fit(saturn_scale_kind(o->t->name), o->micro, n, g, t,
			     &w->bw[pf->cls], &fit, NULL) != 0)
		return;
	for (int i = 0; i < pf->nopt; i++) {
		struct opt *q = &pf->opt[i];
		double v;

		if (q->t != o->t || q->cand != o->cand ||
		    q->status != ST_PREDICTED)
			continue;
		v = predicted(&fit, q->gpus, &w->bw[pf->cls]);
		if (v > 0 && isfinite(v))
			q->est = v;
	}
}

/* The problem from the profiles (truth: noise-free times): task k has the
 * options of its signature's class-0 profile, then those of class 1. */
static saturn_problem_t *build_problem(const struct world *w, int truth)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};

	if (!p) {
		fprintf(stderr, "measure-bench: out of memory\n");
		exit(1);
	}
	for (int c = 0; c < NCLS; c++) {
		saturn_node_t n = {0};
		char name[32];

		snprintf(name, sizeof(name), "%s0", class_name[c]);
		n.name = xstrdup(name);
		n.gpus = NODE_GPUS;
		n.klass = xstrdup(class_name[c]);
		if (saturn_problem_add_node(p, &n) < 0)
			exit(1);
	}
	for (int k = 0; k < w->ntasks; k++) {
		saturn_task_t t = {0};
		char id[32];

		snprintf(id, sizeof(id), "t%d", k);
		t.id = xstrdup(id);
		t.batches = w->task_batches[k];
		t.options = xcalloc(NCLS * MAX_OPT, sizeof(*t.options));
		for (int c = 0; c < NCLS; c++) {
			const struct prof *pf = &w->prof[w->task_sig[k]][c];

			for (int i = 0; i < pf->nopt; i++) {
				saturn_option_t *o = &t.options[t.noptions++];

				o->technique = xstrdup(pf->opt[i].t->name);
				o->gpus = pf->opt[i].gpus;
				o->sec_per_batch =
				    truth ? pf->opt[i].truth : pf->opt[i].est;
				o->klass = xstrdup(class_name[c]);
			}
		}
		if (saturn_problem_add_task(p, &t) < 0)
			exit(1);
	}
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "measure-bench: bad problem: %s\n", err.text);
		exit(1);
	}
	return p;
}

/* The profile option behind option index oi of task k. */
static struct opt *opt_of(struct world *w, int k, int oi, struct prof **pfp)
{
	for (int c = 0; c < NCLS; c++) {
		struct prof *pf = &w->prof[w->task_sig[k]][c];

		if (oi < pf->nopt) {
			*pfp = pf;
			return &pf->opt[oi];
		}
		oi -= pf->nopt;
	}
	return NULL;
}

static saturn_plan_t *solve(const saturn_problem_t *p, double budget,
			    unsigned seed)
{
	saturn_planner_opts_t o;
	saturn_error_t err = {{0}};
	saturn_plan_t *pl;

	saturn_planner_opts_init(&o);
	o.time_limit_s = budget;
	o.seed = seed;
	if (!(pl = saturn_planner_solve(p, &o, &err))) {
		fprintf(stderr, "measure-bench: planner: %s\n", err.text);
		exit(1);
	}
	return pl;
}

static const saturn_plan_t *sort_plan;

static int by_start(const void *a, const void *b)
{
	const saturn_assign_t *x = &sort_plan->assign[*(const int *)a],
			      *y = &sort_plan->assign[*(const int *)b];

	if (x->start_s != y->start_s)
		return x->start_s < y->start_s ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

/* True makespan of pl: its assignments in start order, each on its node and
 * GPU ids, started as soon as those GPUs are free, with true durations. */
static double true_makespan(struct world *w, const saturn_plan_t *pl)
{
	double free_at[NCLS][NODE_GPUS] = {{0}}, mk = 0;
	int idx[MAX_TASKS];

	for (int i = 0; i < pl->nassign; i++)
		idx[i] = i;
	sort_plan = pl;
	qsort(idx, pl->nassign, sizeof(int), by_start);
	for (int j = 0; j < pl->nassign; j++) {
		const saturn_assign_t *a = &pl->assign[idx[j]];
		struct prof *pf;
		const struct opt *o = opt_of(w, a->task, a->option, &pf);
		double s = 0, e;

		for (int g = 0; g < a->gpus; g++)
			if (free_at[a->node][a->gpu_ids[g]] > s)
				s = free_at[a->node][a->gpu_ids[g]];
		e = s + w->task_batches[a->task] * o->truth;
		for (int g = 0; g < a->gpus; g++)
			free_at[a->node][a->gpu_ids[g]] = e;
		if (e > mk)
			mk = e;
	}
	return mk;
}

/* One measured option of a round: its profile and the prediction it had. */
struct item {
	struct prof *pf;
	struct opt *o;
	double was;
};

/* Plan with re-measuring (t0only: only tasks starting at 0). Each round is
 * one saturn-profile --measure job: the listed predicted options are
 * measured; with esc_pct > 0, a listed one whose measurement misses its
 * prediction by more than esc_pct percent adds its technique's other
 * predicted counts of that profile (same candidate, at most the round's
 * largest listed count: sched/saturn's measuring job asks for that many GPUs)
 * to the same job, as profiler/measure.c's escalate() does (one level: the
 * added ones do not escalate); then every measured option's technique is
 * re-fitted. Returns the final plan; *rounds, *extra and *escx count
 * measuring rounds, trials and the trials escalation added. */
static saturn_plan_t *plan_remeasure(struct world *w, int t0only,
				     double esc_pct, double budget,
				     unsigned seed, int *rounds, int *extra,
				     int *escx)
{
	saturn_plan_t *pl = NULL;
	struct item it[NCLS * MAX_SIG * MAX_OPT];

	*rounds = *extra = *escx = 0;
	for (;;) {
		saturn_problem_t *p = build_problem(w, 0);
		int n = 0, nl, alloc = 0;

		saturn_plan_destroy(pl);
		pl = solve(p, budget, seed);
		saturn_problem_destroy(p);
		if (*rounds == MAX_ROUNDS)
			break;
		for (int i = 0; i < pl->nassign; i++) {
			const saturn_assign_t *a = &pl->assign[i];
			struct prof *pf;
			struct opt *o = opt_of(w, a->task, a->option, &pf);

			if (o->status != ST_PREDICTED ||
			    (t0only && a->start_s > 1e-6))
				continue;
			it[n] = (struct item){pf, o, o->est};
			measure(pf, o);
			n++;
			if (o->gpus > alloc)
				alloc = o->gpus;
		}
		nl = n;
		for (int i = 0; esc_pct > 0 && i < nl; i++) {
			struct prof *pf = it[i].pf;
			const struct opt *o = it[i].o;

			if (!(fabs(o->est / it[i].was - 1) * 100 > esc_pct))
				continue;
			for (int j = 0; j < pf->nopt; j++) {
				struct opt *q = &pf->opt[j];

				if (q->t != o->t || q->cand != o->cand ||
				    q->status != ST_PREDICTED ||
				    q->gpus > alloc)
					continue;
				it[n] = (struct item){pf, q, q->est};
				measure(pf, q);
				n++;
			}
		}
		for (int i = 0; i < n; i++)
			refit(it[i].pf, it[i].o, w);
		if (!n)
			break;
		*extra += n;
		*escx += n - nl;
		++*rounds;
	}
	return pl;
}

/* Every option measured (an exhaustive, equally noisy profile). */
static void measure_all(struct world *w)
{
	for (int q = 0; q < w->nsig; q++)
		for (int c = 0; c < NCLS; c++)
			for (int i = 0; i < w->prof[q][c].nopt; i++) {
				struct opt *o = &w->prof[q][c].opt[i];

				if (o->status == ST_PREDICTED) {
					o->status = ST_MEASURED;
					o->est = noisy(o->truth);
				}
			}
}

/* Predicted options of a plan's tasks. */
static int plan_predicted(struct world *w, const saturn_plan_t *pl)
{
	int n = 0;

	for (int i = 0; i < pl->nassign; i++) {
		struct prof *pf;
		const struct opt *o =
		    opt_of(w, pl->assign[i].task, pl->assign[i].option, &pf);

		n += o->status == ST_PREDICTED;
	}
	return n;
}

struct agg {
	double sum, max, min;
	double *v; /* every value, for the median */
	int n;
};

static void stat_add(struct agg *s, double v)
{
	if (!s->n || v > s->max)
		s->max = v;
	if (!s->n || v < s->min)
		s->min = v;
	s->sum += v;
	if (s->v)
		s->v[s->n] = v;
	s->n++;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(struct agg *s)
{
	qsort(s->v, s->n, sizeof(double), by_value);
	return s->n % 2 ? s->v[s->n / 2]
			: (s->v[s->n / 2 - 1] + s->v[s->n / 2]) / 2;
}

static const char *const models[] = {"gpt2-large", "gpt2-xl",	   "bert-large",
				     "vit-h-14",   "gpt-neo-2.7b", "llama-7b"};
static const int batch_sizes[] = {8, 16, 32};

/* A random batch family from the current rng state. */
static void make_world(struct world *w, const saturn_techniques_t *reg)
{
	int nm = sizeof(models) / sizeof(models[0]);

	memset(w, 0, sizeof(*w));
	for (int c = 0; c < NCLS; c++) {
		saturn_emu_hw_default(&w->hw[c], c == 0);
		for (int g = 2; g <= NODE_GPUS; g++) {
			w->ar[c][g] =
			    saturn_emu_busbw(&w->hw[c], g, SATURN_ALLREDUCE);
			w->ag[c][g] =
			    saturn_emu_busbw(&w->hw[c], g, SATURN_ALLGATHER);
		}
		w->bw[c] = (saturn_bw_table_t){NODE_GPUS, w->ar[c], w->ag[c]};
	}
	w->nsig = 3 + (int)(unif() * 4);
	for (int s = 0; s < w->nsig; s++) {
		const saturn_emu_model_t *m;
		int bs, dup;

		do {
			m = saturn_emu_model_find(models[(int)(unif() * nm)]);
			bs = batch_sizes[(int)(unif() * 3)];
			dup = 0;
			for (int q = 0; q < s; q++)
				dup |= w->prof[q][0].m == m &&
				       w->prof[q][0].bs == bs;
		} while (dup);
		for (int c = 0; c < NCLS; c++) {
			w->prof[s][c].m = m;
			w->prof[s][c].bs = bs;
			w->prof[s][c].cls = c;
			profile(&w->prof[s][c], reg, w);
		}
	}
	w->ntasks = 8 + (int)(unif() * 9);
	for (int k = 0; k < w->ntasks; k++) {
		int s = k < w->nsig ? k : (int)(unif() * w->nsig);
		double samples = 4000 + unif() * 16000,
		       epochs = 1 + (int)(unif() * 3);

		w->task_sig[k] = s;
		w->task_batches[k] = ceil(samples * epochs / w->prof[s][0].bs);
	}
}

int main(int argc, char **argv)
{
	double budget;
	int runs;
	unsigned seed;
	saturn_techniques_t *reg = saturn_techniques_create();
	struct agg rb = {0}, rall = {0}, rt0 = {0}, resc = {0}, xall = {0},
		   xt0 = {0}, xesc = {0}, xee = {0}, tb = {0}, rndall = {0},
		   rndt0 = {0}, rndesc = {0}, fb = {0}, rx = {0}, lb = {0},
		   ra2 = {0};
	struct world *w = xcalloc(1, sizeof(*w));

	noise = argc > 1 ? atof(argv[1]) : 0.05;
	runs = argc > 2 ? atoi(argv[2]) : 10;
	budget = argc > 3 ? atof(argv[3]) : 1.0;
	bias = argc > 4 ? atof(argv[4]) : 1.0;
	seed = argc > 5 ? (unsigned)atoi(argv[5]) : 1;
	if (!reg || runs < 1 || !(budget > 0) || !(bias > 0) || noise < 0) {
		fprintf(stderr, "usage: measure-bench [noise=0.05] [runs=10] "
				"[budget_s=1] [bias=1] [seed=1]\n");
		return 2;
	}
	rb.v = xcalloc((size_t)runs, sizeof(double));
	rall.v = xcalloc((size_t)runs, sizeof(double));
	rt0.v = xcalloc((size_t)runs, sizeof(double));
	resc.v = xcalloc((size_t)runs, sizeof(double));
	printf("measure-bench: noise %.0f%%, bias x%.2f above 4 GPUs, %d runs, "
	       "planner budget %.2f s, seed %u, escalate %.0f%%\n",
	       noise * 100, bias, runs, budget, seed, ESCALATE_PCT);
	printf("%3s %5s %4s %6s %8s %5s | %6s %5s | %6s %4s %5s %4s | %6s %4s "
	       "%5s %4s | %6s %4s %5s %4s %4s | %6s %6s\n",
	       "run", "tasks", "sigs", "trials", "truth_mk", "a/lb", "b/a",
	       "bpred", "all/a", "rnds", "extra", "left", "t0/a", "rnds",
	       "extra", "left", "esc/a", "rnds", "extra", "esc", "left",
	       "exh/a", "a2/a");
	for (int r = 0; r < runs; r++) {
		saturn_problem_t *p;
		saturn_plan_t *pa, *pb, *pall, *pt0, *pesc, *px, *pa2;
		struct world *w0 = xcalloc(1, sizeof(*w0));
		double ma, mb, mall, mt0, mesc, mx, mlb, ma2;
		int trials = 0, nb, ra, ea, r0, e0, re, ee, la, l0, le, xe,
		    dummy;
		unsigned s = seed * 1000u + (unsigned)r;
		unsigned long long rng_all;

		rng = 0x5eed0000ULL + s;
		make_world(w, reg);
		for (int q = 0; q < w->nsig; q++)
			for (int c = 0; c < NCLS; c++)
				trials += w->prof[q][c].trials;
		*w0 = *w;

		p = build_problem(w, 1);
		pa = solve(p, budget, s);
		mlb = pa->makespan_s / pa->lower_bound_s;
		pa2 = solve(p, budget, s + 7919u);
		saturn_problem_destroy(p);
		p = build_problem(w, 0);
		pb = solve(p, budget, s);
		saturn_problem_destroy(p);
		nb = plan_predicted(w, pb);
		rng_all = rng;
		pall = plan_remeasure(w, 0, 0, budget, s, &ra, &ea, &dummy);
		la = plan_predicted(w, pall);
		*w = *w0;
		pt0 = plan_remeasure(w, 1, 0, budget, s, &r0, &e0, &dummy);
		l0 = plan_predicted(w, pt0);
		*w = *w0;
		measure_all(w);
		p = build_problem(w, 0);
		px = solve(p, budget, s);
		saturn_problem_destroy(p);
		*w = *w0;
		/* the same noise draws as "all" (until escalation adds
		 * trials), the other columns' draws unchanged */
		rng = rng_all;
		pesc = plan_remeasure(w, 0, ESCALATE_PCT, budget, s, &re, &ee,
				      &xe);
		le = plan_predicted(w, pesc);
		*w = *w0;

		ma = true_makespan(w, pa);
		mb = true_makespan(w, pb) / ma;
		mall = true_makespan(w, pall) / ma;
		mt0 = true_makespan(w, pt0) / ma;
		mesc = true_makespan(w, pesc) / ma;
		mx = true_makespan(w, px) / ma;
		ma2 = true_makespan(w, pa2) / ma;
		printf(
		    "%3d %5d %4d %6d %8.0f %5.3f | %6.3f %5d | %6.3f %4d %5d "
		    "%4d | %6.3f %4d %5d %4d | %6.3f %4d %5d %4d %4d | %6.3f "
		    "%6.3f\n",
		    r + 1, w->ntasks, w->nsig, trials, ma, mlb, mb, nb, mall,
		    ra, ea, la, mt0, r0, e0, l0, mesc, re, ee, xe, le, mx, ma2);
		fflush(stdout);
		stat_add(&rb, mb);
		stat_add(&rall, mall);
		stat_add(&rt0, mt0);
		stat_add(&resc, mesc);
		stat_add(&xall, 100.0 * ea / trials);
		stat_add(&xt0, 100.0 * e0 / trials);
		stat_add(&xesc, 100.0 * ee / trials);
		stat_add(&xee, 100.0 * xe / trials);
		stat_add(&rndall, ra);
		stat_add(&rndt0, r0);
		stat_add(&rndesc, re);
		stat_add(&tb, trials);
		stat_add(&fb, nb);
		stat_add(&rx, mx);
		stat_add(&lb, mlb);
		stat_add(&ra2, ma2);
		saturn_plan_destroy(pa);
		saturn_plan_destroy(pb);
		saturn_plan_destroy(pall);
		saturn_plan_destroy(pt0);
		saturn_plan_destroy(pesc);
		saturn_plan_destroy(px);
		saturn_plan_destroy(pa2);
		free(w0);
	}
	printf("true makespan / truth-plan makespan: mean [min, max] median\n");
	printf("  b) profile as is:          %.3f [%.3f, %.3f] %.3f   "
	       "(predicted options used: %.1f per plan)\n",
	       rb.sum / rb.n, rb.min, rb.max, median(&rb), fb.sum / fb.n);
	printf("  c) re-measure, all tasks:  %.3f [%.3f, %.3f] %.3f   "
	       "extra trials %.1f%% of profiling [%.1f, %.1f], %.1f rounds\n",
	       rall.sum / rall.n, rall.min, rall.max, median(&rall),
	       xall.sum / xall.n, xall.min, xall.max, rndall.sum / rndall.n);
	printf("  c) re-measure, t=0 tasks:  %.3f [%.3f, %.3f] %.3f   "
	       "extra trials %.1f%% of profiling [%.1f, %.1f], %.1f rounds\n",
	       rt0.sum / rt0.n, rt0.min, rt0.max, median(&rt0), xt0.sum / xt0.n,
	       xt0.min, xt0.max, rndt0.sum / rndt0.n);
	printf("  c) all + escalate %.0f%%:     %.3f [%.3f, %.3f] %.3f   "
	       "extra trials %.1f%% of profiling [%.1f, %.1f] (escalation "
	       "%.1f%%), %.1f rounds\n",
	       ESCALATE_PCT, resc.sum / resc.n, resc.min, resc.max,
	       median(&resc), xesc.sum / xesc.n, xesc.min, xesc.max,
	       xee.sum / xee.n, rndesc.sum / rndesc.n);
	printf("  exhaustive noisy profile:  %.3f [%.3f, %.3f]   "
	       "(every option measured once; truth plan a/lb %.3f)\n",
	       rx.sum / rx.n, rx.min, rx.max, lb.sum / lb.n);
	printf("  truth, another seed:       %.3f [%.3f, %.3f]   "
	       "(the planner's own spread)\n",
	       ra2.sum / ra2.n, ra2.min, ra2.max);
	printf("SUMMARY noise=%.2f bias=%.2f runs=%d: b/a %.3f (max %.3f), "
	       "remeasure-all/a %.3f (max %.3f, +%.1f%% trials), "
	       "remeasure-t0/a %.3f (max %.3f, +%.1f%% trials), "
	       "remeasure-all+esc/a %.3f (max %.3f, +%.1f%% trials)\n",
	       noise, bias, runs, rb.sum / rb.n, rb.max, rall.sum / rall.n,
	       rall.max, xall.sum / xall.n, rt0.sum / rt0.n, rt0.max,
	       xt0.sum / xt0.n, resc.sum / resc.n, resc.max, xesc.sum / xesc.n);
	free(rb.v);
	free(rall.v);
	free(rt0.v);
	free(resc.v);
	free(w);
	saturn_techniques_destroy(reg);
	return 0;
}
