/* cache.h - saturn-profile's profile cache (saturn-profile(1), "profile
 * cache" in doc/formats.md): results of earlier runs reused for identical
 * signatures on identical node classes.
 *
 * One entry file per (node-class fingerprint, signature) in the cache
 * folder, named by an FNV-1a 64-bit hash of both; each entry is a
 * saturn-profile/1 document with one hardware entry and one task. Entries
 * are read like any file a user job wrote (no symlinks, owned by the
 * invoking user, size-limited) and anything wrong with one is a one-line
 * note, never an error: the run goes on without it.
 */
#ifndef SATURN_PROFILER_CACHE_H
#define SATURN_PROFILER_CACHE_H

#include <limits.h>

#include "probe.h"

struct pcache {
	char dir[PATH_MAX]; /* "" = no cache */
	int dfd;	    /* the folder, opened and checked (when dir[0]) */
	double max_age;	    /* seconds */
	char *fingerprint;  /* class, GPU model, interconnect, GPUs per node */
	const saturn_profile_hw_t *hw;
	int quiet;
};

/* Prepare the cache for the node described by hw (kept by reference):
 * --cache DIR, else $XDG_CACHE_HOME/saturn/profiles, else
 * $HOME/.cache/saturn/profiles; none with --no-cache. Creates missing
 * folders (mode 0700) and refuses (a warning on stderr, c->dir left "") a
 * folder that is a symlink, is not owned by the invoking user or is
 * writable by others. The folder itself is opened once, with O_NOFOLLOW,
 * and entries are read and written through that descriptor only
 * (lib/model/safefile.h). Never fails. */
void pcache_open(struct pcache *c, const struct opts *o,
		 const saturn_profile_hw_t *hw);

/* Free what pcache_open allocated; NULL is allowed. */
void pcache_close(struct pcache *c);

/* The entry for signature, or NULL: absent (silent), or unreadable,
 * another signature or node class (a hash collision), older than max-age
 * (a one-line note on stderr each). The caller destroys the result; its
 * tasks[0] is the signature's. */
saturn_profile_t *pcache_get(const struct pcache *c, const char *signature);

/* Write (atomically) the entry for pt->signature: c's hardware entry, pt
 * with its options, batch as the writer's name, created as given. 0, or -1
 * with a warning on stderr. Nothing is done without a cache. */
int pcache_put(const struct pcache *c, const char *batch,
	       const saturn_profile_task_t *pt, double created);

/* 1 when the entry's options of technique cover every GPU count lo..hi
 * with a reusable result (measured, predicted or oom; failed and timeout
 * are tried again). */
int pcache_covers(const saturn_profile_task_t *entry, const char *technique,
		  int lo, int hi);

#endif /* SATURN_PROFILER_CACHE_H */
