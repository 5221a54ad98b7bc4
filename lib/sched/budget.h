/* budget.h - bounded resources for sched/saturn (issue #20, problems 4
 * and 8; doc/security.md, "Bounded resources"): what the controller keeps
 * per batch (uid, name) lives only as long as the batch has tasks, the
 * profiles it keeps in memory fit a budget per user and in all, and one
 * user has at most a few companion jobs (profiler, measurement) at once.
 * Pure rules, no Slurm, no files, no clock: the plugin
 * (plugin/sched/saturn_profcache.c, saturn_prune.c) carries them out.
 * Never prints or exits. Unit-tested in tests/sched/test_budget.c.
 */
#ifndef SATURN_BUDGET_H
#define SATURN_BUDGET_H

#include <stddef.h>

#include "batch_policy.h"
#include "profile.h"
#include "sched_core.h"

/* --- per-uid counters ------------------------------------------------- */

/* A small table uid -> amount (bytes of cached profiles, companion jobs),
 * kept sorted by uid. Zero it before the first use. */
typedef struct saturn_uidtab {
	int n, cap;
	struct saturn_uid_amount {
		long uid;
		size_t amount;
	} *e;
} saturn_uidtab_t;

/* uid's amount (0 when not in the table). */
size_t saturn_uidtab_get(const saturn_uidtab_t *t, long uid);
/* Add delta (may be negative; the amount never goes below 0) to uid's
 * amount. 0, or -1 (ENOMEM: unchanged). */
int saturn_uidtab_add(saturn_uidtab_t *t, long uid, long long delta);
/* Every amount back to nothing (the table stays allocated). */
void saturn_uidtab_clear(saturn_uidtab_t *t);
/* Free the entries; t is zeroed. NULL allowed. */
void saturn_uidtab_free(saturn_uidtab_t *t);

/* --- profile cache budget --------------------------------------------- */

/* Defaults of saturn_profile_cache_mb (per user) and
 * saturn_profile_cache_total_mb (all users): four of the largest profiles
 * a user may write (SATURN_PROFILE_MAX_BYTES, 16 MiB) per user. */
#define SATURN_BUDGET_USER_MB 64
#define SATURN_BUDGET_TOTAL_MB 1024

typedef struct saturn_budget {
	size_t user_cap, total_cap; /* bytes; 0 = no cap */
	size_t total;               /* bytes charged, all users */
	saturn_uidtab_t used;       /* bytes charged per uid */
} saturn_budget_t;

/* What saturn_budget_check() says about charging more bytes to a user. */
typedef enum saturn_budget_verdict {
	SATURN_BUDGET_OK = 0,  /* fits both caps: charge it */
	SATURN_BUDGET_USER,    /* over the user's cap: refused */
	SATURN_BUDGET_TOTAL,   /* over the total cap, and no other user holds
				* more than this one would: refused */
	SATURN_BUDGET_EVICT,   /* over the total cap, but *victim holds more than
				* this user would after it: evict at least *need
				* bytes of the victim's, then check again */
} saturn_budget_verdict_t;

/* Caps in bytes (0 = none); the charges start at nothing. */
void saturn_budget_init(saturn_budget_t *b, size_t user_cap, size_t total_cap);
/* Change the caps (reconfigure); charges kept (what is over a new cap
 * stays until its batches end or are evicted). */
void saturn_budget_set_caps(saturn_budget_t *b, size_t user_cap, size_t total_cap);
/* Free the per-uid charges; the total back to 0. NULL allowed. */
void saturn_budget_free(saturn_budget_t *b);

/* Whether uid may be charged bytes more (nothing changes). The heaviest
 * user pays for the total cap: a user is refused only when it alone is
 * over its own cap, or when no other user holds more than it would
 * (max-min fair: the victim keeps at least as much as uid gets). why
 * (len > 0) gets a one-line reason for USER and TOTAL ("N MiB of this
 * user's profiles cached + M MiB > the per-user budget of C MiB
 * (saturn_profile_cache_mb)"), "" otherwise. victim and need (may be NULL)
 * are set for EVICT. */
saturn_budget_verdict_t saturn_budget_check(const saturn_budget_t *b, long uid, size_t bytes,
					    long *victim, size_t *need, char *why, size_t len);
/* Charge / give back bytes of uid. charge: 0, or -1 (ENOMEM: unchanged). */
int saturn_budget_charge(saturn_budget_t *b, long uid, size_t bytes);
void saturn_budget_uncharge(saturn_budget_t *b, long uid, size_t bytes);

/* What a parsed profile costs in the controller's memory, in bytes: the
 * structures and strings it owns, with malloc's per-block overhead
 * (an estimate from above, never 0 for a profile). NULL gives 0. */
size_t saturn_profile_mem_bytes(const saturn_profile_t *pr);

/* --- batches with tasks ----------------------------------------------- */

/* The batches (uid, name) that have a task in a snapshot (held, released
 * or running), sorted for lookups. Names point into the snapshot: valid
 * while it is unchanged. */
typedef struct saturn_live {
	int n;
	struct saturn_live_batch {
		long uid;
		const char *batch;
	} *b;
} saturn_live_t;

/* Fill l from s (every job of s counts). 0, or -1 (ENOMEM: l empty). */
int saturn_live_from_snapshot(const saturn_snapshot_t *s, saturn_live_t *l);
/* Whether batch (uid, name) has a task: 1 or 0. key may be "NAME" or
 * "NAME@CLASS" (a class profile's or job's key: its batch is NAME). */
int saturn_live_has(const saturn_live_t *l, long uid, const char *key);
/* Free the list; l is zeroed. NULL allowed. */
void saturn_live_free(saturn_live_t *l);

/* --- companion jobs per user ------------------------------------------ */

/* Default of saturn_companion_jobs: profiler and measurement jobs one
 * user may have pending or running at once. */
#define SATURN_COMPANION_JOBS 2

/* A SUBMIT_PROFILER or SUBMIT_MEASURE out->a[i] of a user who already has
 * active companion jobs (limit or more) becomes a wait: the action turns
 * into HOLD of its tasks with the reason "saturn: waiting: N profiler or
 * measurement job(s) of this user already (saturn_companion_jobs=L)" (a
 * profiler's tasks are then also DROPped, as while profiling) and a debug log
 * line is appended, all with the action's tag. Returns 1 when it became a
 * wait, 0 when the user may submit (active < limit, or limit 0 = no
 * limit; nothing changes), -1 (ENOMEM, or out->a[i] not a submission:
 * nothing changes). */
int saturn_budget_companion_wait(saturn_bpol_actions_t *out, int i, int active, int limit);

/* --- names of the files the controller keeps per batch ---------------- */

/* Parse a record name "KIND-UID-KEY.job" (KIND profiler or measure; KEY a
 * batch name, "@CLASS" allowed) or a script copy name
 * "UID-KEY.KIND.script" (KIND profile or measure). 0 with *uid, key
 * (NAME[@CLASS], shorter than klen) and kind ("profiler" or "measure",
 * klen2 >= 16: the companion job's kind, the same for both names) filled,
 * or -1 (EINVAL: not such a name). */
int saturn_budget_record_name(const char *name, long *uid, char *key, size_t klen, char *kind,
			      size_t klen2);
int saturn_budget_script_name(const char *name, long *uid, char *key, size_t klen, char *kind,
			      size_t klen2);

#endif /* SATURN_BUDGET_H */
