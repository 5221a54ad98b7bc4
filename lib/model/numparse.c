/* numparse.c - checked parsing of numbers given as text (see numparse.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "safetext.h"

/* A string strtol/strtod may read: not empty, no leading space (which both
 * skip silently). Trailing junk is caught by the callers' end check. */
static int plausible(const char *s)
{
	return s && *s && !isspace((unsigned char)*s);
}

/* "NAME: 'S' is not KIND RANGE", S cut to 64 characters. */
static int fail(saturn_error_t *err, const char *name, const char *s,
		const char *kind, const char *range)
{
	char shown[65];

	/* the value as safe text: messages reach logs (safetext.h) */
	saturn_text_clean(s ? s : "", SATURN_TEXT_LINE, shown, sizeof(shown));
	saturn_error_set(err, "%s%s'%s%s' is not %s%s", name ? name : "", name ? ": " : "", shown,
			 s && strnlen(s, 65) > 64 ? "..." : "", kind, range);
	errno = EINVAL;
	return -1;
}

int saturn_parse_long(const char *name, const char *s, long lo, long hi,
		      long *out, saturn_error_t *err)
{
	char range[96];
	char *end;
	long v;

	if (hi == LONG_MAX)
		snprintf(range, sizeof(range), " >= %ld", lo);
	else if (lo == LONG_MIN)
		snprintf(range, sizeof(range), " <= %ld", hi);
	else
		snprintf(range, sizeof(range), " from %ld to %ld", lo, hi);
	if (!plausible(s))
		return fail(err, name, s, "an integer", range);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return fail(err, name, s, "an integer", range);
	*out = v;
	return 0;
}

int saturn_parse_int(const char *name, const char *s, int lo, int hi, int *out,
		     saturn_error_t *err)
{
	long v;

	if (saturn_parse_long(name, s, lo == INT_MIN ? LONG_MIN : lo,
			      hi == INT_MAX ? LONG_MAX : hi, &v, err) < 0)
		return -1;
	if (v < INT_MIN || v > INT_MAX) {
		char range[64];

		snprintf(range, sizeof(range), " from %d to %d", lo, hi);
		return fail(err, name, s, "an integer", range);
	}
	*out = (int)v;
	return 0;
}

int saturn_parse_double(const char *name, const char *s, double lo, double hi,
			int flags, double *out, saturn_error_t *err)
{
	int open = flags & SATURN_NUM_LO_OPEN;
	char range[96];
	char *end;
	double v;

	if (isinf(hi))
		snprintf(range, sizeof(range), " %s %g", open ? ">" : ">=", lo);
	else if (open)
		snprintf(range, sizeof(range), " > %g and <= %g", lo, hi);
	else
		snprintf(range, sizeof(range), " from %g to %g", lo, hi);
	if (!plausible(s))
		return fail(err, name, s, "a number", range);
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE && fabs(v) > 1) /* overflow; underflow is ~0 */
		return fail(err, name, s, "a number", range);
	if (end == s || *end || !isfinite(v) ||
	    (open ? !(v > lo) : !(v >= lo)) || !(v <= hi))
		return fail(err, name, s, "a number", range);
	*out = v;
	return 0;
}

int saturn_env_double(const char *name, double lo, double hi, int flags,
		      double *out, int *have, saturn_error_t *err)
{
	const char *s = getenv(name);

	if (have)
		*have = 0;
	if (!s || !*s)
		return 0;
	if (saturn_parse_double(name, s, lo, hi, flags, out, err) < 0)
		return -1;
	if (have)
		*have = 1;
	return 0;
}
