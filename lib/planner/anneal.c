/* anneal.c - simulated annealing over (priority order, option per task).
 *
 * Each state is decoded by the list scheduler. Moves: swap two tasks in the
 * order, move one task to another place, change one task's option (often to
 * a neighbouring GPU count). Cost = makespan + a small weight on a tie-break
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
	int kind; /* 0 swap, 1 insert, 2 option */
	int i, j, t, old;
} move_t;

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
		   uint64_t *rng, move_t *m)
{
	int span = in->nt - lo;
	int r = spase_rand(rng, 100);

	if (nlate > 0 && r < 25 &&
	    propose_late(in, sol, lo, late[spase_rand(rng, nlate)], rng, m))
		return 1;
	r = spase_rand(rng, 100);

	if (span < 2 || (r >= 65 && nmulti > 0)) {
		int t, o, no;

		if (nmulti == 0)
			return 0;
		t = multi[spase_rand(rng, nmulti)];
		o = sol->opt[t];
		no = in->t[t].nopt;
		if (spase_rand(rng, 2) == 0) {
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
				     &rng, &m))
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
