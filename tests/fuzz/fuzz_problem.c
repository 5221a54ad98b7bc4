/* fuzz_problem.c - libFuzzer harness for saturn_problem_parse(): whatever
 * the bytes, the parser returns a problem or an error text, never crashes;
 * an accepted problem serialises, parses again and serialises to the same
 * text (run by run-fuzz.sh). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	saturn_error_t err = {{0}};
	saturn_problem_t *p = saturn_problem_parse((const char *)data, size, &err), *q;
	char *a, *b;

	if (!p) {
		if (!err.text[0])
			abort(); /* every failure carries a message */
		return 0;
	}
	a = saturn_problem_to_json(p);
	if (!a)
		abort();
	q = saturn_problem_parse(a, strlen(a), &err);
	if (!q)
		abort(); /* what we write, we read */
	b = saturn_problem_to_json(q);
	if (!b || strcmp(a, b) != 0)
		abort();
	free(a);
	free(b);
	saturn_problem_destroy(q);
	saturn_problem_destroy(p);
	return 0;
}
