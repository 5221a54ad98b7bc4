/* status.c - `saturn status`: the live plan of sched/saturn, read from the
 * state it persists (STATE_DIR/state.json, saturn-sched-state/1): the
 * batches, each a (user, name) pair, and which task runs or will run where,
 * with which technique and GPU count, when, as a table and a Gantt chart
 * per node; filtered by batch name and/or user. Read-only; talks to no
 * daemon. With --sacct, the tasks in Slurm's accounting instead, ended
 * ones included (status_sacct.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jobenv.h"
#include "cli.h"
#include "formats.h"
#include "safefile.h"
#include "sched_core.h"

#define GANTT_WIDTH 64

static void status_usage(FILE *out)
{
	fprintf(out,
		"Usage: %s status [OPTION]... [BATCH]\n"
		"Show the plan sched/saturn is following (all batches, or those named\n"
		"BATCH): the batches with their users (a batch is a user's batch: two\n"
		"users' batches of one name are two batches), and the state of every task\n"
		"(running, released, planned), its technique, GPUs, node and times, as a\n"
		"table and a Gantt chart per node.\n\n"
		"  -d, --state-dir=DIR   sched/saturn's state folder (default: $SATURN_STATE_DIR,\n"
		"                        else saturn_state_dir or StateSaveLocation/saturn\n"
		"                        from $SLURM_CONF or /etc/slurm/slurm.conf)\n"
		"  -u, --user=USER       only the batches of USER (a user name or uid)\n"
		"  -j, --json            print the state file as it is\n"
		"  -a, --sacct           the tasks in Slurm's accounting instead (sacct; ended\n"
		"                        ones too), from the plan record sched/saturn keeps in\n"
		"                        each task's AdminComment or Comment: start, end, node,\n"
		"                        GPUs, technique, predicted and observed s/batch\n"
		"  -S, --since=TIME      with --sacct: tasks since TIME (sacct -S; now-30days)\n"
		"  -h, --help            show this help\n\n"
		"Exit status: 0 shown, 1 no plan, 2 unreadable state, 64 usage error.\n",
		cli_prog);
}

/* saturn_state_dir=, else StateSaveLocation + /saturn, from slurm.conf. */
static char *state_dir_from_conf(void)
{
	const char *conf = getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "/etc/slurm/slurm.conf";
	char line[4096], save[1024] = "", *dir = NULL;
	FILE *f = fopen(conf, "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *v, *end;

		line[strcspn(line, "\r\n")] = '\0';
		if (!strncasecmp(line, "StateSaveLocation=", 18))
			snprintf(save, sizeof(save), "%s", line + 18);
		if (!strncasecmp(line, "SchedulerParameters=", 20) &&
		    (v = strstr(line, "saturn_state_dir="))) {
			v += 17;
			end = v + strcspn(v, ", \t");
			free(dir);
			dir = strndup(v, (size_t)(end - v));
		}
	}
	fclose(f);
	if (!dir && save[0] && asprintf(&dir, "%s/saturn", save) < 0)
		dir = NULL;
	return dir;
}

/* USER as a uid: digits, or a name known to the system; -1 when neither. */
static long parse_user(const char *u)
{
	struct passwd *pw;
	char *end;
	long v;

	if (u[0] >= '0' && u[0] <= '9') {
		errno = 0;
		v = strtol(u, &end, 10);
		return (*end || errno || v < 0 || v > (long)UINT32_MAX) ? -1 : v;
	}
	pw = getpwnam(u);
	return pw ? (long)pw->pw_uid : -1;
}

static void user_label(long uid, char *buf, size_t len)
{
	struct passwd *pw;

	if (uid < 0)
		snprintf(buf, len, "?");
	else if ((pw = getpwuid((uid_t)uid)))
		snprintf(buf, len, "%s (%ld)", pw->pw_name, uid);
	else
		snprintf(buf, len, "uid %ld", uid);
}

static int task_selected(const saturn_sched_state_task_t *t, const char *batch, long user)
{
	if (batch && (!t->batch || strcmp(t->batch, batch)))
		return 0;
	return user < 0 || t->uid == user;
}

/* The selected tasks' batches, one row per (uid, name) in order of first
 * appearance, into a calloc'd array (*rows); returns their number or -1
 * (ENOMEM). */
static int batch_rows(const saturn_sched_state_t *st, const char *batch, long user,
		      cli_batch_row_t **rows, long **uids)
{
	int n = 0;

	*rows = calloc((size_t)(st->ntasks ? st->ntasks : 1), sizeof(**rows));
	*uids = calloc((size_t)(st->ntasks ? st->ntasks : 1), sizeof(**uids));
	if (!*rows || !*uids)
		return -1;
	for (int i = 0; i < st->ntasks; i++) {
		const saturn_sched_state_task_t *t = &st->tasks[i];
		const char *name = t->batch ? t->batch : "?";
		int r = 0;

		if (!task_selected(t, batch, user))
			continue;
		while (r < n && ((*uids)[r] != t->uid || strcmp((*rows)[r].batch, name)))
			r++;
		if (r == n) {
			(*rows)[n].batch = name;
			(*uids)[n] = t->uid;
			user_label(t->uid, (*rows)[n].user, sizeof((*rows)[n].user));
			n++;
		}
		(*rows)[r].tasks++;
		if (t->state && !strcmp(t->state, "running"))
			(*rows)[r].running++;
		else if (t->state && !strcmp(t->state, "released"))
			(*rows)[r].released++;
		else
			(*rows)[r].planned++;
	}
	return n;
}

/* A task on several nodes: its other nodes into the plan entry (the
 * chart draws it on each). 0, or -1 on ENOMEM. */
static int entry_more_nodes(saturn_assign_t *as, const saturn_sched_state_task_t *t)
{
	if (t->nnodes <= 1)
		return 0;
	as->more_names = calloc((size_t)t->nnodes - 1, sizeof(char *));
	as->more_nodes = calloc((size_t)t->nnodes - 1, sizeof(int));
	if (!as->more_names || !as->more_nodes)
		return -1;
	as->nnodes = t->nnodes;
	for (int k = 0; k + 1 < t->nnodes; k++) {
		as->more_nodes[k] = -1;
		if (!(as->more_names[k] = strdup(t->more_nodes[k])))
			return -1;
	}
	return 0;
}

/* The GPU nodes the state was planned on, with their GPU counts, for the
 * Gantt chart (idle nodes and GPUs shown); NULL when the state has none
 * (written before it recorded them) or a task's node is not among them:
 * the chart then derives nodes and sizes from the plan. */
/* "Node classes: a100x2-pcie: n1 n2 (4 GPUs); h100x2-nvlink: n3 n4 (4
 * GPUs)" when the state records the nodes' classes (node_class.h). */
static void print_classes(const saturn_sched_state_t *st)
{
	int any = 0;

	for (int i = 0; i < st->nnodes; i++) {
		int seen = 0, gpus = 0;

		if (!st->nodes[i].klass)
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = st->nodes[k].klass && !strcmp(st->nodes[k].klass, st->nodes[i].klass);
		if (seen)
			continue;
		printf("%s%s:", any ? "; " : "Node classes: ", st->nodes[i].klass);
		any = 1;
		for (int k = i; k < st->nnodes; k++)
			if (st->nodes[k].klass && !strcmp(st->nodes[k].klass, st->nodes[i].klass)) {
				printf(" %s", st->nodes[k].name);
				gpus += st->nodes[k].gpus;
			}
		printf(" (%d GPUs)", gpus);
	}
	if (any)
		printf("\n\n");
}

static saturn_problem_t *state_nodes(const saturn_sched_state_t *st,
				     const saturn_plan_t *plan)
{
	saturn_problem_t *p;

	if (st->nnodes == 0 || !(p = saturn_problem_create()))
		return NULL;
	for (int i = 0; i < st->nnodes; i++) {
		saturn_node_t n = {0};

		n.name = strdup(st->nodes[i].name); /* owned by p once added */
		n.gpus = st->nodes[i].gpus;
		if (!n.name || saturn_problem_add_node(p, &n) < 0) {
			free(n.name);
			goto none;
		}
	}
	for (int i = 0; i < plan->nassign; i++) {
		int found = 0;

		for (int j = 0; j < saturn_assign_nnodes(&plan->assign[i]); j++) {
			const char *nm = saturn_assign_name_at(&plan->assign[i], j);

			found = 0;
			for (int k = 0; nm && k < p->nnodes && !found; k++)
				found = !strcmp(p->nodes[k].name, nm);
			if (!found)
				goto none;
		}
	}
	return p;
none:
	saturn_problem_destroy(p);
	return NULL;
}

/* The state the caller may read, through dfd (the state folder) without
 * following a link and without blocking (a FIFO is refused, not waited
 * on): state.json when readable (root, SlurmUser), else the public view
 * users/all.json, else the caller's own users/UID.json. *path names the
 * file read (malloc'd). NULL with err when none is readable. */
static char *read_visible_state(int dfd, const char *dir, char **path, size_t *len,
				saturn_error_t *err)
{
	char *buf, name[40], udir[4096];
	int ufd, e;
	long me = (long)getuid();

	*path = NULL;
	buf = saturn_file_read_at(dfd, dir, "state.json", NULL, 0, 64u << 20, len, NULL, err);
	if (buf || (errno != EACCES && errno != EPERM)) {
		if (buf && asprintf(path, "%s/state.json", dir) < 0)
			*path = NULL;
		return buf;
	}
	snprintf(udir, sizeof(udir), "%s/users", dir);
	/* 0711: searched, never listed (O_PATH needs no read permission) */
	ufd = openat(dfd, "users", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0) {
		saturn_error_set(err, "%s/state.json is readable by root and SlurmUser only, and %s: %s (a sched/saturn older than the per-user views, or not running)",
				 dir, udir, strerror(errno));
		return NULL;
	}
	snprintf(name, sizeof(name), "all.json");
	buf = saturn_file_read_at(ufd, udir, name, NULL, 0, 64u << 20, len, NULL, err);
	if (!buf && errno == ENOENT) {
		/* only the caller's own file may be read as the caller's view */
		long owners[1] = {me};

		snprintf(name, sizeof(name), "%ld.json", me);
		buf = saturn_file_read_at(ufd, udir, name, owners, 1, 64u << 20, len, NULL, err);
		e = errno;
		if (!buf && e == ENOENT)
			saturn_error_set(err, "no Saturn state visible to uid %ld: Slurm's PrivateData hides other users' jobs, %s/state.json is readable by root and SlurmUser only, and there is no view of yours (%s/%s: you have no planned Saturn tasks, or slurmctld does not run as root)",
					 me, dir, udir, name);
	}
	close(ufd);
	if (buf && asprintf(path, "%s/%s", udir, name) < 0)
		*path = NULL;
	return buf;
}

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"state-dir", required_argument, NULL, 'd'},
		{"user", required_argument, NULL, 'u'},
		{"json", no_argument, NULL, 'j'},
		{"sacct", no_argument, NULL, 'a'},
		{"since", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *dir = NULL, *path = NULL, *buf = NULL, a[32], b[32], lb[32];
	const char *batch = NULL, *user_arg = NULL, *since = NULL;
	int sacct = 0;
	char ulabel[64] = "";
	long user = -1;
	cli_batch_row_t *rows = NULL;
	long *row_uids = NULL;
	int nrows;
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st = NULL;
	saturn_plan_t *plan = NULL;
	saturn_problem_t *nodes = NULL;
	int json = 0, c, rc = CLI_EXIT_OK, n = 0, nrun = 0, nrel = 0, dfd, nspeed = 0;
	char **speed = NULL;
	double now = (double)time(NULL), end = 0;
	size_t len;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:u:jaS:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			sacct = 1;
			break;
		case 'S':
			since = optarg;
			break;
		case 'd':
			free(dir);
			dir = strdup(optarg);
			break;
		case 'u':
			user_arg = optarg;
			if ((user = parse_user(optarg)) < 0) {
				free(dir);
				return cli_fail(CLI_EXIT_USAGE, "--user %s: no such user (a user name or uid)",
						optarg);
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			status_usage(stdout);
			return CLI_EXIT_OK;
		default:
			status_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc)
		batch = argv[optind++];
	if (optind < argc) {
		status_usage(stderr);
		free(dir);
		return CLI_EXIT_USAGE;
	}
	if (sacct) {
		free(dir);
		return cli_status_sacct(batch, user_arg, since);
	}
	if (!dir && getenv(SATURN_STATE_DIR_ENV))
		dir = strdup(getenv(SATURN_STATE_DIR_ENV));
	if (!dir)
		dir = state_dir_from_conf();
	if (!dir)
		return cli_fail(CLI_EXIT_INPUT, "no state folder: use --state-dir or set SATURN_STATE_DIR");
	/* state.json (every user's tasks) is root's and SlurmUser's; others
	 * read what sched/saturn wrote for them (doc/security.md,
	 * "PrivateData"): users/all.json when PrivateData hides no jobs,
	 * else users/UID.json with only their own tasks */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		saturn_error_set(&err, "%s: %s", dir, strerror(errno));
		rc = cli_fail(CLI_EXIT_INPUT, "%s", err.text);
		goto out;
	}
	buf = read_visible_state(dfd, dir, &path, &len, &err);
	close(dfd);
	if (!buf) {
		rc = cli_fail(CLI_EXIT_INPUT, "%s", err.text);
		goto out;
	}
	if (json) {
		fwrite(buf, 1, len, stdout);
		goto out;
	}
	st = saturn_sched_state_parse(buf, len, &err);
	if (!st) {
		rc = cli_fail(CLI_EXIT_INPUT, "%s: %s", path ? path : dir, err.text);
		goto out;
	}
	if (user_arg)
		user_label(user, ulabel, sizeof(ulabel));
	for (int i = 0; i < st->ntasks; i++)
		if (task_selected(&st->tasks[i], batch, user))
			n++;
	if (n == 0) {
		printf("no planned Saturn tasks%s%s%s%s (state of %s)\n", batch ? " in batch " : "",
		       batch ? batch : "", user_arg ? " of user " : "", ulabel, path ? path : dir);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	plan = saturn_plan_create(n);
	speed = calloc((size_t)n, sizeof(*speed));
	if (!plan || !speed) {
		rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
		goto out;
	}
	n = 0;
	for (int i = 0; i < st->ntasks; i++) {
		saturn_sched_state_task_t *t = &st->tasks[i];
		saturn_assign_t *as;

		if (!task_selected(t, batch, user))
			continue;
		as = &plan->assign[n++];
		as->task_id = strdup(t->id);
		as->technique = strdup(t->technique ? t->technique : "?");
		as->node_name = strdup(t->node ? t->node : "?");
		as->gpus = t->gpus;
		as->gpu_ids = calloc((size_t)(t->gpus ? t->gpus : 1) * (size_t)(t->nnodes > 1 ? t->nnodes : 1),
				     sizeof(int));
		if (!as->task_id || !as->technique || !as->node_name || !as->gpu_ids ||
		    entry_more_nodes(as, t) < 0) {
			rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
			goto out;
		}
		for (int g = 0; g < t->gpus * saturn_assign_nnodes(as); g++)
			as->gpu_ids[g] = t->gpu_ids ? t->gpu_ids[g] : g % (t->gpus ? t->gpus : 1);
		/* times relative to now; what already started is shown from 0 */
		as->start_s = t->start - now > 0 ? t->start - now : 0;
		as->end_s = t->end - now > as->start_s ? t->end - now : as->start_s;
		if (as->end_s > end)
			end = as->end_s;
		/* runtime feedback: profiled -> observed speed */
		if (t->spb_observed > 0) {
			char sp[64];

			if (!(speed[n - 1] = strdup(cli_speed(t->spb_profile, t->spb_observed, sp,
							       sizeof(sp))))) {
				rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
				goto out;
			}
			nspeed++;
		}
		if (t->state && !strcmp(t->state, "running"))
			nrun++;
		else if (t->state && !strcmp(t->state, "released"))
			nrel++;
	}
	plan->makespan_s = end;
	printf("Plan %s (%s), updated %.0fs ago: %d task%s%s%s%s%s: %d running, %d released, %d planned\n",
	       st->plan_id ? st->plan_id : "?", st->method ? st->method : "?", now - st->updated, n,
	       n == 1 ? "" : "s", batch ? " of batch " : "", batch ? batch : "",
	       user_arg ? " of user " : "", ulabel, nrun, nrel, n - nrun - nrel);
	printf("Planned end in %s (plan made with makespan %s, lower bound %s)\n\n",
	       cli_hms(end, a, sizeof(a)), cli_hms(st->makespan_s, b, sizeof(b)),
	       cli_hms(st->lower_bound_s, lb, sizeof(lb)));
	if ((nrows = batch_rows(st, batch, user, &rows, &row_uids)) < 0) {
		rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
		goto out;
	}
	print_classes(st);
	cli_print_batches(stdout, rows, nrows);
	printf("\n");
	cli_print_table_speed(stdout, plan, nspeed ? speed : NULL);
	printf("\n");
	nodes = state_nodes(st, plan);
	cli_print_gantt(stdout, plan, nodes, GANTT_WIDTH);
out:
	for (int i = 0; speed && plan && i < plan->nassign; i++)
		free(speed[i]);
	free(speed);
	free(rows);
	free(row_uids);
	saturn_problem_destroy(nodes);
	saturn_plan_destroy(plan);
	saturn_sched_state_destroy(st);
	free(buf);
	free(path);
	free(dir);
	return rc;
}
