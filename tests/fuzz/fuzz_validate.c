/* fuzz_validate.c - libFuzzer harness for plan resolution, validation and
 * GPU id assignment: the input is a saturn-problem/1 document, a line
 * "---", and a saturn-plan/1 document. Whatever the plan claims, the
 * validator must answer without crashing, and a plan it accepts must keep
 * validating after saturn_plan_assign_gpus() re-assigns its GPU ids (run by
 * run-fuzz.sh). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *sep = memmem(buf, size, "\n---\n", 5);
	saturn_error_t err = {{0}};
	saturn_problem_t *p;
	saturn_plan_t *plan;

	if (!sep)
		return 0;
	p = saturn_problem_parse(buf, (size_t)(sep - buf), &err);
	if (!p)
		return 0;
	plan = saturn_plan_parse(sep + 5, size - (size_t)(sep - buf) - 5, &err);
	if (!plan) {
		saturn_problem_destroy(p);
		return 0;
	}
	if (saturn_plan_validate(plan, p, &err) == 0) {
		if (saturn_plan_resolve(plan, p, &err) != 0)
			abort(); /* validate resolved it already */
		if (saturn_plan_assign_gpus(plan, p, &err) != 0)
			abort(); /* a valid plan never overloads a node */
		if (saturn_plan_validate(plan, p, &err) != 0)
			abort();
	} else if (saturn_plan_resolve(plan, p, &err) == 0) {
		(void)saturn_plan_assign_gpus(plan, p, &err);
		(void)saturn_plan_validate(plan, p, &err);
	}
	saturn_plan_destroy(plan);
	saturn_problem_destroy(p);
	return 0;
}
