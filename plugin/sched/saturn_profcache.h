/* saturn_profcache.h - profile files and their cache (saturn_profcache.c;
 * agent thread, no locks).
 */
#ifndef SCHED_SATURN_PROFCACHE_H
#define SCHED_SATURN_PROFCACHE_H

#include <sys/stat.h>

#include "budget.h"
#include "profile.h"
#include "sched_core.h"

#include "saturn_ctx.h"

/* A batch is (uid, name) in all of these: two users' batches of the same
 * name have their own profile. */

/* PROFILE_DIR/UID/NAME[@CLASS].json (klass NULL or "": NAME.json), where
 * the batch (uid, name) keeps its profile (xmalloc'd). */
char *saturn_profile_path(const saturn_ctx_t *ctx, long uid, const char *batch, const char *klass);

/* The status of that file without following a link: 0 (st filled, *ufd
 * the user's folder, caller closes), -1 when absent or the user's folder
 * is missing or refused (logged by saturn_user_dir). */
int saturn_profile_stat(const saturn_ctx_t *ctx, const char *batch, const char *klass, long uid,
			int *ufd, struct stat *st);

/* The profile of batch (uid, name) from PROFILE_DIR/UID/NAME.json (read
 * through the user's folder descriptor: no link, FIFO or device), loaded
 * when the file changed, owner-checked against uid (or root); NULL when
 * there is none or it was rejected (logged once per version). Never a
 * profile loaded for another uid. Owned by the cache. arg: the
 * const saturn_ctx_t * (the signature of lib/sched's lookup callbacks). */
const saturn_profile_t *saturn_lookup_profile(const char *batch, long uid, void *arg);

/* The profile of batch (uid, name) measured on node class klass,
 * PROFILE_DIR/UID/NAME@CLASS.json, read and cached as
 * saturn_lookup_profile() does (a missing one is not logged), or NULL.
 * For saturn_snapshot_t.class_profile; arg: the const saturn_ctx_t *. */
const saturn_profile_t *saturn_lookup_class_profile(const char *batch, long uid, const char *klass,
						    void *arg);

/* The profile of batch (uid, name) as last loaded by
 * saturn_lookup_profile() (no file access), or NULL. */
const saturn_profile_t *saturn_profile_cached(const char *batch, long uid);
/* The profile of batch (batch, uid) measured on node class klass as last
 * loaded (saturn_lookup_class_profile), or NULL; no file access, so
 * pointers into it stay valid until the next lookup reloads it. The
 * signature of saturn_snapshot_t.class_profile (arg unused). */
const saturn_profile_t *saturn_profile_cached_class(const char *batch, long uid, const char *klass,
						    void *arg);

/* The params JSON text of the profile option d chose for task j ("{}" when
 * unknown), from the profile of j's batch (j->uid, j->batch). Valid until
 * the next saturn_lookup_profile(). */
const char *saturn_option_params(const saturn_snap_job_t *j, const saturn_decision_t *d);

/* Every cycle, before any lookup: drop the cached profiles of batches
 * without tasks in live, apply the budget settings, and unload the
 * profiles of the user holding the most when the total budget kept
 * another user's profile out (lib/sched/budget.h). */
void saturn_profcache_prune(const saturn_ctx_t *ctx, const saturn_live_t *live);
/* Free every cached profile and the budget (agent thread ending). */
void saturn_profcache_fini(void);

#endif /* SCHED_SATURN_PROFCACHE_H */
