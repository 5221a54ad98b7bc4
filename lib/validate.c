/* validate.c - plan validation and GPU id assignment. (Skeleton.) */
#include "config.h"

#include "model.h"

int saturn_plan_assign_gpus(saturn_plan_t *plan, const saturn_problem_t *p, saturn_error_t *err)
{
	return saturn_error_set(err, "not implemented");
}

int saturn_plan_resolve(saturn_plan_t *plan, const saturn_problem_t *p, saturn_error_t *err)
{
	return saturn_error_set(err, "not implemented");
}

int saturn_plan_validate(const saturn_plan_t *plan, const saturn_problem_t *p, saturn_error_t *err)
{
	return saturn_error_set(err, "not implemented");
}
