/* cycle_statejson.c - the parts of a cycle record besides the snapshot
 * (cycle_json.h): plans with their indices, the runtime feedback table,
 * the state a cycle leaves, the profile set, the planner tape and the
 * outputs.
 *
 * A plan is saturn_plan_to_json's saturn-plan/1 (or /2) object with one
 * more object per entry, "index": the task, option and node indices
 * (and more_nodes) the planner filled. saturn-plan/1 carries names only,
 * and the cycle uses the indices of the plans the planner returns, so a
 * played-back plan must have them as recorded.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_json.h"
#include "formats.h"

/* --- plans -------------------------------------------------------------- */

static json_object *index_json(const saturn_assign_t *a)
{
	json_object *o = json_object_new_object(), *mn;
	int k = saturn_assign_nnodes(a);

	if (sj_put(o, "task", json_object_new_int(a->task)) < 0 ||
	    sj_put(o, "option", json_object_new_int(a->option)) < 0 ||
	    sj_put(o, "node", json_object_new_int(a->node)) < 0)
		goto fail;
	if (k > 1 && a->more_nodes) {
		if (sj_put(o, "more_nodes", mn = json_object_new_array()) < 0)
			goto fail;
		for (int j = 0; j + 1 < k; j++)
			if (sj_append(mn, json_object_new_int(a->more_nodes[j])) < 0)
				goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

int cj_plan(const saturn_plan_t *plan, json_object **out)
{
	json_object *o, *tasks;
	char *text;

	*out = NULL;
	if (!plan)
		return 0;
	text = saturn_plan_to_json(plan, 0);
	o = cj_from_text(text);
	free(text);
	if (!o || !json_object_object_get_ex(o, "tasks", &tasks) ||
	    json_object_array_length(tasks) != (size_t)plan->nassign)
		goto fail;
	for (int i = 0; i < plan->nassign; i++)
		if (sj_put(json_object_array_get_idx(tasks, i), "index",
			   index_json(&plan->assign[i])) < 0)
			goto fail;
	*out = o;
	return 0;
fail:
	json_object_put(o);
	return -1;
}

static int index_parse(json_object *e, const char *ctx, saturn_assign_t *a, saturn_error_t *err)
{
	char ictx[SATURN_ERROR_LEN / 2], what[SATURN_ERROR_LEN / 2];
	json_object *ix, *mn;
	size_t n;
	int k = saturn_assign_nnodes(a), rc;

	rc = sj_get(e, ctx, "index", false, json_type_object, &ix, err);
	if (rc <= 0)
		return rc;
	snprintf(ictx, sizeof(ictx), "%s.index", ctx);
	if (sj_int(ix, ictx, "task", false, -1, SATURN_MAX_TASKS - 1, &a->task, err) < 0 ||
	    sj_int(ix, ictx, "option", false, -1, SATURN_MAX_OPTIONS - 1, &a->option, err) < 0 ||
	    sj_int(ix, ictx, "node", false, -1, SATURN_MAX_NODES - 1, &a->node, err) < 0 ||
	    cj_array(ix, ictx, "more_nodes", false, SATURN_MAX_TASK_NODES, &mn, &n, err) < 0)
		return -1;
	if (!mn)
		return 0;
	if (k < 2 || !a->more_nodes || n != (size_t)(k - 1))
		return saturn_error_set(
		    err, "%s.more_nodes: %zu entries for an entry on %d node(s)", ictx, n, k);
	for (size_t j = 0; j < n; j++) {
		snprintf(what, sizeof(what), "%s.more_nodes[%zu]", ictx, j);
		if (sj_as_int(json_object_array_get_idx(mn, j), what, -1, SATURN_MAX_NODES - 1,
			      &a->more_nodes[j], err) < 0)
			return -1;
	}
	return 0;
}

int cj_plan_parse(json_object *o, const char *ctx, saturn_plan_t **plan, saturn_error_t *err)
{
	json_object *tasks;
	saturn_plan_t *p;
	char *text;

	*plan = NULL;
	if (!o)
		return 0;
	if (!json_object_is_type(o, json_type_object))
		return saturn_error_set(err, "%s: must be an object (a plan) or null", ctx);
	text = sj_to_string(o, false);
	if (!text)
		return saturn_error_set(err, "out of memory");
	p = saturn_plan_parse(text, strlen(text), err);
	free(text);
	if (!p)
		return saturn_error_prefix(err, "%s", ctx);
	/* saturn_plan_parse has checked that tasks is an array of nassign objects */
	json_object_object_get_ex(o, "tasks", &tasks);
	for (int i = 0; i < p->nassign; i++) {
		char ectx[SATURN_ERROR_LEN / 2];

		snprintf(ectx, sizeof(ectx), "%s.tasks[%d]", ctx, i);
		if (index_parse(json_object_array_get_idx(tasks, i), ectx, &p->assign[i], err) <
		    0) {
			saturn_plan_destroy(p);
			return -1;
		}
	}
	*plan = p;
	return 0;
}

/* --- runtime feedback --------------------------------------------------- */

static int fb_json(const saturn_fb_t *fb, json_object **out)
{
	json_object *o, *corr, *jobs;

	*out = NULL;
	if (!fb)
		return 0;
	o = json_object_new_object();
	if (sj_put(o, "corr", corr = json_object_new_array()) < 0)
		goto fail;
	for (int i = 0; i < fb->ncorr; i++) {
		const saturn_fb_corr_t *c = &fb->corr[i];
		json_object *e = json_object_new_object();

		if (sj_append(corr, e) < 0 ||
		    sj_put(e, "uid", json_object_new_int64(c->key.uid)) < 0 ||
		    sj_put(e, "batch", json_object_new_string(c->key.batch)) < 0 ||
		    sj_put(e, "signature", json_object_new_string(c->key.signature)) < 0 ||
		    sj_put(e, "technique", json_object_new_string(c->key.technique)) < 0 ||
		    sj_put(e, "gpus", json_object_new_int(c->key.gpus)) < 0 ||
		    sj_put(e, "class", json_object_new_string(c->key.klass)) < 0 ||
		    sj_put(e, "ratio", sj_new_num(c->ratio)) < 0 ||
		    sj_put(e, "batches", sj_new_num(c->batches)) < 0 ||
		    sj_put(e, "updated", sj_new_num(c->updated)) < 0)
			goto fail;
	}
	if (sj_put(o, "jobs", jobs = json_object_new_array()) < 0)
		goto fail;
	for (int i = 0; i < fb->njobs; i++) {
		const saturn_fb_job_t *j = &fb->jobs[i];
		json_object *e = json_object_new_object();

		if (sj_append(jobs, e) < 0 ||
		    sj_put(e, "job_id", json_object_new_int64(j->job_id)) < 0 ||
		    sj_put(e, "first_done", sj_new_num(j->first_done)) < 0 ||
		    sj_put(e, "first_updated", sj_new_num(j->first_updated)) < 0 ||
		    sj_put(e, "last_updated", sj_new_num(j->last_updated)) < 0 ||
		    sj_put(e, "spb", sj_new_num(j->spb)) < 0 ||
		    sj_put(e, "seen", json_object_new_int(j->seen)) < 0)
			goto fail;
	}
	*out = o;
	return 0;
fail:
	json_object_put(o);
	return -1;
}

static int corr_parse(json_object *e, const char *ctx, saturn_fb_corr_t *c, saturn_error_t *err)
{
	saturn_fb_key_t *k = &c->key;
	long long uid = 0;

	if (!json_object_is_type(e, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_llong(e, ctx, "uid", true, -1, 4294967295LL, &uid, err) < 0 ||
	    cj_strbuf(e, ctx, "batch", true, k->batch, sizeof(k->batch), err) < 0 ||
	    cj_strbuf(e, ctx, "signature", false, k->signature, sizeof(k->signature), err) < 0 ||
	    cj_strbuf(e, ctx, "technique", false, k->technique, sizeof(k->technique), err) < 0 ||
	    sj_int(e, ctx, "gpus", false, 0, INT_MAX, &k->gpus, err) < 0 ||
	    cj_strbuf(e, ctx, "class", false, k->klass, sizeof(k->klass), err) < 0 ||
	    sj_num(e, ctx, "ratio", true, 0, true, &c->ratio, err) < 0 ||
	    sj_num(e, ctx, "batches", false, 0, false, &c->batches, err) < 0 ||
	    sj_num(e, ctx, "updated", false, -DBL_MAX, false, &c->updated, err) < 0)
		return -1;
	k->uid = (long)uid;
	if (c->ratio < SATURN_FB_RATIO_MIN || c->ratio > SATURN_FB_RATIO_MAX)
		return saturn_error_set(err, "%s.ratio: must be from %g to %g", ctx,
					SATURN_FB_RATIO_MIN, SATURN_FB_RATIO_MAX);
	return 0;
}

static int fbjob_parse(json_object *e, const char *ctx, saturn_fb_job_t *j, saturn_error_t *err)
{
	long long id = 0;

	if (!json_object_is_type(e, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_llong(e, ctx, "job_id", true, 0, UINT32_MAX, &id, err) < 0 ||
	    sj_num(e, ctx, "first_done", false, -DBL_MAX, false, &j->first_done, err) < 0 ||
	    sj_num(e, ctx, "first_updated", false, -DBL_MAX, false, &j->first_updated, err) < 0 ||
	    sj_num(e, ctx, "last_updated", false, -DBL_MAX, false, &j->last_updated, err) < 0 ||
	    sj_num(e, ctx, "spb", false, -DBL_MAX, false, &j->spb, err) < 0 ||
	    sj_int(e, ctx, "seen", false, INT_MIN, INT_MAX, &j->seen, err) < 0)
		return -1;
	j->job_id = (uint32_t)id;
	return 0;
}

static int fb_parse(json_object *o, const char *ctx, saturn_fb_t **out, saturn_error_t *err)
{
	char ectx[SATURN_ERROR_LEN / 2];
	json_object *corr, *jobs;
	size_t nc, nj;
	saturn_fb_t *fb;

	*out = NULL;
	if (!o)
		return 0;
	if (!json_object_is_type(o, json_type_object))
		return saturn_error_set(err, "%s: must be an object or null", ctx);
	if (cj_array(o, ctx, "corr", false, SATURN_CYCLE_MAX_FB, &corr, &nc, err) < 0 ||
	    cj_array(o, ctx, "jobs", false, SATURN_CYCLE_MAX_FB, &jobs, &nj, err) < 0)
		return -1;
	if (!(fb = saturn_fb_create()) || (nc && !(fb->corr = calloc(nc, sizeof(*fb->corr)))) ||
	    (nj && !(fb->jobs = calloc(nj, sizeof(*fb->jobs))))) {
		saturn_fb_destroy(fb);
		return saturn_error_set(err, "out of memory");
	}
	fb->cap_corr = (int)nc;
	fb->cap_jobs = (int)nj;
	/* as recorded (saturn_fb_put would move a ratio on the clamp) */
	for (size_t i = 0; i < nc; i++, fb->ncorr++) {
		snprintf(ectx, sizeof(ectx), "%s.corr[%zu]", ctx, i);
		if (corr_parse(json_object_array_get_idx(corr, i), ectx, &fb->corr[i], err) < 0)
			goto fail;
	}
	for (size_t i = 0; i < nj; i++, fb->njobs++) {
		snprintf(ectx, sizeof(ectx), "%s.jobs[%zu]", ctx, i);
		if (fbjob_parse(json_object_array_get_idx(jobs, i), ectx, &fb->jobs[i], err) < 0)
			goto fail;
	}
	*out = fb;
	return 0;
fail:
	saturn_fb_destroy(fb);
	return -1;
}

/* --- the state ---------------------------------------------------------- */

int cj_state(const saturn_cycle_state_t *st, json_object **out)
{
	json_object *o = json_object_new_object(), *v;

	*out = NULL;
	if (cj_plan(st->plan, &v) < 0 || cj_put(o, "plan", v) < 0 ||
	    sj_put(o, "plan_id",
		   json_object_new_string_len(
		       st->plan_id, (int)strnlen(st->plan_id, sizeof(st->plan_id)))) < 0 ||
	    sj_put(o, "plan_seq", json_object_new_int64((int64_t)st->plan_seq)) < 0 ||
	    sj_put(o, "plan_now", sj_new_num(st->plan_now)) < 0 ||
	    sj_put(o, "made_now", sj_new_num(st->made_now)) < 0 ||
	    sj_put(o, "made_makespan", sj_new_num(st->made_makespan)) < 0 ||
	    sj_put(o, "solve_due", json_object_new_int(st->solve_due)) < 0 ||
	    sj_put(o, "skipped_logged", json_object_new_int(st->skipped_logged)) < 0 ||
	    sj_put(o, "skipped_at", sj_new_num(st->skipped_at)) < 0 ||
	    sj_put(o, "nonodes_at", sj_new_num(st->nonodes_at)) < 0 ||
	    sj_put(o, "share_multinode_logged", json_object_new_int(st->share_multinode_logged)) <
		    0 ||
	    fb_json(st->feedback, &v) < 0 || cj_put(o, "feedback", v) < 0) {
		json_object_put(o);
		return -1;
	}
	*out = o;
	return 0;
}

int cj_state_parse(json_object *o, const char *ctx, saturn_cycle_state_t *st, saturn_error_t *err)
{
	char ectx[SATURN_ERROR_LEN / 2];
	json_object *v;
	long long seq = 0;

	memset(st, 0, sizeof(*st));
	if (!json_object_is_type(o, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (cj_strbuf(o, ctx, "plan_id", false, st->plan_id, sizeof(st->plan_id), err) < 0 ||
	    sj_llong(o, ctx, "plan_seq", false, 0, LLONG_MAX, &seq, err) < 0 ||
	    sj_num(o, ctx, "plan_now", false, -DBL_MAX, false, &st->plan_now, err) < 0 ||
	    sj_num(o, ctx, "made_now", false, -DBL_MAX, false, &st->made_now, err) < 0 ||
	    sj_num(o, ctx, "made_makespan", false, -DBL_MAX, false, &st->made_makespan, err) < 0 ||
	    sj_int(o, ctx, "solve_due", false, INT_MIN, INT_MAX, &st->solve_due, err) < 0 ||
	    sj_int(o, ctx, "skipped_logged", false, 0, INT_MAX, &st->skipped_logged, err) < 0 ||
	    sj_num(o, ctx, "skipped_at", false, -DBL_MAX, false, &st->skipped_at, err) < 0 ||
	    sj_num(o, ctx, "nonodes_at", false, -DBL_MAX, false, &st->nonodes_at, err) < 0 ||
	    sj_int(o, ctx, "share_multinode_logged", false, 0, 1, &st->share_multinode_logged,
		   err) < 0)
		return -1;
	st->plan_seq = (unsigned long)seq;
	snprintf(ectx, sizeof(ectx), "%s.plan", ctx);
	json_object_object_get_ex(o, "plan", &v);
	if (cj_plan_parse(v, ectx, &st->plan, err) < 0)
		return -1;
	snprintf(ectx, sizeof(ectx), "%s.feedback", ctx);
	v = NULL;
	json_object_object_get_ex(o, "feedback", &v);
	if (fb_parse(v, ectx, &st->feedback, err) < 0) {
		saturn_cycle_record_state_clear(st);
		return -1;
	}
	return 0;
}

void saturn_cycle_record_state_clear(saturn_cycle_state_t *st)
{
	if (!st)
		return;
	saturn_plan_destroy(st->plan);
	saturn_fb_destroy(st->feedback);
	memset(st, 0, sizeof(*st));
}

char *saturn_cycle_state_to_json(const saturn_cycle_state_t *st)
{
	json_object *o;
	char *text;

	if (cj_state(st, &o) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	text = sj_to_string(o, false);
	json_object_put(o);
	return text;
}

int saturn_cycle_state_from_json(const char *buf, size_t len, saturn_cycle_state_t *st,
				 saturn_error_t *err)
{
	json_object *o = sj_parse(buf, len, err);
	int rc;

	memset(st, 0, sizeof(*st));
	if (!o)
		return -1;
	rc = cj_state_parse(o, "state", st, err);
	json_object_put(o);
	return rc;
}

/* --- the profile set ---------------------------------------------------- */

int cj_profset(const saturn_profset_t *ps, json_object **out)
{
	json_object *a = json_object_new_array();

	*out = NULL;
	for (int i = 0; ps && i < ps->n; i++) {
		const saturn_profset_entry_t *pe = &ps->e[i];
		json_object *e = json_object_new_object(), *prof = NULL;

		if (sj_append(a, e) < 0 || sj_put(e, "uid", json_object_new_int64(pe->uid)) < 0 ||
		    sj_put(e, "batch", json_object_new_string(pe->batch)) < 0 ||
		    sj_put(e, "class", json_object_new_string(pe->klass)) < 0)
			goto fail;
		if (pe->prof) {
			char *text = saturn_profile_to_json(pe->prof);

			prof = cj_from_text(text);
			free(text);
			if (!prof)
				goto fail;
		}
		if (cj_put(e, "profile", prof) < 0)
			goto fail;
	}
	*out = a;
	return 0;
fail:
	json_object_put(a);
	return -1;
}

int cj_profset_parse(json_object *o, const char *ctx, saturn_profset_t *ps, saturn_error_t *err)
{
	char ectx[SATURN_ERROR_LEN / 2], batch[SATURN_BATCH_NAME_MAX + 1];
	char klass[SATURN_CLASS_NAME_MAX + 1];
	size_t n;

	memset(ps, 0, sizeof(*ps));
	ps->owns = 1;
	if (!o)
		return 0;
	if (!json_object_is_type(o, json_type_array))
		return saturn_error_set(err, "%s: must be an array", ctx);
	n = json_object_array_length(o);
	if (n > SATURN_CYCLE_MAX_PROFILES)
		return saturn_error_set(err, "%s: more than %d entries", ctx,
					SATURN_CYCLE_MAX_PROFILES);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i), *pj;
		saturn_profile_t *prof = NULL;
		long long uid;

		snprintf(ectx, sizeof(ectx), "%s[%zu]", ctx, i);
		batch[0] = klass[0] = '\0';
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", ectx);
		if (sj_llong(e, ectx, "uid", true, -1, 4294967295LL, &uid, err) < 0 ||
		    cj_strbuf(e, ectx, "batch", true, batch, sizeof(batch), err) < 0 ||
		    cj_strbuf(e, ectx, "class", false, klass, sizeof(klass), err) < 0 ||
		    sj_get(e, ectx, "profile", false, json_type_object, &pj, err) < 0)
			return -1;
		if (pj) {
			char *text = sj_to_string(pj, false);

			if (!text)
				return saturn_error_set(err, "out of memory");
			prof = saturn_profile_parse(text, strlen(text), err);
			free(text);
			if (!prof)
				return saturn_error_prefix(err, "%s.profile", ectx);
		}
		if (saturn_profset_find(ps, (long)uid, batch, klass)) {
			saturn_profile_destroy(prof);
			return saturn_error_set(err, "%s: batch %s of uid %lld%s%s listed twice",
						ectx, batch, uid, klass[0] ? " on class " : "",
						klass);
		}
		if (saturn_profset_add(ps, (long)uid, batch, klass, prof) < 0) {
			saturn_profile_destroy(prof);
			return saturn_error_set(err, "out of memory");
		}
	}
	return 0;
}

/* --- the tape ----------------------------------------------------------- */

int cj_tape(const saturn_plan_tape_t *t, json_object **out)
{
	json_object *a = json_object_new_array(), *p;

	*out = NULL;
	for (int i = 0; a && t && i < t->n; i++)
		if (cj_plan(t->plans[i], &p) < 0 || cj_append(a, p) < 0) {
			json_object_put(a);
			return -1;
		}
	*out = a;
	return a ? 0 : -1;
}

int cj_tape_parse(json_object *o, const char *ctx, saturn_plan_tape_t *t, saturn_error_t *err)
{
	char ectx[SATURN_ERROR_LEN / 2];
	size_t n;

	memset(t, 0, sizeof(*t));
	t->mode = SATURN_TAPE_PLAY;
	if (!o)
		return 0;
	if (!json_object_is_type(o, json_type_array))
		return saturn_error_set(err, "%s: must be an array", ctx);
	n = json_object_array_length(o);
	if (n > SATURN_CYCLE_MAX_TAPE)
		return saturn_error_set(err, "%s: more than %d entries", ctx,
					SATURN_CYCLE_MAX_TAPE);
	for (size_t i = 0; i < n; i++) {
		saturn_plan_t *p;
		int rc;

		snprintf(ectx, sizeof(ectx), "%s[%zu]", ctx, i);
		if (cj_plan_parse(json_object_array_get_idx(o, i), ectx, &p, err) < 0)
			return -1;
		/* the tape keeps its own copy */
		rc = saturn_plan_tape_push(t, p);
		saturn_plan_destroy(p);
		if (rc < 0)
			return saturn_error_set(err, "out of memory");
	}
	return 0;
}
