/* sched_state.c - the persisted scheduler state
 * (saturn-sched-state/1: the current plan with absolute times and each
 * task's state), which `saturn status` and a restarted slurmctld read back.
 * Read with the typed helpers of jsonutil.h, like the other formats: every
 * field the writer writes is read back and checked, and a bad one is an
 * error naming it (doc/formats.md).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "jsonutil.h"
#include "sched_core.h"

/* Longest string field (task ids, batch, node and technique names). */
#define STR_MAX SATURN_MAX_ID_LEN

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

/* Add the string v ("" for NULL) under k; -1 on ENOMEM. */
static int add_str(json_object *o, const char *k, const char *v)
{
	return sj_put(o, k, json_object_new_string(v ? v : ""));
}

/* One planned task; -1 on ENOMEM. */
static int add_task(json_object *tasks, const saturn_snap_job_t *j, const saturn_assign_t *a,
		    double now)
{
	json_object *e = json_object_new_object();

	if (sj_append(tasks, e) < 0 ||
	    add_str(e, "id", a->task_id) < 0 || add_str(e, "batch", j->batch) < 0 ||
	    sj_put(e, "uid", json_object_new_int64(j->uid)) < 0 ||
	    sj_put(e, "job_id", json_object_new_int64(j->job_id)) < 0 ||
	    add_str(e, "state", state_name(j->state)) < 0 ||
	    add_str(e, "technique", a->technique) < 0 ||
	    sj_put(e, "gpus", json_object_new_int(a->gpus)) < 0 ||
	    add_str(e, "node", a->node_name) < 0)
		return -1;
	/* a task on several nodes: every node, the first repeating "node" */
	if (saturn_assign_nnodes(a) > 1) {
		json_object *nodes = json_object_new_array();

		if (sj_put(e, "nodes", nodes) < 0)
			return -1;
		for (int k = 0; k < saturn_assign_nnodes(a); k++)
			if (sj_append(nodes, json_object_new_string(saturn_assign_name_at(a, k) ?
								    saturn_assign_name_at(a, k) : "")) < 0)
				return -1;
	}
	/* the GPUs when the plan names them (absent otherwise): gpus per
	 * node, node after node */
	if (a->gpu_ids && a->gpus > 0) {
		json_object *ids = json_object_new_array();

		if (sj_put(e, "gpu_ids", ids) < 0)
			return -1;
		for (int g = 0; g < a->gpus * saturn_assign_nnodes(a); g++)
			if (sj_append(ids, json_object_new_int(a->gpu_ids[g])) < 0)
				return -1;
	}
	/* a running task's speed: profiled and observed (runtime feedback) */
	if (j->state == SATURN_SNAP_RUNNING && j->obs_spb > 0 &&
	    (sj_put(e, "spb_profile", sj_new_num(j->prior_spb)) < 0 ||
	     sj_put(e, "spb_observed", sj_new_num(j->obs_spb)) < 0))
		return -1;
	/* "end" last: tests/e2e/sched-lib.sh reads the file line by line */
	if (sj_put(e, "start", sj_new_num(now + a->start_s)) < 0 ||
	    sj_put(e, "end", sj_new_num(now + a->end_s)) < 0)
		return -1;
	return 0;
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

/* "class": the hardware class of the snapshot node called name
 * (node_class.h), when the snapshot has it. 0 or -1 (ENOMEM). */
static int node_class_to_json(json_object *e, const saturn_snapshot_t *s, const char *name)
{
	const saturn_snap_node_t *nd;
	char k[SATURN_CLASS_NAME_MAX + 1];
	int i;

	if (!s || (i = saturn_snapshot_node_index(s, name)) < 0)
		return 0;
	nd = &s->nodes[i];
	if (nd->klass[0])
		snprintf(k, sizeof(k), "%s", nd->klass);
	else
		saturn_node_class(s->class_rules, nd->name, nd->gpu_types, nd->gpus, nd->link,
				  nd->features, k, sizeof(k));
	return add_str(e, "class", k);
}

char *saturn_sched_state_to_json(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
				 const saturn_plan_t *plan, const char *plan_id,
				 double now)
{
	json_object *root = json_object_new_object(), *tasks = json_object_new_array();
	char *out = NULL;

	if (add_str(root, "format", SATURN_SCHED_STATE_FORMAT) < 0 ||
	    add_str(root, "plan_id", plan_id) < 0 ||
	    sj_put(root, "updated", sj_new_num(now)) < 0)
		goto done;
	if (plan) {
		if (sj_put(root, "makespan_s", sj_new_num(plan->makespan_s)) < 0 ||
		    sj_put(root, "makespan_end", sj_new_num(now + plan->makespan_s)) < 0 ||
		    sj_put(root, "lower_bound_s", sj_new_num(plan->lower_bound_s)) < 0 ||
		    sj_put(root, "solve_s", sj_new_num(plan->solve_s)) < 0 ||
		    add_str(root, "method", plan->method) < 0)
			goto done;
		for (int i = 0; tasks && i < plan->nassign; i++) {
			const saturn_assign_t *a = &plan->assign[i];
			int t = a->task >= 0 ? a->task : i;

			if (t < 0 || t >= b->problem->ntasks)
				continue;
			if (add_task(tasks, &s->jobs[b->job_of_task[t]], a, now) < 0)
				goto done;
		}
	}
	if (sj_put(root, "tasks", tasks) < 0) {
		tasks = NULL; /* dropped by sj_put */
		goto done;
	}
	tasks = NULL;
	if (plan && b && b->problem) {
		json_object *nodes = json_object_new_array();

		if (sj_put(root, "nodes", nodes) < 0)
			goto done;
		for (int n = 0; n < b->problem->nnodes; n++) {
			json_object *e = json_object_new_object();

			if (sj_append(nodes, e) < 0 ||
			    add_str(e, "name", b->problem->nodes[n].name) < 0 ||
			    sj_put(e, "gpus", json_object_new_int(b->problem->nodes[n].gpus)) < 0 ||
			    node_class_to_json(e, s, b->problem->nodes[n].name) < 0)
				goto done;
		}
	}
	if (s && s->feedback && s->feedback->ncorr)
		corrections_to_json(root, s->feedback);
	{
		/* json-c's layout, one "key":value per line, which scripts
		 * grep (tests/e2e/sched-plan.sh, sched-lib.sh) */
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
		for (int k = 0; k + 1 < st->tasks[i].nnodes; k++)
			free(st->tasks[i].more_nodes[k]);
		free(st->tasks[i].more_nodes);
	}
	free(st->tasks);
	for (int i = 0; i < st->nnodes; i++) {
		free(st->nodes[i].name);
		free(st->nodes[i].klass);
	}
	free(st->nodes);
	free(st->corr);
	free(st->plan_id);
	free(st->method);
	free(st);
}

/* A task's "nodes" (several nodes; absent for one): nnodes and the names
 * after the first into more_nodes. The first must repeat "node". */
static int parse_task_nodes(json_object *e, const char *ctx, saturn_sched_state_task_t *t,
			    saturn_error_t *err)
{
	json_object *arr;
	size_t n;
	int rc;

	if ((rc = sj_get(e, ctx, "nodes", false, json_type_array, &arr, err)) < 0)
		return -1;
	if (!rc || !arr)
		return 0;
	n = json_object_array_length(arr);
	if (n < 1 || n > SATURN_MAX_TASK_NODES)
		return saturn_error_set(err, "%s.nodes: 1 to %d names", ctx, SATURN_MAX_TASK_NODES);
	if (n == 1)
		return 0;
	if (!(t->more_nodes = calloc(n - 1, sizeof(char *))))
		return saturn_error_set(err, "out of memory");
	for (size_t k = 0; k < n; k++) {
		json_object *v = json_object_array_get_idx(arr, k);
		const char *nm = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

		if (!nm || !nm[0] || strlen(nm) > STR_MAX)
			return saturn_error_set(err, "%s.nodes[%zu]: must be a node name", ctx, k);
		if (k == 0) {
			if (!t->node || strcmp(t->node, nm))
				return saturn_error_set(err, "%s.nodes[0]: must repeat node", ctx);
			continue;
		}
		if (!(t->more_nodes[k - 1] = strdup(nm)))
			return saturn_error_set(err, "out of memory");
		t->nnodes = (int)k + 1;
	}
	return 0;
}

/* gpu_ids of a task on nnodes > 1 nodes: gpus ids per node, node after
 * node, distinct within each node. Absent is fine. */
static int parse_gang_ids(json_object *e, const char *ctx, saturn_sched_state_task_t *t,
			  saturn_error_t *err)
{
	json_object *arr;
	size_t n;
	int rc;

	if ((rc = sj_get(e, ctx, "gpu_ids", false, json_type_array, &arr, err)) < 0)
		return -1;
	if (!rc || !arr)
		return 0;
	n = json_object_array_length(arr);
	if (t->gpus < 1 || n != (size_t)t->gpus * (size_t)t->nnodes)
		return saturn_error_set(err, "%s.gpu_ids: must list gpus (%d) ids per node on %d nodes, not %zu",
					ctx, t->gpus, t->nnodes, n);
	if (!(t->gpu_ids = calloc(n, sizeof(int))))
		return saturn_error_set(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		char what[SATURN_ERROR_LEN / 2];

		snprintf(what, sizeof(what), "%s.gpu_ids[%zu]", ctx, i);
		if (sj_as_int(json_object_array_get_idx(arr, i), what, 0,
			      SATURN_MAX_GPUS_PER_NODE - 1, &t->gpu_ids[i], err) < 0)
			return -1;
		for (size_t k = i - i % (size_t)t->gpus; k < i; k++)
			if (t->gpu_ids[k] == t->gpu_ids[i])
				return saturn_error_set(err, "%s.gpu_ids: %d listed twice on one node", ctx,
							t->gpu_ids[i]);
	}
	return 0;
}

/* One entry of tasks[]. */
static int parse_task(json_object *e, const char *ctx, saturn_sched_state_task_t *t,
		      saturn_error_t *err)
{
	long long v;
	int n, rc;

	t->uid = -1;
	if (!json_object_is_type(e, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_str(e, ctx, "id", true, true, STR_MAX, &t->id, err) < 0 ||
	    sj_str(e, ctx, "batch", false, false, STR_MAX, &t->batch, err) < 0 ||
	    sj_str(e, ctx, "technique", false, false, STR_MAX, &t->technique, err) < 0 ||
	    sj_str(e, ctx, "node", false, false, STR_MAX, &t->node, err) < 0 ||
	    sj_str(e, ctx, "state", false, false, STR_MAX, &t->state, err) < 0 ||
	    sj_int(e, ctx, "gpus", false, 0, SATURN_MAX_GPUS_PER_NODE, &t->gpus, err) < 0 ||
	    sj_num(e, ctx, "start", true, -INFINITY, false, &t->start, err) < 0 ||
	    sj_num(e, ctx, "end", true, -INFINITY, false, &t->end, err) < 0 ||
	    sj_num(e, ctx, "spb_profile", false, 0, false, &t->spb_profile, err) < 0 ||
	    sj_num(e, ctx, "spb_observed", false, 0, false, &t->spb_observed, err) < 0)
		return -1;
	/* a batch is the pair (uid, name); absent in states written before */
	if ((rc = sj_llong(e, ctx, "uid", false, 0, UINT32_MAX, &v, err)) < 0)
		return -1;
	if (rc)
		t->uid = (long)v;
	if ((rc = sj_llong(e, ctx, "job_id", false, 0, UINT32_MAX, &v, err)) < 0)
		return -1;
	if (rc)
		t->job_id = (long)v;
	if (parse_task_nodes(e, ctx, t, err) < 0)
		return -1;
	if (t->nnodes > 1)
		return parse_gang_ids(e, ctx, t, err);
	if ((rc = sj_int_array(e, ctx, "gpu_ids", false, 0, SATURN_MAX_GPUS_PER_NODE - 1,
			       SATURN_MAX_GPUS_PER_NODE, &t->gpu_ids, &n, err)) < 0)
		return -1;
	if (rc && n != t->gpus)
		return saturn_error_set(err, "%s.gpu_ids: must list gpus (%d) ids, not %d", ctx,
					t->gpus, n);
	return 0;
}

/* One entry of nodes[]. */
static int parse_node(json_object *e, const char *ctx, saturn_sched_state_node_t *nd,
		      saturn_error_t *err)
{
	if (!json_object_is_type(e, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_str(e, ctx, "name", true, true, STR_MAX, &nd->name, err) < 0 ||
	    sj_int(e, ctx, "gpus", true, 1, SATURN_MAX_GPUS_PER_NODE, &nd->gpus, err) < 0 ||
	    sj_str(e, ctx, "class", false, true, SATURN_CLASS_NAME_MAX, &nd->klass, err) < 0)
		return -1;
	return 0;
}

/* The optional "corrections" array (runtime feedback) into st. 0 or -1
 * with err naming the entry. */
static int corrections_parse(json_object *o, saturn_sched_state_t *st, saturn_error_t *err)
{
	json_object *arr;
	size_t n;
	int rc;

	/* absent in states written before */
	if ((rc = sj_get(o, "", "corrections", false, json_type_array, &arr, err)) <= 0)
		return rc;
	if ((n = json_object_array_length(arr)) > SATURN_MAX_TASKS)
		return saturn_error_set(err, "corrections: more than %d entries", SATURN_MAX_TASKS);
	if (!(st->corr = calloc(n ? n : 1, sizeof(*st->corr))))
		return saturn_error_set(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		saturn_fb_corr_t *c = &st->corr[st->ncorr];
		char *batch = NULL, *sig = NULL, *tech = NULL, *klass = NULL, ctx[48];
		long long uid = 0;
		int gpus = 0, bad;

		snprintf(ctx, sizeof(ctx), "corrections[%zu]", i);
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", ctx);
		c->updated = 0;
		bad = sj_llong(e, ctx, "uid", true, 0, UINT32_MAX, &uid, err) < 0 ||
		      sj_str(e, ctx, "batch", true, true, SATURN_BATCH_NAME_MAX, &batch, err) < 0 ||
		      sj_str(e, ctx, "signature", true, false, SATURN_FB_SIG_MAX, &sig, err) < 0 ||
		      sj_str(e, ctx, "technique", true, true, SATURN_TECHNIQUE_NAME_MAX, &tech, err) < 0 ||
		      sj_str(e, ctx, "class", false, false, SATURN_FB_SIG_MAX, &klass, err) < 0 ||
		      sj_int(e, ctx, "gpus", true, 1, SATURN_MAX_GPUS_PER_NODE, &gpus, err) < 0 ||
		      sj_num(e, ctx, "ratio", true, 0, true, &c->ratio, err) < 0 ||
		      sj_num(e, ctx, "batches", true, 0, false, &c->batches, err) < 0 ||
		      sj_num(e, ctx, "updated", false, -INFINITY, false, &c->updated, err) < 0;
		if (!bad) {
			saturn_fb_key_set(&c->key, (long)uid, batch, sig, tech, gpus, klass);
			c->ratio = saturn_fb_clamp_ratio(c->ratio);
			st->ncorr++;
		}
		free(batch);
		free(sig);
		free(tech);
		free(klass);
		if (bad)
			return -1;
	}
	return 0;
}

int saturn_sched_state_version(const char *format)
{
	static const char prefix[] = "saturn-sched-state/";
	const char *p;
	long v = 0;

	if (!format || strncmp(format, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	p = format + sizeof(prefix) - 1;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((v = v * 10 + (*p - '0')) > 1000000)
			return -1;
	return *p ? -1 : (int)v;
}

/* The format check with the version spelled out: a state of another
 * version is not read (an older one has nothing a newer plugin needs: the
 * job records carry every task's state; a newer one may mean something
 * this plugin cannot honour), and the message says which, for the log. */
static int check_version(json_object *o, saturn_error_t *err)
{
	json_object *f;
	int v;

	if (!json_object_is_type(o, json_type_object))
		return saturn_error_set(err, "the document must be a JSON object");
	if (!json_object_object_get_ex(o, "format", &f) || !json_object_is_type(f, json_type_string))
		return saturn_error_set(err, "format: missing or not a string: not a state this version reads (%s)",
					SATURN_SCHED_STATE_FORMAT);
	v = saturn_sched_state_version(json_object_get_string(f));
	if (v < 0)
		return saturn_error_set(err, "format: \"%.64s\" is not a saturn-sched-state document",
					json_object_get_string(f));
	if (v < SATURN_SCHED_STATE_VERSION)
		return saturn_error_set(err, "format: version %d is older than the version %d this sched/saturn reads",
					v, SATURN_SCHED_STATE_VERSION);
	if (v > SATURN_SCHED_STATE_VERSION)
		return saturn_error_set(err, "format: version %d was written by a newer sched/saturn (this one reads version %d)",
					v, SATURN_SCHED_STATE_VERSION);
	return sj_check_format(o, SATURN_SCHED_STATE_FORMAT, err);
}

saturn_sched_state_t *saturn_sched_state_parse(const char *buf, size_t len,
					       saturn_error_t *err)
{
	json_object *o = NULL, *arr;
	saturn_sched_state_t *st = calloc(1, sizeof(*st));
	char ctx[64];
	size_t n;
	int rc;

	if (!st) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	if (!(o = sj_parse(buf, len, err)) ||
	    check_version(o, err) < 0)
		goto fail;
	if (sj_str(o, "", "plan_id", false, false, STR_MAX, &st->plan_id, err) < 0 ||
	    sj_str(o, "", "method", false, false, STR_MAX, &st->method, err) < 0 ||
	    sj_num(o, "", "updated", false, -INFINITY, false, &st->updated, err) < 0 ||
	    sj_num(o, "", "makespan_s", false, -INFINITY, false, &st->makespan_s, err) < 0 ||
	    sj_num(o, "", "makespan_end", false, -INFINITY, false, &st->makespan_end, err) < 0 ||
	    sj_num(o, "", "lower_bound_s", false, -INFINITY, false, &st->lower_bound_s, err) < 0 ||
	    sj_num(o, "", "solve_s", false, -INFINITY, false, &st->solve_s, err) < 0 ||
	    sj_get(o, "", "tasks", true, json_type_array, &arr, err) < 0)
		goto fail;
	n = json_object_array_length(arr);
	if (n > SATURN_MAX_TASKS) {
		saturn_error_set(err, "tasks: more than %d entries", SATURN_MAX_TASKS);
		goto fail;
	}
	if (!(st->tasks = calloc(n ? n : 1, sizeof(*st->tasks)))) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(ctx, sizeof(ctx), "tasks[%zu]", i);
		st->ntasks++;
		if (parse_task(json_object_array_get_idx(arr, i), ctx, &st->tasks[i], err) < 0)
			goto fail;
	}
	/* the GPU nodes planned on: absent in states written before */
	if ((rc = sj_get(o, "", "nodes", false, json_type_array, &arr, err)) < 0)
		goto fail;
	if (rc) {
		n = json_object_array_length(arr);
		if (n > SATURN_MAX_NODES) {
			saturn_error_set(err, "nodes: more than %d entries", SATURN_MAX_NODES);
			goto fail;
		}
		if (!(st->nodes = calloc(n ? n : 1, sizeof(*st->nodes)))) {
			saturn_error_set(err, "out of memory");
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			snprintf(ctx, sizeof(ctx), "nodes[%zu]", i);
			st->nnodes++;
			if (parse_node(json_object_array_get_idx(arr, i), ctx, &st->nodes[i], err) < 0)
				goto fail;
		}
	}
	if (corrections_parse(o, st, err) < 0)
		goto fail;
	json_object_put(o);
	return st;
fail:
	json_object_put(o);
	saturn_sched_state_destroy(st);
	return NULL;
}
