/* sched_state.c - the persisted scheduler state
 * (saturn-sched-state/1: the current plan with absolute times and each
 * task's state), which `saturn status` and a restarted slurmctld read back.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sched_core.h"

static int get_num(json_object *o, const char *key, double *v)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x))
		return -1;
	if (!json_object_is_type(x, json_type_double) &&
	    !json_object_is_type(x, json_type_int))
		return -1;
	*v = json_object_get_double(x);
	return isfinite(*v) ? 0 : -1;
}

static const char *state_name(saturn_snap_state_t s)
{
	switch (s) {
	case SATURN_SNAP_HELD:
		return "planned";
	case SATURN_SNAP_RELEASED:
		return "released";
	case SATURN_SNAP_RUNNING:
		return "running";
	}
	return "unknown";
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v ? v : ""));
}

/* "corrections": the runtime feedback's ratios (feedback.h) */
static void corrections_to_json(json_object *root, const saturn_fb_t *fb)
{
	json_object *arr = json_object_new_array();

	for (int i = 0; arr && i < fb->ncorr; i++) {
		const saturn_fb_corr_t *c = &fb->corr[i];
		json_object *e = json_object_new_object();

		if (!e)
			continue;
		json_object_object_add(e, "uid", json_object_new_int64(c->key.uid));
		add_str(e, "batch", c->key.batch);
		add_str(e, "signature", c->key.signature);
		add_str(e, "technique", c->key.technique);
		json_object_object_add(e, "gpus", json_object_new_int(c->key.gpus));
		add_str(e, "class", c->key.klass);
		json_object_object_add(e, "ratio", json_object_new_double(c->ratio));
		json_object_object_add(e, "batches", json_object_new_double(c->batches));
		json_object_object_add(e, "updated", json_object_new_double(c->updated));
		json_object_array_add(arr, e);
	}
	if (arr)
		json_object_object_add(root, "corrections", arr);
}

char *saturn_sched_state_to_json(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
				 const saturn_plan_t *plan, const char *plan_id,
				 double now)
{
	json_object *root = json_object_new_object(), *tasks = json_object_new_array();
	char *out = NULL;

	if (!root || !tasks)
		goto done;
	add_str(root, "format", "saturn-sched-state/1");
	add_str(root, "plan_id", plan_id);
	json_object_object_add(root, "updated", json_object_new_double(now));
	if (plan) {
		json_object_object_add(root, "makespan_s", json_object_new_double(plan->makespan_s));
		json_object_object_add(root, "makespan_end", json_object_new_double(now + plan->makespan_s));
		json_object_object_add(root, "lower_bound_s", json_object_new_double(plan->lower_bound_s));
		json_object_object_add(root, "solve_s", json_object_new_double(plan->solve_s));
		add_str(root, "method", plan->method);
		for (int i = 0; i < plan->nassign; i++) {
			const saturn_assign_t *a = &plan->assign[i];
			int t = a->task >= 0 ? a->task : i;
			const saturn_snap_job_t *j;
			json_object *e = json_object_new_object(), *ids = json_object_new_array();

			if (!e || !ids || t < 0 || t >= b->problem->ntasks) {
				json_object_put(e);
				json_object_put(ids);
				continue;
			}
			j = &s->jobs[b->job_of_task[t]];
			add_str(e, "id", a->task_id);
			add_str(e, "batch", j->batch);
			json_object_object_add(e, "uid", json_object_new_int64(j->uid));
			json_object_object_add(e, "job_id", json_object_new_int64(j->job_id));
			add_str(e, "state", state_name(j->state));
			add_str(e, "technique", a->technique);
			json_object_object_add(e, "gpus", json_object_new_int(a->gpus));
			add_str(e, "node", a->node_name);
			for (int g = 0; g < a->gpus; g++)
				json_object_array_add(ids, json_object_new_int(a->gpu_ids ? a->gpu_ids[g] : -1));
			json_object_object_add(e, "gpu_ids", ids);
			json_object_object_add(e, "start", json_object_new_double(now + a->start_s));
			json_object_object_add(e, "end", json_object_new_double(now + a->end_s));
			if (j->state == SATURN_SNAP_RUNNING && j->obs_spb > 0) {
				json_object_object_add(e, "spb_profile", json_object_new_double(j->prior_spb));
				json_object_object_add(e, "spb_observed", json_object_new_double(j->obs_spb));
			}
			json_object_array_add(tasks, e);
		}
	}
	json_object_object_add(root, "tasks", tasks);
	tasks = NULL;
	if (plan && b && b->problem) {
		json_object *nodes = json_object_new_array();

		for (int n = 0; nodes && n < b->problem->nnodes; n++) {
			json_object *e = json_object_new_object();

			if (!e)
				continue;
			add_str(e, "name", b->problem->nodes[n].name);
			json_object_object_add(e, "gpus", json_object_new_int(b->problem->nodes[n].gpus));
			json_object_array_add(nodes, e);
		}
		if (nodes)
			json_object_object_add(root, "nodes", nodes);
	}
	if (s && s->feedback && s->feedback->ncorr)
		corrections_to_json(root, s->feedback);
	{
		const char *txt = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);

		out = txt ? strdup(txt) : NULL;
	}
done:
	json_object_put(tasks);
	json_object_put(root);
	return out;
}

void saturn_sched_state_destroy(saturn_sched_state_t *st)
{
	if (!st)
		return;
	for (int i = 0; i < st->ntasks; i++) {
		free(st->tasks[i].id);
		free(st->tasks[i].batch);
		free(st->tasks[i].technique);
		free(st->tasks[i].node);
		free(st->tasks[i].state);
		free(st->tasks[i].gpu_ids);
	}
	free(st->tasks);
	for (int i = 0; i < st->nnodes; i++)
		free(st->nodes[i].name);
	free(st->nodes);
	free(st->corr);
	free(st->plan_id);
	free(st->method);
	free(st);
}

static char *get_str(json_object *o, const char *key)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x) || !json_object_is_type(x, json_type_string))
		return NULL;
	return strdup(json_object_get_string(x));
}

/* The optional "corrections" array (runtime feedback) into st. 0 or -1
 * with err naming the entry. */
static int corrections_parse(json_object *o, saturn_sched_state_t *st, saturn_error_t *err)
{
	json_object *arr;
	size_t n;

	if (!json_object_object_get_ex(o, "corrections", &arr))
		return 0;
	if (!json_object_is_type(arr, json_type_array) ||
	    (n = json_object_array_length(arr)) > SATURN_MAX_TASKS)
		return saturn_error_set(err, "corrections: must be an array of at most %d entries",
					SATURN_MAX_TASKS);
	if (!(st->corr = calloc(n ? n : 1, sizeof(*st->corr))))
		return saturn_error_set(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *g;
		saturn_fb_corr_t *c = &st->corr[st->ncorr];
		char *batch, *sig, *tech, *klass;
		double uid = -1, gpus = 0;
		int ok;

		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "corrections[%zu]: must be an object", i);
		batch = get_str(e, "batch");
		sig = get_str(e, "signature");
		tech = get_str(e, "technique");
		klass = get_str(e, "class");
		if (json_object_object_get_ex(e, "uid", &g) && json_object_is_type(g, json_type_int))
			uid = json_object_get_double(g);
		if (json_object_object_get_ex(e, "gpus", &g) && json_object_is_type(g, json_type_int))
			gpus = json_object_get_double(g);
		ok = batch && sig && tech && batch[0] && tech[0] && uid >= 0 && uid <= UINT32_MAX &&
		     gpus >= 1 && gpus <= SATURN_MAX_GPUS_PER_NODE &&
		     strlen(batch) <= SATURN_BATCH_NAME_MAX && strlen(sig) <= SATURN_FB_SIG_MAX &&
		     strlen(tech) <= SATURN_TECHNIQUE_NAME_MAX &&
		     (!klass || strlen(klass) <= SATURN_FB_SIG_MAX) &&
		     get_num(e, "ratio", &c->ratio) == 0 && c->ratio > 0 &&
		     get_num(e, "batches", &c->batches) == 0 && c->batches >= 0;
		if (ok) {
			saturn_fb_key_set(&c->key, (long)uid, batch, sig, tech, (int)gpus, klass);
			c->ratio = saturn_fb_clamp_ratio(c->ratio);
			if (get_num(e, "updated", &c->updated) < 0)
				c->updated = 0;
			st->ncorr++;
		}
		free(batch);
		free(sig);
		free(tech);
		free(klass);
		if (!ok)
			return saturn_error_set(err,
						"corrections[%zu]: needs uid, batch, signature, technique, gpus (1 to %d), a ratio > 0 and batches >= 0",
						i, SATURN_MAX_GPUS_PER_NODE);
	}
	return 0;
}

saturn_sched_state_t *saturn_sched_state_parse(const char *buf, size_t len,
					       saturn_error_t *err)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = NULL, *tasks, *fmt;
	saturn_sched_state_t *st = calloc(1, sizeof(*st));
	size_t n;

	if (!tok || !st) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o || !json_object_is_type(o, json_type_object)) {
		saturn_error_set(err, "not a JSON object");
		goto fail;
	}
	if (!json_object_object_get_ex(o, "format", &fmt) ||
	    strcmp(json_object_get_string(fmt) ? json_object_get_string(fmt) : "", "saturn-sched-state/1")) {
		saturn_error_set(err, "format: expected \"saturn-sched-state/1\"");
		goto fail;
	}
	st->plan_id = get_str(o, "plan_id");
	st->method = get_str(o, "method");
	get_num(o, "updated", &st->updated);
	get_num(o, "makespan_s", &st->makespan_s);
	get_num(o, "makespan_end", &st->makespan_end);
	get_num(o, "lower_bound_s", &st->lower_bound_s);
	get_num(o, "solve_s", &st->solve_s);
	if (!json_object_object_get_ex(o, "tasks", &tasks) || !json_object_is_type(tasks, json_type_array)) {
		saturn_error_set(err, "tasks: must be an array");
		goto fail;
	}
	n = json_object_array_length(tasks);
	if (n > SATURN_MAX_TASKS) {
		saturn_error_set(err, "tasks: more than %d entries", SATURN_MAX_TASKS);
		goto fail;
	}
	st->tasks = calloc(n ? n : 1, sizeof(*st->tasks));
	if (!st->tasks) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(tasks, i), *g;
		saturn_sched_state_task_t *t = &st->tasks[st->ntasks];

		if (!json_object_is_type(e, json_type_object)) {
			saturn_error_set(err, "tasks[%zu]: must be an object", i);
			goto fail;
		}
		st->ntasks++;
		t->id = get_str(e, "id");
		t->batch = get_str(e, "batch");
		t->uid = -1;
		if (json_object_object_get_ex(e, "uid", &g)) {
			int64_t u = json_object_get_int64(g);

			if (!json_object_is_type(g, json_type_int) || u < 0 || u > UINT32_MAX) {
				saturn_error_set(err, "tasks[%zu].uid: must be a user id (0 to %u)", i,
						 UINT32_MAX);
				goto fail;
			}
			t->uid = (long)u;
		}
		t->technique = get_str(e, "technique");
		t->node = get_str(e, "node");
		t->state = get_str(e, "state");
		if (json_object_object_get_ex(e, "gpus", &g))
			t->gpus = json_object_get_int(g);
		if (t->gpus < 0 || t->gpus > SATURN_MAX_GPUS_PER_NODE) {
			saturn_error_set(err, "tasks[%zu].gpus: must be from 0 to %d", i,
					 SATURN_MAX_GPUS_PER_NODE);
			goto fail;
		}
		if (json_object_object_get_ex(e, "gpu_ids", &g) && json_object_is_type(g, json_type_array) &&
		    (int)json_object_array_length(g) == t->gpus && t->gpus > 0) {
			t->gpu_ids = calloc((size_t)t->gpus, sizeof(int));
			if (!t->gpu_ids) {
				saturn_error_set(err, "out of memory");
				goto fail;
			}
			for (int k = 0; k < t->gpus; k++)
				t->gpu_ids[k] = json_object_get_int(json_object_array_get_idx(g, (size_t)k));
		}
		if (!t->id || get_num(e, "start", &t->start) < 0 || get_num(e, "end", &t->end) < 0) {
			saturn_error_set(err, "tasks[%zu]: needs id, start and end", i);
			goto fail;
		}
		if (get_num(e, "spb_profile", &t->spb_profile) < 0 || !(t->spb_profile >= 0))
			t->spb_profile = 0;
		if (get_num(e, "spb_observed", &t->spb_observed) < 0 || !(t->spb_observed >= 0))
			t->spb_observed = 0;
	}
	if (json_object_object_get_ex(o, "nodes", &tasks)) {
		if (!json_object_is_type(tasks, json_type_array) ||
		    json_object_array_length(tasks) > SATURN_MAX_TASKS) {
			saturn_error_set(err, "nodes: must be an array of at most %d entries",
					 SATURN_MAX_TASKS);
			goto fail;
		}
		n = json_object_array_length(tasks);
		st->nodes = calloc(n ? n : 1, sizeof(*st->nodes));
		if (!st->nodes) {
			saturn_error_set(err, "out of memory");
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(tasks, i), *g;
			saturn_sched_state_node_t *nd = &st->nodes[st->nnodes];

			if (!json_object_is_type(e, json_type_object)) {
				saturn_error_set(err, "nodes[%zu]: must be an object", i);
				goto fail;
			}
			st->nnodes++;
			nd->name = get_str(e, "name");
			if (json_object_object_get_ex(e, "gpus", &g) && json_object_is_type(g, json_type_int))
				nd->gpus = json_object_get_int(g);
			if (!nd->name || !nd->name[0] || nd->gpus < 1 ||
			    nd->gpus > SATURN_MAX_GPUS_PER_NODE) {
				saturn_error_set(err, "nodes[%zu]: needs a name and gpus from 1 to %d", i,
						 SATURN_MAX_GPUS_PER_NODE);
				goto fail;
			}
		}
	}
	if (corrections_parse(o, st, err) < 0)
		goto fail;
	json_object_put(o);
	json_tokener_free(tok);
	return st;
fail:
	json_object_put(o);
	if (tok)
		json_tokener_free(tok);
	saturn_sched_state_destroy(st);
	return NULL;
}
