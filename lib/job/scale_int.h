/* scale_int.h - internal to scale.c and sweep.c: the scaling fit's
 * pieces that the trial selection reuses; not a public header.
 */
#ifndef SATURN_SCALE_INT_H
#define SATURN_SCALE_INT_H

#include "sweep.h"

/* The computation term of fit at g GPUs (the micro-batch count of the
 * pipeline at g where the fit has one). */
double saturn_scale_fit_comp(const saturn_scale_fit_t *fit, int g);

/* Non-negative least squares of the n points (g[i], t[i]) over subsets of
 * the basis {comp, 1, comm}, always with comp; only the subset `only`
 * (a bit mask) when it is not 0; distinct = how many distinct counts g
 * holds. Fills fit's coefficients (kind, micro set by the caller).
 * Returns 0, or -1 with err set (err may be NULL). */
int saturn_scale_fit_core(saturn_scale_fit_t *fit, int n, const int *g, const double *t,
			  const saturn_bw_table_t *bw, int distinct, int only, saturn_error_t *err);

#endif
