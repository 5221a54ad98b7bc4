/* launch.c - how saturn-run runs the program (saturn-run(1), LAUNCH,
 * RESUME AND CHECKPOINT BEFORE REQUEUE).
 *
 * It resolves the assignment from the environment (SATURN_TECHNIQUE,
 * SATURN_GPUS, SATURN_TECHNIQUE_PARAMS) against the technique registry,
 * gives the program its environment (the assigned GPUs, the technique's
 * variables, batches and resume point, the progress FIFO), builds the
 * launch line from the technique's template (or runs the command itself
 * for direct programs and plugins' execute hooks), runs it in its own
 * process group, and supervises it: progress lines, signals forwarded to
 * the group through a self-pipe, checkpoint-before-requeue (SIGUSR1 to the
 * program, SIGTERM after --grace, SIGKILL 10 s later, exit 75), and the end
 * of a trial.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "technique.h"

/* What the launch is made of; freed by launch_free(). */
struct launch {
	saturn_techniques_t *reg;
	const saturn_technique_t *t; /* NULL: no plan ("user") */
	char *params;		     /* resolved parameters (JSON text) */
	char **largv;		     /* the launch line */
	int gpus;
};

static int sigpipe_fds[2] = {-1, -1};

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int saved = errno;

	if (write(sigpipe_fds[1], &c, 1) < 0) {
		/* pipe full: the signal is already pending there */
	}
	errno = saved;
}

static void kill_group(pid_t pg, int sig)
{
	if (pg > 0)
		kill(-pg, sig);
}

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
	return run_list_match(buf, list, &tv);
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

static char **argv_copy(int argc, char **argv)
{
	char **a = calloc(argc + 1, sizeof(*a));

	if (!a)
		return NULL;
	for (int i = 0; i < argc; i++)
		a[i] = strdup(argv[i]);
	return a;
}

/* The technique, GPU count and parameters of the plan. -1 after a
 * message. */
static int assignment(struct launch *l)
{
	const char *tname = getenv("SATURN_TECHNIQUE");
	saturn_error_t err = {{0}};
	double gd = 0;
	int have = 0;

	if (run_env_num("SATURN_GPUS", &gd, &have) < 0)
		return -1;
	l->gpus = have ? (int)gd : 0;
	if (!tname || !*tname || strcmp(tname, "user") == 0)
		return 0;
	if (!(l->reg = saturn_techniques_default(&err))) {
		fprintf(stderr, "%s: %s\n", run_prog, err.text);
		return -1;
	}
	if (!(l->t = saturn_techniques_find(l->reg, tname))) {
		fprintf(stderr,
			"%s: SATURN_TECHNIQUE=%s: no such technique "
			"(see saturn techniques)\n",
			run_prog, tname);
		return -1;
	}
	if (l->gpus < 1) {
		const char *cvd = getenv("SATURN_VISIBLE_DEVICES");

		l->gpus =
		    count_devices(cvd ? cvd : getenv("CUDA_VISIBLE_DEVICES"));
		if (l->gpus < 1)
			l->gpus = 1;
	}
	if (l->gpus < l->t->min_gpus ||
	    (l->t->max_gpus && l->gpus > l->t->max_gpus)) {
		fprintf(stderr,
			"%s: technique %s runs on %d..%d GPUs, not %d\n",
			run_prog, l->t->name, l->t->min_gpus, l->t->max_gpus,
			l->gpus);
		return -1;
	}
	if (!(l->params = saturn_technique_params(
		  l->t, l->gpus, getenv("SATURN_TECHNIQUE_PARAMS"), &err))) {
		fprintf(stderr, "%s: SATURN_TECHNIQUE_PARAMS: %s\n", run_prog,
			err.text);
		return -1;
	}
	return 0;
}

/* CUDA_VISIBLE_DEVICES: the first l->gpus of the visible GPUs. */
static int devices(struct launch *l)
{
	const char *sv = getenv("SATURN_VISIBLE_DEVICES");
	const char *cvd = sv && *sv ? sv : getenv("CUDA_VISIBLE_DEVICES");

	if (cvd && *cvd && l->gpus > 0) {
		char lim[4096];
		int have_n = restrict_devices(cvd, l->gpus, lim, sizeof(lim));

		if (have_n < 0) {
			fprintf(stderr, "%s: device list too long\n", run_prog);
			return -1;
		}
		if (have_n < l->gpus)
			fprintf(stderr,
				"%s: warning: %d GPUs assigned but "
				"only %d visible (%s)\n",
				run_prog, l->gpus, have_n, cvd);
		setenv("CUDA_VISIBLE_DEVICES", lim, 1);
	} else if (cvd && *cvd) {
		setenv("CUDA_VISIBLE_DEVICES", cvd, 1);
	}
	if (l->gpus < 1)
		l->gpus = count_devices(getenv("CUDA_VISIBLE_DEVICES"));
	return 0;
}

/* The technique's environment entries and parameters, and the launch line
 * from its template (the command itself when it is direct). */
static int technique_env(const struct opts *o, struct launch *l, int argc,
			 char **argv)
{
	const saturn_technique_t *t = l->t;
	saturn_kv_t vars[SATURN_TECHNIQUE_MAX_PARAMS + 8];
	char store[4096];
	saturn_error_t err = {{0}};
	int nv = saturn_technique_vars(
	    t, l->gpus, l->params, getenv("SATURN_BATCH"),
	    getenv("SATURN_PLAN_ID"), vars, SATURN_TECHNIQUE_MAX_PARAMS + 8,
	    store, sizeof(store));

	if (nv < 0) {
		fprintf(stderr, "%s: technique variables too long\n", run_prog);
		return -1;
	}
	for (int i = 0; i < t->nenv; i++) {
		char *e = saturn_template_expand(t->env[i], vars, nv, &err);
		char *eq;

		if (!e) {
			fprintf(stderr, "%s: technique %s: env %s: %s\n",
				run_prog, t->name, t->env[i], err.text);
			return -1;
		}
		eq = strchr(e, '=');
		*eq = '\0';
		setenv(e, eq + 1, 1);
		free(e);
	}
	for (int i = 0; i < t->nparams; i++) {
		char k[96];

		snprintf(k, sizeof(k), "SATURN_PARAM_%s", t->params[i].name);
		for (char *p = k; *p; p++)
			if (*p >= 'a' && *p <= 'z')
				*p -= 'a' - 'A';
		/* vars: gpus, technique, batch, plan_id, then the params */
		setenv(k, vars[4 + i].value, 1);
	}
	setenv("SATURN_TECHNIQUE", t->name, 1);
	setenv("SATURN_TECHNIQUE_PARAMS", l->params, 1);
	if (is_direct(o, argv[0]))
		return (l->largv = argv_copy(argc, argv)) ? 0 : -1;
	if (saturn_template_argv(t->launch, vars, nv, argv, argc, &l->largv,
				 &err) < 0) {
		fprintf(stderr, "%s: technique %s: %s\n", run_prog, t->name,
			err.text);
		return -1;
	}
	return 0;
}

/* The program's environment and launch line. -1 after a message. */
static int child_env(const struct opts *o, const struct run *r,
		     struct launch *l, int argc, char **argv)
{
	if (devices(l) < 0)
		return -1;
	if (l->t) {
		if (technique_env(o, l, argc, argv) < 0)
			return -1;
	} else {
		setenv("SATURN_TECHNIQUE", "user", 1);
		if (!(l->largv = argv_copy(argc, argv)))
			return -1;
	}
	if (l->gpus > 0)
		setenv_num("SATURN_GPUS", l->gpus);
	if (r->trial) {
		setenv_num("SATURN_BATCHES", r->warmup + r->measure);
		setenv("SATURN_TRIAL", "1", 1);
	} else if (o->batches > 0) {
		setenv_num("SATURN_BATCHES", o->batches);
	}
	setenv_num("SATURN_RESUME_BATCH", o->resume);
	return 0;
}

/* Signals arrive through a pipe so the supervision loop sees them in
 * order. */
static int signals_catch(void)
{
	struct sigaction sa;

	if (pipe(sigpipe_fds) < 0)
		return -1;
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
	return 0;
}

/* In the child: a process group of its own, default signals, the plugin's
 * execute hook, exec. Never returns. */
static void child_exec(const struct opts *o, struct launch *l, int argc,
		       char **argv)
{
	const saturn_technique_t *t = l->t;
	sigset_t mask;

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
		    o->signature ? o->signature : "", l->gpus, l->params,
		    o->batches, o->resume};
		char *repl = NULL, ebuf[256] = "";

		if (t->plugin->execute(&ctx, &repl, ebuf, sizeof(ebuf)) < 0) {
			fprintf(stderr,
				"%s: technique %s refused the launch: %s\n",
				run_prog, t->name, ebuf);
			_exit(EXIT_SETUP);
		}
		if (repl) {
			saturn_kv_t vars[SATURN_TECHNIQUE_MAX_PARAMS + 8];
			char store[4096];
			saturn_error_t err = {{0}};
			int nv = saturn_technique_vars(
			    t, l->gpus, l->params, getenv("SATURN_BATCH"),
			    getenv("SATURN_PLAN_ID"), vars,
			    SATURN_TECHNIQUE_MAX_PARAMS + 8, store,
			    sizeof(store));
			char **nargv = NULL;

			if (nv < 0 ||
			    saturn_template_argv(repl, vars, nv, argv, argc,
						 &nargv, &err) < 0) {
				fprintf(stderr, "%s: technique %s: %s\n",
					run_prog, t->name, err.text);
				_exit(EXIT_SETUP);
			}
			l->largv = nargv;
		}
	}
	execvp(l->largv[0], l->largv);
	fprintf(stderr, "%s: %s: %s\n", run_prog, l->largv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* How the supervision ended. */
struct outcome {
	int status; /* waitpid() status of the program */
	int timed_out;
	int ckpt_requested;
};

/* Until the program ends: read progress, forward signals, ask for a
 * checkpoint and enforce its grace, stop a finished or timed-out trial. */
static void supervise(const struct opts *o, struct run *r, struct outcome *out)
{
	double deadline = 0, kill_at = 0, ckpt_deadline = 0;
	int term_sent = 0, exited = 0;

	if (r->trial && r->timeout > 0)
		deadline = run_now() + r->timeout;

	while (!exited) {
		struct pollfd pf[2] = {{r->fifo_rd, POLLIN, 0},
				       {sigpipe_fds[0], POLLIN, 0}};
		double tnow = run_now(), wake = 1.0;
		unsigned char sig;

		if (deadline > 0)
			wake = fmin(wake, fmax(0, deadline - tnow));
		if (kill_at > 0)
			wake = fmin(wake, fmax(0, kill_at - tnow));
		if (ckpt_deadline > 0)
			wake = fmin(wake, fmax(0, ckpt_deadline - tnow));
		poll(pf, 2, (int)(wake * 1000) + 1);
		run_fifo_drain(r);
		while (read(sigpipe_fds[0], &sig, 1) == 1) {
			if (sig == SIGCHLD)
				continue;
			if (sig == SIGUSR1 ||
			    (sig == SIGTERM && o->ckpt_on_term)) {
				if (!out->ckpt_requested) {
					out->ckpt_requested = 1;
					ckpt_deadline = run_now() + o->grace;
					fprintf(stderr,
						"%s: checkpoint requested: "
						"asking the program (SIGUSR1), "
						"waiting up to %.0f s\n",
						run_prog, o->grace);
					kill_group(r->child, SIGUSR1);
				}
			} else {
				kill_group(r->child, sig);
			}
		}
		tnow = run_now();
		if (r->trial && r->trial_done && !term_sent) {
			/* measured enough: stop the program */
			kill_group(r->child, SIGTERM);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		if (deadline > 0 && tnow >= deadline && !term_sent) {
			out->timed_out = 1;
			kill_group(r->child, SIGTERM);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		/* the grace holds after a checkpoint too: a program that
		 * saved its state but hangs on the way out must not keep the
		 * job from being requeued */
		if (out->ckpt_requested && !term_sent &&
		    tnow >= ckpt_deadline) {
			if (r->checkpointed)
				fprintf(stderr,
					"%s: checkpointed but still running "
					"after %.0f s: stopping the program\n",
					run_prog, o->grace);
			else
				fprintf(stderr,
					"%s: no checkpoint within %.0f s: "
					"stopping the program\n",
					run_prog, o->grace);
			kill_group(r->child, SIGTERM);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		if (kill_at > 0 && tnow >= kill_at) {
			kill_group(r->child, SIGKILL);
			kill_at = 0;
		}
		for (;;) {
			pid_t w = waitpid(r->child, &out->status, WNOHANG);

			if (w == r->child) {
				exited = 1;
				break;
			}
			if (w < 0 && errno == EINTR)
				continue;
			break;
		}
		run_progress_write(r, 0);
	}
	run_fifo_drain(r);
	/* whatever is left of the group after its leader ended */
	kill_group(r->child, SIGTERM);
}

static void launch_free(struct launch *l)
{
	saturn_argv_free(l->largv);
	free(l->params);
	saturn_techniques_destroy(l->reg);
}

int run_launch(const struct opts *o, struct run *r, int argc, char **argv)
{
	struct launch l = {0};
	struct outcome out = {0};
	int rc = EXIT_SETUP;

	if (assignment(&l) < 0 || child_env(o, r, &l, argc, argv) < 0 ||
	    run_fifo_make(r) < 0)
		goto out;
	setenv("SATURN_PROGRESS_PIPE", r->fifo_path, 1);
	if (o->verbose) {
		fprintf(stderr, "%s: technique %s on %d GPUs:", run_prog,
			l.t ? l.t->name : "user", l.gpus);
		for (char **a = l.largv; *a; a++)
			fprintf(stderr, " %s", *a);
		fputc('\n', stderr);
	}
	if (signals_catch() < 0)
		goto out;
	r->child = fork();
	if (r->child < 0) {
		fprintf(stderr, "%s: fork: %s\n", run_prog, strerror(errno));
		goto out;
	}
	if (r->child == 0)
		child_exec(o, &l, argc, argv);
	setpgid(r->child, r->child);
	run_progress_write(r, 1);
	supervise(o, r, &out);

	rc = EXIT_SETUP;
	if (WIFEXITED(out.status))
		rc = WEXITSTATUS(out.status);
	else if (WIFSIGNALED(out.status))
		rc = 128 + WTERMSIG(out.status);
	if (r->trial) {
		rc = run_trial_finish(r, rc, out.timed_out);
	} else {
		run_progress_write(r, 1);
		if (out.ckpt_requested) {
			fprintf(stderr,
				"%s: %s at batch %.0f; exiting %d so the job "
				"is requeued\n",
				run_prog,
				r->checkpointed
				    ? "checkpointed"
				    : "stopped without a checkpoint",
				r->done, EXIT_REQUEUE);
			rc = EXIT_REQUEUE;
		}
	}
out:
	run_fifo_cleanup(r);
	launch_free(&l);
	return rc;
}
