/* profile.c - saturn-profile/1: a batch's measured throughput and hardware
 * summary (doc/formats.md), read from files that user jobs write.
 *
 * The reader is defensive because the writer is not trusted: the file is
 * opened without following symlinks and without blocking on FIFOs, must be
 * a regular file of the expected owner and below SATURN_PROFILE_MAX_BYTES,
 * and every field is typed and range-checked with a message that names it,
 * including the planner's limits (model.h): no option's runtime (batches x
 * sec_per_batch) beyond SATURN_MAX_RUNTIME_S, no more than
 * SATURN_MAX_BATCHES batches, technique names of at most
 * SATURN_TECHNIQUE_NAME_MAX characters. Every string is restricted to a
 * safe character set (safetext.h) before it is used, even in an error
 * message. A profile that passes yields options saturn_problem_check()
 * accepts.
 * Array task ids may be given as a list of integers or as a Slurm-style
 * range string ("0-7,9,12-20:4"); they are always written as a list.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idset.h"
#include "jsonutil.h"
#include "profile.h"

#define MAX_TASK_ID SATURN_TASK_ID_MAX
#define MAX_HW 1024
#define MAX_REASON 1024
#define MAX_PARAMS 65536

static const char *const status_names[] = {
	[SATURN_OPT_MEASURED] = "measured", [SATURN_OPT_PREDICTED] = "predicted",
	[SATURN_OPT_OOM] = "oom",           [SATURN_OPT_FAILED] = "failed",
	[SATURN_OPT_TIMEOUT] = "timeout",   [SATURN_OPT_SKIPPED] = "skipped",
};
#define NSTATUS ((int)(sizeof(status_names) / sizeof(status_names[0])))

const char *saturn_opt_status_name(saturn_opt_status_t s)
{
	if ((int)s < 0 || (int)s >= NSTATUS)
		return NULL;
	return status_names[s];
}

int saturn_opt_status_parse(const char *name, saturn_opt_status_t *s)
{
	for (int i = 0; name && i < NSTATUS; i++)
		if (strcmp(name, status_names[i]) == 0) {
			*s = (saturn_opt_status_t)i;
			return 0;
		}
	return -1;
}

saturn_profile_t *saturn_profile_create(void)
{
	return calloc(1, sizeof(saturn_profile_t));
}

static void option_free(saturn_profile_option_t *o)
{
	free(o->technique);
	free(o->reason);
	free(o->params);
}

static void task_free(saturn_profile_task_t *t)
{
	free(t->signature);
	free(t->task_ids);
	free(t->klass);
	for (int i = 0; i < t->noptions; i++)
		option_free(&t->options[i]);
	free(t->options);
}

static void hw_free(saturn_profile_hw_t *h)
{
	free(h->klass);
	free(h->node);
	free(h->gpu_model);
	free(h->interconnect);
	free(h->link_gbs);
	free(h->nccl);
}

void saturn_profile_destroy(saturn_profile_t *pr)
{
	if (!pr)
		return;
	free(pr->batch);
	for (int i = 0; i < pr->nhw; i++)
		hw_free(&pr->hw[i]);
	free(pr->hw);
	for (int i = 0; i < pr->ntasks; i++)
		task_free(&pr->tasks[i]);
	free(pr->tasks);
	free(pr);
}

/* --- parsing ---------------------------------------------------------------- */

static int parse_hw(json_object *jh, int i, saturn_profile_hw_t *h,
		    saturn_error_t *err)
{
	char ctx[SATURN_ERROR_LEN / 2], ectx[SATURN_ERROR_LEN / 2];
	json_object *links, *nccl;
	size_t n;

	snprintf(ctx, sizeof(ctx), "hardware[%d]", i);
	if (!json_object_is_type(jh, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_text(jh, ctx, "class", false, true, SATURN_ID_MAX, SATURN_TEXT_NAME, &h->klass, err) < 0 ||
	    sj_text(jh, ctx, "node", false, true, SATURN_ID_MAX, SATURN_TEXT_LINE, &h->node, err) < 0 ||
	    sj_text(jh, ctx, "gpu_model", true, true, SATURN_ID_MAX, SATURN_TEXT_LINE, &h->gpu_model,
		    err) < 0 ||
	    sj_int(jh, ctx, "gpus", true, 1, SATURN_MAX_GPUS_PER_NODE, &h->gpus, err) < 0 ||
	    sj_num(jh, ctx, "gpu_mem_mb", false, 0, false, &h->gpu_mem_mb, err) < 0 ||
	    sj_text(jh, ctx, "interconnect", false, true, SATURN_ID_MAX, SATURN_TEXT_LINE,
		    &h->interconnect, err) < 0 ||
	    sj_num(jh, ctx, "gemm_tflops", false, 0, false, &h->gemm_tflops, err) < 0 ||
	    sj_get(jh, ctx, "link_gbs", false, json_type_array, &links, err) < 0 ||
	    sj_get(jh, ctx, "nccl", false, json_type_array, &nccl, err) < 0)
		return -1;
	if (links) {
		if (json_object_array_length(links) != (size_t)h->gpus)
			return saturn_error_set(err, "%s.link_gbs: must be a %d x %d matrix", ctx, h->gpus, h->gpus);
		h->link_gbs = calloc((size_t)h->gpus * (size_t)h->gpus, sizeof(double));
		if (!h->link_gbs)
			return saturn_error_set(err, "out of memory");
		for (int r = 0; r < h->gpus; r++) {
			json_object *row = json_object_array_get_idx(links, (size_t)r);

			if (!json_object_is_type(row, json_type_array) ||
			    json_object_array_length(row) != (size_t)h->gpus)
				return saturn_error_set(err, "%s.link_gbs[%d]: must be an array of %d numbers", ctx, r, h->gpus);
			for (int c = 0; c < h->gpus; c++) {
				json_object *v = json_object_array_get_idx(row, (size_t)c);
				double d;

				if (!json_object_is_type(v, json_type_int) &&
				    !json_object_is_type(v, json_type_double))
					return saturn_error_set(err, "%s.link_gbs[%d][%d]: must be a number", ctx, r, c);
				d = json_object_get_double(v);
				if (!(d >= 0) || d > 1e12)
					return saturn_error_set(err, "%s.link_gbs[%d][%d]: must be a finite number >= 0", ctx, r, c);
				h->link_gbs[r * h->gpus + c] = d;
			}
		}
	}
	if (!nccl)
		return 0;
	n = json_object_array_length(nccl);
	if (n > SATURN_MAX_GPUS_PER_NODE)
		return saturn_error_set(err, "%s.nccl: more than %d entries", ctx, SATURN_MAX_GPUS_PER_NODE);
	h->nccl = calloc(n + 1, sizeof(*h->nccl));
	if (!h->nccl)
		return saturn_error_set(err, "out of memory");
	for (size_t k = 0; k < n; k++) {
		json_object *je = json_object_array_get_idx(nccl, k);
		saturn_nccl_bw_t *b = &h->nccl[k];

		snprintf(ectx, sizeof(ectx), "%s.nccl[%zu]", ctx, k);
		if (!json_object_is_type(je, json_type_object))
			return saturn_error_set(err, "%s: must be an object", ectx);
		if (sj_int(je, ectx, "gpus", true, 1, h->gpus, &b->gpus, err) < 0 ||
		    sj_num(je, ectx, "allreduce_busbw_gbs", false, 0, false, &b->allreduce_busbw_gbs, err) < 0 ||
		    sj_num(je, ectx, "allgather_busbw_gbs", false, 0, false, &b->allgather_busbw_gbs, err) < 0)
			return -1;
		h->nnccl++;
	}
	return 0;
}

/* Append id to *ids (growing *cap). */
static int push_id(int **ids, int *n, int *cap, int id)
{
	if (*n >= SATURN_MAX_TASKS)
		return -1;
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 16;
		int *r = realloc(*ids, sizeof(int) * (size_t)ncap);

		if (!r)
			return -1;
		*ids = r;
		*cap = ncap;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

static int parse_task_ids(json_object *jt, const char *ctx,
			  saturn_profile_task_t *t, saturn_error_t *err)
{
	char what[SATURN_ERROR_LEN / 2], ewhat[SATURN_ERROR_LEN / 2];
	json_object *v;
	int cap = 0;
	size_t n;

	snprintf(what, sizeof(what), "%s.task_ids", ctx);
	if (sj_get(jt, ctx, "task_ids", true, json_type_null, &v, err) < 0)
		return -1;
	if (json_object_is_type(v, json_type_string)) {
		int k = saturn_idset_parse(what, json_object_get_string(v), MAX_TASK_ID,
					   SATURN_MAX_TASKS, &t->task_ids, err);

		t->ntask_ids = k < 0 ? 0 : k;
		return k < 0 ? -1 : 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return saturn_error_set(err, "%s: must be an array of integers or a range string", what);
	n = json_object_array_length(v);
	if (n > SATURN_MAX_TASKS)
		return saturn_error_set(err, "%s: more than %d ids", what, SATURN_MAX_TASKS);
	for (size_t i = 0; i < n; i++) {
		int id;

		snprintf(ewhat, sizeof(ewhat), "%s[%zu]", what, i);
		if (sj_as_int(json_object_array_get_idx(v, i), ewhat, 0, MAX_TASK_ID, &id, err) < 0)
			return -1;
		if (push_id(&t->task_ids, &t->ntask_ids, &cap, id) < 0)
			return saturn_error_set(err, "out of memory");
	}
	return 0;
}

static int parse_option(json_object *jo, const char *ctx,
			saturn_profile_option_t *o, saturn_error_t *err)
{
	char *status = NULL;
	json_object *params;
	bool usable;
	int rc;

	if (!json_object_is_type(jo, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	if (sj_text(jo, ctx, "technique", true, true, SATURN_TECHNIQUE_NAME_MAX, SATURN_TEXT_NAME,
		    &o->technique, err) < 0 ||
	    sj_int(jo, ctx, "gpus", true, 1, SATURN_MAX_GPUS_PER_NODE, &o->gpus, err) < 0 ||
	    sj_text(jo, ctx, "status", true, true, SATURN_ID_MAX, SATURN_TEXT_NAME, &status, err) < 0)
		return -1;
	rc = saturn_opt_status_parse(status, &o->status);
	if (rc < 0)
		saturn_error_set(err, "%s.status: unknown status \"%.64s\" (measured, predicted, oom, failed, timeout or skipped)", ctx, status);
	free(status);
	if (rc < 0)
		return -1;
	usable = o->status == SATURN_OPT_MEASURED || o->status == SATURN_OPT_PREDICTED;
	if (sj_num(jo, ctx, "sec_per_batch", usable, 0, usable, &o->sec_per_batch, err) < 0)
		return -1;
	if (o->sec_per_batch > SATURN_MAX_RUNTIME_S)
		return saturn_error_set(err, "%s.sec_per_batch: %.6g s is beyond the limit of %.0f s", ctx, o->sec_per_batch, SATURN_MAX_RUNTIME_S);
	if (sj_num(jo, ctx, "peak_mem_mb", false, 0, false, &o->peak_mem_mb, err) < 0 ||
	    sj_text(jo, ctx, "reason", false, false, MAX_REASON, SATURN_TEXT_LINE, &o->reason, err) < 0 ||
	    sj_get(jo, ctx, "params", false, json_type_object, &params, err) < 0 ||
	    sj_int(jo, ctx, "nodes", false, 1, SATURN_MAX_TASK_NODES, &o->nodes, err) < 0)
		return -1;
	if (params) {
		const char *s = json_object_to_json_string_ext(
			params, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

		if (!s)
			return saturn_error_set(err, "out of memory");
		if (strlen(s) > MAX_PARAMS)
			return saturn_error_set(err, "%s.params: longer than %d bytes", ctx, MAX_PARAMS);
		/* it becomes SATURN_TECHNIQUE_PARAMS in the job's environment:
		 * one line of printable text (json-c escapes control characters;
		 * bytes above 0x7e, e.g. UTF-8, are refused) */
		{
			char pf[SATURN_ERROR_LEN / 2];

			snprintf(pf, sizeof(pf), "%s.params", ctx);
			if (saturn_text_check(pf, s, SATURN_TEXT_LINE, err) < 0)
				return -1;
		}
		o->params = strdup(s);
		if (!o->params)
			return saturn_error_set(err, "out of memory");
	}
	return 0;
}

static int parse_task(json_object *jt, int i, saturn_profile_task_t *t,
		      saturn_error_t *err)
{
	char ctx[SATURN_ERROR_LEN / 2], octx[SATURN_ERROR_LEN / 2];
	json_object *opts;
	size_t n;

	snprintf(ctx, sizeof(ctx), "tasks[%d]", i);
	if (!json_object_is_type(jt, json_type_object))
		return saturn_error_set(err, "%s: must be an object", ctx);
	/* checked before it is part of ctx (every later message quotes it) */
	if (sj_text(jt, ctx, "signature", true, true, SATURN_ID_MAX, SATURN_TEXT_LINE, &t->signature,
		    err) < 0)
		return -1;
	snprintf(ctx, sizeof(ctx), "tasks[%d] (%.64s)", i, t->signature);
	if (parse_task_ids(jt, ctx, t, err) < 0 ||
	    sj_num(jt, ctx, "batches", true, 0, false, &t->batches, err) < 0 ||
	    sj_text(jt, ctx, "class", false, true, SATURN_ID_MAX, SATURN_TEXT_NAME, &t->klass, err) < 0 ||
	    sj_get(jt, ctx, "options", true, json_type_array, &opts, err) < 0)
		return -1;
	if (t->ntask_ids < 1)
		return saturn_error_set(err, "%s.task_ids: at least one id is needed", ctx);
	if (t->batches > SATURN_MAX_BATCHES)
		return saturn_error_set(err, "%s.batches: %.6g is beyond the limit of %.0f", ctx, t->batches, SATURN_MAX_BATCHES);
	n = json_object_array_length(opts);
	if (n > SATURN_MAX_OPTIONS)
		return saturn_error_set(err, "%s.options: more than %d options", ctx, SATURN_MAX_OPTIONS);
	t->options = calloc(n + 1, sizeof(*t->options));
	if (!t->options)
		return saturn_error_set(err, "out of memory");
	for (size_t o = 0; o < n; o++) {
		t->noptions++;
		snprintf(octx, sizeof(octx), "%s.options[%zu]", ctx, o);
		if (parse_option(json_object_array_get_idx(opts, o), octx, &t->options[o], err) < 0)
			return -1;
		/* the planner's limit on one task's runtime (model.h): a
		 * profile beyond it would be refused by saturn_problem_check() */
		if (t->options[o].sec_per_batch > 0 &&
		    !(t->batches * t->options[o].sec_per_batch <= SATURN_MAX_RUNTIME_S))
			return saturn_error_set(err, "%s: batches x sec_per_batch = %.6g x %.6g s is beyond the limit of %.0f s", octx, t->batches, t->options[o].sec_per_batch, SATURN_MAX_RUNTIME_S);
		for (size_t k = 0; k < o; k++)
			if (t->options[k].gpus == t->options[o].gpus &&
			    saturn_profile_option_nodes(&t->options[k]) ==
				    saturn_profile_option_nodes(&t->options[o]) &&
			    strcmp(t->options[k].technique, t->options[o].technique) == 0)
				return saturn_error_set(err, "%s: %s on %d GPUs (%d node(s)) listed twice", octx, t->options[o].technique, t->options[o].gpus, saturn_profile_option_nodes(&t->options[o]));
	}
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static _Thread_local const saturn_profile_t *sort_pr;

static int cmp_signature(const void *a, const void *b)
{
	return strcmp(sort_pr->tasks[*(const int *)a].signature,
		      sort_pr->tasks[*(const int *)b].signature);
}

/* Signatures unique; each array task id in one task only (sorting). */
static int check_unique(const saturn_profile_t *pr, saturn_error_t *err)
{
	size_t total = 0, k = 0;
	int *pairs;

	int *order = malloc(sizeof(int) * ((size_t)pr->ntasks + 1));

	if (!order)
		return saturn_error_set(err, "out of memory");
	for (int i = 0; i < pr->ntasks; i++) {
		order[i] = i;
		total += (size_t)pr->tasks[i].ntask_ids;
	}
	sort_pr = pr;
	qsort(order, (size_t)pr->ntasks, sizeof(int), cmp_signature);
	sort_pr = NULL;
	for (int i = 1; i < pr->ntasks; i++)
		if (strcmp(pr->tasks[order[i]].signature, pr->tasks[order[i - 1]].signature) == 0) {
			int t = order[i] > order[i - 1] ? order[i] : order[i - 1];

			free(order);
			return saturn_error_set(err, "tasks[%d].signature: duplicate signature \"%.64s\"", t, pr->tasks[t].signature);
		}
	free(order);
	if (total > SATURN_MAX_TASKS)
		return saturn_error_set(err, "tasks: more than %d task ids in all", SATURN_MAX_TASKS);
	pairs = malloc(sizeof(int) * 2 * (total + 1));
	if (!pairs)
		return saturn_error_set(err, "out of memory");
	for (int i = 0; i < pr->ntasks; i++)
		for (int j = 0; j < pr->tasks[i].ntask_ids; j++) {
			pairs[2 * k] = pr->tasks[i].task_ids[j];
			pairs[2 * k + 1] = i;
			k++;
		}
	qsort(pairs, total, 2 * sizeof(int), cmp_pair);
	for (size_t m = 1; m < total; m++)
		if (pairs[2 * m] == pairs[2 * m - 2]) {
			int id = pairs[2 * m], t = pairs[2 * m + 1];

			free(pairs);
			return saturn_error_set(err, "tasks[%d] (%.64s).task_ids: array task %d listed twice", t, pr->tasks[t].signature, id);
		}
	free(pairs);
	return 0;
}

saturn_profile_t *saturn_profile_parse(const char *buf, size_t len,
				       saturn_error_t *err)
{
	json_object *root = sj_parse(buf, len, err), *hw, *tasks;
	saturn_profile_t *pr = NULL;
	size_t nh = 0, nt;

	if (!root)
		return NULL;
	pr = saturn_profile_create();
	if (!pr) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	if (sj_check_format(root, SATURN_PROFILE_FORMAT, err) < 0 ||
	    sj_text(root, "", "batch", true, true, SATURN_ID_MAX, SATURN_TEXT_LINE, &pr->batch, err) < 0 ||
	    sj_num(root, "", "created", false, 0, false, &pr->created, err) < 0 ||
	    sj_get(root, "", "hardware", false, json_type_array, &hw, err) < 0 ||
	    sj_get(root, "", "tasks", true, json_type_array, &tasks, err) < 0)
		goto fail;
	if (hw)
		nh = json_object_array_length(hw);
	nt = json_object_array_length(tasks);
	if (nh > MAX_HW) {
		saturn_error_set(err, "hardware: more than %d entries", MAX_HW);
		goto fail;
	}
	if (nt > SATURN_MAX_TASKS) {
		saturn_error_set(err, "tasks: more than %d entries", SATURN_MAX_TASKS);
		goto fail;
	}
	pr->hw = calloc(nh + 1, sizeof(*pr->hw));
	pr->tasks = calloc(nt + 1, sizeof(*pr->tasks));
	if (!pr->hw || !pr->tasks) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nh; i++) {
		pr->nhw++;
		if (parse_hw(json_object_array_get_idx(hw, i), (int)i, &pr->hw[i], err) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++) {
			const char *a = pr->hw[i].klass ? pr->hw[i].klass : "";
			const char *b = pr->hw[j].klass ? pr->hw[j].klass : "";

			if (strcmp(a, b) == 0) {
				saturn_error_set(err, "hardware[%zu].class: class \"%.64s\" described twice", i, a);
				goto fail;
			}
		}
	}
	for (size_t i = 0; i < nt; i++) {
		pr->ntasks++;
		if (parse_task(json_object_array_get_idx(tasks, i), (int)i, &pr->tasks[i], err) < 0)
			goto fail;
	}
	if (check_unique(pr, err) < 0)
		goto fail;
	json_object_put(root);
	return pr;
fail:
	json_object_put(root);
	saturn_profile_destroy(pr);
	return NULL;
}

saturn_profile_t *saturn_profile_load(const char *path, long expect_uid,
				      saturn_error_t *err)
{
	saturn_profile_t *pr = NULL;
	struct stat st;
	size_t len;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			saturn_error_set(err, "%s: is a symbolic link (refused)", path);
		else
			saturn_error_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		saturn_error_set(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		saturn_error_set(err, "%s: not a regular file (refused)", path);
		goto out;
	}
	if (expect_uid != -1 && (long)st.st_uid != expect_uid) {
		saturn_error_set(err, "%s: owned by uid %ld, expected uid %ld (refused)", path, (long)st.st_uid, expect_uid);
		goto out;
	}
	if ((unsigned long long)st.st_size > SATURN_PROFILE_MAX_BYTES) {
		saturn_error_set(err, "%s: larger than %u bytes (refused)", path, SATURN_PROFILE_MAX_BYTES);
		goto out;
	}
	buf = sj_read_fd(fd, SATURN_PROFILE_MAX_BYTES, &len, err);
	if (!buf) {
		saturn_error_prefix(err, "%s", path);
		goto out;
	}
	pr = saturn_profile_parse(buf, len, err);
	free(buf);
	if (!pr)
		saturn_error_prefix(err, "%s", path);
out:
	close(fd);
	return pr;
}

/* --- writing ---------------------------------------------------------------- */


static int put_str(json_object *o, const char *key, const char *s)
{
	return s ? sj_put(o, key, json_object_new_string(s)) : 0;
}

static json_object *hw_json(const saturn_profile_hw_t *h)
{
	json_object *o = json_object_new_object();

	if (put_str(o, "class", h->klass) < 0 || put_str(o, "node", h->node) < 0 ||
	    put_str(o, "gpu_model", h->gpu_model ? h->gpu_model : "unknown") < 0 ||
	    sj_put(o, "gpus", json_object_new_int(h->gpus)) < 0 ||
	    sj_put(o, "gpu_mem_mb", sj_new_num(h->gpu_mem_mb)) < 0 ||
	    put_str(o, "interconnect", h->interconnect) < 0)
		goto fail;
	if (h->gemm_tflops > 0 &&
	    sj_put(o, "gemm_tflops", sj_new_num(h->gemm_tflops)) < 0)
		goto fail;
	if (h->link_gbs) {
		json_object *m = json_object_new_array();

		if (sj_put(o, "link_gbs", m) < 0)
			goto fail;
		for (int r = 0; r < h->gpus; r++) {
			json_object *row = json_object_new_array();

			if (sj_append(m, row) < 0)
				goto fail;
			for (int c = 0; c < h->gpus; c++)
				if (sj_append(row, sj_new_num(h->link_gbs[r * h->gpus + c])) < 0)
					goto fail;
		}
	}
	if (h->nnccl > 0) {
		json_object *a = json_object_new_array();

		if (sj_put(o, "nccl", a) < 0)
			goto fail;
		for (int k = 0; k < h->nnccl; k++) {
			json_object *e = json_object_new_object();

			if (sj_append(a, e) < 0 ||
			    sj_put(e, "gpus", json_object_new_int(h->nccl[k].gpus)) < 0 ||
			    sj_put(e, "allreduce_busbw_gbs", sj_new_num(h->nccl[k].allreduce_busbw_gbs)) < 0 ||
			    sj_put(e, "allgather_busbw_gbs", sj_new_num(h->nccl[k].allgather_busbw_gbs)) < 0)
				goto fail;
		}
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static json_object *option_json(const saturn_profile_option_t *op)
{
	json_object *o = json_object_new_object();
	const char *st = saturn_opt_status_name(op->status);

	if (!st) {
		errno = EINVAL;
		goto fail;
	}
	if (put_str(o, "technique", op->technique) < 0 ||
	    sj_put(o, "gpus", json_object_new_int(op->gpus)) < 0 ||
	    sj_put(o, "sec_per_batch", sj_new_num(op->sec_per_batch)) < 0 ||
	    sj_put(o, "peak_mem_mb", sj_new_num(op->peak_mem_mb)) < 0 ||
	    put_str(o, "status", st) < 0 || put_str(o, "reason", op->reason) < 0)
		goto fail;
	/* only when it spans nodes: one-node profiles read as before */
	if (op->nodes > 1 && sj_put(o, "nodes", json_object_new_int(op->nodes)) < 0)
		goto fail;
	if (op->params) {
		json_object *p = json_tokener_parse(op->params);

		if (!p || !json_object_is_type(p, json_type_object)) {
			json_object_put(p);
			errno = EINVAL;
			goto fail;
		}
		if (sj_put(o, "params", p) < 0)
			goto fail;
	}
	return o;
fail:
	json_object_put(o);
	return NULL;
}

static json_object *task_json(const saturn_profile_task_t *t)
{
	json_object *o = json_object_new_object(), *ids, *opts;

	if (put_str(o, "signature", t->signature) < 0)
		goto fail;
	ids = json_object_new_array();
	if (sj_put(o, "task_ids", ids) < 0)
		goto fail;
	for (int i = 0; i < t->ntask_ids; i++)
		if (sj_append(ids, json_object_new_int(t->task_ids[i])) < 0)
			goto fail;
	if (sj_put(o, "batches", sj_new_num(t->batches)) < 0 ||
	    put_str(o, "class", t->klass) < 0)
		goto fail;
	opts = json_object_new_array();
	if (sj_put(o, "options", opts) < 0)
		goto fail;
	for (int i = 0; i < t->noptions; i++)
		if (sj_append(opts, option_json(&t->options[i])) < 0)
			goto fail;
	return o;
fail:
	json_object_put(o);
	return NULL;
}

char *saturn_profile_to_json(const saturn_profile_t *pr)
{
	json_object *root = json_object_new_object(), *hw, *tasks;
	char *s = NULL;

	errno = ENOMEM;
	if (put_str(root, "format", SATURN_PROFILE_FORMAT) < 0 ||
	    put_str(root, "batch", pr->batch ? pr->batch : "") < 0 ||
	    sj_put(root, "created", sj_new_num(pr->created)) < 0)
		goto out;
	hw = json_object_new_array();
	if (sj_put(root, "hardware", hw) < 0)
		goto out;
	for (int i = 0; i < pr->nhw; i++)
		if (sj_append(hw, hw_json(&pr->hw[i])) < 0)
			goto out;
	tasks = json_object_new_array();
	if (sj_put(root, "tasks", tasks) < 0)
		goto out;
	for (int i = 0; i < pr->ntasks; i++)
		if (sj_append(tasks, task_json(&pr->tasks[i])) < 0)
			goto out;
	s = sj_to_string(root, true);
out:
	json_object_put(root);
	return s;
}

/* --- queries ---------------------------------------------------------------- */

const saturn_profile_task_t *saturn_profile_find(const saturn_profile_t *pr,
						 int task_id)
{
	for (int i = 0; pr && i < pr->ntasks; i++)
		for (int j = 0; j < pr->tasks[i].ntask_ids; j++)
			if (pr->tasks[i].task_ids[j] == task_id)
				return &pr->tasks[i];
	return NULL;
}

int saturn_profile_task_option(const saturn_profile_task_t *pt, const char *technique, int gpus,
			       int nodes)
{
	if (!pt || !technique)
		return -1;
	if (nodes < 1)
		nodes = 1;
	for (int i = 0; i < pt->noptions; i++) {
		const saturn_profile_option_t *o = &pt->options[i];

		if (o->gpus == gpus && saturn_profile_option_nodes(o) == nodes && o->technique &&
		    !strcmp(o->technique, technique))
			return i;
	}
	return -1;
}

int saturn_profile_options(const saturn_profile_task_t *pt,
			   saturn_option_t **opts)
{
	saturn_option_t *r;
	int n = 0;

	*opts = NULL;
	for (int i = 0; i < pt->noptions; i++)
		if (pt->options[i].status == SATURN_OPT_MEASURED ||
		    pt->options[i].status == SATURN_OPT_PREDICTED)
			n++;
	if (n == 0)
		return 0;
	r = calloc((size_t)n, sizeof(*r));
	if (!r)
		return -1;
	n = 0;
	for (int i = 0; i < pt->noptions; i++) {
		const saturn_profile_option_t *o = &pt->options[i];

		if (o->status != SATURN_OPT_MEASURED && o->status != SATURN_OPT_PREDICTED)
			continue;
		r[n].technique = strdup(o->technique);
		r[n].klass = pt->klass ? strdup(pt->klass) : NULL;
		r[n].gpus = o->gpus;
		r[n].nodes = saturn_profile_option_nodes(o);
		r[n].sec_per_batch = o->sec_per_batch;
		r[n].class_idx = -1;
		r[n].source = strdup("");
		r[n].prof_opt = i;
		n++;
		if (!r[n - 1].technique || (pt->klass && !r[n - 1].klass) || !r[n - 1].source) {
			for (int k = 0; k < n; k++)
				saturn_option_clear(&r[k]);
			free(r);
			errno = ENOMEM;
			return -1;
		}
	}
	*opts = r;
	return n;
}
