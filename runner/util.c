/* util.c - small helpers the files of saturn-run share: clocks, numeric
 * environment variables, atomic report files, JSON string literals and
 * comma-separated name lists (see run.h for the contracts).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

double run_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double run_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int run_env_num(const char *name, double *v, int *have)
{
	const char *s = getenv(name);
	char *end;

	if (have)
		*have = 0;
	if (!s || !*s)
		return 0;
	*v = strtod(s, &end);
	if (*end || !isfinite(*v) || *v < 0) {
		fprintf(stderr, "%s: %s=%s: want a number >= 0\n", run_prog,
			name, s);
		return -1;
	}
	if (have)
		*have = 1;
	return 0;
}

int run_write_atomic(const char *path, const char *data)
{
	char tmp[PATH_MAX];
	int fd;
	size_t len = strlen(data), off = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -1;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		off += w;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

char *run_json_str(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(n * 6 + 3), *p = o;

	if (!o)
		return NULL;
	*p++ = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = c;
		} else if (c < 0x20) {
			p += sprintf(p, "\\u%04x", c);
		} else {
			*p++ = c;
		}
	}
	*p++ = '"';
	*p = '\0';
	return o;
}

int run_list_match(const char *arg, const char *list, int *takes_value)
{
	size_t al = strcspn(arg, "=");
	const char *p = list;

	*takes_value = arg[al] != '=';
	while (*p) {
		size_t l = strcspn(p, ",");

		if (l == al && strncmp(p, arg, l) == 0)
			return 1;
		p += l;
		if (*p == ',')
			p++;
	}
	return 0;
}
