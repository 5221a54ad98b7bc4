/* safetext.c - the character sets of text from users' files (safetext.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "safetext.h"

static int name_char(unsigned char c, int first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
		return 1;
	return !first && (c == '.' || c == '+' || c == '-');
}

static int in_set(unsigned char c, saturn_text_kind_t kind, int first)
{
	if (kind == SATURN_TEXT_NAME)
		return name_char(c, first);
	return c >= 0x20 && c <= 0x7e;
}

long saturn_text_bad_at(const char *s, saturn_text_kind_t kind)
{
	for (long i = 0; s && s[i]; i++)
		if (!in_set((unsigned char)s[i], kind, i == 0))
			return i;
	return -1;
}

int saturn_text_ok(const char *s, saturn_text_kind_t kind)
{
	return s && saturn_text_bad_at(s, kind) < 0;
}

int saturn_text_check(const char *field, const char *s, saturn_text_kind_t kind,
		      saturn_error_t *err)
{
	const char *what = kind == SATURN_TEXT_NAME
			       ? "a name: ASCII letters, digits, '.', '_', '+' and '-', beginning "
				 "with a letter, a digit or '_'"
			       : "one line of printable ASCII text: no control character, line "
				 "break or byte above 0x7e";
	long at;

	if (!s)
		return saturn_error_set(err, "%s: missing", field ? field : "text");
	at = saturn_text_bad_at(s, kind);
	if (at < 0)
		return 0;
	return saturn_error_set(err, "%s: character 0x%02x at offset %ld is not allowed (%s)",
				field ? field : "text", (unsigned char)s[at], at, what);
}

char *saturn_text_clean(const char *s, saturn_text_kind_t kind, char *buf, size_t len)
{
	size_t i = 0;

	if (!len)
		return buf;
	for (; s && s[i] && i + 1 < len; i++)
		buf[i] = in_set((unsigned char)s[i], kind, i == 0) ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}
