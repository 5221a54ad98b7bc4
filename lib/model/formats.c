/* formats.c - saturn-problem/1 and /2, saturn-plan/1 and /2 in JSON
 * (doc/formats.md; version 2 adds tasks on several nodes),
 * and the file helpers the programs use to read and write them.
 *
 * Parsing is two-staged: this file turns JSON into the model with every
 * field's type, range and presence checked (messages name the field, and the
 * task or node by index and id), then saturn_problem_check() checks the
 * problem as a whole (classes, duplicate ids, fitting options). Unknown keys
 * are ignored at every level, so newer writers can add fields; a change that
 * older readers must not ignore gets a new format version instead.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats.h"
#include "jsonutil.h"

#define PROBLEM_MAX_BYTES (64u << 20)
#define MAX_BUSY 1024 /* busy entries per node */

/* --- format versions (multi-node tasks) ------------------------------------ */

/* The document's version: 1 for v1, 2 for v2 (multi-node fields allowed),
 * or -1 with err. */
static int format_version(json_object *root, const char *v1, const char *v2,
			  saturn_error_t *err)
{
	json_object *f;

	if (json_object_is_type(root, json_type_object) &&
	    json_object_object_get_ex(root, "format", &f) && f &&
	    json_object_is_type(f, json_type_string)) {
		const char *s = json_object_get_string(f);

		if (strcmp(s, v2) == 0)
			return 2;
		if (strcmp(s, v1) != 0)
			return saturn_error_set(err, "format: unsupported \"%.64s\" (expected \"%s\" or \"%s\")", s, v1, v2);
	}
	return sj_check_format(root, v1, err) < 0 ? -1 : 1;
}

/* A multi-node field in a version 1 document is refused, not ignored: an
 * old writer never makes one, and reading it as one node would be wrong. */
static int v2_only(json_object *obj, const char *ctx, const char *key,
		   int version, saturn_error_t *err)
{
	json_object *v;

	if (version >= 2 || !json_object_object_get_ex(obj, key, &v))
		return 0;
	return saturn_error_set(err, "%s.%s: needs format version 2", ctx, key);
}

/* The option's "nodes" (version 2; absent = 1). */
static int parse_option_nodes(json_object *jo, const char *ctx,
			      saturn_option_t *o, int version,
			      saturn_error_t *err)
{
	o->nodes = 1;
	if (v2_only(jo, ctx, "nodes", version, err) < 0 ||
	    sj_int(jo, ctx, "nodes", false, 1, SATURN_MAX_TASK_NODES, &o->nodes, err) < 0)
		return -1;
	return 0;
}

static int cmp_int(const void *a, const void *b);
static json_object *int_array(const int *v, int n);

/* The "nodes" array of a plan entry or running task at ctx (version 2
 * only): *arr (NULL when absent) and its length *k, 1 to
 * SATURN_MAX_TASK_NODES, with *ids grown to k x per_node ids. Returns 0,
 * or -1 with err (*ids still valid). */
static int get_nodes(json_object *jo, const char *ctx, int version, int **ids, int per_node,
		     json_object **arr, size_t *k, saturn_error_t *err)
{
	int *v;

	if (v2_only(jo, ctx, "nodes", version, err) < 0 ||
	    sj_get(jo, ctx, "nodes", false, json_type_array, arr, err) < 0)
		return -1;
	if (!*arr)
		return 0;
	*k = json_object_array_length(*arr);
	if (*k < 1 || *k > SATURN_MAX_TASK_NODES)
		return saturn_error_set(err, "%s.nodes: must list 1 to %d nodes", ctx,
					SATURN_MAX_TASK_NODES);
	v = realloc(*ids, sizeof(int) * *k * (size_t)per_node);
	if (!v)
		return saturn_error_set(err, "out of memory");
	*ids = v;
	return 0;
}

/* A plan entry's "nodes": [{"node", "gpu_ids"}, ...] (version 2), the
 * first being the entry's "node" and "gpu_ids". Fills nnodes, more_names
 * and the gpu_ids of every node, node after node. */
static int parse_assign_nodes(json_object *ja, const char *ctx,
			      saturn_assign_t *a, int version,
			      saturn_error_t *err)
{
	char nctx[SATURN_ERROR_LEN / 2];
	json_object *arr;
	size_t k;

	a->nnodes = 1;
	if (get_nodes(ja, ctx, version, &a->gpu_ids, a->gpus, &arr, &k, err) < 0)
		return -1;
	if (!arr)
		return 0;
	if (k > 1) {
		a->more_names = calloc(k - 1, sizeof(char *));
		a->more_nodes = calloc(k - 1, sizeof(int));
		if (!a->more_names || !a->more_nodes)
			return saturn_error_set(err, "out of memory");
		for (size_t j = 0; j + 1 < k; j++)
			a->more_nodes[j] = -1;
	}
	a->nnodes = (int)k;
	for (size_t j = 0; j < k; j++) {
		json_object *e = json_object_array_get_idx(arr, j);
		char *name = NULL;
		int *v = NULL, n = 0, rc;

		snprintf(nctx, sizeof(nctx), "%s.nodes[%zu]", ctx, j);
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", nctx);
		if (sj_str(e, nctx, "node", true, true, SATURN_ID_MAX, &name, err) < 0)
			return -1;
		rc = sj_int_array(e, nctx, "gpu_ids", true, 0, SATURN_MAX_GPUS_PER_NODE - 1,
				  SATURN_MAX_GPUS_PER_NODE, &v, &n, err);
		if (rc < 0) {
			free(name);
			return -1;
		}
		if (n != a->gpus) {
			free(name);
			free(v);
			return saturn_error_set(err, "%s.gpu_ids: lists %d ids for %d GPUs per node", nctx, n, a->gpus);
		}
		qsort(v, (size_t)n, sizeof(int), cmp_int);
		if (j == 0 && (strcmp(name, a->node_name) != 0 ||
			       memcmp(v, a->gpu_ids, sizeof(int) * (size_t)n) != 0)) {
			free(name);
			free(v);
			return saturn_error_set(err, "%s: must repeat the entry's node and gpu_ids", nctx);
		}
		memcpy(a->gpu_ids + j * (size_t)a->gpus, v, sizeof(int) * (size_t)n);
		free(v);
		if (j == 0)
			free(name);
		else
			a->more_names[j - 1] = name;
	}
	return 0;
}

/* The "nodes" list of a multi-node plan entry. */
static json_object *assign_nodes_json(const saturn_assign_t *a)
{
	json_object *arr = json_object_new_array();

	for (int j = 0; arr && j < saturn_assign_nnodes(a); j++) {
		json_object *e = json_object_new_object();
		const char *name = saturn_assign_name_at(a, j);

		if (sj_append(arr, e) < 0 ||
		    sj_put(e, "node", json_object_new_string(name ? name : "")) < 0 ||
		    sj_put(e, "gpu_ids", int_array(a->gpu_ids ? a->gpu_ids + j * a->gpus : NULL, a->gpu_ids ? a->gpus : 0)) < 0) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

/* --- problem: JSON -> model ----------------------------------------------- */

static void node_clear(saturn_node_t *n)
{
	free(n->name);
	free(n->klass);
	for (int b = 0; b < n->nbusy; b++)
		free(n->busy[b].gpu_ids);
	free(n->busy);
	memset(n, 0, sizeof(*n));
}

static void task_clear(saturn_task_t *t)
{
	free(t->id);
	for (int o = 0; o < t->noptions; o++)
		saturn_option_clear(&t->options[o]);
	free(t->options);
	free(t->running.gpu_ids);
	free(t->running.more_nodes);
	memset(t, 0, sizeof(*t));
}

static int parse_node(json_object *jn, int i, saturn_node_t *n,
		      saturn_error_t *err)
{
	char ctx[SATURN_ERROR_LEN / 2], bctx[SATURN_ERROR_LEN / 2];
	json_object *busy;
	size_t nb;

	snprintf(ctx, sizeof(ctx), "nodes[%d]", i);
	if (!json_object_is_type(jn, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_str(jn, ctx, "name", true, true, SATURN_ID_MAX, &n->name, err) < 0)
		return -1;
	snprintf(ctx, sizeof(ctx), "nodes[%d] (%.64s)", i, n->name);
	if (sj_int(jn, ctx, "gpus", true, 1, SATURN_MAX_GPUS_PER_NODE, &n->gpus, err) < 0 ||
	    sj_str(jn, ctx, "class", false, true, SATURN_ID_MAX, &n->klass, err) < 0 ||
	    sj_get(jn, ctx, "busy", false, json_type_array, &busy, err) < 0)
		return -1;
	if (!busy)
		return 0;
	nb = json_object_array_length(busy);
	if (nb > MAX_BUSY)
		return saturn_error_set(err, "%s.busy: more than %d entries", ctx, MAX_BUSY);
	n->busy = calloc(nb + 1, sizeof(*n->busy));
	if (!n->busy)
		return saturn_error_set(err, "out of memory");
	for (size_t b = 0; b < nb; b++) {
		json_object *jb = json_object_array_get_idx(busy, b);
		saturn_busy_t *sb = &n->busy[b];

		n->nbusy++;
		snprintf(bctx, sizeof(bctx), "%s.busy[%zu]", ctx, b);
		if (!json_object_is_type(jb, json_type_object))
			return saturn_error_set(err, "%s: must be an object", bctx);
		if (sj_int_array(jb, bctx, "gpu_ids", true, 0, n->gpus - 1, n->gpus,
				 &sb->gpu_ids, &sb->ngpus, err) < 0 ||
		    sj_num(jb, bctx, "until_s", true, 0, false, &sb->until_s, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_option(json_object *jo, const char *ctx, saturn_option_t *o,
			int version, saturn_error_t *err)
{
	if (!json_object_is_type(jo, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_str(jo, ctx, "technique", true, true, SATURN_ID_MAX, &o->technique, err) < 0 ||
	    sj_int(jo, ctx, "gpus", true, 1, SATURN_MAX_GPUS_PER_NODE, &o->gpus, err) < 0 ||
	    sj_num(jo, ctx, "sec_per_batch", true, 0, true, &o->sec_per_batch, err) < 0 ||
	    sj_str(jo, ctx, "class", false, true, SATURN_ID_MAX, &o->klass, err) < 0 ||
	    parse_option_nodes(jo, ctx, o, version, err) < 0)
		return -1;
	o->class_idx = -1;
	return 0;
}

static int find_node(const saturn_problem_t *p, const char *name)
{
	for (int n = 0; n < p->nnodes; n++)
		if (strcmp(p->nodes[n].name, name) == 0)
			return n;
	return -1;
}

/* A running task's "nodes": [{"node", "gpu_ids"}, ...] (version 2), the
 * first being its "node" and "gpu_ids": fills nnodes, more_nodes and the
 * ids of every node, node after node. */
static int parse_running_nodes(json_object *jr, const char *rctx,
			       const saturn_problem_t *p, saturn_running_t *r,
			       int version, saturn_error_t *err)
{
	char nctx[SATURN_ERROR_LEN / 2];
	json_object *arr;
	size_t k;

	r->nnodes = 1;
	if (get_nodes(jr, rctx, version, &r->gpu_ids, r->ngpus, &arr, &k, err) < 0)
		return -1;
	if (!arr)
		return 0;
	if (k > 1 && !(r->more_nodes = calloc(k - 1, sizeof(int))))
		return saturn_error_set(err, "out of memory");
	r->nnodes = (int)k;
	for (size_t j = 0; j < k; j++) {
		json_object *e = json_object_array_get_idx(arr, j);
		char *name = NULL;
		int *v = NULL, n = 0, node;

		snprintf(nctx, sizeof(nctx), "%s.nodes[%zu]", rctx, j);
		if (!json_object_is_type(e, json_type_object))
			return saturn_error_set(err, "%s: must be an object", nctx);
		if (sj_str(e, nctx, "node", true, true, SATURN_ID_MAX, &name, err) < 0)
			return -1;
		node = find_node(p, name);
		if (node < 0) {
			saturn_error_set(err, "%s.node: unknown node \"%.64s\"", nctx, name);
			free(name);
			return -1;
		}
		free(name);
		if (sj_int_array(e, nctx, "gpu_ids", true, 0, p->nodes[node].gpus - 1,
				 p->nodes[node].gpus, &v, &n, err) < 0)
			return -1;
		if (n != r->ngpus) {
			free(v);
			return saturn_error_set(err, "%s.gpu_ids: lists %d ids for %d GPUs per node", nctx, n, r->ngpus);
		}
		if (j == 0 && (node != r->node ||
			       memcmp(v, r->gpu_ids, sizeof(int) * (size_t)n) != 0)) {
			free(v);
			return saturn_error_set(err, "%s: must repeat the running task's node and gpu_ids", nctx);
		}
		memcpy(r->gpu_ids + j * (size_t)r->ngpus, v, sizeof(int) * (size_t)n);
		free(v);
		if (j > 0)
			r->more_nodes[j - 1] = node;
	}
	return 0;
}

/* "running": node name -> index, technique + gpus -> option index (one
 * whose class admits the node). */
static int parse_running(json_object *jr, const char *ctx,
			 const saturn_problem_t *p, saturn_task_t *t,
			 int version, saturn_error_t *err)
{
	char rctx[SATURN_ERROR_LEN / 2];
	char *node = NULL, *tech = NULL;
	saturn_running_t *r = &t->running;
	int gpus = 0, rc = -1, has_gpus;
	const char *nclass;

	snprintf(rctx, sizeof(rctx), "%s.running", ctx);
	if (sj_str(jr, rctx, "node", true, true, SATURN_ID_MAX, &node, err) < 0 ||
	    sj_str(jr, rctx, "technique", true, true, SATURN_ID_MAX, &tech, err) < 0)
		goto out;
	has_gpus = sj_int(jr, rctx, "gpus", false, 1, SATURN_MAX_GPUS_PER_NODE, &gpus, err);
	if (has_gpus < 0)
		goto out;
	r->node = find_node(p, node);
	if (r->node < 0) {
		saturn_error_set(err, "%s.node: unknown node \"%.64s\"", rctx, node);
		goto out;
	}
	if (sj_int_array(jr, rctx, "gpu_ids", true, 0, p->nodes[r->node].gpus - 1,
			 p->nodes[r->node].gpus, &r->gpu_ids, &r->ngpus, err) < 0)
		goto out;
	if (has_gpus && gpus != r->ngpus) {
		saturn_error_set(err, "%s.gpus: %d but gpu_ids lists %d", rctx, gpus, r->ngpus);
		goto out;
	}
	if (parse_running_nodes(jr, rctx, p, r, version, err) < 0)
		goto out;
	nclass = p->nodes[r->node].klass ? p->nodes[r->node].klass : "";
	/* a running task names its option by what it runs with: the one key */
	r->option = saturn_task_find_option(t, tech, r->ngpus, saturn_running_nnodes(r), nclass);
	if (r->option < 0) {
		saturn_error_set(err, "%s: technique \"%.64s\" on %d GPUs matches none of the task's options for node %.64s", rctx, tech, r->ngpus, node);
		goto out;
	}
	t->is_running = true;
	rc = 0;
out:
	free(node);
	free(tech);
	return rc;
}

static int parse_task(json_object *jt, int i, const saturn_problem_t *p,
		      saturn_task_t *t, int version, saturn_error_t *err)
{
	char ctx[SATURN_ERROR_LEN / 2], octx[SATURN_ERROR_LEN / 2];
	json_object *opts, *running;
	size_t no;

	snprintf(ctx, sizeof(ctx), "tasks[%d]", i);
	if (!json_object_is_type(jt, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_str(jt, ctx, "id", true, true, SATURN_ID_MAX, &t->id, err) < 0)
		return -1;
	snprintf(ctx, sizeof(ctx), "tasks[%d] (%.64s)", i, t->id);
	if (sj_num(jt, ctx, "batches", true, 0, false, &t->batches, err) < 0 ||
	    sj_num(jt, ctx, "release_s", false, 0, false, &t->release_s, err) < 0 ||
	    sj_get(jt, ctx, "options", true, json_type_array, &opts, err) < 0 ||
	    sj_get(jt, ctx, "running", false, json_type_object, &running, err) < 0)
		return -1;
	no = json_object_array_length(opts);
	if (no < 1)
		return saturn_error_set(err, "%s.options: at least one option is needed", ctx);
	if (no > SATURN_MAX_OPTIONS)
		return saturn_error_set(err, "%s.options: more than %d options", ctx, SATURN_MAX_OPTIONS);
	t->options = calloc(no, sizeof(*t->options));
	if (!t->options)
		return saturn_error_set(err, "out of memory");
	for (size_t o = 0; o < no; o++) {
		t->noptions++;
		snprintf(octx, sizeof(octx), "%s.options[%zu]", ctx, o);
		if (parse_option(json_object_array_get_idx(opts, o), octx,
				 &t->options[o], version, err) < 0)
			return -1;
	}
	if (running && parse_running(running, ctx, p, t, version, err) < 0)
		return -1;
	return 0;
}

saturn_problem_t *saturn_problem_parse(const char *buf, size_t len,
				       saturn_error_t *err)
{
	json_object *root = sj_parse(buf, len, err), *nodes, *tasks;
	saturn_problem_t *p = NULL;
	size_t nn, nt;
	int version;

	if (!root)
		return NULL;
	version = format_version(root, SATURN_PROBLEM_FORMAT, SATURN_PROBLEM_FORMAT_2, err);
	if (version < 0 ||
	    sj_get(root, "", "nodes", true, json_type_array, &nodes, err) < 0 ||
	    sj_get(root, "", "tasks", true, json_type_array, &tasks, err) < 0)
		goto fail;
	nn = json_object_array_length(nodes);
	nt = json_object_array_length(tasks);
	if (nn < 1) {
		saturn_error_set(err, "nodes: at least one node is needed");
		goto fail;
	}
	if (nn > SATURN_MAX_NODES) {
		saturn_error_set(err, "nodes: more than %d nodes", SATURN_MAX_NODES);
		goto fail;
	}
	if (nt > SATURN_MAX_TASKS) {
		saturn_error_set(err, "tasks: more than %d tasks", SATURN_MAX_TASKS);
		goto fail;
	}
	p = saturn_problem_create();
	if (!p) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nn; i++) {
		saturn_node_t n = {0};

		if (parse_node(json_object_array_get_idx(nodes, i), (int)i, &n, err) < 0) {
			node_clear(&n);
			goto fail;
		}
		if (saturn_problem_add_node(p, &n) < 0) {
			node_clear(&n);
			saturn_error_set(err, "out of memory");
			goto fail;
		}
	}
	for (size_t i = 0; i < nt; i++) {
		saturn_task_t t = {0};

		if (parse_task(json_object_array_get_idx(tasks, i), (int)i, p, &t, version, err) < 0) {
			task_clear(&t);
			goto fail;
		}
		if (saturn_problem_add_task(p, &t) < 0) {
			task_clear(&t);
			saturn_error_set(err, "out of memory");
			goto fail;
		}
	}
	if (saturn_problem_check(p, err) < 0)
		goto fail;
	json_object_put(root);
	return p;
fail:
	json_object_put(root);
	saturn_problem_destroy(p);
	return NULL;
}

saturn_problem_t *saturn_problem_load(const char *path, saturn_error_t *err)
{
	size_t len;
	char *buf = saturn_read_file(path, PROBLEM_MAX_BYTES, &len, err);
	saturn_problem_t *p;

	if (!buf)
		return NULL;
	p = saturn_problem_parse(buf, len, err);
	free(buf);
	if (!p)
		saturn_error_prefix(err, "%s", strcmp(path, "-") ? path : "stdin");
	return p;
}

/* --- problem: model -> JSON ---------------------------------------------- */


static json_object *int_array(const int *v, int n)
{
	json_object *a = json_object_new_array();

	for (int i = 0; a && i < n; i++)
		if (sj_append(a, json_object_new_int(v[i])) < 0) {
			json_object_put(a);
			return NULL;
		}
	return a;
}

static json_object *node_json(const saturn_node_t *n)
{
	json_object *o = json_object_new_object(), *busy;

	if (sj_put(o, "name", json_object_new_string(n->name)) < 0 ||
	    sj_put(o, "gpus", json_object_new_int(n->gpus)) < 0 ||
	    (n->klass && sj_put(o, "class", json_object_new_string(n->klass)) < 0))
		goto fail;
	if (n->nbusy > 0) {
		busy = json_object_new_array();
		if (sj_put(o, "busy", busy) < 0)
			goto fail;
		for (int b = 0; b < n->nbusy; b++) {
			json_object *e = json_object_new_object();

			if (sj_append(busy, e) < 0 ||
			    sj_put(e, "gpu_ids", int_array(n->busy[b].gpu_ids, n->busy[b].ngpus)) < 0 ||
			    sj_put(e, "until_s", sj_new_num(n->busy[b].until_s)) < 0)
				goto fail;
		}
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

/* The "nodes" list of a task running on several nodes. */
static json_object *running_nodes_json(const saturn_problem_t *p,
				       const saturn_running_t *r)
{
	json_object *arr = json_object_new_array();

	for (int j = 0; arr && j < saturn_running_nnodes(r); j++) {
		json_object *e = json_object_new_object();

		if (sj_append(arr, e) < 0 ||
		    sj_put(e, "node", json_object_new_string(p->nodes[saturn_running_node_at(r, j)].name)) < 0 ||
		    sj_put(e, "gpu_ids", int_array(r->gpu_ids + (size_t)j * (size_t)r->ngpus, r->ngpus)) < 0) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static json_object *task_json(const saturn_problem_t *p, const saturn_task_t *t)
{
	json_object *o = json_object_new_object(), *opts;

	if (sj_put(o, "id", json_object_new_string(t->id)) < 0 ||
	    sj_put(o, "batches", sj_new_num(t->batches)) < 0 ||
	    (t->release_s > 0 && sj_put(o, "release_s", sj_new_num(t->release_s)) < 0))
		goto fail;
	opts = json_object_new_array();
	if (sj_put(o, "options", opts) < 0)
		goto fail;
	for (int i = 0; i < t->noptions; i++) {
		const saturn_option_t *opt = &t->options[i];
		json_object *e = json_object_new_object();

		if (sj_append(opts, e) < 0 ||
		    sj_put(e, "technique", json_object_new_string(opt->technique)) < 0 ||
		    sj_put(e, "gpus", json_object_new_int(opt->gpus)) < 0 ||
		    sj_put(e, "sec_per_batch", sj_new_num(opt->sec_per_batch)) < 0 ||
		    (opt->klass && sj_put(e, "class", json_object_new_string(opt->klass)) < 0) ||
		    (saturn_option_nodes(opt) > 1 && sj_put(e, "nodes", json_object_new_int(opt->nodes)) < 0))
			goto fail;
	}
	if (t->is_running) {
		const saturn_running_t *r = &t->running;
		json_object *e = json_object_new_object();

		if (sj_put(o, "running", e) < 0 ||
		    sj_put(e, "node", json_object_new_string(p->nodes[r->node].name)) < 0 ||
		    sj_put(e, "gpu_ids", int_array(r->gpu_ids, r->ngpus)) < 0 ||
		    sj_put(e, "technique", json_object_new_string(t->options[r->option].technique)) < 0 ||
		    sj_put(e, "gpus", json_object_new_int(r->ngpus)) < 0 ||
		    (saturn_running_nnodes(r) > 1 && sj_put(e, "nodes", running_nodes_json(p, r)) < 0))
			goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

char *saturn_problem_to_json(const saturn_problem_t *p)
{
	json_object *root = json_object_new_object(), *nodes, *tasks;
	char *s = NULL;

	nodes = json_object_new_array();
	tasks = json_object_new_array();
	if (sj_put(root, "format", json_object_new_string(saturn_problem_multinode(p) ? SATURN_PROBLEM_FORMAT_2 : SATURN_PROBLEM_FORMAT)) < 0) {
		json_object_put(nodes);
		json_object_put(tasks);
		goto out;
	}
	if (sj_put(root, "nodes", nodes) < 0) {
		json_object_put(tasks);
		goto out;
	}
	if (sj_put(root, "tasks", tasks) < 0)
		goto out;
	for (int i = 0; i < p->nnodes; i++)
		if (sj_append(nodes, node_json(&p->nodes[i])) < 0)
			goto out;
	for (int i = 0; i < p->ntasks; i++)
		if (sj_append(tasks, task_json(p, &p->tasks[i])) < 0)
			goto out;
	s = sj_to_string(root, true);
out:
	json_object_put(root);
	if (!s)
		errno = ENOMEM;
	return s;
}

/* --- plan ------------------------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int parse_assign(json_object *ja, int i, saturn_assign_t *a,
			int version, saturn_error_t *err)
{
	char ctx[SATURN_ERROR_LEN / 2];

	snprintf(ctx, sizeof(ctx), "tasks[%d]", i);
	if (!json_object_is_type(ja, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_str(ja, ctx, "id", true, true, SATURN_ID_MAX, &a->task_id, err) < 0)
		return -1;
	snprintf(ctx, sizeof(ctx), "tasks[%d] (%.64s)", i, a->task_id);
	if (sj_str(ja, ctx, "technique", true, true, SATURN_ID_MAX, &a->technique, err) < 0 ||
	    sj_int(ja, ctx, "gpus", true, 1, SATURN_MAX_GPUS_PER_NODE, &a->gpus, err) < 0 ||
	    sj_str(ja, ctx, "node", true, true, SATURN_ID_MAX, &a->node_name, err) < 0 ||
	    sj_num(ja, ctx, "start_s", true, 0, false, &a->start_s, err) < 0 ||
	    sj_num(ja, ctx, "end_s", true, 0, false, &a->end_s, err) < 0)
		return -1;
	{
		int n = 0;

		if (sj_int_array(ja, ctx, "gpu_ids", true, 0, SATURN_MAX_GPUS_PER_NODE - 1,
				 SATURN_MAX_GPUS_PER_NODE, &a->gpu_ids, &n, err) < 0)
			return -1;
		if (n != a->gpus)
			return saturn_error_set(err, "%s.gpu_ids: lists %d ids for %d GPUs", ctx, n, a->gpus);
		qsort(a->gpu_ids, (size_t)n, sizeof(int), cmp_int);
	}
	if (parse_assign_nodes(ja, ctx, a, version, err) < 0)
		return -1;
	/* which option of the task (its identity); a plan written before
	 * the field gets it once, by name, in saturn_plan_resolve() */
	a->option = -1;
	if (sj_int(ja, ctx, "option", false, 0, SATURN_MAX_OPTIONS - 1, &a->option, err) < 0)
		return -1;
	if (a->end_s < a->start_s)
		return saturn_error_set(err, "%s.end_s: before start_s", ctx);
	return 0;
}

static int copy_word(json_object *obj, const char *key, char *dst, size_t sz,
		     saturn_error_t *err)
{
	char *s = NULL;
	int rc = sj_str(obj, "solver", key, false, false, sz - 1, &s, err);

	if (rc > 0)
		snprintf(dst, sz, "%s", s);
	free(s);
	return rc;
}

saturn_plan_t *saturn_plan_parse(const char *buf, size_t len,
				 saturn_error_t *err)
{
	json_object *root = sj_parse(buf, len, err), *tasks, *solver;
	saturn_plan_t *plan = NULL;
	double makespan = 0, lb = 0, solve = 0;
	size_t nt;
	int version;

	if (!root)
		return NULL;
	version = format_version(root, SATURN_PLAN_FORMAT, SATURN_PLAN_FORMAT_2, err);
	if (version < 0 ||
	    sj_num(root, "", "makespan_s", true, 0, false, &makespan, err) < 0 ||
	    sj_num(root, "", "lower_bound_s", false, 0, false, &lb, err) < 0 ||
	    sj_get(root, "", "solver", false, json_type_object, &solver, err) < 0 ||
	    sj_get(root, "", "tasks", true, json_type_array, &tasks, err) < 0)
		goto fail;
	nt = json_object_array_length(tasks);
	if (nt > SATURN_MAX_TASKS) {
		saturn_error_set(err, "tasks: more than %d tasks", SATURN_MAX_TASKS);
		goto fail;
	}
	plan = saturn_plan_create((int)nt);
	if (!plan) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	plan->makespan_s = makespan;
	plan->lower_bound_s = lb;
	if (solver &&
	    (copy_word(solver, "method", plan->method, sizeof(plan->method), err) < 0 ||
	     copy_word(solver, "status", plan->status, sizeof(plan->status), err) < 0 ||
	     sj_num(solver, "solver", "solve_s", false, 0, false, &solve, err) < 0))
		goto fail;
	plan->solve_s = solve;
	for (size_t i = 0; i < nt; i++)
		if (parse_assign(json_object_array_get_idx(tasks, i), (int)i,
				 &plan->assign[i], version, err) < 0)
			goto fail;
	json_object_put(root);
	return plan;
fail:
	json_object_put(root);
	saturn_plan_destroy(plan);
	return NULL;
}

char *saturn_plan_to_json(const saturn_plan_t *plan, int pretty)
{
	json_object *root = json_object_new_object(), *solver, *tasks;
	char *s = NULL;

	if (sj_put(root, "format", json_object_new_string(saturn_plan_multinode(plan) ? SATURN_PLAN_FORMAT_2 : SATURN_PLAN_FORMAT)) < 0 ||
	    sj_put(root, "makespan_s", sj_new_num(plan->makespan_s)) < 0 ||
	    sj_put(root, "lower_bound_s", sj_new_num(plan->lower_bound_s)) < 0)
		goto out;
	solver = json_object_new_object();
	if (sj_put(root, "solver", solver) < 0 ||
	    sj_put(solver, "method", json_object_new_string(plan->method)) < 0 ||
	    sj_put(solver, "status", json_object_new_string(plan->status)) < 0 ||
	    sj_put(solver, "solve_s", sj_new_num(plan->solve_s)) < 0)
		goto out;
	tasks = json_object_new_array();
	if (sj_put(root, "tasks", tasks) < 0)
		goto out;
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];
		json_object *e = json_object_new_object();

		if (sj_append(tasks, e) < 0 ||
		    sj_put(e, "id", json_object_new_string(a->task_id ? a->task_id : "")) < 0 ||
		    sj_put(e, "technique",
			   json_object_new_string(a->technique ? a->technique : "")) < 0 ||
		    sj_put(e, "gpus", json_object_new_int(a->gpus)) < 0 ||
		    sj_put(e, "node", json_object_new_string(a->node_name ? a->node_name : "")) <
			0 ||
		    sj_put(e, "gpu_ids", int_array(a->gpu_ids, a->gpu_ids ? a->gpus : 0)) < 0 ||
		    sj_put(e, "start_s", sj_new_num(a->start_s)) < 0 ||
		    sj_put(e, "end_s", sj_new_num(a->end_s)) < 0 ||
		    (a->option >= 0 && sj_put(e, "option", json_object_new_int(a->option)) < 0) ||
		    (saturn_assign_nnodes(a) > 1 && sj_put(e, "nodes", assign_nodes_json(a)) < 0))
			goto out;
	}
	s = sj_to_string(root, pretty != 0);
out:
	json_object_put(root);
	if (!s)
		errno = ENOMEM;
	return s;
}
