/* technique_plugin.c - loading technique plugins (C shared objects
 * exporting a saturn_technique_plugin_v1_t, technique.h) into a registry.
 *
 * Plugins are dlopen()ed only from a directory the admin names, after
 * checking that nobody but root or the trusted owner could have written the
 * file or the directory (doc/techniques.md explains why both).
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
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
