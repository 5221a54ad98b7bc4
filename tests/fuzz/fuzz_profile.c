/* fuzz_profile.c - libFuzzer harness for saturn_profile_parse() (profiles
 * come from files user jobs write): no crash on any input; an accepted
 * profile round-trips, and its planner options can be extracted (run by
 * run-fuzz.sh). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse((const char *)data, size, &err), *q;
	char *a, *b;

	if (!pr) {
		if (!err.text[0])
			abort();
		return 0;
	}
	a = saturn_profile_to_json(pr);
	if (!a)
		abort();
	q = saturn_profile_parse(a, strlen(a), &err);
	if (!q)
		abort();
	b = saturn_profile_to_json(q);
	if (!b || strcmp(a, b) != 0)
		abort();
	for (int i = 0; i < pr->ntasks; i++) {
		saturn_option_t *opts;
		int n = saturn_profile_options(&pr->tasks[i], &opts);

		if (n < 0)
			abort();
		for (int k = 0; k < n; k++) {
			free(opts[k].technique);
			free(opts[k].klass);
		}
		free(opts);
		if (pr->tasks[i].ntask_ids > 0 &&
		    !saturn_profile_find(pr, pr->tasks[i].task_ids[0]))
			abort();
	}
	free(a);
	free(b);
	saturn_profile_destroy(q);
	saturn_profile_destroy(pr);
	return 0;
}
