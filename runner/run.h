/* run.h - what the files of saturn-run share (internal to runner/).
 *
 * saturn-run is split by purpose: saturn-run.c (options, resume point, mode
 * dispatch), signature.c (SATURN_MODE=signature), trial.c
 * (SATURN_MODE=trial), launch.c (the assignment, the launch line, the child,
 * signal forwarding, checkpoint-before-requeue), progress_fifo.c (the
 * progress FIFO and the progress file) and util.c (small shared helpers).
 * The functions below cross those files; they print their own messages on
 * stderr (prefixed with run_prog) because saturn-run is a program, not a
 * library.
 */
#ifndef SATURN_RUN_H
#define SATURN_RUN_H

#include <json-c/json.h>

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "progress.h"

#define EXIT_SETUP 125	/* saturn-run failed before running the command */
#define EXIT_REQUEUE 75 /* checkpointed: requeue me (EX_TEMPFAIL) */
#define EXIT_OOM 3	/* the program ran out of GPU memory (protocol) */

/* The program's name in messages ("saturn-run"). */
extern const char *const run_prog;

/* Command-line options. */
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

/* State of one run: the FIFO, the progress seen so far, and the trial's
 * measurement. Start with fifo_rd = fifo_wr = -1 and t_warm = -1. */
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
	double timeout; /* SATURN_TRIAL_TIMEOUT, 0 = none */
	double rep_sum; /* child-reported sec_per_batch after warm-up */
	int rep_n, unrep_n;
	double t_warm, done_warm, t_meas_end;
	int trial_done;
};

/* --- util.c ----------------------------------------------------------------
 */

/* Seconds on the monotonic clock. */
double run_now(void);

/* Seconds since the epoch. */
double run_wall(void);

/* Read environment variable name as a number >= 0 into *v. Unset or empty
 * leaves *v alone and returns 0 (*have = 0); a valid number returns 0 with
 * *have = 1 (have may be NULL); anything else prints a message and returns
 * -1. */
int run_env_num(const char *name, double *v, int *have);

/* Write the JSON object o (consumed, NULL allowed as "out of memory") to
 * path atomically with saturn_write_file_atomic(). 0, or -1 with a message
 * naming what (e.g. "the trial report") printed. */
int run_write_report(const char *path, json_object *o, const char *what);

/* Whether the option or name arg (up to a '=') is in the comma-separated
 * list. *takes_value is set when arg has no "=value" part. */
int run_list_match(const char *arg, const char *list, int *takes_value);

/* The first host name of a Slurm host list ("gpu[07-09,12],cpu1" gives
 * "gpu07") into out (len bytes). 0, or -1 when list is empty, malformed or
 * the name does not fit. */
int run_first_host(const char *list, char *out, size_t len);

/* --- signature.c -----------------------------------------------------------
 */

/* SATURN_MODE=signature: write {"signature":S,"batches":N} to
 * SATURN_REPORT_FILE for the command argv[0..argc-1]. Returns the exit
 * status: 0, or EXIT_SETUP after a message. */
int run_mode_signature(const struct opts *o, int argc, char **argv);

/* --- trial.c ---------------------------------------------------------------
 */

/* SATURN_MODE=trial: read the trial's settings (warm-up, measured batches,
 * timeout) into r and check SATURN_REPORT_FILE. Returns 0, or -1 after a
 * message. */
int run_trial_setup(struct run *r);

/* Account one progress line (batches_done done, the program's
 * sec_per_batch, 0 when not given) that arrived at time t; sets
 * r->trial_done and r->spb once enough batches were measured. */
void run_trial_line(struct run *r, double done, double sec_per_batch, double t);

/* Write the trial report for a program that ended with exit status rc
 * (128+N when killed by signal N); timed_out when saturn-run stopped it at
 * the trial timeout. Returns saturn-run's exit status (0). */
int run_trial_finish(struct run *r, int rc, int timed_out);

/* --- progress_fifo.c -------------------------------------------------------
 */

/* Create the progress FIFO in a fresh folder under $TMPDIR (or /tmp) and
 * open it for reading and (to keep it from reporting EOF) for writing, both
 * non-blocking and close-on-exec. Returns 0, or -1 after a message;
 * run_fifo_cleanup() undoes what was done either way. */
int run_fifo_make(struct run *r);

/* Close and remove the FIFO and its folder; safe to call when
 * run_fifo_make() was never called or failed. */
void run_fifo_cleanup(struct run *r);

/* Read what is in the FIFO now and handle each complete line. */
void run_fifo_drain(struct run *r);

/* Write the progress file (when r has one): at most once a second unless
 * force. A failure is reported on stderr, not returned. */
void run_progress_write(struct run *r, int force);

/* --- launch.c --------------------------------------------------------------
 */

/* Run argv[0..argc-1] with the assignment in the environment (the
 * technique's launch line, its variables, the GPUs), supervise it
 * (progress, signals, checkpoint, trial end) and turn its end into
 * saturn-run's exit status: the program's, EXIT_REQUEUE after a checkpoint
 * request, the trial's (run_trial_finish), or EXIT_SETUP when the launch
 * could not be prepared. r comes from the caller with its mode, progress
 * file, job id and resume point (r->done) set. */
int run_launch(const struct opts *o, struct run *r, int argc, char **argv);

#endif /* SATURN_RUN_H */
