/* trials.c - saturn-profile's trial machinery (trials.h): the batch script
 * as a child process with a deadline, saturn-run's report files, and the
 * pool that packs trials first-fit onto disjoint GPUs of the allocation.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jobenv.h"
#include "formats.h"
#include "trials.h"

int work_dir_make(char *work)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(work, PATH_MAX, "%s/saturn-profile.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(work)) {
		fprintf(stderr, "%s: mkdtemp %s: %s\n", prog, work,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? -1 : 0;
}

void work_dir_done(const struct opts *o, const char *work)
{
	if (o->keep) {
		fprintf(stderr, "%s: trial logs kept in %s\n", prog, work);
		return;
	}
	/* depth first, symbolic links removed, not followed */
	if (nftw(work, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		fprintf(stderr, "%s: could not remove %s: %s\n", prog, work,
			strerror(errno));
}

double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

pid_t spawn_script(const char *script, const char *log, char *const *env)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	setpgid(0, 0);
	for (int i = 0; env[i]; i++)
		putenv(env[i]);
	unsetenv(SATURN_PROGRESS_FILE_ENV);
	{
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		if (nul >= 0) {
			dup2(nul, 0);
			close(nul);
		}
	}
	if (access(script, X_OK) == 0)
		execl(script, script, (char *)NULL);
	execl("/bin/sh", "sh", script, (char *)NULL);
	_exit(127);
}

int wait_deadline(pid_t pid, double deadline, int *timed_out)
{
	int st = 0;

	*timed_out = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
		if (mono() > deadline && !*timed_out) {
			*timed_out = 1;
			kill(-pid, SIGKILL);
		}
		usleep(20000);
	}
}

json_object *load_report(const char *path)
{
	size_t len;
	char *buf = saturn_read_file(path, 65536, &len, NULL);
	json_object *o;

	if (!buf)
		return NULL;
	o = json_tokener_parse(buf);
	free(buf);
	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

const char *report_str(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) &&
		       json_object_is_type(v, json_type_string)
		   ? json_object_get_string(v)
		   : NULL;
}

double report_num(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		return -1;
	if (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double))
		return -1;
	return json_object_get_double(v);
}

int visible_devices(char ids[][32], int max)
{
	const char *s = getenv("CUDA_VISIBLE_DEVICES");
	int n = 0;

	if (!s || !*s)
		s = getenv("SLURM_JOB_GPUS");
	if (!s || !*s)
		return 0;
	while (*s && n < max) {
		size_t l = strcspn(s, ",");

		snprintf(ids[n++], 32, "%.*s", (int)(l < 31 ? l : 31), s);
		s += l;
		if (*s == ',')
			s++;
	}
	return n;
}

static int start_trial(struct trial_pool *p, struct trial *tr, int seq)
{
	const struct opts *o = p->o;
	char *env[18], vis[MAX_GPUS * 33] = "";
	int nodes = tr->nodes > 1 ? tr->nodes : 1;
	size_t off = 0;
	int ne = 0;

	for (int i = 0; i < tr->gpus; i++)
		off += snprintf(vis + off, sizeof(vis) - off, "%s%s",
				i ? "," : "", p->devs[tr->gpu_idx[i]]);
	snprintf(tr->report, sizeof(tr->report), "%s/trial-%d.json", p->work,
		 seq);
	snprintf(tr->log, sizeof(tr->log), "%s/trial-%d.log", p->work, seq);
	unlink(tr->report);
	if (asprintf(&env[ne++], "SLURM_ARRAY_TASK_ID=%d", tr->task_id) < 0 ||
	    asprintf(&env[ne++], SATURN_TECHNIQUE_ENV "=%s", tr->technique) < 0 ||
	    asprintf(&env[ne++], SATURN_GPUS_ENV "=%d", tr->gpus) < 0 ||
	    asprintf(&env[ne++], SATURN_TECHNIQUE_PARAMS_ENV "=%s", tr->params) <
		0 ||
	    asprintf(&env[ne++], SATURN_TRIAL_BATCHES_ENV "=%d", o->trial_batches) <
		0 ||
	    asprintf(&env[ne++], SATURN_TRIAL_WARMUP_ENV "=%d", o->warmup) < 0 ||
	    asprintf(&env[ne++], SATURN_TRIAL_TIMEOUT_ENV "=%.0f", o->timeout) < 0 ||
	    asprintf(&env[ne++], SATURN_REPORT_FILE_ENV "=%s", tr->report) < 0 ||
	    asprintf(&env[ne++], "CUDA_VISIBLE_DEVICES=%s", vis) < 0 ||
	    asprintf(&env[ne++], SATURN_VISIBLE_DEVICES_ENV "=%s", vis) < 0 ||
	    asprintf(&env[ne++], SATURN_BATCH_ENV "=%s", o->batch) < 0 ||
	    asprintf(&env[ne++], SATURN_MODE_ENV "=%s", "trial") < 0 ||
	    asprintf(&env[ne++], "SLURM_OVERLAP=%s", "1") < 0 ||
	    /* the trial's nodes, not the job's: saturn-run launches on
	     * several nodes only for a multi-node trial */
	    asprintf(&env[ne++], "SLURM_JOB_NUM_NODES=%d", nodes) < 0 ||
	    asprintf(&env[ne++], "SLURM_NNODES=%d", nodes) < 0)
		return -1;
	env[ne] = NULL;
	tr->start = mono();
	tr->pid = spawn_script(o->script, tr->log, env);
	for (int i = 0; i < ne; i++)
		free(env[i]);
	return tr->pid > 0 ? 0 : -1;
}

/* Read the trial's report into its result fields. */
static void finish_trial(struct trial *tr, int st, int timed_out)
{
	json_object *r = load_report(tr->report);
	const char *status = r ? report_str(r, "status") : NULL;
	const char *reason = r ? report_str(r, "reason") : NULL;
	double spb = r ? report_num(r, "sec_per_batch") : 0,
	       mem = r ? report_num(r, "peak_mem_mb") : 0;

	tr->state = SATURN_PT_FAILED;
	tr->reported = 0;
	tr->sec_per_batch = 0;
	if (mem < 0)
		mem = 0;
	if (timed_out) {
		tr->state = SATURN_PT_TIMEOUT;
		snprintf(tr->reason, sizeof(tr->reason),
			 "trial did not finish in time (log %s)", tr->log);
	} else if (!status) {
		snprintf(tr->reason, sizeof(tr->reason),
			 "no trial report (%s %d; log %s)",
			 WIFEXITED(st) ? "exit status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 tr->log);
	} else {
		tr->reported = 1;
		if (strcmp(status, "measured") == 0 && spb > 0) {
			tr->state = SATURN_PT_MEASURED;
			tr->sec_per_batch = spb;
		} else if (strcmp(status, "oom") == 0) {
			tr->state = SATURN_PT_OOM;
		} else if (strcmp(status, "timeout") == 0) {
			tr->state = SATURN_PT_TIMEOUT;
		}
		snprintf(tr->reason, sizeof(tr->reason), "%s",
			 reason ? reason : "");
	}
	tr->peak_mem_mb = mem;
	json_object_put(r);
}

static void progress(struct trial_pool *p, const struct trial *tr, int running)
{
	double el = mono() - p->t0;
	double mean = p->done ? p->trial_time / p->done : 0;
	int left = p->total - p->done;

	fprintf(stderr,
		"%s: trial %d of %d: %s %s on %d GPU%s (%s); elapsed %.0f s",
		prog, p->done + running, p->total, tr->label, tr->technique,
		tr->gpus, tr->gpus == 1 ? "" : "s",
		tr->memsave ? "memory-saving parameters" : "default parameters",
		el);
	if (mean > 0)
		fprintf(stderr, ", ETA about %.0f s (more if trials fail)",
			mean * left / (running ? running : 1));
	fputc('\n', stderr);
}

/* A trial ended (or was killed): record it and free its GPUs. */
static void trial_ended(struct trial_pool *p, struct trial **slot, int *busy,
			int st, int timed_out)
{
	struct trial *tr = *slot;

	finish_trial(tr, st, timed_out);
	for (int k = 0; k < tr->gpus; k++)
		busy[tr->gpu_idx[k]] = 0;
	p->trial_time += mono() - tr->start;
	tr->pid = -1;
	*slot = NULL;
	p->done++;
}

int trial_pool_run(struct trial_pool *p, struct trial *q, int nq)
{
	struct trial *run[MAX_GPUS] = {NULL};
	int busy[MAX_GPUS] = {0};
	int next_q = 0, running = 0, failed = 0;

	for (int j = 0; j < nq; j++)
		q[j].pid = 0;
	/* big trials first: they are the hardest to pack */
	for (int a = 0; a < nq; a++)
		for (int b = a + 1; b < nq; b++)
			if (q[b].gpus > q[a].gpus) {
				struct trial tmp = q[a];

				q[a] = q[b];
				q[b] = tmp;
			}
	p->total += nq;
	while ((next_q < nq && !failed) || running) {
		int free_n = 0;

		for (int g = 0; g < p->ndev; g++)
			free_n += !busy[g];
		/* start every queued trial that fits now (first fit) */
		for (int j = next_q; j < nq && !failed; j++) {
			struct trial *tr = &q[j];

			if (tr->pid || tr->gpus > free_n)
				continue;
			for (int g = 0, k = 0; g < p->ndev && k < tr->gpus; g++)
				if (!busy[g]) {
					busy[g] = 1;
					tr->gpu_idx[k++] = g;
				}
			free_n -= tr->gpus;
			if (start_trial(p, tr, p->done + running) < 0) {
				failed = errno ? errno : EIO;
				break;
			}
			for (int r = 0; r < MAX_GPUS; r++)
				if (!run[r]) {
					run[r] = tr;
					break;
				}
			running++;
			if (!p->o->quiet)
				progress(p, tr, running);
		}
		while (next_q < nq && q[next_q].pid)
			next_q++;
		/* reap one */
		for (;;) {
			int st, found = 0;
			pid_t w = waitpid(-1, &st, WNOHANG);

			if (w > 0) {
				for (int r = 0; r < MAX_GPUS; r++)
					if (run[r] && run[r]->pid == w) {
						trial_ended(p, &run[r], busy,
							    st, 0);
						running--;
						found = 1;
						break;
					}
				if (found)
					break;
				continue;
			}
			/* profiler-side deadline: the trial's own timeout plus
			 * slack */
			for (int r = 0; r < MAX_GPUS; r++)
				if (run[r] && mono() - run[r]->start >
						  p->o->timeout + 30) {
					kill(-run[r]->pid, SIGKILL);
					waitpid(run[r]->pid, &st, 0);
					trial_ended(p, &run[r], busy, st, 1);
					running--;
					found = 1;
				}
			if (found || running == 0)
				break;
			usleep(10000);
		}
	}
	if (failed) {
		errno = failed;
		return -1;
	}
	return 0;
}
