/* test_lpbound.c - the class-aware LP bound (lib/planner/lpbound.c) and every
 * other bound of saturn_planner_bounds(), and the class-aware choices of
 * the search (classseed.c, the decoder, the heuristics' best on several
 * classes): hand-computed values, the refusal of a rejection lp_solve's
 * duals do not certify (spase_lp_dual_hook), and validity against exhaustive search on tiny random instances that have
 * node classes, release times, options on several nodes, a running task,
 * busy GPUs, a task released to a node and zero-length tasks. The same
 * check is shown to fail for a deliberately wrong bound (the bounds of the
 * problem cut down to each task's fastest option), so it has teeth. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "planner_fixtures.h"
#include "planner_int.h"

static saturn_bounds_t bounds(saturn_problem_t *p)
{
	saturn_bounds_t b;
	saturn_error_t err = {{0}};

	ck_assert_msg(saturn_planner_bounds(p, &b, &err) == 0, "%s", err.text);
	ck_assert_double_ge(b.best, b.lp);
	ck_assert_double_ge(b.best, b.dual);
	return b;
}

/* Three 1-GPU nodes of classes a, b, c; six tasks of 10 s on a and 100 s
 * on b or c. Below 100 s every task must run on a: 60 s, the optimum.
 * The dual bound sees 60 GPU-s on 3 GPUs (20 s). */
static saturn_problem_t *three_classes(void)
{
	static const opt_spec_t o[] = {{"ddp", 1, 10, "a"}, {"ddp", 1, 100, "b"},
				       {"ddp", 1, 100, "c"}};
	saturn_problem_t *p = fx_problem();
	char id[8];

	fx_node(p, "na", 1, "a");
	fx_node(p, "nb", 1, "b");
	fx_node(p, "nc", 1, "c");
	for (int i = 0; i < 6; i++) {
		snprintf(id, sizeof(id), "t%d", i);
		fx_task(p, id, 1, 0, o, 3);
	}
	fx_check(p);
	return p;
}

START_TEST(test_three_classes)
{
	saturn_problem_t *p = three_classes();
	saturn_bounds_t b;

	b = bounds(p);
	ck_assert_double_lt(b.dual, 30);
	ck_assert_double_eq_tol(b.lp, 60, 60 * 2e-5);
	ck_assert_double_le(b.lp, 60);
	saturn_problem_destroy(p);
}
END_TEST

/* lp_solve's duals as spase_lp_dual_hook finds them: zeroed on every
 * solve (wrong_every 1) or on the first of every two (2), counted. */
static int wrong_every, dual_calls;

static void wrong_duals(double *dual, int n)
{
	if (dual_calls++ % wrong_every == 0)
		memset(dual, 0, sizeof(double) * (size_t)n);
}

/* A rejection of T that lp_solve's duals do not certify is refused: on
 * three_classes() (where every T below 60 is rejected from the duals,
 * lambda = 60 / T on class a), duals that certify nothing (all zero) on
 * every simplex type leave no T proven too short, and the LP bound is 0
 * (nothing above the others); wrong duals on the first solve only are
 * retried with another simplex type, whose duals certify, and the bound
 * stands. */
START_TEST(test_lp_refused)
{
	saturn_problem_t *p = three_classes();
	saturn_bounds_t b;

	wrong_every = 1;
	dual_calls = 0;
	spase_lp_dual_hook = wrong_duals;
	b = bounds(p);
	spase_lp_dual_hook = NULL;
	ck_assert_double_eq(b.lp, 0);
	/* the first T: three simplex types, each refused */
	ck_assert_int_eq(dual_calls, 3);
	ck_assert_double_lt(b.best, 30);
	ck_assert_double_ge(b.best, b.dual);

	wrong_every = 2;
	dual_calls = 0;
	spase_lp_dual_hook = wrong_duals;
	b = bounds(p);
	spase_lp_dual_hook = NULL;
	ck_assert_int_gt(dual_calls, 3);
	ck_assert_double_eq_tol(b.lp, 60, 60 * 2e-5);
	ck_assert_double_le(b.lp, 60);
	saturn_problem_destroy(p);
}
END_TEST

/* One class, two GPUs; A (10 s) at 0, B, C, D (10 s each) released at
 * 10 s: 30 GPU-s in [10, T) on 2 GPUs, so T >= 25; area and length say
 * 20. The instant rows close the rest: below T = 30, B, C and D all run
 * at instant 2T/3 (latest start T - 10 <= 2T/3 < 20, their earliest end),
 * three GPUs of two. The optimum is 30. */
START_TEST(test_release_rows)
{
	static const opt_spec_t o[] = {{"ddp", 1, 10, NULL}};
	saturn_problem_t *p = fx_problem();
	saturn_bounds_t b;

	fx_node(p, "n", 2, NULL);
	fx_task(p, "A", 1, 0, o, 1);
	fx_task(p, "B", 1, 10, o, 1);
	fx_task(p, "C", 1, 10, o, 1);
	fx_task(p, "D", 1, 10, o, 1);
	fx_check(p);
	b = bounds(p);
	ck_assert_double_eq_tol(b.length, 20, 1e-9);
	ck_assert_double_eq_tol(b.lp, 30, 30 * 2e-5);
	ck_assert_double_le(b.lp, 30);
	saturn_problem_destroy(p);
}
END_TEST

/* The work a task released before a threshold still has after it. One
 * class, two GPUs; A (20 s) at 0, B and C (10 s) at 10 s. Counting only
 * the tasks released at 10 s or later, [10, T) holds 20 GPU-s: T >= 20,
 * as length and area. But A, started at 0 at the earliest, still runs 10 s
 * after 10 s: 30 GPU-s in [10, T), T >= 25. (Optimum: 30, A and B side by
 * side, then C.) */
START_TEST(test_release_carry)
{
	static const opt_spec_t a[] = {{"ddp", 1, 20, NULL}};
	static const opt_spec_t o[] = {{"ddp", 1, 10, NULL}};
	saturn_problem_t *p = fx_problem();
	saturn_bounds_t b;

	fx_node(p, "n", 2, NULL);
	fx_task(p, "A", 1, 0, a, 1);
	fx_task(p, "B", 1, 10, o, 1);
	fx_task(p, "C", 1, 10, o, 1);
	fx_check(p);
	b = bounds(p);
	ck_assert_double_eq_tol(b.length, 20, 1e-9);
	ck_assert_double_ge(b.lp, 25 * (1 - 2e-5));
	ck_assert_double_le(b.lp, 30);
	saturn_problem_destroy(p);
}
END_TEST


/* The class-aware choices of classseed.c and the decoder: node A (class a)
 * has all 8 GPUs busy until 1000 s, node B (class b) is free. The task
 * runs 10 s on one a GPU (area 10, the task's smallest), 2 s on eight
 * (16); 100 s on one b GPU, 10 s on eight (80: superlinear on b). */
START_TEST(test_class_choices)
{
	static const opt_spec_t o[] = {{"x", 1, 10, "a"}, {"x", 8, 2, "a"},
				       {"x", 1, 100, "b"}, {"x", 8, 10, "b"}};
	static const int ids[] = {0, 1, 2, 3, 4, 5, 6, 7};
	saturn_problem_t *p = fx_problem();
	spase_inst_t *in;
	spase_work_t *w;
	spase_sol_t *sol;
	int ca, cb;
	double mk;

	fx_node(p, "A", 8, "a");
	fx_node(p, "B", 8, "b");
	fx_busy(p, 0, ids, 8, 1000);
	fx_task(p, "t", 1, 0, o, 4);
	fx_check(p);
	in = spase_inst_create(p);
	w = spase_work_create(in);
	sol = spase_sol_create(in);
	ck_assert_ptr_nonnull(sol);
	ca = in->klass[0];
	cb = in->klass[1];
	/* smallest area of the class that ends by T, else its fastest */
	ck_assert_int_eq(in->t[0].opt[spase_class_option(in, 0, ca, 100)].gpus, 1);
	ck_assert_int_eq(in->t[0].opt[spase_class_option(in, 0, ca, 5)].gpus, 8);
	ck_assert_int_eq(in->t[0].opt[spase_class_option(in, 0, ca, 1)].gpus, 8);
	ck_assert_int_eq(in->t[0].opt[spase_class_option(in, 0, cb, 1000)].gpus, 8);
	ck_assert_int_eq(in->t[0].opt[spase_class_option(in, 0, cb, 1000)].klass, cb);
	/* alpha 1 on the task's smallest area: only a's 1-GPU option, after
	 * the busy GPUs; on each class's own smallest: b's 8 GPUs at 0 */
	sol->order[0] = 0;
	sol->opt[0] = -1;
	mk = spase_decode(w, sol, 1);
	ck_assert_double_eq_tol(mk, 1010, 1e-9);
	sol->opt[0] = -1;
	w->class_alpha = 1;
	mk = spase_decode(w, sol, 1);
	w->class_alpha = 0;
	ck_assert_double_eq_tol(mk, 10, 1e-9);
	ck_assert_int_eq(in->t[0].opt[sol->opt[0]].klass, cb);
	ck_assert_int_eq(w->node[0], 1);
	spase_sol_destroy(sol);
	spase_work_destroy(w);
	spase_inst_destroy(in);
	saturn_problem_destroy(p);
}
END_TEST

/* Five tasks of 10 s on the one fast GPU (class a) and 15 s on the one
 * slow GPU (b): their cheapest option is always a, but the best plan puts
 * two on b, 30 s on each (four on a: 40 s). The LP bound splits them 3 : 2
 * (T = 30) and the planner reaches it. */
START_TEST(test_class_balance)
{
	static const opt_spec_t o[] = {{"x", 1, 10, "a"}, {"x", 1, 15, "b"}};
	saturn_problem_t *p = fx_problem();
	saturn_planner_opts_t op;
	saturn_plan_t *pl;
	saturn_error_t err = {{0}};
	saturn_bounds_t b;
	char id[8];

	fx_node(p, "A", 1, "a");
	fx_node(p, "B", 1, "b");
	for (int i = 0; i < 5; i++) {
		snprintf(id, sizeof(id), "t%d", i);
		fx_task(p, id, 1, 0, o, 2);
	}
	fx_check(p);
	b = bounds(p);
	ck_assert_double_le(b.best, 30);
	ck_assert_double_gt(b.best, 29.9);
	saturn_planner_opts_init(&op);
	op.time_limit_s = 0.5;
	pl = saturn_planner_solve(p, &op, &err);
	ck_assert_msg(pl != NULL, "%s", err.text);
	ck_assert_ptr_null(fx_validate(p, pl));
	ck_assert_double_eq_tol(pl->makespan_s, 30, 1e-9);
	ck_assert_double_le(pl->lower_bound_s, pl->makespan_s);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

/* --- exhaustive search ------------------------------------------------- */

#define EN 3  /* nodes */
#define ET 5  /* tasks */
#define EO 3  /* options per task */
#define EH 40 /* horizon (integer time slots) */

typedef struct eopt {
	int g, k, d, c; /* GPUs per node, nodes, runtime, class (-1: any) */
} eopt_t;

typedef struct etask {
	int nopt;
	eopt_t o[EO];
	int rel;      /* release */
	int zero;     /* no batches: takes no time */
	int run;      /* running on node run_node with option 0, ids 0.. */
	int run_node;
	int rel_node; /* released to this node (-1: not) */
} etask_t;

typedef struct einst {
	int nn, ncls, nt;
	int G[EN], cls[EN];
	int busy_n, busy_k, busy_until; /* busy_k highest ids of node busy_n */
	etask_t t[ET];
} einst_t;

static int efree[EN][EH];

/* Node sets (bit masks) where option o of task t may run. */
static int node_sets(const einst_t *x, const etask_t *tk, const eopt_t *op, int *sets)
{
	int ns = 0;

	for (int m = 1; m < (1 << x->nn); m++) {
		int ok = __builtin_popcount((unsigned)m) == op->k, c0 = -1;

		for (int n = 0; ok && n < x->nn; n++) {
			if (!(m >> n & 1))
				continue;
			ok = x->G[n] >= op->g && (op->c < 0 || x->cls[n] == op->c) &&
			     (c0 < 0 || x->cls[n] == c0) && (tk->rel_node < 0 || n == tk->rel_node);
			c0 = x->cls[n];
		}
		if (ok)
			sets[ns++] = m;
	}
	return ns;
}

static void e_dfs(const einst_t *x, int t, int mk, int *best)
{
	const etask_t *tk;

	if (mk >= *best)
		return;
	if (t == x->nt) {
		*best = mk;
		return;
	}
	tk = &x->t[t];
	if (tk->run || tk->zero) { /* counted up front */
		e_dfs(x, t + 1, mk, best);
		return;
	}
	for (int o = 0; o < tk->nopt; o++) {
		const eopt_t *op = &tk->o[o];
		int sets[1 << EN], ns = node_sets(x, tk, op, sets);

		for (int s = tk->rel; s + op->d < *best && s + op->d <= EH; s++)
			for (int i = 0; i < ns; i++) {
				int m = sets[i], ok = 1;

				for (int n = 0; ok && n < x->nn; n++)
					for (int u = s; ok && (m >> n & 1) && u < s + op->d; u++)
						ok = efree[n][u] >= op->g;
				if (!ok)
					continue;
				for (int n = 0; n < x->nn; n++)
					for (int u = s; (m >> n & 1) && u < s + op->d; u++)
						efree[n][u] -= op->g;
				e_dfs(x, t + 1, mk > s + op->d ? mk : s + op->d, best);
				for (int n = 0; n < x->nn; n++)
					for (int u = s; (m >> n & 1) && u < s + op->d; u++)
						efree[n][u] += op->g;
			}
	}
}

/* The optimum makespan of x: every option, start and node set, integer
 * times (with integer runtimes and releases, some optimal plan starts every
 * task at an integer: shift each left). A zero-length task holds no GPU
 * (validate.c): it ends at its release. A running task holds its GPUs
 * from 0 to its runtime; the busy GPUs until busy_until. */
static int e_opt(const einst_t *x)
{
	int best = EH + 1, mk = 0;

	for (int n = 0; n < EN; n++)
		for (int u = 0; u < EH; u++)
			efree[n][u] = n < x->nn ? x->G[n] : 0;
	for (int u = 0; u < x->busy_until && u < EH; u++)
		efree[x->busy_n][u] -= x->busy_k;
	for (int t = 0; t < x->nt; t++) {
		const etask_t *tk = &x->t[t];

		if (tk->run) {
			for (int u = 0; u < tk->o[0].d; u++)
				efree[tk->run_node][u] -= tk->o[0].g;
			if (tk->o[0].d > mk)
				mk = tk->o[0].d;
		} else if (tk->zero && tk->rel > mk) {
			mk = tk->rel;
		}
	}
	e_dfs(x, 0, mk, &best);
	return best;
}

static const char *const cname[] = {"a", "b", "c"};

/* x as a saturn problem; NULL when saturn_problem_check() refuses it.
 * fastest: each task keeps only its fastest option (a wrong problem). */
static saturn_problem_t *e_problem(const einst_t *x, int fastest)
{
	saturn_problem_t *p = fx_problem();
	saturn_error_t err = {{0}};
	char id[16];

	for (int n = 0; n < x->nn; n++) {
		snprintf(id, sizeof(id), "n%d", n);
		fx_node(p, id, x->G[n], x->ncls > 1 ? cname[x->cls[n]] : NULL);
	}
	if (x->busy_until > 0) {
		int ids[4];

		for (int i = 0; i < x->busy_k; i++)
			ids[i] = x->G[x->busy_n] - 1 - i;
		fx_busy(p, x->busy_n, ids, x->busy_k, x->busy_until);
	}
	for (int t = 0; t < x->nt; t++) {
		const etask_t *tk = &x->t[t];
		opt_spec_t o[EO];
		int no = 0, f = 0;

		for (int q = 1; q < tk->nopt; q++)
			if (tk->o[q].d < tk->o[f].d)
				f = q;
		for (int q = 0; q < tk->nopt; q++) {
			if (fastest && !tk->run && q != f)
				continue;
			o[no].tech = q == 0 ? "x" : q == 1 ? "y" : "z";
			o[no].gpus = tk->o[q].g;
			o[no].spb = tk->o[q].d;
			o[no].klass = tk->o[q].c >= 0 && x->ncls > 1 ? cname[tk->o[q].c] : NULL;
			no++;
		}
		snprintf(id, sizeof(id), "t%d", t);
		fx_task(p, id, tk->zero ? 0 : 1, tk->rel, o, no);
		for (int q = 0, k = 0; q < tk->nopt; q++)
			if (!fastest || tk->run || q == f)
				p->tasks[t].options[k++].nodes = tk->o[q].k;
		if (tk->run) {
			int ids[4] = {0, 1, 2, 3};

			fx_running(p, t, tk->run_node, 0, ids);
		}
		if (tk->rel_node >= 0) {
			p->tasks[t].is_released = true;
			p->tasks[t].released_node = tk->rel_node;
		}
	}
	if (saturn_problem_check(p, &err) < 0) {
		saturn_problem_destroy(p);
		return NULL;
	}
	return p;
}

/* A random tiny instance: 2-3 nodes of 1-3 GPUs in 1-3 classes, 3-5 tasks
 * (at most 4 that the search places), 1-3 options of 1-2 GPUs per node on
 * 1-2 nodes, runtimes 1-6; sometimes releases, busy GPUs, a running task,
 * a task released to a node, a zero-length task. */
static void e_random(uint64_t *s, einst_t *x)
{
	int placed = 0;

	memset(x, 0, sizeof(*x));
	x->nn = 2 + fx_rand(s, 2);
	x->ncls = 1 + fx_rand(s, 3);
	for (int n = 0; n < x->nn; n++) {
		x->G[n] = 1 + fx_rand(s, 3);
		x->cls[n] = fx_rand(s, x->ncls);
	}
	if (fx_rand(s, 2)) {
		x->busy_n = fx_rand(s, x->nn);
		x->busy_k = 1 + fx_rand(s, x->G[x->busy_n]);
		x->busy_until = 1 + fx_rand(s, 5);
	}
	x->nt = 3 + fx_rand(s, 3);
	for (int t = 0; t < x->nt; t++) {
		etask_t *tk = &x->t[t];

		tk->rel_node = -1;
		tk->nopt = 1 + fx_rand(s, EO);
		for (int q = 0; q < tk->nopt; q++) {
			tk->o[q].g = 1 + fx_rand(s, 2);
			tk->o[q].k = fx_rand(s, 4) == 0 ? 2 : 1;
			tk->o[q].d = 1 + fx_rand(s, 6);
			tk->o[q].c = x->ncls > 1 && fx_rand(s, 2) ? fx_rand(s, x->ncls) : -1;
		}
		if (fx_rand(s, 3) == 0)
			tk->rel = fx_rand(s, 5);
		if (t == 0 && fx_rand(s, 3) == 0) {
			/* running on a node its first option fits, GPUs 0.. */
			tk->run = 1;
			tk->rel = 0;
			tk->o[0].k = 1;
			tk->run_node = fx_rand(s, x->nn);
		} else if (t == 1 && fx_rand(s, 4) == 0) {
			tk->zero = 1;
		} else if (t == 2 && fx_rand(s, 4) == 0) {
			tk->rel_node = fx_rand(s, x->nn);
			for (int q = 0; q < tk->nopt; q++)
				tk->o[q].k = 1;
		}
		if (!tk->run && !tk->zero && ++placed > 4)
			tk->zero = 1; /* keep the search small */
	}
	if (x->t[1].zero && x->busy_until > 0 && fx_rand(s, 2)) {
		/* a zero-length task whose GPUs are busy at its release: a
		 * valid plan has it there all the same */
		for (int q = 0; q < x->t[1].nopt; q++) {
			x->t[1].o[q].c = x->ncls > 1 ? x->cls[x->busy_n] : -1;
			x->t[1].o[q].g = x->busy_k;
			x->t[1].o[q].k = 1;
		}
		x->t[1].rel = 0;
	}
	for (int t = 0; t < x->nt; t++) {
		/* the planner pins a released task only where one of its
		 * options fits that node (instance.c) */
		etask_t *tk = &x->t[t];
		int fits = 0;

		for (int q = 0; q < tk->nopt && tk->rel_node >= 0; q++)
			fits |= tk->o[q].g <= x->G[tk->rel_node] &&
				(tk->o[q].c < 0 || x->ncls < 2 || tk->o[q].c == x->cls[tk->rel_node]);
		if (!fits)
			tk->rel_node = -1;
	}
	if (x->t[0].run && x->busy_until > 0 && x->busy_n == x->t[0].run_node &&
	    x->busy_k + x->t[0].o[0].g > x->G[x->busy_n])
		x->busy_until = 0; /* running and busy ids would overlap */
}

/* x on stderr, for a failure's message. */
static void e_print(const einst_t *x, const saturn_problem_t *p)
{
	char *js = saturn_problem_to_json(p);

	fprintf(stderr, "instance: busy node %d x%d until %d\n%s\n", x->busy_n, x->busy_k,
		x->busy_until, js ? js : "?");
	free(js);
}

/* Instances of the check: nc counts those where the LP bound is above
 * every other bound, tight those where the best bound is the optimum. */
typedef struct echeck {
	int n, over, lp_best, tight, wrong_over;
} echeck_t;

static void e_check(uint64_t *seed, echeck_t *ck, int rounds)
{
	for (int r = 0; r < rounds;) {
		einst_t x;
		saturn_problem_t *p, *pw;
		saturn_bounds_t b, bw;
		saturn_planner_opts_t o;
		saturn_plan_t *pl;
		saturn_error_t err = {{0}};
		int opt;

		e_random(seed, &x);
		p = e_problem(&x, 0);
		if (!p)
			continue; /* an option fits no node: draw again */
		r++;
		opt = e_opt(&x);
		ck_assert_int_le(opt, EH);
		b = bounds(p);
		ck->n++;
		if (b.best > opt * (1 + 1e-9) + 1e-9) {
			ck->over++;
			fprintf(stderr,
				"bound %g (length %g area %g dual %g milp %g lp %g) > optimum %d\n",
				b.best, b.length, b.area, b.dual, b.milp, b.lp, opt);
			e_print(&x, p);
		}
		ck->lp_best += b.lp > b.dual * (1 + 1e-6) && b.lp > b.milp * (1 + 1e-6);
		ck->tight += b.best >= opt * (1 - 1e-4);
		/* every plan is at least the optimum, and carries a bound
		 * below it */
		saturn_planner_opts_init(&o);
		o.time_limit_s = 0.05;
		o.seed = 3;
		pl = saturn_planner_solve(p, &o, &err);
		if (!pl)
			e_print(&x, p);
		ck_assert_msg(pl != NULL, "solve: %s", err.text);
		ck_assert_ptr_null(fx_validate(p, pl));
		ck_assert_msg(pl->makespan_s >= opt * (1 - 1e-9), "plan %g < optimum %d",
			      pl->makespan_s, opt);
		ck_assert_double_le(pl->lower_bound_s, opt * (1 + 1e-9) + 1e-9);
		/* the wrong bound: the problem with only the fastest options */
		pw = e_problem(&x, 1);
		if (pw) {
			bw = bounds(pw);
			ck->wrong_over += bw.best > opt * (1 + 1e-9) + 1e-9;
			saturn_problem_destroy(pw);
		}
		saturn_plan_destroy(pl);
		saturn_problem_destroy(p);
	}
}

START_TEST(test_exhaustive)
{
	uint64_t seed = 4242u + (uint64_t)_i * 7919u;
	echeck_t ck = {0};

	e_check(&seed, &ck, 25);
	ck_assert_msg(ck.over == 0, "%d of %d bounds above the optimum", ck.over, ck.n);
	ck_assert_int_gt(ck.tight, 0);
}
END_TEST

/* More rounds (SATURN_EXHAUSTIVE_ROUNDS, default 150; thousands for a soak
 * run): no bound above the optimum, the LP bound the best bound on some
 * instances, and the check has teeth: the fastest-option bound, which is
 * not a bound of these problems, passes the optimum on some of them. */
START_TEST(test_exhaustive_counts)
{
	uint64_t seed = 99991u;
	echeck_t ck = {0};
	const char *env = getenv("SATURN_EXHAUSTIVE_ROUNDS");
	int rounds = env && atoi(env) > 0 ? atoi(env) : 150;

	e_check(&seed, &ck, rounds);
	fprintf(stderr, "test_exhaustive_counts: %d instances, LP best on %d, tight %d, "
		"fastest-option bound above the optimum on %d\n",
		ck.n, ck.lp_best, ck.tight, ck.wrong_over);
	ck_assert_int_eq(ck.over, 0);
	ck_assert_msg(ck.lp_best > 0, "LP bound never the best of %d", ck.n);
	ck_assert_msg(ck.wrong_over > 0, "the wrong bound was never caught in %d", ck.n);
}
END_TEST

/* The heuristics' best, decoded again (as the annealing starts from it),
 * has the makespan they report. Their earliest-finish candidates let the
 * decoder choose options among those within alpha of the smallest area; a
 * second decode may take another class's option of the same GPU count that
 * ends sooner, and the annealing once started from that other makespan
 * (and could return a plan longer than the heuristics' best). Random
 * batches on two or three node classes whose speed ratios differ from task
 * to task, some released later, each task with options at 1, 2, 4 and 8
 * GPUs in every class. */
START_TEST(test_heuristics_redecode)
{
	static const char *cls[] = {"k80", "p100", "v100"};
	uint64_t seed = 777u;
	int differ = 0;

	for (int r = 0; r < 40; r++) {
		saturn_problem_t *p = fx_problem();
		int nc = 2 + fx_rand(&seed, 2), nt = 6 + fx_rand(&seed, 20);
		spase_clock_t clk = {0};
		spase_inst_t *in;
		spase_work_t *w;
		spase_sol_t *best;
		saturn_bounds_t b;
		double mk, x;

		for (int c = 0, k = 0; c < nc; c++)
			for (int n = 0; n < 1 + fx_rand(&seed, 2); n++, k++) {
				char name[16];

				snprintf(name, sizeof(name), "n%d", k);
				fx_node(p, name, fx_rand(&seed, 2) ? 8 : 4, cls[c]);
			}
		for (int t = 0; t < nt; t++) {
			opt_spec_t o[12];
			int no = 0;
			char id[16];
			double base = 1 + fx_rand(&seed, 20);

			snprintf(id, sizeof(id), "t%d", t);
			for (int c = 0; c < nc; c++) {
				double speed = 1 + fx_rand(&seed, 40) / 10.0;

				for (int g = 1; g <= 8; g *= 2) {
					double eff = 0.4 + fx_rand(&seed, 70) / 100.0;

					o[no].tech = "ddp";
					o[no].gpus = g;
					o[no].spb = base / (speed * g * eff);
					o[no].klass = cls[c];
					no++;
				}
			}
			fx_task(p, id, 100, fx_rand(&seed, 3) == 0 ? 10.0 * fx_rand(&seed, 30) : 0,
				o, no);
		}
		fx_check(p);
		b = bounds(p);
		in = spase_inst_create(p);
		w = spase_work_create(in);
		best = spase_sol_create(in);
		ck_assert_ptr_nonnull(best);
		clk.t0 = spase_now();
		clk.deadline = clk.t0 + 600;
		mk = spase_heuristics(in, w, b.best, best, &clk);
		ck_assert_double_gt(mk, 0);
		x = spase_decode(w, best, 1);
		differ += x != mk;
		ck_assert_msg(x == mk, "batch %d: heuristics say %.17g, decoded again %.17g", r, mk, x);
		spase_sol_destroy(best);
		spase_work_destroy(w);
		spase_inst_destroy(in);
		saturn_problem_destroy(p);
	}
	ck_assert_int_eq(differ, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lpbound");
	TCase *tc = tcase_create("lpbound");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_three_classes);
	tcase_add_test(tc, test_lp_refused);
	tcase_add_test(tc, test_release_rows);
	tcase_add_test(tc, test_release_carry);
	tcase_add_test(tc, test_class_choices);
	tcase_add_test(tc, test_class_balance);
	tcase_add_test(tc, test_heuristics_redecode);
	tcase_add_loop_test(tc, test_exhaustive, 0, 8);
	tcase_add_test(tc, test_exhaustive_counts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
