/* submit_rules.c - batch-name syntax, default batch names and the reading
 * of Slurm TRES request strings, shared by spank_saturn.so and
 * job_submit_saturn.so (see submit_rules.h). Deliberately free of Slurm
 * headers and of allocation, so both plugins and the unit test can use it.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "submit_rules.h"

static int name_char_ok(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

__attribute__((format(printf, 3, 4))) static void
set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

int saturn_batch_name_check(const char *name, char *why, size_t len)
{
	size_t n;

	if (!name || !*name) {
		set_why(why, len, "the name is empty");
		return -1;
	}
	n = strlen(name);
	if (n > SATURN_BATCH_NAME_MAX) {
		set_why(why, len, "the name is longer than %d characters",
			SATURN_BATCH_NAME_MAX);
		return -1;
	}
	if (name[0] == '-' || name[0] == '.') {
		set_why(why, len, "the name must not start with '-' or '.'");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!name_char_ok(c)) {
			if (isprint(c) && c != ' ')
				set_why(why, len,
					"character '%c' not allowed (use A-Z a-z 0-9 . _ -)",
					c);
			else
				set_why(why, len,
					"character 0x%02x not allowed (use A-Z a-z 0-9 . _ -)",
					c);
			return -1;
		}
	}
	return 0;
}

char *saturn_batch_name_default(const char *job_name,
				char out[SATURN_BATCH_NAME_MAX + 1])
{
	size_t o = 0;

	if (job_name) {
		for (const char *p = job_name; *p && o < SATURN_BATCH_NAME_MAX;
		     p++) {
			int c = (unsigned char)*p;

			if (o == 0 && (c == '-' || c == '.'))
				continue;
			out[o++] = name_char_ok(c) ? (char)c : '_';
		}
	}
	out[o] = '\0';
	if (o == 0)
		snprintf(out, SATURN_BATCH_NAME_MAX + 1, "%s",
			 SATURN_BATCH_DEFAULT);
	return out;
}

/* Parse a GRES count ("4", "2k"); 0 on success. */
static int parse_count(const char *s, size_t n, long long *out)
{
	char buf[32];
	char *end;
	long long v;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!isdigit((unsigned char)buf[0]))
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		v *= 1024;
		end++;
		break;
	case 'm':
	case 'M':
		v *= 1024 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		v *= 1024LL * 1024 * 1024;
		end++;
		break;
	default:
		return -1;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int saturn_tres_parse(const char *tres, saturn_tres_req_t *req, char *why,
		      size_t len)
{
	const char *p = tres;

	memset(req, 0, sizeof(*req));
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *e = p, *name, *colon, *last;
		size_t name_len;
		long long count = 1;

		if (n >= 5 && (!strncmp(e, "gres:", 5) || !strncmp(e, "gres/", 5))) {
			e += 5;
			n -= 5;
		}
		name = e;
		colon = memchr(e, ':', n);
		name_len = colon ? (size_t)(colon - e) : n;
		if (name_len == 0) {
			set_why(why, len, "empty GRES name in '%s'", tres);
			return -1;
		}
		if (colon) {
			/* NAME:TYPE, NAME:COUNT or NAME:TYPE:COUNT: the count
			 * is the last field when it starts with a digit. */
			last = e + n;
			while (last > colon + 1 && last[-1] != ':')
				last--;
			if (isdigit((unsigned char)*last)) {
				if (parse_count(last, (size_t)(e + n - last), &count) ||
				    count <= 0 || count > 1000000) {
					set_why(why, len,
						"bad count in GRES request '%.*s'",
						(int)n, e);
					return -1;
				}
			}
		}
		if (name_len == 3 && !strncmp(name, "gpu", 3)) {
			if (req->gpus + count > 1000000) {
				set_why(why, len, "too many GPUs in '%s'", tres);
				return -1;
			}
			req->gpus += (int)count;
		} else {
			if (!req->other)
				snprintf(req->first_other, sizeof(req->first_other),
					 "%.*s", (int)n, e);
			req->other++;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}
