/* progress.c - saturn-progress/1 files and the progress line protocol.
 *
 * The progress file lands in the job owner's folder STATE_DIR/progress/UID
 * (0700): it is written through a fresh O_EXCL temporary file and renamed
 * over the target (rename() replaces a planted symlink instead of following
 * it, and readers see either the old or the new complete file), and read
 * through lib/model/safefile.h (no link, FIFO or device; owner-checked).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "formats.h"
#include "model.h"
#include "progress.h"
#include "safefile.h"

char *saturn_progress_to_json(const saturn_progress_t *p)
{
	char *s = NULL;

	/* %.17g: a parsed value is written back exactly (fractions too) */
	if (asprintf(&s,
		     "{\"format\":\"%s\",\"job_id\":%ld,\"batches_done\":%.17g,"
		     "\"batches_total\":%.17g,\"sec_per_batch\":%.6g,\"updated\":%.3f}\n",
		     SATURN_PROGRESS_FORMAT, p->job_id, p->batches_done,
		     p->batches_total, p->sec_per_batch, p->updated) < 0)
		return NULL;
	return s;
}

static int get_num(json_object *o, const char *key, double *v, int required,
		   double max, saturn_error_t *err)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x)) {
		if (required)
			return saturn_error_set(err, "%s: missing", key);
		*v = 0;
		return 0;
	}
	if (!json_object_is_type(x, json_type_int) && !json_object_is_type(x, json_type_double))
		return saturn_error_set(err, "%s: not a number", key);
	*v = json_object_get_double(x);
	if (!isfinite(*v) || *v < 0)
		return saturn_error_set(err, "%s: must be a finite number >= 0", key);
	if (*v > max)
		return saturn_error_set(err, "%s: %.6g is beyond the limit of %.0f", key, *v, max);
	return 0;
}

int saturn_progress_parse(const char *buf, size_t len, saturn_progress_t *p,
			  saturn_error_t *err)
{
	json_tokener *tok;
	json_object *o = NULL, *f;
	double job = 0;
	int rc = -1;

	memset(p, 0, sizeof(*p));
	if (len > SATURN_PROGRESS_MAX_BYTES)
		return saturn_error_set(err, "progress: larger than %d bytes", SATURN_PROGRESS_MAX_BYTES);
	if (!(tok = json_tokener_new()))
		return saturn_error_set(err, "out of memory");
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o || !json_object_is_type(o, json_type_object)) {
		saturn_error_set(err, "progress: not a JSON object");
		goto out;
	}
	if (!json_object_object_get_ex(o, "format", &f) || !json_object_is_type(f, json_type_string) ||
	    strcmp(json_object_get_string(f), SATURN_PROGRESS_FORMAT) != 0) {
		saturn_error_set(err, "format: want \"%s\"", SATURN_PROGRESS_FORMAT);
		goto out;
	}
	/* the planner's limits (model.h): the remaining work derived from a
	 * progress file must be a runtime saturn_problem_check() accepts */
	if (get_num(o, "job_id", &job, 0, 4294967295.0, err) < 0 ||
	    get_num(o, "batches_done", &p->batches_done, 1, SATURN_MAX_BATCHES, err) < 0 ||
	    get_num(o, "batches_total", &p->batches_total, 0, SATURN_MAX_BATCHES, err) < 0 ||
	    get_num(o, "sec_per_batch", &p->sec_per_batch, 0, SATURN_MAX_RUNTIME_S, err) < 0 ||
	    get_num(o, "updated", &p->updated, 0, 1e11, err) < 0)
		goto out;
	p->job_id = (long)job;
	rc = 0;
out:
	json_object_put(o);
	json_tokener_free(tok);
	return rc;
}

int saturn_progress_write(const char *path, const saturn_progress_t *p,
			  saturn_error_t *err)
{
	char *json = saturn_progress_to_json(p);
	int rc;

	if (!json)
		return saturn_error_set(err, "%s: out of memory", path);
	/* mkostemp (O_EXCL) + rename: safe in a shared sticky folder */
	rc = saturn_write_file_atomic(path, json, strlen(json), err);
	free(json);
	return rc;
}

int saturn_progress_read(const char *path, long uid, saturn_progress_t *p,
			 saturn_error_t *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = !slash ? strdup(".") : slash == path ? strdup("/") :
			     strndup(path, (size_t)(slash - path));
	size_t len;
	char *buf = NULL;
	int dfd, rc = -1;

	if (!dir)
		return saturn_error_set(err, "%s: out of memory", path);
	/* the file itself through its folder: no link, FIFO or device */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		saturn_error_set(err, "%s: %s", path, strerror(errno));
	} else {
		buf = saturn_file_read_at(dfd, dir, slash ? slash + 1 : path, &uid, uid < 0 ? 0 : 1,
					  SATURN_PROGRESS_MAX_BYTES, &len, NULL, err);
		close(dfd);
	}
	if (buf) {
		rc = saturn_progress_parse(buf, len, p, err);
		if (rc < 0)
			saturn_error_prefix(err, "%s", path);
	}
	free(buf);
	free(dir);
	return rc;
}

int saturn_progress_remaining(const char *path, long uid, double *batches_left,
			      saturn_error_t *err)
{
	saturn_progress_t p;

	if (saturn_progress_read(path, uid, &p, err) < 0)
		return -1;
	if (p.batches_total <= 0)
		return saturn_error_set(err, "%s: batches_total: unknown, so the remaining work is too", path);
	*batches_left = p.batches_total > p.batches_done
				? p.batches_total - p.batches_done
				: 0;
	return 0;
}

void saturn_progress_summary(const saturn_progress_t *p, saturn_progress_obs_t *o)
{
	o->batches_done = p->batches_done;
	o->sec_per_batch = p->sec_per_batch;
	o->updated = p->updated;
	if (p->batches_total <= 0)
		o->batches_left = -1;
	else
		o->batches_left = p->batches_total > p->batches_done
					  ? p->batches_total - p->batches_done
					  : 0;
}

int saturn_progress_observe(const char *path, long uid, saturn_progress_obs_t *o,
			    saturn_error_t *err)
{
	saturn_progress_t p;

	if (saturn_progress_read(path, uid, &p, err) < 0)
		return -1;
	saturn_progress_summary(&p, o);
	return 0;
}

static int num(const char *kind, const char *key, const char *v, double *out,
	       saturn_error_t *err)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || (*end && *end != ' ' && *end != '\t') || !isfinite(*out) || *out < 0)
		return saturn_error_set(err, "%s: %s: not a number >= 0", kind, key);
	return 0;
}

int saturn_proto_parse(const char *line, saturn_proto_msg_t *m,
		       saturn_error_t *err)
{
	static const struct {
		const char *word;
		saturn_proto_kind_t kind;
	} kinds[] = {
		{"SATURN_PROGRESS", SATURN_PROTO_PROGRESS},
		{"SATURN_OOM", SATURN_PROTO_OOM},
		{"SATURN_CHECKPOINTED", SATURN_PROTO_CHECKPOINTED},
	};
	const char *p = NULL, *kind = NULL;

	memset(m, 0, sizeof(*m));
	m->batches_done = m->sec_per_batch = m->batches_total = m->peak_mem_mb = -1;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t l = strlen(kinds[i].word);

		if (strncmp(line, kinds[i].word, l) == 0 && (line[l] == ' ' || line[l] == '\t' || !line[l])) {
			m->kind = kinds[i].kind;
			kind = kinds[i].word;
			p = line + l;
		}
	}
	if (!kind)
		return SATURN_PROTO_NONE;
	while (*p) {
		const char *k, *eq;
		size_t kl;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		k = p;
		eq = strchr(k, '=');
		kl = strcspn(k, " \t=");
		if (!eq || eq != k + kl) {
			p += strcspn(p, " \t");
			continue; /* a bare word: ignored */
		}
		p = eq + 1;
		if (kl == 6 && strncmp(k, "reason", 6) == 0) {
			snprintf(m->reason, sizeof(m->reason), "%s", p);
			break;
		}
		if (kl == 12 && strncmp(k, "batches_done", 12) == 0) {
			if (num(kind, "batches_done", p, &m->batches_done, err) < 0)
				return -1;
		} else if (kl == 5 && strncmp(k, "batch", 5) == 0) {
			if (num(kind, "batch", p, &m->batches_done, err) < 0)
				return -1;
		} else if (kl == 13 && strncmp(k, "sec_per_batch", 13) == 0) {
			if (num(kind, "sec_per_batch", p, &m->sec_per_batch, err) < 0)
				return -1;
		} else if (kl == 13 && strncmp(k, "batches_total", 13) == 0) {
			if (num(kind, "batches_total", p, &m->batches_total, err) < 0)
				return -1;
		} else if (kl == 11 && strncmp(k, "peak_mem_mb", 11) == 0) {
			if (num(kind, "peak_mem_mb", p, &m->peak_mem_mb, err) < 0)
				return -1;
		}
		p += strcspn(p, " \t");
	}
	if (m->kind == SATURN_PROTO_PROGRESS && m->batches_done < 0)
		return saturn_error_set(err, "SATURN_PROGRESS: batches_done: missing");
	return m->kind;
}
