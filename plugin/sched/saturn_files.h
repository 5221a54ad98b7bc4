/* saturn_files.h - sched/saturn's folders and progress files
 * (saturn_files.c; agent thread, no locks unless said).
 */
#ifndef SCHED_SATURN_FILES_H
#define SCHED_SATURN_FILES_H

#include <stdint.h>

#include "progress.h"
#include "sched_core.h"

#include "saturn_ctx.h"

/* (Re)open ctx's folders after its settings and folder paths were
 * (re)read: the state folder must belong to us or root and be writable by
 * its owner alone; its sub-folders are made and their modes set through
 * descriptors (ctx->*_fd, ctx->user_dirs). Clears ctx->cfg.profiler
 * (logged) when companion jobs cannot be run safely: not root, or a
 * folder refused. Every problem is logged. */
void saturn_files_open(saturn_ctx_t *ctx);
/* Close ctx's folder descriptors (-1 afterwards) and forget the views
 * written and the progress folders made. */
void saturn_files_close(saturn_ctx_t *ctx);

/* Remove name in folder fd (path dir) with unlinkat (a link is removed,
 * never followed); a missing one is no error, a failure is logged. 1 when
 * removed, else 0. */
int saturn_remove_at(int fd, const char *dir, const char *name);

/* PARENT/UID (0700, owned by uid; gid -1 = unchanged), made and handed to
 * uid when we are root (ctx->user_dirs), else only opened. Its descriptor
 * (caller closes), or -1 (logged at most every 10 minutes per folder and
 * uid, and not when it merely does not exist). */
int saturn_user_dir(const saturn_ctx_t *ctx, int parent_fd, const char *parent, long uid, long gid);

/* Before taking the write locks: make STATE_DIR/progress/UID for a task
 * about to be released. */
void saturn_progress_prepare(const saturn_ctx_t *ctx, long uid);

/* Under the write lock (no file access): the SATURN_PROGRESS_FILE of job_id
 * (xmalloc'd), or NULL when uid's progress folder is not ready. */
char *saturn_progress_path(const saturn_ctx_t *ctx, long uid, uint32_t job_id);

/* No locks: set batches_left (and batches_done, the job's own
 * sec_per_batch, when it was written) of s's running jobs from their
 * progress files, read through each user's folder descriptor (regular
 * file owned by the user, size-capped; refusals logged at most every 10
 * minutes per job). */
void saturn_read_progress(const saturn_ctx_t *ctx, saturn_snapshot_t *s);

/* Every 20 intervals (1 to 5 minutes), in each STATE_DIR/progress/UID:
 * remove the progress files of jobs not in s and every other file (not a
 * folder) that were not written for a minute, and at once any file over
 * SATURN_PROGRESS_MAX_BYTES (unlinkat only). */
void saturn_progress_sweep(const saturn_ctx_t *ctx, const saturn_snapshot_t *s);

#endif /* SCHED_SATURN_FILES_H */
