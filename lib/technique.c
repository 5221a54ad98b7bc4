/* technique.c - the technique registry: built-ins, the admin configuration
 * file, C plugins, parameter resolution and launch templates.
 *
 * Plugins are dlopen()ed only from a directory the admin names, after
 * checking that nobody but root or the trusted owner could have written the
 * file or the directory (doc/techniques.md explains why both).
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "saturn_limits.h"
#include "technique.h"

#define CONF_MAX_BYTES (1u << 20)

struct saturn_techniques {
	int n;
	int cap;
	saturn_technique_t **t;
	int nhandles;
	void **handles;
};

/* --- built-ins --------------------------------------------------------- */

struct builtin_param {
	const char *name;
	saturn_tparam_type_t type;
	long min, max, def;
	int max_is_gpus, def_is_gpus;
};

struct builtin {
	const char *name;
	const char *description;
	int min_gpus, max_gpus;
	const char *launch;
	const char *env[4];
	struct builtin_param params[4];
};

/* The multi-process built-ins start one rank per GPU through saturn-run's
 * own rank launcher: the reserved first word "saturn-ranks" (saturn-run(1),
 * LAUNCH OF RANKS), which sets torchrun's variables (RANK, WORLD_SIZE,
 * LOCAL_RANK, MASTER_ADDR, MASTER_PORT, ...) without torchrun, whose
 * Debian 12 build (PyTorch 1.13) fails before starting any worker. An
 * admin can replace any of them in the configuration file, e.g. with
 * "torchrun --standalone --nproc_per_node={gpus} --no_python {command}"
 * where torchrun works, or a site wrapper (doc/techniques.md). */
static const struct builtin builtins[] = {
    {"single", "one GPU, no parallelism", 1, 1, "{command}", {NULL}, {{NULL}}},
    {"ddp",
     "data parallel (PyTorch DDP): a replica per GPU, gradients all-reduced",
     1,
     0,
     "saturn-ranks {command}",
     {"SATURN_DDP_BUCKET_CAP_MB={bucket_cap_mb}", NULL},
     {{"bucket_cap_mb", SATURN_TPARAM_INT, 1, 1024, 25, 0, 0}, {NULL}}},
    {"fsdp",
     "fully sharded data parallel (PyTorch FSDP / ZeRO-3)",
     1,
     0,
     "saturn-ranks {command}",
     {"SATURN_FSDP_ACTIVATION_CHECKPOINTING={activation_checkpointing}",
      "SATURN_FSDP_CPU_OFFLOAD={cpu_offload}", NULL},
     {{"activation_checkpointing", SATURN_TPARAM_BOOL, 0, 1, 0, 0, 0},
      {"cpu_offload", SATURN_TPARAM_BOOL, 0, 1, 0, 0, 0},
      {NULL}}},
    {"pipeline",
     "pipeline parallel (GPipe schedule): layers split into stages",
     2,
     0,
     "saturn-ranks {command}",
     {"SATURN_PIPELINE_STAGES={stages}",
      "SATURN_PIPELINE_MICRO_BATCHES={micro_batches}", NULL},
     {{"stages", SATURN_TPARAM_INT, 2, 0, 0, 1, 1},
      {"micro_batches", SATURN_TPARAM_INT, 1, 256, 8, 0, 0},
      {NULL}}},
    {"offload",
     "one GPU, optimizer state and gradients in host memory (ZeRO-Offload)",
     1,
     1,
     "{command}",
     {"SATURN_OFFLOAD=1", NULL},
     {{NULL}}},
};

/* --- small helpers --------------------------------------------------- */

static void technique_free(saturn_technique_t *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->description);
	free(t->launch);
	for (int i = 0; i < t->nenv; i++)
		free(t->env[i]);
	free(t->env);
	for (int i = 0; i < t->nparams; i++)
		free(t->params[i].name);
	free(t->params);
	free(t->source);
	free(t);
}

static int valid_name(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	for (; s[n]; n++)
		if (!(islower((unsigned char)s[n]) ||
		      isdigit((unsigned char)s[n]) || s[n] == '_' ||
		      s[n] == '-'))
			return 0;
	return n >= 1 && n <= SATURN_TECHNIQUE_NAME_MAX;
}

static int valid_env_entry(const char *s)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s)
		return 0;
	for (const char *p = s; p < eq; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return 0;
	return !isdigit((unsigned char)s[0]);
}

static int add_env(saturn_technique_t *t, const char *e)
{
	char **n;

	if (t->nenv >= SATURN_TECHNIQUE_MAX_ENV) {
		errno = E2BIG;
		return -1;
	}
	n = realloc(t->env, (t->nenv + 1) * sizeof(*n));
	if (!n)
		return -1;
	t->env = n;
	if (!(t->env[t->nenv] = strdup(e)))
		return -1;
	t->nenv++;
	return 0;
}

static int add_param(saturn_technique_t *t, const saturn_tparam_t *p)
{
	saturn_tparam_t *n;

	if (t->nparams >= SATURN_TECHNIQUE_MAX_PARAMS) {
		errno = E2BIG;
		return -1;
	}
	n = realloc(t->params, (t->nparams + 1) * sizeof(*n));
	if (!n)
		return -1;
	t->params = n;
	t->params[t->nparams] = *p;
	if (!(t->params[t->nparams].name = strdup(p->name)))
		return -1;
	t->nparams++;
	return 0;
}

/* Insert or replace by name; takes ownership of t. */
static int reg_put(saturn_techniques_t *reg, saturn_technique_t *t)
{
	for (int i = 0; i < reg->n; i++) {
		if (strcmp(reg->t[i]->name, t->name) == 0) {
			technique_free(reg->t[i]);
			reg->t[i] = t;
			return 0;
		}
	}
	if (reg->n == reg->cap) {
		int cap = reg->cap ? reg->cap * 2 : 8;
		saturn_technique_t **n = realloc(reg->t, cap * sizeof(*n));

		if (!n)
			return -1;
		reg->t = n;
		reg->cap = cap;
	}
	reg->t[reg->n++] = t;
	return 0;
}

/* --- registry ---------------------------------------------------------- */

saturn_techniques_t *saturn_techniques_create(void)
{
	saturn_techniques_t *reg = calloc(1, sizeof(*reg));

	if (!reg)
		return NULL;
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		const struct builtin *b = &builtins[i];
		saturn_technique_t *t = calloc(1, sizeof(*t));

		if (!t)
			goto fail;
		t->min_gpus = b->min_gpus;
		t->max_gpus = b->max_gpus;
		if (!(t->name = strdup(b->name)) ||
		    !(t->description = strdup(b->description)) ||
		    !(t->launch = strdup(b->launch)) ||
		    !(t->source = strdup("builtin")))
			goto fail_t;
		for (int j = 0; b->env[j]; j++)
			if (add_env(t, b->env[j]) < 0)
				goto fail_t;
		for (int j = 0; b->params[j].name; j++) {
			saturn_tparam_t p = {
			    .name = (char *)b->params[j].name,
			    .type = b->params[j].type,
			    .min = b->params[j].min,
			    .max = b->params[j].max,
			    .def = b->params[j].def,
			    .max_is_gpus = b->params[j].max_is_gpus,
			    .def_is_gpus = b->params[j].def_is_gpus,
			};
			if (add_param(t, &p) < 0)
				goto fail_t;
		}
		if (reg_put(reg, t) < 0)
			goto fail_t;
		continue;
	fail_t:
		technique_free(t);
		goto fail;
	}
	return reg;
fail:
	saturn_techniques_destroy(reg);
	return NULL;
}

void saturn_techniques_destroy(saturn_techniques_t *reg)
{
	if (!reg)
		return;
	for (int i = 0; i < reg->n; i++)
		technique_free(reg->t[i]);
	free(reg->t);
	for (int i = 0; i < reg->nhandles; i++)
		dlclose(reg->handles[i]);
	free(reg->handles);
	free(reg);
}

int saturn_techniques_count(const saturn_techniques_t *reg)
{
	return reg ? reg->n : 0;
}

const saturn_technique_t *saturn_techniques_get(const saturn_techniques_t *reg,
						int i)
{
	if (!reg || i < 0 || i >= reg->n)
		return NULL;
	return reg->t[i];
}

const saturn_technique_t *saturn_techniques_find(const saturn_techniques_t *reg,
						 const char *name)
{
	if (!reg || !name)
		return NULL;
	for (int i = 0; i < reg->n; i++)
		if (strcmp(reg->t[i]->name, name) == 0)
			return reg->t[i];
	return NULL;
}

int saturn_technique_max_gpus(const saturn_technique_t *t, int node_gpus)
{
	if (t->max_gpus > 0 && t->max_gpus < node_gpus)
		return t->max_gpus;
	return node_gpus;
}

/* --- plugins ----------------------------------------------------------- */

static int trusted_stat(const struct stat *st, long trusted_uid)
{
	if (st->st_uid != 0 &&
	    (trusted_uid < 0 || st->st_uid != (uid_t)trusted_uid))
		return 0;
	return (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

int saturn_techniques_load_plugin(saturn_techniques_t *reg, const char *dir,
				  const char *file, long trusted_uid,
				  saturn_error_t *err)
{
	char rdir[PATH_MAX], rfile[PATH_MAX];
	struct stat st;
	size_t dl;
	void *h = NULL;
	const saturn_technique_plugin_v1_t *pl;
	saturn_technique_t *t = NULL;
	void **nh;

	if (!realpath(dir, rdir))
		return saturn_error_set(err, "%s: plugin directory: %s", dir,
					strerror(errno));
	if (!realpath(file, rfile))
		return saturn_error_set(err, "%s: %s", file, strerror(errno));
	dl = strlen(rdir);
	if (strncmp(rfile, rdir, dl) != 0 || rfile[dl] != '/' ||
	    strchr(rfile + dl + 1, '/'))
		return saturn_error_set(
		    err, "%s: refused: not in the plugin directory %s", file,
		    rdir);
	if (stat(rdir, &st) < 0)
		return saturn_error_set(err, "%s: %s", rdir, strerror(errno));
	if (!trusted_stat(&st, trusted_uid))
		return saturn_error_set(
		    err,
		    "%s: refused: plugin directory must be owned by root or "
		    "the admin and not writable by group or others",
		    rdir);
	if (stat(rfile, &st) < 0)
		return saturn_error_set(err, "%s: %s", rfile, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return saturn_error_set(err, "%s: refused: not a regular file",
					rfile);
	if (!trusted_stat(&st, trusted_uid))
		return saturn_error_set(
		    err,
		    "%s: refused: plugin must be owned by root or the admin "
		    "and not writable by group or others",
		    rfile);

	h = dlopen(rfile, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return saturn_error_set(err, "%s: %s", rfile, dlerror());
	pl = dlsym(h, SATURN_TECHNIQUE_PLUGIN_SYMBOL);
	if (!pl) {
		saturn_error_set(err, "%s: no symbol %s", rfile,
				 SATURN_TECHNIQUE_PLUGIN_SYMBOL);
		goto fail;
	}
	if (pl->abi != SATURN_TECHNIQUE_PLUGIN_ABI || pl->size < sizeof(*pl)) {
		saturn_error_set(
		    err,
		    "%s: plugin ABI %u (size %zu); this program speaks ABI %d",
		    rfile, pl->abi, pl->size, SATURN_TECHNIQUE_PLUGIN_ABI);
		goto fail;
	}
	if (!valid_name(pl->name)) {
		saturn_error_set(err,
				 "%s: bad technique name (want [a-z0-9_-], "
				 "1..%d characters)",
				 rfile, SATURN_TECHNIQUE_NAME_MAX);
		goto fail;
	}
	if (pl->min_gpus < 1 ||
	    (pl->max_gpus != 0 && pl->max_gpus < pl->min_gpus)) {
		saturn_error_set(err, "%s: technique %s: bad GPU range %d-%d",
				 rfile, pl->name, pl->min_gpus, pl->max_gpus);
		goto fail;
	}
	if (!(t = calloc(1, sizeof(*t))))
		goto nomem;
	t->plugin = pl;
	t->min_gpus = pl->min_gpus;
	t->max_gpus = pl->max_gpus;
	if (!(t->name = strdup(pl->name)) ||
	    !(t->description =
		  strdup(pl->description ? pl->description : "")) ||
	    !(t->launch = strdup(pl->launch ? pl->launch : "{command}")) ||
	    asprintf(&t->source, "plugin %s", rfile) < 0)
		goto nomem;
	for (int i = 0; pl->env && pl->env[i]; i++) {
		if (!valid_env_entry(pl->env[i])) {
			saturn_error_set(err,
					 "%s: env entry %d: want KEY=template",
					 rfile, i);
			goto fail;
		}
		if (add_env(t, pl->env[i]) < 0)
			goto nomem;
	}
	nh = realloc(reg->handles, (reg->nhandles + 1) * sizeof(*nh));
	if (!nh)
		goto nomem;
	reg->handles = nh;
	if (reg_put(reg, t) < 0)
		goto nomem;
	reg->handles[reg->nhandles++] = h;
	return 0;
nomem:
	saturn_error_set(err, "%s: out of memory", rfile);
fail:
	technique_free(t);
	dlclose(h);
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int saturn_techniques_load_plugin_dir(saturn_techniques_t *reg, const char *dir,
				      long trusted_uid, saturn_error_t *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	int n = 0, rc = 0;

	if (!d)
		return saturn_error_set(err, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (l < 4 || strcmp(de->d_name + l - 3, ".so") != 0 ||
		    de->d_name[0] == '.')
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn || asprintf(&nn[n], "%s/%s", dir, de->d_name) < 0) {
			names = nn ? nn : names;
			rc = saturn_error_set(err, "%s: out of memory", dir);
			goto out;
		}
		names = nn;
		n++;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (int i = 0; i < n && rc == 0; i++)
		rc = saturn_techniques_load_plugin(reg, dir, names[i],
						   trusted_uid, err);
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

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

saturn_techniques_t *saturn_techniques_default(saturn_error_t *err)
{
	saturn_techniques_t *reg = saturn_techniques_create();
	const char *env = getenv("SATURN_TECHNIQUES_CONF");
	int rc;

	if (!reg) {
		saturn_error_set(err, "out of memory");
		return NULL;
	}
	if (env && *env)
		rc = saturn_techniques_load_config(reg, env, 0, err);
	else
		rc = saturn_techniques_load_config(
		    reg, SATURN_TECHNIQUES_CONF_DEFAULT, 1, err);
	if (rc < 0) {
		saturn_techniques_destroy(reg);
		return NULL;
	}
	return reg;
}
