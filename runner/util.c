/* util.c - small helpers the files of saturn-run share: clocks, numeric
 * environment variables, report files (JSON, written atomically) and
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

#include "formats.h"
#include "numparse.h"
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
	saturn_error_t err = {{0}};

	if (saturn_env_double(name, 0, INFINITY, 0, v, have, &err) < 0) {
		fprintf(stderr, "%s: %s\n", run_prog, err.text);
		return -1;
	}
	return 0;
}

int run_write_report(const char *path, json_object *o, const char *what)
{
	const char *txt = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							JSON_C_TO_STRING_NOSLASHESCAPE)
			    : NULL;
	saturn_error_t err = {{0}};
	int rc = -1;

	if (!path || !*path)
		fprintf(stderr, "%s: cannot write %s: SATURN_REPORT_FILE is unset\n", run_prog,
			what);
	else if (!txt)
		fprintf(stderr, "%s: cannot write %s: out of memory\n", run_prog, what);
	else if (saturn_write_file_atomic(path, txt, strlen(txt), &err) < 0)
		fprintf(stderr, "%s: cannot write %s: %s\n", run_prog, what, err.text);
	else
		rc = 0;
	json_object_put(o);
	return rc;
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

int run_first_host(const char *list, char *out, size_t len)
{
	size_t pre, l;
	const char *br;

	if (!list || !*list)
		return -1;
	/* the first entry of the list: up to a comma outside brackets */
	pre = strcspn(list, ",[");
	if (list[pre] != '[') {
		if (pre == 0 || pre >= len)
			return -1;
		memcpy(out, list, pre);
		out[pre] = '\0';
		return 0;
	}
	/* prefix[a-b,c...]suffix: prefix and the first number as written
	 * (zero padding kept); a suffix after "]" is kept too */
	br = list + pre + 1;
	l = strspn(br, "0123456789");
	if (pre == 0 || l == 0 || pre + l >= len)
		return -1;
	memcpy(out, list, pre);
	memcpy(out + pre, br, l);
	out[pre + l] = '\0';
	br = strchr(br, ']');
	if (!br)
		return -1;
	br++;
	l = strcspn(br, ",[");
	if (br[l] == '[' || strlen(out) + l >= len)
		return -1; /* a second bracket: not worth guessing */
	strncat(out, br, l);
	return 0;
}
