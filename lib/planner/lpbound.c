/* lpbound.c - the class-aware LP lower bound (doc/planner.md, "Lower
 * bounds"): what the dual bound cannot see on clusters of several GPU
 * types whose speed ratios differ from task to task.
 *
 * For a candidate makespan T, each free task t is split fractionally over
 * the node classes c where one of its options ends by T (release counted)
 * and fits (spase_fits() on enough nodes of c: a gang needs its k nodes):
 * y[t,c] >= 0, sum_c y[t,c] = 1. An option starts at some s in [r, T - d]
 * (r: the task's release, d: its runtime). In each row below, the task
 * costs in class c the least of that row's cost over its options of c
 * that end by T. T is rejected when even the best split overloads a
 * class, by any of:
 *   energy:   for a window [a, b), the option runs inside it for at least
 *             the least overlap of [s, s + d) with [a, b) over those s
 *             (at s = r or s = T - d: the overlap is unimodal in s), on
 *             its width (GPUs x nodes); these GPU-seconds fit in the
 *             GPU-seconds class c has free in [a, b) (busy GPUs and
 *             running tasks taken out per GPU). Windows: [rho, T) for
 *             rho = 0 and up to LPB_MAX_REL - 1 release values (the work a
 *             task released before rho still has after it counts), and
 *             [a, b) for a < b on a grid of fractions of T;
 *   instant:  an option that runs at instant x whatever its start (T - d
 *             <= x < r + d) holds its width there: these widths fit in the
 *             GPUs of c free at x, for a few x (fractions of T);
 *   wide:     an option wider than half of c's largest node cannot share
 *             a node with another such option at any instant: their
 *             node-times (nodes x runtime) fit in the time c's nodes able
 *             to hold more than half of that many GPUs have left before T.
 * Each is a fact of every plan of makespan <= T (a plan's choices are an
 * integral split), so a rejected T is a lower bound (at that T, whether or
 * not rejection is monotone in T). One column per option instead of per
 * class would tie the rows' costs to one option, but was measured 5-20
 * times slower on Gavel's families for a bound under 1% higher; finer
 * windows and instants (grids of T/8, T/12), bin-packing rows (a dual-
 * feasible function of each GPU's busy time) and an integral split were
 * measured too, under 0.1% higher on average (doc/benchmarks.md). With
 * lambda = the largest load over capacity, the LP min lambda is solved by
 * lp_solve; T is rejected when lambda > 1 + LPB_SLACK (lp_solve's
 * tolerances are far below it) and the rejection is certified without
 * lp_solve (lpb_certify(): weak duality from its duals, or a task left
 * with no allowed column), since lp_solve has answered "optimal" with a
 * wrong objective after an accuracy error; a failed or uncertified solve
 * is tried again with two other simplex types. Bisection looks for the
 * smallest T accepted (rejection is monotone in T for the [rho, T)
 * windows, nearly so for the others); the bound is the largest T it saw
 * rejected.
 * Deterministic: a fixed number of steps; skipped (0) above LPB_MAX_COLS
 * (task, class) pairs. A clock (the caller's share of its budget) stops it
 * early, inside lp_solve too (its abort callback): each test is one LP of
 * up to LPB_MAX_COLS columns, and the 60-odd tests of a bisection took
 * 20 s at 2,500 tasks in two classes of three (issue 22). Stopped, the
 * bound is the largest T rejected so far (still a bound, only lower).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lpsolve/lp_lib.h>

#include "planner_int.h"

#define LPB_MAX_REL 64
#define LPB_MAX_COLS 6000
#define LPB_STEPS 60
#define LPB_TOL 1e-5
#define LPB_SLACK 1e-7

/* Windows [a, b) as fractions of T, and instants, besides [rho, T). */
static const double win_a[] = {0, 0, 0, 0.25, 0.25, 1.0 / 3, 0.5, 0.5, 2.0 / 3, 0.75};
static const double win_b[] = {0.25, 0.5, 0.75, 0.5, 0.75, 2.0 / 3, 0.75, 1, 1, 1};
#define NWIN (int)(sizeof(win_a) / sizeof(win_a[0]))
static const double inst_x[] = {0.25, 1.0 / 3, 0.5, 2.0 / 3, 0.75};
#define NINST (int)(sizeof(inst_x) / sizeof(inst_x[0]))

typedef struct lpb {
	const spase_inst_t *in;
	spase_clock_t *clk;   /* NULL: no limit */
	int nc, nv;
	int *vt, *vc;         /* per column: task, class */
	int *ostart, *ocount; /* per column: its options in olist */
	int *olist;
	int *has;             /* per task: 1 when free with work */
	double rel[LPB_MAX_REL];
	int nrel;
	int *cmax;            /* per class: GPUs of its largest node */
	/* per test: per row kind k (nrel release windows, NWIN windows,
	 * NINST instants, 1 wide) and column v: coef[k * nv + v] */
	int nrows;
	double *coef;
	char *ok;             /* per column: one of its options ends by T */
	char *forb;           /* per column: in a row of zero capacity */
	int *rk, *rc;         /* per capacity row of the LP: kind, class */
	double *rcap;         /* and its capacity */
	int nlr;              /* capacity rows in the LP */
	int *colno;
	double *row, *x, *dual;
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
	free(s->coef);
	free(s->ok);
	free(s->forb);
	free(s->rk);
	free(s->rc);
	free(s->rcap);
	free(s->dual);
	free(s->colno);
	free(s->row);
	free(s->x);
}

/* Columns (task, class) and their options; the release thresholds.
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
	 * distinct positive releases (all of them when there are fewer) */
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
	s->nrows = s->nrel + NWIN + NINST + 1;
	s->coef = calloc((size_t)s->nv * (size_t)s->nrows, sizeof(double));
	s->ok = calloc((size_t)s->nv + 1, 1);
	s->forb = calloc((size_t)s->nv + 1, 1);
	s->rk = calloc((size_t)s->nrows * (size_t)nc, sizeof(int));
	s->rc = calloc((size_t)s->nrows * (size_t)nc, sizeof(int));
	s->rcap = calloc((size_t)s->nrows * (size_t)nc, sizeof(double));
	/* lp_solve's duals: 1 + rows (task splits, capacity rows) + columns */
	s->dual = calloc((size_t)in->nt + (size_t)s->nrows * (size_t)nc +
			 (size_t)s->nv + 3, sizeof(double));
	s->colno = calloc((size_t)s->nv + 2, sizeof(int));
	s->row = calloc((size_t)s->nv + 2, sizeof(double));
	s->x = calloc((size_t)s->nv + 2, sizeof(double));
	if (!s->coef || !s->ok || !s->forb || !s->rk || !s->rc || !s->rcap ||
	    !s->dual || !s->colno || !s->row || !s->x)
		return -1;
	return 0;
}

/* Free GPU-seconds of class c in [a, b). */
static double cap_in(const spase_inst_t *in, int c, double a, double b)
{
	double cap = 0;

	for (int n = 0; n < in->nn; n++) {
		if (in->klass[n] != c)
			continue;
		for (int g = 0; g < in->gpus[n]; g++) {
			double f = in->gpu_free[n][g] > a ? in->gpu_free[n][g] : a;

			if (b > f)
				cap += b - f;
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

/* Overlap of [s, s + d) with [a, b). */
static double overlap(double s, double d, double a, double b)
{
	double lo = s > a ? s : a, hi = s + d < b ? s + d : b;

	return hi > lo ? hi - lo : 0;
}

/* Least time an option of runtime d started in [r, T - d] runs in [a, b):
 * the overlap is unimodal in the start, so it is least at an end. */
static double least_overlap(double r, double d, double T, double a, double b)
{
	double x = overlap(r, d, a, b), y = overlap(T - d, d, a, b);

	return x < y ? x : y;
}

/* Row k's cost of option op (release r) at T. */
static double opt_cost(const lpb_t *s, int k, int c, const spase_opt_t *op, double r, double T)
{
	double d = op->dur;

	if (k < s->nrel)
		return op->width * least_overlap(r, d, T, s->rel[k], T);
	k -= s->nrel;
	if (k < NWIN)
		return op->width * least_overlap(r, d, T, win_a[k] * T, win_b[k] * T);
	k -= NWIN;
	if (k < NINST)
		return T - d <= inst_x[k] * T && r + d > inst_x[k] * T ? op->width : 0;
	return 2 * op->gpus > s->cmax[c] ? op->nodes * d : 0;
}

/* Coefficients at T: per row, the least cost over the column's options
 * that end by T. Returns 0 when some task has no option ending by T (T is
 * rejected), 1 otherwise. */
static int lpb_coef(lpb_t *s, double T)
{
	const spase_inst_t *in = s->in;
	size_t nv = (size_t)s->nv;
	int *seen = NULL;
	int ok = 1;

	for (int v = 0; v < s->nv; v++) {
		const spase_task_t *tk = &in->t[s->vt[v]];

		s->ok[v] = 0;
		for (int k = 0; k < s->nrows; k++)
			s->coef[(size_t)k * nv + (size_t)v] = INFINITY;
		for (int i = 0; i < s->ocount[v]; i++) {
			const spase_opt_t *op = &tk->opt[s->olist[s->ostart[v] + i]];

			if (tk->release + op->dur > T)
				continue;
			s->ok[v] = 1;
			for (int k = 0; k < s->nrows; k++) {
				double x = opt_cost(s, k, s->vc[v], op, tk->release, T);
				double *cf = &s->coef[(size_t)k * nv + (size_t)v];

				if (x < *cf)
					*cf = x;
			}
		}
	}
	/* every task needs a class where it can end by T */
	seen = calloc((size_t)in->nt + 1, sizeof(int));
	if (!seen)
		return 1; /* out of memory: no claim */
	for (int v = 0; v < s->nv; v++)
		if (s->ok[v])
			seen[s->vt[v]] = 1;
	for (int t = 0; t < in->nt; t++)
		if (s->has[t] && !seen[t])
			ok = 0;
	free(seen);
	return ok;
}

/* One row sum_v coef[v] / cap y_v - lambda <= 0 over the columns of class
 * c with coef > 0 (row kind k, recorded for lpb_certify()); a zero
 * capacity forbids them instead. */
static int lpb_row(lpb_t *s, lprec *lp, int c, int k, const double *coef, double cap)
{
	int m = 0;

	for (int v = 0; v < s->nv; v++) {
		if (s->vc[v] != c || !s->ok[v] || !(coef[v] > 0))
			continue;
		if (!(cap > 0)) {
			set_upbo(lp, v + 1, 0);
			s->forb[v] = 1;
			continue;
		}
		s->colno[m] = v + 1;
		s->row[m++] = coef[v] / cap;
	}
	if (m == 0 || !(cap > 0))
		return 1;
	s->colno[m] = s->nv + 1;
	s->row[m++] = -1;
	if (!add_constraintex(lp, m, s->row, s->colno, LE, 0))
		return 0;
	s->rk[s->nlr] = k;
	s->rc[s->nlr] = c;
	s->rcap[s->nlr++] = cap;
	return 1;
}

/* Capacity of row kind k of class c at T. */
static double row_cap(const lpb_t *s, int c, int k, double T)
{
	if (k < s->nrel)
		return cap_in(s->in, c, s->rel[k], T);
	k -= s->nrel;
	if (k < NWIN)
		return cap_in(s->in, c, win_a[k] * T, win_b[k] * T);
	k -= NWIN;
	if (k < NINST)
		return free_at(s->in, c, inst_x[k] * T);
	return wide_time(s->in, c, s->cmax[c], T);
}

/* lp_solve's abort callback: the clock (deadline or the caller's abort). */
static int __WINAPI lpb_abort(lprec *lp, void *arg)
{
	(void)lp;
	return spase_stop(arg) ? TRUE : FALSE;
}

void (*spase_lp_dual_hook)(double *dual, int n);

/* Whether the clock (if any) says stop. */
static int lpb_stop(lpb_t *s)
{
	return s->clk && spase_stop(s->clk);
}

/* Whether lp_solve's rejection of T holds, checked without trusting it:
 * 1 when it does, -1 (unknown) when not. A task with every column
 * forbidden (no option ending by T, or one in a row of zero capacity)
 * rejects T outright. Otherwise (with duals) weak duality: for any
 * weights mu_i >= 0 on the capacity rows, summing to 1, every split y
 * has lambda >= sum_i mu_i load_i(y) >= sum_t min over t's allowed
 * columns v of sum_i mu_i a_iv; the weights are the magnitudes of
 * lp_solve's duals (any non-negative weights give a valid bound, so
 * their sign convention and accuracy only decide its strength). */
static int lpb_certify(lpb_t *s, lprec *lp, int nsplit, int duals)
{
	size_t nv = (size_t)s->nv;
	double msum = 0, lam = 0, *w = s->x;

	if (duals && !get_dual_solution(lp, s->dual))
		return -1;
	if (duals && spase_lp_dual_hook)
		spase_lp_dual_hook(s->dual, 1 + get_Nrows(lp) + get_Ncolumns(lp));
	memset(w, 0, sizeof(double) * nv);
	for (int i = 0; i < s->nlr && duals; i++) {
		double mu = fabs(s->dual[1 + nsplit + i]);
		const double *coef = &s->coef[(size_t)s->rk[i] * nv];

		if (!isfinite(mu) || !(mu > 0))
			continue;
		msum += mu;
		for (int v = 0; v < s->nv; v++)
			if (s->vc[v] == s->rc[i] && s->ok[v] && !s->forb[v] && coef[v] > 0)
				w[v] += mu * coef[v] / s->rcap[i];
	}
	for (int v = 0; v < s->nv;) {
		int t = s->vt[v];
		double best = INFINITY;

		for (; v < s->nv && s->vt[v] == t; v++)
			if (s->ok[v] && !s->forb[v] && w[v] < best)
				best = w[v];
		if (!isfinite(best))
			return 1; /* no allowed column: no plan ends by T */
		lam += best;
	}
	return msum > 0 && lam > (1 + LPB_SLACK) * msum ? 1 : -1;
}

/* Whether T is rejected (1, certified by lpb_certify()), accepted (0;
 * the split into frac when not NULL), or unknown (-1: lp_solve failed
 * three times, its rejection could not be certified, or the clock
 * stopped it; treated as accepted). */
static int lpb_test(lpb_t *s, double T, double *frac)
{
	const spase_inst_t *in = s->in;
	lprec *lp;
	int ret, rc = -1, nsplit = 0;

	if (!lpb_coef(s, T))
		return 1;
	memset(s->forb, 0, (size_t)s->nv);
	s->nlr = 0;
	lp = make_lp(0, s->nv + 1);
	if (!lp)
		return -1;
	set_outputfile(lp, "");
	set_verbose(lp, NEUTRAL);
	if (s->clk)
		put_abortfunc(lp, lpb_abort, s->clk);
	set_add_rowmode(lp, TRUE);
	for (int v = 0; v < s->nv; v++)
		if (!s->ok[v])
			set_upbo(lp, v + 1, 0);
	/* one split per task (its columns are consecutive) */
	for (int v = 0; v < s->nv; nsplit++) {
		int t = s->vt[v], m = 0;

		while (v < s->nv && s->vt[v] == t) {
			s->colno[m] = v + 1;
			s->row[m++] = 1;
			v++;
		}
		if (!add_constraintex(lp, m, s->row, s->colno, EQ, 1))
			goto out;
	}
	for (int c = 0; c < s->nc; c++)
		for (int k = 0; k < s->nrows; k++)
			if (!lpb_row(s, lp, c, k, &s->coef[(size_t)k * (size_t)s->nv],
				     row_cap(s, c, k, T)))
				goto out;
	set_add_rowmode(lp, FALSE);
	s->colno[0] = s->nv + 1;
	s->row[0] = 1;
	if (!set_obj_fnex(lp, 1, s->row, s->colno))
		goto out;
	set_minim(lp);
	/* lp_solve's first answer, then two other simplex types where it
	 * failed or its rejection could not be certified: after an accuracy
	 * error a second solve has returned "optimal" with a load 50 times
	 * too high, so no answer is taken on its word (lpb_certify()) */
	for (int tr = 0; tr < 3 && rc == -1 && !lpb_stop(s); tr++) {
		if (tr > 0) {
			default_basis(lp);
			set_simplextype(lp, tr == 1 ? SIMPLEX_PRIMAL_PRIMAL : SIMPLEX_DUAL_DUAL);
		}
		ret = solve(lp);
		if (ret == INFEASIBLE) {
			rc = lpb_certify(s, lp, nsplit, 0);
		} else if (ret == OPTIMAL && get_objective(lp) > 1 + LPB_SLACK) {
			/* the duals, from the optimal basis (sensitivity
			 * analysis on every solve cost twice the time) */
			set_presolve(lp, PRESOLVE_SENSDUALS, get_presolveloops(lp));
			ret = solve(lp);
			set_presolve(lp, PRESOLVE_NONE, get_presolveloops(lp));
			rc = ret == OPTIMAL ? lpb_certify(s, lp, nsplit, 1) : -1;
		} else if (ret == OPTIMAL) {
			rc = 0;
			if (frac && get_variables(lp, s->x)) {
				memset(frac, 0, sizeof(double) * (size_t)in->nt * (size_t)s->nc);
				for (int v = 0; v < s->nv; v++)
					frac[(size_t)s->vt[v] * (size_t)s->nc + (size_t)s->vc[v]] = s->x[v];
			}
		}
	}
out:
	delete_lp(lp);
	return rc;
}

double spase_lp_bound(const spase_inst_t *in, double lower, double *frac,
		      spase_clock_t *clk)
{
	lpb_t s;
	double lo = lower, hi;
	int rc;

	if (!(lower > 0) || (clk && spase_stop(clk)))
		return 0;
	rc = lpb_init(&s, in);
	s.clk = clk;
	if (rc != 0) {
		lpb_free(&s);
		return 0;
	}
	if (lpb_test(&s, lower, frac) != 1) {
		lpb_free(&s);
		return 0; /* nothing above lower */
	}
	hi = lower * 1.25;
	for (int i = 0; i < LPB_STEPS && !lpb_stop(&s) && lpb_test(&s, hi, frac) == 1; i++) {
		lo = hi;
		hi *= 2;
	}
	for (int i = 0; i < LPB_STEPS && hi - lo > LPB_TOL * hi && !lpb_stop(&s); i++) {
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
