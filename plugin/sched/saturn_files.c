/* saturn_files.c - sched/saturn's folders and the files users write
 * (doc/security.md, "Files and folders"; lib/model/safefile.h does the checks).
 *
 *   STATE_DIR/                0755 ours: state.json (0600), KIND-NAME.job records
 *   STATE_DIR/progress/UID/   0700 UID:  JOBID.json progress files
 *   STATE_DIR/jobs/UID/       0700 UID:  work folder, output of companion jobs
 *   STATE_DIR/scripts/        0711 ours: copies of batch scripts, 0600 UID
 *   STATE_DIR/users/          0711 ours: UID.json views 0400 UID, all.json 0644
 *   PROFILE_DIR/              0755 ours (default STATE_DIR/profiles)
 *   PROFILE_DIR/UID/          0700 UID:  NAME.json profiles, cache/
 *
 * No folder a user can write lies on the way to another user's folder, so
 * nobody can plant or squat a name the controller later uses for someone
 * else; inside their own folder a user can plant anything, and every read
 * there goes through a descriptor with O_NOFOLLOW and an owner check. Per-
 * user folders are made and handed over (fchown on the descriptor) by the
 * controller, which therefore has to run as root; otherwise the profiler,
 * measurements and progress files are off. Agent thread only, no locks.
 */
#include "config.h" /* Slurm's */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "progress.h"
#include "safefile.h"

#include "saturn_files.h"

/* uids whose progress folder was made this cycle (saturn_progress_prepare) */
static long *ready_uids;
static int nready;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void saturn_files_close(saturn_ctx_t *ctx)
{
	close_fd(&ctx->state_fd);
	close_fd(&ctx->profile_fd);
	close_fd(&ctx->progress_fd);
	close_fd(&ctx->jobs_fd);
	close_fd(&ctx->scripts_fd);
	close_fd(&ctx->users_fd);
	xfree(ready_uids);
	nready = 0;
}

/* An admin-configured folder: made 0755 when missing, then checked. */
static int open_admin_dir(const char *path)
{
	saturn_error_t err = {{0}};
	int fd;

	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		error("sched/saturn: mkdir %s: %m", path);
	fd = saturn_dir_open_trusted(path, &err);
	if (fd < 0)
		error("sched/saturn: %s (it must belong to the controller's user or root and be writable by it alone)",
		      err.text);
	return fd;
}

/* A folder of ours under STATE_DIR, with exactly mode. */
static int own_sub(const saturn_ctx_t *ctx, const char *name, mode_t mode)
{
	saturn_error_t err = {{0}};
	int fd;

	if (ctx->state_fd < 0)
		return -1;
	fd = saturn_dir_ensure_at(ctx->state_fd, ctx->state_dir, name, SATURN_ANY_UID,
				  SATURN_ANY_UID, mode, &err);
	if (fd < 0)
		error("sched/saturn: %s", err.text);
	return fd;
}

void saturn_files_open(saturn_ctx_t *ctx)
{
	saturn_files_close(ctx);
	ctx->user_dirs = geteuid() == 0;
	ctx->state_fd = open_admin_dir(ctx->state_dir);
	if (ctx->state_fd < 0)
		error("sched/saturn: state folder %s refused: no plan state, profiles, profiler or progress files (batches plan from the users' requests)",
		      ctx->state_dir);
	if (ctx->cfg.profile_dir)
		ctx->profile_fd = open_admin_dir(ctx->profile_dir);
	else
		ctx->profile_fd = own_sub(ctx, "profiles", 0755);
	ctx->progress_fd = own_sub(ctx, "progress", 0755);
	ctx->jobs_fd = own_sub(ctx, "jobs", 0755);
	ctx->scripts_fd = own_sub(ctx, "scripts", 0711);
	/* listable by nobody but us: a user opens only its own UID.json */
	ctx->users_fd = own_sub(ctx, "users", 0711);
	if (!ctx->user_dirs) {
		error("sched/saturn: slurmctld runs as uid %ld, not root: the per-user folders (PROFILE_DIR/UID, STATE_DIR/progress/UID, STATE_DIR/jobs/UID) need a root controller to hand them to their users, so the profiler, measurement jobs and progress files are disabled (batches plan from the users' requests and profiles an administrator placed)",
		      (long)geteuid());
	}
	if (!ctx->user_dirs || ctx->scripts_fd < 0 || ctx->jobs_fd < 0 || ctx->profile_fd < 0) {
		if (ctx->cfg.profiler)
			error("sched/saturn: saturn_profiler=%s ignored: see the error above",
			      ctx->cfg.profiler);
		xfree(ctx->cfg.profiler);
	}
}

/* Remove name in folder fd (path dir) with unlinkat (a link is removed,
 * never followed); a missing one is no error. 1 when removed. */
int saturn_remove_at(int fd, const char *dir, const char *name)
{
	saturn_error_t err = {{0}};
	int rc;

	if (fd < 0)
		return 0;
	rc = saturn_file_remove_at(fd, dir, name, &err);
	if (rc < 0)
		error("sched/saturn: %s", err.text);
	return rc > 0;
}

/* A refusal seen every cycle (a per-user folder, keyed by (parent folder,
 * uid); a job's progress file, keyed by (-1, job id)) is logged at most every
 * 10 minutes per key; the last 64 keys are remembered. */
static int log_due(long kind, long id)
{
	static struct {
		long kind, id;
		time_t at;
	} seen[64];
	static int next;
	time_t now = time(NULL);

	for (int i = 0; i < 64; i++) {
		if (seen[i].at && seen[i].kind == kind && seen[i].id == id) {
			if (now - seen[i].at < 600)
				return 0;
			seen[i].at = now;
			return 1;
		}
	}
	seen[next].kind = kind;
	seen[next].id = id;
	seen[next].at = now;
	next = (next + 1) % 64;
	return 1;
}

int saturn_user_dir(const saturn_ctx_t *ctx, int parent_fd, const char *parent, long uid, long gid)
{
	saturn_error_t err = {{0}};
	char name[32];
	int fd;

	if (parent_fd < 0 || uid < 0)
		return -1;
	snprintf(name, sizeof(name), "%ld", uid);
	if (ctx->user_dirs)
		fd = saturn_dir_ensure_at(parent_fd, parent, name, uid, gid, 0700, &err);
	else
		fd = saturn_dir_open_at(parent_fd, parent, name, uid, &err);
	if (fd < 0 && (ctx->user_dirs || errno != ENOENT) && log_due(parent_fd, uid))
		error("sched/saturn: per-user folder of uid %ld: %s", uid, err.text);
	return fd;
}

/* --- progress files ------------------------------------------------------ */

void saturn_progress_prepare(const saturn_ctx_t *ctx, long uid)
{
	int fd;

	/* made again each time (a few system calls): an administrator may
	 * have removed it since */
	if (!ctx->user_dirs)
		return;
	fd = saturn_user_dir(ctx, ctx->progress_fd, ctx->progress_dir, uid, SATURN_ANY_UID);
	if (fd < 0)
		return;
	close(fd);
	for (int i = 0; i < nready; i++)
		if (ready_uids[i] == uid)
			return;
	xrecalloc(ready_uids, nready + 1, sizeof(*ready_uids));
	ready_uids[nready++] = uid;
}

char *saturn_progress_path(const saturn_ctx_t *ctx, long uid, uint32_t job_id)
{
	for (int i = 0; i < nready; i++)
		if (ready_uids[i] == uid)
			return xstrdup_printf("%s/%ld/%u.json", ctx->progress_dir, uid, job_id);
	return NULL;
}

static void log_refused(uint32_t job_id, const char *text)
{
	if (log_due(-1, job_id))
		error("sched/saturn: JobId=%u: progress file refused: %s", job_id, text);
}

/* What job_id's progress file says (remaining and done batches, the job's
 * own sec_per_batch, when it was written: saturn_progress_summary()), read
 * through uid's folder descriptor (regular file owned by uid, size-capped;
 * refusals logged at most every 10 minutes per job). 0, or -1 when there
 * is no usable file. */
static int progress_observed(const saturn_ctx_t *ctx, uint32_t job_id, long uid,
			     saturn_progress_obs_t *o)
{
	saturn_error_t err = {{0}};
	saturn_progress_t p;
	char udir[32], name[32], *dname, *buf;
	size_t len;
	int ufd, rc = -1;

	if (ctx->progress_fd < 0 || uid < 0)
		return -1;
	snprintf(udir, sizeof(udir), "%ld", uid);
	ufd = saturn_dir_open_at(ctx->progress_fd, ctx->progress_dir, udir, uid, &err);
	if (ufd < 0) {
		if (errno != ENOENT)
			log_refused(job_id, err.text);
		return -1;
	}
	dname = xstrdup_printf("%s/%s", ctx->progress_dir, udir);
	snprintf(name, sizeof(name), "%u.json", job_id);
	buf = saturn_file_read_at(ufd, dname, name, &uid, 1, SATURN_PROGRESS_MAX_BYTES, &len, NULL,
				  &err);
	if (!buf) {
		if (errno != ENOENT)
			log_refused(job_id, err.text);
	} else if (saturn_progress_parse(buf, len, &p, &err) < 0) {
		debug("sched/saturn: JobId=%u: progress file %s/%s ignored: %s", job_id, dname, name,
		      err.text);
	} else {
		saturn_progress_summary(&p, o);
		rc = 0;
	}
	free(buf);
	xfree(dname);
	close(ufd);
	return rc;
}

static int in_snapshot(const saturn_snapshot_t *s, unsigned long id)
{
	for (int i = 0; i < s->njobs; i++)
		if (s->jobs[i].job_id == id)
			return 1;
	return 0;
}

/* Remove from one user's folder, with unlinkat only (nothing there is
 * opened or followed): NUMBER.json files whose job is not in s, anything
 * else that is not a folder (the folder is for progress files only:
 * saturn-run's temporary files are renamed within seconds), each once it
 * was not touched for a minute (a job that started after the snapshot);
 * and at once any file over SATURN_PROGRESS_MAX_BYTES, which would be
 * refused anyway (issue #20, problem 8: a user stored 64 MiB there).
 * *big counts the bytes of the files removed. */
static int sweep_user(const saturn_snapshot_t *s, int ufd, const char *dname, time_t now,
		      long long *big)
{
	DIR *d;
	struct dirent *de;
	int dfd = openat(ufd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		saturn_error_t err = {{0}};
		struct stat st;
		char *end;
		unsigned long id = strtoul(de->d_name, &end, 10);

		int progress = end != de->d_name && !strcmp(end, ".json");

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(ufd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
			continue;
		if (st.st_size <= SATURN_PROGRESS_MAX_BYTES &&
		    ((progress && in_snapshot(s, id)) || st.st_mtime > now - 60))
			continue;
		if (saturn_file_remove_at(ufd, dname, de->d_name, &err) < 0) {
			error("sched/saturn: %s", err.text);
			continue;
		}
		n++;
		if (st.st_size > SATURN_PROGRESS_MAX_BYTES || !progress) {
			*big += (long long)st.st_size;
			info("sched/saturn: progress sweep: removed %s/%s (%lld bytes, uid %ld): %s",
			     dname, de->d_name, (long long)st.st_size, (long)st.st_uid,
			     !progress ? "not a progress file" : "over the progress file size cap");
		}
	}
	closedir(d);
	return n;
}

void saturn_progress_sweep(const saturn_ctx_t *ctx, const saturn_snapshot_t *s)
{
	static time_t last;
	time_t now = time(NULL);
	DIR *d;
	struct dirent *de;
	long long big = 0;
	int dfd, n = 0;

	/* every 20 planning intervals, at least a minute and at most 5 */
	double period = 20 * ctx->cfg.interval_s;

	if (period < 60)
		period = 60;
	if (period > 300)
		period = 300;
	if (ctx->progress_fd < 0 || now - last < period)
		return;
	last = now;
	/* a new open file description: a dup() would share the read offset,
	 * left at the end by the previous sweep */
	dfd = openat(ctx->progress_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		saturn_error_t err = {{0}};
		char *end, *dname;
		long uid = strtol(de->d_name, &end, 10);
		int ufd;

		if (end == de->d_name || *end || uid < 0)
			continue;
		ufd =
		    saturn_dir_open_at(ctx->progress_fd, ctx->progress_dir, de->d_name, uid, &err);
		if (ufd < 0) {
			error("sched/saturn: progress sweep: %s", err.text);
			continue;
		}
		dname = xstrdup_printf("%s/%s", ctx->progress_dir, de->d_name);
		n += sweep_user(s, ufd, dname, now, &big);
		xfree(dname);
		close(ufd);
	}
	closedir(d);
	if (n)
		debug("sched/saturn: removed %d progress file(s) of jobs that ended or too large (%lld bytes of other or oversized files)",
		      n, big);
}

void saturn_read_progress(const saturn_ctx_t *ctx, saturn_snapshot_t *s)
{
	for (int i = 0; i < s->njobs; i++) {
		saturn_snap_job_t *j = &s->jobs[i];
		saturn_progress_obs_t o;

		/* STATE_DIR/progress/UID/JOBID.json, through the folder's fd */
		if (j->state == SATURN_SNAP_RUNNING &&
		    progress_observed(ctx, j->job_id, j->uid, &o) == 0) {
			j->batches_left = o.batches_left;
			j->batches_done = o.batches_done;
			j->progress_spb = o.sec_per_batch;
			j->progress_updated = o.updated;
		}
	}
}
