/* saturn-run - the job-side launcher (saturn-run(1)).
 *
 * Called from a user's batch script (`srun saturn-run --batches N -- CMD`),
 * it reads the plan's assignment from the environment (SATURN_TECHNIQUE,
 * SATURN_GPUS, SATURN_TECHNIQUE_PARAMS, ...), builds the launch line from
 * the technique's template, runs it in its own process group, forwards
 * signals to that group, turns the program's progress lines (read from a
 * FIFO named in SATURN_PROGRESS_PIPE) into the progress file the controller
 * reads, and implements checkpoint-before-requeue. SATURN_MODE=signature and
 * SATURN_MODE=trial serve the companion profiler job (saturn-profile(1)).
 *
 * This file holds main: the options, the mode, the progress file and the
 * resume point; the rest is in the files run.h lists.
 */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobenv.h"
#include "numparse.h"
#include "run.h"

const char *const run_prog = "saturn-run";

/* An option value numparse refused: print its message; -1 (saturn-run
 * exits EXIT_SETUP, not 2: its own failures must not look like the
 * program's exit status). */
static int bad_option(const saturn_error_t *err)
{
	fprintf(stderr, "%s: %s\n", run_prog, err->text);
	return -1;
}

/* Parse the options into o (optind then indexes the command).
 * Returns 0, 1 after --help, or -1 after a message. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
	    {"batches", required_argument, NULL, 'b'},
	    {"signature", required_argument, NULL, 's'},
	    {"direct", no_argument, NULL, 'd'},
	    {"grace", required_argument, NULL, 'g'},
	    {"checkpoint-on-term", no_argument, NULL, 'T'},
	    {"resume", required_argument, NULL, 'r'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "+b:s:dg:Tr:vh", longopts, NULL)) !=
	       -1) {
		saturn_error_t err = {{0}};

		switch (c) {
		case 'b':
			if (saturn_parse_double("--batches", optarg, 0, INFINITY,
						0, &o->batches, &err) < 0)
				return bad_option(&err);
			break;
		case 's':
			o->signature = optarg;
			break;
		case 'd':
			o->direct = 1;
			break;
		case 'g': /* seconds */
			if (saturn_parse_double("--grace", optarg, 0, INFINITY, 0,
						&o->grace, &err) < 0)
				return bad_option(&err);
			break;
		case 'T':
			o->ckpt_on_term = 1;
			break;
		case 'r': /* a batch number */
			if (saturn_parse_double("--resume", optarg, 0, INFINITY,
						0, &o->resume, &err) < 0)
				return bad_option(&err);
			o->have_resume = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			printf("usage: %s [--batches N] [--signature S] "
			       "[--direct] [--grace S]\n"
			       "       [--checkpoint-on-term] [--resume N] "
			       "[--verbose] -- CMD [ARGS...]\n"
			       "see saturn-run(1)\n",
			       run_prog);
			return 1;
		default:
			return -1;
		}
	}
	return 0;
}

/* The resume point: explicit, else from the environment, else from our own
 * progress file of an earlier run of this job (requeue); 0 in a trial.
 * Returns 0, or -1 after a message. */
static int resume_point(struct opts *o, const struct run *r)
{
	int have = 0;

	if (!o->have_resume &&
	    run_env_num(SATURN_RESUME_BATCH_ENV, &o->resume, &have) < 0)
		return -1;
	if (!o->have_resume && !have && r->progress_file && !r->trial) {
		saturn_progress_t old;

		if (saturn_progress_read(r->progress_file, (long)getuid(), &old,
					 NULL) == 0 &&
		    old.job_id == r->job_id && r->job_id != 0)
			o->resume = old.batches_done;
	}
	if (r->trial)
		o->resume = 0;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.grace = 60};
	struct run r = {.fifo_rd = -1, .fifo_wr = -1, .t_warm = -1};
	const char *mode = getenv(SATURN_MODE_ENV);
	const char *pfile = getenv(SATURN_PROGRESS_FILE_ENV);
	const char *j = getenv("SLURM_JOB_ID");
	const char *procid = getenv("SLURM_PROCID");
	int rc;

	if ((rc = parse_opts(argc, argv, &o)) != 0)
		return rc > 0 ? 0 : EXIT_SETUP;
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		fprintf(
		    stderr,
		    "%s: no command (usage: %s [options] -- CMD [ARGS...])\n",
		    run_prog, run_prog);
		return EXIT_SETUP;
	}
	if (o.batches == 0 &&
	    run_env_num(SATURN_BATCHES_ENV, &o.batches, NULL) < 0)
		return EXIT_SETUP;
	if (mode && strcmp(mode, "signature") == 0)
		return run_mode_signature(&o, argc, argv);
	if (mode && *mode && strcmp(mode, "trial") != 0 &&
	    strcmp(mode, "run") != 0) {
		fprintf(stderr,
			"%s: SATURN_MODE=%s: want signature, trial or run\n",
			run_prog, mode);
		return EXIT_SETUP;
	}
	r.trial = mode && strcmp(mode, "trial") == 0;
	r.total = o.batches;
	r.job_id = j ? atol(j) : 0;
	/* one writer per job: task 0 of the step */
	if (!r.trial && pfile && *pfile &&
	    (!procid || strcmp(procid, "0") == 0))
		r.progress_file = pfile;
	if (r.trial && run_trial_setup(&r) < 0)
		return EXIT_SETUP;
	if (resume_point(&o, &r) < 0)
		return EXIT_SETUP;
	r.done = o.resume;
	return run_launch(&o, &r, argc, argv);
}
