/* bounds.c - cheap lower bounds on the makespan.
 *
 * length: no task ends before the earliest end of its best option on an
 *         otherwise empty node (release, busy GPUs and running tasks
 *         counted; running tasks: their remaining runtime).
 * area:   the smallest T at which the GPU-seconds free in [0, T) (busy GPUs
 *         and running tasks taken out) hold every task's minimum area.
 * dual:   the moldable-task dual-approximation test, binary searched on T.
 *         T is rejected when, giving each task its cheapest option that
 *         ends by T, (i) the total area (also per node class, for tasks
 *         restricted to one class) exceeds the free GPU-seconds; (ii) the
 *         tasks that are longer than T/2 whatever option they take - all of
 *         which must be running at instant T/2 - cannot fit side by side in
 *         the GPUs free at T/2 (count and, for those wider than half the
 *         largest node, one per node); (iii) the tasks that are wider than
 *         half the largest node whatever option they take - no two of which
 *         can share a node at once - need more than T of sequential time on
 *         each node able to take them; (iv) with two node classes, even
 *         the best fractional split of the tasks between the classes
 *         (each at its cheapest option there) overloads one.
 * Multi-node options (a gang of k nodes, g GPUs on each): the area is
 * k x g x dur, the length the earliest instant k nodes are free at once;
 * (ii) counts all k x g GPUs and, for the wide test, k parts of g GPUs
 * that each need a node of their own; (iii) counts k x dur of node time.
 * Every test only uses facts true of
 *         every schedule of makespan <= T, so the bound is valid; it is
 *         monotone in T, so bisection finds it.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

/* Free GPU-seconds in [0, T) on the nodes of class klass (-1 = all). */
static double capacity(const spase_inst_t *in, double T, int klass)
{
	double c = 0;

	for (int n = 0; n < in->nn; n++) {
		if (klass >= 0 && in->klass[n] != klass)
			continue;
		for (int g = 0; g < in->gpus[n]; g++)
			if (T > in->gpu_free[n][g])
				c += T - in->gpu_free[n][g];
	}
	return c;
}

/* GPUs of node n free at instant x. */
static int free_at(const spase_inst_t *in, int n, double x)
{
	int c = 0;

	for (int g = 0; g < in->gpus[n]; g++)
		if (in->gpu_free[n][g] <= x)
			c++;
	return c;
}

/* The class a task is restricted to (all its options), or -1. */
static int task_class(const spase_task_t *t)
{
	int k = t->opt[0].klass;

	for (int o = 1; o < t->nopt; o++)
		if (t->opt[o].klass != k)
			return -1;
	return k;
}

static int int_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

typedef struct dual_scratch {
	double *a0, *a1;    /* two classes: per task area in class 0 / 1 */
	int *idx;
	double *class_area; /* per class */
	int *class_long;    /* per class: GPUs of long tasks */
	int *wide;          /* widths of long tasks wider than half a node */
	int *nodefree;      /* per node free GPUs at T/2 */
} dual_scratch_t;

/* Largest node of class k. */
static int class_max_gpus(const spase_inst_t *in, int k)
{
	int m = 0;

	for (int n = 0; n < in->nn; n++)
		if (in->klass[n] == k && in->gpus[n] > m)
			m = in->gpus[n];
	return m;
}

static int ratio_desc(const void *a, const void *b, void *arg)
{
	const dual_scratch_t *s = arg;
	int x = *(const int *)a, y = *(const int *)b;
	double rx = s->a1[x] / s->a0[x], ry = s->a1[y] / s->a0[y];

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return x - y;
}

/* With exactly two node classes: the fractional assignment of tasks to
 * classes that loads class 1 least, given class 0's free GPU-seconds, must
 * fit class 1's (a fractional knapsack, solved exactly by the ratio rule).
 * A task's area in a class is that of its cheapest option ending by T
 * allowed there. */
static int two_class_ok(const spase_inst_t *in, double T, dual_scratch_t *s)
{
	double c0 = capacity(in, T, 0), c1 = capacity(in, T, 1);
	int g0 = class_max_gpus(in, 0), g1 = class_max_gpus(in, 1), nf = 0;

	for (int t = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];
		double a[2] = {INFINITY, INFINITY};

		if (tk->pinned)
			continue;
		for (int o = 0; o < tk->nopt; o++) {
			const spase_opt_t *op = &tk->opt[o];

			if (tk->release + op->dur > T)
				continue;
			if ((op->klass < 0 || op->klass == 0) && op->gpus <= g0 &&
			    op->area < a[0])
				a[0] = op->area;
			if ((op->klass < 0 || op->klass == 1) && op->gpus <= g1 &&
			    op->area < a[1])
				a[1] = op->area;
		}
		if (!isfinite(a[0]) && !isfinite(a[1]))
			return 0;
		if (!isfinite(a[1])) {
			c0 -= a[0];
		} else if (!isfinite(a[0])) {
			c1 -= a[1];
		} else if (a[0] <= 0 || a[1] <= 0) {
			continue; /* zero area: free anywhere */
		} else {
			s->a0[t] = a[0];
			s->a1[t] = a[1];
			s->idx[nf++] = t;
		}
	}
	if (c0 < -1e-9 * (1 + T) || c1 < -1e-9 * (1 + T))
		return 0;
	qsort_r(s->idx, (size_t)nf, sizeof(int), ratio_desc, s);
	for (int i = 0; i < nf; i++) {
		int t = s->idx[i];

		if (c0 >= s->a0[t]) {
			c0 -= s->a0[t];
		} else {
			double frac = c0 > 0 ? c0 / s->a0[t] : 0;

			c0 = 0;
			c1 -= (1 - frac) * s->a1[t];
		}
	}
	return c1 >= -1e-9 * (1 + T);
}

static int dual_ok(const spase_inst_t *in, double T, dual_scratch_t *s)
{
	int nc = in->p->nclasses > 0 ? in->p->nclasses : 1;
	double area = 0, wide_time = 0;
	long long long_gpus = 0, free_half = 0;
	int nwide = 0, nodes_wide = 0, maxfree = 0;

	memset(s->class_area, 0, sizeof(double) * (size_t)nc);
	memset(s->class_long, 0, sizeof(int) * (size_t)nc);
	for (int n = 0; n < in->nn; n++) {
		s->nodefree[n] = free_at(in, n, T / 2);
		free_half += s->nodefree[n];
		if (s->nodefree[n] > maxfree)
			maxfree = s->nodefree[n];
		if (2 * in->gpus[n] > in->max_gpus)
			nodes_wide++;
	}
	for (int t = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];
		double amin = INFINITY, dmin = INFINITY, ntmin = INFINITY;
		int gmin = 1 << 30, gnode = 1 << 30, kmin = 1 << 30, k;

		if (tk->pinned)
			continue;
		/* Independent minima over the options ending by T: total GPUs
		 * (gmin), GPUs per node (gnode), nodes (kmin), node-time
		 * (ntmin = nodes x dur); each is a fact of every such option. */
		for (int o = 0; o < tk->nopt; o++) {
			const spase_opt_t *op = &tk->opt[o];

			if (tk->release + op->dur > T)
				continue;
			if (op->area < amin)
				amin = op->area;
			if (op->dur < dmin)
				dmin = op->dur;
			if (op->width < gmin)
				gmin = op->width;
			if (op->gpus < gnode)
				gnode = op->gpus;
			if (op->nodes < kmin)
				kmin = op->nodes;
			if (op->nodes * op->dur < ntmin)
				ntmin = op->nodes * op->dur;
		}
		if (!isfinite(amin))
			return 0;
		area += amin;
		k = task_class(tk);
		if (k >= 0 && k < nc)
			s->class_area[k] += amin;
		if (dmin > T / 2) {
			long_gpus += gmin;
			if (k >= 0 && k < nc)
				s->class_long[k] += gmin;
			/* each of its >= kmin node parts of >= gnode GPUs
			 * needs a node of its own at T/2 */
			if (2 * gnode > maxfree) {
				if (nwide + kmin > in->nn)
					return 0;
				for (int j = 0; j < kmin; j++)
					s->wide[nwide++] = gnode;
			}
		}
		if (2 * gnode > in->max_gpus)
			wide_time += ntmin;
	}
	if (area > capacity(in, T, -1) * (1 + 1e-12))
		return 0;
	if (long_gpus > free_half)
		return 0;
	for (int k = 0; k < nc && in->p->nclasses > 1; k++) {
		long long f = 0;

		if (s->class_area[k] > capacity(in, T, k) * (1 + 1e-12))
			return 0;
		for (int n = 0; n < in->nn; n++)
			if (in->klass[n] == k)
				f += s->nodefree[n];
		if (s->class_long[k] > f)
			return 0;
	}
	if (nwide > 0) {
		/* The widest long task needs the node with most free GPUs, the
		 * next the second, ... (they cannot share a node). */
		qsort(s->wide, (size_t)nwide, sizeof(int), int_desc);
		qsort(s->nodefree, (size_t)in->nn, sizeof(int), int_desc);
		for (int i = 0; i < nwide; i++)
			if (s->wide[i] > s->nodefree[i])
				return 0;
	}
	if (wide_time > T * nodes_wide * (1 + 1e-12))
		return 0;
	if (in->p->nclasses == 2 && !two_class_ok(in, T, s))
		return 0;
	return 1;
}

/* Smallest T with the free GPU-seconds in [0, T) >= a. */
static double area_bound(const spase_inst_t *in, double a)
{
	double lo = 0, hi = 1;

	if (a <= 0)
		return 0;
	for (int i = 0; i < 2000 && capacity(in, hi, -1) < a; i++)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (capacity(in, mid, -1) >= a)
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

void spase_bounds(const spase_inst_t *in, saturn_bounds_t *b, double *frac,
		  spase_clock_t *lp_clk)
{
	int nc = in->p->nclasses > 0 ? in->p->nclasses : 1;
	dual_scratch_t s;
	double a = 0, lo, hi;
	char *ok = calloc((size_t)in->nn + 1, 1);
	double *gs = calloc((size_t)in->nn + 1, sizeof(double));
	int *gn = calloc((size_t)in->max_nodes + 1, sizeof(int));

	memset(b, 0, sizeof(*b));
	b->length = in->pinned_end;
	for (int t = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];
		double l = tk->pinned ? tk->opt[0].dur : INFINITY;

		/* A zero-length task holds no GPU time: a plan is valid with
		 * it at its release even where every GPU is busy then
		 * (validate.c), so its release is all it proves. (Counting
		 * the instant its GPUs are free, as the decoder places it,
		 * gave a bound above a valid plan: a warm plan taken
		 * literally, makespan 0 against a bound of 100 s.) */
		if (tk->zero && !tk->pinned)
			l = tk->release;
		/* Earliest end on an otherwise empty node (busy GPUs and
		 * running tasks still count). Only the largest over the tasks
		 * counts: a task stops as soon as one of its ends is no later
		 * than the largest so far (the same bound; thousands of tasks
		 * x options x nodes took 2 s at 5,000 tasks, issue 22). */
		for (int o = 0; o < tk->nopt && !tk->pinned && !tk->zero &&
				l > b->length; o++) {
			if (tk->opt[o].nodes > 1 && ok && gs && gn) {
				/* a gang: the earliest k nodes free at once */
				double e;

				for (int n = 0; n < in->nn; n++)
					ok[n] = (char)spase_fits(in, t, o, n);
				e = spase_gang_earliest(in, in->base, ok,
							tk->opt[o].gpus,
							tk->opt[o].nodes,
							tk->opt[o].dur,
							tk->release, -1, gs,
							gn) +
				    tk->opt[o].dur;
				if (e < l)
					l = e;
				continue;
			}
			if (tk->opt[o].nodes > 1) {
				/* out of memory: a weaker but valid end */
				if (tk->release + tk->opt[o].dur < l)
					l = tk->release + tk->opt[o].dur;
				continue;
			}
			for (int n = 0; n < in->nn && l > b->length; n++) {
				double e;

				if (!spase_fits(in, t, o, n))
					continue;
				e = spase_prof_earliest(&in->base[n],
							tk->opt[o].gpus,
							tk->opt[o].dur,
							tk->release, NULL) +
				    tk->opt[o].dur;
				if (e < l)
					l = e;
			}
		}

		if (l > b->length)
			b->length = l;
		if (!tk->pinned)
			a += tk->opt[tk->min_area_opt].area;
	}
	free(ok);
	free(gs);
	free(gn);
	b->area = area_bound(in, a);
	lo = b->length > b->area ? b->length : b->area;
	b->dual = lo;
	s.a0 = calloc((size_t)in->nt + 1, sizeof(double));
	s.a1 = calloc((size_t)in->nt + 1, sizeof(double));
	s.idx = calloc((size_t)in->nt + 1, sizeof(int));
	s.class_area = calloc((size_t)nc, sizeof(double));
	s.class_long = calloc((size_t)nc, sizeof(int));
	s.wide = calloc((size_t)in->nn + 1, sizeof(int));
	s.nodefree = calloc((size_t)in->nn + 1, sizeof(int));
	if (!s.class_area || !s.class_long || !s.wide || !s.nodefree ||
	    !s.a0 || !s.a1 || !s.idx)
		goto out; /* out of memory: the dual bound stays at lo */
	if (!dual_ok(in, lo, &s)) {
		hi = lo > 0 ? lo * 2 : 1;
		for (int i = 0; i < 2000 && !dual_ok(in, hi, &s); i++)
			hi *= 2;
		for (int i = 0; i < 200 && hi - lo > 1e-10 * hi; i++) {
			double mid = (lo + hi) / 2;

			if (dual_ok(in, mid, &s))
				hi = mid;
			else
				lo = mid;
		}
		/* lo is infeasible, so every plan is longer than lo. */
		b->dual = lo;
	}
out:
	free(s.a0);
	free(s.a1);
	free(s.idx);
	free(s.class_area);
	free(s.class_long);
	free(s.wide);
	free(s.nodefree);
	b->best = b->length;
	if (b->area > b->best)
		b->best = b->area;
	if (b->dual > b->best)
		b->best = b->dual;
	b->lp = spase_lp_bound(in, b->best, frac, lp_clk);
	if (b->lp > b->best)
		b->best = b->lp;
}

/* Here, not in planner.c: a carried plan is labelled with these every
 * cycle (sched_plan.c), without pulling in the search and lp_solve. */
int saturn_planner_bounds_cheap(const saturn_problem_t *p, saturn_bounds_t *b,
				saturn_error_t *err)
{
	spase_inst_t *in = spase_inst_create(p);
	spase_clock_t clk = spase_clock_in(SPASE_CHEAP_LP_S);

	memset(b, 0, sizeof(*b));
	if (!in)
		return saturn_error_set(err, "planner: out of memory");
	spase_bounds(in, b, NULL, &clk);
	spase_inst_destroy(in);
	return 0;
}
