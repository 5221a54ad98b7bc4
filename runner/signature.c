/* signature.c - SATURN_MODE=signature of saturn-run (saturn-run(1), MODES).
 *
 * The companion profiler job runs each task's batch script once in this
 * mode to learn what determines the task's speed: the task's signature,
 * --signature or else derived from the command line (the program's base
 * name and its options, minus those that do not change speed, such as the
 * learning rate or the output folder). Nothing is run; the signature and the
 * batch count go to SATURN_REPORT_FILE.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobenv.h"
#include "run.h"

/* Options that do not change speed: dropped from a derived signature with
 * their value. SATURN_SIGNATURE_IGNORE (comma-separated) replaces the list. */
static const char *default_ignore =
    "--lr,--learning-rate,--learning_rate,--seed,--weight-decay,--weight_decay,"
    "--wd,"
    "--warmup-steps,--warmup_steps,--output,--output-dir,--output_dir,--out,"
    "--save,--save-dir,--save_dir,--checkpoint,--checkpoint-dir,--checkpoint_"
    "dir,"
    "--resume,--run-name,--run_name,--name,--log-dir,--log_dir,--wandb-project,"
    "--tag";

static char *derive_signature(int argc, char **argv)
{
	const char *list = getenv(SATURN_SIGNATURE_IGNORE_ENV);
	size_t cap = 1, len = 0;
	char *s;

	if (!list)
		list = default_ignore;
	for (int i = 0; i < argc; i++)
		cap += strlen(argv[i]) + 1;
	if (!(s = calloc(1, cap)))
		return NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int tv;

		if (i == 0) {
			const char *slash = strrchr(a, '/');

			/* the program's name, not where it is installed */
			a = slash ? slash + 1 : a;
		} else if (a[0] == '-' && run_list_match(a, list, &tv)) {
			if (tv && i + 1 < argc && argv[i + 1][0] != '-')
				i++;
			continue;
		}
		len += sprintf(s + len, "%s%s", len ? " " : "", a);
	}
	return s;
}

int run_mode_signature(const struct opts *o, int argc, char **argv)
{
	const char *report = getenv(SATURN_REPORT_FILE_ENV);
	char *sig;
	json_object *r;
	int rc;

	if (!report || !*report) {
		fprintf(stderr,
			"%s: SATURN_MODE=signature needs SATURN_REPORT_FILE\n",
			run_prog);
		return EXIT_SETUP;
	}
	sig =
	    o->signature ? strdup(o->signature) : derive_signature(argc, argv);
	if (!sig || !*sig) {
		fprintf(stderr, "%s: empty signature\n", run_prog);
		free(sig);
		return EXIT_SETUP;
	}
	if (strlen(sig) > 255) {
		/* keep it readable and within the profile's id limit */
		unsigned long h = 5381;

		for (char *p = sig; *p; p++)
			h = h * 33 + (unsigned char)*p;
		sprintf(sig + 230, "...#%08lx", h & 0xffffffffUL);
	}
	if ((r = json_object_new_object())) {
		json_object_object_add(r, "signature", json_object_new_string(sig));
		json_object_object_add(r, "batches", json_object_new_int64((int64_t)rint(o->batches)));
	}
	rc = run_write_report(report, r, "the signature report") < 0 ? EXIT_SETUP : 0;
	free(sig);
	return rc;
}
