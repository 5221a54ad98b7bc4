/* fuzz_cycle.c - libFuzzer harness for saturn_cycle_record_parse(): no
 * crash on any input, a message on every refusal; of an accepted record,
 * the snapshot and the states round-trip through their writers
 * (saturn_snapshot_to_json, saturn_cycle_state_to_json) unchanged, and the
 * recorded outputs compare equal to themselves (run by run-fuzz.sh). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* text -> parse -> write gives text back */
static void snapshot_stable(const saturn_snapshot_t *s)
{
	saturn_error_t err = {{0}};
	char *a = saturn_snapshot_to_json(s), *b;
	saturn_snapshot_t *q;

	if (!a || !(q = saturn_snapshot_from_json(a, strlen(a), &err)))
		abort();
	b = saturn_snapshot_to_json(q);
	if (!b || strcmp(a, b) != 0)
		abort();
	free(a);
	free(b);
	saturn_snapshot_destroy(q);
}

static void state_stable(const saturn_cycle_state_t *st)
{
	saturn_error_t err = {{0}};
	saturn_cycle_state_t q;
	char *a = saturn_cycle_state_to_json(st), *b, diff[256];

	if (!a || saturn_cycle_state_from_json(a, strlen(a), &q, &err) < 0)
		abort();
	b = saturn_cycle_state_to_json(&q);
	if (!b || strcmp(a, b) != 0 || saturn_cycle_state_diff(a, b, diff, sizeof(diff)) != 0)
		abort();
	free(a);
	free(b);
	saturn_cycle_record_state_clear(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	saturn_error_t err = {{0}};
	saturn_cycle_record_t rec;
	char diff[256];

	if (saturn_cycle_record_parse((const char *)data, size, &rec, &err) < 0) {
		if (!err.text[0] || rec.snap || rec.out)
			abort();
		return 0;
	}
	snapshot_stable(rec.snap);
	state_stable(&rec.state_in);
	if (saturn_cycle_out_diff(rec.out, rec.out, diff, sizeof(diff)) != 0 ||
	    saturn_cycle_state_diff(rec.state_out, rec.state_out, diff, sizeof(diff)) != 0)
		abort();
	saturn_cycle_record_free(&rec);
	return 0;
}
