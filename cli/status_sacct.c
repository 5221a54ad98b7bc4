/* status_sacct.c - `saturn status --sacct`: the Saturn tasks of Slurm's
 * accounting, ended ones included, read from the plan record sched/saturn
 * keeps in each released task's AdminComment or Comment
 * (lib/sched/planrec.h) and the times slurmdbd recorded: per batch its
 * first start, last end and makespan, per task its state, start, end,
 * node, GPUs, technique and predicted and observed seconds per batch. Runs
 * sacct (no shell) with the environment's SLURM_CONF; needs
 * AccountingStorageType=accounting_storage/slurmdbd.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "planrec.h"
#include "sched_core.h"

/* sacct's column delimiter: the ASCII unit separator, which no comment,
 * node list or TRES string holds */
#define SEP "\x1f"
#define SACCT_FIELDS "JobID,User,State,Start,End,NodeList,AllocTRES,AdminComment,Comment"
#define SACCT_MAX_OUT (256u << 20)

typedef struct row {
	char *job, *user, *state, *node;
	double start, end; /* epoch, 0: none */
	saturn_planrec_read_t rec;
} row_t;

/* Run sacct with args; its stdout as a malloc'd string (*out), or NULL with
 * a message printed. */
static char *run_sacct(char *const *args)
{
	int fd[2], status;
	pid_t pid;
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (pipe(fd) < 0) {
		cli_fail(CLI_EXIT_FAIL, "pipe: %s", strerror(errno));
		return NULL;
	}
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		cli_fail(CLI_EXIT_FAIL, "fork: %s", strerror(errno));
		return NULL;
	}
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		/* epoch seconds in Start and End */
		setenv("SLURM_TIME_FORMAT", "%s", 1);
		execvp("sacct", args);
		fprintf(stderr, "%s: cannot run sacct: %s\n", cli_prog, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			if (cap > SACCT_MAX_OUT || !(nb = realloc(buf, cap))) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		n = read(fd[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!buf) {
		cli_fail(CLI_EXIT_FAIL, "sacct's output: out of memory or over %u MiB",
			 SACCT_MAX_OUT >> 20);
		return NULL;
	}
	buf[len] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(buf);
		cli_fail(CLI_EXIT_FAIL,
			 "sacct failed (exit %d): is accounting (slurmdbd) configured?",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return NULL;
	}
	return buf;
}

static double epoch(const char *v)
{
	char *end;
	double d = strtod(v, &end);

	return (end != v && !*end && isfinite(d) && d > 0) ? d : 0;
}

/* Split sacct's line into its 9 fields (in place); 0 or -1. */
static int split(char *line, char **f)
{
	for (int i = 0; i < 9; i++) {
		f[i] = line;
		line = strstr(line, SEP);
		if (i < 8) {
			if (!line)
				return -1;
			*line = '\0';
			line += strlen(SEP);
		} else if (line) {
			return -1;
		}
	}
	return 0;
}

/* A job id and its user as sacct lists them with no other column: neither
 * comes from the job's user, so these lines are sacct's own. */
typedef struct idu {
	const char *job, *user;
} idu_t;

static int cmp_idu(const void *x, const void *y)
{
	const idu_t *a = x, *b = y;

	return strcmp(a->job, b->job);
}

/* The lines of the full listing name jobs; a Comment may hold line breaks
 * (scontrol update comment=..., sacctmgr modify job set comment=...) and
 * so forge whole lines of other jobs and users after its own. Keep a row
 * only when sacct's own list (-o JobID,User, nothing of the user's) has
 * its job with the same user, and no other line of the listing names that
 * job. seen[nseen] holds the job id of every line of the listing (sorted
 * here), list[nlist] sacct's own list (sorted here). */
static int row_trusted(const char *job, const char *user, idu_t *list, int nlist,
		       const char **seen, int nseen)
{
	idu_t key = {job, NULL}, *t = bsearch(&key, list, (size_t)nlist, sizeof(*list), cmp_idu);
	int lo = 0, hi = nseen;

	if (!t || strcmp(t->user, user))
		return 0;
	/* first line naming job */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (strcmp(seen[mid], job) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1 >= nseen || strcmp(seen[lo + 1], job) != 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_row(const void *x, const void *y)
{
	const row_t *a = x, *b = y;
	int c = strcmp(a->user, b->user);

	if (c)
		return c;
	if ((c = strcmp(a->rec.batch, b->rec.batch)))
		return c;
	if (a->rec.task_id != b->rec.task_id)
		return a->rec.task_id < b->rec.task_id ? -1 : 1;
	return strcmp(a->job, b->job);
}

static const char *clock_time(double t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%m-%d %H:%M:%S", &tm);
	return buf;
}

static const char *spb(double v, char *buf, size_t len)
{
	if (v > 0)
		snprintf(buf, len, "%.4g", v);
	else
		snprintf(buf, len, "-");
	return buf;
}

static void print_batch(const row_t *r, int n)
{
	double first = 0, last = 0;
	int ended = 0;
	char a[32], b[32], c[32];

	for (int i = 0; i < n; i++) {
		if (r[i].start > 0 && (first == 0 || r[i].start < first))
			first = r[i].start;
		if (r[i].end > 0) {
			ended++;
			if (r[i].end > last)
				last = r[i].end;
		}
	}
	printf("Batch %s of %s: %d task%s, %d ended; first start %s, last end %s", r[0].rec.batch,
	       r[0].user, n, n == 1 ? "" : "s", ended, clock_time(first, a, sizeof(a)),
	       clock_time(last, b, sizeof(b)));
	if (first > 0 && ended == n)
		printf(", makespan %s (%.0f s)", cli_hms(last - first, c, sizeof(c)), last - first);
	printf("\n%-6s %-12s %-10s %-14s %-14s %-9s %-10s %4s %-10s %8s %8s\n", "TASK", "JOB",
	       "STATE", "START", "END", "ELAPSED", "NODE", "GPUS", "TECHNIQUE", "PRED_SPB",
	       "OBS_SPB");
	for (int i = 0; i < n; i++) {
		char t[16], s[32], e[32], el[32], p[32], o[32];

		if (r[i].rec.task_id >= 0)
			snprintf(t, sizeof(t), "%d", r[i].rec.task_id);
		else
			snprintf(t, sizeof(t), "-");
		if (r[i].start > 0 && r[i].end > 0)
			cli_hms(r[i].end - r[i].start, el, sizeof(el));
		else
			snprintf(el, sizeof(el), "-");
		printf("%-6s %-12s %-10s %-14s %-14s %-9s %-10s %4d %-10s %8s %8s\n", t, r[i].job,
		       r[i].state, clock_time(r[i].start, s, sizeof(s)),
		       clock_time(r[i].end, e, sizeof(e)), el,
		       r[i].node[0] ? r[i].node : r[i].rec.node, r[i].rec.gpus,
		       r[i].rec.technique[0] ? r[i].rec.technique : "?",
		       spb(r[i].rec.pred_spb, p, sizeof(p)), spb(r[i].rec.obs_spb, o, sizeof(o)));
	}
}

int cli_status_sacct(const char *batch, const char *user_arg, const char *since)
{
	char sincebuf[64];
	char *args[] = {"sacct",
			"-X",
			"-n",
			"-P",
			"--delimiter=" SEP,
			"-o",
			SACCT_FIELDS,
			"-S",
			NULL,
			user_arg ? "-u" : "-a",
			(char *)user_arg,
			NULL};
	char *out, *ids = NULL, *line, *save = NULL, **lines = NULL;
	const char **seen = NULL;
	idu_t *list = NULL;
	row_t *rows = NULL;
	int n = 0, cap = 0, rc = CLI_EXIT_OK, bad = 0, forged = 0, nlines = 0, nseen = 0,
	    nlist = 0;

	snprintf(sincebuf, sizeof(sincebuf), "%s", since ? since : "now-30days");
	args[8] = sincebuf;
	if (!(out = run_sacct(args)))
		return CLI_EXIT_FAIL;
	/* then sacct's own list of the jobs (after the listing: a job that
	 * ended in between is in both) */
	args[6] = "JobID,User";
	if (!(ids = run_sacct(args))) {
		free(out);
		return CLI_EXIT_FAIL;
	}
	for (line = strtok_r(ids, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *u = strstr(line, SEP);
		idu_t *nl;

		if (!u || strstr(u + 1, SEP))
			continue;
		*u = '\0';
		if (!(nl = realloc(list, (size_t)(nlist + 1) * sizeof(*list)))) {
			rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
			goto out;
		}
		list = nl;
		list[nlist].job = line;
		list[nlist++].user = u + strlen(SEP);
	}
	if (nlist)
		qsort(list, (size_t)nlist, sizeof(*list), cmp_idu);
	save = NULL;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char **nl = realloc(lines, (size_t)(nlines + 1) * sizeof(*lines));

		if (!nl) {
			rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
			goto out;
		}
		lines = nl;
		lines[nlines++] = line;
	}
	if (nlines && !(seen = malloc((size_t)nlines * sizeof(*seen)))) {
		rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
		goto out;
	}
	/* the job id of every line (up to its first separator) */
	for (int i = 0; i < nlines; i++) {
		char *id = strndup(lines[i], strcspn(lines[i], SEP));

		if (!id) {
			rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
			goto out;
		}
		seen[nseen++] = id;
	}
	if (nseen)
		qsort(seen, (size_t)nseen, sizeof(*seen), cmp_str);
	for (int i = 0; i < nlines; i++) {
		char *f[9];
		saturn_error_t err = {{0}};
		row_t r = {0};

		if (split(lines[i], f) < 0) {
			bad++;
			continue;
		}
		/* the record in AdminComment, else in Comment; rows without one
		 * are not Saturn tasks (or saturn_record=none) */
		if (saturn_planrec_parse(f[7], &r.rec, &err) < 0 &&
		    saturn_planrec_parse(f[8], &r.rec, &err) < 0)
			continue;
		if (!row_trusted(f[0], f[1], list, nlist, seen, nseen)) {
			forged++;
			continue;
		}
		if (batch && strcmp(r.rec.batch, batch))
			continue;
		r.job = f[0];
		r.user = f[1];
		r.state = f[2];
		r.start = epoch(f[3]);
		r.end = epoch(f[4]);
		r.node = !strcmp(f[5], "None assigned") ? "" : f[5];
		if (n == cap) {
			row_t *nr;

			cap = cap ? cap * 2 : 64;
			if (!(nr = realloc(rows, (size_t)cap * sizeof(*rows)))) {
				rc = cli_fail(CLI_EXIT_FAIL, "out of memory");
				goto out;
			}
			rows = nr;
		}
		rows[n++] = r;
	}
	if (n == 0) {
		printf("no Saturn tasks with a plan record in Slurm's accounting%s%s since %s\n",
		       batch ? " for batch " : "", batch ? batch : "", sincebuf);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	qsort(rows, (size_t)n, sizeof(*rows), cmp_row);
	for (int i = 0; i < n;) {
		int e = i;

		while (e < n && !strcmp(rows[e].user, rows[i].user) &&
		       !strcmp(rows[e].rec.batch, rows[i].rec.batch))
			e++;
		if (i)
			printf("\n");
		print_batch(&rows[i], e - i);
		i = e;
	}
	if (bad)
		fprintf(stderr, "%s: %d line(s) of sacct's output not understood\n", cli_prog, bad);
out:
	if (forged)
		fprintf(stderr,
			"%s: %d plan record(s) left out: their line is not sacct's own (a job or user that sacct -o JobID,User does not list so, or a job listed twice: a Comment with a line break?)\n",
			cli_prog, forged);
	for (int i = 0; i < nseen; i++)
		free((char *)seen[i]);
	free(seen);
	free(lines);
	free(list);
	free(ids);
	free(rows);
	free(out);
	return rc;
}
