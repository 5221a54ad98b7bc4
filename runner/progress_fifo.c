/* progress_fifo.c - the progress protocol's reading end in saturn-run.
 *
 * The program writes protocol lines (SATURN_PROGRESS, SATURN_OOM,
 * SATURN_CHECKPOINTED; lib/sched/progress.h) to a FIFO named in
 * SATURN_PROGRESS_PIPE. This file makes that FIFO, reads it without
 * blocking, keeps what the lines say in struct run (batches done, seconds
 * per batch, peak memory, OOM, checkpoint; the trial's measurement is
 * trial.c's) and writes the progress file the controller reads
 * (SATURN_PROGRESS_FILE, saturn-progress/1).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

int run_fifo_make(struct run *r)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(r->fifo_dir, sizeof(r->fifo_dir), "%s/saturn-run.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(r->fifo_dir)) {
		fprintf(stderr, "%s: mkdtemp %s: %s\n", run_prog, r->fifo_dir,
			strerror(errno));
		return -1;
	}
	snprintf(r->fifo_path, sizeof(r->fifo_path), "%s/progress",
		 r->fifo_dir);
	if (mkfifo(r->fifo_path, 0600) < 0) {
		fprintf(stderr, "%s: mkfifo %s: %s\n", run_prog, r->fifo_path,
			strerror(errno));
		return -1;
	}
	r->fifo_rd = open(r->fifo_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	/* our own writer keeps the FIFO from reporting EOF between writers */
	r->fifo_wr = r->fifo_rd >= 0
			 ? open(r->fifo_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
			 : -1;
	if (r->fifo_rd < 0 || r->fifo_wr < 0) {
		fprintf(stderr, "%s: open %s: %s\n", run_prog, r->fifo_path,
			strerror(errno));
		return -1;
	}
	return 0;
}

void run_fifo_cleanup(struct run *r)
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

void run_progress_write(struct run *r, int force)
{
	saturn_progress_t p;
	saturn_error_t err = {{0}};
	double t = run_now();

	if (!r->progress_file || (!force && t - r->last_write < 1.0))
		return;
	r->last_write = t;
	p.job_id = r->job_id;
	p.batches_done = r->done;
	p.batches_total = r->total;
	p.sec_per_batch = r->spb;
	p.updated = run_wall();
	if (saturn_progress_write(r->progress_file, &p, &err) < 0)
		fprintf(stderr, "%s: progress: %s\n", run_prog, err.text);
}

static void handle_line(struct run *r, const char *line)
{
	saturn_proto_msg_t m;
	saturn_error_t err = {{0}};
	int k = saturn_proto_parse(line, &m, &err);
	double t = run_now();

	if (k < 0) {
		fprintf(stderr, "%s: ignoring progress line: %s\n", run_prog,
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
		if (r->trial && !r->trial_done)
			run_trial_line(r, m.batches_done, m.sec_per_batch, t);
		run_progress_write(r, 0);
	}
}

void run_fifo_drain(struct run *r)
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
