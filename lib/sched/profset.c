/* profset.c - the profiles a cycle plans with (saturn_profset_t,
 * sched_cycle.h): per batch (uid, name) its own profile and its per-class
 * profiles, loaded once by the caller, looked up by the cycle.
 *
 * The entries are kept sorted by (uid, batch, class), so a lookup is a
 * binary search (the build looks a profile up per task and class) and the
 * order does not depend on the order of the adds (a record lists them in
 * it).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched_cycle.h"

static int key_cmp(const saturn_profset_entry_t *e, long uid, const char *batch, const char *klass)
{
	int c;

	if (e->uid != uid)
		return e->uid < uid ? -1 : 1;
	c = strcmp(e->batch, batch);
	if (c)
		return c;
	return strcmp(e->klass, klass);
}

/* The index of the key, or -(insertion point) - 1. */
static int find_at(const saturn_profset_t *ps, long uid, const char *batch, const char *klass)
{
	int lo = 0, hi = ps->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = key_cmp(&ps->e[mid], uid, batch, klass);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -lo - 1;
}

int saturn_profset_add(saturn_profset_t *ps, long uid, const char *batch, const char *klass,
		       const saturn_profile_t *prof)
{
	saturn_profset_entry_t *e;
	int at;

	if (!batch)
		batch = "";
	if (!klass)
		klass = "";
	if (strlen(batch) > SATURN_BATCH_NAME_MAX || strlen(klass) > SATURN_CLASS_NAME_MAX) {
		errno = EINVAL;
		return -1;
	}
	at = find_at(ps, uid, batch, klass);
	if (at >= 0) {
		e = &ps->e[at];
		if (ps->owns && e->prof != prof)
			saturn_profile_destroy((saturn_profile_t *)e->prof);
		e->prof = prof;
		return 0;
	}
	at = -at - 1;
	if (ps->n == ps->cap) {
		int cap = ps->cap ? 2 * ps->cap : 16;
		saturn_profset_entry_t *ne = realloc(ps->e, (size_t)cap * sizeof(*ne));

		if (!ne)
			return -1;
		ps->e = ne;
		ps->cap = cap;
	}
	memmove(&ps->e[at + 1], &ps->e[at], (size_t)(ps->n - at) * sizeof(*ps->e));
	ps->n++;
	e = &ps->e[at];
	memset(e, 0, sizeof(*e));
	e->uid = uid;
	memcpy(e->batch, batch, strlen(batch) + 1);
	memcpy(e->klass, klass, strlen(klass) + 1);
	e->prof = prof;
	return 0;
}

const saturn_profset_entry_t *saturn_profset_find(const saturn_profset_t *ps, long uid,
						  const char *batch, const char *klass)
{
	int at;

	if (!ps || !batch)
		return NULL;
	at = find_at(ps, uid, batch, klass ? klass : "");
	return at >= 0 ? &ps->e[at] : NULL;
}

const saturn_profile_t *saturn_profset_lookup(const char *batch, long uid, void *arg)
{
	const saturn_profset_entry_t *e = saturn_profset_find(arg, uid, batch, "");

	return e ? e->prof : NULL;
}

const saturn_profile_t *saturn_profset_lookup_class(const char *batch, long uid, const char *klass,
						    void *arg)
{
	const saturn_profset_entry_t *e;

	/* "" is the batch's own profile, not a class's */
	if (!klass || !klass[0])
		return NULL;
	e = saturn_profset_find(arg, uid, batch, klass);
	return e ? e->prof : NULL;
}

void saturn_profset_free(saturn_profset_t *ps)
{
	if (!ps)
		return;
	if (ps->owns)
		for (int i = 0; i < ps->n; i++)
			saturn_profile_destroy((saturn_profile_t *)ps->e[i].prof);
	free(ps->e);
	ps->e = NULL;
	ps->n = ps->cap = 0;
}
