/* error.h - error text carried back to the caller.
 *
 * Library functions never print, exit or abort. On failure they return -1 or
 * NULL and, when given a non-NULL saturn_error_t, fill it with one line of
 * text that names what is wrong (the task, node or field) so that programs
 * and plugins can show it unchanged.
 */
#ifndef SATURN_ERROR_H
#define SATURN_ERROR_H

#include <stdarg.h>

#define SATURN_ERROR_LEN 512

typedef struct saturn_error {
	char text[SATURN_ERROR_LEN];
} saturn_error_t;

/* Format a message into err (NULL is allowed and ignored). Always returns -1
 * so callers can write `return saturn_error_set(err, "...")`. errno is
 * preserved. */
int saturn_error_set(saturn_error_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Same, from a va_list. */
int saturn_error_vset(saturn_error_t *err, const char *fmt, va_list ap);

/* Prepend "prefix: " to the message already in err (for adding context such
 * as a file name). Returns -1. */
int saturn_error_prefix(saturn_error_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Clear err (NULL is allowed). */
void saturn_error_clear(saturn_error_t *err);

#endif /* SATURN_ERROR_H */
