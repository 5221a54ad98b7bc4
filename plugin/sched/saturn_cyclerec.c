/* saturn_cyclerec.c - saturn_record_cycles=N: each cycle with Saturn tasks
 * written as saturn-cycle/1 (lib/sched/cycle_record.h) to
 * STATE_DIR/cycles/cycle-SEQ.json (0600, as state.json: every user's
 * tasks are in it), the last N kept, for `saturn replay`. No lock held;
 * every problem logged, never fatal: recording is for debugging, and a
 * cycle is never skipped for it.
 */
#include "config.h" /* Slurm's */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"

#include "cycle_record.h"
#include "safefile.h"

#include "saturn_cyclerec.h"

/* the next cycle's number: -1 until the folder was read (numbers go on
 * from the highest one there, across restarts) */
static long next_seq = -1;
static int warned;

/* STATE_DIR/cycles (0700, ours), or -1 (logged once). */
static int cycles_dir(const saturn_ctx_t *ctx)
{
	saturn_error_t err = {{0}};
	int fd;

	if (ctx->state_fd < 0)
		return -1;
	fd = saturn_dir_ensure_at(ctx->state_fd, ctx->state_dir, "cycles", SATURN_ANY_UID,
				  SATURN_ANY_UID, 0700, &err);
	if (fd < 0 && !warned++)
		error("sched/saturn: saturn_record_cycles: %s: no cycle is recorded", err.text);
	return fd;
}

/* The number in "cycle-NNNNNNNNNN.json", or -1. */
static long file_seq(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "cycle-", 6))
		return -1;
	n = strtol(name + 6, &end, 10);
	if (end == name + 6 || strcmp(end, ".json") || n < 0)
		return -1;
	return n;
}

/* Find the highest number, and remove the records older than the last
 * keep (at the first record after a start or a change of N). */
static void prune(int dfd, long keep)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	long high = -1;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		long n = file_seq(e->d_name);

		if (n > high)
			high = n;
	}
	if (next_seq < 0)
		next_seq = high + 1;
	rewinddir(d);
	while ((e = readdir(d))) {
		long n = file_seq(e->d_name);

		if (n >= 0 && n < next_seq - keep)
			(void)unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

void saturn_cyclerec_begin(const saturn_ctx_t *ctx, saturn_cycle_in_t *in, const saturn_cycle_state_t *st,
			   saturn_cycle_capture_t *cap, saturn_plan_tape_t *tape)
{
	memset(cap, 0, sizeof(*cap));
	memset(tape, 0, sizeof(*tape));
	if (ctx->cfg.record_cycles <= 0 || in->snap->njobs == 0)
		return;
	if (saturn_cycle_capture(cap, in, st) < 0) {
		error("sched/saturn: saturn_record_cycles: out of memory: this cycle is not recorded");
		saturn_cycle_capture_free(cap);
		return;
	}
	tape->mode = SATURN_TAPE_RECORD;
	in->tape = tape;
}

void saturn_cyclerec_end(const saturn_ctx_t *ctx, const saturn_cycle_in_t *in, saturn_cycle_capture_t *cap,
			 saturn_plan_tape_t *tape, const saturn_cycle_out_t *out,
			 const saturn_cycle_state_t *st)
{
	saturn_error_t err = {{0}};
	char name[64], *txt;
	long owner = geteuid() == 0 ? (long)slurm_conf.slurm_user_id : SATURN_ANY_UID;
	int dfd;

	if (!cap->snapshot)
		goto done;
	if ((dfd = cycles_dir(ctx)) < 0)
		goto done;
	if (next_seq < 0)
		prune(dfd, ctx->cfg.record_cycles);
	snprintf(name, sizeof(name), SATURN_CYCLE_FILE_FORMAT, (int)(next_seq % 2000000000L));
	txt = saturn_cycle_record_to_json((int)(next_seq % 2000000000L), ctx->sched_params,
					  ctx->cfg.reconfig.requeue_delay_s, in, cap, tape, out,
					  st);
	if (!txt) {
		error("sched/saturn: saturn_record_cycles: out of memory writing cycle %ld", next_seq);
	} else if (saturn_file_write_at(dfd, "STATE_DIR/cycles", name, txt, strlen(txt), owner,
					SATURN_ANY_UID, 0600, &err) < 0) {
		if (!warned++)
			error("sched/saturn: saturn_record_cycles: %s", err.text);
	} else {
		warned = 0;
		next_seq++;
		/* the one that falls out of the last N */
		if (next_seq - ctx->cfg.record_cycles - 1 >= 0) {
			snprintf(name, sizeof(name), SATURN_CYCLE_FILE_FORMAT,
				 (int)((next_seq - ctx->cfg.record_cycles - 1) % 2000000000L));
			(void)unlinkat(dfd, name, 0);
		}
	}
	free(txt);
	close(dfd);
done:
	saturn_cycle_capture_free(cap);
	saturn_plan_tape_free(tape);
}
