/* fuzz_profile.c - libFuzzer harness for saturn_profile_parse() (profiles
 * come from files user jobs write): no crash on any input; an accepted
 * profile round-trips, and its planner options can be extracted; every
 * string of an accepted profile is inside its safe character set
 * (safetext.h: names for techniques and classes, one printable line for the
 * rest), and a refusal's message is itself clean text, since both reach
 * slurmctld.log (run by run-fuzz.sh). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "safetext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void line_or_abort(const char *s)
{
	if (s && !saturn_text_ok(s, SATURN_TEXT_LINE))
		abort();
}

static void name_or_abort(const char *s)
{
	if (s && !saturn_text_ok(s, SATURN_TEXT_NAME))
		abort();
}

/* Every string that can reach a log line, a reason or a record. */
static void clean_or_abort(const saturn_profile_t *pr)
{
	line_or_abort(pr->batch);
	for (int h = 0; h < pr->nhw; h++) {
		name_or_abort(pr->hw[h].klass);
		line_or_abort(pr->hw[h].node);
		line_or_abort(pr->hw[h].gpu_model);
		line_or_abort(pr->hw[h].interconnect);
	}
	for (int i = 0; i < pr->ntasks; i++) {
		line_or_abort(pr->tasks[i].signature);
		name_or_abort(pr->tasks[i].klass);
		for (int o = 0; o < pr->tasks[i].noptions; o++) {
			name_or_abort(pr->tasks[i].options[o].technique);
			line_or_abort(pr->tasks[i].options[o].reason);
			line_or_abort(pr->tasks[i].options[o].params);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse((const char *)data, size, &err), *q;
	char *a, *b;

	if (!pr) {
		if (!err.text[0] || !saturn_text_ok(err.text, SATURN_TEXT_LINE))
			abort();
		return 0;
	}
	clean_or_abort(pr);
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
		for (int k = 0; k < n; k++)
			saturn_option_clear(&opts[k]);
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
