/* release.c - `saturn release --all`: the way out of Saturn. When an
 * administrator turns sched/saturn off (SchedulerType back to
 * sched/backfill, or the plugins removed), the tasks it still holds keep
 * their admin hold (priority 0, WAIT_HELD) and nothing would ever start
 * them. This command releases every such task, as `scontrol release` would,
 * with the request its user made (job_submit/saturn holds a task with the
 * user's --gres=gpu:N; sched/saturn puts it back on every re-hold), so
 * Slurm's own scheduler runs each exactly once. Only pending tasks held by
 * Saturn are touched: running, completed, user-held and non-Saturn jobs
 * are left alone, and a second run finds nothing to do.
 *
 * Talks to slurmctld through libslurm's public API (slurm_load_jobs,
 * slurm_update_job); must run as root or SlurmUser (an operator).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifdef HAVE_LIBSLURM
#include <errno.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

static void release_usage(FILE *out)
{
	fprintf(out,
		"Usage: %s release --all [OPTION]...\n"
		"Release every pending task sched/saturn holds (priority 0, admin hold,\n"
		"reason \"saturn: ...\") with its user's own request, so that Slurm's\n"
		"scheduler runs it: the way out after SchedulerType is switched away from\n"
		"sched/saturn. Run as root or SlurmUser. Running, completed, user-held and\n"
		"other jobs are not touched; running it twice releases nothing twice.\n\n"
		"  -a, --all       release all held Saturn tasks (required)\n"
		"  -n, --dry-run   list what would be released, change nothing\n"
		"  -f, --force     release even while SchedulerType is sched/saturn\n"
		"                  (it would hold the released tasks again)\n"
		"  -h, --help      show this help\n\n"
		"Exit status: 0 every held task released (or none held), 1 a release\n"
		"failed or slurmctld cannot be reached, 64 usage error.\n",
		cli_prog);
}

/* Is a task in this state held by Saturn? A pending job at priority 0 in
 * an administrator's hold whose reason is one of Saturn's ("saturn: ...",
 * set by job_submit/saturn at submission and by sched/saturn after).
 * Users' holds (WAIT_HELD_USER) and operators' own holds (no reason text)
 * are not Saturn's to lift. */
static int is_saturn_hold(int pending, unsigned priority, int admin_hold,
				  const char *reason)
{
	return pending && priority == 0 && admin_hold && reason &&
	       strncmp(reason, "saturn:", 7) == 0;
}

/* "JOBID", "ARRAY_TASK" or, for an array's meta record of pending tasks,
 * "ARRAY_IDS" (array_task_str in full: SLURM_BITSTR_LEN=0; a throttle
 * suffix "%N" dropped), malloc'd, or NULL (ENOMEM). Never cut: with a
 * large MaxArraySize the list of an array's pending tasks can be longer
 * than any fixed buffer, and a list cut inside a number ("1,5,12" -> "1,5,1")
 * would name another task of the array, one that may be running or held
 * by its user. */
static char *job_id_text(const slurm_job_info_t *j)
{
	char *buf;
	int n;

	if (j->array_task_id != NO_VAL)
		n = snprintf(NULL, 0, "%u_%u", j->array_job_id, j->array_task_id);
	else if (j->array_task_str && j->array_task_str[0] && j->array_job_id)
		n = snprintf(NULL, 0, "%u_%.*s", j->array_job_id,
			     (int)strcspn(j->array_task_str, "%"), j->array_task_str);
	else
		n = snprintf(NULL, 0, "%u", j->job_id);
	if (n < 0 || !(buf = malloc((size_t)n + 1)))
		return NULL;
	if (j->array_task_id != NO_VAL)
		snprintf(buf, (size_t)n + 1, "%u_%u", j->array_job_id, j->array_task_id);
	else if (j->array_task_str && j->array_task_str[0] && j->array_job_id)
		snprintf(buf, (size_t)n + 1, "%u_%.*s", j->array_job_id,
			 (int)strcspn(j->array_task_str, "%"), j->array_task_str);
	else
		snprintf(buf, (size_t)n + 1, "%u", j->job_id);
	return buf;
}

/* An admin hold is lifted only by an operator: say so on a refusal. */
static const char *hint(int e)
{
	return e == ESLURM_ACCESS_DENIED || e == ESLURM_JOB_HELD || e == ESLURM_USER_ID_MISSING ? " (run as root or SlurmUser)" : "";
}

/* Send one release; the reply of an array expression carries a code per
 * task range. 0, or -1 after printing what failed. */
static int release_one(job_desc_msg_t *desc)
{
	job_array_resp_msg_t *resp = NULL;
	int rc = 0;

	if (slurm_update_job2(desc, &resp) != SLURM_SUCCESS) {
		int e = errno; /* Slurm sets errno (slurm_get_errno() is gone in 24.11) */

		fprintf(stderr, "%s: release: %s: %s%s\n", cli_prog, desc->job_id_str,
			slurm_strerror(e), hint(e));
		rc = -1;
	}
	for (uint32_t k = 0; resp && k < resp->job_array_count; k++) {
		if (resp->error_code[k] == SLURM_SUCCESS)
			continue;
		fprintf(stderr, "%s: release: %s: %s%s\n", cli_prog,
			resp->job_array_id[k] ? resp->job_array_id[k] : desc->job_id_str,
			slurm_strerror((int)resp->error_code[k]), hint((int)resp->error_code[k]));
		rc = -1;
	}
	if (resp)
		slurm_free_job_array_resp(resp);
	return rc;
}

/* Warn about the configuration that would undo or defeat the release. 1
 * when sched/saturn is still the scheduler. */
static int check_config(void)
{
	slurm_conf_t *conf = NULL;
	int saturn = 0;

	if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
		return 0; /* slurm_load_jobs reports the daemon error */
	if (conf->schedtype && strcmp(conf->schedtype, "sched/saturn") == 0)
		saturn = 1;
	else if (conf->job_submit_plugins && strstr(conf->job_submit_plugins, "saturn"))
		fprintf(stderr,
			"%s: note: JobSubmitPlugins still has saturn: new Saturn jobs are still held; remove it from slurm.conf (or release again later)\n",
			cli_prog);
	slurm_free_ctl_conf(conf);
	return saturn;
}

int cmd_release(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"all", no_argument, NULL, 'a'},
		{"dry-run", no_argument, NULL, 'n'},
		{"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	job_info_msg_t *msg = NULL;
	int all = 0, dry = 0, force = 0, c, found = 0, released = 0, failed = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "anfh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'n':
			dry = 1;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			release_usage(stdout);
			return CLI_EXIT_OK;
		default:
			release_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_fail(CLI_EXIT_USAGE, "release: unexpected argument '%s' (only --all is supported)",
				argv[optind]);
	if (!all)
		return cli_fail(CLI_EXIT_USAGE, "release: say --all (every held Saturn task is released)");

	slurm_init(NULL);
	/* the full list of an array's pending task ids, never "0-99..." */
	setenv("SLURM_BITSTR_LEN", "0", 1);
	if (check_config() && !force && !dry) {
		slurm_fini();
		return cli_fail(CLI_EXIT_FAIL,
				"release: SchedulerType is still sched/saturn, which would hold the tasks again; set SchedulerType=sched/backfill, restart slurmctld, then release (or --force)");
	}
	if (slurm_load_jobs((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
		int e = errno; /* Slurm sets errno (slurm_get_errno() is gone in 24.11) */

		slurm_fini();
		return cli_fail(CLI_EXIT_FAIL, "release: cannot list the jobs: %s", slurm_strerror(e));
	}
	for (uint32_t i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		job_desc_msg_t desc;
		char *id;

		if (!is_saturn_hold((j->job_state & JOB_STATE_BASE) == JOB_PENDING,
						   j->priority, j->state_reason == WAIT_HELD,
						   j->state_desc))
			continue;
		found++;
		if (!(id = job_id_text(j))) {
			fprintf(stderr, "%s: release: JobId=%u: out of memory\n", cli_prog, j->job_id);
			failed++;
			continue;
		}
		if (dry) {
			printf("would release %s (%s; %s)\n", id, j->tres_per_node ? j->tres_per_node : "no GPUs",
			       j->state_desc);
			free(id);
			continue;
		}
		slurm_init_job_desc_msg(&desc);
		desc.job_id_str = id;
		desc.priority = INFINITE; /* what `scontrol release` sends */
		if (release_one(&desc) < 0) {
			failed++;
			free(id);
			continue;
		}
		released++;
		printf("released %s (%s; was: %s)\n", id, j->tres_per_node ? j->tres_per_node : "no GPUs",
		       j->state_desc);
		free(id);
	}
	slurm_free_job_info_msg(msg);
	slurm_fini();
	if (dry)
		printf("%d held Saturn task record(s); nothing changed (--dry-run)\n", found);
	else
		printf("%d held Saturn task record(s): %d released, %d failed\n", found, released, failed);
	return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

#else /* !HAVE_LIBSLURM */

int cmd_release(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_fail(CLI_EXIT_FAIL,
			"release: this saturn was built without libslurm (apt-get install libslurm-dev, then configure again)");
}

#endif
