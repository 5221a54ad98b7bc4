/* cycle_profjson.c - the profiler parts of a cycle record (cycle_json.h):
 * what the plugin found about each batch's profiler jobs, and the jobs,
 * holds and records the cycle gave.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_json.h"

static const char *const state_words[] = {"unknown", "ended", "pending", "running"};

static json_object *rec_json(const saturn_prof_rec_t *r)
{
	char buf[64];

	saturn_prof_rec_format(r, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static json_object *job_json(const saturn_companion_t *c)
{
	json_object *o = json_object_new_object();
	int st = (int)c->state;

	if (sj_put(o, "job_id", json_object_new_int64(c->job_id)) < 0 ||
	    sj_put(o, "state", json_object_new_string(st >= 0 && st <= 3 ? state_words[st] : "?")) <
		0 ||
	    sj_put(o, "pending_since", sj_new_num(c->pending_since)) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int cj_profstate(const saturn_profstate_t *ps, json_object **out)
{
	json_object *a = json_object_new_array();

	*out = NULL;
	for (int i = 0; a && ps && i < ps->n; i++) {
		const saturn_profstate_entry_t *e = &ps->e[i];
		json_object *o = json_object_new_object(), *cl;

		if (sj_append(a, o) < 0 || sj_put(o, "uid", json_object_new_int64(e->uid)) < 0 ||
		    sj_put(o, "batch", json_object_new_string(e->batch)) < 0 ||
		    sj_put(o, "exists", json_object_new_int(e->exists)) < 0 ||
		    sj_put(o, "record", rec_json(&e->rec)) < 0 ||
		    sj_put(o, "job", job_json(&e->job)) < 0 ||
		    sj_put(o, "classes", cl = json_object_new_array()) < 0)
			goto fail;
		for (int k = 0; k < e->nclass && k < SATURN_CLASS_RULES_MAX; k++) {
			json_object *c = job_json(&e->cls[k].job);

			if (sj_append(cl, c) < 0 ||
			    sj_put(c, "class", json_object_new_string(e->cls[k].klass)) < 0)
				goto fail;
		}
	}
	if (!a)
		return -1;
	*out = a;
	return 0;
fail:
	json_object_put(a);
	return -1;
}

static int job_parse(json_object *o, const char *ctx, saturn_companion_t *c, saturn_error_t *err)
{
	long long id;
	char *st = NULL;
	int k;

	memset(c, 0, sizeof(*c));
	if (!json_object_is_type(o, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_llong(o, ctx, "job_id", true, 0, 4294967295LL, &id, err) < 0 ||
	    sj_str(o, ctx, "state", true, true, 16, &st, err) < 0 ||
	    sj_num(o, ctx, "pending_since", false, 0, false, &c->pending_since, err) < 0) {
		free(st);
		return -1;
	}
	c->job_id = (uint32_t)id;
	for (k = 0; k < 4 && strcmp(st, state_words[k]); k++)
		;
	free(st);
	if (k == 4)
		return saturn_error_set(
		    err, "%s.state: must be \"unknown\", \"ended\", \"pending\" or \"running\"",
		    ctx);
	c->state = (saturn_companion_state_t)k;
	return 0;
}

int cj_profstate_parse(json_object *root, const char *ctx, saturn_profstate_t *ps,
		       saturn_error_t *err)
{
	json_object *o;
	int rc;
	char ectx[SATURN_ERROR_LEN / 2], cctx[SATURN_ERROR_LEN / 2];
	size_t n;

	memset(ps, 0, sizeof(*ps));
	/* the array field ctx of root, optional, bounded (cj_array) */
	if ((rc = cj_array(root, "", ctx, false, SATURN_CYCLE_MAX_PROFILES, &o, &n, err)) <= 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i), *v, *cl;
		saturn_profstate_entry_t x;
		long long uid;
		char *rec = NULL;
		size_t nc = 0;

		memset(&x, 0, sizeof(x));
		snprintf(ectx, sizeof(ectx), "%s[%zu]", ctx, i);
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", ectx);
		if (sj_llong(e, ectx, "uid", true, -1, 4294967295LL, &uid, err) < 0 ||
		    cj_strbuf(e, ectx, "batch", true, x.batch, sizeof(x.batch), err) < 0 ||
		    sj_int(e, ectx, "exists", true, 0, 1, &x.exists, err) < 0 ||
		    sj_str(e, ectx, "record", true, true, 64, &rec, err) < 0)
			return -1;
		x.uid = (long)uid;
		if (saturn_prof_rec_parse(rec, &x.rec) < 0) {
			free(rec);
			return saturn_error_set(err, "%s.record: not \"JOBID ARRAYID[ fallback]\"",
						ectx);
		}
		free(rec);
		snprintf(cctx, sizeof(cctx), "%s.job", ectx);
		if (sj_get(e, ectx, "job", true, json_type_object, &v, err) < 0 ||
		    job_parse(v, cctx, &x.job, err) < 0 ||
		    cj_array(e, ectx, "classes", false, SATURN_CLASS_RULES_MAX, &cl, &nc, err) < 0)
			return -1;
		for (size_t k = 0; cl && k < nc; k++) {
			json_object *c = json_object_array_get_idx(cl, k);

			snprintf(cctx, sizeof(cctx), "%s.classes[%zu]", ectx, k);
			if (job_parse(c, cctx, &x.cls[k].job, err) < 0 ||
			    cj_strbuf(c, cctx, "class", true, x.cls[k].klass,
				      sizeof(x.cls[k].klass), err) < 0)
				return -1;
		}
		x.nclass = (int)nc;
		if (saturn_profstate_find(ps, x.uid, x.batch))
			return saturn_error_set(err, "%s: a second entry of uid %lld, batch %s",
						ectx, uid, x.batch);
		if (saturn_profstate_put(ps, &x) < 0)
			return saturn_error_set(err, "out of memory");
	}
	return 0;
}

int cj_profiler_out(const saturn_cycle_out_t *out, json_object *o)
{
	json_object *a;

	/* only when there is something: records of cycles without profiler
	 * jobs keep their form */
	if (out->nprofilers) {
		if (sj_put(o, "profilers", a = json_object_new_array()) < 0)
			return -1;
		for (int i = 0; i < out->nprofilers; i++) {
			const saturn_cycle_profiler_t *p = &out->profilers[i];
			json_object *e = json_object_new_object();

			if (sj_append(a, e) < 0 ||
			    sj_put(e, "uid", json_object_new_int64(p->uid)) < 0 ||
			    sj_put(e, "batch", json_object_new_string(p->batch)) < 0 ||
			    sj_put(e, "owner", json_object_new_int64(p->owner)) < 0 ||
			    sj_put(e, "gpus", json_object_new_int(p->gpus)) < 0 ||
			    sj_put(e, "task_ids",
				   json_object_new_string(p->task_ids ? p->task_ids : "")) < 0)
				return -1;
		}
	}
	if (out->nprof_holds) {
		if (sj_put(o, "profiler_holds", a = json_object_new_array()) < 0)
			return -1;
		for (int i = 0; i < out->nprof_holds; i++) {
			const saturn_cycle_prof_hold_t *h = &out->prof_holds[i];
			json_object *e = json_object_new_object();

			if (sj_append(a, e) < 0 ||
			    sj_put(e, "job_id", json_object_new_int64(h->job.job_id)) < 0 ||
			    sj_put(e, "task_id", json_object_new_int(h->job.task_id)) < 0 ||
			    sj_put(e, "reason", json_object_new_string(h->reason)) < 0 ||
			    sj_put(e, "profiler", json_object_new_int(h->profiler)) < 0)
				return -1;
		}
	}
	if (out->nprof_records) {
		if (sj_put(o, "profiler_records", a = json_object_new_array()) < 0)
			return -1;
		for (int i = 0; i < out->nprof_records; i++) {
			const saturn_cycle_prof_rec_t *r = &out->prof_records[i];
			json_object *e = json_object_new_object();

			if (sj_append(a, e) < 0 ||
			    sj_put(e, "uid", json_object_new_int64(r->uid)) < 0 ||
			    sj_put(e, "batch", json_object_new_string(r->batch)) < 0 ||
			    sj_put(e, "record", rec_json(&r->rec)) < 0)
				return -1;
		}
	}
	return 0;
}
