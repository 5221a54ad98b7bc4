/* anneal.c - simulated annealing over (priority order, option per task).
 *
 * Each state is decoded by the list scheduler. Moves: swap two tasks in the
 * order, move one task to another place, change one task's option (often to
 * a neighbouring GPU count; always to another GPU or node count, as the
 * decoder itself picks the class among options of one count). With several
 * node classes, a share of the moves changes classes: a task (a late one
 * half of the time) takes its option of another class, or two tasks on
 * different classes exchange classes; the option there has the same width
 * or is that class's smallest-area one ending by the best makespan. Cost = makespan + a small weight on a tie-break
 * (area-weighted mean end and mean node finish) so that plateaus of equal
 * makespan still lead somewhere. Each run cools geometrically and restarts
 * from the best state; cold runs (0.05% -> 0.001% of the makespan) alternate
 * with hot ones (2% -> 0.05%), and every second run is twice as long. The
 * random stream comes from the seed alone, so a given seed and number of
 * evaluations always give the same answer; the clock only decides where the
 * sequence is cut.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

#define TB_WEIGHT 0.005
/* Temperatures as a share of the makespan: cold runs (a near-greedy descent
 * that still drifts along plateaus) alternate with hot ones (which let
 * small batches leave a basin). Measured with saturn-bench: cold alone is
 * best from ~30 jobs up, hot alone on 8-job batches. */
#define COLD_HI 0.0005
#define COLD_LO 0.00001
#define HOT_HI 0.02
#define HOT_LO 0.0005

typedef struct move {
	int kind; /* 0 swap, 1 insert, 2 option (t; t2 too when t2 >= 0) */
	int i, j, t, old, t2, old2;
} move_t;

/* Share of moves that change classes (on clusters of several classes). */
#define CLASS_MOVES 20

/* An option of task t in class c other than its own: the same width when
 * it has one there (half the time), else its smallest-area one there that
 * ends by T; -1 when it has none in c. */
static int opt_in_class(const spase_inst_t *in, int t, int c, int width, double T,
			uint64_t *rng)
{
	const spase_task_t *tk = &in->t[t];

	if (spase_rand(rng, 2))
		for (int o = 0; o < tk->nopt; o++)
			if (tk->opt[o].klass == c && tk->opt[o].width == width)
				return o;
	return spase_class_option(in, t, c, T);
}

/* Whether options a and b of tk differ only in class: the decoder tries
 * every class of that GPU count and node count and keeps the earliest end
 * (listsched.c), so a move between them changes nothing. */
static int same_group(const spase_task_t *tk, int a, int b)
{
	return tk->opt[a].gpus == tk->opt[b].gpus && tk->opt[a].nodes == tk->opt[b].nodes;
}

/* An option of another GPU or node count than o: the nearest one up or
 * down (near), else one drawn uniformly; -1 when all are one group. */
static int other_group(const spase_task_t *tk, int o, int near, uint64_t *rng)
{
	int n = 0, k;

	if (near) {
		int up = spase_rand(rng, 2);

		for (int pass = 0; pass < 2; pass++, up = !up)
			for (int q = o; q >= 0 && q < tk->nopt; q += up ? 1 : -1)
				if (!same_group(tk, o, q))
					return q;
		return -1;
	}
	for (int q = 0; q < tk->nopt; q++)
		n += !same_group(tk, o, q);
	if (n == 0)
		return -1;
	k = spase_rand(rng, n);
	for (int q = 0; q < tk->nopt; q++)
		if (!same_group(tk, o, q) && k-- == 0)
			return q;
	return -1;
}

/* Class moves: task t to another class (its option there), or t and a
 * task of another class exchange classes. Returns 0 when none applies. */
static int propose_class(const spase_inst_t *in, spase_sol_t *sol, int t, const int *multi,
			 int nmulti, double T, uint64_t *rng, move_t *m)
{
	int nc = in->p->nclasses, o = sol->opt[t], c = in->t[t].opt[o].klass, c2, n;

	if (nc < 2 || c < 0)
		return 0;
	c2 = spase_rand(rng, nc - 1);
	c2 += c2 >= c;
	m->t2 = -1;
	if (spase_rand(rng, 2) && nmulti > 1) {
		/* exchange with a task now on class c2 (a few tries) */
		for (int k = 0; k < 8; k++) {
			int u = multi[spase_rand(rng, nmulti)], ou = sol->opt[u], a, b;

			if (u == t || in->t[u].opt[ou].klass != c2)
				continue;
			a = opt_in_class(in, t, c2, in->t[t].opt[o].width, T, rng);
			b = opt_in_class(in, u, c, in->t[u].opt[ou].width, T, rng);
			if (a < 0 || b < 0)
				continue;
			m->kind = 2;
			m->t = t;
			m->old = o;
			m->t2 = u;
			m->old2 = ou;
			sol->opt[t] = a;
			sol->opt[u] = b;
			return 1;
		}
	}
	n = opt_in_class(in, t, c2, in->t[t].opt[o].width, T, rng);
	if (n < 0 || n == o)
		return 0;
	m->kind = 2;
	m->t = t;
	m->old = o;
	sol->opt[t] = n;
	return 1;
}

static void do_insert(int *order, int i, int j)
{
	int v = order[i];

	if (i < j)
		memmove(&order[i], &order[i + 1], sizeof(int) * (size_t)(j - i));
	else if (i > j)
		memmove(&order[j + 1], &order[j], sizeof(int) * (size_t)(i - j));
	order[j] = v;
}

/* Move the critical task t: earlier in the order, or to a neighbouring
 * GPU count. */
static int propose_late(const spase_inst_t *in, spase_sol_t *sol, int lo,
			int t, uint64_t *rng, move_t *m)
{
	int pos = lo;

	while (pos < in->nt && sol->order[pos] != t)
		pos++;
	if (pos >= in->nt)
		return 0;
	if (in->t[t].nopt > 1 && (pos == lo || spase_rand(rng, 2))) {
		int o = sol->opt[t], g = in->t[t].opt[o].width, n = o;

		if (spase_rand(rng, 3)) { /* wider */
			while (n < in->t[t].nopt && in->t[t].opt[n].width == g)
				n++;
			if (n >= in->t[t].nopt)
				return 0;
		} else {
			while (n >= 0 && in->t[t].opt[n].width == g)
				n--;
			if (n < 0)
				return 0;
		}
		m->kind = 2;
		m->t = t;
		m->old = o;
		sol->opt[t] = n;
		return 1;
	}
	if (pos == lo)
		return 0;
	m->kind = 1;
	m->i = pos;
	m->j = lo + spase_rand(rng, pos - lo);
	do_insert(sol->order, m->i, m->j);
	return 1;
}

/* Propose a move on sol; returns 0 when none is possible. late[] holds the
 * tasks of the current state that end close to its makespan. */
static int propose(const spase_inst_t *in, spase_sol_t *sol, int lo,
		   const int *multi, int nmulti, const int *late, int nlate,
		   double T, uint64_t *rng, move_t *m)
{
	int span = in->nt - lo;
	int r = spase_rand(rng, 100);

	m->t2 = -1;
	if (in->p->nclasses > 1 && nmulti > 0 && r < CLASS_MOVES) {
		/* a late task half of the time: it is on a class that ends
		 * last */
		int t = nlate > 0 && spase_rand(rng, 2) ? late[spase_rand(rng, nlate)]
							: multi[spase_rand(rng, nmulti)];

		if (in->t[t].nopt > 1 && propose_class(in, sol, t, multi, nmulti, T, rng, m))
			return 1;
	}
	r = spase_rand(rng, 100);
	if (nlate > 0 && r < 25 &&
	    propose_late(in, sol, lo, late[spase_rand(rng, nlate)], rng, m))
		return 1;
	r = spase_rand(rng, 100);

	if (span < 2 || (r >= 65 && nmulti > 0)) {
		int t, o, no, g = -1;

		if (nmulti == 0)
			return 0;
		t = multi[spase_rand(rng, nmulti)];
		o = sol->opt[t];
		no = in->t[t].nopt;
		g = other_group(&in->t[t], o, spase_rand(rng, 2), rng);
		if (g >= 0) {
			o = g;
		} else if (spase_rand(rng, 2) == 0) {
			int n = o + (spase_rand(rng, 2) ? 1 : -1);

			if (n < 0)
				n = 1;
			if (n >= no)
				n = no - 2;
			o = n;
		} else {
			int n = spase_rand(rng, no - 1);

			o = n >= o ? n + 1 : n;
		}
		m->kind = 2;
		m->t = t;
		m->old = sol->opt[t];
		sol->opt[t] = o;
		return 1;
	}
	m->i = lo + spase_rand(rng, span);
	m->j = lo + spase_rand(rng, span - 1);
	if (m->j >= m->i)
		m->j++;
	if (r < 35) {
		int v = sol->order[m->i];

		m->kind = 0;
		sol->order[m->i] = sol->order[m->j];
		sol->order[m->j] = v;
	} else {
		m->kind = 1;
		do_insert(sol->order, m->i, m->j);
	}
	return 1;
}

static void undo(spase_sol_t *sol, const move_t *m)
{
	if (m->kind == 2) {
		sol->opt[m->t] = m->old;
		if (m->t2 >= 0)
			sol->opt[m->t2] = m->old2;
	} else if (m->kind == 0) {
		int v = sol->order[m->i];

		sol->order[m->i] = sol->order[m->j];
		sol->order[m->j] = v;
	} else {
		do_insert(sol->order, m->j, m->i);
	}
}

/* Tasks of the decoded state in w that end in the last 3% of mk. */
static int late_tasks(const spase_inst_t *in, const spase_work_t *w,
		      const spase_sol_t *sol, double mk, int *late)
{
	int n = 0;

	for (int t = 0; t < in->nt; t++) {
		const spase_task_t *tk = &in->t[t];

		if (!tk->pinned && !tk->zero &&
		    w->start[t] + tk->opt[sol->opt[t]].dur >= 0.97 * mk)
			late[n++] = t;
	}
	return n;
}

double spase_anneal(const spase_inst_t *in, spase_work_t *w,
		    spase_sol_t *best, double mk, double target,
		    uint64_t seed, unsigned long max_evals, spase_clock_t *clk)
{
	spase_sol_t *cur = spase_sol_create(in);
	int *multi = calloc((size_t)in->nt + 1, sizeof(int));
	int *late = calloc((size_t)in->nt + 1, sizeof(int));
	int nmulti = 0, lo = 0, nlate = 0;
	uint64_t rng = seed ? seed : 0x5a7u;
	unsigned long evals = 0;
	double best_mk, best_tb, cur_cost;
	long run_len;
	int nrun = 0;
	double ret = -1;

	if (!cur || !multi || !late)
		goto out;
	for (int t = 0; t < in->nt; t++)
		if (!in->t[t].pinned && in->t[t].nopt > 1)
			multi[nmulti++] = t;
	/* Pinned tasks first in the order: moves only touch the rest. */
	spase_sol_copy(in, cur, best);
	for (int k = 0, np = 0; k < in->nt; k++)
		if (in->t[cur->order[k]].pinned)
			do_insert(cur->order, k, np++);
	for (int k = 0; k < in->nt; k++)
		if (in->t[cur->order[k]].pinned)
			lo = k + 1;
	best_mk = spase_decode(w, cur, 1);
	if (best_mk < 0)
		goto out;
	best_tb = spase_tiebreak(w, cur);
	spase_sol_copy(in, best, cur);
	cur_cost = best_mk + TB_WEIGHT * best_tb;
	/* Short runs first, each twice as long as the last: a small budget
	 * still gets a few complete cooling runs, a large one long runs. */
	run_len = 25L * (in->nfree + 5);
	if (in->nfree < 2 && nmulti == 0) {
		ret = best_mk;
		goto out;
	}
	while (best_mk > target) {
		int hot = nrun % 2;
		double t_hi = (hot ? HOT_HI : COLD_HI) * best_mk;
		double t_lo = (hot ? HOT_LO : COLD_LO) * best_mk;
		double temp = t_hi, cool;

		if (!(t_hi > 0))
			break;
		cool = pow(t_lo / t_hi, 1.0 / (double)run_len);
		spase_sol_copy(in, cur, best);
		cur_cost = best_mk + TB_WEIGHT * best_tb;
		if (spase_decode(w, cur, 1) < 0)
			goto out;
		nlate = late_tasks(in, w, cur, best_mk, late);
		for (long it = 0; it < run_len; it++, temp *= cool) {
			move_t m;
			double nmk, ntb, cost;

			if ((max_evals && evals >= max_evals) || spase_stop(clk))
				goto done;
			if (!propose(in, cur, lo, multi, nmulti, late, nlate,
				     best_mk, &rng, &m))
				goto done;
			nmk = spase_decode(w, cur, 1);
			evals++;
			if (nmk < 0)
				goto out;
			ntb = spase_tiebreak(w, cur);
			cost = nmk + TB_WEIGHT * ntb;
			if (cost <= cur_cost ||
			    spase_unif(&rng) < exp((cur_cost - cost) / temp)) {
				cur_cost = cost;
				nlate = late_tasks(in, w, cur, nmk, late);
				if (nmk < best_mk ||
				    (nmk == best_mk && ntb < best_tb)) {
					best_mk = nmk;
					best_tb = ntb;
					spase_sol_copy(in, best, cur);
					if (best_mk <= target)
						goto done;
				}
			} else {
				undo(cur, &m);
			}
		}
		if (++nrun % 2 == 0 && run_len < (1L << 40))
			run_len *= 2;
	}
done:
	ret = best_mk;
out:
	spase_sol_destroy(cur);
	free(multi);
	free(late);
	(void)mk;
	return ret;
}
