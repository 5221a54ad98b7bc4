/* lpbound.c - the class-aware LP lower bound (doc/planner.md, "Lower
 * bounds"): what the dual bound cannot see on clusters of several GPU
 * types whose speed ratios differ from task to task.
 *
 * For a candidate makespan T, each free task t is split fractionally over
 * the node classes c where one of its options ends by T (release counted)
 * and fits (spase_fits() on enough nodes of c: a gang needs its k nodes):
 * y[t,c] >= 0, sum_c y[t,c] = 1. In class c the task costs a[t,c], the
 * smallest area (GPUs x nodes x runtime) of those options. T is rejected
 * when even the best split overloads a class, by any of:
 *   area:     for each release threshold rho (0 and up to LPB_MAX_REL - 1
 *             release values), the tasks released at or after rho fit in
 *             the GPU-seconds class c has free in [rho, T) (busy GPUs and
 *             running tasks taken out per GPU);
 *   midpoint: a task all of whose options in c that end by T must be
 *             running at instant T / 2 (latest start T - d <= T / 2 <
 *             earliest end r + d) holds at least their smallest width
 *             there: these widths fit in the GPUs of c free at T / 2;
 *   wide:     a task all of whose options in c take more than half of
 *             c's largest node cannot share a node with another such task
 *             at any instant: their node-times (nodes x runtime) fit in
 *             the time c's nodes able to hold more than half of that many
 *             GPUs have left before T.
 * Each is a fact of every plan of makespan <= T (an integral split is a
 * plan's), so a rejected T is a lower bound. With lambda = the largest
 * load over capacity, the LP min lambda is solved by lp_solve; T is
 * rejected when lambda > 1 + LPB_SLACK (lp_solve's tolerances are far
 * below it). Rejection is monotone in T (later T: more options, more
 * capacity), so bisection finds the smallest T accepted; the bound is the
 * largest T rejected. Deterministic: a fixed number of steps, no clock;
 * skipped (0) above LPB_MAX_COLS (task, class) pairs.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lpsolve/lp_lib.h>

#include "planner_int.h"

#define LPB_MAX_REL 8
#define LPB_MAX_COLS 6000
#define LPB_STEPS 60
#define LPB_TOL 1e-5
#define LPB_SLACK 1e-7

typedef struct lpb {
	const spase_inst_t *in;
	int nc, nv;
	int *vt, *vc;         /* per candidate: task, class */
	int *ostart, *ocount; /* per candidate: its options in olist */
	int *olist;
	int *has;             /* per task: 1 when free with work */
	double rel[LPB_MAX_REL];
	int nrel;
	int *cmax;            /* per class: GPUs of its largest node */
	/* per test */
	double *a, *w, *nt; /* area, midpoint width, wide node-time */
	int *colno;
	double *row, *x;
} lpb_t;

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void lpb_free(lpb_t *s)
{
	free(s->vt);
	free(s->vc);
	free(s->ostart);
	free(s->ocount);
	free(s->olist);
	free(s->has);
	free(s->cmax);
	free(s->a);
	free(s->w);
	free(s->nt);
	free(s->colno);
	free(s->row);
	free(s->x);
}

/* Candidates (task, class) and their options; the release thresholds.
 * Returns 0, 1 when there is nothing to gain (one class and no release,
 * too many pairs), -1 on ENOMEM. */
static int lpb_init(lpb_t *s, const spase_inst_t *in)
{
	int nc = in->p->nclasses > 0 ? in->p->nclasses : 1, nopt = 0, nr = 0;
	double *rels;

	memset(s, 0, sizeof(*s));
	s->in = in;
	s->nc = nc;
	for (int t = 0; t < in->nt; t++)
		nopt += in->t[t].nopt;
	s->vt = calloc((size_t)in->nt * (size_t)nc + 1, sizeof(int));
	s->vc = calloc((size_t)in->nt * (size_t)nc + 1, sizeof(int));
	s->ostart = calloc((size_t)in->nt * (size_t)nc + 1, sizeof(int));
	s->ocount = calloc((size_t)in->nt * (size_t)nc + 1, sizeof(int));
	s->olist = calloc((size_t)nopt * (size_t)nc + 1, sizeof(int));
	s->has = calloc((size_t)in->nt + 1, sizeof(int));
	s->cmax = calloc((size_t)nc, sizeof(int));
	rels = calloc((size_t)in->nt + 1, sizeof(double));
	if (!s->vt || !s->vc || !s->ostart || !s->ocount || !s->olist || !s->has ||
	    !s->cmax || !rels) {
		free(rels);
		return -1;
	}
	for (int n = 0; n < in->nn; n++)
		if (in->klass[n] >= 0 && in->klass[n] < nc && in->gpus[n] > s->cmax[in->klass[n]])
			s->cmax[in->klass[n]] = in->gpus[n];
	for (int t = 0, k = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];

		if (tk->pinned || tk->zero)
			continue;
		s->has[t] = 1;
		rels[nr++] = tk->release;
		for (int c = 0; c < nc; c++) {
			int first = k;

			for (int o = 0; o < tk->nopt; o++) {
				int fit = 0;

				for (int n = 0; n < in->nn; n++)
					fit += in->klass[n] == c && spase_fits(in, t, o, n);
				if (fit >= tk->opt[o].nodes)
					s->olist[k++] = o;
			}
			if (k > first) {
				s->vt[s->nv] = t;
				s->vc[s->nv] = c;
				s->ostart[s->nv] = first;
				s->ocount[s->nv] = k - first;
				s->nv++;
			}
		}
	}
	/* release thresholds: 0 and up to LPB_MAX_REL - 1 quantiles of the
	 * distinct positive releases */
	qsort(rels, (size_t)nr, sizeof(double), dbl_cmp);
	s->rel[s->nrel++] = 0;
	{
		int nd = 0;

		for (int i = 0; i < nr; i++)
			if (rels[i] > 0 && (nd == 0 || rels[nd - 1] != rels[i]))
				rels[nd++] = rels[i];
		for (int j = 1; j < LPB_MAX_REL && nd > 0; j++) {
			double v = rels[(size_t)((double)(j - 1) * nd / (LPB_MAX_REL - 1))];

			if (v > s->rel[s->nrel - 1])
				s->rel[s->nrel++] = v;
		}
	}
	free(rels);
	if ((nc < 2 && s->nrel < 2) || s->nv == 0 || s->nv > LPB_MAX_COLS)
		return 1;
	s->a = calloc((size_t)s->nv, sizeof(double));
	s->w = calloc((size_t)s->nv, sizeof(double));
	s->nt = calloc((size_t)s->nv, sizeof(double));
	s->colno = calloc((size_t)s->nv + 2, sizeof(int));
	s->row = calloc((size_t)s->nv + 2, sizeof(double));
	s->x = calloc((size_t)s->nv + 2, sizeof(double));
	if (!s->a || !s->w || !s->nt || !s->colno || !s->row || !s->x)
		return -1;
	return 0;
}

/* Free GPU-seconds of class c in [rho, T). */
static double cap_from(const spase_inst_t *in, int c, double rho, double T)
{
	double cap = 0;

	for (int n = 0; n < in->nn; n++) {
		if (in->klass[n] != c)
			continue;
		for (int g = 0; g < in->gpus[n]; g++) {
			double f = in->gpu_free[n][g] > rho ? in->gpu_free[n][g] : rho;

			if (T > f)
				cap += T - f;
		}
	}
	return cap;
}

/* GPUs of class c free at instant x. */
static double free_at(const spase_inst_t *in, int c, double x)
{
	double f = 0;

	for (int n = 0; n < in->nn; n++)
		for (int g = 0; g < in->gpus[n] && in->klass[n] == c; g++)
			f += in->gpu_free[n][g] <= x;
	return f;
}

/* Node time of class c before T on nodes that can hold more than half of
 * its largest node's GPUs (from the instant they have that many free). */
static double wide_time(const spase_inst_t *in, int c, int cmax, double T)
{
	double tot = 0;

	for (int n = 0; n < in->nn; n++) {
		int need = cmax / 2 + 1;
		double from;

		if (in->klass[n] != c || in->gpus[n] < need)
			continue;
		from = spase_prof_earliest(&in->base[n], need, 0, 0, NULL);
		if (T > from)
			tot += T - from;
	}
	return tot;
}

/* Coefficients at T. Returns 0 when some task has no option ending by T
 * (T is rejected), 1 otherwise. */
static int lpb_coef(lpb_t *s, double T)
{
	const spase_inst_t *in = s->in;
	int *seen = NULL;
	int ok = 1;

	for (int v = 0; v < s->nv; v++) {
		const spase_task_t *tk = &in->t[s->vt[v]];
		double a = INFINITY, w = INFINITY, nt = INFINITY, x = T / 2;
		int forced = 1, wide = 1;

		for (int i = 0; i < s->ocount[v]; i++) {
			const spase_opt_t *op = &tk->opt[s->olist[s->ostart[v] + i]];

			if (tk->release + op->dur > T)
				continue;
			if (op->area < a)
				a = op->area;
			if (!(T - op->dur <= x && tk->release + op->dur > x))
				forced = 0;
			else if (op->width < w)
				w = op->width;
			if (2 * op->gpus <= s->cmax[s->vc[v]])
				wide = 0;
			else if (op->nodes * op->dur < nt)
				nt = op->nodes * op->dur;
		}
		s->a[v] = a;
		s->w[v] = isfinite(a) && forced ? w : 0;
		s->nt[v] = isfinite(a) && wide ? nt : 0;
	}
	/* every task needs a class where it can end by T */
	seen = calloc((size_t)in->nt + 1, sizeof(int));
	if (!seen)
		return 1; /* out of memory: no claim */
	for (int v = 0; v < s->nv; v++)
		if (isfinite(s->a[v]))
			seen[s->vt[v]] = 1;
	for (int t = 0; t < in->nt; t++)
		if (s->has[t] && !seen[t])
			ok = 0;
	free(seen);
	return ok;
}

/* One row sum_v coef[v] / cap y_v - lambda <= 0 over the candidates of
 * class c selected by coef > 0; a zero capacity forbids them instead. */
static int lpb_row(lpb_t *s, lprec *lp, int c, const double *coef, double cap, double rho)
{
	int m = 0;

	for (int v = 0; v < s->nv; v++) {
		if (s->vc[v] != c || !isfinite(s->a[v]) || !(coef[v] > 0) ||
		    s->in->t[s->vt[v]].release < rho)
			continue;
		if (!(cap > 0)) {
			set_upbo(lp, v + 1, 0);
			continue;
		}
		s->colno[m] = v + 1;
		s->row[m++] = coef[v] / cap;
	}
	if (m == 0 || !(cap > 0))
		return 1;
	s->colno[m] = s->nv + 1;
	s->row[m++] = -1;
	return add_constraintex(lp, m, s->row, s->colno, LE, 0) ? 1 : 0;
}

/* Whether T is rejected (1), accepted (0; the split into frac when not
 * NULL), or unknown (-1: lp_solve failed, treated as accepted). */
static int lpb_test(lpb_t *s, double T, double *frac)
{
	const spase_inst_t *in = s->in;
	lprec *lp;
	int ret, rc = -1;

	if (!lpb_coef(s, T))
		return 1;
	lp = make_lp(0, s->nv + 1);
	if (!lp)
		return -1;
	set_outputfile(lp, "");
	set_verbose(lp, NEUTRAL);
	set_add_rowmode(lp, TRUE);
	for (int v = 0; v < s->nv; v++)
		if (!isfinite(s->a[v]))
			set_upbo(lp, v + 1, 0);
	/* one split per task */
	for (int v = 0; v < s->nv;) {
		int t = s->vt[v], m = 0;

		while (v < s->nv && s->vt[v] == t) {
			s->colno[m] = v + 1;
			s->row[m++] = 1;
			v++;
		}
		if (!add_constraintex(lp, m, s->row, s->colno, EQ, 1))
			goto out;
	}
	for (int c = 0; c < s->nc; c++) {
		for (int j = 0; j < s->nrel; j++)
			if (!lpb_row(s, lp, c, s->a, cap_from(in, c, s->rel[j], T), s->rel[j]))
				goto out;
		if (!lpb_row(s, lp, c, s->w, free_at(in, c, T / 2), 0) ||
		    !lpb_row(s, lp, c, s->nt, wide_time(in, c, s->cmax[c], T), 0))
			goto out;
	}
	set_add_rowmode(lp, FALSE);
	s->colno[0] = s->nv + 1;
	s->row[0] = 1;
	if (!set_obj_fnex(lp, 1, s->row, s->colno))
		goto out;
	set_minim(lp);
	ret = solve(lp);
	if (ret == INFEASIBLE) {
		/* every task has an allowed pair (lpb_coef), so only forbidden
		 * pairs (zero capacity) can leave a task without one */
		rc = 1;
	} else if (ret == OPTIMAL) {
		rc = get_objective(lp) > 1 + LPB_SLACK;
		if (!rc && frac && get_variables(lp, s->x)) {
			memset(frac, 0, sizeof(double) * (size_t)in->nt * (size_t)s->nc);
			for (int v = 0; v < s->nv; v++)
				frac[(size_t)s->vt[v] * (size_t)s->nc + (size_t)s->vc[v]] = s->x[v];
		}
	}
out:
	delete_lp(lp);
	return rc;
}

double spase_lp_bound(const spase_inst_t *in, double lower, double *frac)
{
	lpb_t s;
	double lo = lower, hi;
	int rc;

	if (!(lower > 0))
		return 0;
	rc = lpb_init(&s, in);
	if (rc != 0) {
		lpb_free(&s);
		return 0;
	}
	if (lpb_test(&s, lower, frac) != 1) {
		lpb_free(&s);
		return 0; /* nothing above lower */
	}
	hi = lower * 1.25;
	for (int i = 0; i < LPB_STEPS && lpb_test(&s, hi, frac) == 1; i++) {
		lo = hi;
		hi *= 2;
	}
	for (int i = 0; i < LPB_STEPS && hi - lo > LPB_TOL * hi; i++) {
		double mid = (lo + hi) / 2;

		if (lpb_test(&s, mid, frac) == 1)
			lo = mid;
		else
			hi = mid;
	}
	lpb_free(&s);
	/* lo was rejected: every plan is longer than lo */
	return lo;
}
