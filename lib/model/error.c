/* error.c - error text carried back to the caller (see error.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int saturn_error_vset(saturn_error_t *err, const char *fmt, va_list ap)
{
	int saved = errno;

	if (err)
		vsnprintf(err->text, sizeof(err->text), fmt, ap);
	errno = saved;
	return -1;
}

int saturn_error_set(saturn_error_t *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	saturn_error_vset(err, fmt, ap);
	va_end(ap);
	return -1;
}

int saturn_error_prefix(saturn_error_t *err, const char *fmt, ...)
{
	char prefix[SATURN_ERROR_LEN];
	char old[SATURN_ERROR_LEN];
	int saved = errno;
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->text, sizeof(old));
	snprintf(err->text, sizeof(err->text), "%s: %s", prefix, old);
	errno = saved;
	return -1;
}

void saturn_error_clear(saturn_error_t *err)
{
	if (err)
		err->text[0] = '\0';
}
