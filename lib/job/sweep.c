/* sweep.c - scaling-model fit (non-negative least squares over at most three
 * terms) and the choice of which GPU counts of a technique to measure.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		double m = micro > 0 ? micro : 8;

		return (m + g - 1) / m / bw_of(bw ? bw->ar : NULL, max, g);
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

int saturn_scale_fit(saturn_scale_kind_t kind, int micro, int n, const int *g,
		     const double *t, const saturn_bw_table_t *bw,
		     saturn_scale_fit_t *fit, saturn_error_t *err)
{
	double best = INFINITY;
	int distinct = 0;

	memset(fit, 0, sizeof(*fit));
	fit->kind = kind;
	fit->micro = micro;
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
	/* Subsets of the basis {comp, 1, comm}, always with comp. Relative
	 * residuals: weight each point by 1/t so small times count. */
	for (int mask = 1; mask < 8; mask += 2) {
		int cols[3], k = 0;
		double A[3][3] = {{0}}, y[3] = {0}, x[3] = {0}, res = 0;

		for (int j = 0; j < 3; j++)
			if (mask & (1 << j))
				cols[k++] = j;
		if (k > distinct || ((mask & 2) && distinct < 3))
			continue;
		for (int i = 0; i < n; i++) {
			double f[3] = {
			    saturn_scale_comp(kind, g[i], micro), 1.0,
			    saturn_scale_comm(kind, g[i], micro, bw)};
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
			double p =
			    coef[0] * saturn_scale_comp(kind, g[i], micro) +
			    coef[1] +
			    coef[2] * saturn_scale_comm(kind, g[i], micro, bw);
			double e = (p - t[i]) / t[i];

			res += e * e;
		}
		/* prefer fewer terms unless more terms clearly fit better */
		if (res < best * 0.999 - 1e-12 || !isfinite(best)) {
			best = res;
			fit->a = coef[0];
			fit->b = coef[1];
			fit->c = coef[2];
		}
	}
	if (!isfinite(best))
		return saturn_error_set(
		    err, "scaling fit: no non-negative solution");
	fit->npoints = n;
	fit->rms_rel = sqrt(best / n);
	return 0;
}

double saturn_scale_predict(const saturn_scale_fit_t *fit, int g,
			    const saturn_bw_table_t *bw)
{
	return fit->a * saturn_scale_comp(fit->kind, g, fit->micro) + fit->b +
	       fit->c * saturn_scale_comm(fit->kind, g, fit->micro, bw);
}

/* --- trial selection --------------------------------------------------- */

struct saturn_sweep {
	saturn_scale_kind_t kind;
	int micro;
	int lo, hi;
	int exhaustive;
	int extra; /* extra counts tried after failures */
	int complete;
	int trials;
	double *ar, *ag;
	saturn_bw_table_t bw;
	saturn_point_t *pts; /* indexed by g, 0..hi */
	int have_fit;
	saturn_scale_fit_t fit;
};

saturn_sweep_t *saturn_sweep_create(saturn_scale_kind_t kind, int micro, int lo,
				    int hi, const saturn_bw_table_t *bw,
				    int exhaustive)
{
	saturn_sweep_t *sw;
	int max = bw ? bw->max : 0;

	if (lo < 1 || hi < lo)
		return NULL;
	if (!(sw = calloc(1, sizeof(*sw))))
		return NULL;
	sw->kind = kind;
	sw->micro = micro;
	sw->lo = lo;
	sw->hi = hi;
	sw->exhaustive = exhaustive;
	sw->pts = calloc(hi + 1, sizeof(*sw->pts));
	sw->ar = calloc(max + 1, sizeof(double));
	sw->ag = calloc(max + 1, sizeof(double));
	if (!sw->pts || !sw->ar || !sw->ag) {
		saturn_sweep_destroy(sw);
		return NULL;
	}
	for (int g = 0; g <= max; g++) {
		sw->ar[g] = bw->ar ? bw->ar[g] : 0;
		sw->ag[g] = bw->ag ? bw->ag[g] : 0;
	}
	sw->bw.max = max;
	sw->bw.ar = sw->ar;
	sw->bw.ag = sw->ag;
	return sw;
}

void saturn_sweep_destroy(saturn_sweep_t *sw)
{
	if (!sw)
		return;
	free(sw->pts);
	free(sw->ar);
	free(sw->ag);
	free(sw);
}

static int is_oom(const saturn_point_t *p)
{
	return p->state == SATURN_PT_OOM || p->state == SATURN_PT_OOM_PRED;
}

static int push(saturn_sweep_t *sw, int g, int *gpus, int *n, int max)
{
	if (*n >= max || sw->pts[g].state != SATURN_PT_UNKNOWN)
		return 0;
	sw->pts[g].state = SATURN_PT_PENDING;
	gpus[(*n)++] = g;
	return 1;
}

static void finish(saturn_sweep_t *sw)
{
	int gs[256], n = 0, koom = 0;
	double ts[256];

	sw->complete = 1;
	for (int g = sw->lo; g <= sw->hi; g++) {
		if (is_oom(&sw->pts[g]))
			koom = g;
		if (sw->pts[g].state == SATURN_PT_MEASURED && n < 256) {
			gs[n] = g;
			ts[n++] = sw->pts[g].sec_per_batch;
		}
	}
	if (n < 1 || saturn_scale_fit(sw->kind, sw->micro, n, gs, ts, &sw->bw,
				      &sw->fit, NULL) < 0)
		return;
	sw->have_fit = 1;
	if (n < 2)
		return; /* one point says nothing about scaling */
	for (int g = koom + 1; g <= sw->hi; g++) {
		saturn_point_t *p = &sw->pts[g];

		if (g < sw->lo || p->state != SATURN_PT_UNKNOWN)
			continue;
		p->state = SATURN_PT_PREDICTED;
		p->sec_per_batch = saturn_scale_predict(&sw->fit, g, &sw->bw);
		snprintf(p->reason, sizeof(p->reason),
			 "scaling fit of %d measured GPU counts", n);
	}
}

int saturn_sweep_next(saturn_sweep_t *sw, int *gpus, int max)
{
	int n = 0, koom = 0, kok = 0, nok = 0;

	if (sw->complete || max < 1)
		return 0;
	if (sw->exhaustive) {
		for (int g = sw->lo; g <= sw->hi; g++)
			push(sw, g, gpus, &n, max);
		if (n == 0)
			finish(sw);
		return n;
	}
	push(sw, sw->lo, gpus, &n, max);
	push(sw, sw->hi, gpus, &n, max);
	if (n)
		return n;
	/* memory per GPU does not grow with g: an OOM implies OOM below */
	for (int g = sw->hi; g >= sw->lo; g--)
		if (is_oom(&sw->pts[g])) {
			koom = g;
			break;
		}
	for (int g = sw->lo; g < koom; g++) {
		saturn_point_t *p = &sw->pts[g];

		if (p->state == SATURN_PT_UNKNOWN) {
			p->state = SATURN_PT_OOM_PRED;
			snprintf(p->reason, sizeof(p->reason),
				 "out of memory on %d GPUs, and memory per GPU "
				 "does not fall with fewer",
				 koom);
		}
	}
	if (koom < sw->lo - 1)
		koom = sw->lo - 1;
	for (int g = koom + 1; g <= sw->hi; g++)
		if (sw->pts[g].state == SATURN_PT_MEASURED) {
			if (!kok)
				kok = g;
			nok++;
		}
	/* bisect the smallest feasible count */
	if (koom >= sw->lo && kok && kok - koom > 1) {
		push(sw, (koom + kok) / 2, gpus, &n, max);
		if (n)
			return n;
	}
	/* after failures, a second measured count to fit with */
	if (nok == 1 && sw->extra < 2) {
		int best = 0;

		for (int g = koom + 1; g <= sw->hi; g++)
			if (sw->pts[g].state == SATURN_PT_UNKNOWN &&
			    (!best || abs(g - kok) > abs(best - kok)))
				best = g;
		if (best) {
			sw->extra++;
			push(sw, best, gpus, &n, max);
			return n;
		}
	}
	finish(sw);
	return 0;
}

void saturn_sweep_report(saturn_sweep_t *sw, int gpus,
			 saturn_point_state_t state, double sec_per_batch,
			 double peak_mem_mb, const char *reason)
{
	saturn_point_t *p;

	if (gpus < sw->lo || gpus > sw->hi)
		return;
	p = &sw->pts[gpus];
	p->state = state;
	p->sec_per_batch = state == SATURN_PT_MEASURED ? sec_per_batch : 0;
	p->peak_mem_mb = peak_mem_mb;
	snprintf(p->reason, sizeof(p->reason), "%s", reason ? reason : "");
	sw->trials++;
}

int saturn_sweep_done(const saturn_sweep_t *sw)
{
	return sw->complete;
}

const saturn_point_t *saturn_sweep_point(const saturn_sweep_t *sw, int gpus)
{
	if (gpus < sw->lo || gpus > sw->hi)
		return NULL;
	return &sw->pts[gpus];
}

int saturn_sweep_trials(const saturn_sweep_t *sw)
{
	return sw->trials;
}

const saturn_scale_fit_t *saturn_sweep_fit(const saturn_sweep_t *sw)
{
	return sw->have_fit ? &sw->fit : NULL;
}

int saturn_sweep_feasible_from(const saturn_sweep_t *sw)
{
	int koom = 0, any = 0;

	for (int g = sw->lo; g <= sw->hi; g++) {
		if (is_oom(&sw->pts[g]))
			koom = g;
	}
	for (int g = koom + 1; g <= sw->hi; g++)
		any |= sw->pts[g].state == SATURN_PT_MEASURED ||
		       sw->pts[g].state == SATURN_PT_PREDICTED;
	return any ? koom + 1 : 0;
}
