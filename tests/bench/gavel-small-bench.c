/* gavel-small-bench.c - where the gap to the bound lies on real speeds:
 * small batches drawn from a real-data instance, solved exactly.
 *
 * Usage: gavel-small-bench FILE [rounds] [gpus] [tasks] [release_s] [evals]
 *
 * FILE is a saturn-problem written by `saturn-bench --family gavelN
 * --write-problems DIR` (its tasks have options on classes k80, p100 and
 * v100). Each round draws `tasks` of its tasks (default 6; each task's
 * runtime scaled by a factor in [0.5, 1.5)), keeps their options of at most
 * `gpus` GPUs (default 2), and puts them on three nodes, one per class,
 * of `gpus` GPUs each. Half of the tasks are released at a random time in
 * [0, release_s) (default 0: none). The optimum is found by enumeration:
 * every order of the tasks and every option (its class included; one node
 * per class), each task placed at its earliest start on its class's node
 * (which covers every plan: placed in the order of its starts, a plan's
 * tasks each start no later than in that plan). Then the planner's bound
 * (saturn_planner_bounds()) and its plan (saturn_planner_solve(), seed 1,
 * `evals` annealing decodes, default 20000) are compared with it.
 *
 * Prints per round the optimum, the bound and the plan, and the mean and
 * largest optimum / bound (how loose the bound is) and plan / optimum (how
 * far the search is from the best plan). doc/benchmarks.md.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "model.h"
#include "planner.h"

#define MAXT 7
#define MAXO 12
#define NCLS 3

static const char *cls[NCLS] = {"k80", "p100", "v100"};

typedef struct small {
	int nt, gpus;
	int nopt[MAXT], ocls[MAXT][MAXO], og[MAXT][MAXO];
	double od[MAXT][MAXO], rel[MAXT];
	/* tasks placed so far, per node */
	int pn[NCLS], pg[NCLS][MAXT];
	double ps[NCLS][MAXT], pe[NCLS][MAXT];
	double best;
} small_t;

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int used_at(const small_t *x, int n, double t)
{
	int u = 0;

	for (int i = 0; i < x->pn[n]; i++)
		if (x->ps[n][i] <= t && t < x->pe[n][i])
			u += x->pg[n][i];
	return u;
}

/* Whether g GPUs of node n are free on [s, s + d): usage only rises at
 * starts, so s and the starts inside suffice. */
static int free_on(const small_t *x, int n, double s, double d, int g)
{
	if (used_at(x, n, s) + g > x->gpus)
		return 0;
	for (int i = 0; i < x->pn[n]; i++)
		if (x->ps[n][i] > s && x->ps[n][i] < s + d && used_at(x, n, x->ps[n][i]) + g > x->gpus)
			return 0;
	return 1;
}

static double earliest(const small_t *x, int n, double r, double d, int g)
{
	double best = INFINITY;

	if (free_on(x, n, r, d, g))
		return r;
	for (int i = 0; i < x->pn[n]; i++)
		if (x->pe[n][i] > r && x->pe[n][i] < best && free_on(x, n, x->pe[n][i], d, g))
			best = x->pe[n][i];
	return best;
}

static void enumerate(small_t *x, int depth, int *used, double mk)
{
	if (mk >= x->best)
		return;
	if (depth == x->nt) {
		x->best = mk;
		return;
	}
	for (int t = 0; t < x->nt; t++) {
		if (used[t])
			continue;
		used[t] = 1;
		for (int o = 0; o < x->nopt[t]; o++) {
			int n = x->ocls[t][o], k = x->pn[n];
			double s = earliest(x, n, x->rel[t], x->od[t][o], x->og[t][o]);

			if (!isfinite(s))
				continue;
			x->ps[n][k] = s;
			x->pe[n][k] = s + x->od[t][o];
			x->pg[n][k] = x->og[t][o];
			x->pn[n]++;
			enumerate(x, depth + 1, used, fmax(mk, s + x->od[t][o]));
			x->pn[n]--;
		}
		used[t] = 0;
	}
}

/* Round r's batch drawn from src into x and p. 0, or -1 with a message. */
static int draw(const saturn_problem_t *src, small_t *x, saturn_problem_t *p, double relmax,
		uint64_t *seed)
{
	saturn_error_t err = {{0}};

	for (int c = 0; c < NCLS; c++) {
		saturn_node_t n = {0};

		n.name = strdup(cls[c]);
		n.klass = strdup(cls[c]);
		n.gpus = x->gpus;
		if (!n.name || !n.klass || saturn_problem_add_node(p, &n) < 0)
			return -1;
	}
	for (int t = 0; t < x->nt; t++) {
		const saturn_task_t *st = &src->tasks[rng(seed) % (uint64_t)src->ntasks];
		double scale = 0.5 + (double)(rng(seed) % 100) / 100.0;
		saturn_task_t tk = {0};
		char id[16];
		int no = 0;

		tk.options = calloc(MAXO, sizeof(*tk.options));
		if (!tk.options)
			return -1;
		for (int k = 0; k < st->noptions && no < MAXO; k++) {
			const saturn_option_t *op = &st->options[k];
			int c = 0;

			while (c < NCLS && (!op->klass || strcmp(cls[c], op->klass)))
				c++;
			if (op->gpus > x->gpus || c == NCLS || saturn_option_nodes(op) > 1)
				continue;
			tk.options[no].technique = strdup(op->technique);
			tk.options[no].gpus = op->gpus;
			tk.options[no].sec_per_batch = op->sec_per_batch * scale;
			tk.options[no].klass = strdup(cls[c]);
			x->ocls[t][no] = c;
			x->og[t][no] = op->gpus;
			x->od[t][no] = st->batches * op->sec_per_batch * scale;
			no++;
		}
		x->nopt[t] = no;
		x->rel[t] = rng(seed) % 2 ? 0 : relmax * (double)(rng(seed) % 100) / 100.0;
		snprintf(id, sizeof(id), "t%d", t);
		tk.id = strdup(id);
		tk.batches = st->batches;
		tk.release_s = x->rel[t];
		tk.noptions = no;
		if (saturn_problem_add_task(p, &tk) < 0)
			return -1;
	}
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "gavel-small-bench: %s\n", err.text);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *src;
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	double relmax = argc > 5 ? atof(argv[5]) : 0;
	unsigned long evals = argc > 6 ? strtoul(argv[6], NULL, 10) : 20000;
	double sb = 0, sp = 0, mb = 0, mp = 0;
	uint64_t seed = 12345;
	small_t x;

	memset(&x, 0, sizeof(x));
	x.gpus = argc > 3 ? atoi(argv[3]) : 2;
	x.nt = argc > 4 ? atoi(argv[4]) : 6;
	if (argc < 2 || rounds < 1 || x.gpus < 1 || x.nt < 1 || x.nt > MAXT) {
		fprintf(stderr, "usage: gavel-small-bench FILE [rounds] [gpus] [tasks <= %d] "
				"[release_s] [evals]\n", MAXT);
		return 2;
	}
	src = saturn_problem_load(argv[1], &err);
	if (!src || src->ntasks < 1) {
		fprintf(stderr, "gavel-small-bench: %s: %s\n", argv[1], src ? "no tasks" : err.text);
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		saturn_problem_t *p = saturn_problem_create();
		saturn_planner_opts_t o;
		saturn_plan_t *pl;
		saturn_bounds_t b;
		int used[MAXT] = {0};

		if (!p || draw(src, &x, p, relmax, &seed) < 0)
			return 1;
		x.best = INFINITY;
		enumerate(&x, 0, used, 0);
		saturn_planner_opts_init(&o);
		o.time_limit_s = 600;
		o.max_evals = evals;
		o.seed = 1;
		pl = saturn_planner_solve(p, &o, &err);
		if (!pl || saturn_planner_bounds(p, &b, &err) < 0) {
			fprintf(stderr, "gavel-small-bench: %s\n", err.text);
			return 1;
		}
		printf("round %2d  optimum %9.1f  bound %9.1f  plan %9.1f  opt/bound %.4f  "
		       "plan/opt %.4f%s\n",
		       r, x.best, b.best, pl->makespan_s, x.best / b.best, pl->makespan_s / x.best,
		       b.best > x.best * (1 + 1e-9) ? "  BOUND ABOVE OPTIMUM" : "");
		sb += x.best / b.best;
		sp += pl->makespan_s / x.best;
		mb = fmax(mb, x.best / b.best);
		mp = fmax(mp, pl->makespan_s / x.best);
		saturn_plan_destroy(pl);
		saturn_problem_destroy(p);
	}
	printf("SUMMARY rounds %d gpus %d tasks %d release %.0f  opt/bound mean %.4f max %.4f  "
	       "plan/opt mean %.4f max %.4f\n",
	       rounds, x.gpus, x.nt, relmax, sb / rounds, mb, sp / rounds, mp);
	saturn_problem_destroy(src);
	return 0;
}
