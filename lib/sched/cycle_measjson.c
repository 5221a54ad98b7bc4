/* cycle_measjson.c - the measurement parts of a cycle record
 * (cycle_json.h): the batches' measurement records and the users'
 * companion jobs given to the cycle, and the jobs and records it gave.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_json.h"

/* A record as {uid, batch, class, record} (record: its file text). */
static int entry_json(json_object *arr, const saturn_measset_entry_t *e)
{
	json_object *o = json_object_new_object();
	char *text = saturn_meas_rec_format(&e->rec);
	int rc = -1;

	if (text && sj_append(arr, o) == 0 &&
	    sj_put(o, "uid", json_object_new_int64(e->uid)) == 0 &&
	    sj_put(o, "batch", json_object_new_string(e->batch)) == 0 &&
	    sj_put(o, "class", json_object_new_string(e->klass)) == 0 &&
	    sj_put(o, "record", json_object_new_string(text)) == 0)
		rc = 0;
	else if (!text)
		json_object_put(o);
	free(text);
	return rc;
}

int cj_measset(const saturn_measset_t *ms, json_object **out)
{
	json_object *a = json_object_new_array();

	*out = NULL;
	for (int i = 0; a && ms && i < ms->n; i++)
		if (entry_json(a, &ms->e[i]) < 0)
			goto fail;
	if (!a)
		return -1;
	*out = a;
	return 0;
fail:
	json_object_put(a);
	return -1;
}

int cj_measset_parse(json_object *root, const char *ctx, saturn_measset_t *ms, saturn_error_t *err)
{
	json_object *o;
	int rc;
	char ectx[SATURN_ERROR_LEN / 2], batch[SATURN_BATCH_NAME_MAX + 1];
	char klass[SATURN_CLASS_NAME_MAX + 1];
	size_t n;

	memset(ms, 0, sizeof(*ms));
	/* the array field ctx of root, optional, bounded (cj_array) */
	if ((rc = cj_array(root, "", ctx, false, SATURN_CYCLE_MAX_PROFILES, &o, &n, err)) <= 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);
		saturn_meas_rec_t r;
		long long uid;
		char *text = NULL;

		snprintf(ectx, sizeof(ectx), "%s[%zu]", ctx, i);
		batch[0] = klass[0] = '\0';
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", ectx);
		if (sj_llong(e, ectx, "uid", true, -1, 4294967295LL, &uid, err) < 0 ||
		    cj_strbuf(e, ectx, "batch", true, batch, sizeof(batch), err) < 0 ||
		    cj_strbuf(e, ectx, "class", false, klass, sizeof(klass), err) < 0 ||
		    sj_str(e, ectx, "record", true, true, 1024 * 1024, &text, err) < 0)
			return -1;
		if (saturn_meas_rec_parse(text, &r) < 0) {
			free(text);
			return saturn_error_set(
			    err, "%s.record: %s", ectx,
			    errno == ENOMEM ? "out of memory"
					    : "not \"JOBID ARRAYID ROUNDS ITEMS\" and keys");
		}
		free(text);
		if (saturn_measset_index(ms, (long)uid, batch, klass) >= 0) {
			saturn_meas_rec_free(&r);
			return saturn_error_set(
			    err, "%s: a second record of uid %lld, batch %s, class \"%s\"", ectx,
			    uid, batch, klass);
		}
		if (saturn_measset_put(ms, (long)uid, batch, klass, &r) < 0) {
			saturn_meas_rec_free(&r);
			return saturn_error_set(err, "out of memory");
		}
	}
	return 0;
}

int cj_uidtab(const saturn_uidtab_t *t, json_object **out)
{
	json_object *a = json_object_new_array();

	*out = NULL;
	for (int i = 0; a && t && i < t->n; i++) {
		json_object *e = json_object_new_object();

		if (sj_append(a, e) < 0 ||
		    sj_put(e, "uid", json_object_new_int64(t->e[i].uid)) < 0 ||
		    sj_put(e, "n", json_object_new_int64((int64_t)t->e[i].amount)) < 0) {
			json_object_put(a);
			return -1;
		}
	}
	if (!a)
		return -1;
	*out = a;
	return 0;
}

int cj_uidtab_parse(json_object *root, const char *ctx, saturn_uidtab_t *t, saturn_error_t *err)
{
	json_object *o;
	int rc;
	char ectx[SATURN_ERROR_LEN / 2];
	size_t n;

	memset(t, 0, sizeof(*t));
	/* the array field ctx of root, optional, bounded (cj_array) */
	if ((rc = cj_array(root, "", ctx, false, SATURN_CYCLE_MAX_PROFILES, &o, &n, err)) <= 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);
		long long uid, amount;

		snprintf(ectx, sizeof(ectx), "%s[%zu]", ctx, i);
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", ectx);
		if (sj_llong(e, ectx, "uid", true, -1, 4294967295LL, &uid, err) < 0 ||
		    sj_llong(e, ectx, "n", true, 0, 1000000, &amount, err) < 0)
			return -1;
		if (saturn_uidtab_add(t, (long)uid, amount) < 0)
			return saturn_error_set(err, "out of memory");
	}
	return 0;
}

int cj_measure_out(const saturn_cycle_out_t *out, json_object *o)
{
	json_object *a, *v;

	/* only when there is something: records of cycles without
	 * measurement keep their form */
	if (out->nmeasure) {
		if (sj_put(o, "measure", a = json_object_new_array()) < 0)
			return -1;
		for (int i = 0; i < out->nmeasure; i++) {
			const saturn_cycle_measure_t *m = &out->measure[i];
			json_object *e = json_object_new_object(), *t;

			if (sj_append(a, e) < 0 ||
			    sj_put(e, "uid", json_object_new_int64(m->uid)) < 0 ||
			    sj_put(e, "batch", json_object_new_string(m->batch)) < 0 ||
			    sj_put(e, "class", json_object_new_string(m->klass)) < 0 ||
			    sj_put(e, "owner", json_object_new_int(m->owner)) < 0 ||
			    sj_put(e, "gpus", json_object_new_int(m->gpus)) < 0 ||
			    sj_put(e, "nodes", json_object_new_int(m->nodes)) < 0 ||
			    sj_put(e, "list", json_object_new_string(m->list ? m->list : "")) < 0 ||
			    sj_put(e, "tasks", t = json_object_new_array()) < 0)
				return -1;
			for (int k = 0; k < m->ntasks; k++)
				if (sj_append(t, json_object_new_int(m->tasks[k])) < 0)
					return -1;
		}
	}
	if (out->meas_records.n) {
		if (cj_measset(&out->meas_records, &v) < 0 || sj_put(o, "measure_records", v) < 0)
			return -1;
	}
	return 0;
}
