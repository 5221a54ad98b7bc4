/* technique_conf.c - the admin's technique configuration file
 * (techniques.conf, doc/techniques.md): parsing its sections into a
 * registry, reading it from a path (size-capped, no NUL byte).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "saturn_limits.h"
#include "technique.h"
#include "technique_int.h"

#define CONF_MAX_BYTES (1u << 20)

/* --- configuration file ------------------------------------------------ */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_long(const char *s, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return (errno || end == s || *end) ? -1 : 0;
}

/* "N", "N-M" or "N-" */
static int parse_gpu_range(const char *s, int *lo, int *hi)
{
	char buf[64], *dash;
	long a, b = 0;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	if (parse_long(trim(buf), &a) < 0 || a < 1 || a > 4096)
		return -1;
	if (!dash)
		b = a;
	else if (*trim(dash) &&
		 (parse_long(trim(dash), &b) < 0 || b < a || b > 4096))
		return -1;
	*lo = (int)a;
	*hi = (int)b;
	return 0;
}

/* "NAME int MIN MAX DEFAULT" or "NAME bool DEFAULT"; MAX and DEFAULT of an
 * int may be the word "gpus". */
static int parse_param(char *s, saturn_tparam_t *p, const char **why)
{
	char *w[6];
	int n = 0;

	for (char *tok = strtok(s, " \t"); tok; tok = strtok(NULL, " \t")) {
		if (n == 6) {
			*why = "too many words";
			return -1;
		}
		w[n++] = tok;
	}
	memset(p, 0, sizeof(*p));
	if (n < 3) {
		*why = "want NAME int MIN MAX DEFAULT or NAME bool DEFAULT";
		return -1;
	}
	if (!valid_name(w[0]) || strchr(w[0], '-')) {
		*why = "bad parameter name (want [a-z0-9_]+)";
		return -1;
	}
	p->name = w[0];
	if (strcmp(w[1], "bool") == 0) {
		if (n != 3 || parse_long(w[2], &p->def) < 0 || p->def < 0 ||
		    p->def > 1) {
			*why = "want NAME bool 0|1";
			return -1;
		}
		p->type = SATURN_TPARAM_BOOL;
		p->max = 1;
		return 0;
	}
	if (strcmp(w[1], "int") != 0 || n != 5) {
		*why = "want NAME int MIN MAX DEFAULT or NAME bool DEFAULT";
		return -1;
	}
	p->type = SATURN_TPARAM_INT;
	if (parse_long(w[2], &p->min) < 0) {
		*why = "MIN is not an integer";
		return -1;
	}
	if (strcmp(w[3], "gpus") == 0)
		p->max_is_gpus = 1;
	else if (parse_long(w[3], &p->max) < 0 || p->max < p->min) {
		*why = "MAX is not an integer >= MIN (or the word gpus)";
		return -1;
	}
	if (strcmp(w[4], "gpus") == 0)
		p->def_is_gpus = 1;
	else if (parse_long(w[4], &p->def) < 0 || p->def < p->min ||
		 (!p->max_is_gpus && p->def > p->max)) {
		*why = "DEFAULT is not an integer in [MIN, MAX] (or the word "
		       "gpus)";
		return -1;
	}
	return 0;
}

static int finish_section(saturn_techniques_t *reg, saturn_technique_t **cur,
			  int have_gpus, const char *name, int line,
			  saturn_error_t *err)
{
	saturn_technique_t *t = *cur;

	if (!t)
		return 0;
	*cur = NULL;
	if (!have_gpus) {
		saturn_error_set(err, "%s:%d: technique %s: missing gpus = N-M",
				 name, line, t->name);
		technique_free(t);
		return -1;
	}
	if (!t->launch && !(t->launch = strdup("{command}")))
		goto nomem;
	if (!t->description && !(t->description = strdup("")))
		goto nomem;
	if (reg_put(reg, t) < 0)
		goto nomem;
	return 0;
nomem:
	technique_free(t);
	return saturn_error_set(err, "%s: out of memory", name);
}

int saturn_techniques_parse_config(saturn_techniques_t *reg, const char *text,
				   const char *name, long trusted_uid,
				   saturn_error_t *err)
{
	char *copy = strdup(text), *save = NULL, *raw;
	saturn_technique_t *cur = NULL;
	int lineno = 0, have_gpus = 0, sec_line = 0, rc = -1;
	const char *why;

	if (!copy)
		return saturn_error_set(err, "%s: out of memory", name);
	for (raw = copy; raw; raw = save) {
		char *line, *eq, *key, *val;

		save = strchr(raw, '\n');
		if (save)
			*save++ = '\0';
		lineno++;
		line = raw;
		if (*line == '#' || *trim(line) == '\0')
			continue;
		/* comments: a '#' at the start of the line or after blanks */
		for (char *h = line; (h = strchr(h, '#')); h++)
			if (h > line && isspace((unsigned char)h[-1])) {
				*h = '\0';
				break;
			}
		line = trim(line);
		if (*line == '[') {
			char *end = strchr(line, ']'), *tn;

			if (!end || end[1]) {
				saturn_error_set(err,
						 "%s:%d: want [technique NAME]",
						 name, lineno);
				goto out;
			}
			*end = '\0';
			if (strncmp(line + 1, "technique", 9) != 0 ||
			    !isspace((unsigned char)line[10])) {
				saturn_error_set(err,
						 "%s:%d: unknown section [%s] "
						 "(want [technique NAME])",
						 name, lineno, line + 1);
				goto out;
			}
			if (finish_section(reg, &cur, have_gpus, name, sec_line,
					   err) < 0)
				goto out;
			tn = trim(line + 10);
			if (!valid_name(tn)) {
				saturn_error_set(
				    err,
				    "%s:%d: bad technique name '%s' (want "
				    "[a-z0-9_-], 1..%d characters)",
				    name, lineno, tn, SATURN_TECHNIQUE_NAME_MAX);
				goto out;
			}
			if (!(cur = calloc(1, sizeof(*cur))) ||
			    !(cur->name = strdup(tn)) ||
			    asprintf(&cur->source, "config %s:%d", name,
				     lineno) < 0) {
				saturn_error_set(err, "%s: out of memory",
						 name);
				goto out;
			}
			have_gpus = 0;
			sec_line = lineno;
			continue;
		}
		eq = strchr(line, '=');
		if (!eq) {
			saturn_error_set(err, "%s:%d: want key = value", name,
					 lineno);
			goto out;
		}
		*eq = '\0';
		key = trim(line);
		val = trim(eq + 1);
		if (!cur) {
			if (strcmp(key, "plugin_dir") == 0) {
				if (*val != '/') {
					saturn_error_set(
					    err,
					    "%s:%d: plugin_dir must be an "
					    "absolute path",
					    name, lineno);
					goto out;
				}
				if (saturn_techniques_load_plugin_dir(
					reg, val, trusted_uid, err) < 0) {
					saturn_error_prefix(err, "%s:%d", name,
							    lineno);
					goto out;
				}
				continue;
			}
			saturn_error_set(err,
					 "%s:%d: unknown setting '%s' outside "
					 "a [technique NAME] section",
					 name, lineno, key);
			goto out;
		}
		if (strcmp(key, "gpus") == 0) {
			if (parse_gpu_range(val, &cur->min_gpus,
					    &cur->max_gpus) < 0) {
				saturn_error_set(
				    err,
				    "%s:%d: gpus: want N, N-M or N- (1..4096)",
				    name, lineno);
				goto out;
			}
			have_gpus = 1;
		} else if (strcmp(key, "launch") == 0) {
			free(cur->launch);
			cur->launch = NULL;
			if (!*val) {
				saturn_error_set(err, "%s:%d: launch: empty",
						 name, lineno);
				goto out;
			}
			if (!(cur->launch = strdup(val)))
				goto nomem;
		} else if (strcmp(key, "description") == 0) {
			free(cur->description);
			cur->description = NULL;
			if (!(cur->description = strdup(val)))
				goto nomem;
		} else if (strcmp(key, "env") == 0) {
			if (!valid_env_entry(val)) {
				saturn_error_set(
				    err, "%s:%d: env: want NAME=template", name,
				    lineno);
				goto out;
			}
			if (add_env(cur, val) < 0) {
				saturn_error_set(
				    err,
				    "%s:%d: env: too many entries (max %d)",
				    name, lineno, SATURN_TECHNIQUE_MAX_ENV);
				goto out;
			}
		} else if (strcmp(key, "param") == 0) {
			saturn_tparam_t p;

			if (parse_param(val, &p, &why) < 0) {
				saturn_error_set(err, "%s:%d: param: %s", name,
						 lineno, why);
				goto out;
			}
			for (int i = 0; i < cur->nparams; i++)
				if (strcmp(cur->params[i].name, p.name) == 0) {
					saturn_error_set(
					    err,
					    "%s:%d: param %s: declared twice",
					    name, lineno, p.name);
					goto out;
				}
			if (add_param(cur, &p) < 0) {
				saturn_error_set(
				    err, "%s:%d: param: too many (max %d)",
				    name, lineno, SATURN_TECHNIQUE_MAX_PARAMS);
				goto out;
			}
		} else {
			saturn_error_set(err,
					 "%s:%d: unknown key '%s' (want gpus, "
					 "launch, env, param, description)",
					 name, lineno, key);
			goto out;
		}
	}
	if (finish_section(reg, &cur, have_gpus, name, sec_line, err) < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	saturn_error_set(err, "%s: out of memory", name);
out:
	technique_free(cur);
	free(copy);
	return rc;
}

static char *read_small_file(const char *path, size_t max, size_t *len,
			     saturn_error_t *err)
{
	FILE *f = fopen(path, "re");
	char *buf;

	if (!f) {
		saturn_error_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(max + 1);
	if (!buf) {
		fclose(f);
		saturn_error_set(err, "%s: out of memory", path);
		return NULL;
	}
	*len = fread(buf, 1, max + 1, f);
	if (ferror(f) || *len > max) {
		saturn_error_set(err, "%s: %s", path,
				 ferror(f) ? strerror(errno)
					   : "file too large");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[*len] = '\0';
	return buf;
}

int saturn_techniques_load_config(saturn_techniques_t *reg, const char *path,
				  int missing_ok, saturn_error_t *err)
{
	struct stat st;
	char *text;
	size_t len;
	int rc;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT && missing_ok)
			return 0;
		return saturn_error_set(err, "%s: %s", path, strerror(errno));
	}
	text = read_small_file(path, CONF_MAX_BYTES, &len, err);
	if (!text)
		return -1;
	if (strlen(text) != len) {
		free(text);
		return saturn_error_set(err, "%s: contains a NUL byte", path);
	}
	rc = saturn_techniques_parse_config(reg, text, path, (long)st.st_uid,
					    err);
	free(text);
	return rc;
}
