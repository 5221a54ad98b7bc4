/* scale.c - the scaling model of a technique over GPU counts and its fit
 * (non-negative least squares over at most three terms: computation, a
 * constant, communication); sweep.c chooses which counts to measure.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale_int.h"
#include "sweep.h"

saturn_scale_kind_t saturn_scale_kind(const char *technique)
{
	if (technique && strcmp(technique, "fsdp") == 0)
		return SATURN_SCALE_SHARDED;
	if (technique && strcmp(technique, "pipeline") == 0)
		return SATURN_SCALE_PIPELINE;
	return SATURN_SCALE_DATA;
}

double saturn_scale_comp(saturn_scale_kind_t kind, int g, int micro)
{
	if (kind == SATURN_SCALE_PIPELINE) {
		double m = micro > 0 ? micro : 8;

		return (m + g - 1) / (m * g);
	}
	return 1.0 / g;
}

static double bw_of(const double *tab, int max, int g)
{
	if (!tab || g < 2 || g > max || !(tab[g] > 0))
		return 1.0; /* unknown: volume alone */
	return tab[g];
}

double saturn_scale_comm(saturn_scale_kind_t kind, int g, int micro,
			 const saturn_bw_table_t *bw)
{
	int max = bw ? bw->max : 0;

	if (g < 2)
		return 0;
	switch (kind) {
	case SATURN_SCALE_SHARDED:
		return 3.0 * (g - 1) / g / bw_of(bw ? bw->ag : NULL, max, g);
	case SATURN_SCALE_PIPELINE: {
		/* activations and their gradients go point to point from one
		 * stage to the next, one pair of GPUs at a time: the
		 * bandwidth of a hop is that of two GPUs, not that of a ring
		 * over all g (which on PCIe falls as more GPUs share the
		 * switches and the CPU interconnect) */
		double m = micro > 0 ? micro : 8;

		return (m + g - 1) / m / bw_of(bw ? bw->ar : NULL, max, 2);
	}
	default:
		return 2.0 * (g - 1) / g / bw_of(bw ? bw->ar : NULL, max, g);
	}
}

/* Solve the k x k system A x = y (k <= 3) by Gaussian elimination with
 * partial pivoting. -1 when singular. */
static int solve(int k, double A[3][3], double y[3], double x[3])
{
	for (int c = 0; c < k; c++) {
		int piv = c;

		for (int r = c + 1; r < k; r++)
			if (fabs(A[r][c]) > fabs(A[piv][c]))
				piv = r;
		if (fabs(A[piv][c]) < 1e-300)
			return -1;
		if (piv != c) {
			for (int j = 0; j < k; j++) {
				double t = A[c][j];

				A[c][j] = A[piv][j];
				A[piv][j] = t;
			}
			double t = y[c];

			y[c] = y[piv];
			y[piv] = t;
		}
		for (int r = c + 1; r < k; r++) {
			double f = A[r][c] / A[c][c];

			for (int j = c; j < k; j++)
				A[r][j] -= f * A[c][j];
			y[r] -= f * y[c];
		}
	}
	for (int c = k - 1; c >= 0; c--) {
		double s = y[c];

		for (int j = c + 1; j < k; j++)
			s -= A[c][j] * x[j];
		x[c] = s / A[c][c];
	}
	return 0;
}

static int micro_at(const saturn_scale_fit_t *fit, int g)
{
	return g >= 0 && g <= SATURN_SCALE_MAX_GPUS && fit->micro_g[g] > 0
		   ? fit->micro_g[g]
		   : fit->micro;
}

double saturn_scale_fit_comp(const saturn_scale_fit_t *fit, int g)
{
	return saturn_scale_comp(fit->kind, g, micro_at(fit, g));
}

static double fit_comm(const saturn_scale_fit_t *fit, int g,
		       const saturn_bw_table_t *bw)
{
	return saturn_scale_comm(fit->kind, g, micro_at(fit, g), bw);
}

int saturn_scale_fit(saturn_scale_kind_t kind, int micro, int n, const int *g,
		     const double *t, const saturn_bw_table_t *bw,
		     saturn_scale_fit_t *fit, saturn_error_t *err)
{
	return saturn_scale_fit_micro(kind, micro, NULL, 0, n, g, t, bw, fit,
				      err);
}

int saturn_scale_fit_micro(saturn_scale_kind_t kind, int micro,
			   const int *micro_g, int ng, int n, const int *g,
			   const double *t, const saturn_bw_table_t *bw,
			   saturn_scale_fit_t *fit, saturn_error_t *err)
{
	int distinct = 0;

	memset(fit, 0, sizeof(*fit));
	fit->kind = kind;
	fit->micro = micro;
	for (int q = 0; micro_g && q <= ng && q <= SATURN_SCALE_MAX_GPUS; q++)
		fit->micro_g[q] = micro_g[q] > 0 ? micro_g[q] : 0;
	if (n < 1)
		return saturn_error_set(err, "scaling fit: no points");
	for (int i = 0; i < n; i++) {
		int seen = 0;

		if (g[i] < 1 || !(t[i] > 0) || !isfinite(t[i]))
			return saturn_error_set(
			    err,
			    "scaling fit: point %d: bad value (g=%d, t=%g)", i,
			    g[i], t[i]);
		for (int j = 0; j < i; j++)
			seen |= g[j] == g[i];
		distinct += !seen;
	}
	return saturn_scale_fit_core(fit, n, g, t, bw, distinct, 0, err);
}

/* Non-negative least squares over subsets of the basis {comp, 1, comm},
 * always with comp; only the subset `only` when it is not 0. */
int saturn_scale_fit_core(saturn_scale_fit_t *fit, int n, const int *g,
		    const double *t, const saturn_bw_table_t *bw, int distinct,
		    int only, saturn_error_t *err)
{
	double best = INFINITY, raw = 0;

	/* Relative residuals: weight each point by 1/t so small times
	 * count. */
	for (int mask = 1; mask < 8; mask += 2) {
		int cols[3], k = 0;
		double A[3][3] = {{0}}, y[3] = {0}, x[3] = {0}, res = 0;

		for (int j = 0; j < 3; j++)
			if (mask & (1 << j))
				cols[k++] = j;
		if (k > distinct || ((mask & 2) && distinct < 3 && !only) ||
		    (only && mask != only))
			continue;
		for (int i = 0; i < n; i++) {
			double f[3] = {saturn_scale_fit_comp(fit, g[i]), 1.0,
				       fit_comm(fit, g[i], bw)};
			double w = 1.0 / (t[i] * t[i]);

			for (int r = 0; r < k; r++) {
				for (int c = 0; c < k; c++)
					A[r][c] += w * f[cols[r]] * f[cols[c]];
				y[r] += w * f[cols[r]] * t[i];
			}
		}
		if (solve(k, A, y, x) < 0)
			continue;
		int neg = 0;

		for (int j = 0; j < k; j++)
			neg |= x[j] < 0;
		if (neg)
			continue;
		double coef[3] = {0, 0, 0};

		for (int j = 0; j < k; j++)
			coef[cols[j]] = x[j];
		for (int i = 0; i < n; i++) {
			double p = coef[0] * saturn_scale_fit_comp(fit, g[i]) + coef[1] +
				   coef[2] * fit_comm(fit, g[i], bw);
			double e = (p - t[i]) / t[i];

			res += e * e;
		}
		/* prefer fewer terms unless more terms clearly fit better */
		if (res < best * 0.999 - 1e-12 || !isfinite(best)) {
			best = res;
			raw = res;
			fit->a = coef[0];
			fit->b = coef[1];
			fit->c = coef[2];
		}
	}
	if (!isfinite(best))
		return saturn_error_set(
		    err, "scaling fit: no non-negative solution");
	fit->npoints = n;
	fit->rms_rel = sqrt(raw / n);
	return 0;
}

double saturn_scale_predict(const saturn_scale_fit_t *fit, int g,
			    const saturn_bw_table_t *bw)
{
	return fit->a * saturn_scale_fit_comp(fit, g) + fit->b +
	       fit->c * fit_comm(fit, g, bw);
}
