/* cache.c - saturn-profile's profile cache (cache.h): where the folder is,
 * how it is checked, and entry files named by an FNV-1a hash of the node
 * class fingerprint and the signature.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "formats.h"
#include "safefile.h"

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* mkdir -p, mode 0700 for what it creates. 0 or -1 (errno). */
static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(buf, 0700) < 0 && errno != EEXIST)
				return -1;
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

static const char *nz(const char *s, const char *def)
{
	return s && *s ? s : def;
}

/* Why the cache folder at path is refused, for the warning (the decision
 * itself was taken on the descriptor). */
static const char *why_refused(const char *path, int e)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return strerror(errno);
	if (S_ISLNK(st.st_mode))
		return "a symbolic link (refused)";
	if (!S_ISDIR(st.st_mode))
		return "not a folder";
	if (st.st_uid != getuid())
		return "not owned by the invoking user (refused)";
	if (st.st_mode & 022)
		return "writable by others (refused)";
	return strerror(e);
}

void pcache_open(struct pcache *c, const struct opts *o,
		 const saturn_profile_hw_t *hw)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	saturn_error_t err = {{0}};
	char parent[PATH_MAX], *slash;
	const char *base;
	struct stat st;
	int pfd, e = 0;

	memset(c, 0, sizeof(*c));
	c->dfd = -1;
	c->max_age = o->cache_max_age * 86400.0;
	c->quiet = o->quiet;
	c->hw = hw;
	if (o->no_cache)
		return;
	if (o->cache_dir)
		snprintf(c->dir, sizeof(c->dir), "%s", o->cache_dir);
	else if (xdg && *xdg)
		snprintf(c->dir, sizeof(c->dir), "%s/saturn/profiles", xdg);
	else if (home && *home)
		snprintf(c->dir, sizeof(c->dir), "%s/.cache/saturn/profiles",
			 home);
	else
		return;
	/* no trailing slashes: the last component is the cache folder */
	for (size_t n = strlen(c->dir); n > 1 && c->dir[n - 1] == '/'; n--)
		c->dir[n - 1] = '\0';
	if (asprintf(&c->fingerprint,
		     "class=%s\ngpu_model=%s\ninterconnect=%s\ngpus=%d\n",
		     nz(hw->klass, "default"), nz(hw->gpu_model, "unknown"),
		     nz(hw->interconnect, "unknown"), hw->gpus) < 0) {
		c->fingerprint = NULL;
		c->dir[0] = '\0';
		return;
	}
	/* the parents are the user's own path (made 0700 when missing); the
	 * cache folder itself is made and opened under its parent's
	 * descriptor, never through a link */
	snprintf(parent, sizeof(parent), "%s", c->dir);
	slash = strrchr(parent, '/');
	if (slash == parent)
		parent[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(parent, sizeof(parent), ".");
	base = slash ? strrchr(c->dir, '/') + 1 : c->dir;
	if (strcmp(parent, "/") && strcmp(parent, ".") && mkdirs(parent) < 0) {
		e = errno;
		goto refuse;
	}
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		e = errno;
		goto refuse;
	}
	if (mkdirat(pfd, base, 0700) < 0 && errno != EEXIST) {
		e = errno;
		close(pfd);
		goto refuse;
	}
	c->dfd = saturn_dir_open_at(pfd, parent, base, (long)getuid(), &err);
	e = errno;
	close(pfd);
	if (c->dfd < 0)
		goto refuse;
	if (fstat(c->dfd, &st) < 0 || (st.st_mode & 022)) {
		e = EPERM;
		close(c->dfd);
		c->dfd = -1;
		goto refuse;
	}
	return;
refuse:
	fprintf(stderr,
		"%s: warning: profile cache %s: %s; running without the "
		"cache\n",
		prog, c->dir, why_refused(c->dir, e));
	c->dir[0] = '\0';
}

void pcache_close(struct pcache *c)
{
	if (!c)
		return;
	free(c->fingerprint);
	c->fingerprint = NULL;
	if (c->dir[0] && c->dfd >= 0)
		close(c->dfd);
	c->dfd = -1;
	c->dir[0] = '\0';
}

static void entry_path(const struct pcache *c, const char *signature, char *buf,
		       size_t len)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ull, c->fingerprint);

	h = fnv1a(h, "\n");
	h = fnv1a(h, signature);
	snprintf(buf, len, "%016llx.json", (unsigned long long)h);
}

static int same(const char *a, const char *b, const char *def)
{
	return strcmp(nz(a, def), nz(b, def)) == 0;
}

saturn_profile_t *pcache_get(const struct pcache *c, const char *signature)
{
	char name[32];
	saturn_profile_t *e;
	saturn_error_t err = {{0}};
	const char *why = NULL;
	const saturn_profile_hw_t *h;
	long me = (long)getuid();
	size_t len;
	char *buf;

	if (!c->dir[0])
		return NULL;
	entry_path(c, signature, name, sizeof(name));
	buf = saturn_file_read_at(c->dfd, c->dir, name, &me, 1,
				  SATURN_PROFILE_MAX_BYTES, &len, NULL, &err);
	if (!buf && errno == ENOENT)
		return NULL; /* absent: not even a dangling link */
	e = buf ? saturn_profile_parse(buf, len, &err) : NULL;
	if (buf && !e)
		saturn_error_prefix(&err, "%s/%s", c->dir, name);
	free(buf);
	if (!e) {
		fprintf(stderr, "%s: note: cache entry ignored: %s\n", prog,
			err.text);
		return NULL;
	}
	h = e->nhw == 1 ? &e->hw[0] : NULL;
	if (!h || e->ntasks != 1)
		why = "not one hardware entry and one task";
	else if (strcmp(e->tasks[0].signature, signature) != 0 ||
		 !same(h->klass, c->hw->klass, "default") ||
		 !same(h->gpu_model, c->hw->gpu_model, "unknown") ||
		 !same(h->interconnect, c->hw->interconnect, "unknown") ||
		 h->gpus != c->hw->gpus)
		why = "another signature or node class (hash collision)";
	else if (e->created < (double)time(NULL) - c->max_age)
		why = "older than --cache-max-age";
	if (why) {
		fprintf(stderr, "%s: note: cache entry %s/%s ignored: %s\n",
			prog, c->dir, name, why);
		saturn_profile_destroy(e);
		return NULL;
	}
	return e;
}

int pcache_put(const struct pcache *c, const char *batch,
	       const saturn_profile_task_t *pt, double created)
{
	char name[32];
	saturn_profile_t e = {0};
	saturn_profile_hw_t hw;
	saturn_error_t err = {{0}};
	char *json;
	int rc;

	if (!c->dir[0])
		return 0;
	entry_path(c, pt->signature, name, sizeof(name));
	hw = *c->hw;
	e.batch = (char *)batch;
	e.created = created;
	e.nhw = 1;
	e.hw = &hw;
	e.ntasks = 1;
	e.tasks = (saturn_profile_task_t *)pt;
	json = saturn_profile_to_json(&e);
	if (!json) {
		fprintf(stderr, "%s: warning: cache entry %s/%s: %s\n", prog,
			c->dir, name, strerror(errno));
		return -1;
	}
	rc = saturn_file_write_at(c->dfd, c->dir, name, json, strlen(json),
				  SATURN_ANY_UID, SATURN_ANY_UID, 0644, &err);
	free(json);
	if (rc < 0)
		fprintf(stderr, "%s: warning: cache entry not written: %s\n",
			prog, err.text);
	return rc;
}

int pcache_covers(const saturn_profile_task_t *entry, const char *technique,
		  int lo, int hi)
{
	for (int g = lo; g <= hi; g++) {
		int ok = 0;

		for (int i = 0; i < entry->noptions && !ok; i++) {
			const saturn_profile_option_t *op = &entry->options[i];

			ok = op->gpus == g &&
			     strcmp(op->technique, technique) == 0 &&
			     (op->status == SATURN_OPT_MEASURED ||
			      op->status == SATURN_OPT_PREDICTED ||
			      op->status == SATURN_OPT_OOM ||
			      op->status == SATURN_OPT_SKIPPED);
		}
		if (!ok)
			return 0;
	}
	return 1;
}
