/* numparse.h - checked parsing of numbers given as text (option values,
 * environment variables).
 *
 * atoi("abc") is 0 and strtod("", &end) succeeds with end at the empty
 * string: an option given a typo would silently become 0. These functions
 * take the whole string or nothing: no empty string, no leading or trailing
 * space or junk, no NaN or infinity, and a value inside the given range.
 * They never print; the error text names the option so that a program can
 * show it unchanged ("--warmup: 'abc' is not an integer >= 0").
 */
#ifndef SATURN_NUMPARSE_H
#define SATURN_NUMPARSE_H

#include "error.h"

/* Flags for saturn_parse_double. */
#define SATURN_NUM_LO_OPEN 0x1 /* exclusive lower bound: value > lo */

/* Parse all of s as a decimal integer in [lo, hi] (a leading '+' or '-' is
 * allowed). Returns 0 with *out set. On failure returns -1 with errno EINVAL
 * (s NULL, empty, not an integer, or out of range), *out unchanged, and err
 * (if not NULL) filled with "NAME: 'S' is not an integer ..." naming the
 * range (S cut to 64 characters). name may be NULL (then no "NAME: "). */
int saturn_parse_long(const char *name, const char *s, long lo, long hi,
		      long *out, saturn_error_t *err);

/* Same for an int in [lo, hi] (lo and hi must be int values). */
int saturn_parse_int(const char *name, const char *s, int lo, int hi, int *out,
		     saturn_error_t *err);

/* Parse all of s as a finite decimal number in [lo, hi], or in (lo, hi] with
 * SATURN_NUM_LO_OPEN; hi may be INFINITY (no upper bound). Returns 0 with
 * *out set; -1 with errno EINVAL, *out unchanged and err filled as above
 * ("NAME: 'S' is not a number > 0"). Hexadecimal and exponent forms that
 * strtod accepts are accepted; "nan" and "inf" are not. */
int saturn_parse_double(const char *name, const char *s, double lo, double hi,
			int flags, double *out, saturn_error_t *err);

/* The environment variable `name` read as saturn_parse_double reads a
 * value (the message names the variable: "SATURN_GPUS: 'x' is not a number
 * >= 0"). Unset or empty: returns 0 with *out unchanged and *have = 0.
 * Otherwise 0 with *out set and *have = 1, or -1 as saturn_parse_double
 * (*have = 0). have may be NULL. */
int saturn_env_double(const char *name, double lo, double hi, int flags,
		      double *out, int *have, saturn_error_t *err);

#endif /* SATURN_NUMPARSE_H */
