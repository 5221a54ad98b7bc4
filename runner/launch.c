/* launch.c - how saturn-run runs the program (saturn-run(1), LAUNCH,
 * LAUNCH OF RANKS, RESUME AND CHECKPOINT BEFORE REQUEUE).
 *
 * It resolves the assignment from the environment (SATURN_TECHNIQUE,
 * SATURN_GPUS, SATURN_TECHNIQUE_PARAMS) against the technique registry,
 * gives the program its environment (the assigned GPUs, the technique's
 * variables, batches and resume point, the progress FIFO), builds the
 * launch line from the technique's template (or runs the command itself
 * for direct programs and plugins' execute hooks), runs it in its own
 * process group -- or, when the line starts with the reserved word
 * "saturn-ranks", one process per GPU, each in a group of its own with
 * torchrun's variables (RANK, WORLD_SIZE, MASTER_PORT, ...) -- and
 * supervises them: progress lines, signals forwarded to every group through
 * a self-pipe, checkpoint-before-requeue (SIGUSR1 to the program, SIGTERM
 * after --grace, SIGKILL 10 s later, exit 75), a failed rank stopping the
 * others, and the end of a trial. With ranks on several nodes (the job has
 * SLURM_JOB_NUM_NODES > 1), the ranks are one srun step instead: every node
 * runs SATURN_GPUS ranks, MASTER_ADDR is the job's first node, and
 * saturn-run supervises the step (launch_multinode_line()).
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

#include "jobenv.h"
#include "launch.h"
#include "run.h"
#include "technique.h"

/* The processes of a launch (one, or one per rank) and how they ended. */
struct procs {
	int n;
	int left; /* not reaped yet */
	pid_t *pid;
	int *ended;
	int first_bad;	/* the first to end with a non-zero status, or -1 */
	int bad_status; /* its waitpid() status */
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

/* sig to the group of every process not reaped yet (all when all). */
static void kill_procs(const struct procs *p, int sig, int all)
{
	for (int i = 0; i < p->n; i++)
		if (all || !p->ended[i])
			kill_group(p->pid[i], sig);
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
			    t, l->gpus, l->nodes, l->params,
			    getenv(SATURN_BATCH_ENV), getenv(SATURN_PLAN_ID_ENV),
			    vars, SATURN_TECHNIQUE_MAX_PARAMS + 8, store,
			    sizeof(store));
			char **nargv = NULL;

			if (nv < 0 ||
			    saturn_template_argv(repl, vars, nv, argv, argc,
						 &nargv, &err) < 0) {
				fprintf(stderr, "%s: technique %s: %s\n",
					run_prog, t->name, err.text);
				_exit(EXIT_SETUP);
			}
			/* the number of processes is settled by now: a
			 * replacement line runs as it is in each of them */
			launch_strip_ranks_word(nargv);
			if (!nargv[0]) {
				fprintf(stderr,
					"%s: technique %s: empty "
					"launch line\n",
					run_prog, t->name);
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
	int status; /* waitpid() status: the first process to end non-zero's */
	int timed_out;
	int ckpt_requested;
	int ckpt_late; /* the request came after the program ended */
};

/* Reap what ended; remember the first process that ended non-zero. */
static void reap(struct procs *p, int verbose)
{
	for (int i = 0; i < p->n; i++) {
		int st;
		pid_t w;

		if (p->ended[i])
			continue;
		do
			w = waitpid(p->pid[i], &st, WNOHANG);
		while (w < 0 && errno == EINTR);
		if (w != p->pid[i])
			continue;
		p->ended[i] = 1;
		p->left--;
		if (st != 0 && p->first_bad < 0) {
			p->first_bad = i;
			p->bad_status = st;
		}
		if (p->n > 1 && (verbose || (st != 0 && p->first_bad == i))) {
			if (WIFSIGNALED(st))
				fprintf(stderr,
					"%s: rank %d (pid %ld) killed by "
					"signal %d\n",
					run_prog, i, (long)p->pid[i],
					WTERMSIG(st));
			else
				fprintf(stderr,
					"%s: rank %d (pid %ld) exited with "
					"status %d\n",
					run_prog, i, (long)p->pid[i],
					WEXITSTATUS(st));
		}
	}
}

/* Until every process has ended: read progress, forward signals, ask for a
 * checkpoint and enforce its grace, stop a finished or timed-out trial,
 * stop the other ranks rank_grace seconds after one ended non-zero. */
static void supervise(const struct opts *o, struct run *r, struct procs *p,
		      double rank_grace, struct outcome *out)
{
	double deadline = 0, kill_at = 0, ckpt_deadline = 0, rank_stop_at = 0;
	int term_sent = 0;

	if (r->trial && r->timeout > 0)
		deadline = run_now() + r->timeout;

	while (p->left > 0) {
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
		if (rank_stop_at > 0)
			wake = fmin(wake, fmax(0, rank_stop_at - tnow));
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
					kill_procs(p, SIGUSR1, 0);
				}
			} else {
				kill_procs(p, sig, 0);
			}
		}
		tnow = run_now();
		if (r->trial && r->trial_done && !term_sent) {
			/* measured enough: stop the program */
			kill_procs(p, SIGTERM, 0);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		if (deadline > 0 && tnow >= deadline && !term_sent) {
			out->timed_out = 1;
			kill_procs(p, SIGTERM, 0);
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
			kill_procs(p, SIGTERM, 0);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		/* a rank that failed leaves the others waiting in a
		 * collective for ever (NCCL) or until their own timeout:
		 * give them rank_grace seconds to notice and say why, then
		 * stop them */
		if (rank_stop_at > 0 && !term_sent && tnow >= rank_stop_at) {
			fprintf(stderr,
				"%s: %d rank(s) still running %.0f s after "
				"rank %d failed: stopping them\n",
				run_prog, p->left, rank_grace, p->first_bad);
			kill_procs(p, SIGTERM, 0);
			term_sent = 1;
			kill_at = tnow + 10;
		}
		if (kill_at > 0 && tnow >= kill_at) {
			kill_procs(p, SIGKILL, 0);
			kill_at = 0;
		}
		reap(p, o->verbose);
		if (p->first_bad >= 0 && p->left > 0 && rank_stop_at == 0)
			rank_stop_at = run_now() + rank_grace;
		run_progress_write(r, 0);
	}
	run_fifo_drain(r);
	/* a request that arrived while the last process was being reaped
	 * (Slurm signals the step's processes one by one, children first):
	 * the program has it too, and may well have checkpointed */
	{
		unsigned char sig;

		while (read(sigpipe_fds[0], &sig, 1) == 1)
			if (sig == SIGUSR1 || (sig == SIGTERM && o->ckpt_on_term))
				out->ckpt_late = 1;
	}
	/* whatever is left of the groups after their leaders ended */
	kill_procs(p, SIGTERM, 1);
	out->status = p->first_bad >= 0 ? p->bad_status : 0;
}

/* Start the program: one process, or l->nranks ranks. Each is the leader
 * of a process group of its own, so that a signal reaches what a rank
 * started too, and one rank's group can be told from another's. Returns
 * 0, or -1 after a message with what was started killed and reaped. */
static int start(const struct opts *o, struct run *r, struct launch *l,
		 struct procs *p, int argc, char **argv)
{
	int n = l->nranks > 0 ? l->nranks : 1;

	if (!(p->pid = calloc(n, sizeof(*p->pid))) ||
	    !(p->ended = calloc(n, sizeof(*p->ended)))) {
		fprintf(stderr, "%s: out of memory\n", run_prog);
		return -1;
	}
	p->first_bad = -1;
	for (int i = 0; i < n; i++) {
		pid_t c = fork();

		if (c < 0) {
			fprintf(stderr, "%s: fork: %s\n", run_prog,
				strerror(errno));
			kill_procs(p, SIGKILL, 1);
			for (int j = 0; j < p->n; j++)
				while (waitpid(p->pid[j], NULL, 0) < 0 &&
				       errno == EINTR)
					;
			return -1;
		}
		if (c == 0) {
			if (l->nranks > 0)
				launch_rank_env(l, i);
			child_exec(o, l, argc, argv);
		}
		/* the child does the same (child_exec): whichever runs
		 * first, no signal to the group can miss the child */
		setpgid(c, c);
		p->pid[p->n++] = c;
		p->left++;
	}
	r->child = p->pid[0];
	return 0;
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
	struct procs p = {0};
	struct outcome out = {0};
	double rank_grace = 10;
	int rc = EXIT_SETUP;

	if (launch_assignment(&l) < 0 || launch_child_env(o, r, &l, argc, argv) < 0 ||
	    run_env_num(SATURN_RANK_GRACE_ENV, &rank_grace, NULL) < 0 ||
	    (l.nranks > 0 && launch_master_endpoint(&l, r) < 0) ||
	    (l.nranks > 0 && l.nodes > 1 && launch_multinode_line(&l) < 0) ||
	    run_fifo_make(r) < 0)
		goto out;
	setenv(SATURN_PROGRESS_PIPE_ENV, r->fifo_path, 1);
	if (o->verbose) {
		fprintf(stderr, "%s: technique %s on %d GPUs", run_prog,
			l.t ? l.t->name : "user", l.gpus);
		if (l.nranks > 0 || l.multinode)
			fprintf(stderr,
				", %d ranks on %d node(s), MASTER_ADDR=%s "
				"MASTER_PORT=%s",
				l.multinode ? l.nodes * l.gpus : l.nranks,
				l.multinode ? l.nodes : 1, l.master_addr,
				l.master_port);
		fputc(':', stderr);
		for (char **a = l.largv; *a; a++)
			fprintf(stderr, " %s", *a);
		fputc('\n', stderr);
	}
	if (signals_catch() < 0)
		goto out;
	if (start(o, r, &l, &p, argc, argv) < 0)
		goto out;
	run_progress_write(r, 1);
	supervise(o, r, &p, rank_grace, &out);

	rc = EXIT_SETUP;
	if (WIFEXITED(out.status))
		rc = WEXITSTATUS(out.status);
	else if (WIFSIGNALED(out.status))
		rc = 128 + WTERMSIG(out.status);
	if (r->trial) {
		rc = run_trial_finish(r, rc, out.timed_out);
	} else {
		run_progress_write(r, 1);
		/* The request can reach the program first: Slurm's process
		 * tracking (proctrack/linuxproc, cgroup) signals every process
		 * of the step, the program before saturn-run, and on a loaded
		 * node the program may checkpoint and exit 0 before
		 * saturn-run's own SIGUSR1 is delivered. A program that
		 * reported SATURN_CHECKPOINTED, or whose end came with the
		 * request, and did not finish its last batch was asked for a
		 * checkpoint all the same: exiting 0 would end the job with
		 * its work undone. */
		if (!out.ckpt_requested &&
		    (out.ckpt_late || (rc == 0 && r->checkpointed)) &&
		    !(rc == 0 && r->total > 0 && r->done >= r->total)) {
			fprintf(stderr,
				"%s: the program ended at batch %.0f of %.0f "
				"(status %d) %s: a checkpoint request that "
				"reached it first\n",
				run_prog, r->done, r->total, rc,
				r->checkpointed ? "after a checkpoint"
						: "as SIGUSR1 arrived");
			out.ckpt_requested = 1;
		}
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
	free(p.pid);
	free(p.ended);
	return rc;
}
