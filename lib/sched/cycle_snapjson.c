/* cycle_snapjson.c - the snapshot of a cycle record (cycle_record.h) as
 * JSON and back, and the small json-c helpers the other cycle_*json files
 * share (cycle_json.h).
 *
 * Jobs, nodes and busy entries are written from one table of fields each
 * (name, type, offset, range), so that writing and reading cannot drift
 * apart; the arrays inside a job (more_node, more_mask, limits) by hand.
 * Every field of saturn_snap_job_t is in the table or handled below it:
 * tests/sched/test_cycle_record.c fills each with a distinct value and
 * compares the round trip byte for byte.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_json.h"

/* --- helpers ------------------------------------------------------------ */

int cj_put(json_object *obj, const char *key, json_object *val)
{
	if (!obj || json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

int cj_append(json_object *arr, json_object *val)
{
	if (!arr || json_object_array_add(arr, val) < 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

json_object *cj_hex64(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_object_new_string(buf);
}

int cj_as_hex64(json_object *v, const char *what, uint64_t *out, saturn_error_t *err)
{
	const char *s;
	size_t n;
	uint64_t x = 0;

	if (!json_object_is_type(v, json_type_string))
		return saturn_error_set(err, "%s: must be a string \"0x...\" (hexadecimal)", what);
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x' || strlen(s) != n)
		return saturn_error_set(err, "%s: must be \"0x\" and 1 to 16 hexadecimal digits",
					what);
	for (size_t i = 2; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (d < 0)
			return saturn_error_set(
			    err, "%s: must be \"0x\" and 1 to 16 hexadecimal digits", what);
		x = x << 4 | (uint64_t)d;
	}
	*out = x;
	return 0;
}

int cj_array(json_object *obj, const char *ctx, const char *key, bool required, size_t max,
	     json_object **arr, size_t *n, saturn_error_t *err)
{
	int rc = sj_get(obj, ctx, key, required, json_type_array, arr, err);

	*n = 0;
	if (rc <= 0)
		return rc;
	*n = json_object_array_length(*arr);
	if (*n > max)
		return saturn_error_set(err, "%s%s%s: more than %zu entries", ctx,
					ctx[0] ? "." : "", key, max);
	return 1;
}

int cj_strbuf(json_object *obj, const char *ctx, const char *key, bool required, char *dst,
	      size_t size, saturn_error_t *err)
{
	char *s = NULL;
	int rc = sj_str(obj, ctx, key, required, false, size - 1, &s, err);

	if (rc > 0)
		memcpy(dst, s, strlen(s) + 1);
	free(s);
	return rc;
}

json_object *cj_from_text(const char *text)
{
	if (!text)
		return NULL;
	return sj_parse(text, strlen(text), NULL);
}

/* --- field tables ------------------------------------------------------- */

typedef enum ftype {
	F_U32,	 /* uint32_t, a number */
	F_INT,	 /* int in [lo, hi] */
	F_LONG,	 /* long in [lo, hi] */
	F_DBL,	 /* double, any finite */
	F_U64,	 /* uint64_t, "0x..." */
	F_STR,	 /* char[size] */
	F_STATE, /* saturn_snap_state_t as "held", "released", "running" */
} ftype_t;

typedef struct field {
	const char *key;
	ftype_t t;
	size_t off, size;
	long long lo, hi;
} field_t;

#define FLD(type, k, t, m, lo, hi)                                                                 \
	{                                                                                          \
		k, t, offsetof(type, m), sizeof(((type *)0)->m), lo, hi                            \
	}
#define FJ(k, t, m, lo, hi) FLD(saturn_snap_job_t, k, t, m, lo, hi)
#define FN(k, t, m, lo, hi) FLD(saturn_snap_node_t, k, t, m, lo, hi)
#define FB(k, t, m, lo, hi) FLD(saturn_snap_busy_t, k, t, m, lo, hi)

/* node indices are checked against the snapshot's nodes after reading */
static const field_t job_fields[] = {
    FJ("job_id", F_U32, job_id, 0, 0),
    FJ("array_job_id", F_U32, array_job_id, 0, 0),
    FJ("task_id", F_INT, task_id, -1, INT_MAX),
    FJ("batch", F_STR, batch, 0, 0),
    FJ("uid", F_LONG, uid, -1, 4294967295LL),
    FJ("state", F_STATE, state, 0, 0),
    FJ("req_gpus", F_INT, req_gpus, 0, INT_MAX),
    FJ("time_limit_s", F_DBL, time_limit_s, 0, 0),
    FJ("submit_time", F_DBL, submit_time, 0, 0),
    FJ("start_time", F_DBL, start_time, 0, 0),
    FJ("node", F_INT, node, -1, SATURN_CYCLE_MAX_NODES - 1),
    FJ("gpu_mask", F_U64, gpu_mask, 0, 0),
    FJ("technique", F_STR, technique, 0, 0),
    FJ("gpus", F_INT, gpus, 0, INT_MAX),
    FJ("batches_left", F_DBL, batches_left, 0, 0),
    FJ("batches_done", F_DBL, batches_done, 0, 0),
    FJ("progress_spb", F_DBL, progress_spb, 0, 0),
    FJ("progress_updated", F_DBL, progress_updated, 0, 0),
    FJ("obs_spb", F_DBL, obs_spb, 0, 0),
    FJ("prior_spb", F_DBL, prior_spb, 0, 0),
    FJ("first_report", F_DBL, first_report, 0, 0),
    FJ("part_mask", F_U64, part_mask, 0, 0),
    FJ("pinned", F_STR, pinned, 0, 0),
    FJ("pinned_state", F_STR, pinned_state, 0, 0),
    FJ("planned", F_INT, planned, INT_MIN, INT_MAX),
    FJ("requeued", F_INT, requeued, INT_MIN, INT_MAX),
    FJ("exit_held", F_INT, exit_held, INT_MIN, INT_MAX),
    FJ("begin_time", F_DBL, begin_time, 0, 0),
    FJ("not_before", F_DBL, not_before, 0, 0),
    FJ("reconfigure", F_INT, reconfigure, -1, 1),
    FJ("requeue", F_INT, requeue, INT_MIN, INT_MAX),
    FJ("restarts", F_INT, restarts, INT_MIN, INT_MAX),
    FJ("req_nodes", F_INT, req_nodes, 0, INT_MAX),
    FJ("nnodes", F_INT, nnodes, 0, SATURN_SNAP_MAX_NODES),
    /* more_node, more_mask: below */
    FJ("part_max_nodes", F_INT, part_max_nodes, 0, INT_MAX),
    FJ("max_job_gpus", F_INT, max_job_gpus, 0, INT_MAX),
    FJ("max_node_gpus", F_INT, max_node_gpus, 0, INT_MAX),
    FJ("max_job_nodes", F_INT, max_job_nodes, 0, INT_MAX),
    FJ("gpu_type", F_STR, gpu_type, 0, 0),
    FJ("constraint", F_STR, constraint, 0, 0),
    FJ("constraint_bad", F_INT, constraint_bad, INT_MIN, INT_MAX),
    FJ("prio", F_DBL, prio, 0, 0),
    /* limits: below */
    FJ("released_at", F_DBL, released_at, 0, 0),
    FJ("bounces", F_INT, bounces, INT_MIN, INT_MAX),
    FJ("overran", F_INT, overran, INT_MIN, INT_MAX),
    FJ("never", F_STR, never, 0, 0),
    FJ("excused", F_INT, excused, INT_MIN, INT_MAX),
    FJ("charged_from", F_DBL, charged_from, 0, 0),
    FJ("requeued_at", F_DBL, requeued_at, 0, 0),
};

static const field_t node_fields[] = {
    FN("name", F_STR, name, 0, 0),	     FN("gpus", F_INT, gpus, 0, SATURN_MAX_GPUS_PER_NODE),
    FN("part_mask", F_U64, part_mask, 0, 0), FN("gpu_types", F_STR, gpu_types, 0, 0),
    FN("link", F_STR, link, 0, 0),	     FN("features", F_STR, features, 0, 0),
    FN("class", F_STR, klass, 0, 0),
};

static const field_t busy_fields[] = {
    FB("node", F_INT, node, 0, SATURN_CYCLE_MAX_NODES - 1),
    FB("gpu_mask", F_U64, gpu_mask, 0, 0),
    FB("until", F_DBL, until, 0, 0),
};

#define NFIELDS(t) ((int)(sizeof(t) / sizeof(t[0])))

static const char *const state_words[] = {"held", "released", "running"};

static json_object *field_json(const void *base, const field_t *f)
{
	const char *p = (const char *)base + f->off;

	switch (f->t) {
	case F_U32:
		return json_object_new_int64(*(const uint32_t *)p);
	case F_INT:
		return json_object_new_int(*(const int *)p);
	case F_LONG:
		return json_object_new_int64(*(const long *)p);
	case F_DBL:
		return sj_new_num(*(const double *)p);
	case F_U64:
		return cj_hex64(*(const uint64_t *)p);
	case F_STR:
		return json_object_new_string_len(p, (int)strnlen(p, f->size));
	case F_STATE: {
		int st = (int)*(const saturn_snap_state_t *)p;

		return json_object_new_string(st >= 0 && st <= 2 ? state_words[st] : "?");
	}
	}
	return NULL;
}

static int fields_json(json_object *o, const void *base, const field_t *f, int n)
{
	for (int i = 0; i < n; i++)
		if (sj_put(o, f[i].key, field_json(base, &f[i])) < 0)
			return -1;
	return 0;
}

static int field_parse(json_object *o, const char *ctx, void *base, const field_t *f,
		       saturn_error_t *err)
{
	char *p = (char *)base + f->off, what[SATURN_ERROR_LEN / 2];
	json_object *v;
	long long x;
	double d;
	int rc = 0;

	switch (f->t) {
	case F_U32:
		if ((rc = sj_llong(o, ctx, f->key, false, 0, UINT32_MAX, &x, err)) > 0)
			*(uint32_t *)p = (uint32_t)x;
		break;
	case F_INT:
		if ((rc = sj_llong(o, ctx, f->key, false, f->lo, f->hi, &x, err)) > 0)
			*(int *)p = (int)x;
		break;
	case F_LONG:
		if ((rc = sj_llong(o, ctx, f->key, false, f->lo, f->hi, &x, err)) > 0)
			*(long *)p = (long)x;
		break;
	case F_DBL:
		if ((rc = sj_num(o, ctx, f->key, false, -DBL_MAX, false, &d, err)) > 0)
			*(double *)p = d;
		break;
	case F_U64:
		if ((rc = sj_get(o, ctx, f->key, false, json_type_null, &v, err)) > 0) {
			snprintf(what, sizeof(what), "%s.%s", ctx, f->key);
			rc = cj_as_hex64(v, what, (uint64_t *)p, err);
		}
		break;
	case F_STR:
		rc = cj_strbuf(o, ctx, f->key, false, p, f->size, err);
		break;
	case F_STATE: {
		char *s = NULL;
		int k;

		if ((rc = sj_str(o, ctx, f->key, false, false, 16, &s, err)) <= 0) {
			if (rc < 0)
				saturn_error_set(
				    err, "%s.%s: must be \"held\", \"released\" or \"running\"",
				    ctx, f->key);
			break;
		}
		for (k = 0; k < 3 && strcmp(s, state_words[k]); k++)
			;
		free(s);
		if (k == 3)
			return saturn_error_set(
			    err, "%s.%s: must be \"held\", \"released\" or \"running\"", ctx,
			    f->key);
		*(saturn_snap_state_t *)p = (saturn_snap_state_t)k;
		break;
	}
	}
	return rc < 0 ? -1 : 0;
}

static int fields_parse(json_object *o, const char *ctx, void *base, const field_t *f, int n,
			saturn_error_t *err)
{
	if (!json_object_is_type(o, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	for (int i = 0; i < n; i++)
		if (field_parse(o, ctx, base, &f[i], err) < 0)
			return -1;
	return 0;
}

/* --- jobs: the arrays inside ------------------------------------------- */

static int job_arrays_json(json_object *o, const saturn_snap_job_t *j)
{
	json_object *mn = json_object_new_array(), *mm = json_object_new_array(), *lim;
	int k = j->nnodes - 1, last = -1;

	if (k < 0)
		k = 0;
	if (k > SATURN_SNAP_MAX_NODES - 1)
		k = SATURN_SNAP_MAX_NODES - 1;
	if (sj_put(o, "more_node", mn) < 0 || sj_put(o, "more_mask", mm) < 0)
		return -1;
	for (int i = 0; i < k; i++)
		if (sj_append(mn, json_object_new_int(j->more_node[i])) < 0 ||
		    sj_append(mm, cj_hex64(j->more_mask[i])) < 0)
			return -1;
	/* the slots up to the last one in use (trailing empty slots left out) */
	for (int i = 0; i < SATURN_SNAP_LIMITS; i++) {
		const saturn_snap_limit_t *l = &j->limits[i];

		if (l->key || l->max_gpus || l->max_jobs || l->used_gpus || l->used_jobs)
			last = i;
	}
	lim = json_object_new_array();
	if (sj_put(o, "limits", lim) < 0)
		return -1;
	for (int i = 0; i <= last; i++) {
		const saturn_snap_limit_t *l = &j->limits[i];
		json_object *e = json_object_new_object();

		if (sj_append(lim, e) < 0 || sj_put(e, "key", cj_hex64(l->key)) < 0 ||
		    sj_put(e, "max_gpus", json_object_new_int(l->max_gpus)) < 0 ||
		    sj_put(e, "max_jobs", json_object_new_int(l->max_jobs)) < 0 ||
		    sj_put(e, "used_gpus", json_object_new_int(l->used_gpus)) < 0 ||
		    sj_put(e, "used_jobs", json_object_new_int(l->used_jobs)) < 0)
			return -1;
	}
	return 0;
}

static int job_arrays_parse(json_object *o, const char *ctx, saturn_snap_job_t *j, int nnodes,
			    saturn_error_t *err)
{
	char what[SATURN_ERROR_LEN / 2];
	json_object *mn, *mm, *lim;
	size_t n, nm, nl;

	if (cj_array(o, ctx, "more_node", false, SATURN_SNAP_MAX_NODES - 1, &mn, &n, err) < 0 ||
	    cj_array(o, ctx, "more_mask", false, SATURN_SNAP_MAX_NODES - 1, &mm, &nm, err) < 0 ||
	    cj_array(o, ctx, "limits", false, SATURN_SNAP_LIMITS, &lim, &nl, err) < 0)
		return -1;
	if (nm != n)
		return saturn_error_set(err, "%s.more_mask: %zu entries for %zu in more_node", ctx,
					nm, n);
	for (size_t i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "%s.more_node[%zu]", ctx, i);
		if (sj_as_int(json_object_array_get_idx(mn, i), what, -1, nnodes - 1,
			      &j->more_node[i], err) < 0)
			return -1;
		snprintf(what, sizeof(what), "%s.more_mask[%zu]", ctx, i);
		if (cj_as_hex64(json_object_array_get_idx(mm, i), what, &j->more_mask[i], err) < 0)
			return -1;
	}
	for (size_t i = 0; i < nl; i++) {
		json_object *e = json_object_array_get_idx(lim, i), *v;
		saturn_snap_limit_t *l = &j->limits[i];

		snprintf(what, sizeof(what), "%s.limits[%zu]", ctx, i);
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", what);
		if (sj_get(e, what, "key", false, json_type_null, &v, err) < 0 ||
		    sj_int(e, what, "max_gpus", false, INT_MIN, INT_MAX, &l->max_gpus, err) < 0 ||
		    sj_int(e, what, "max_jobs", false, INT_MIN, INT_MAX, &l->max_jobs, err) < 0 ||
		    sj_int(e, what, "used_gpus", false, INT_MIN, INT_MAX, &l->used_gpus, err) < 0 ||
		    sj_int(e, what, "used_jobs", false, INT_MIN, INT_MAX, &l->used_jobs, err) < 0)
			return -1;
		if (v) {
			char kw[SATURN_ERROR_LEN / 2];

			snprintf(kw, sizeof(kw), "%s.key", what);
			if (cj_as_hex64(v, kw, &l->key, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* --- the snapshot ------------------------------------------------------- */

int cj_snapshot(const saturn_snapshot_t *s, json_object **out)
{
	json_object *o = json_object_new_object(), *a;

	*out = NULL;
	if (sj_put(o, "now", sj_new_num(s->now)) < 0)
		goto fail;
	if (sj_put(o, "nodes", a = json_object_new_array()) < 0)
		goto fail;
	for (int i = 0; i < s->nnodes; i++) {
		json_object *e = json_object_new_object();

		if (sj_append(a, e) < 0 ||
		    fields_json(e, &s->nodes[i], node_fields, NFIELDS(node_fields)) < 0)
			goto fail;
	}
	if (sj_put(o, "busy", a = json_object_new_array()) < 0)
		goto fail;
	for (int i = 0; i < s->nbusy; i++) {
		json_object *e = json_object_new_object();

		if (sj_append(a, e) < 0 ||
		    fields_json(e, &s->busy[i], busy_fields, NFIELDS(busy_fields)) < 0)
			goto fail;
	}
	if (sj_put(o, "jobs", a = json_object_new_array()) < 0)
		goto fail;
	for (int i = 0; i < s->njobs; i++) {
		json_object *e = json_object_new_object();

		if (sj_append(a, e) < 0 ||
		    fields_json(e, &s->jobs[i], job_fields, NFIELDS(job_fields)) < 0 ||
		    job_arrays_json(e, &s->jobs[i]) < 0)
			goto fail;
	}
	if (sj_put(o, "max_tasks", json_object_new_int(s->max_tasks)) < 0 ||
	    sj_put(o, "measure_multinode", json_object_new_int(s->measure_multinode)) < 0)
		goto fail;
	*out = o;
	return 0;
fail:
	json_object_put(o);
	return -1;
}

int cj_snapshot_parse(json_object *o, const char *ctx, saturn_snapshot_t *s, saturn_error_t *err)
{
	char ectx[SATURN_ERROR_LEN / 2];
	json_object *nodes, *busy, *jobs;
	size_t nn, nb, nj;

	if (!json_object_is_type(o, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_num(o, ctx, "now", true, -DBL_MAX, false, &s->now, err) < 0 ||
	    cj_array(o, ctx, "nodes", true, SATURN_CYCLE_MAX_NODES, &nodes, &nn, err) < 0 ||
	    cj_array(o, ctx, "busy", false, SATURN_CYCLE_MAX_BUSY, &busy, &nb, err) < 0 ||
	    cj_array(o, ctx, "jobs", true, SATURN_CYCLE_MAX_JOBS, &jobs, &nj, err) < 0 ||
	    sj_int(o, ctx, "max_tasks", false, 0, INT_MAX, &s->max_tasks, err) < 0 ||
	    sj_int(o, ctx, "measure_multinode", false, INT_MIN, INT_MAX, &s->measure_multinode,
		   err) < 0)
		return -1;
	for (size_t i = 0; i < nn; i++) {
		saturn_snap_node_t *n = saturn_snapshot_add_node(s);

		snprintf(ectx, sizeof(ectx), "%s.nodes[%zu]", ctx, i);
		if (!n)
			return saturn_error_set(err, "out of memory");
		if (fields_parse(json_object_array_get_idx(nodes, i), ectx, n, node_fields,
				 NFIELDS(node_fields), err) < 0)
			return -1;
	}
	for (size_t i = 0; i < nb; i++) {
		saturn_snap_busy_t *b = saturn_snapshot_add_busy(s);

		snprintf(ectx, sizeof(ectx), "%s.busy[%zu]", ctx, i);
		if (!b)
			return saturn_error_set(err, "out of memory");
		if (fields_parse(json_object_array_get_idx(busy, i), ectx, b, busy_fields,
				 NFIELDS(busy_fields), err) < 0)
			return -1;
		if (b->node >= s->nnodes)
			return saturn_error_set(err,
						"%s.node: %d is not a node of the snapshot (%d)",
						ectx, b->node, s->nnodes);
	}
	for (size_t i = 0; i < nj; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);

		snprintf(ectx, sizeof(ectx), "%s.jobs[%zu]", ctx, i);
		if (!j)
			return saturn_error_set(err, "out of memory");
		if (fields_parse(json_object_array_get_idx(jobs, i), ectx, j, job_fields,
				 NFIELDS(job_fields), err) < 0 ||
		    job_arrays_parse(json_object_array_get_idx(jobs, i), ectx, j, s->nnodes, err) <
			0)
			return -1;
		if (j->node >= s->nnodes)
			return saturn_error_set(err,
						"%s.node: %d is not a node of the snapshot (%d)",
						ectx, j->node, s->nnodes);
	}
	return 0;
}

char *saturn_snapshot_to_json(const saturn_snapshot_t *s)
{
	json_object *o;
	char *text;

	if (cj_snapshot(s, &o) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	text = sj_to_string(o, false);
	json_object_put(o);
	return text;
}

saturn_snapshot_t *saturn_snapshot_from_json(const char *buf, size_t len, saturn_error_t *err)
{
	json_object *o = sj_parse(buf, len, err);
	saturn_snapshot_t *s;

	if (!o)
		return NULL;
	s = saturn_snapshot_create();
	if (!s) {
		saturn_error_set(err, "out of memory");
	} else if (cj_snapshot_parse(o, "snapshot", s, err) < 0) {
		saturn_snapshot_destroy(s);
		s = NULL;
	}
	json_object_put(o);
	return s;
}
