/* fuzz_jobside.c - libFuzzer harness for the job side's parsers of
 * untrusted text: the progress file and protocol lines (written by user
 * programs), technique parameters (from the environment), templates and the
 * technique configuration file, gres.conf Links=. The first byte picks the
 * parser. No crash, leak or sanitizer report on any input; accepted progress
 * round-trips. Run by fuzz-jobside.sh. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "technique.h"
#include "topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	saturn_error_t err = {{0}};
	char *s;
	static saturn_techniques_t *reg;

	if (size < 1)
		return 0;
	if (!reg)
		reg = saturn_techniques_create();
	s = malloc(size);
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 6) {
	case 0: {
		saturn_progress_t p, q;

		if (saturn_progress_parse(s, size - 1, &p, &err) == 0) {
			char *j = saturn_progress_to_json(&p);

			if (!j ||
			    saturn_progress_parse(j, strlen(j), &q, &err) !=
				0 ||
			    q.batches_done != p.batches_done)
				abort();
			free(j);
		}
		break;
	}
	case 1: {
		saturn_proto_msg_t m;

		if (saturn_proto_parse(s, &m, &err) < 0 && !err.text[0])
			abort();
		break;
	}
	case 2: {
		for (int i = 0; i < saturn_techniques_count(reg); i++) {
			char *r = saturn_technique_params(
			    saturn_techniques_get(reg, i), 1 + (int)(size % 8),
			    s, &err);

			free(r);
		}
		break;
	}
	case 3: {
		static const saturn_kv_t v[] = {{"gpus", "2"},
						{"command", "x"}};
		char *cmd[] = {"a", "b"}, **argv = NULL;
		char *r = saturn_template_expand(s, v, 2, &err);

		free(r);
		if (saturn_template_argv(s, v, 2, cmd, 2, &argv, &err) >= 0)
			saturn_argv_free(argv);
		break;
	}
	case 4: {
		/* no plugin directories: they would touch the file system */
		saturn_techniques_t *r = saturn_techniques_create();

		if (!strstr(s, "plugin_dir"))
			saturn_techniques_parse_config(r, s, "fuzz.conf", -1,
						       &err);
		saturn_techniques_destroy(r);
		break;
	}
	default:
		saturn_topology_destroy(
		    saturn_topology_from_gres(s, 25, 16, &err));
		break;
	}
	free(s);
	return 0;
}
