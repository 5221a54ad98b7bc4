/* milp.c - lp_solve models for the planner (placeholder: not used yet). */
#include "config.h"

#include "planner_int.h"

double spase_milp_bound(const spase_inst_t *in, double lower, double budget_s,
			spase_clock_t *clk)
{
	return 0;
}

double spase_milp_improve(const spase_inst_t *in, spase_work_t *w,
			  spase_sol_t *best, double mk, double lower,
			  double budget_s, spase_clock_t *clk, double *proved)
{
	*proved = 0;
	return mk;
}
