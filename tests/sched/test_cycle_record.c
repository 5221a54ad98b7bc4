/* test_cycle_record.c - lib/sched/cycle_record.c and its parts: a
 * scheduling cycle written as saturn-cycle/1 and read back (snapshot with
 * every field, state with its plan and feedback, profiles, planner tape,
 * outputs), the refusals of bad records with the field named, the
 * comparison of outputs and states, and the profile set (profset.c).
 *
 * Every field: the fillers below give each field of the snapshot's
 * structs a distinct non-zero value, and the round trip is compared byte
 * for byte. A field added to a struct and not to its filler is caught by
 * fill_covers(): the bytes a filler leaves alone (filled over 0x00 and
 * over 0xff, they differ) must be the struct's padding only.
 */
#include "config.h"

#include <check.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_record.h"
#include "formats.h"

#include "cycle_fixture.h"
#include "sched_fixture.h"

/* The padding of each struct on LP64 (x86_64, aarch64), in bytes. */
#define PAD_JOB 21
#define PAD_NODE 3
#define PAD_BUSY 4
#define PAD_CORR 2
#define PAD_FBJOB 8

/* --- every field --------------------------------------------------------- */

START_TEST(test_fillers_cover)
{
	/* When this fails, a field was added: fill it (cycle_fixture.h),
	 * write and read it (cycle_snapjson.c, cycle_statejson.c), then
	 * update the PAD_ number. */
#if __SIZEOF_LONG__ == 8 && __SIZEOF_POINTER__ == 8
	ck_assert_uint_eq(fill_covers(sizeof(saturn_snap_job_t), fill_job), PAD_JOB);
	ck_assert_uint_eq(fill_covers(sizeof(saturn_snap_node_t), fill_node), PAD_NODE);
	ck_assert_uint_eq(fill_covers(sizeof(saturn_snap_busy_t), fill_busy), PAD_BUSY);
	ck_assert_uint_eq(fill_covers(sizeof(saturn_fb_corr_t), fill_corr), PAD_CORR);
	ck_assert_uint_eq(fill_covers(sizeof(saturn_fb_job_t), fill_fbjob), PAD_FBJOB);
#endif
}
END_TEST

/* An array's unsplit tasks are copies of its first task's entry: each
 * copy equals it byte for byte across the growth of the array (64, 128,
 * 256 entries), and a source outside the entries gives NULL and no
 * entry. */
START_TEST(test_snapshot_job_copy)
{
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_snap_job_t *j;

	ck_assert_ptr_nonnull(s);
	fill_job(saturn_snapshot_add_job(s), 3);
	for (int i = 1; i < 300; i++) {
		j = saturn_snapshot_add_job_copy(s, 0);
		ck_assert_ptr_nonnull(j);
		ck_assert_ptr_eq(j, &s->jobs[i]);
		j->task_id = i;
	}
	ck_assert_int_eq(s->njobs, 300);
	for (int i = 1; i < 300; i++) {
		ck_assert_int_eq(s->jobs[i].task_id, i);
		s->jobs[i].task_id = s->jobs[0].task_id;
		ck_assert(!memcmp(&s->jobs[i], &s->jobs[0], sizeof(s->jobs[0])));
	}
	ck_assert_ptr_null(saturn_snapshot_add_job_copy(s, 300));
	ck_assert_ptr_null(saturn_snapshot_add_job_copy(s, -1));
	ck_assert_int_eq(s->njobs, 300);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- round trips -------------------------------------------------------- */

START_TEST(test_snapshot_roundtrip)
{
	saturn_snapshot_t *s = full_snapshot(), *r;
	saturn_error_t err = {{0}};
	char *text = saturn_snapshot_to_json(s), *again;

	ck_assert_ptr_nonnull(text);
	/* uint64 above INT64_MAX written as hex, exactly */
	ck_assert_ptr_nonnull(strstr(text, "\"gpu_mask\":\"0x80000000000003f1\""));
	r = saturn_snapshot_from_json(text, strlen(text), &err);
	ck_assert_msg(r != NULL, "%s", err.text);
	snapshot_eq(s, r);
	/* canonical: the same snapshot gives the same text */
	again = saturn_snapshot_to_json(r);
	ck_assert_str_eq(text, again);
	free(again);
	free(text);
	saturn_snapshot_destroy(r);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_state_roundtrip)
{
	saturn_cycle_state_t st, back;
	saturn_error_t err = {{0}};
	char *text, *again;

	make_state(&st, 41);
	text = saturn_cycle_state_to_json(&st);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(saturn_cycle_state_from_json(text, strlen(text), &back, &err) == 0, "%s",
		      err.text);
	state_eq(&st, &back);
	again = saturn_cycle_state_to_json(&back);
	ck_assert_str_eq(text, again);
	ck_assert_int_eq(saturn_cycle_state_diff(text, again, err.text, sizeof(err.text)), 0);
	free(again);
	/* no plan, no feedback: nulls */
	saturn_cycle_record_state_clear(&back);
	saturn_cycle_record_state_clear(&st);
	free(text);
	text = saturn_cycle_state_to_json(&st);
	ck_assert_ptr_nonnull(strstr(text, "\"plan\":null"));
	ck_assert_ptr_nonnull(strstr(text, "\"feedback\":null"));
	ck_assert_int_eq(saturn_cycle_state_from_json(text, strlen(text), &back, &err), 0);
	ck_assert_ptr_null(back.plan);
	ck_assert_ptr_null(back.feedback);
	free(text);
}
END_TEST

START_TEST(test_record_roundtrip)
{
	fixture_t f;
	saturn_cycle_record_t rec;
	saturn_error_t err = {{0}};
	char *out_text, *st_text, diff[256];

	fixture_make(&f);
	ck_assert_msg(saturn_cycle_record_parse(f.doc, strlen(f.doc), &rec, &err) == 0, "%s",
		      err.text);
	ck_assert_int_eq(rec.cycle, 12);
	ck_assert_str_eq(rec.sched_params, "saturn_interval=5,saturn_min_gain=0.1");
	ck_assert(rec.requeue_delay_s == 121.5);
	ck_assert_int_eq(rec.requeue_ok, 1);
	snapshot_eq(f.snap, rec.snap);
	ck_assert_ptr_null(rec.snap->feedback);
	state_eq(&f.st_in, &rec.state_in);

	/* profiles: the same keys, the same profiles, owned */
	ck_assert_int_eq(rec.profiles.owns, 1);
	ck_assert_int_eq(rec.profiles.n, 3);
	for (int i = 0; i < 3; i++) {
		const saturn_profset_entry_t *a = &f.ps.e[i], *b = &rec.profiles.e[i];

		ck_assert_int_eq(a->uid, b->uid);
		ck_assert_str_eq(a->batch, b->batch);
		ck_assert_str_eq(a->klass, b->klass);
		ck_assert_int_eq(!a->prof, !b->prof);
		if (a->prof) {
			char *ta = saturn_profile_to_json(a->prof),
			     *tb = saturn_profile_to_json(b->prof);

			ck_assert_str_eq(ta, tb);
			free(ta);
			free(tb);
		}
	}
	ck_assert_ptr_nonnull(saturn_profset_lookup("sweep", 1001, &rec.profiles));
	ck_assert_ptr_nonnull(saturn_profset_lookup_class("sweep", 1001, "h100x8", &rec.profiles));
	ck_assert_ptr_null(saturn_profset_lookup_class("sweep", 1001, "a100x2", &rec.profiles));
	ck_assert_ptr_null(saturn_profset_lookup("other", 1002, &rec.profiles));
	ck_assert_ptr_nonnull(saturn_profset_find(&rec.profiles, 1002, "other", ""));

	/* the tape: in order, the failed call kept, ready to play */
	ck_assert_int_eq(rec.tape.mode, SATURN_TAPE_PLAY);
	ck_assert_int_eq(rec.tape.pos, 0);
	ck_assert_int_eq(rec.tape.n, 3);
	plan_eq(f.tape.plans[0], rec.tape.plans[0]);
	ck_assert_ptr_null(rec.tape.plans[1]);
	plan_eq(f.tape.plans[2], rec.tape.plans[2]);

	/* the outputs and the state left: as written, and equal */
	out_text = saturn_cycle_out_to_json(&f.out);
	ck_assert_str_eq(rec.out, out_text);
	ck_assert_int_eq(saturn_cycle_out_diff(rec.out, out_text, diff, sizeof(diff)), 0);
	st_text = saturn_cycle_state_to_json(&f.st_out);
	ck_assert_str_eq(rec.state_out, st_text);
	ck_assert_int_eq(saturn_cycle_state_diff(rec.state_out, st_text, diff, sizeof(diff)), 0);
	free(out_text);
	free(st_text);
	saturn_cycle_record_free(&rec);
	ck_assert_ptr_null(rec.snap);
	fixture_free(&f);
}
END_TEST

/* Every field of a decision and of a reconfiguration choice is written. */
START_TEST(test_out_fields)
{
	saturn_cycle_out_t out;
	json_object *o, *d, *r, *v;
	char *text;

	make_out(&out);
	text = saturn_cycle_out_to_json(&out);
	o = json_tokener_parse(text);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "decisions", &d));
	ck_assert_int_eq(json_object_array_length(d), 3);
	d = json_object_array_get_idx(d, 2);
	ck_assert_int_eq(json_object_object_length(d), 11);
	ck_assert(json_object_object_get_ex(d, "job", &v) && json_object_get_int(v) == 3);
	ck_assert(json_object_object_get_ex(d, "release", &v) && json_object_get_int(v) == 1);
	ck_assert(json_object_object_get_ex(d, "node", &v));
	ck_assert_str_eq(json_object_get_string(v), "gpu-node-02");
	ck_assert(json_object_object_get_ex(d, "gpus", &v) && json_object_get_int(v) == 6);
	ck_assert(json_object_object_get_ex(d, "technique", &v));
	ck_assert_str_eq(json_object_get_string(v), "fsdp2");
	ck_assert(json_object_object_get_ex(d, "start_s", &v) && json_object_get_double(v) == 2.1);
	ck_assert(json_object_object_get_ex(d, "reason", &v));
	ck_assert_str_eq(json_object_get_string(v), "saturn: starts in ~4m on n2");
	ck_assert(json_object_object_get_ex(d, "nnodes", &v) && json_object_get_int(v) == 4);
	ck_assert(json_object_object_get_ex(d, "assign", &v) && json_object_get_int(v) == 7);
	ck_assert(json_object_object_get_ex(d, "gpu_type", &v));
	ck_assert_str_eq(json_object_get_string(v), "h100-2");
	ck_assert(json_object_object_get_ex(d, "class", &v));
	ck_assert_str_eq(json_object_get_string(v), "h100x8-nvlink-2");
	ck_assert(json_object_object_get_ex(o, "reconfig", &r));
	ck_assert_int_eq(json_object_object_length(r), 8);
	ck_assert(json_object_object_get_ex(r, "choices", &v));
	ck_assert_int_eq(json_object_object_length(json_object_array_get_idx(v, 0)), 8);
	ck_assert(json_object_object_get_ex(r, "why", &v));
	ck_assert_str_eq(json_object_get_string(v), "gain 12s below the margin 60s");
	ck_assert(json_object_object_get_ex(o, "log", &v));
	ck_assert_str_eq(json_object_get_string(
			     json_object_object_get(json_object_array_get_idx(v, 1), "level")),
			 "debug2");
	ck_assert(json_object_object_get_ex(o, "skipped", &v));
	ck_assert_int_eq(json_object_array_length(v), 1);
	json_object_put(o);
	free(text);
	free_out(&out);
}
END_TEST

/* --- refusals ----------------------------------------------------------- */

#define LONG65 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

/* Set path ("snapshot/jobs/1/gpus"; array indices as numbers) of a good
 * record to the JSON value text (NULL: remove the key); the parse must
 * fail with want in the message (NULL: succeed). */
static const struct refusal {
	const char *path, *value, *want;
} refusals[] = {
    {"format", "\"saturn-cycle/9\"",
     "format: unsupported \"saturn-cycle/9\" (expected \"saturn-cycle/1\")"},
    {"cycle", "-1", "cycle: must be an integer from 0"},
    {"settings/requeue_delay_s", "\"x\"", "settings.requeue_delay_s: must be a number"},
    {"snapshot", NULL, "snapshot: missing"},
    {"snapshot/jobs/1/gpus", "\"four\"", "snapshot.jobs[1].gpus: must be an integer"},
    {"snapshot/jobs/1/gpus", "2.5", "snapshot.jobs[1].gpus: must be an integer"},
    {"snapshot/jobs/0/batch", "\"" LONG65 "\"",
     "snapshot.jobs[0].batch: longer than 64 characters"},
    {"snapshot/nodes/2/name", "\"" LONG65 "\"",
     "snapshot.nodes[2].name: longer than 64 characters"},
    {"snapshot/jobs/0/node", "20", "snapshot.jobs[0].node: 20 is not a node of the snapshot"},
    {"snapshot/busy/1/node", "-1", "snapshot.busy[1].node: must be an integer from 0"},
    {"snapshot/jobs/0/more_node/3", "25",
     "snapshot.jobs[0].more_node[3]: must be an integer from -1 to 19"},
    {"snapshot/jobs/2/gpu_mask", "\"0xZZ\"", "snapshot.jobs[2].gpu_mask: must be \"0x\""},
    {"snapshot/jobs/2/gpu_mask", "12", "snapshot.jobs[2].gpu_mask: must be a string"},
    {"snapshot/jobs/2/state", "\"gone\"", "snapshot.jobs[2].state: must be \"held\""},
    {"snapshot/jobs/3/limits/0/key", "\"0x10000000000000000\"",
     "snapshot.jobs[3].limits[0].key: must be"},
    {"state_in/feedback/corr/1/ratio", "9",
     "state_in.feedback.corr[1].ratio: must be from 0.2 to 5"},
    {"state_in/plan/tasks/1/index/option", "100000",
     "state_in.plan.tasks[1].index.option: must be an integer from -1 to 255"},
    {"tape/0/tasks", "3", "tape[0]: tasks: must be an array"},
    {"profiles/0/class", "\"" LONG65 "\"", "profiles[0].class: longer than 63 characters"},
    {"profiles/0/profile/format", "\"x\"", "profiles[0].profile: format: unsupported"},
    {"out/kind", "\"maybe\"", "out.kind: must be \"none\", \"carried\" or \"new\""},
    {"state_out/plan_seq", "-3", "state_out.plan_seq: must be an integer from 0"},
    /* unknown keys are ignored */
    {"snapshot/jobs/0/a_later_field", "5", NULL},
    {"a_later_section", "{}", NULL},
};

static void set_at(json_object *root, const char *path, const char *value)
{
	char buf[256], *save = NULL, *tok, *next;
	json_object *o = root, *v = value ? json_tokener_parse(value) : NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok; tok = next) {
		next = strtok_r(NULL, "/", &save);
		if (json_object_is_type(o, json_type_array)) {
			if (!next) {
				json_object_array_put_idx(o, (size_t)atoi(tok), v);
				return;
			}
			o = json_object_array_get_idx(o, (size_t)atoi(tok));
		} else if (!next) {
			if (value)
				json_object_object_add(o, tok, v);
			else
				json_object_object_del(o, tok);
			return;
		} else {
			ck_assert_msg(json_object_object_get_ex(o, tok, &o), "no %s in %s", tok,
				      path);
		}
	}
}

START_TEST(test_refusals)
{
	const struct refusal *c = &refusals[_i];
	saturn_cycle_record_t rec;
	saturn_error_t err = {{0}};
	json_object *root;
	const char *text;
	fixture_t f;
	int rc;

	fixture_make(&f);
	root = json_tokener_parse(f.doc);
	ck_assert_ptr_nonnull(root);
	set_at(root, c->path, c->value);
	text = json_object_to_json_string(root);
	rc = saturn_cycle_record_parse(text, strlen(text), &rec, &err);
	if (!c->want) {
		ck_assert_msg(rc == 0, "%s: %s", c->path, err.text);
		saturn_cycle_record_free(&rec);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_msg(strstr(err.text, c->want), "%s: '%s' lacks '%s'", c->path, err.text,
			      c->want);
		ck_assert_ptr_null(rec.snap);
	}
	json_object_put(root);
	fixture_free(&f);
}
END_TEST

START_TEST(test_too_many_jobs)
{
	size_t n = SATURN_CYCLE_MAX_JOBS + 1, len = 0;
	char *doc = malloc(2 * n + 256);
	saturn_cycle_record_t rec;
	saturn_error_t err = {{0}};

	ck_assert_ptr_nonnull(doc);
	len += (size_t)sprintf(doc,
			       "{\"format\": \"saturn-cycle/1\", \"cycle\": 1, \"settings\": "
			       "{\"sched_params\": null, \"requeue_delay_s\": 121}, \"snapshot\": "
			       "{\"now\": 1, \"nodes\": [], \"jobs\": [");
	for (size_t i = 0; i < n; i++) {
		doc[len++] = '0';
		doc[len++] = i + 1 < n ? ',' : ']';
	}
	len += (size_t)sprintf(doc + len, "}}");
	ck_assert_int_eq(saturn_cycle_record_parse(doc, len, &rec, &err), -1);
	ck_assert_str_eq(err.text, "snapshot.jobs: more than 1000000 entries");
	free(doc);
}
END_TEST

/* --- comparing ---------------------------------------------------------- */

static char *edited(const char *text, const char *path, const char *value)
{
	json_object *o = json_tokener_parse(text);
	char *s;

	ck_assert_ptr_nonnull(o);
	set_at(o, path, value);
	s = xstrdup(json_object_to_json_string(o));
	json_object_put(o);
	return s;
}

static const struct diffcase {
	const char *path, *value;
	int rc;
	const char *want;
} diffcases[] = {
    {"decisions/2/release", "0", 1, "out.decisions[2].release: 1 recorded, 0 replayed"},
    {"decisions/0/reason", "\"saturn: later\"", 1,
     "out.decisions[0].reason: \"saturn: starts in ~2m on n0\" recorded, \"saturn: later\" "
     "replayed"},
    {"reconfig/choices/0/new_end_s", "7000.30001", 1,
     "out.reconfig.choices[0].new_end_s: 7000.3 recorded, 7000.30001 replayed"},
    {"decisions/1/gpu_type", NULL, 1,
     "out.decisions[1].gpu_type: \"h100-1\" recorded, absent replayed"},
    {"log/2", "{\"level\": \"info\", \"text\": \"one more\"}", 1,
     "out.log: 2 entries recorded, 3 replayed"},
    {"kind", "\"carried\"", 1, "out.kind: \"new\" recorded, \"carried\" replayed"},
    {"extra", "1", 1, "out.extra: absent recorded, 1 replayed"},
    {"next_due_s", "42.50", 0, ""}, /* the same number */
    {"solve_s", "99", 0, ""},	    /* the planner's time: not compared */
};

START_TEST(test_out_diff)
{
	const struct diffcase *c = &diffcases[_i];
	saturn_cycle_out_t out;
	char *text, *other, buf[256];

	make_out(&out);
	text = saturn_cycle_out_to_json(&out);
	other = edited(text, c->path, c->value);
	ck_assert_int_eq(saturn_cycle_out_diff(text, other, buf, sizeof(buf)), c->rc);
	ck_assert_str_eq(buf, c->want);
	free(other);
	free(text);
	free_out(&out);
}
END_TEST

START_TEST(test_state_diff)
{
	saturn_cycle_state_t st;
	char *text, *other, buf[256];

	make_state(&st, 8);
	text = saturn_cycle_state_to_json(&st);
	other = edited(text, "plan_seq", "9");
	ck_assert_int_eq(saturn_cycle_state_diff(text, other, buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "state_out.plan_seq: 8 recorded, 9 replayed");
	free(other);
	other = edited(text, "plan/tasks/1/index/option", "6");
	ck_assert_int_eq(saturn_cycle_state_diff(text, other, buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "state_out.plan.tasks[1].index.option: 7 recorded, 6 replayed");
	free(other);
	ck_assert_int_eq(saturn_cycle_state_diff(text, "{", buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "state_out: the replayed text is not JSON");
	free(text);
	saturn_cycle_record_state_clear(&st);
}
END_TEST

/* --- the profile set ------------------------------------------------------ */

START_TEST(test_profset)
{
	saturn_profset_t ps = {0};
	saturn_profile_t *a = make_profile(), *b = make_profile();

	ps.owns = 1;
	ck_assert_int_eq(saturn_profset_add(&ps, 7, "zeta", "", NULL), 0);
	ck_assert_int_eq(saturn_profset_add(&ps, 7, "alpha", NULL, a), 0);
	ck_assert_int_eq(saturn_profset_add(&ps, 3, "zeta", "k1", NULL), 0);
	/* the same key replaces (the old profile destroyed: owned) */
	ck_assert_int_eq(saturn_profset_add(&ps, 7, "alpha", "", b), 0);
	ck_assert_int_eq(ps.n, 3);
	ck_assert_ptr_eq(saturn_profset_lookup("alpha", 7, &ps), b);
	/* sorted by uid, batch, class */
	ck_assert_int_eq(ps.e[0].uid, 3);
	ck_assert_str_eq(ps.e[1].batch, "alpha");
	ck_assert_str_eq(ps.e[2].batch, "zeta");
	/* another user's batch of the same name is another batch */
	ck_assert_ptr_null(saturn_profset_lookup("alpha", 8, &ps));
	ck_assert_ptr_null(saturn_profset_lookup_class("alpha", 7, "", &ps));
	ck_assert_ptr_nonnull(saturn_profset_find(&ps, 3, "zeta", "k1"));
	ck_assert_ptr_null(saturn_profset_find(&ps, 3, "zeta", NULL));
	/* a name over its limit: refused, nothing added */
	ck_assert_int_eq(saturn_profset_add(&ps, 1, LONG65, "", NULL), -1);
	ck_assert_int_eq(ps.n, 3);
	saturn_profset_free(&ps);
	ck_assert_int_eq(ps.n, 0);
	saturn_profset_free(NULL);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_fillers_cover);
	tcase_add_test(tc, test_snapshot_job_copy);
	tcase_add_test(tc, test_snapshot_roundtrip);
	tcase_add_test(tc, test_state_roundtrip);
	tcase_add_test(tc, test_record_roundtrip);
	tcase_add_test(tc, test_out_fields);
	tcase_add_loop_test(tc, test_refusals, 0, sizeof(refusals) / sizeof(refusals[0]));
	tcase_add_test(tc, test_too_many_jobs);
	tcase_add_loop_test(tc, test_out_diff, 0, sizeof(diffcases) / sizeof(diffcases[0]));
	tcase_add_test(tc, test_state_diff);
	tcase_add_test(tc, test_profset);
}

int main(void)
{
	return fx_run_suite("cycle_record", 60, add_tests);
}
