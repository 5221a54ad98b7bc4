/* fuzz_text.c - libFuzzer harness for the small text readers whose input a
 * user controls: the plan record in a job's Comment (planrec.c: find,
 * parse, merge, observe; `saturn status --sacct` reads it back), the job's
 * --constraint (saturn_constraint_match), its TRES-per-node request
 * (saturn_tres_parse) and the typed GRES string a release builds from it
 * (saturn_gres_string). The input is split at its first NUL byte: the text
 * before, a second string (node features) after. Aborts when a record the
 * merge wrote is not found again as the last record, when a merged record
 * does not parse back to the record written, when observe does not leave
 * exactly one obs_spb, or on any sanitizer report (run by run-fuzz.sh). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobreq.h"
#include "node_class.h"
#include "planrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *features, *merged, *obs;
	const char *nul;
	saturn_error_t err = {{0}};
	saturn_planrec_read_t rd, back;
	saturn_planrec_t r = {.batch = "b.1", .task_id = 3, .technique = "ddp", .gpus = 4,
			      .node = "n1", .plan_id = "p1-2", .pred_spb = 0.25};
	saturn_tres_req_t tr;
	char rec[SATURN_PLANREC_MAX], why[160], gres[128];

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	nul = memchr(data, 0, size);
	features = nul ? text + (nul - (const char *)data) + 1 : "";

	/* the plan record in a user's Comment */
	(void)saturn_planrec_find(text);
	(void)saturn_planrec_parse(text, &rd, &err);
	saturn_planrec_format(&r, rec, sizeof(rec));
	merged = saturn_planrec_merge(text, rec);
	if (!merged)
		abort();
	if (strcmp(saturn_planrec_find(merged), rec) != 0)
		abort(); /* the record just written is the one found */
	if (saturn_planrec_parse(merged, &back, &err) < 0 || strcmp(back.batch, "b.1") ||
	    back.task_id != 3 || back.gpus != 4 || strcmp(back.node, "n1") ||
	    strcmp(back.plan_id, "p1-2"))
		abort();
	obs = saturn_planrec_observe(merged, 0.5);
	if (!obs || !strstr(saturn_planrec_find(obs), " obs_spb=0.5") ||
	    strstr(strstr(saturn_planrec_find(obs), " obs_spb=") + 1, " obs_spb="))
		abort();
	free(obs);
	free(merged);

	/* --constraint against node features, and the GPU request */
	(void)saturn_constraint_match(text, features);
	(void)saturn_gpu_type_match(text, features);
	if (saturn_tres_parse(text, &tr, why, sizeof(why)) == 0) {
		if (tr.gpus < 0 || tr.gpus > 1000000 || !memchr(tr.gpu_type, 0, sizeof(tr.gpu_type)))
			abort();
		if (tr.gpus > 0 &&
		    saturn_gres_string(gres, sizeof(gres), "gres/", tr.gpu_type, tr.gpus) == 0 &&
		    strncmp(gres, "gres/gpu:", 9) != 0)
			abort();
	}
	free(text);
	return 0;
}
