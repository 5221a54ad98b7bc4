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
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "technique.h"

#define EXIT_SETUP 125	/* saturn-run failed before running the command */
#define EXIT_REQUEUE 75 /* checkpointed: requeue me (EX_TEMPFAIL) */
#define EXIT_OOM 3	/* the program ran out of GPU memory (protocol) */

static const char *prog = "saturn-run";
static int sigpipe_fds[2] = {-1, -1};

struct opts {
	double batches;
	const char *signature;
	int direct;
	double grace;
	int ckpt_on_term;
	double resume;
	int have_resume;
	int verbose;
};

struct run {
	pid_t child;
	int fifo_rd, fifo_wr;
	char fifo_dir[PATH_MAX];
	char fifo_path[PATH_MAX];
	/* progress */
	double done; /* batches done (absolute) */
	double total;
	double spb; /* seconds per batch */
	double peak_mem;
	int seen_progress;
	int oom;
	char oom_reason[256];
	int checkpointed;
	double last_done_t; /* time of the last progress line */
	double last_done;   /* batches_done at that time */
	double last_write;
	const char *progress_file;
	long job_id;
	/* line buffer */
	char buf[SATURN_PROTO_MAX_LINE * 4];
	size_t blen;
	/* trial */
	int trial;
	double warmup, measure;
	double rep_sum; /* child-reported sec_per_batch after warm-up */
	int rep_n, unrep_n;
	double t_warm, done_warm, t_meas_end;
	int trial_done;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int saved = errno;

	if (write(sigpipe_fds[1], &c, 1) < 0) {
		/* pipe full: the signal is already pending there */
	}
	errno = saved;
}

static int env_num(const char *name, double *v, int *have)
{
	const char *s = getenv(name);
	char *end;

	if (have)
		*have = 0;
	if (!s || !*s)
		return 0;
	*v = strtod(s, &end);
	if (*end || !isfinite(*v) || *v < 0) {
		fprintf(stderr, "%s: %s=%s: want a number >= 0\n", prog, name,
			s);
		return -1;
	}
	if (have)
		*have = 1;
	return 0;
}

static int write_atomic(const char *path, const char *data)
{
	char tmp[PATH_MAX];
	int fd;
	size_t len = strlen(data), off = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		off += w;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* JSON string literal of s (malloc'd). */
static char *json_str(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(n * 6 + 3), *p = o;

	if (!o)
		return NULL;
	*p++ = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = c;
		} else if (c < 0x20) {
			p += sprintf(p, "\\u%04x", c);
		} else {
			*p++ = c;
		}
	}
	*p++ = '"';
	*p = '\0';
	return o;
}

/* --- signature ------------------------------------------------------------ */

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

static int ignored(const char *arg, const char *list, int *takes_value)
{
	size_t al = strcspn(arg, "=");
	const char *p = list;

	*takes_value = arg[al] != '=';
	while (*p) {
		size_t l = strcspn(p, ",");

		if (l == al && strncmp(p, arg, l) == 0)
			return 1;
		p += l;
		if (*p == ',')
			p++;
	}
	return 0;
}

static char *derive_signature(int argc, char **argv)
{
	const char *list = getenv("SATURN_SIGNATURE_IGNORE");
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
		} else if (a[0] == '-' && ignored(a, list, &tv)) {
			if (tv && i + 1 < argc && argv[i + 1][0] != '-')
				i++;
			continue;
		}
		len += sprintf(s + len, "%s%s", len ? " " : "", a);
	}
	return s;
}

static int mode_signature(const struct opts *o, int argc, char **argv)
{
	const char *report = getenv("SATURN_REPORT_FILE");
	char *sig, *js, *text = NULL;
	int rc;

	if (!report || !*report) {
		fprintf(stderr,
			"%s: SATURN_MODE=signature needs SATURN_REPORT_FILE\n",
			prog);
		return EXIT_SETUP;
	}
	sig =
	    o->signature ? strdup(o->signature) : derive_signature(argc, argv);
	if (!sig || !*sig) {
		fprintf(stderr, "%s: empty signature\n", prog);
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
	js = json_str(sig);
	rc = js ? asprintf(&text, "{\"signature\":%s,\"batches\":%.0f}\n", js,
			   o->batches)
		: -1;
	if (rc < 0 || write_atomic(report, text) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, report, strerror(errno));
		rc = EXIT_SETUP;
	} else {
		rc = 0;
	}
	free(text);
	free(js);
	free(sig);
	return rc;
}

/* --- launching ------------------------------------------------------------ */

static int is_direct(const struct opts *o, const char *cmd)
{
	const char *list = getenv("SATURN_DIRECT_COMMANDS");
	const char *base = strrchr(cmd, '/');
	const char *env = getenv("SATURN_RUN_DIRECT");
	int tv;
	char buf[1024];

	if (o->direct || (env && strcmp(env, "1") == 0))
		return 1;
	base = base ? base + 1 : cmd;
	if (!list)
		list = "saturn-emulate";
	/* reuse the option-list matcher: names without '=' */
	snprintf(buf, sizeof(buf), "%s", base);
	return ignored(buf, list, &tv);
}

/* Keep the first n ids of a comma-separated device list. */
static int restrict_devices(const char *list, int n, char *out, size_t len)
{
	int count = 0;
	size_t o = 0;

	out[0] = '\0';
	for (const char *p = list; *p && count < n;) {
		size_t l = strcspn(p, ",");

		if (o + l + 2 > len)
			return -1;
		if (o)
			out[o++] = ',';
		memcpy(out + o, p, l);
		o += l;
		out[o] = '\0';
		count++;
		p += l;
		if (*p == ',')
			p++;
	}
	return count;
}

static int count_devices(const char *list)
{
	int n = 0;

	if (!list || !*list)
		return 0;
	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n + 1;
}

static int setenv_num(const char *k, double v)
{
	char b[64];

	snprintf(b, sizeof(b), "%.0f", v);
	return setenv(k, b, 1);
}

static int make_fifo(struct run *r)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(r->fifo_dir, sizeof(r->fifo_dir), "%s/saturn-run.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(r->fifo_dir)) {
		fprintf(stderr, "%s: mkdtemp %s: %s\n", prog, r->fifo_dir,
			strerror(errno));
		return -1;
	}
	snprintf(r->fifo_path, sizeof(r->fifo_path), "%s/progress",
		 r->fifo_dir);
	if (mkfifo(r->fifo_path, 0600) < 0) {
		fprintf(stderr, "%s: mkfifo %s: %s\n", prog, r->fifo_path,
			strerror(errno));
		return -1;
	}
	r->fifo_rd = open(r->fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	/* our own writer keeps the FIFO from reporting EOF between writers */
	r->fifo_wr = r->fifo_rd >= 0
			 ? open(r->fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
			 : -1;
	if (r->fifo_rd < 0 || r->fifo_wr < 0) {
		fprintf(stderr, "%s: open %s: %s\n", prog, r->fifo_path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void cleanup_fifo(struct run *r)
{
	if (r->fifo_rd >= 0)
		close(r->fifo_rd);
	if (r->fifo_wr >= 0)
		close(r->fifo_wr);
	if (r->fifo_path[0])
		unlink(r->fifo_path);
	if (r->fifo_dir[0])
		rmdir(r->fifo_dir);
}

static void write_progress(struct run *r, int force)
{
	saturn_progress_t p;
	saturn_error_t err = {{0}};
	double t = now();

	if (!r->progress_file || (!force && t - r->last_write < 1.0))
		return;
	r->last_write = t;
	p.job_id = r->job_id;
	p.batches_done = r->done;
	p.batches_total = r->total;
	p.sec_per_batch = r->spb;
	p.updated = wall();
	if (saturn_progress_write(r->progress_file, &p, &err) < 0)
		fprintf(stderr, "%s: progress: %s\n", prog, err.text);
}

static void handle_line(struct run *r, const char *line)
{
	saturn_proto_msg_t m;
	saturn_error_t err = {{0}};
	int k = saturn_proto_parse(line, &m, &err);
	double t = now();

	if (k < 0) {
		fprintf(stderr, "%s: ignoring progress line: %s\n", prog,
			err.text);
		return;
	}
	if (m.peak_mem_mb > r->peak_mem)
		r->peak_mem = m.peak_mem_mb;
	if (k == SATURN_PROTO_OOM) {
		r->oom = 1;
		snprintf(r->oom_reason, sizeof(r->oom_reason), "%s",
			 m.reason[0] ? m.reason : "out of GPU memory");
	} else if (k == SATURN_PROTO_CHECKPOINTED) {
		r->checkpointed = 1;
		if (m.batches_done >= 0)
			r->done = m.batches_done;
	} else if (k == SATURN_PROTO_PROGRESS) {
		if (m.sec_per_batch > 0)
			r->spb = m.sec_per_batch;
		else if (r->seen_progress && m.batches_done > r->last_done)
			r->spb = (t - r->last_done_t) /
				 (m.batches_done - r->last_done);
		if (m.batches_total > 0)
			r->total = m.batches_total;
		r->done = m.batches_done;
		r->last_done = m.batches_done;
		r->last_done_t = t;
		r->seen_progress = 1;
		if (r->trial && !r->trial_done) {
			if (r->t_warm < 0 && m.batches_done >= r->warmup) {
				r->t_warm = t;
				r->done_warm = m.batches_done;
			} else if (r->t_warm >= 0) {
				if (m.sec_per_batch > 0) {
					r->rep_sum += m.sec_per_batch;
					r->rep_n++;
				} else {
					r->unrep_n++;
				}
			}
			if (r->t_warm >= 0 &&
			    m.batches_done >= r->done_warm + r->measure &&
			    m.batches_done > r->done_warm) {
				r->t_meas_end = t;
				/* the program's own per-batch times when it
				 * gave them for every measured line (lines may
				 * reach us in bursts), else our clock */
				if (r->rep_n > 0 && r->unrep_n == 0)
					r->spb = r->rep_sum / r->rep_n;
				else
					r->spb =
					    (t - r->t_warm) /
					    (m.batches_done - r->done_warm);
				r->trial_done = 1;
			}
		}
		write_progress(r, 0);
	}
}

static void drain_fifo(struct run *r)
{
	for (;;) {
		ssize_t n = read(r->fifo_rd, r->buf + r->blen,
				 sizeof(r->buf) - r->blen - 1);
		char *nl;

		if (n <= 0)
			return;
		r->blen += n;
		r->buf[r->blen] = '\0';
		while ((nl = memchr(r->buf, '\n', r->blen))) {
			*nl = '\0';
			handle_line(r, r->buf);
			r->blen -= nl + 1 - r->buf;
			memmove(r->buf, nl + 1, r->blen);
		}
		if (r->blen >= sizeof(r->buf) - 1)
			r->blen = 0; /* a line too long: drop it */
	}
}

static void trial_report(struct run *r, const char *status, const char *reason)
{
	const char *report = getenv("SATURN_REPORT_FILE");
	char *js = json_str(reason ? reason : ""), *text = NULL;

	if (!report || !js ||
	    asprintf(&text,
		     "{\"status\":\"%s\",\"sec_per_batch\":%.6g,\"peak_mem_"
		     "mb\":%.1f,\"reason\":%s}\n",
		     status, strcmp(status, "measured") == 0 ? r->spb : 0.0,
		     r->peak_mem, js) < 0 ||
	    write_atomic(report, text) < 0)
		fprintf(stderr, "%s: cannot write the trial report %s: %s\n",
			prog, report ? report : "(unset)", strerror(errno));
	free(text);
	free(js);
}

static void kill_group(pid_t pg, int sig)
{
	if (pg > 0)
		kill(-pg, sig);
}

int main(int argc, char **argv)
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
	struct opts o = {.grace = 60};
	struct run r = {.fifo_rd = -1, .fifo_wr = -1, .t_warm = -1};
	const char *mode = getenv("SATURN_MODE");
	const char *tname = getenv("SATURN_TECHNIQUE");
	const char *pfile = getenv("SATURN_PROGRESS_FILE");
	saturn_techniques_t *reg = NULL;
	const saturn_technique_t *t = NULL;
	saturn_error_t err = {{0}};
	char **largv = NULL, *params = NULL;
	int c, gpus = 0, rc = EXIT_SETUP, status = 0, have = 0;
	double trial_timeout = 0, deadline = 0, kill_at = 0, ckpt_deadline = 0;
	int ckpt_requested = 0, term_sent = 0, timed_out = 0, exited = 0;
	double gd = 0;
	struct sigaction sa;
	sigset_t mask;

	while ((c = getopt_long(argc, argv, "+b:s:dg:Tr:vh", longopts, NULL)) !=
	       -1) {
		char *end;

		switch (c) {
		case 'b':
			o.batches = strtod(optarg, &end);
			if (*end || !(o.batches >= 0) || !isfinite(o.batches)) {
				fprintf(stderr,
					"%s: --batches: want a number >= 0\n",
					prog);
				return EXIT_SETUP;
			}
			break;
		case 's':
			o.signature = optarg;
			break;
		case 'd':
			o.direct = 1;
			break;
		case 'g':
			o.grace = strtod(optarg, &end);
			if (*end || !(o.grace >= 0)) {
				fprintf(stderr,
					"%s: --grace: want seconds >= 0\n",
					prog);
				return EXIT_SETUP;
			}
			break;
		case 'T':
			o.ckpt_on_term = 1;
			break;
		case 'r':
			o.resume = strtod(optarg, &end);
			if (*end || !(o.resume >= 0)) {
				fprintf(
				    stderr,
				    "%s: --resume: want a batch number >= 0\n",
				    prog);
				return EXIT_SETUP;
			}
			o.have_resume = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			printf("usage: %s [--batches N] [--signature S] "
			       "[--direct] [--grace S]\n"
			       "       [--checkpoint-on-term] [--resume N] "
			       "[--verbose] -- CMD [ARGS...]\n"
			       "see saturn-run(1)\n",
			       prog);
			return 0;
		default:
			return EXIT_SETUP;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		fprintf(
		    stderr,
		    "%s: no command (usage: %s [options] -- CMD [ARGS...])\n",
		    prog, prog);
		return EXIT_SETUP;
	}
	if (o.batches == 0 && env_num("SATURN_BATCHES", &o.batches, NULL) < 0)
		return EXIT_SETUP;
	if (mode && strcmp(mode, "signature") == 0)
		return mode_signature(&o, argc, argv);
	if (mode && *mode && strcmp(mode, "trial") != 0 &&
	    strcmp(mode, "run") != 0) {
		fprintf(stderr,
			"%s: SATURN_MODE=%s: want signature, trial or run\n",
			prog, mode);
		return EXIT_SETUP;
	}
	r.trial = mode && strcmp(mode, "trial") == 0;
	r.total = o.batches;
	{
		const char *j = getenv("SLURM_JOB_ID");
		const char *procid = getenv("SLURM_PROCID");

		r.job_id = j ? atol(j) : 0;
		/* one writer per job: task 0 of the step */
		if (!r.trial && pfile && *pfile &&
		    (!procid || strcmp(procid, "0") == 0))
			r.progress_file = pfile;
	}
	if (r.trial) {
		r.warmup = 1;
		r.measure = 3;
		if (env_num("SATURN_TRIAL_WARMUP", &r.warmup, NULL) < 0 ||
		    env_num("SATURN_TRIAL_BATCHES", &r.measure, NULL) < 0 ||
		    env_num("SATURN_TRIAL_TIMEOUT", &trial_timeout, NULL) < 0)
			return EXIT_SETUP;
		if (r.measure < 1)
			r.measure = 1;
		if (!getenv("SATURN_REPORT_FILE")) {
			fprintf(
			    stderr,
			    "%s: SATURN_MODE=trial needs SATURN_REPORT_FILE\n",
			    prog);
			return EXIT_SETUP;
		}
	}

	/* resume point: explicit, else from the environment, else from our
	 * own progress file of an earlier run of this job (requeue) */
	if (!o.have_resume &&
	    env_num("SATURN_RESUME_BATCH", &o.resume, &have) < 0)
		return EXIT_SETUP;
	if (!o.have_resume && !have && r.progress_file && !r.trial) {
		saturn_progress_t old;

		if (saturn_progress_read(r.progress_file, (long)getuid(), &old, NULL) == 0 &&
		    old.job_id == r.job_id && r.job_id != 0)
			o.resume = old.batches_done;
	}
	if (r.trial)
		o.resume = 0;
	r.done = o.resume;

	/* the assignment */
	if (env_num("SATURN_GPUS", &gd, &have) < 0)
		return EXIT_SETUP;
	gpus = have ? (int)gd : 0;
	if (tname && *tname && strcmp(tname, "user") != 0) {
		if (!(reg = saturn_techniques_default(&err))) {
			fprintf(stderr, "%s: %s\n", prog, err.text);
			return EXIT_SETUP;
		}
		if (!(t = saturn_techniques_find(reg, tname))) {
			fprintf(stderr,
				"%s: SATURN_TECHNIQUE=%s: no such technique "
				"(see saturn techniques)\n",
				prog, tname);
			goto out;
		}
		if (gpus < 1) {
			const char *cvd = getenv("SATURN_VISIBLE_DEVICES");

			gpus = count_devices(
			    cvd ? cvd : getenv("CUDA_VISIBLE_DEVICES"));
			if (gpus < 1)
				gpus = 1;
		}
		if (gpus < t->min_gpus || (t->max_gpus && gpus > t->max_gpus)) {
			fprintf(
			    stderr,
			    "%s: technique %s runs on %d..%d GPUs, not %d\n",
			    prog, t->name, t->min_gpus, t->max_gpus, gpus);
			goto out;
		}
		if (!(params = saturn_technique_params(
			  t, gpus, getenv("SATURN_TECHNIQUE_PARAMS"), &err))) {
			fprintf(stderr, "%s: SATURN_TECHNIQUE_PARAMS: %s\n",
				prog, err.text);
			goto out;
		}
	}

	/* the child's environment */
	{
		const char *sv = getenv("SATURN_VISIBLE_DEVICES");
		const char *cvd =
		    sv && *sv ? sv : getenv("CUDA_VISIBLE_DEVICES");

		if (cvd && *cvd && gpus > 0) {
			char lim[4096];
			int have_n =
			    restrict_devices(cvd, gpus, lim, sizeof(lim));

			if (have_n < 0) {
				fprintf(stderr, "%s: device list too long\n",
					prog);
				goto out;
			}
			if (have_n < gpus)
				fprintf(stderr,
					"%s: warning: %d GPUs assigned but "
					"only %d visible (%s)\n",
					prog, gpus, have_n, cvd);
			setenv("CUDA_VISIBLE_DEVICES", lim, 1);
		} else if (cvd && *cvd) {
			setenv("CUDA_VISIBLE_DEVICES", cvd, 1);
		}
		if (gpus < 1)
			gpus = count_devices(getenv("CUDA_VISIBLE_DEVICES"));
	}
	if (t) {
		saturn_kv_t vars[SATURN_TECHNIQUE_MAX_PARAMS + 8];
		char store[4096];
		int nv = saturn_technique_vars(
		    t, gpus, params, getenv("SATURN_BATCH"),
		    getenv("SATURN_PLAN_ID"), vars,
		    SATURN_TECHNIQUE_MAX_PARAMS + 8, store, sizeof(store));

		if (nv < 0) {
			fprintf(stderr, "%s: technique variables too long\n",
				prog);
			goto out;
		}
		for (int i = 0; i < t->nenv; i++) {
			char *e =
			    saturn_template_expand(t->env[i], vars, nv, &err);
			char *eq;

			if (!e) {
				fprintf(stderr,
					"%s: technique %s: env %s: %s\n", prog,
					t->name, t->env[i], err.text);
				goto out;
			}
			eq = strchr(e, '=');
			*eq = '\0';
			setenv(e, eq + 1, 1);
			free(e);
		}
		for (int i = 0; i < t->nparams; i++) {
			char k[96];

			snprintf(k, sizeof(k), "SATURN_PARAM_%s",
				 t->params[i].name);
			for (char *p = k; *p; p++)
				if (*p >= 'a' && *p <= 'z')
					*p -= 'a' - 'A';
			setenv(k, vars[4 + i].value, 1);
		}
		setenv("SATURN_TECHNIQUE", t->name, 1);
		setenv("SATURN_TECHNIQUE_PARAMS", params, 1);
		if (is_direct(&o, argv[0])) {
			largv = calloc(argc + 1, sizeof(*largv));
			if (!largv)
				goto out;
			for (int i = 0; i < argc; i++)
				largv[i] = strdup(argv[i]);
		} else if (saturn_template_argv(t->launch, vars, nv, argv, argc,
						&largv, &err) < 0) {
			fprintf(stderr, "%s: technique %s: %s\n", prog, t->name,
				err.text);
			goto out;
		}
	} else {
		setenv("SATURN_TECHNIQUE", "user", 1);
		largv = calloc(argc + 1, sizeof(*largv));
		if (!largv)
			goto out;
		for (int i = 0; i < argc; i++)
			largv[i] = strdup(argv[i]);
	}
	if (gpus > 0)
		setenv_num("SATURN_GPUS", gpus);
	if (r.trial) {
		setenv_num("SATURN_BATCHES", r.warmup + r.measure);
		setenv("SATURN_TRIAL", "1", 1);
	} else if (o.batches > 0) {
		setenv_num("SATURN_BATCHES", o.batches);
	}
	setenv_num("SATURN_RESUME_BATCH", o.resume);
	if (make_fifo(&r) < 0)
		goto out;
	setenv("SATURN_PROGRESS_PIPE", r.fifo_path, 1);
	if (o.verbose) {
		fprintf(stderr, "%s: technique %s on %d GPUs:", prog,
			t ? t->name : "user", gpus);
		for (char **a = largv; *a; a++)
			fprintf(stderr, " %s", *a);
		fputc('\n', stderr);
	}

	/* signals arrive through a pipe so the loop below sees them in order */
	if (pipe(sigpipe_fds) < 0)
		goto out;
	fcntl(sigpipe_fds[0], F_SETFL, O_NONBLOCK);
	fcntl(sigpipe_fds[1], F_SETFL, O_NONBLOCK);
	fcntl(sigpipe_fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(sigpipe_fds[1], F_SETFD, FD_CLOEXEC);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	r.child = fork();
	if (r.child < 0) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		goto out;
	}
	if (r.child == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGUSR2, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		sigemptyset(&mask);
		sigprocmask(SIG_SETMASK, &mask, NULL);
		if (t && t->plugin && t->plugin->execute) {
			saturn_technique_ctx_v1_t ctx = {
			    o.signature ? o.signature : "", gpus, params,
			    o.batches, o.resume};
			char *repl = NULL, ebuf[256] = "";

			if (t->plugin->execute(&ctx, &repl, ebuf,
					       sizeof(ebuf)) < 0) {
				fprintf(
				    stderr,
				    "%s: technique %s refused the launch: %s\n",
				    prog, t->name, ebuf);
				_exit(EXIT_SETUP);
			}
			if (repl) {
				saturn_kv_t
				    vars[SATURN_TECHNIQUE_MAX_PARAMS + 8];
				char store[4096];
				int nv = saturn_technique_vars(
				    t, gpus, params, getenv("SATURN_BATCH"),
				    getenv("SATURN_PLAN_ID"), vars,
				    SATURN_TECHNIQUE_MAX_PARAMS + 8, store,
				    sizeof(store));
				char **nargv = NULL;

				if (nv < 0 || saturn_template_argv(
						  repl, vars, nv, argv, argc,
						  &nargv, &err) < 0) {
					fprintf(stderr,
						"%s: technique %s: %s\n", prog,
						t->name, err.text);
					_exit(EXIT_SETUP);
				}
				largv = nargv;
			}
		}
		execvp(largv[0], largv);
		fprintf(stderr, "%s: %s: %s\n", prog, largv[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	setpgid(r.child, r.child);
	write_progress(&r, 1);
	if (r.trial && trial_timeout > 0)
		deadline = now() + trial_timeout;

	while (!exited) {
		struct pollfd pf[2] = {{r.fifo_rd, POLLIN, 0},
				       {sigpipe_fds[0], POLLIN, 0}};
		double tnow = now(), wake = 1.0;
		unsigned char sig;

		if (deadline > 0)
			wake = fmin(wake, fmax(0, deadline - tnow));
		if (kill_at > 0)
			wake = fmin(wake, fmax(0, kill_at - tnow));
		if (ckpt_deadline > 0)
			wake = fmin(wake, fmax(0, ckpt_deadline - tnow));
		poll(pf, 2, (int)(wake * 1000) + 1);
		drain_fifo(&r);
		while (read(sigpipe_fds[0], &sig, 1) == 1) {
			if (sig == SIGCHLD)
				continue;
			if (sig == SIGUSR1 ||
			    (sig == SIGTERM && o.ckpt_on_term)) {
				if (!ckpt_requested) {
					ckpt_requested = 1;
					ckpt_deadline = now() + o.grace;
					fprintf(stderr,
						"%s: checkpoint requested: "
						"asking the program (SIGUSR1), "
						"waiting up to %.0f s\n",
						prog, o.grace);
					kill_group(r.child, SIGUSR1);
				}
			} else {
				kill_group(r.child, sig);
			}
		}
		tnow = now();
		if (r.trial && r.trial_done && !term_sent) {
			/* measured enough: stop the program */
			kill_group(r.child, SIGTERM);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		if (deadline > 0 && tnow >= deadline && !term_sent) {
			timed_out = 1;
			kill_group(r.child, SIGTERM);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		if (ckpt_requested && !term_sent &&
		    (r.checkpointed ? 0 : tnow >= ckpt_deadline)) {
			fprintf(stderr,
				"%s: no checkpoint within %.0f s: stopping the "
				"program\n",
				prog, o.grace);
			kill_group(r.child, SIGTERM);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		if (kill_at > 0 && tnow >= kill_at) {
			kill_group(r.child, SIGKILL);
			kill_at = 0;
		}
		for (;;) {
			pid_t w = waitpid(r.child, &status, WNOHANG);

			if (w == r.child) {
				exited = 1;
				break;
			}
			if (w < 0 && errno == EINTR)
				continue;
			break;
		}
		write_progress(&r, 0);
	}
	drain_fifo(&r);
	/* whatever is left of the group after its leader ended */
	kill_group(r.child, SIGTERM);

	if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	if (r.trial) {
		char why[320];

		if (r.trial_done) {
			trial_report(&r, "measured", NULL);
		} else if (r.oom || rc == EXIT_OOM) {
			trial_report(&r, "oom",
				     r.oom
					 ? r.oom_reason
					 : "exit status 3 (out of GPU memory)");
		} else if (timed_out) {
			snprintf(why, sizeof(why),
				 "no result within %.0f s (%.0f batches done)",
				 trial_timeout, r.done);
			trial_report(&r, "timeout", why);
		} else {
			if (!r.seen_progress && rc == 0)
				snprintf(why, sizeof(why),
					 "exit status 0 without progress lines "
					 "(does the program follow the "
					 "progress protocol?)");
			else if (rc > 128)
				snprintf(
				    why, sizeof(why),
				    "killed by signal %d after %.0f batches",
				    rc - 128, r.done);
			else
				snprintf(why, sizeof(why),
					 "exit status %d after %.0f batches",
					 rc, r.done);
			trial_report(&r, "failed", why);
		}
		rc = 0;
	} else {
		write_progress(&r, 1);
		if (ckpt_requested) {
			fprintf(stderr,
				"%s: %s at batch %.0f; exiting %d so the job "
				"is requeued\n",
				prog,
				r.checkpointed ? "checkpointed"
					       : "stopped without a checkpoint",
				r.done, EXIT_REQUEUE);
			rc = EXIT_REQUEUE;
		}
	}
out:
	cleanup_fifo(&r);
	saturn_argv_free(largv);
	free(params);
	saturn_techniques_destroy(reg);
	return rc;
}
