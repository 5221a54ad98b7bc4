/* planner.c - the SPASE planner's entry points. (Skeleton.) */
#include "config.h"

#include <string.h>

#include "planner.h"

void saturn_planner_opts_init(saturn_planner_opts_t *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->time_limit_s = 5.0;
	opts->use_milp = -1;
}

int saturn_planner_bounds(const saturn_problem_t *p, saturn_bounds_t *b, saturn_error_t *err)
{
	return saturn_error_set(err, "not implemented");
}

saturn_plan_t *saturn_planner_solve(const saturn_problem_t *p, const saturn_planner_opts_t *opts, saturn_error_t *err)
{
	saturn_error_set(err, "not implemented");
	return NULL;
}

saturn_plan_t *saturn_planner_baseline(const saturn_problem_t *p, int gpus, saturn_error_t *err)
{
	saturn_error_set(err, "not implemented");
	return NULL;
}
