/* profset.c - the profiles a cycle plans with (sched_cycle.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "sched_cycle.h"

static int key_eq(const saturn_profset_entry_t *e, long uid, const char *batch, const char *klass)
{
	return e->uid == uid && !strcmp(e->batch, batch) && !strcmp(e->klass, klass ? klass : "");
}

const saturn_profset_entry_t *saturn_profset_find(const saturn_profset_t *ps, long uid,
						  const char *batch, const char *klass)
{
	if (!ps || !batch)
		return NULL;
	for (int i = 0; i < ps->n; i++)
		if (key_eq(&ps->e[i], uid, batch, klass))
			return &ps->e[i];
	return NULL;
}

int saturn_profset_add(saturn_profset_t *ps, long uid, const char *batch, const char *klass,
		       const saturn_profile_t *prof)
{
	saturn_profset_entry_t *e = (saturn_profset_entry_t *)saturn_profset_find(ps, uid, batch,
										 klass);

	if (!batch || strlen(batch) > SATURN_BATCH_NAME_MAX ||
	    (klass && strlen(klass) > SATURN_CLASS_NAME_MAX))
		return -1;
	if (e) {
		if (ps->owns && e->prof != prof)
			saturn_profile_destroy((saturn_profile_t *)e->prof);
		e->prof = prof;
		return 0;
	}
	if (ps->n == ps->cap) {
		int cap = ps->cap ? 2 * ps->cap : 16;
		saturn_profset_entry_t *ne = realloc(ps->e, (size_t)cap * sizeof(*ne));

		if (!ne)
			return -1;
		ps->e = ne;
		ps->cap = cap;
	}
	e = &ps->e[ps->n++];
	memset(e, 0, sizeof(*e));
	e->uid = uid;
	strcpy(e->batch, batch);
	strcpy(e->klass, klass ? klass : "");
	e->prof = prof;
	return 0;
}

const saturn_profile_t *saturn_profset_lookup(const char *batch, long uid, void *arg)
{
	const saturn_profset_entry_t *e = saturn_profset_find(arg, uid, batch, "");

	return e ? e->prof : NULL;
}

const saturn_profile_t *saturn_profset_lookup_class(const char *batch, long uid,
						    const char *klass, void *arg)
{
	const saturn_profset_entry_t *e;

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
