/* spank_saturn.c - the SPANK plugin that adds --saturn-batch[=NAME] (and
 * --saturn-reconfigure[=yes|no], SATURN_RECONFIGURE) to sbatch, salloc and
 * srun. In allocator/local context it validates NAME
 * (syntax in plugin/common/submit_rules.h; a bad name makes the command fail
 * with "Invalid --saturn-batch argument" after our own explanation) and puts
 * SATURN_BATCH=NAME into the job's SPANK job-control environment, which
 * carries it to slurmctld (job_submit/saturn, sched/saturn). Without NAME,
 * SATURN_BATCH is sent empty and job_submit/saturn names the batch after the
 * job (the job name is not known to SPANK in allocator context).
 * In remote context (slurmstepd) the option is registered (srun forwards it;
 * an unknown option would be logged as an error) but ignored; in slurmd and
 * job-script contexts the plugin does nothing. The tag has already reached
 * the controller.
 *
 * Inheritance: Slurm re-reads SPANK options from the job's environment
 * (SLURM_SPANK__SLURM_SPANK_OPTION_saturn_saturn_batch), so sbatch run
 * inside a Saturn job would silently join the batch. We ignore a tag that
 * came only from that variable inside a job; --saturn-batch given
 * explicitly (command line or #SBATCH) still counts.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "../common/submit_rules.h"

SPANK_PLUGIN(saturn, 1);

/* Environment variable through which Slurm hands our option to commands run
 * inside the job (prefix SLURM_SPANK_ + "_SLURM_SPANK_OPTION_" + plugin
 * name + "_" + option name, non-alphanumerics as '_'). */
#define SATURN_INHERITED_ENV "SLURM_SPANK__SLURM_SPANK_OPTION_saturn_saturn_batch"

#define SATURN_RECONF_INHERITED_ENV "SLURM_SPANK__SLURM_SPANK_OPTION_saturn_saturn_reconfigure"

static int opt_calls;                            /* option callback calls */
static char opt_name[SATURN_BATCH_NAME_MAX + 1]; /* "" = default name */
static int inherited; /* the only value came from the job's environment */

static int batch_option(int val, const char *optarg, int remote);
static int reconf_option(int val, const char *optarg, int remote);

/* --saturn-reconfigure[=yes|no]: "" = not given */
static char opt_reconf[4];

static struct spank_option reconf_opt = {
	.name = "saturn-reconfigure",
	.arginfo = "[yes|no]",
	.usage = "Allow (yes, the default of the bare option) or forbid (no) "
		 "sched/saturn to restart this running Saturn task with another "
		 "GPU count, technique or node when that ends the batch sooner "
		 "(SIGUSR1: saturn-run checkpoints and exits 75, Slurm requeues "
		 "it). The job must be requeue-able. Without the option the "
		 "cluster's saturn_reconfigure setting decides.",
	.has_arg = 2,
	.val = 1,
	.cb = reconf_option,
};

static struct spank_option batch_opt = {
	.name = "saturn-batch",
	.arginfo = "[NAME]",
	.usage = "Run this job (array) as part of Saturn batch NAME: the "
		 "scheduler profiles the batch and picks each task's GPU count, "
		 "parallelism and start time. NAME: 1-64 of A-Z a-z 0-9 . _ -, "
		 "not starting with - or . (default: the job name). Write "
		 "--saturn-batch=NAME, with '='.",
	.has_arg = 2, /* optional argument */
	.val = 0,
	.cb = batch_option,
};

/* Is this value the one Slurm re-read from the job we run inside? */
static int from_job_env(const char *optarg)
{
	const char *env = getenv(SATURN_INHERITED_ENV);

	return env && optarg && getenv("SLURM_JOB_ID") && !strcmp(env, optarg);
}

static int batch_option(int val, const char *optarg, int remote)
{
	char why[160];

	if (remote)
		return 0; /* slurmstepd: validated at submission already */
	opt_calls++;
	/* Slurm processes the environment first, then #SBATCH lines, then the
	 * command line: a first call carrying the job's own value is the
	 * inherited one. Accept it unchecked (it may read "(null)" for a
	 * bare --saturn-batch) so that srun and sbatch inside the job keep
	 * working; slurm_spank_init_post_opt then ignores it. */
	inherited = opt_calls == 1 && from_job_env(optarg);
	if (inherited)
		return 0;
	if (!optarg || !*optarg) {
		opt_name[0] = '\0';
		return 0;
	}
	if (saturn_batch_name_check(optarg, why, sizeof(why)) < 0) {
		slurm_error("saturn: bad --saturn-batch name '%s': %s", optarg,
			    why);
		return -1;
	}
	snprintf(opt_name, sizeof(opt_name), "%s", optarg);
	return 0;
}

static int reconf_option(int val, const char *optarg, int remote)
{
	const char *env = getenv(SATURN_RECONF_INHERITED_ENV);

	(void)val;
	if (remote)
		return 0;
	/* re-read from the job we run inside (a bare option reads "(null)"):
	 * ignored, like an inherited --saturn-batch */
	if (env && optarg && getenv("SLURM_JOB_ID") && !strcmp(env, optarg))
		return 0;
	if (!optarg || !*optarg || !strcmp(optarg, "yes")) {
		snprintf(opt_reconf, sizeof(opt_reconf), "yes");
		return 0;
	}
	if (!strcmp(optarg, "no")) {
		snprintf(opt_reconf, sizeof(opt_reconf), "no");
		return 0;
	}
	slurm_error("saturn: bad --saturn-reconfigure value '%s': yes or no", optarg);
	return -1;
}

static int client_context(void)
{
	spank_context_t ctx = spank_context();

	return ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_err_t rc;

	/* Registered in remote context too: srun forwards the option to
	 * slurmstepd, which logs "option not found" errors otherwise; there
	 * the callback does nothing. */
	if (!client_context() && spank_context() != S_CTX_REMOTE)
		return 0;
	rc = spank_option_register(sp, &batch_opt);
	if (rc != ESPANK_SUCCESS) {
		slurm_error("saturn: cannot register --saturn-batch: %s",
			    spank_strerror(rc));
		return -1;
	}
	rc = spank_option_register(sp, &reconf_opt);
	if (rc != ESPANK_SUCCESS) {
		slurm_error("saturn: cannot register --saturn-reconfigure: %s",
			    spank_strerror(rc));
		return -1;
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_err_t rc;

	if (!client_context())
		return 0;
	/* only beside --saturn-batch, and not when inherited (below) */
	if (opt_reconf[0] && opt_calls > 0 && !inherited) {
		rc = spank_job_control_setenv(sp, SATURN_RECONFIGURE_ENV, opt_reconf, 1);
		if (rc != ESPANK_SUCCESS) {
			slurm_error("saturn: cannot pass --saturn-reconfigure to the controller: %s",
				    spank_strerror(rc));
			return -1;
		}
	}
	if (opt_calls == 0)
		return 0;
	if (inherited) {
		slurm_verbose("saturn: ignoring --saturn-batch inherited from job %s; pass it explicitly to join the batch",
			      getenv("SLURM_JOB_ID"));
		return 0;
	}
	rc = spank_job_control_setenv(sp, SATURN_BATCH_ENV, opt_name, 1);
	if (rc != ESPANK_SUCCESS) {
		slurm_error("saturn: cannot pass the batch name to the controller: %s",
			    spank_strerror(rc));
		return -1;
	}
	return 0;
}
