/* idset.c - "0-15,17,20-30:2" id lists (see idset.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"
#include "safetext.h"

#define LIKE "an id range like 0-15, 1,3,5-7 or 0-15:2"

/* Read decimal digits at *s as a value <= max; advance *s. 0 on success;
 * -1 when there is no digit; -2 when the value passes max (the digits are
 * still consumed, so the message can show the item). */
static int read_num(const char **s, long max, long *out)
{
	long v = 0;
	int over = 0;

	if (**s < '0' || **s > '9')
		return -1;
	while (**s >= '0' && **s <= '9') {
		if (!over && (v = v * 10 + (**s - '0')) > max)
			over = 1;
		(*s)++;
	}
	*out = v;
	return over ? -2 : 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Fail with EINVAL and a message "what: ..." (what may be NULL). */
#define FAIL(...)                                                              \
	do {                                                                   \
		saturn_error_set(err, __VA_ARGS__);                            \
		if (what)                                                      \
			saturn_error_prefix(err, "%s", what);                  \
		errno = EINVAL;                                                \
		goto fail;                                                     \
	} while (0)

int saturn_idset_parse(const char *what, const char *s, int max_id,
		       int max_count, int **ids, saturn_error_t *err)
{
	int *a = NULL, *sorted = NULL;
	int n = 0, cap = 0;
	const char *p = s;

	*ids = NULL;
	if (!s || !*s)
		FAIL("the id list is empty (want " LIKE ")");
	for (;;) {
		const char *item = p;
		long lo = 0, hi = 0, step = 1;
		int rc;

		if ((rc = read_num(&p, max_id, &lo)) == 0 && *p == '-') {
			p++;
			if ((rc = read_num(&p, max_id, &hi)) == 0 &&
			    *p == ':') {
				p++;
				rc = read_num(&p, max_id, &step);
				if (rc == -2 || (rc == 0 && step < 1))
					rc = -1;
			}
			if (rc == 0 && hi < lo)
				rc = -1;
		} else {
			hi = lo;
		}
		if (rc == -2) {
			char shown[65];
			size_t len = (size_t)(p - item);

			/* the item as safe text (it reaches logs) */
			memcpy(shown, item, len > 64 ? 64 : len);
			shown[len > 64 ? 64 : len] = '\0';
			saturn_text_clean(shown, SATURN_TEXT_LINE, shown, sizeof(shown));
			FAIL("'%s': id out of range (ids 0 to %d)", shown, max_id);
		}
		if (rc < 0 || (*p && *p != ',')) {
			char shown[65];
			size_t len = strcspn(item, ",");

			memcpy(shown, item, len > 64 ? 64 : len);
			shown[len > 64 ? 64 : len] = '\0';
			saturn_text_clean(shown, SATURN_TEXT_LINE, shown, sizeof(shown));
			FAIL("'%s' is not " LIKE, shown);
		}
		for (long v = lo; v <= hi; v += step) {
			if (n >= max_count)
				FAIL("more than %d ids", max_count);
			if (n == cap) {
				int ncap = cap ? cap * 2 : 16;
				int *r = realloc(a, sizeof(int) * (size_t)ncap);

				if (!r)
					goto nomem;
				a = r;
				cap = ncap;
			}
			a[n++] = (int)v;
		}
		if (!*p)
			break;
		p++; /* ',' */
	}
	if (!(sorted = malloc(sizeof(int) * (size_t)n)))
		goto nomem;
	memcpy(sorted, a, sizeof(int) * (size_t)n);
	qsort(sorted, (size_t)n, sizeof(int), cmp_int);
	for (int i = 1; i < n; i++)
		if (sorted[i] == sorted[i - 1])
			FAIL("id %d listed twice", sorted[i]);
	free(sorted);
	*ids = a;
	return n;
nomem:
	saturn_error_set(err, "out of memory");
	errno = ENOMEM;
fail:
	free(sorted);
	free(a);
	return -1;
}
