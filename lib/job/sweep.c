/* sweep.c - the choice of which GPU counts of a technique to measure (the
 * scaling model and its fit: scale.c).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scale_int.h"
#include "sweep.h"

/* --- trial selection --------------------------------------------------- */

struct saturn_sweep {
	saturn_scale_kind_t kind;
	int micro;
	int lo, hi;
	int exhaustive;
	int extra; /* extra counts tried after failures */
	int middle; /* middle counts added because the fit was unsure */
	int *micro_g; /* pipeline micro-batches by count (0: micro) */
	int complete;
	int trials;
	double *ar, *ag;
	saturn_bw_table_t bw;
	saturn_point_t *pts; /* indexed by g, 0..hi */
	saturn_point_t *loan; /* lent by another technique, by g */
	char *borrowed; /* pts[g] is loan[g]: reported as predicted */
	int have_fit;
	saturn_scale_fit_t fit;
	char *want; /* counts to measure after completion (saturn_sweep_probe) */
	int probes; /* how many */
	int refit; /* a probe was handed out: re-fit once it is back */
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
	sw->micro_g = calloc(hi + 1, sizeof(int));
	sw->loan = calloc(hi + 1, sizeof(*sw->loan));
	sw->borrowed = calloc(hi + 1, 1);
	sw->want = calloc(hi + 1, 1);
	sw->ar = calloc(max + 1, sizeof(double));
	sw->ag = calloc(max + 1, sizeof(double));
	if (!sw->pts || !sw->micro_g || !sw->loan || !sw->borrowed || !sw->want || !sw->ar ||
	    !sw->ag) {
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
	free(sw->micro_g);
	free(sw->loan);
	free(sw->borrowed);
	free(sw->want);
	free(sw->ar);
	free(sw->ag);
	free(sw);
}

void saturn_sweep_set_micro(saturn_sweep_t *sw, int g, int micro)
{
	if (sw && g >= sw->lo && g <= sw->hi && micro > 0)
		sw->micro_g[g] = micro;
}

void saturn_sweep_lend(saturn_sweep_t *sw, int g, double sec_per_batch,
		       double peak_mem_mb, const char *from)
{
	saturn_point_t *l;

	if (!sw || sw->exhaustive || g < sw->lo || g > sw->hi ||
	    !(sec_per_batch > 0) || !isfinite(sec_per_batch))
		return;
	l = &sw->loan[g];
	l->state = SATURN_PT_MEASURED;
	l->sec_per_batch = sec_per_batch;
	l->peak_mem_mb = peak_mem_mb;
	snprintf(l->reason, sizeof(l->reason), "%s", from ? from : "");
}

int saturn_sweep_borrowed(const saturn_sweep_t *sw, int g)
{
	return sw && g >= sw->lo && g <= sw->hi && sw->borrowed[g];
}

static int is_oom(const saturn_point_t *p)
{
	return p->state == SATURN_PT_OOM || p->state == SATURN_PT_OOM_PRED;
}

/* Hand out g to measure; but take another technique's measurement of the
 * same run when one was lent (then 0: nothing to wait for). */
static int push(saturn_sweep_t *sw, int g, int *gpus, int *n, int max)
{
	if (*n >= max || g < sw->lo || g > sw->hi ||
	    sw->pts[g].state != SATURN_PT_UNKNOWN)
		return 0;
	if (sw->loan[g].state == SATURN_PT_MEASURED) {
		sw->pts[g] = sw->loan[g];
		sw->borrowed[g] = 1;
		return 0;
	}
	sw->pts[g].state = SATURN_PT_PENDING;
	gpus[(*n)++] = g;
	return 1;
}

/* Above this relative RMS residual a fit's shape is taken as wrong and
 * counts between measured ones are predicted from their two neighbours. */
#define SWEEP_LOCAL 0.02

/* Time at g from a fit through the measured g1 < g < g2 alone: comp +
 * comm, else comp + constant, else linear in g. */
static double local_predict(const saturn_sweep_t *sw, int g1, int g2, int g)
{
	static const int masks[] = {5, 3};
	int gs[2] = {g1, g2};
	double ts[2] = {sw->pts[g1].sec_per_batch, sw->pts[g2].sec_per_batch};
	saturn_scale_fit_t f;

	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		memset(&f, 0, sizeof(f));
		f.kind = sw->kind;
		f.micro = sw->micro;
		for (int q = 0; q <= sw->hi && q <= SATURN_SCALE_MAX_GPUS; q++)
			f.micro_g[q] = sw->micro_g[q];
		if (saturn_scale_fit_core(&f, 2, gs, ts, &sw->bw, 2, masks[i], NULL) == 0)
			return saturn_scale_predict(&f, g, &sw->bw);
	}
	/* the same shape with a constant of either sign: still through both
	 * points, still following comp(g) between them */
	{
		double c1 = saturn_scale_fit_comp(&f, g1), c2 = saturn_scale_fit_comp(&f, g2), a;

		if (fabs(c1 - c2) < 1e-12)
			return ts[0] + (ts[1] - ts[0]) * (g - g1) / (g2 - g1);
		a = (ts[0] - ts[1]) / (c1 - c2);
		return ts[0] + a * (saturn_scale_fit_comp(&f, g) - c1);
	}
}

/* A lent count fitted as measured is reported as what it is: a prediction
 * for this technique. */
static void settle_loans(saturn_sweep_t *sw)
{
	for (int g = sw->lo; g <= sw->hi; g++)
		if (sw->borrowed[g] && sw->pts[g].state == SATURN_PT_MEASURED)
			sw->pts[g].state = SATURN_PT_PREDICTED;
}

static void fill(saturn_sweep_t *sw);

static void finish(saturn_sweep_t *sw)
{
	fill(sw);
	settle_loans(sw);
}

static void fill(saturn_sweep_t *sw)
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
	if (n < 1 || saturn_scale_fit_micro(sw->kind, sw->micro, sw->micro_g,
					    sw->hi, n, gs, ts, &sw->bw,
					    &sw->fit, NULL) < 0)
		return;
	sw->have_fit = 1;
	if (n < 2)
		return; /* one point says nothing about scaling */
	for (int g = koom + 1; g <= sw->hi; g++) {
		saturn_point_t *p = &sw->pts[g];
		int g1 = g, g2 = g;

		if (g < sw->lo || p->state != SATURN_PT_UNKNOWN)
			continue;
		p->state = SATURN_PT_PREDICTED;
		p->sec_per_batch = saturn_scale_predict(&sw->fit, g, &sw->bw);
		snprintf(p->reason, sizeof(p->reason),
			 "scaling fit of %d measured GPU counts", n);
		/* a fit that misses its own points by more than noise is the
		 * wrong shape here: between the two nearest measured counts
		 * a two-count fit through them is safer */
		if (!(sw->fit.rms_rel > SWEEP_LOCAL))
			continue;
		while (g1 > koom && sw->pts[g1].state != SATURN_PT_MEASURED)
			g1--;
		while (g2 <= sw->hi && sw->pts[g2].state != SATURN_PT_MEASURED)
			g2++;
		if (g1 > koom && g2 <= sw->hi) {
			double v = local_predict(sw, g1, g2, g);

			if (v > 0) {
				p->sec_per_batch = v;
				snprintf(p->reason, sizeof(p->reason),
					 "scaling fit of the measured %d and %d "
					 "GPUs (a fit of all %d measured counts "
					 "misses them by %.0f%%)",
					 g1, g2, n, 100 * sw->fit.rms_rel);
			}
		}
	}
}

/* The count g when it is not measured or handed out yet, else 0. */
static int first_unknown(const saturn_sweep_t *sw, int g)
{
	return g >= sw->lo && g <= sw->hi &&
			   sw->pts[g].state == SATURN_PT_UNKNOWN
		   ? g
		   : 0;
}

/* The unmeasured count in the middle of the widest gap between measured
 * counts from `from` on; 0 when there is none. */
static int widest_gap(const saturn_sweep_t *sw, int from)
{
	int prev = 0, best = 0, width = 1;

	for (int g = from; g <= sw->hi; g++) {
		if (sw->pts[g].state != SATURN_PT_MEASURED)
			continue;
		if (prev && g - prev > width &&
		    first_unknown(sw, (prev + g) / 2)) {
			width = g - prev;
			best = (prev + g) / 2;
		}
		prev = g;
	}
	return best;
}

/* A pipeline whose micro-batch count changes with g: its micro-batches
 * shrink as they multiply, and how fast one runs depends on its size,
 * which the model does not know. Returns the unmeasured count where the
 * count stops changing, else the middle of the widest gap; 0 when the
 * count is the same everywhere (or nothing is left to measure). */
static int micro_at_count(const saturn_sweep_t *sw, int g)
{
	return sw->micro_g[g] > 0 ? sw->micro_g[g] : sw->micro;
}

static int micro_kink(const saturn_sweep_t *sw, int from)
{
	int last_change = 0;

	if (sw->kind != SATURN_SCALE_PIPELINE)
		return 0;
	for (int g = from + 1; g <= sw->hi; g++)
		if (micro_at_count(sw, g) != micro_at_count(sw, g - 1))
			last_change = g;
	if (!last_change)
		return 0;
	if (last_change < sw->hi && first_unknown(sw, last_change))
		return last_change;
	return widest_gap(sw, from);
}

/* Fit the measured counts from `from` on except `skip` (0: none) with the
 * basis subset `only` (0: the best). 0, or -1. */
static int fit_some(const saturn_sweep_t *sw, int from, int skip, int only,
		    saturn_scale_fit_t *fit)
{
	int gs[SATURN_SCALE_MAX_GPUS + 1], n = 0, distinct;
	double ts[SATURN_SCALE_MAX_GPUS + 1];

	memset(fit, 0, sizeof(*fit));
	fit->kind = sw->kind;
	fit->micro = sw->micro;
	for (int g = 0; g <= sw->hi && g <= SATURN_SCALE_MAX_GPUS; g++)
		fit->micro_g[g] = sw->micro_g[g];
	for (int g = from; g <= sw->hi && n <= SATURN_SCALE_MAX_GPUS; g++)
		if (g != skip && sw->pts[g].state == SATURN_PT_MEASURED) {
			gs[n] = g;
			ts[n++] = sw->pts[g].sec_per_batch;
		}
	distinct = n;
	if (n < 1)
		return -1;
	return saturn_scale_fit_core(fit, n, gs, ts, &sw->bw, distinct, only, NULL);
}

/* Relative gap between two fits' predictions at g. */
static double fit_gap(const saturn_scale_fit_t *x, const saturn_scale_fit_t *y,
		      int g, const saturn_bw_table_t *bw)
{
	double p = saturn_scale_predict(x, g, bw),
	       q = saturn_scale_predict(y, g, bw);

	return p > 0 && q > 0 ? fabs(p - q) / fmin(p, q) : INFINITY;
}

/* Above this relative change a prediction is unsure: a little over twice
 * the noise of a typical measurement (2 %, doc/benchmarks.md "Profiler"),
 * so that noise alone seldom costs a trial. */
#define SWEEP_UNSURE 0.05

/* Middle counts a sweep adds at most: each costs a trial. */
#define SWEEP_MIDDLES 1

/* The unmeasured count from `from` on where fits x and y differ most, and
 * by how much (relative) in *gap; 0 when there is none. */
static int widest_disagreement(const saturn_sweep_t *sw, int from,
			       const saturn_scale_fit_t *x,
			       const saturn_scale_fit_t *y, double *gap)
{
	int where = 0;

	*gap = 0;
	for (int g = from; g <= sw->hi; g++) {
		double d;

		if (!first_unknown(sw, g))
			continue;
		d = fit_gap(x, y, g, &sw->bw);
		if (!where || d > *gap) {
			*gap = d;
			where = g;
		}
	}
	return where;
}

/* Where the prediction is unsure, or 0: with two measured counts, where
 * the two two-term models (comp + comm, comp + constant) disagree by more
 * than tol; with more, where leaving out an inner measured count (or the
 * one-GPU count, which communicates nothing) moves the prediction by more
 * than tol; and the middle of the widest gap (mid) when the fit misses the
 * measured counts by more than tol/2 RMS. */
static int fit_unsure(const saturn_sweep_t *sw, int from, int mid,
		      double tol)
{
	saturn_scale_fit_t all, f1, f2;
	int first = 0, last = 0, nok = 0, where;
	double gap;

	for (int g = from; g <= sw->hi; g++)
		if (sw->pts[g].state == SATURN_PT_MEASURED) {
			if (!first)
				first = g;
			last = g;
			nok++;
		}
	if (nok == 2) {
		if (fit_some(sw, from, 0, 5, &f1) < 0 ||
		    fit_some(sw, from, 0, 3, &f2) < 0)
			return mid;
		where = widest_disagreement(sw, from, &f1, &f2, &gap);
		return gap > tol ? where : 0;
	}
	if (fit_some(sw, from, 0, 0, &all) < 0 || all.rms_rel > tol / 2)
		return mid;
	for (int g = first; g < last; g++) {
		int multi = 0;

		if (sw->pts[g].state != SATURN_PT_MEASURED ||
		    (g == first && g != 1))
			continue;
		/* a fit left with one communicating count is known to be
		 * unsure: no test */
		for (int q = from > 2 ? from : 2; q <= sw->hi; q++)
			multi += q != g && sw->pts[q].state == SATURN_PT_MEASURED;
		if (multi < 2)
			continue;
		if (fit_some(sw, from, g, 0, &f1) < 0)
			return mid;
		where = widest_disagreement(sw, from, &f1, &all, &gap);
		if (gap > tol)
			return where;
	}
	return 0;
}

int saturn_sweep_next(saturn_sweep_t *sw, int *gpus, int max)
{
	int n = 0, koom = 0, kok = 0, nok = 0;

	if (sw->complete || max < 1)
		return 0;
	if (sw->probes) {
		for (int g = sw->lo; g <= sw->hi && n < max; g++)
			if (sw->want[g]) {
				sw->want[g] = 0;
				sw->probes--;
				sw->pts[g].state = SATURN_PT_PENDING;
				gpus[n++] = g;
			}
		sw->refit = 1;
		return n;
	}
	if (sw->refit) {
		/* fit again with the probed count: the lent count back as
		 * measured, the predictions made anew */
		sw->refit = 0;
		sw->have_fit = 0;
		for (int g = sw->lo; g <= sw->hi; g++) {
			saturn_point_t *p = &sw->pts[g];

			if (p->state != SATURN_PT_PREDICTED)
				continue;
			if (sw->borrowed[g])
				p->state = SATURN_PT_MEASURED;
			else
				memset(p, 0, sizeof(*p));
		}
		finish(sw);
		return 0;
	}
	if (sw->exhaustive) {
		for (int g = sw->lo; g <= sw->hi; g++)
			push(sw, g, gpus, &n, max);
		if (n == 0)
			finish(sw);
		return n;
	}
	/* the ends of the range; but a range from one GPU starts at two:
	 * one GPU communicates nothing, and an OOM on two means OOM on one */
	push(sw, sw->lo == 1 && sw->hi >= 2 ? 2 : sw->lo, gpus, &n, max);
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
	/* then one GPU, unless two ran out of memory */
	if (sw->lo == 1 && push(sw, 1, gpus, &n, max))
		return n;
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
	/* one GPU communicates nothing: a fit from it and one larger count
	 * cannot tell computation from communication, so measure the
	 * smallest count that communicates too */
	if (kok == 1 && sw->hi >= 2 &&
	    push(sw, first_unknown(sw, 2), gpus, &n, max))
		return n;
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
	/* a middle count where the fit is unsure: always for a pipeline
	 * (its constant term needs a third count), else when leaving one
	 * count out, or the other two-term model, moves the prediction */
	if (nok >= 2 && sw->middle < SWEEP_MIDDLES && kok > 0) {
		int mid = widest_gap(sw, kok), kink = micro_kink(sw, kok);

		if (kink)
			mid = kink;
		if (!kink || sw->middle)
			mid = fit_unsure(sw, kok, mid,
					 (1 + sw->middle) * SWEEP_UNSURE);
		if (mid) {
			sw->middle++;
			push(sw, mid, gpus, &n, max);
			if (n)
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

int saturn_sweep_probe(saturn_sweep_t *sw, int g)
{
	if (!sw || (!sw->complete && !sw->probes) || sw->exhaustive || g < sw->lo ||
	    g > sw->hi || sw->pts[g].state != SATURN_PT_PREDICTED ||
	    sw->borrowed[g] || sw->want[g])
		return 0;
	sw->want[g] = 1;
	sw->probes++;
	sw->complete = 0;
	return 1;
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
