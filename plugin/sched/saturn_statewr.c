/* saturn_statewr.c - the state writer (saturn_statewr.h).
 *
 * state.json is 2.7 MB at 10,000 tasks; written with fsync and rename
 * (saturn_file_write_at) on a loaded controller host it took up to 22 s
 * in the agent thread and made cycles late (doc/benchmarks-site.md). The
 * agent now only serialises and hands the text over; this thread writes
 * it. At most one state waits: a newer one replaces it unwritten, since
 * state.json is a snapshot and only the last one counts (it is read at
 * the next start and by `saturn status`). Two locks: wr_mutex guards the
 * waiting text and the flags (held for pointer swaps only); io_mutex is
 * held while writing and while the destination changes, so a
 * reconfigure's new folders never meet a write under way.
 */
#include "config.h" /* Slurm's */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "safefile.h"

#include "saturn_statewr.h"
#include "saturn_views.h"

static pthread_mutex_t wr_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wr_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t io_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_t wr_thread;
static int running, stopping;
static char *waiting;       /* the newest state not yet written (malloc'd) */
static unsigned superseded; /* states dropped unwritten since the last write */

/* the destination (under io_mutex) */
static char *dest_dir;
static int dest_fd = -1, dest_users_fd = -1, dest_user_dirs;
static long dest_owner = SATURN_ANY_UID;

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void close_dest(void)
{
	if (dest_fd >= 0)
		close(dest_fd);
	if (dest_users_fd >= 0)
		close(dest_users_fd);
	dest_fd = dest_users_fd = -1;
	xfree(dest_dir);
}

/* Write txt as state.json, then the views; under io_mutex. */
static void write_state(const char *txt, unsigned dropped)
{
	saturn_error_t err = {{0}};
	saturn_views_dest_t views = {dest_dir, dest_users_fd, dest_user_dirs};
	size_t len = strlen(txt);
	double t0 = mono_ms();
	static int warned;

	if (dest_fd < 0)
		saturn_error_set(&err, "%s/state.json: the state folder was refused (logged at start)",
				 dest_dir ? dest_dir : "?");
	if (dest_fd < 0 || saturn_file_write_at(dest_fd, dest_dir, "state.json", txt, len,
						dest_owner, SATURN_ANY_UID, 0600, &err) < 0) {
		if (!warned++)
			error("sched/saturn: cannot persist the plan: %s", err.text);
		return;
	}
	warned = 0;
	/* what users may read of it (PrivateData) */
	saturn_views_write(&views, txt);
	debug("sched/saturn: state.json: %zu bytes written in %.3f ms with the users' views, %u older state(s) replaced unwritten",
	      len, mono_ms() - t0, dropped);
}

static void *writer(void *arg)
{
	slurm_mutex_lock(&wr_mutex);
	for (;;) {
		char *txt;
		unsigned dropped;

		while (!waiting && !stopping)
			pthread_cond_wait(&wr_cond, &wr_mutex);
		if (!waiting)
			break; /* stopping, nothing left */
		txt = waiting;
		dropped = superseded;
		waiting = NULL;
		superseded = 0;
		slurm_mutex_unlock(&wr_mutex);
		slurm_mutex_lock(&io_mutex);
		write_state(txt, dropped);
		slurm_mutex_unlock(&io_mutex);
		free(txt);
		slurm_mutex_lock(&wr_mutex);
	}
	slurm_mutex_unlock(&wr_mutex);
	return arg;
}

void saturn_statewr_start(void)
{
	slurm_mutex_lock(&wr_mutex);
	stopping = 0;
	if (!running) {
		if (pthread_create(&wr_thread, NULL, writer, NULL))
			error("sched/saturn: cannot start the state writer thread: %m; state.json is written in the agent's");
		else
			running = 1;
	}
	slurm_mutex_unlock(&wr_mutex);
}

void saturn_statewr_target(const saturn_ctx_t *ctx, long owner)
{
	slurm_mutex_lock(&io_mutex);
	close_dest();
	dest_dir = xstrdup(ctx->state_dir);
	dest_fd = ctx->state_fd >= 0 ? dup(ctx->state_fd) : -1;
	dest_users_fd = ctx->users_fd >= 0 ? dup(ctx->users_fd) : -1;
	if ((ctx->state_fd >= 0 && dest_fd < 0) || (ctx->users_fd >= 0 && dest_users_fd < 0))
		error("sched/saturn: state writer: cannot duplicate the folders' descriptors: %m");
	dest_user_dirs = ctx->user_dirs;
	dest_owner = owner;
	saturn_views_reset();
	slurm_mutex_unlock(&io_mutex);
}

void saturn_statewr_put(char *txt)
{
	if (!txt)
		return;
	slurm_mutex_lock(&wr_mutex);
	if (!running) {
		slurm_mutex_unlock(&wr_mutex);
		slurm_mutex_lock(&io_mutex);
		write_state(txt, 0);
		slurm_mutex_unlock(&io_mutex);
		free(txt);
		return;
	}
	if (waiting) {
		free(waiting);
		superseded++;
	}
	waiting = txt;
	slurm_cond_signal(&wr_cond);
	slurm_mutex_unlock(&wr_mutex);
}

void saturn_statewr_stop(void)
{
	slurm_mutex_lock(&wr_mutex);
	stopping = 1;
	slurm_cond_broadcast(&wr_cond);
	slurm_mutex_unlock(&wr_mutex);
	if (running) {
		pthread_join(wr_thread, NULL);
		running = 0;
	}
	slurm_mutex_lock(&io_mutex);
	close_dest();
	saturn_views_reset();
	slurm_mutex_unlock(&io_mutex);
}
