/* measset.c - the batches' measurement records as a set (cycle_measure.h):
 * find, put, free, and the key a record goes by.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_measure.h"

int saturn_measset_index(const saturn_measset_t *ms, long uid, const char *batch, const char *klass)
{
	if (!klass)
		klass = "";
	for (int i = 0; ms && i < ms->n; i++)
		if (ms->e[i].uid == uid && !strcmp(ms->e[i].batch, batch) &&
		    !strcmp(ms->e[i].klass, klass))
			return i;
	return -1;
}

int saturn_measset_put(saturn_measset_t *ms, long uid, const char *batch, const char *klass,
		       saturn_meas_rec_t *rec)
{
	saturn_measset_entry_t *e;
	int i;

	if (!klass)
		klass = "";
	if (strlen(batch) > SATURN_BATCH_NAME_MAX || strlen(klass) > SATURN_CLASS_NAME_MAX) {
		errno = EINVAL;
		return -1;
	}
	i = saturn_measset_index(ms, uid, batch, klass);
	if (i >= 0) {
		saturn_meas_rec_free(&ms->e[i].rec);
	} else {
		if (ms->n == ms->cap) {
			int cap = ms->cap ? 2 * ms->cap : 8;
			saturn_measset_entry_t *ne = realloc(ms->e, (size_t)cap * sizeof(*ne));

			if (!ne)
				return -1;
			ms->e = ne;
			ms->cap = cap;
		}
		i = ms->n++;
		e = &ms->e[i];
		memset(e, 0, sizeof(*e));
		e->uid = uid;
		snprintf(e->batch, sizeof(e->batch), "%s", batch);
		snprintf(e->klass, sizeof(e->klass), "%s", klass);
	}
	ms->e[i].rec = *rec;
	memset(rec, 0, sizeof(*rec));
	return i;
}

void saturn_measset_free(saturn_measset_t *ms)
{
	if (!ms)
		return;
	for (int i = 0; i < ms->n; i++)
		saturn_meas_rec_free(&ms->e[i].rec);
	free(ms->e);
	memset(ms, 0, sizeof(*ms));
}

const char *saturn_meas_key(const char *batch, const char *klass, char *buf, size_t len)
{
	if (klass && klass[0])
		snprintf(buf, len, "%s@%s", batch, klass);
	else
		snprintf(buf, len, "%s", batch);
	return buf;
}
