/* saturn-profile - the companion profiler job of a Saturn batch
 * (saturn-profile(1)).
 *
 * Inside a one-node allocation: probe the node (GPU model and memory, links
 * from hwloc or gres.conf, NCCL bus bandwidth per GPU count), learn each
 * array task's signature by running the batch script in SATURN_MODE=
 * signature, then run trials (SATURN_MODE=trial) for each distinct
 * signature x technique x a few GPU counts, concurrently on disjoint GPU
 * subsets, predict the other GPU counts with a fitted scaling model
 * (lib/sweep.h), and write a saturn-profile/1 file atomically.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "formats.h"
#include "hw.h"
#include "profile.h"
#include "sweep.h"
#include "technique.h"
#include "topology.h"
#include "probe.h"

#define MAX_GPUS 64
#define MAX_CAND 3

const char *prog = "saturn-profile";


/* one sweep over a GPU range with one parameter candidate */
struct tsweep {
	const saturn_technique_t *t;
	int cand;
	char params[512];
	saturn_sweep_t *sw;
	int lo, hi;
};

struct sig {
	char *signature;
	double batches;
	int nids;
	int *ids;
	int ntech;
	struct tsweep *ts; /* ntech * MAX_CAND, cand-major per technique */
};

struct trial {
	struct sig *s;
	struct tsweep *ts;
	int gpus;
	int gpu_idx[MAX_GPUS];
	pid_t pid;
	double start;
	char report[PATH_MAX];
	char log[PATH_MAX];
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_ids(const char *s, int **ids)
{
	int n = 0, cap = 16;
	int *a = malloc(cap * sizeof(int));
	const char *p = s;

	if (!a)
		return -1;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi;

		if (end == p || lo < 0)
			goto bad;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi - lo > 100000)
				goto bad;
			p = end;
		}
		if (*p ==
		    ':') { /* Slurm's step syntax 0-15:2 is not supported */
			goto bad;
		}
		for (long v = lo; v <= hi; v++) {
			if (n == cap) {
				int *na = realloc(a, (cap *= 2) * sizeof(int));

				if (!na)
					goto bad;
				a = na;
			}
			a[n++] = (int)v;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	*ids = a;
	return n;
bad:
	free(a);
	return -1;
}

/* Device ids of the allocation: CUDA_VISIBLE_DEVICES, else SLURM_JOB_GPUS. */
static int visible_devices(char ids[][32], int max)
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

/* Run the batch script with extra environment; returns the pid. The child
 * gets its own process group so a timeout can stop all of it. */
static pid_t spawn_script(const char *script, const char *log, char *const *env)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	setpgid(0, 0);
	for (int i = 0; env[i]; i++)
		putenv(env[i]);
	unsetenv("SATURN_PROGRESS_FILE");
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

/* Wait for pid up to deadline (monotonic); kill its group past it. Returns
 * the wait status, with *timed_out set when it had to be killed. */
static int wait_deadline(pid_t pid, double deadline, int *timed_out)
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

static json_object *load_json(const char *path)
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

static const char *jstr(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) &&
		       json_object_is_type(v, json_type_string)
		   ? json_object_get_string(v)
		   : NULL;
}

static double jnum(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		return -1;
	if (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double))
		return -1;
	return json_object_get_double(v);
}

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return d;
}

/* --- signatures ------------------------------------------------------------
 */

static int signature_pass(const struct opts *o, const char *work, int nids,
			  const int *ids, struct sig **sigs_out)
{
	struct sig *sigs = NULL;
	int nsigs = 0, ok = 0;
	int par = (int)sysconf(_SC_NPROCESSORS_ONLN);

	if (par < 1)
		par = 1;
	if (par > 16)
		par = 16;
	for (int base = 0; base < nids; base += par) {
		pid_t pids[16];
		int n = nids - base < par ? nids - base : par;

		for (int k = 0; k < n; k++) {
			char report[PATH_MAX], log[PATH_MAX];
			char *env[8];
			int id = ids[base + k];

			snprintf(report, sizeof(report), "%s/sig-%d.json", work,
				 id);
			snprintf(log, sizeof(log), "%s/sig-%d.log", work, id);
			if (asprintf(&env[0], "SLURM_ARRAY_TASK_ID=%d", id) <
				0 ||
			    asprintf(&env[1], "SATURN_REPORT_FILE=%s", report) <
				0 ||
			    asprintf(&env[2], "SATURN_BATCH=%s", o->batch) < 0)
				return -1;
			env[3] = "SATURN_MODE=signature";
			env[4] = "SLURM_OVERLAP=1";
			env[5] = NULL;
			pids[k] = spawn_script(o->script, log, env);
			free(env[0]);
			free(env[1]);
			free(env[2]);
		}
		for (int k = 0; k < n; k++) {
			int id = ids[base + k], to, st;
			char report[PATH_MAX];
			json_object *r;
			const char *sg;
			double b;
			struct sig *s = NULL;

			st = wait_deadline(pids[k], mono() + o->timeout, &to);
			snprintf(report, sizeof(report), "%s/sig-%d.json", work,
				 id);
			r = load_json(report);
			sg = r ? jstr(r, "signature") : NULL;
			b = r ? jnum(r, "batches") : -1;
			if (!sg || !*sg || b < 0) {
				fprintf(stderr,
					"%s: task %d: no signature (%s; log "
					"%s/sig-%d.log)\n",
					prog, id,
					to		? "timed out"
					: WIFEXITED(st) ? "see the log"
							: "killed",
					work, id);
				json_object_put(r);
				continue;
			}
			for (int i = 0; i < nsigs; i++)
				if (strcmp(sigs[i].signature, sg) == 0)
					s = &sigs[i];
			if (!s) {
				struct sig *ns =
				    realloc(sigs, (nsigs + 1) * sizeof(*ns));

				if (!ns)
					return -1;
				sigs = ns;
				s = &sigs[nsigs++];
				memset(s, 0, sizeof(*s));
				s->signature = xstrdup(sg);
				s->batches = b;
				s->ids = calloc(nids, sizeof(int));
			}
			if (b > s->batches)
				s->batches = b;
			s->ids[s->nids++] = id;
			ok++;
			json_object_put(r);
		}
	}
	*sigs_out = sigs;
	if (!o->quiet)
		fprintf(stderr, "%s: %d of %d tasks: %d distinct signature%s\n",
			prog, ok, nids, nsigs, nsigs == 1 ? "" : "s");
	return nsigs;
}

/* --- trials ----------------------------------------------------------------
 */

static int start_trial(const struct opts *o, const char *work, struct trial *tr,
		       char devs[][32], int seq)
{
	char *env[16], vis[MAX_GPUS * 33] = "", params[512];
	size_t off = 0;
	int ne = 0;
	saturn_error_t err = {{0}};

	/* parameters resolved for this GPU count (e.g. pipeline stages) */
	if (saturn_technique_candidate(tr->ts->t, tr->gpus, tr->ts->cand,
				       tr->s->signature, params, sizeof(params),
				       &err) != 0)
		snprintf(params, sizeof(params), "%s", tr->ts->params);

	for (int i = 0; i < tr->gpus; i++)
		off += snprintf(vis + off, sizeof(vis) - off, "%s%s",
				i ? "," : "", devs[tr->gpu_idx[i]]);
	snprintf(tr->report, sizeof(tr->report), "%s/trial-%d.json", work, seq);
	snprintf(tr->log, sizeof(tr->log), "%s/trial-%d.log", work, seq);
	unlink(tr->report);
	if (asprintf(&env[ne++], "SLURM_ARRAY_TASK_ID=%d", tr->s->ids[0]) < 0 ||
	    asprintf(&env[ne++], "SATURN_TECHNIQUE=%s", tr->ts->t->name) < 0 ||
	    asprintf(&env[ne++], "SATURN_GPUS=%d", tr->gpus) < 0 ||
	    asprintf(&env[ne++], "SATURN_TECHNIQUE_PARAMS=%s", params) < 0 ||
	    asprintf(&env[ne++], "SATURN_TRIAL_BATCHES=%d", o->trial_batches) <
		0 ||
	    asprintf(&env[ne++], "SATURN_TRIAL_WARMUP=%d", o->warmup) < 0 ||
	    asprintf(&env[ne++], "SATURN_TRIAL_TIMEOUT=%.0f", o->timeout) < 0 ||
	    asprintf(&env[ne++], "SATURN_REPORT_FILE=%s", tr->report) < 0 ||
	    asprintf(&env[ne++], "CUDA_VISIBLE_DEVICES=%s", vis) < 0 ||
	    asprintf(&env[ne++], "SATURN_VISIBLE_DEVICES=%s", vis) < 0 ||
	    asprintf(&env[ne++], "SATURN_BATCH=%s", o->batch) < 0 ||
	    asprintf(&env[ne++], "SATURN_MODE=%s", "trial") < 0 ||
	    asprintf(&env[ne++], "SLURM_OVERLAP=%s", "1") < 0)
		return -1;
	env[ne] = NULL;
	tr->start = mono();
	tr->pid = spawn_script(o->script, tr->log, env);
	for (int i = 0; i < ne; i++)
		free(env[i]);
	return tr->pid > 0 ? 0 : -1;
}

static void finish_trial(struct trial *tr, int st, int timed_out)
{
	json_object *r = load_json(tr->report);
	const char *status = r ? jstr(r, "status") : NULL;
	const char *reason = r ? jstr(r, "reason") : NULL;
	double spb = r ? jnum(r, "sec_per_batch") : 0,
	       mem = r ? jnum(r, "peak_mem_mb") : 0;
	char why[300];
	saturn_point_state_t state = SATURN_PT_FAILED;

	if (mem < 0)
		mem = 0;
	if (timed_out) {
		state = SATURN_PT_TIMEOUT;
		snprintf(why, sizeof(why),
			 "trial did not finish in time (log %s)", tr->log);
		reason = why;
	} else if (!status) {
		snprintf(why, sizeof(why), "no trial report (%s %d; log %s)",
			 WIFEXITED(st) ? "exit status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 tr->log);
		reason = why;
	} else if (strcmp(status, "measured") == 0 && spb > 0) {
		state = SATURN_PT_MEASURED;
	} else if (strcmp(status, "oom") == 0) {
		state = SATURN_PT_OOM;
	} else if (strcmp(status, "timeout") == 0) {
		state = SATURN_PT_TIMEOUT;
	}
	saturn_sweep_report(tr->ts->sw, tr->gpus, state, spb, mem, reason);
	json_object_put(r);
}

/* Add the next parameter candidate's sweep below the GPU count from which
 * the current candidate fits in memory (e.g. FSDP with activation
 * checkpointing where plain FSDP runs out of memory). */
static void chain_candidates(struct sig *s, int ngpus)
{
	for (int k = 0; k < s->ntech; k++) {
		for (int c = 0; c + 1 < MAX_CAND; c++) {
			struct tsweep *cur = &s->ts[k * MAX_CAND + c],
				      *nx = &s->ts[k * MAX_CAND + c + 1];
			int from, hi;
			saturn_error_t err = {{0}};

			if (!cur->sw || nx->t || !saturn_sweep_done(cur->sw))
				continue;
			from = saturn_sweep_feasible_from(cur->sw);
			hi = from ? from - 1 : cur->hi;
			if (hi < cur->lo)
				continue;
			if (saturn_technique_candidate(
				cur->t, hi, c + 1, s->signature, nx->params,
				sizeof(nx->params), &err) != 0)
				continue;
			nx->t = cur->t;
			nx->cand = c + 1;
			nx->lo = cur->lo;
			nx->hi = hi;
		}
	}
	(void)ngpus;
}

/* --- main ------------------------------------------------------------------
 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s --batch NAME --script FILE --task-ids LIST --output "
		"FILE\n"
		"       [--trial-batches N] [--warmup N] [--timeout S] "
		"[--max-gpus N]\n"
		"       [--techniques LIST] [--exhaustive] [--backend "
		"auto|cpu|cuda]\n"
		"       [--topology XML] [--gres-conf FILE] [--class NAME] "
		"[--keep] [--quiet]\n"
		"see saturn-profile(1)\n",
		prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"batch", required_argument, NULL, 'b'},
	    {"script", required_argument, NULL, 's'},
	    {"task-ids", required_argument, NULL, 'i'},
	    {"output", required_argument, NULL, 'o'},
	    {"trial-batches", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"timeout", required_argument, NULL, 't'},
	    {"max-gpus", required_argument, NULL, 'g'},
	    {"techniques", required_argument, NULL, 'T'},
	    {"exhaustive", no_argument, NULL, 'x'},
	    {"backend", required_argument, NULL, 'B'},
	    {"topology", required_argument, NULL, 'X'},
	    {"gres-conf", required_argument, NULL, 'G'},
	    {"class", required_argument, NULL, 'c'},
	    {"keep", no_argument, NULL, 'k'},
	    {"show-topology", no_argument, NULL, 'S'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct opts o = {
	    .trial_batches = 3, .warmup = 1, .timeout = 300, .backend = "auto"};
	char devs[MAX_GPUS][32], work[PATH_MAX];
	int ndev, nids, nsigs = 0, c, rc = 1, total_trials = 0, done_trials = 0,
				  usable_all = 1;
	int *ids = NULL;
	double ar[MAX_GPUS + 1] = {0}, ag[MAX_GPUS + 1] = {0}, t0 = mono(),
			     trial_time = 0;
	saturn_profile_t *pr = NULL;
	saturn_profile_hw_t *hw;
	struct sig *sigs = NULL;
	saturn_techniques_t *reg = NULL;
	saturn_error_t err = {{0}};
	saturn_bw_table_t bw;
	int show = 0;

	while ((c = getopt_long(argc, argv, "b:s:i:o:n:w:t:g:T:xB:X:G:c:kqhS",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o.batch = optarg;
			break;
		case 's':
			o.script = optarg;
			break;
		case 'i':
			o.task_ids = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'n':
			o.trial_batches = atoi(optarg);
			break;
		case 'w':
			o.warmup = atoi(optarg);
			break;
		case 't':
			o.timeout = atof(optarg);
			break;
		case 'g':
			o.max_gpus = atoi(optarg);
			break;
		case 'T':
			o.techniques = optarg;
			break;
		case 'x':
			o.exhaustive = 1;
			break;
		case 'B':
			o.backend = optarg;
			break;
		case 'X':
			o.topology = optarg;
			break;
		case 'G':
			o.gres_conf = optarg;
			break;
		case 'c':
			o.klass = optarg;
			break;
		case 'k':
			o.keep = 1;
			break;
		case 'S':
			show = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (show)
		return show_topology(&o);
	if (!o.batch || !o.script || !o.task_ids || !o.output ||
	    optind != argc) {
		usage(stderr);
		return 2;
	}
	if (o.trial_batches < 1 || o.warmup < 0 || !(o.timeout > 0) ||
	    o.max_gpus < 0) {
		fprintf(stderr,
			"%s: --trial-batches >= 1, --warmup >= 0, --timeout > "
			"0, --max-gpus >= 0\n",
			prog);
		return 2;
	}
	if ((nids = parse_ids(o.task_ids, &ids)) < 1) {
		fprintf(stderr,
			"%s: --task-ids %s: want a list like 0-15 or 0,3,5-7\n",
			prog, o.task_ids);
		return 2;
	}
	ndev = visible_devices(devs, MAX_GPUS);
	if (ndev < 1) {
		fprintf(stderr,
			"%s: no GPUs: CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS "
			"are unset\n",
			prog);
		return 2;
	}
	if (o.max_gpus && ndev > o.max_gpus)
		ndev = o.max_gpus;
	if (!(reg = saturn_techniques_default(&err))) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		return 2;
	}
	snprintf(work, sizeof(work), "%s/saturn-profile.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(work)) {
		fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
		return 2;
	}
	if (!(pr = saturn_profile_create()) || !(pr->batch = strdup(o.batch)) ||
	    !(pr->hw = calloc(1, sizeof(*pr->hw))))
		goto out;
	pr->created = (double)time(NULL);
	pr->nhw = 1;
	hw = pr->hw;
	{
		int r = probe_hw(&o, ndev, hw, ar, ag);

		if (r != 0) {
			rc = r == 77 ? 77 : 2;
			goto out;
		}
	}
	bw.max = ndev;
	bw.ar = ar;
	bw.ag = ag;
	if (!o.quiet) {
		fprintf(stderr, "%s: %d GPUs (%s, %.0f MiB, %s)", prog, ndev,
			hw->gpu_model, hw->gpu_mem_mb, hw->interconnect);
		for (int i = 0; i < hw->nnccl; i++)
			fprintf(stderr, "%s%d:%.1f/%.1f",
				i ? " " : "; all-reduce/all-gather busbw GB/s ",
				hw->nccl[i].gpus,
				hw->nccl[i].allreduce_busbw_gbs,
				hw->nccl[i].allgather_busbw_gbs);
		fputc('\n', stderr);
	}

	nsigs = signature_pass(&o, work, nids, ids, &sigs);
	if (nsigs < 1) {
		fprintf(stderr,
			"%s: no task produced a signature (is saturn-run in "
			"the script?)\n",
			prog);
		goto out;
	}

	/* sweeps */
	for (int si = 0; si < nsigs; si++) {
		struct sig *s = &sigs[si];

		s->ts = calloc((size_t)saturn_techniques_count(reg) * MAX_CAND,
			       sizeof(*s->ts));
		for (int k = 0; k < saturn_techniques_count(reg); k++) {
			const saturn_technique_t *t =
			    saturn_techniques_get(reg, k);
			struct tsweep *ts = &s->ts[s->ntech * MAX_CAND];
			int hi = saturn_technique_max_gpus(t, ndev);

			if (o.techniques) {
				int tv = 0;
				char want[128];
				const char *p = o.techniques;
				size_t l;

				for (; *p; p += l + (p[l] == ',')) {
					l = strcspn(p, ",");
					snprintf(want, sizeof(want), "%.*s",
						 (int)l, p);
					tv |= strcmp(want, t->name) == 0;
				}
				if (!tv)
					continue;
			}
			if (t->min_gpus > hi)
				continue;
			if (saturn_technique_candidate(
				t, hi, 0, s->signature, ts->params,
				sizeof(ts->params), &err) != 0) {
				fprintf(stderr,
					"%s: technique %s skipped: %s\n", prog,
					t->name, err.text);
				continue;
			}
			ts->t = t;
			ts->lo = t->min_gpus;
			ts->hi = hi;
			s->ntech++;
		}
	}

	/* rounds of independent trials, packed onto disjoint GPUs */
	for (int round = 0;; round++) {
		struct trial *q = NULL;
		int nq = 0, next_q = 0, running = 0;
		struct trial *run[MAX_GPUS];
		int busy[MAX_GPUS] = {0};

		for (int si = 0; si < nsigs; si++) {
			struct sig *s = &sigs[si];

			chain_candidates(s, ndev);
			for (int k = 0; k < s->ntech * MAX_CAND; k++) {
				struct tsweep *ts = &s->ts[k];
				int gl[MAX_GPUS], n;

				if (!ts->t)
					continue;
				if (!ts->sw) {
					ts->sw = saturn_sweep_create(
					    saturn_scale_kind(ts->t->name),
					    (int)saturn_technique_param(
						ts->params, "micro_batches", 8),
					    ts->lo, ts->hi, &bw, o.exhaustive);
					if (!ts->sw)
						goto out;
				}
				n = saturn_sweep_next(ts->sw, gl, MAX_GPUS);
				for (int j = 0; j < n; j++) {
					struct trial *nqa =
					    realloc(q, (nq + 1) * sizeof(*q));

					if (!nqa)
						goto out;
					q = nqa;
					memset(&q[nq], 0, sizeof(*q));
					q[nq].s = s;
					q[nq].ts = ts;
					q[nq].gpus = gl[j];
					nq++;
				}
			}
		}
		if (nq == 0) {
			/* sweeps just completed may call for another candidate
			 */
			int more = 0;

			for (int si = 0; si < nsigs; si++)
				chain_candidates(&sigs[si], ndev);
			for (int si = 0; si < nsigs && !more; si++)
				for (int k = 0; k < sigs[si].ntech * MAX_CAND;
				     k++)
					more |= sigs[si].ts[k].t &&
						!sigs[si].ts[k].sw;
			free(q);
			if (more)
				continue;
			break;
		}
		/* big trials first: they are the hardest to pack */
		for (int a = 0; a < nq; a++)
			for (int b = a + 1; b < nq; b++)
				if (q[b].gpus > q[a].gpus) {
					struct trial tmp = q[a];

					q[a] = q[b];
					q[b] = tmp;
				}
		total_trials += nq;
		memset(run, 0, sizeof(run));
		while (next_q < nq || running) {
			int free_n = 0;

			for (int g = 0; g < ndev; g++)
				free_n += !busy[g];
			/* start every queued trial that fits now (first fit) */
			for (int j = next_q; j < nq; j++) {
				struct trial *tr = &q[j];

				if (tr->pid || tr->gpus > free_n)
					continue;
				for (int g = 0, k = 0; g < ndev && k < tr->gpus;
				     g++)
					if (!busy[g]) {
						busy[g] = 1;
						tr->gpu_idx[k++] = g;
					}
				free_n -= tr->gpus;
				if (start_trial(&o, work, tr, devs,
						done_trials + running) < 0) {
					fprintf(
					    stderr,
					    "%s: cannot start a trial: %s\n",
					    prog, strerror(errno));
					goto out;
				}
				for (int r = 0; r < MAX_GPUS; r++)
					if (!run[r]) {
						run[r] = tr;
						break;
					}
				running++;
				if (!o.quiet) {
					double el = mono() - t0;
					double mean =
					    done_trials
						? trial_time / done_trials
						: 0;
					int left = total_trials - done_trials;

					fprintf(stderr,
						"%s: trial %d of %d: %s %s on "
						"%d GPU%s (%s); elapsed %.0f s",
						prog, done_trials + running,
						total_trials, tr->s->signature,
						tr->ts->t->name, tr->gpus,
						tr->gpus == 1 ? "" : "s",
						tr->ts->cand
						    ? "memory-saving parameters"
						    : "default parameters",
						el);
					if (mean > 0)
						fprintf(stderr,
							", ETA about %.0f s "
							"(more if trials fail)",
							mean * left /
							    (running ? running
								     : 1));
					fputc('\n', stderr);
				}
			}
			while (next_q < nq && q[next_q].pid)
				next_q++;
			/* reap one */
			for (;;) {
				int st, found = 0;
				pid_t w = waitpid(-1, &st, WNOHANG);

				if (w > 0) {
					for (int r = 0; r < MAX_GPUS; r++)
						if (run[r] &&
						    run[r]->pid == w) {
							finish_trial(run[r], st,
								     0);
							for (int k = 0;
							     k < run[r]->gpus;
							     k++)
								busy[run[r]->gpu_idx
									 [k]] =
								    0;
							trial_time +=
							    mono() -
							    run[r]->start;
							run[r]->pid = -1;
							run[r] = NULL;
							running--;
							done_trials++;
							found = 1;
							break;
						}
					if (found)
						break;
					continue;
				}
				/* profiler-side deadline: the trial's own
				 * timeout plus slack */
				for (int r = 0; r < MAX_GPUS; r++)
					if (run[r] && mono() - run[r]->start >
							  o.timeout + 30) {
						kill(-run[r]->pid, SIGKILL);
						waitpid(run[r]->pid, &st, 0);
						finish_trial(run[r], st, 1);
						for (int k = 0;
						     k < run[r]->gpus; k++)
							busy[run[r]
								 ->gpu_idx[k]] =
							    0;
						run[r]->pid = -1;
						run[r] = NULL;
						running--;
						done_trials++;
						found = 1;
					}
				if (found || running == 0)
					break;
				usleep(10000);
			}
		}
		free(q);
	}

	/* the profile */
	pr->tasks = calloc(nsigs, sizeof(*pr->tasks));
	if (!pr->tasks)
		goto out;
	for (int si = 0; si < nsigs; si++) {
		struct sig *s = &sigs[si];
		saturn_profile_task_t *pt = &pr->tasks[pr->ntasks++];
		int usable = 0, predicted = 0;

		pt->signature = xstrdup(s->signature);
		pt->ntask_ids = s->nids;
		pt->task_ids = s->ids;
		s->ids = NULL;
		pt->batches = s->batches;
		pt->klass = o.klass ? xstrdup(o.klass) : NULL;
		pt->options =
		    calloc((size_t)s->ntech * ndev, sizeof(*pt->options));
		for (int k = 0; k < s->ntech; k++) {
			struct tsweep *base = &s->ts[k * MAX_CAND];

			for (int g = base->lo; g <= base->hi; g++) {
				const saturn_point_t *best = NULL;
				const struct tsweep *from = NULL;

				/* the first candidate that runs; else the first
				 * one's failure */
				for (int cc = 0; cc < MAX_CAND; cc++) {
					const struct tsweep *ts = &base[cc];
					const saturn_point_t *p =
					    ts->sw
						? saturn_sweep_point(ts->sw, g)
						: NULL;

					if (!p ||
					    p->state == SATURN_PT_UNKNOWN ||
					    p->state == SATURN_PT_PENDING)
						continue;
					if (p->state == SATURN_PT_MEASURED ||
					    p->state == SATURN_PT_PREDICTED) {
						best = p;
						from = ts;
						break;
					}
					if (!best) {
						best = p;
						from = ts;
					}
				}
				if (!best)
					continue;
				saturn_profile_option_t *op =
				    &pt->options[pt->noptions++];

				op->technique = xstrdup(from->t->name);
				op->gpus = g;
				op->sec_per_batch = best->sec_per_batch;
				op->peak_mem_mb = best->peak_mem_mb;
				{
					char pj[512];
					saturn_error_t perr = {{0}};

					if (saturn_technique_candidate(
						from->t, g, from->cand,
						s->signature, pj, sizeof(pj),
						&perr) != 0)
						snprintf(pj, sizeof(pj), "%s",
							 from->params);
					op->params = xstrdup(pj);
				}
				switch (best->state) {
				case SATURN_PT_MEASURED:
					op->status = SATURN_OPT_MEASURED;
					usable++;
					break;
				case SATURN_PT_PREDICTED:
					op->status = SATURN_OPT_PREDICTED;
					usable++;
					predicted++;
					break;
				case SATURN_PT_OOM:
				case SATURN_PT_OOM_PRED:
					op->status = SATURN_OPT_OOM;
					break;
				case SATURN_PT_TIMEOUT:
					op->status = SATURN_OPT_TIMEOUT;
					break;
				default:
					op->status = SATURN_OPT_FAILED;
					break;
				}
				if (best->reason[0])
					op->reason = xstrdup(best->reason);
			}
		}
		if (!o.quiet)
			fprintf(stderr,
				"%s: %s: %d usable options (%d predicted)\n",
				prog, s->signature, usable, predicted);
		if (!usable)
			usable_all = 0;
	}
	{
		char *json = saturn_profile_to_json(pr);

		if (!json) {
			fprintf(stderr,
				"%s: cannot serialise the profile: %s\n", prog,
				strerror(errno));
			goto out;
		}
		if (saturn_write_file_atomic(o.output, json, strlen(json),
					     &err) < 0) {
			fprintf(stderr, "%s: %s\n", prog, err.text);
			free(json);
			goto out;
		}
		free(json);
	}
	if (!o.quiet)
		fprintf(stderr,
			"%s: %d trials in %.0f s; profile written to %s\n",
			prog, done_trials, mono() - t0, o.output);
	rc = usable_all ? 0 : 1;
	if (!usable_all)
		fprintf(stderr, "%s: some signatures have no usable option\n",
			prog);
out:
	if (!o.keep) {
		char cmd[PATH_MAX + 16];

		/* our own private directory */
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
		if (system(cmd) != 0)
			fprintf(stderr, "%s: could not remove %s\n", prog,
				work);
	} else {
		fprintf(stderr, "%s: trial logs kept in %s\n", prog, work);
	}
	for (int si = 0; sigs && si < nsigs; si++) {
		for (int k = 0; k < sigs[si].ntech * MAX_CAND; k++)
			saturn_sweep_destroy(sigs[si].ts[k].sw);
		free(sigs[si].ts);
		free(sigs[si].signature);
		free(sigs[si].ids);
	}
	free(sigs);
	free(ids);
	saturn_profile_destroy(pr);
	saturn_techniques_destroy(reg);
	return rc;
}
