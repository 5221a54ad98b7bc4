/* profstate.c - the profiler facts given to a cycle, per batch
 * (cycle_profiler.h): find, put, free.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cycle_profiler.h"

const saturn_profstate_entry_t *saturn_profstate_find(const saturn_profstate_t *ps, long uid,
						      const char *batch)
{
	for (int i = 0; ps && i < ps->n; i++)
		if (ps->e[i].uid == uid && !strcmp(ps->e[i].batch, batch))
			return &ps->e[i];
	return NULL;
}

int saturn_profstate_put(saturn_profstate_t *ps, const saturn_profstate_entry_t *e)
{
	const saturn_profstate_entry_t *old = saturn_profstate_find(ps, e->uid, e->batch);

	if (old) {
		ps->e[old - ps->e] = *e;
		return 0;
	}
	if (ps->n == ps->cap) {
		int cap = ps->cap ? 2 * ps->cap : 8;
		saturn_profstate_entry_t *ne = realloc(ps->e, (size_t)cap * sizeof(*ne));

		if (!ne)
			return -1;
		ps->e = ne;
		ps->cap = cap;
	}
	ps->e[ps->n++] = *e;
	return 0;
}

void saturn_profstate_free(saturn_profstate_t *ps)
{
	if (!ps)
		return;
	free(ps->e);
	memset(ps, 0, sizeof(*ps));
}
