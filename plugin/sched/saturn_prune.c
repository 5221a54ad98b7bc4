/* saturn_prune.c - what sched/saturn keeps per batch lives only as long
 * as the batch (issue #20, problems 4 and 8; doc/security.md, "Bounded
 * resources"). Every cycle, right after the snapshot, the batches (uid,
 * name) without a task in it lose their cached profiles
 * (saturn_profcache.c), their profiler and measurement records in memory
 * and on disk (STATE_DIR/KIND-UID-NAME.job) and their script copies
 * (STATE_DIR/scripts/UID-NAME.KIND.script), unless their companion job is
 * still pending or running. Every 20 intervals (1 to 5 minutes) a scan of
 * those two folders removes what no batch, record or job in memory
 * accounts for (left from before a restart), at most PRUNE_SCAN_MAX
 * files a scan. The same pass counts each user's companion jobs for
 * saturn_companion_jobs. The rules are lib/sched/budget.c's. Agent thread
 * only; no locks but the read lock saturn_profiles_prune takes.
 */
#include "config.h" /* Slurm's */

#include <dirent.h>
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

#include "budget.h"
#include "safefile.h"

#include "saturn_files.h"
#include "saturn_measure.h"
#include "saturn_profcache.h"
#include "saturn_profiles.h"
#include "saturn_prune.h"

/* Files one scan removes at most (bounded work per cycle). */
#define PRUNE_SCAN_MAX 1000

/* Whether the file (kind, uid, key) is still someone's: its batch has a
 * task, or its companion job is recorded as pending or running. */
static int accounted(const saturn_live_t *live, const char *kind, long uid, const char *key)
{
	if (saturn_live_has(live, uid, key))
		return 1;
	if (!strcmp(kind, "profiler"))
		return saturn_profiles_active(uid, key);
	return saturn_measure_active(uid, key);
}

/* Remove, in folder fd (path dir), the records (scripts 0) or script
 * copies (scripts 1) no batch or job accounts for that were not written
 * for a minute (a batch submitted since the snapshot). Returns the number
 * removed; *budget counts down. */
static int scan(int fd, const char *dir, int scripts, const saturn_live_t *live, time_t now,
		int *budget)
{
	DIR *d;
	struct dirent *de;
	int dfd, n = 0;

	if (fd < 0)
		return 0;
	/* a new open file description: its own read offset */
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (*budget > 0 && (de = readdir(d))) {
		char key[SATURN_NAME_LEN + SATURN_CLASS_NAME_MAX + 2], kind[16];
		struct stat st;
		long uid;
		int rc = scripts ? saturn_budget_script_name(de->d_name, &uid, key, sizeof(key),
							      kind, sizeof(kind))
				 : saturn_budget_record_name(de->d_name, &uid, key, sizeof(key),
							      kind, sizeof(kind));

		if (rc < 0 || accounted(live, kind, uid, key))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode) ||
		    st.st_mtime > now - 60)
			continue;
		(*budget)--;
		n += saturn_remove_at(fd, dir, de->d_name);
	}
	closedir(d);
	return n;
}

void saturn_prune_pass(saturn_ctx_t *ctx, const saturn_snapshot_t *s)
{
	static time_t last;
	time_t now = time(NULL);
	double period = 20 * ctx->cfg.interval_s;
	saturn_live_t live;
	int budget = PRUNE_SCAN_MAX, n;
	char *sdir;

	if (saturn_live_from_snapshot(s, &live) < 0) {
		error("sched/saturn: out of memory listing the batches: nothing pruned this cycle");
		return;
	}
	saturn_uidtab_clear(&ctx->companions);
	saturn_profcache_prune(ctx, &live);
	saturn_profiles_prune(ctx, &live, &ctx->companions);
	saturn_measure_prune(ctx, &live, &ctx->companions);
	if (period < 60)
		period = 60;
	if (period > 300)
		period = 300;
	if (now - last >= period) {
		last = now;
		sdir = xstrdup_printf("%s/scripts", ctx->state_dir);
		n = scan(ctx->state_fd, ctx->state_dir, 0, &live, now, &budget);
		n += scan(ctx->scripts_fd, sdir, 1, &live, now, &budget);
		if (n)
			info("sched/saturn: removed %d record(s) and script copies of batches without tasks or jobs",
			     n);
		xfree(sdir);
	}
	saturn_live_free(&live);
}

void saturn_prune_fini(saturn_ctx_t *ctx)
{
	saturn_uidtab_free(&ctx->companions);
}
