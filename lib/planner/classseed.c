/* classseed.c - starting plans that follow the class-aware LP bound's split
 * (lpbound.c) on clusters of several node classes.
 *
 * The constructive heuristics give each task its smallest-area option (or
 * let the decoder take the earliest finish among cheap ones): on real
 * speeds, where every job is cheapest on the newest type, that piles the
 * batch onto one class while the others idle, and the annealer's
 * one-option moves rarely undo it (a task moved alone to a slow class
 * first makes the plan longer). The LP's split says how much of each
 * task each class should take for the load to fit. Here each task goes
 * to a class drawn from its split (the largest share first, then samples
 * of it), takes its smallest-area option of that class that ends by
 * m x T (T: the makespan the LP accepted, m a few slacks), and the
 * candidate is decoded in a few priority orders. A second family of
 * candidates lets the decoder choose (earliest finish) among the options
 * whose area is within alpha of the smallest in their own class, so a
 * task may go to a slower type at the width that suits that type.
 * Deterministic; each candidate costs one or two decodes (about 200 in
 * all). On Gavel's families they replace the heuristics' best on some
 * instances only; the annealer's class moves do most of the work
 * (doc/benchmarks.md).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "planner_int.h"

static const double seed_mults[] = {0.3, 0.5, 0.7, 0.85, 1.0, 1.15};
#define NSEED_MULTS (int)(sizeof(seed_mults) / sizeof(seed_mults[0]))
static const double class_alphas[] = {1.0, 1.1, 1.25, 1.5, 2.0, 3.0};
#define NCLASS_ALPHAS (int)(sizeof(class_alphas) / sizeof(class_alphas[0]))
#define SEED_DRAWS 4 /* sampled class assignments after the argmax one */
#define SEED_RULES 3 /* priority rules per candidate (spase_order_by) */

/* Smallest-area option of task t in class c (class-free options count in
 * every class) that ends by T; else its fastest there; -1 when it has none
 * in c. */
int spase_class_option(const spase_inst_t *in, int t, int c, double T)
{
	const spase_task_t *tk = &in->t[t];
	int best = -1, fast = -1;

	for (int o = 0; o < tk->nopt; o++) {
		const spase_opt_t *op = &tk->opt[o];

		if (op->klass >= 0 && op->klass != c)
			continue;
		if (fast < 0 || op->dur < tk->opt[fast].dur)
			fast = o;
		if (tk->release + op->dur <= T && (best < 0 || op->area < tk->opt[best].area))
			best = o;
	}
	return best >= 0 ? best : fast;
}

/* The class of task t: the largest share of its row (draw < 0), or a class
 * drawn with probability its share; -1 when the row is all zeros. */
static int pick_class(const double *row, int nc, int draw, uint64_t *rng)
{
	double sum = 0, u;
	int best = -1;

	for (int c = 0; c < nc; c++) {
		sum += row[c] > 0 ? row[c] : 0;
		if (row[c] > 0 && (best < 0 || row[c] > row[best]))
			best = c;
	}
	if (best < 0 || draw < 0)
		return best;
	u = spase_unif(rng) * sum;
	for (int c = 0; c < nc; c++) {
		u -= row[c] > 0 ? row[c] : 0;
		if (u < 0)
			return c;
	}
	return best;
}

int spase_class_seed(const spase_inst_t *in, spase_work_t *w, const double *frac,
		     double T, spase_sol_t *best, spase_sol_t *cand, double *mk,
		     spase_clock_t *clk)
{
	int nc = in->p->nclasses > 0 ? in->p->nclasses : 1, replaced = 0, any = 0;
	uint64_t rng = 0x51c1a55u;

	if (!frac || !(T > 0) || nc < 2)
		return 0;
	for (int t = 0; t < in->nt && !any; t++)
		for (int c = 0; c < nc; c++)
			any |= frac[(size_t)t * (size_t)nc + (size_t)c] > 0;
	if (!any)
		return 0;

	for (int d = -1; d < SEED_DRAWS; d++)
		for (int m = 0; m < NSEED_MULTS; m++) {
			double Tm = T * seed_mults[m];

			for (int t = 0; t < in->nt; t++) {
				const spase_task_t *tk = &in->t[t];
				int c = tk->pinned || tk->zero
						? -1
						: pick_class(&frac[(size_t)t * (size_t)nc], nc, d,
							     &rng);
				int o = c >= 0 ? spase_class_option(in, t, c, Tm) : -1;

				if (o < 0) /* pinned, zero-length, or no split */
					o = best->opt[t] >= 0 ? best->opt[t] : tk->min_area_opt;
				cand->opt[t] = tk->pinned ? 0 : o;
			}
			for (int r = 0; r < SEED_RULES; r++) {
				double x;

				if (spase_stop(clk))
					return replaced;
				spase_order_by(in, cand, r);
				x = spase_decode(w, cand, 1);
				if (x < 0)
					return -1;
				if (x < *mk) {
					*mk = x;
					spase_sol_copy(in, best, cand);
					replaced = 1;
				}
			}
		}
	/* earliest finish among each class's cheap options */
	for (int a = 0; a < NCLASS_ALPHAS; a++)
		for (int r = 0; r < SEED_RULES; r++) {
			double x;

			if (spase_stop(clk))
				return replaced;
			for (int t = 0; t < in->nt; t++)
				cand->opt[t] = in->t[t].min_area_opt;
			spase_order_by(in, cand, r);
			for (int t = 0; t < in->nt; t++)
				cand->opt[t] = -1;
			w->class_alpha = 1;
			x = spase_decode(w, cand, class_alphas[a]);
			w->class_alpha = 0;
			/* the options it chose, decoded as the search will (the
			 * decoder may then take another class of the same count) */
			if (x >= 0)
				x = spase_decode(w, cand, 1);
			if (x < 0)
				return -1;
			if (x < *mk) {
				*mk = x;
				spase_sol_copy(in, best, cand);
				replaced = 1;
			}
		}
	return replaced;
}
