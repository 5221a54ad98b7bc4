/* fuzz_plan.c - libFuzzer harness for saturn_plan_parse(): no crash on any
 * input; an accepted plan round-trips through saturn_plan_to_json() (run by
 * run-fuzz.sh). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = saturn_plan_parse((const char *)data, size, &err), *q;
	char *a, *b;

	if (!plan) {
		if (!err.text[0])
			abort();
		return 0;
	}
	for (int pretty = 0; pretty < 2; pretty++) {
		a = saturn_plan_to_json(plan, pretty);
		if (!a)
			abort();
		q = saturn_plan_parse(a, strlen(a), &err);
		if (!q)
			abort();
		b = saturn_plan_to_json(q, pretty);
		if (!b || strcmp(a, b) != 0)
			abort();
		free(a);
		free(b);
		saturn_plan_destroy(q);
	}
	saturn_plan_destroy(plan);
	return 0;
}
