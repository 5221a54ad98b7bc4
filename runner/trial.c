/* trial.c - SATURN_MODE=trial of saturn-run (saturn-run(1), MODES).
 *
 * The companion profiler job (saturn-profile(1)) measures a task under one
 * technique and GPU count by running its batch script in this mode: the
 * program runs SATURN_TRIAL_WARMUP untimed batches, then
 * SATURN_TRIAL_BATCHES measured ones, and is stopped. This file reads those
 * settings, does the measurement from the progress lines, and writes the
 * report {"status":"measured|oom|failed|timeout",...} to SATURN_REPORT_FILE.
 * Launching and stopping the program is launch.c's.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobenv.h"
#include "run.h"

int run_trial_setup(struct run *r)
{
	r->warmup = 1;
	r->measure = 3;
	if (run_env_num(SATURN_TRIAL_WARMUP_ENV, &r->warmup, NULL) < 0 ||
	    run_env_num(SATURN_TRIAL_BATCHES_ENV, &r->measure, NULL) < 0 ||
	    run_env_num(SATURN_TRIAL_TIMEOUT_ENV, &r->timeout, NULL) < 0)
		return -1;
	if (r->measure < 1)
		r->measure = 1;
	if (!getenv(SATURN_REPORT_FILE_ENV)) {
		fprintf(stderr,
			"%s: SATURN_MODE=trial needs SATURN_REPORT_FILE\n",
			run_prog);
		return -1;
	}
	return 0;
}

void run_trial_line(struct run *r, double done, double sec_per_batch, double t)
{
	if (r->t_warm < 0 && done >= r->warmup) {
		r->t_warm = t;
		r->done_warm = done;
	} else if (r->t_warm >= 0) {
		if (sec_per_batch > 0) {
			r->rep_sum += sec_per_batch;
			r->rep_n++;
		} else {
			r->unrep_n++;
		}
	}
	if (r->t_warm >= 0 && done >= r->done_warm + r->measure &&
	    done > r->done_warm) {
		r->t_meas_end = t;
		/* the program's own per-batch times when it gave them for
		 * every measured line (lines may reach us in bursts), else
		 * our clock */
		if (r->rep_n > 0 && r->unrep_n == 0)
			r->spb = r->rep_sum / r->rep_n;
		else
			r->spb = (t - r->t_warm) / (done - r->done_warm);
		r->trial_done = 1;
	}
}

static void trial_report(struct run *r, const char *status, const char *reason)
{
	json_object *o = json_object_new_object();

	if (o) {
		json_object_object_add(o, "status", json_object_new_string(status));
		json_object_object_add(
		    o, "sec_per_batch",
		    json_object_new_double(strcmp(status, "measured") == 0 ? r->spb : 0.0));
		json_object_object_add(o, "peak_mem_mb", json_object_new_double(r->peak_mem));
		json_object_object_add(o, "reason", json_object_new_string(reason ? reason : ""));
	}
	run_write_report(getenv(SATURN_REPORT_FILE_ENV), o, "the trial report");
}

int run_trial_finish(struct run *r, int rc, int timed_out)
{
	char why[320];

	if (r->trial_done) {
		trial_report(r, "measured", NULL);
	} else if (r->oom || rc == EXIT_OOM) {
		trial_report(r, "oom",
			     r->oom ? r->oom_reason
				    : "exit status 3 (out of GPU memory)");
	} else if (timed_out) {
		snprintf(why, sizeof(why),
			 "no result within %.0f s (%.0f batches done)",
			 r->timeout, r->done);
		trial_report(r, "timeout", why);
	} else {
		if (!r->seen_progress && rc == 0)
			snprintf(why, sizeof(why),
				 "exit status 0 without progress lines "
				 "(does the program follow the "
				 "progress protocol?)");
		else if (rc > 128)
			snprintf(why, sizeof(why),
				 "killed by signal %d after %.0f batches",
				 rc - 128, r->done);
		else
			snprintf(why, sizeof(why),
				 "exit status %d after %.0f batches", rc,
				 r->done);
		trial_report(r, "failed", why);
	}
	return 0;
}
