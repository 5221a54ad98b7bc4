/* milp.c - the planner's lp_solve models, used only where they pay
 * (PLANNER-NOTES.md): both small, both capped by the deadline and the abort
 * callback (put_abortfunc, polled by lp_solve's branch and bound), both
 * silent (set_outputfile(lp, "") and NEUTRAL verbosity), and neither is
 * trusted blindly: the bound is only taken from a proven optimum, and the
 * improver's answer is re-decoded and compared by the caller.
 *
 * Assignment model (bound and allotment, <= 16 tasks): binary x[t,o,n]
 * (task t runs option o on node n), continuous T; minimise T subject to
 * one choice per task; per node, the chosen areas fit in the node's free
 * GPU-seconds before T; per task, its earliest end on an empty node n is
 * <= T; per node, the tasks wider than half the node (which cannot overlap)
 * fit one after another before T. No big-M, no per-GPU variables.
 *
 * Time-indexed model (improver, <= 10 tasks on one node): the horizon is
 * the heuristic makespan cut into S slots; y[t,o,s] = task t starts option o
 * in slot s, durations rounded up to whole slots, capacity per slot from the
 * node's free GPUs; minimise the makespan C. Its solution is feasible in
 * continuous time; the caller list-schedules its order and options, which
 * can only move tasks earlier. Branching is steered toward the heuristic
 * plan with set_var_branch (lp_solve 5.5 has no MIP start).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lpsolve/lp_lib.h>

#include "planner_int.h"

typedef struct abort_ctx {
	spase_clock_t *clk;
	double deadline;
} abort_ctx_t;

static int __WINAPI milp_abort(lprec *lp, void *arg)
{
	abort_ctx_t *a = arg;

	(void)lp;
	if (spase_now() >= a->deadline)
		return TRUE;
	return spase_stop(a->clk) ? TRUE : FALSE;
}

static lprec *new_lp(int ncols, abort_ctx_t *actx)
{
	lprec *lp = make_lp(0, ncols);
	double left = actx->deadline - spase_now();

	if (!lp)
		return NULL;
	set_outputfile(lp, "");
	set_verbose(lp, NEUTRAL);
	put_abortfunc(lp, milp_abort, actx);
	set_timeout(lp, left > 1 ? (long)ceil(left) : 1);
	set_add_rowmode(lp, TRUE);
	return lp;
}

/* --- assignment model ---------------------------------------------------- */

/* How often a claimed optimum is checked (and lowered), and by how much T
 * is held below it for the check. */
#define MILP_CHECKS 6
#define MILP_CHECK_GAP 1e-8

double spase_milp_bound(const spase_inst_t *in, double lower, double budget_s,
			spase_clock_t *clk, int *alloc)
{
	abort_ctx_t actx = {clk, spase_now() + budget_s};
	int ncols = 1, *colno = NULL, *ct = NULL, *co = NULL, *cn = NULL;
	double *row = NULL, *x = NULL, res = 0;
	lprec *lp = NULL;
	int ret, k;

	if (actx.deadline > clk->deadline)
		actx.deadline = clk->deadline;
	if (budget_s <= 0 || in->nfree == 0)
		return 0;
	for (int t = 0; t < in->nt; t++)
		for (int o = 0; o < in->t[t].nopt && !in->t[t].pinned; o++)
			for (int n = 0; n < in->nn; n++)
				ncols += spase_fits(in, t, o, n);
	colno = calloc((size_t)ncols + 1, sizeof(int));
	row = calloc((size_t)ncols + 1, sizeof(double));
	ct = calloc((size_t)ncols + 1, sizeof(int));
	co = calloc((size_t)ncols + 1, sizeof(int));
	cn = calloc((size_t)ncols + 1, sizeof(int));
	x = calloc((size_t)ncols + 1, sizeof(double));
	if (!colno || !row || !ct || !co || !cn || !x)
		goto out;
	/* Column 1 is T; then one binary per (task, option, node). */
	k = 2;
	for (int t = 0; t < in->nt; t++)
		for (int o = 0; o < in->t[t].nopt && !in->t[t].pinned; o++)
			for (int n = 0; n < in->nn; n++)
				if (spase_fits(in, t, o, n)) {
					ct[k] = t;
					co[k] = o;
					cn[k] = n;
					k++;
				}
	lp = new_lp(ncols, &actx);
	if (!lp)
		goto out;
	for (int c = 2; c <= ncols; c++)
		set_binary(lp, c, TRUE);
	set_lowbo(lp, 1, lower);
	/* One choice per task; its earliest end on the chosen node <= T. */
	for (int t = 0; t < in->nt; t++) {
		int m = 0, m2 = 1;

		if (in->t[t].pinned)
			continue;
		for (int c = 2; c <= ncols; c++)
			if (ct[c] == t) {
				colno[m] = c;
				row[m++] = 1;
			}
		if (!add_constraintex(lp, m, row, colno, EQ, 1))
			goto out;
		colno[0] = 1;
		row[0] = -1;
		for (int c = 2; c <= ncols; c++)
			if (ct[c] == t) {
				const spase_opt_t *op = &in->t[t].opt[co[c]];

				colno[m2] = c;
				/* a zero-length task needs no free GPU
				 * (validate.c): its release */
				row[m2++] = in->t[t].zero
						    ? in->t[t].release
						    : spase_prof_earliest(&in->base[cn[c]],
									  op->gpus, op->dur,
									  in->t[t].release,
									  NULL) +
							      op->dur;
			}
		if (!add_constraintex(lp, m2, row, colno, LE, 0))
			goto out;
	}
	for (int n = 0; n < in->nn; n++) {
		double busy = 0, wide_from;
		int m = 1, mw = 1, half = in->gpus[n] / 2 + 1;

		/* Free GPU-seconds before T >= G*T - sum min(f_g, lower),
		 * valid for T >= lower. */
		for (int g = 0; g < in->gpus[n]; g++)
			busy += in->gpu_free[n][g] < lower ? in->gpu_free[n][g]
							   : lower;
		colno[0] = 1;
		row[0] = -in->gpus[n];
		for (int c = 2; c <= ncols; c++)
			if (cn[c] == n) {
				colno[m] = c;
				row[m++] = in->t[ct[c]].opt[co[c]].area;
			}
		if (!add_constraintex(lp, m, row, colno, LE, -busy))
			goto out;
		/* Wider than half the node: one after another, not before
		 * that many GPUs are first free (wide_from):
		 *   sum d x + wide_from x[c'] <= T for each wide column c'. */
		wide_from = spase_prof_earliest(&in->base[n], half, 0, 0, NULL);
		if (half > in->gpus[n] || !isfinite(wide_from))
			continue;
		colno[0] = 1;
		row[0] = -1;
		for (int c = 2; c <= ncols; c++)
			if (cn[c] == n && in->t[ct[c]].opt[co[c]].gpus >= half &&
			    !in->t[ct[c]].zero) { /* zero-length: no GPU time */
				colno[mw] = c;
				row[mw++] = in->t[ct[c]].opt[co[c]].dur;
			}
		for (int i = 1; i < mw; i++) {
			double d = row[i];

			row[i] = d + wide_from;
			if (!add_constraintex(lp, mw, row, colno, LE, 0))
				goto out;
			row[i] = d;
			if (wide_from <= 0)
				break; /* all rows alike */
		}
	}
	set_add_rowmode(lp, FALSE);
	colno[0] = 1;
	row[0] = 1;
	if (!set_obj_fnex(lp, 1, row, colno))
		goto out;
	set_minim(lp);
	ret = solve(lp);
	if (ret == OPTIMAL) {
		/* lp_solve's "OPTIMAL" is not a proof: on a 5-task instance
		 * its branch and bound (ceiling branch first) stopped at 8.5
		 * where 8 was feasible, a bound above a valid plan (tests/
		 * unit/test_lpbound.c). So the claim is checked: with T held
		 * below it, a search with no incumbent (nothing to prune
		 * with) must find the model infeasible; a solution found
		 * there lowers the claim and is checked the same way. */
		double z = get_objective(lp);

		if (alloc && get_variables(lp, x + 1))
			for (int c = 2; c <= ncols; c++)
				if (x[c] > 0.5)
					alloc[ct[c]] = co[c];
		set_break_at_first(lp, TRUE);
		for (int round = 0; round < MILP_CHECKS; round++) {
			int r2;

			if (!set_upbo(lp, 1, z * (1 - MILP_CHECK_GAP)))
				break;
			r2 = solve(lp);
			if (r2 == INFEASIBLE) {
				/* lp_solve's relative MIP gap is 1e-9: stay
				 * below it */
				res = z * (1 - MILP_CHECK_GAP) * (1 - 1e-8);
				break;
			}
			if ((r2 != OPTIMAL && r2 != SUBOPTIMAL) ||
			    !(get_objective(lp) < z))
				break; /* stopped (clock) or no progress: no bound */
			z = get_objective(lp);
			if (alloc && get_variables(lp, x + 1))
				for (int c = 2; c <= ncols; c++)
					if (x[c] > 0.5)
						alloc[ct[c]] = co[c];
		}
	}
out:
	if (lp)
		delete_lp(lp);
	free(colno);
	free(row);
	free(ct);
	free(co);
	free(cn);
	free(x);
	return res;
}

/* --- time-indexed model -------------------------------------------------- */

#define TI_SLOTS 24

double spase_milp_improve(const spase_inst_t *in, spase_work_t *w,
			  spase_sol_t *best, double mk, double lower,
			  double budget_s, spase_clock_t *clk, double *proved)
{
	abort_ctx_t actx = {clk, spase_now() + budget_s};
	const int S = TI_SLOTS;
	double delta = mk / S, res = mk;
	int ncols = 1, k, *colno = NULL, *ct = NULL, *co = NULL, *cs = NULL;
	int *cap = NULL;
	double *row = NULL, *x = NULL, *key = NULL;
	spase_sol_t *cand = NULL;
	lprec *lp = NULL;

	*proved = 0;
	if (actx.deadline > clk->deadline)
		actx.deadline = clk->deadline;
	if (budget_s <= 0 || in->nn != 1 || !(delta > 0))
		return mk;
	if (spase_decode(w, best, 1) < 0) /* w: the plan to steer toward */
		return mk;
	/* Columns: C, then y[t,o,s] for starts that fit the horizon. */
	for (int t = 0; t < in->nt; t++)
		for (int o = 0; o < in->t[t].nopt && !in->t[t].pinned; o++) {
			int p = (int)ceil(in->t[t].opt[o].dur / delta - 1e-9);
			int s0 = (int)ceil(in->t[t].release / delta - 1e-9);

			for (int s = s0; s + p <= S; s++)
				ncols++;
		}
	colno = calloc((size_t)ncols + 1, sizeof(int));
	row = calloc((size_t)ncols + 1, sizeof(double));
	ct = calloc((size_t)ncols + 1, sizeof(int));
	co = calloc((size_t)ncols + 1, sizeof(int));
	cs = calloc((size_t)ncols + 1, sizeof(int));
	x = calloc((size_t)ncols + 1, sizeof(double));
	cap = calloc((size_t)S, sizeof(int));
	key = calloc((size_t)in->nt + 1, sizeof(double));
	cand = spase_sol_create(in);
	if (!colno || !row || !ct || !co || !cs || !x || !cap || !key || !cand)
		goto out;
	k = 2;
	for (int t = 0; t < in->nt; t++)
		for (int o = 0; o < in->t[t].nopt && !in->t[t].pinned; o++) {
			int p = (int)ceil(in->t[t].opt[o].dur / delta - 1e-9);
			int s0 = (int)ceil(in->t[t].release / delta - 1e-9);

			for (int s = s0; s + p <= S; s++) {
				ct[k] = t;
				co[k] = o;
				cs[k] = s;
				k++;
			}
		}
	/* Free GPUs throughout slot j: the minimum of the base profile over
	 * [j*delta, (j+1)*delta); it only grows with time, so its value at
	 * the slot's start. */
	for (int j = 0; j < S; j++) {
		const spase_prof_t *b = &in->base[0];
		int i = 0;

		while (i + 1 < b->n && b->t[i + 1] <= j * delta)
			i++;
		cap[j] = b->free[i];
	}
	lp = new_lp(ncols, &actx);
	if (!lp)
		goto out;
	for (int c = 2; c <= ncols; c++) {
		int t = ct[c];
		int hs = (int)floor(w->start[t] / delta + 1e-9);

		set_binary(lp, c, TRUE);
		/* Steer toward the heuristic plan's options and starts. */
		if (co[c] == best->opt[t] && cs[c] == hs)
			set_var_branch(lp, c, BRANCH_CEILING);
		else
			set_var_branch(lp, c, BRANCH_FLOOR);
	}
	set_lowbo(lp, 1, lower);
	for (int t = 0; t < in->nt; t++) {
		int m = 0, m2 = 1;

		if (in->t[t].pinned)
			continue;
		colno[0] = 1;
		row[0] = -1;
		for (int c = 2; c <= ncols; c++)
			if (ct[c] == t) {
				int p = (int)ceil(in->t[t].opt[co[c]].dur / delta -
						  1e-9);

				colno[m2] = c;
				row[m2++] = (cs[c] + p) * delta;
			}
		if (m2 == 1) /* nothing fits the horizon */
			goto out;
		if (!add_constraintex(lp, m2, row, colno, LE, 0))
			goto out;
		for (int c = 2; c <= ncols; c++)
			if (ct[c] == t) {
				colno[m] = c;
				row[m++] = 1;
			}
		if (!add_constraintex(lp, m, row, colno, EQ, 1))
			goto out;
	}
	for (int j = 0; j < S; j++) {
		int m = 0;

		for (int c = 2; c <= ncols; c++) {
			const spase_opt_t *op = &in->t[ct[c]].opt[co[c]];
			int p = (int)ceil(op->dur / delta - 1e-9);

			if (cs[c] <= j && j < cs[c] + p) {
				colno[m] = c;
				row[m++] = op->gpus;
			}
		}
		if (m > 0 && !add_constraintex(lp, m, row, colno, LE, cap[j]))
			goto out;
	}
	set_add_rowmode(lp, FALSE);
	colno[0] = 1;
	row[0] = 1;
	if (!set_obj_fnex(lp, 1, row, colno))
		goto out;
	set_minim(lp);
	{
		int ret = solve(lp);
		double mm;

		if ((ret != OPTIMAL && ret != SUBOPTIMAL) ||
		    !get_variables(lp, x + 1))
			goto out;
		for (int t = 0; t < in->nt; t++) {
			cand->opt[t] = best->opt[t];
			key[t] = in->t[t].pinned ? -1 : INFINITY;
		}
		for (int c = 2; c <= ncols; c++)
			if (x[c] > 0.5) {
				cand->opt[ct[c]] = co[c];
				key[ct[c]] = cs[c] + 1e-3 * ct[c];
			}
		for (int t = 0; t < in->nt; t++)
			cand->order[t] = t;
		/* Order by the MILP's start slots (insertion sort: <= 10). */
		for (int i = 1; i < in->nt; i++)
			for (int j = i; j > 0 && key[cand->order[j - 1]] >
						       key[cand->order[j]];
			     j--) {
				int v = cand->order[j];

				cand->order[j] = cand->order[j - 1];
				cand->order[j - 1] = v;
			}
		mm = spase_decode(w, cand, 1);
		if (mm >= 0 && mm < mk) {
			res = mm;
			spase_sol_copy(in, best, cand);
		}
	}
out:
	if (lp)
		delete_lp(lp);
	free(colno);
	free(row);
	free(ct);
	free(co);
	free(cs);
	free(x);
	free(cap);
	free(key);
	spase_sol_destroy(cand);
	return res;
}
