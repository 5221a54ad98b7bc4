/* heuristics.c - constructive heuristics: a plan in milliseconds.
 *
 * H1: for candidate makespans T (multiples of the lower bound), give every
 *     task its minimum-area option that ends by T and list-schedule with
 *     a few priority rules.
 * H2: let the list scheduler choose each task's option by earliest finish
 *     among options with area <= alpha x the task's minimum area.
 * H3: MRT-style two shelves: a knapsack over the GPUs decides which tasks
 *     take an option ending by T (shelf 1) and which one ending by T/2
 *     (shelf 2, cheaper); shelf 1 is listed first.
 * All of them decode through spase_decode(); the best (then the smallest
 * tie-break cost) is kept. The first candidate is always decoded, even when
 * the clock has run out, so there is always a plan.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

/* The largest knapsack table of H3 (items x (GPUs + 1) bytes). */
#define H3_TAKE_MAX 4000000

enum { RULE_DUR, RULE_AREA, RULE_WIDE, RULE_RELEASE, RULE_MINAREA_DUR,
       NRULES };

typedef struct key_ctx {
	const double *k1, *k2;
} key_ctx_t;

/* Descending on k1, then on k2, then ascending task index. */
static int key_cmp(const void *a, const void *b, void *arg)
{
	const key_ctx_t *c = arg;
	int x = *(const int *)a, y = *(const int *)b;

	if (c->k1[x] != c->k1[y])
		return c->k1[x] > c->k1[y] ? -1 : 1;
	if (c->k2[x] != c->k2[y])
		return c->k2[x] > c->k2[y] ? -1 : 1;
	return x - y;
}

static void sort_by_keys(const spase_inst_t *in, int *order, double *k1,
			 double *k2)
{
	key_ctx_t c = {k1, k2};

	for (int i = 0; i < in->nt; i++)
		order[i] = i;
	qsort_r(order, (size_t)in->nt, sizeof(int), key_cmp, &c);
}

/* Fill k1/k2 for a rule; opt < 0 entries use the minimum-area option. */
static void rule_keys(const spase_inst_t *in, const spase_sol_t *sol,
		      int rule, double *k1, double *k2)
{
	for (int t = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];
		int o = sol->opt[t] >= 0 ? sol->opt[t] : tk->min_area_opt;
		const spase_opt_t *op = &tk->opt[o];

		switch (rule) {
		case RULE_AREA:
			k1[t] = op->area;
			k2[t] = op->dur;
			break;
		case RULE_WIDE:
			k1[t] = op->width;
			k2[t] = op->dur;
			break;
		case RULE_RELEASE:
			k1[t] = -tk->release;
			k2[t] = op->dur;
			break;
		case RULE_MINAREA_DUR:
			k1[t] = tk->opt[tk->min_area_opt].dur;
			k2[t] = tk->opt[tk->min_area_opt].area;
			break;
		default:
			k1[t] = op->dur + tk->release;
			k2[t] = op->width;
			break;
		}
	}
}

void spase_order_by(const spase_inst_t *in, spase_sol_t *sol, int rule)
{
	double *k1 = calloc((size_t)in->nt + 1, sizeof(double));
	double *k2 = calloc((size_t)in->nt + 1, sizeof(double));

	if (k1 && k2) {
		rule_keys(in, sol, rule, k1, k2);
		sort_by_keys(in, sol->order, k1, k2);
	}
	free(k1);
	free(k2);
}

/* Minimum-area option of task t that ends by T (else its fastest). */
static int min_area_by(const spase_task_t *tk, double T)
{
	int best = -1;

	for (int o = 0; o < tk->nopt; o++) {
		if (tk->release + tk->opt[o].dur > T)
			continue;
		if (best < 0 || tk->opt[o].area < tk->opt[best].area)
			best = o;
	}
	return best >= 0 ? best : tk->fastest_opt;
}

typedef struct hctx {
	const spase_inst_t *in;
	spase_work_t *w;
	spase_sol_t *cand;
	spase_sol_t *best;
	double best_mk, best_tb;
	int tried;
	int failed; /* ENOMEM */
	spase_clock_t *clk;
} hctx_t;

/* Decode the candidate and keep it when better. Returns 0 to go on, 1 when
 * the search should stop (clock or abort), -1 on error. */
static int try_cand(hctx_t *h, double alpha)
{
	double mk, tb;
	int chosen = alpha != 1;

	if (h->tried > 0 && spase_stop(h->clk))
		return 1;
	for (int t = 0; t < h->in->nt; t++)
		chosen |= h->cand->opt[t] < 0;
	mk = spase_decode(h->w, h->cand, alpha);
	/* Options the decoder chose (opt < 0, among those within alpha of
	 * the smallest area) are decoded once more as every later decode
	 * will: it may then take another class's option of the same GPU
	 * count that ends sooner (one alpha did not allow), and the
	 * makespan kept must be the one the search starts from. */
	if (mk >= 0 && chosen)
		mk = spase_decode(h->w, h->cand, 1);
	if (mk < 0) {
		h->failed = 1;
		return -1;
	}
	tb = spase_tiebreak(h->w, h->cand);
	h->tried++;
	if (h->tried == 1 || mk < h->best_mk ||
	    (mk == h->best_mk && tb < h->best_tb)) {
		h->best_mk = mk;
		h->best_tb = tb;
		spase_sol_copy(h->in, h->best, h->cand);
	}
	return 0;
}

static const double mults[] = {1.0, 1.02, 1.05, 1.1, 1.15, 1.2, 1.3,
			       1.5, 1.75, 2.0, 3.0, 1e300};
#define NMULTS (int)(sizeof(mults) / sizeof(mults[0]))

static int h1(hctx_t *h, double lower)
{
	const spase_inst_t *in = h->in;

	for (int m = 0; m < NMULTS; m++) {
		double T = lower * mults[m];

		for (int r = 0; r < NRULES; r++) {
			int rc;

			for (int t = 0; t < in->nt; t++)
				h->cand->opt[t] = min_area_by(&in->t[t], T);
			spase_order_by(in, h->cand, r);
			rc = try_cand(h, 1);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static const double alphas[] = {1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 1e300};

static int h2(hctx_t *h)
{
	const spase_inst_t *in = h->in;

	for (size_t a = 0; a < sizeof(alphas) / sizeof(alphas[0]); a++) {
		for (int r = 0; r < NRULES; r++) {
			int rc;

			for (int t = 0; t < in->nt; t++)
				h->cand->opt[t] = in->t[t].min_area_opt;
			spase_order_by(in, h->cand, r);
			for (int t = 0; t < in->nt; t++)
				h->cand->opt[t] = -1;
			rc = try_cand(h, alphas[a]);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Two shelves for makespan T. */
static int h3_one(hctx_t *h, double T, int *shelf, double *k1, double *k2,
		  double *dp, char *take)
{
	const spase_inst_t *in = h->in;
	int C = in->total_gpus, nitems = 0;
	long long used = 0;

	/* Shelf-1 option a (cheapest ending by T), shelf-2 option b
	 * (cheapest ending by T/2). Forced to shelf 1 when b does not exist. */
	for (int t = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];
		int a = min_area_by(tk, T), b = -1;

		for (int o = 0; o < tk->nopt; o++)
			if (tk->release + tk->opt[o].dur <= T / 2 &&
			    (b < 0 || tk->opt[o].area < tk->opt[b].area))
				b = o;
		h->cand->opt[t] = a;
		shelf[t] = 1;
		if (tk->pinned)
			continue;
		if (b < 0) {
			used += tk->opt[a].width;
			continue;
		}
		if (tk->opt[b].area <= tk->opt[a].area) {
			h->cand->opt[t] = b;
			shelf[t] = 2;
			continue;
		}
		shelf[t] = 0; /* undecided: knapsack item */
		nitems++;
	}
	C -= (int)(used < C ? used : C);
	if (nitems > 0 && (double)nitems * (C + 1) <= H3_TAKE_MAX && C <= 65536) {
		/* 0/1 knapsack: maximise the area saved by shelf 1. */
		int it = 0;

		for (int c = 0; c <= C; c++)
			dp[c] = 0;
		for (int t = 0; t < in->nt; t++) {
			const spase_task_t *tk = &in->t[t];
			int a = h->cand->opt[t], wgt;
			double val, b_area = INFINITY;

			if (shelf[t] != 0)
				continue;
			for (int o = 0; o < tk->nopt; o++)
				if (tk->release + tk->opt[o].dur <= T / 2 &&
				    tk->opt[o].area < b_area)
					b_area = tk->opt[o].area;
			wgt = tk->opt[a].width;
			val = b_area - tk->opt[a].area;
			for (int c = C; c >= wgt; c--) {
				take[(size_t)it * (size_t)(C + 1) + (size_t)c] =
					dp[c - wgt] + val > dp[c];
				if (dp[c - wgt] + val > dp[c])
					dp[c] = dp[c - wgt] + val;
			}
			for (int c = 0; c < wgt && c <= C; c++)
				take[(size_t)it * (size_t)(C + 1) + (size_t)c] = 0;
			it++;
		}
		/* Walk back. */
		{
			int c = C;

			for (int t = in->nt - 1; t >= 0; t--) {
				if (shelf[t] != 0)
					continue;
				it--;
				if (take[(size_t)it * (size_t)(C + 1) +
					 (size_t)c]) {
					shelf[t] = 1;
					c -= in->t[t].opt[h->cand->opt[t]].width;
				}
			}
		}
	}
	for (int t = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];

		if (shelf[t] == 0) {
			/* Not taken (or no room for the knapsack): shelf 2. */
			int b = -1;

			for (int o = 0; o < tk->nopt; o++)
				if (tk->release + tk->opt[o].dur <= T / 2 &&
				    (b < 0 || tk->opt[o].area < tk->opt[b].area))
					b = o;
			h->cand->opt[t] = b;
			shelf[t] = 2;
		}
		k1[t] = shelf[t] == 1 ? 1 : 0;
		k2[t] = tk->opt[h->cand->opt[t]].dur;
	}
	sort_by_keys(in, h->cand->order, k1, k2);
	return try_cand(h, 1);
}

static int h3(hctx_t *h, double lower)
{
	const spase_inst_t *in = h->in;
	int C = in->total_gpus, rc = 0;
	int *shelf = calloc((size_t)in->nt + 1, sizeof(int));
	double *k1 = calloc((size_t)in->nt + 1, sizeof(double));
	double *k2 = calloc((size_t)in->nt + 1, sizeof(double));
	double *dp = calloc((size_t)C + 1, sizeof(double));
	/* h3_one runs the knapsack when its items x (free GPUs + 1) <=
	 * H3_TAKE_MAX: fewer items than tasks and fewer GPUs than all, so a
	 * table sized for every task and GPU, capped at H3_TAKE_MAX, holds
	 * every run. (It was 1 byte when tasks x GPUs passed the cap, while a
	 * run below it still wrote its whole table: heap overflow, slurmctld
	 * aborted at 2,167 tasks on 2,048 GPUs, issue 22.) */
	size_t tsz = (double)in->nt * (C + 1) <= H3_TAKE_MAX
			     ? (size_t)in->nt * (size_t)(C + 1) + 1
			     : (size_t)H3_TAKE_MAX + 1;
	char *take = calloc(tsz, 1);

	if (!shelf || !k1 || !k2 || !dp || !take) {
		h->failed = 1;
		rc = -1;
		goto out;
	}
	for (int m = 0; m < NMULTS - 1 && !rc; m++)
		rc = h3_one(h, lower * mults[m], shelf, k1, k2, dp, take);
out:
	free(shelf);
	free(k1);
	free(k2);
	free(dp);
	free(take);
	return rc;
}

double spase_heuristics(const spase_inst_t *in, spase_work_t *w,
			double lower, spase_sol_t *best, spase_clock_t *clk)
{
	hctx_t h = {.in = in, .w = w, .best = best, .clk = clk};

	h.cand = spase_sol_create(in);
	if (!h.cand)
		return -1;
	if (lower <= 0)
		lower = 1e-9;
	if (h1(&h, lower) == 0 && h2(&h) == 0)
		h3(&h, lower);
	spase_sol_destroy(h.cand);
	if (h.failed && h.tried == 0)
		return -1;
	return h.best_mk;
}
