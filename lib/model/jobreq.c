/* jobreq.c - batch-name syntax, default batch names and the reading of
 * Slurm TRES request strings (see jobreq.h). Free of Slurm headers and of
 * allocation, so the SPANK and job_submit plugins, sched/saturn and the
 * programs share one copy of each rule.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobreq.h"

/* Largest count of one TRES entry, and of the GPUs of a whole request. */
#define TRES_COUNT_MAX 1000000

static int name_char_ok(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

void saturn_why(char *why, size_t len, const char *fmt, ...)
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
		saturn_why(why, len, "the name is empty");
		return -1;
	}
	n = strlen(name);
	if (n > SATURN_BATCH_NAME_MAX) {
		saturn_why(why, len, "the name is longer than %d characters",
			SATURN_BATCH_NAME_MAX);
		return -1;
	}
	if (name[0] == '-' || name[0] == '.') {
		saturn_why(why, len, "the name must not start with '-' or '.'");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!name_char_ok(c)) {
			if (isprint(c) && c != ' ')
				saturn_why(why, len,
					"character '%c' not allowed (use A-Z "
					"a-z 0-9 . _ -)",
					c);
			else
				saturn_why(why, len,
					"character 0x%02x not allowed (use A-Z "
					"a-z 0-9 . _ -)",
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
	long long v, mult = 1;

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
		mult = 1024;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1024 * 1024;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1024LL * 1024 * 1024;
		end++;
		break;
	default:
		return -1;
	}
	if (*end || v > LLONG_MAX / mult) /* no overflow in v * mult */
		return -1;
	*out = v * mult;
	return 0;
}

/* Whether n bytes at s are digits with at most a one-letter k/m/g suffix. */
static int count_shaped(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i == 0)
		return 0;
	return i == n || (i + 1 == n && strchr("kKmMgG", s[i]));
}

/* Parse n bytes at s as a count from 1 to TRES_COUNT_MAX; 0 on success. */
static int tres_count(const char *s, size_t n, long long *out)
{
	return parse_count(s, n, out) || *out <= 0 || *out > TRES_COUNT_MAX ? -1
									    : 0;
}

/* Note the type of one gpu entry (NAME at e, head bytes before '=' or the
 * end; c1/c2 its colons, eq its '=') in req: the first type seen, or
 * mixed when a later entry names another one or none. */
static void tres_gpu_type(saturn_tres_req_t *req, const char *c1, const char *c2,
			  const char *eq, const char *e, size_t head)
{
	char t[sizeof(req->gpu_type)] = "";
	const char *te = NULL;

	if (c1 && c2)
		te = c2; /* gpu:TYPE:COUNT */
	else if (c1 && eq)
		te = e + head; /* gpu:TYPE=COUNT */
	else if (c1 && !count_shaped(c1 + 1, (size_t)(e + head - c1 - 1)))
		te = e + head; /* gpu:TYPE */
	if (te) {
		size_t n = (size_t)(te - c1 - 1);

		if (n >= sizeof(t))
			n = sizeof(t) - 1;
		memcpy(t, c1 + 1, n);
		t[n] = '\0';
	}
	if (req->gpus == 0 && !req->gpu_types_mixed) {
		snprintf(req->gpu_type, sizeof(req->gpu_type), "%s", t);
		return;
	}
	if (strcmp(req->gpu_type, t)) {
		req->gpu_type[0] = '\0';
		req->gpu_types_mixed = 1;
	}
}

int saturn_tres_parse(const char *tres, saturn_tres_req_t *req, char *why,
		      size_t len)
{
	const char *p = tres;

	memset(req, 0, sizeof(*req));
	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *e = p, *c1, *c2, *eq;
		size_t name_len, head;
		long long count = 1;
		int gres = 0;

		if (n >= 5 &&
		    (!strncmp(e, "gres:", 5) || !strncmp(e, "gres/", 5))) {
			e += 5;
			n -= 5;
			gres = 1;
		}
		/* NAME[:TYPE]=COUNT, else NAME[:TYPE][:COUNT] */
		eq = memchr(e, '=', n);
		head = eq ? (size_t)(eq - e) : n;
		c1 = memchr(e, ':', head);
		c2 = c1 ? memchr(c1 + 1, ':', head - (size_t)(c1 + 1 - e))
			: NULL;
		name_len = c1 ? (size_t)(c1 - e) : head;
		if (name_len == 0) {
			saturn_why(why, len, "empty GRES name in '%s'", tres);
			return -1;
		}
		if ((c1 && (c1 + 1 == e + head || c1 + 1 == c2)) ||
		    (c2 && (c2 + 1 == e + head ||
			    memchr(c2 + 1, ':', head - (size_t)(c2 + 1 - e)) ||
			    eq))) {
			saturn_why(why, len,
				"bad GRES request '%.*s' (want "
				"NAME[:TYPE][:COUNT])",
				(int)n, e);
			return -1;
		}
		if (eq) {
			if (tres_count(eq + 1, n - head - 1, &count)) {
				saturn_why(why, len,
					"bad count in GRES request '%.*s'",
					(int)n, e);
				return -1;
			}
		} else if (c2) {
			if (tres_count(c2 + 1, (size_t)(e + n - c2 - 1),
				       &count)) {
				saturn_why(why, len,
					"bad count in GRES request '%.*s'",
					(int)n, e);
				return -1;
			}
		} else if (c1 &&
			   count_shaped(c1 + 1, (size_t)(e + n - c1 - 1))) {
			/* NAME:COUNT; anything that is not shaped like a count
			 * is a type, as in Slurm ("gpu:3g.20gb" is one GPU of
			 * MIG type 3g.20gb) */
			if (tres_count(c1 + 1, (size_t)(e + n - c1 - 1),
				       &count)) {
				saturn_why(why, len,
					"bad count in GRES request '%.*s'",
					(int)n, e);
				return -1;
			}
		} else {
			count = 1;
		}
		if (name_len == 3 && !strncmp(e, "gpu", 3)) {
			tres_gpu_type(req, c1, c2, eq, e, head);
			if (req->gpus + count > TRES_COUNT_MAX) {
				saturn_why(why, len, "too many GPUs in '%s'",
					tres);
				return -1;
			}
			req->gpus += (int)count;
		} else if (!gres && name_len == 3 && !strncmp(e, "cpu", 3) && !c1) {
			/* "cpu=N" (a TRES, not a GRES): -c/--cpus-per-task
			 * in tres_per_task from Slurm 23.11 on */
			req->cpus = count > req->cpus ? (int)count : req->cpus;
		} else {
			if (!req->other)
				snprintf(req->first_other,
					 sizeof(req->first_other), "%.*s",
					 (int)n, e);
			req->other++;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}
