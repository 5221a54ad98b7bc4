/* cycle_record.c - a scheduling cycle as one saturn-cycle/1 document
 * (cycle_record.h): the outputs' canonical form, the capture before the
 * run, the document after it, and reading one back. The parts are in
 * cycle_snapjson.c and cycle_statejson.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cycle_json.h"
#include "safefile.h"

/* --- the outputs -------------------------------------------------------- */

static const char *const kind_words[] = {"none", "carried", "new"};
static const char *const level_words[] = {"error", "info", "verbose", "debug", "debug2"};

static json_object *str_json(const char *s, size_t size)
{
	return json_object_new_string_len(s, (int)strnlen(s, size));
}

#define STR(s) str_json((s), sizeof(s))

static int decision_json(json_object *arr, const saturn_decision_t *d)
{
	json_object *e = json_object_new_object();

	if (sj_append(arr, e) < 0 || sj_put(e, "job", json_object_new_int(d->job)) < 0 ||
	    sj_put(e, "release", json_object_new_int(d->release)) < 0 ||
	    sj_put(e, "node", STR(d->node)) < 0 ||
	    sj_put(e, "gpus", json_object_new_int(d->gpus)) < 0 ||
	    sj_put(e, "technique", STR(d->technique)) < 0 ||
	    sj_put(e, "start_s", sj_new_num(d->start_s)) < 0 ||
	    sj_put(e, "reason", STR(d->reason)) < 0 ||
	    sj_put(e, "nnodes", json_object_new_int(d->nnodes)) < 0 ||
	    sj_put(e, "assign", json_object_new_int(d->assign)) < 0 ||
	    sj_put(e, "gpu_type", STR(d->gpu_type)) < 0 || sj_put(e, "class", STR(d->klass)) < 0)
		return -1;
	return 0;
}

static int choice_json(json_object *arr, const saturn_reconfig_choice_t *c)
{
	json_object *e = json_object_new_object();

	if (sj_append(arr, e) < 0 || sj_put(e, "job", json_object_new_int(c->job)) < 0 ||
	    sj_put(e, "task", json_object_new_int(c->task)) < 0 ||
	    sj_put(e, "node", STR(c->node)) < 0 ||
	    sj_put(e, "gpus", json_object_new_int(c->gpus)) < 0 ||
	    sj_put(e, "technique", STR(c->technique)) < 0 ||
	    sj_put(e, "start_s", sj_new_num(c->start_s)) < 0 ||
	    sj_put(e, "old_end_s", sj_new_num(c->old_end_s)) < 0 ||
	    sj_put(e, "new_end_s", sj_new_num(c->new_end_s)) < 0)
		return -1;
	return 0;
}

static int reconf_json(json_object *o, const saturn_reconfig_result_t *r)
{
	json_object *e = json_object_new_object(), *ch;

	if (sj_put(o, "reconfig", e) < 0 ||
	    sj_put(e, "ncandidates", json_object_new_int(r->ncandidates)) < 0 ||
	    sj_put(e, "choices", ch = json_object_new_array()) < 0)
		return -1;
	for (int i = 0; r->choices && i < r->nchoices; i++)
		if (choice_json(ch, &r->choices[i]) < 0)
			return -1;
	if (sj_put(e, "old_makespan_s", sj_new_num(r->old_makespan_s)) < 0 ||
	    sj_put(e, "new_makespan_s", sj_new_num(r->new_makespan_s)) < 0 ||
	    sj_put(e, "gain_s", sj_new_num(r->gain_s)) < 0 ||
	    sj_put(e, "old_value", sj_new_num(r->old_value)) < 0 ||
	    sj_put(e, "new_value", sj_new_num(r->new_value)) < 0 ||
	    sj_put(e, "why", STR(r->why)) < 0)
		return -1;
	return 0;
}

int cj_out(const saturn_cycle_out_t *out, json_object **res)
{
	json_object *o = json_object_new_object(), *a;
	int kind = (int)out->kind;

	*res = NULL;
	if (sj_put(o, "kind",
		   json_object_new_string(kind >= 0 && kind <= 2 ? kind_words[kind] : "?")) < 0 ||
	    sj_put(o, "plan_id", STR(out->plan_id)) < 0 ||
	    sj_put(o, "next_due_s", sj_new_num(out->next_due_s)) < 0 ||
	    sj_put(o, "solve_s", sj_new_num(out->solve_s)) < 0 ||
	    sj_put(o, "decisions", a = json_object_new_array()) < 0)
		goto fail;
	for (int i = 0; out->d && i < out->nd; i++)
		if (decision_json(a, &out->d[i]) < 0)
			goto fail;
	if (reconf_json(o, &out->reconf) < 0 ||
	    sj_put(o, "built", json_object_new_int(out->built)) < 0 ||
	    sj_put(o, "skipped", a = json_object_new_array()) < 0)
		goto fail;
	/* the tasks the build left held, with their reasons (the plugin shows them) */
	for (int i = 0; out->built && out->build.skipped && i < out->build.nskipped; i++) {
		json_object *e = json_object_new_object();

		if (sj_append(a, e) < 0 ||
		    sj_put(e, "job", json_object_new_int(out->build.skipped[i])) < 0 ||
		    sj_put(e, "reason",
			   out->build.skip_reason ? STR(out->build.skip_reason[i])
						  : json_object_new_string("")) < 0)
			goto fail;
	}
	if (cj_measure_out(out, o) < 0 || cj_profiler_out(out, o) < 0 ||
	    sj_put(o, "log", a = json_object_new_array()) < 0)
		goto fail;
	for (int i = 0; out->log && i < out->nlog; i++) {
		json_object *e = json_object_new_object();
		int lv = (int)out->log[i].level;

		if (sj_append(a, e) < 0 ||
		    sj_put(e, "level",
			   json_object_new_string(lv >= 0 && lv <= 4 ? level_words[lv] : "?")) <
			0 ||
		    sj_put(e, "text",
			   json_object_new_string(out->log[i].text ? out->log[i].text : "")) < 0)
			goto fail;
	}
	*res = o;
	return 0;
fail:
	json_object_put(o);
	return -1;
}

char *saturn_cycle_out_to_json(const saturn_cycle_out_t *out)
{
	json_object *o;
	char *text;

	if (cj_out(out, &o) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	text = sj_to_string(o, false);
	json_object_put(o);
	return text;
}

/* --- writing ------------------------------------------------------------ */

int saturn_cycle_capture(saturn_cycle_capture_t *cap, const saturn_cycle_in_t *in,
			 const saturn_cycle_state_t *st)
{
	cap->snapshot = saturn_snapshot_to_json(in->snap);
	cap->state_in = saturn_cycle_state_to_json(st);
	if (!cap->snapshot || !cap->state_in) {
		saturn_cycle_capture_free(cap);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void saturn_cycle_capture_free(saturn_cycle_capture_t *cap)
{
	if (!cap)
		return;
	free(cap->snapshot);
	free(cap->state_in);
	cap->snapshot = cap->state_in = NULL;
}

char *saturn_cycle_record_to_json(int cycle, const char *sched_params, double requeue_delay_s,
				  const saturn_cycle_in_t *in, const saturn_cycle_capture_t *before,
				  const saturn_plan_tape_t *tape, const saturn_cycle_out_t *out,
				  const saturn_cycle_state_t *state_out)
{
	json_object *root = json_object_new_object(), *set = json_object_new_object(), *v;
	char *text = NULL;

	if (sj_put(root, "format", json_object_new_string(SATURN_CYCLE_FORMAT)) < 0 ||
	    sj_put(root, "cycle", json_object_new_int(cycle)) < 0 ||
	    sj_put(root, "settings", set) < 0 ||
	    cj_put(set, "sched_params",
		   sched_params ? json_object_new_string(sched_params) : NULL) < 0 ||
	    sj_put(set, "requeue_delay_s", sj_new_num(requeue_delay_s)) < 0 ||
	    sj_put(root, "requeue_ok", json_object_new_int(in->requeue_ok)) < 0 ||
	    sj_put(root, "requeued_now", json_object_new_int(in->requeued_now)) < 0 ||
	    sj_put(root, "max_evals", json_object_new_int64((int64_t)in->max_evals)) < 0 ||
	    sj_put(root, "snapshot", cj_from_text(before->snapshot)) < 0 ||
	    cj_profset(in->profiles, &v) < 0 || sj_put(root, "profiles", v) < 0 ||
	    cj_measset(in->measure, &v) < 0 || sj_put(root, "measure", v) < 0 ||
	    cj_uidtab(in->companions, &v) < 0 || sj_put(root, "companions", v) < 0 ||
	    cj_profstate(in->profiler, &v) < 0 || sj_put(root, "profiler", v) < 0 ||
	    sj_put(root, "state_in", cj_from_text(before->state_in)) < 0 || cj_tape(tape, &v) < 0 ||
	    sj_put(root, "tape", v) < 0 || cj_out(out, &v) < 0 || sj_put(root, "out", v) < 0 ||
	    cj_state(state_out, &v) < 0 || sj_put(root, "state_out", v) < 0)
		goto out;
	text = sj_to_string(root, true);
out:
	json_object_put(root);
	if (!text)
		errno = ENOMEM;
	return text;
}

/* --- reading ------------------------------------------------------------ */

/* A state object, checked, kept as compact text. */
static int state_text(json_object *o, const char *ctx, char **out, saturn_error_t *err)
{
	saturn_cycle_state_t st;

	if (cj_state_parse(o, ctx, &st, err) < 0)
		return -1;
	saturn_cycle_record_state_clear(&st);
	if (!(*out = sj_to_string(o, false)))
		return saturn_error_set(err, "out of memory");
	return 0;
}

static int parse_root(json_object *root, saturn_cycle_record_t *rec, saturn_error_t *err)
{
	long long max_evals = 0;
	json_object *set, *v;
	char *kind = NULL;
	int rc;

	if (sj_check_format(root, SATURN_CYCLE_FORMAT, err) < 0 ||
	    sj_int(root, "", "cycle", true, 0, INT_MAX, &rec->cycle, err) < 0 ||
	    sj_get(root, "", "settings", true, json_type_object, &set, err) < 0 ||
	    sj_str(set, "settings", "sched_params", false, false, 65536, &rec->sched_params, err) <
		0 ||
	    sj_num(set, "settings", "requeue_delay_s", true, 0, false, &rec->requeue_delay_s, err) <
		0 ||
	    sj_int(root, "", "requeue_ok", false, 0, 1, &rec->requeue_ok, err) < 0 ||
	    sj_int(root, "", "requeued_now", false, 0, INT_MAX, &rec->requeued_now, err) < 0 ||
	    sj_llong(root, "", "max_evals", false, 0, LLONG_MAX, &max_evals, err) < 0 ||
	    sj_get(root, "", "snapshot", true, json_type_object, &v, err) < 0)
		return -1;
	rec->max_evals = (unsigned long)max_evals;
	if (!(rec->snap = saturn_snapshot_create()))
		return saturn_error_set(err, "out of memory");
	if (cj_snapshot_parse(v, "snapshot", rec->snap, err) < 0 ||
	    sj_get(root, "", "profiles", false, json_type_array, &v, err) < 0 ||
	    cj_profset_parse(v, "profiles", &rec->profiles, err) < 0 ||
	    cj_measset_parse(root, "measure", &rec->measure, err) < 0 ||
	    cj_uidtab_parse(root, "companions", &rec->companions, err) < 0 ||
	    cj_profstate_parse(root, "profiler", &rec->profiler, err) < 0 ||
	    sj_get(root, "", "state_in", true, json_type_object, &v, err) < 0 ||
	    cj_state_parse(v, "state_in", &rec->state_in, err) < 0 ||
	    sj_get(root, "", "tape", false, json_type_array, &v, err) < 0 ||
	    cj_tape_parse(v, "tape", &rec->tape, err) < 0 ||
	    sj_get(root, "", "out", true, json_type_object, &v, err) < 0)
		return -1;
	rc = sj_str(v, "out", "kind", true, true, 16, &kind, err);
	if (rc < 0)
		return -1;
	rc = strcmp(kind, "none") && strcmp(kind, "carried") && strcmp(kind, "new");
	free(kind);
	if (rc)
		return saturn_error_set(err, "out.kind: must be \"none\", \"carried\" or \"new\"");
	if (!(rec->out = sj_to_string(v, false)))
		return saturn_error_set(err, "out of memory");
	if (sj_get(root, "", "state_out", true, json_type_object, &v, err) < 0 ||
	    state_text(v, "state_out", &rec->state_out, err) < 0)
		return -1;
	return 0;
}

int saturn_cycle_record_parse(const char *buf, size_t len, saturn_cycle_record_t *rec,
			      saturn_error_t *err)
{
	json_object *root;
	int rc;

	memset(rec, 0, sizeof(*rec));
	rec->profiles.owns = 1;
	rec->tape.mode = SATURN_TAPE_PLAY;
	if (!(root = sj_parse(buf, len, err)))
		return -1;
	rc = parse_root(root, rec, err);
	json_object_put(root);
	if (rc < 0)
		saturn_cycle_record_free(rec);
	return rc;
}

int saturn_cycle_record_load(const char *path, saturn_cycle_record_t *rec, saturn_error_t *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) : strdup(".");
	size_t len = 0;
	char *buf = NULL;
	int dfd = -1, rc;

	memset(rec, 0, sizeof(*rec));
	if (!dir)
		return saturn_error_set(err, "out of memory");
	/* the folder as named; the record itself through its descriptor: a
	 * regular file of one link (a record may come from elsewhere: a
	 * symlink, FIFO or device is refused without blocking), any owner,
	 * at most SATURN_CYCLE_MAX_BYTES */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		saturn_error_set(err, "%s: %s", dir, strerror(errno));
	else
		buf = saturn_file_read_at(dfd, dir, slash ? slash + 1 : path, NULL, 0,
					  SATURN_CYCLE_MAX_BYTES, &len, NULL, err);
	if (dfd >= 0)
		close(dfd);
	free(dir);
	if (!buf)
		return -1;
	rc = saturn_cycle_record_parse(buf, len, rec, err);
	free(buf);
	if (rc < 0)
		return saturn_error_prefix(err, "%s", path);
	return 0;
}

void saturn_cycle_record_free(saturn_cycle_record_t *rec)
{
	if (!rec)
		return;
	free(rec->sched_params);
	saturn_snapshot_destroy(rec->snap);
	rec->profiles.owns = 1;
	saturn_profset_free(&rec->profiles);
	saturn_measset_free(&rec->measure);
	saturn_uidtab_free(&rec->companions);
	saturn_profstate_free(&rec->profiler);
	saturn_cycle_record_state_clear(&rec->state_in);
	saturn_plan_tape_free(&rec->tape);
	free(rec->out);
	free(rec->state_out);
	memset(rec, 0, sizeof(*rec));
}
