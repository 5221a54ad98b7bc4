/* saturn_profcache.c - sched/saturn's profile cache: each batch's
 * saturn-profile/1 file PROFILE_DIR/UID/NAME[@CLASS].json, read through
 * the user's folder (owner-checked, size-capped), parsed and kept per
 * (uid, name, class), re-read when it changes.
 *
 * Bounded (issue #20, problem 4; lib/sched/budget.h): a profile is kept
 * only while its batch has tasks in the snapshot (saturn_profcache_prune,
 * every cycle), and the parsed profiles fit a budget per user
 * (saturn_profile_cache_mb) and in all (saturn_profile_cache_total_mb).
 * A profile over its user's budget is refused with a log line naming the
 * batch, and that batch plans from its users' requests, as with a
 * rejected profile; when the total is full, the user holding the most
 * gives way (its profiles leave the cache at the start of the next
 * cycle, never while a cycle uses them). Agent thread only, no locks.
 */
#include "config.h" /* Slurm's */

#include <fcntl.h>
#include <malloc.h>
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
#include "jobreq.h"
#include "profile.h"
#include "safefile.h"
#include "sched_core.h"

#include "saturn_files.h"
#include "saturn_profcache.h"

/* A profile is rewritten by rename (saturn-profile --measure), so a new
 * version shows as a new inode even within the same second. */
typedef struct profile_entry {
	char batch[SATURN_NAME_LEN];
	char klass[SATURN_CLASS_NAME_MAX + 1]; /* "" = the batch's profile */
	long uid;
	time_t mtime;
	ino_t ino;
	int missing;
	saturn_profile_t *profile;
	size_t bytes; /* charged to uid while profile is loaded */
	/* this version refused by the budget: what it costs (0 = not
	 * refused so), and the verdict (saturn_budget_verdict_t) */
	size_t want;
	int over;
} profile_entry_t;

static profile_entry_t *profiles;
static int nprofiles;
static saturn_budget_t budget;

/* The caps as configured (MiB; 0 = none). */
static void budget_caps(const saturn_ctx_t *ctx)
{
	saturn_budget_set_caps(&budget, (size_t)ctx->cfg.profile_cache_mb << 20,
			       (size_t)ctx->cfg.profile_cache_total_mb << 20);
}

/* Drop e's profile and its charge (the entry stays). */
static void entry_unload(profile_entry_t *e)
{
	saturn_profile_destroy(e->profile);
	e->profile = NULL;
	saturn_budget_uncharge(&budget, e->uid, e->bytes);
	e->bytes = 0;
}

/* NAME.json, or NAME@CLASS.json for the profile measured on node class
 * CLASS (klass not NULL or ""): the file name of a batch's profile in its
 * user's folder (xmalloc'd). Batch and class names hold no '/' or '@'
 * (jobreq.h, node_class.h), so no name can come out of the folder or
 * stand for another batch's. */
static char *profile_name(const char *batch, const char *klass)
{
	if (klass && klass[0])
		return xstrdup_printf("%s@%s.json", batch, klass);
	return xstrdup_printf("%s.json", batch);
}

/* PROFILE_DIR/UID/NAME[@CLASS].json: the one place that maps a batch to
 * its profile file (saturn_profcache.h). */
char *saturn_profile_path(const saturn_ctx_t *ctx, long uid, const char *batch, const char *klass)
{
	char *n = profile_name(batch, klass), *p;

	p = xstrdup_printf("%s/%ld/%s", ctx->profile_dir, uid, n);
	xfree(n);
	return p;
}

/* saturn_profcache.h. The user's folder is made first (root controller), so
 * users find it ready. */
int saturn_profile_stat(const saturn_ctx_t *ctx, const char *batch, const char *klass, long uid,
			int *ufd, struct stat *st)
{
	char *name;
	int rc = 0;

	*ufd = uid < 0 ? -1 :
			 saturn_user_dir(ctx, ctx->profile_fd, ctx->profile_dir, uid,
					 SATURN_ANY_UID);
	if (*ufd < 0)
		return -1;
	name = profile_name(batch, klass);
	if (fstatat(*ufd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(*ufd);
		*ufd = -1;
		rc = -1;
	}
	xfree(name);
	return rc;
}

static profile_entry_t *profile_entry(const char *batch, long uid, const char *klass)
{
	for (int i = 0; i < nprofiles; i++)
		if (profiles[i].uid == uid && !strcmp(profiles[i].batch, batch) &&
		    !strcmp(profiles[i].klass, klass ? klass : ""))
			return &profiles[i];
	return NULL;
}

static const saturn_profile_t *lookup_profile(const saturn_ctx_t *ctx, const char *batch, long uid,
					      const char *klass);

const saturn_profile_t *saturn_lookup_profile(const char *batch, long uid, void *arg)
{
	return lookup_profile(arg, batch, uid, NULL);
}

const saturn_profile_t *saturn_lookup_class_profile(const char *batch, long uid, const char *klass,
						    void *arg)
{
	if (!saturn_class_name_ok(klass))
		return NULL;
	return lookup_profile(arg, batch, uid, klass);
}

/* Whether uid may keep bytes more of parsed profiles now. Refused: e
 * remembers the cost and the verdict, and the refusal is logged once per
 * version and verdict, naming the batch and the budget. */
static int budget_ok(const saturn_ctx_t *ctx, profile_entry_t *e, const char *path, size_t bytes)
{
	char why[256];
	saturn_budget_verdict_t v = saturn_budget_check(&budget, e->uid, bytes, NULL, NULL, why,
							  sizeof(why));

	if (v == SATURN_BUDGET_OK) {
		e->want = 0;
		e->over = 0;
		return 1;
	}
	if (v == SATURN_BUDGET_EVICT)
		snprintf(why, sizeof(why),
			 "the total budget of %d MiB (saturn_profile_cache_total_mb) is full: a user holding more gives way at the next cycle",
			 ctx->cfg.profile_cache_total_mb);
	if (e->want != bytes || e->over != (int)v)
		error("sched/saturn: batch %s of uid %ld: profile %s (%.1f MiB parsed) refused: %s; planning from the users' requests",
		      e->batch, e->uid, path, (double)bytes / (1 << 20), why);
	e->want = bytes;
	e->over = (int)v;
	return 0;
}

/* The profile PROFILE_DIR/UID/NAME[@CLASS].json, cached per (batch, uid,
 * class) and re-read when the file changes, within the budget. A class
 * profile that is missing is not logged (most classes have none). */
static const saturn_profile_t *lookup_profile(const saturn_ctx_t *ctx, const char *batch, long uid,
					      const char *klass)
{
	profile_entry_t *e;
	saturn_error_t err = {{0}};
	struct stat st;
	char *path, *dname, *name, *buf;
	long owners[2] = {uid, 0};
	size_t len, bytes;
	int ufd;

	/* the rule job_submit/saturn enforced: no path can come out of it */
	if (saturn_batch_name_check(batch, NULL, 0) < 0)
		return NULL;
	if (!(e = profile_entry(batch, uid, klass))) {
		xrecalloc(profiles, nprofiles + 1, sizeof(*profiles));
		e = &profiles[nprofiles++];
		memset(e, 0, sizeof(*e));
		snprintf(e->batch, sizeof(e->batch), "%s", batch);
		snprintf(e->klass, sizeof(e->klass), "%s", klass ? klass : "");
		e->uid = uid;
	}
	path = saturn_profile_path(ctx, uid, batch, klass);
	if (saturn_profile_stat(ctx, batch, klass, uid, &ufd, &st) < 0) {
		if (e->missing != 1 && !klass)
			info("sched/saturn: batch %s of uid %ld: no profile at %s: planning from the users' requests",
			     batch, uid, path);
		e->missing = 1;
		e->want = 0;
		entry_unload(e);
		xfree(path);
		return NULL;
	}
	if (e->profile && st.st_mtime == e->mtime && st.st_ino == e->ino) {
		close(ufd);
		xfree(path);
		return e->profile;
	}
	if (e->missing == 0 && e->mtime == st.st_mtime && e->ino == st.st_ino && !e->profile &&
	    (!e->want || !budget_ok(ctx, e, path, e->want))) {
		close(ufd);
		xfree(path);
		return NULL; /* already rejected this version, or still no room */
	}
	if (e->missing || e->mtime != st.st_mtime || e->ino != st.st_ino)
		e->want = 0; /* a new version: judged afresh */
	e->missing = 0;
	e->mtime = st.st_mtime;
	e->ino = st.st_ino;
	entry_unload(e);
	/* the file's size first: no read of a profile the budget refuses (a
	 * file over the size cap is refused by the read, saying so) */
	if (st.st_size <= SATURN_PROFILE_MAX_BYTES &&
	    !budget_ok(ctx, e, path, (size_t)st.st_size)) {
		close(ufd);
		xfree(path);
		return NULL;
	}
	/* read through the user's folder: a regular file of the batch's user
	 * (or root), no link, FIFO or device, size-capped */
	dname = xstrdup_printf("%s/%ld", ctx->profile_dir, uid);
	name = profile_name(batch, klass);
	buf = saturn_file_read_at(ufd, dname, name, owners, uid == 0 ? 1 : 2,
				  SATURN_PROFILE_MAX_BYTES, &len, NULL, &err);
	xfree(name);
	if (!buf) {
		error("sched/saturn: batch %s of uid %ld: profile refused: %s; planning from the users' requests",
		      batch, uid, err.text);
	} else if (!(e->profile = saturn_profile_parse(buf, len, &err))) {
		error("sched/saturn: batch %s of uid %ld: profile rejected: %s: %s; planning from the users' requests",
		      batch, uid, path, err.text);
	} else {
		/* what it holds in memory, at least what its file holds */
		bytes = saturn_profile_mem_bytes(e->profile);
		if (bytes < (size_t)st.st_size)
			bytes = (size_t)st.st_size;
		if (!budget_ok(ctx, e, path, bytes) ||
		    saturn_budget_charge(&budget, uid, bytes) < 0) {
			saturn_profile_destroy(e->profile);
			e->profile = NULL;
		} else {
			e->bytes = bytes;
			info("sched/saturn: batch %s of uid %ld: profile %s loaded (%d task signature(s), %.1f MiB; the user's profiles cached: %.1f MiB)",
			     batch, uid, path, e->profile->ntasks, (double)bytes / (1 << 20),
			     (double)saturn_uidtab_get(&budget.used, uid) / (1 << 20));
		}
	}
	free(buf);
	xfree(dname);
	close(ufd);
	xfree(path);
	return e->profile;
}

const saturn_profile_t *saturn_profile_cached(const char *batch, long uid)
{
	const profile_entry_t *e = profile_entry(batch, uid, NULL);

	return e ? e->profile : NULL;
}

const saturn_profile_t *saturn_profile_cached_class(const char *batch, long uid, const char *klass,
						  void *arg)
{
	const profile_entry_t *e;

	(void)arg;
	if (!saturn_class_name_ok(klass))
		return NULL;
	e = profile_entry(batch, uid, klass);
	return e ? e->profile : NULL;
}

const char *saturn_option_params(const saturn_snap_job_t *j, const saturn_decision_t *d)
{
	const saturn_profile_t *pr;

	if (d->prof_opt < 0)
		return "{}"; /* the user's request: no profile option */
	pr = d->source[0] ? saturn_profile_cached_class(j->batch, j->uid, d->source, NULL)
			  : saturn_profile_cached(j->batch, j->uid);
	return saturn_sched_decision_params(pr, j->task_id >= 0 ? j->task_id : 0, d);
}

/* Unload victim's profiles, largest first, until need bytes are free;
 * each stays refused (want) until the budget has room for it again. */
static void evict_user(const saturn_ctx_t *ctx, long victim, size_t need,
		       const profile_entry_t *for_e)
{
	while (need > 0) {
		profile_entry_t *big = NULL;

		for (int i = 0; i < nprofiles; i++)
			if (profiles[i].uid == victim && profiles[i].profile &&
			    (!big || profiles[i].bytes > big->bytes))
				big = &profiles[i];
		if (!big)
			return;
		info("sched/saturn: batch %s of uid %ld: profile (%.1f MiB) leaves the cache: the total budget of %d MiB (saturn_profile_cache_total_mb) is full and uid %ld holds the most; batch %s of uid %ld needs room",
		     big->batch, big->uid, (double)big->bytes / (1 << 20),
		     ctx->cfg.profile_cache_total_mb, victim, for_e->batch, for_e->uid);
		need = need > big->bytes ? need - big->bytes : 0;
		big->want = big->bytes;
		big->over = SATURN_BUDGET_TOTAL;
		entry_unload(big);
	}
}

void saturn_profcache_prune(const saturn_ctx_t *ctx, const saturn_live_t *live)
{
	size_t before = budget.total;
	int w = 0, gone = 0;

	budget_caps(ctx);
	/* batches without tasks: their profiles go */
	for (int i = 0; i < nprofiles; i++) {
		profile_entry_t *e = &profiles[i];

		if (saturn_live_has(live, e->uid, e->batch)) {
			profiles[w++] = *e;
			continue;
		}
		if (e->profile)
			debug("sched/saturn: batch %s of uid %ld: no tasks left: profile%s%s (%.1f MiB) leaves the cache",
			      e->batch, e->uid, e->klass[0] ? " of class " : "", e->klass,
			      (double)e->bytes / (1 << 20));
		entry_unload(e);
		gone++;
	}
	/* the slots left are zeroed: a new entry (xrecalloc to no larger a
	 * size zeroes nothing) must not inherit a moved entry's profile */
	if (w < nprofiles)
		memset(&profiles[w], 0, (size_t)(nprofiles - w) * sizeof(*profiles));
	nprofiles = w;
	/* the total was full for someone while a user held more: that user
	 * gives way now, before this cycle's lookups */
	for (int i = 0; i < nprofiles; i++) {
		profile_entry_t *e = &profiles[i];
		long victim = -1;
		size_t need = 0;

		if (!e->profile && e->want && e->over == SATURN_BUDGET_EVICT &&
		    saturn_budget_check(&budget, e->uid, e->want, &victim, &need, NULL, 0) ==
			    SATURN_BUDGET_EVICT) {
			evict_user(ctx, victim, need, e);
			/* loaded now, before the victim's own lookups could take
			 * the room back (the entry exists: profiles stays put) */
			lookup_profile(ctx, e->batch, e->uid, e->klass[0] ? e->klass : NULL);
		}
	}
	/* give the freed memory back to the system (a parsed profile is many
	 * small blocks: without this the process keeps them) */
	if (before > budget.total + (1 << 20))
		malloc_trim(0);
	if (gone)
		debug("sched/saturn: %d cached profile(s) of batches without tasks dropped; %.1f MiB of profiles cached in all",
		      gone, (double)budget.total / (1 << 20));
}

void saturn_profcache_fini(void)
{
	for (int i = 0; i < nprofiles; i++)
		saturn_profile_destroy(profiles[i].profile);
	xfree(profiles);
	nprofiles = 0;
	saturn_budget_free(&budget);
}
