/* test_policy.c - the decisions about each batch's companion jobs
 * (lib/batch_policy.c), table-driven: every transition of the profiler
 * (first sight, profile appears, job ended, name re-used, running tasks,
 * two users) and of the measurement (due option, running job, failed
 * measurement, caps, poll), and the records' text formats. No Slurm, no
 * files: the facts are table columns. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_policy.h"
#include "profile.h"
#include "sched_core.h"

#include "sched_fixture.h"

#define H SATURN_SNAP_HELD
#define P SATURN_SNAP_RELEASED
#define R SATURN_SNAP_RUNNING

/* The actions' kinds as letters: S submit profiler, M submit measure,
 * H hold, D drop, F fall back, W save (write), L log. */
static void kinds(const saturn_bpol_actions_t *l, int from, char *buf, size_t len)
{
	size_t n = 0;

	for (int i = from; i < l->n && n + 1 < len; i++)
		buf[n++] = "?SMHDFWL"[l->a[i].kind];
	buf[n] = '\0';
}

/* Whether some action from `from` on has text containing want. */
static int has_text(const saturn_bpol_actions_t *l, int from, const char *want)
{
	for (int i = from; i < l->n; i++)
		if (l->a[i].text && strstr(l->a[i].text, want))
			return 1;
	return 0;
}

static int find_kind(const saturn_bpol_actions_t *l, int from, saturn_bpol_kind_t k)
{
	for (int i = from; i < l->n; i++)
		if (l->a[i].kind == k)
			return i;
	return -1;
}

/* node n1 of node_gpus GPUs (none for 0) */
static saturn_snapshot_t *snap(int node_gpus)
{
	return fx_snapshot(1000, node_gpus > 0, node_gpus);
}

static saturn_snap_job_t *add_job(saturn_snapshot_t *s, int state, uint32_t job, uint32_t array,
				  int task, const char *batch, long uid)
{
	saturn_snap_job_t *j = saturn_snapshot_add_job(s);

	ck_assert_ptr_nonnull(j);
	j->job_id = job;
	j->array_job_id = array;
	j->task_id = task;
	j->state = state;
	snprintf(j->batch, sizeof(j->batch), "%s", batch);
	j->uid = uid;
	j->node = -1;
	return j;
}

/* --- profiler ------------------------------------------------------------ */

struct pjob {
	int state;
	uint32_t job, array;
	int task;
};

static const struct prof_case {
	const char *what;
	struct pjob jobs[4];
	int njobs;
	int exists;                     /* PROFILE_DIR/UID/NAME.json there */
	saturn_prof_rec_t in;
	saturn_companion_state_t cstate; /* of in.job_id */
	int node_gpus;                  /* one node; 0 = none */
	int state;                      /* saturn_bpol_profiler's result */
	const char *kinds;
	saturn_prof_rec_t out;
	const char *text;               /* in some action's text */
	int gpus;                       /* of the SUBMIT_PROFILER */
	uint32_t gives;                 /* the submission's job id (0 = failed) */
	const char *kinds_after;
	saturn_prof_rec_t out_after;
	int state_after;
} prof_cases[] = {
	{"first sight: submit a profiler job with the batch's task ids and the node's GPUs",
	 {{H, 100, 100, 0}, {H, 101, 100, 1}, {H, 102, 100, 2}}, 3, 0, {0, 0, 0},
	 SATURN_COMPANION_UNKNOWN, 8, SATURN_BPOL_SUBMITTING, "S", {0, 100, 0}, "0,1,2", 8,
	 555, "WLHD", {555, 100, 0}, SATURN_BPOL_PROFILING},
	{"first sight, the submission fails: fall back",
	 {{H, 100, 100, 0}, {H, 101, 100, 1}}, 2, 0, {0, 0, 0}, SATURN_COMPANION_UNKNOWN, 8,
	 SATURN_BPOL_SUBMITTING, "S", {0, 100, 0}, "0,1", 8,
	 0, "LF", {0, 100, 1}, SATURN_BPOL_FELL_BACK},
	{"first sight, no GPU node: fall back with the reason",
	 {{H, 100, 100, 0}}, 1, 0, {0, 0, 0}, SATURN_COMPANION_UNKNOWN, 0,
	 SATURN_BPOL_FELL_BACK, "LLF", {0, 100, 1}, "no GPU node", 0, 0, NULL, {0, 0, 0}, 0},
	{"profile appears: plan from it, record untouched",
	 {{H, 100, 100, 0}}, 1, 1, {555, 100, 0}, SATURN_COMPANION_RUNNING, 8,
	 SATURN_BPOL_PROFILED, "", {555, 100, 0}, NULL, 0, 0, NULL, {0, 0, 0}, 0},
	{"profile there after a fallback: plan from it",
	 {{H, 100, 100, 0}}, 1, 1, {555, 100, 1}, SATURN_COMPANION_ENDED, 8,
	 SATURN_BPOL_PROFILED, "", {555, 100, 1}, NULL, 0, 0, NULL, {0, 0, 0}, 0},
	{"profiling, job pending: hold and drop the held tasks",
	 {{H, 100, 100, 0}, {H, 101, 100, 1}}, 2, 0, {555, 100, 0}, SATURN_COMPANION_PENDING, 8,
	 SATURN_BPOL_PROFILING, "LHD", {555, 100, 0}, "saturn: profiling (job 555)", 0, 0, NULL, {0, 0, 0}, 0},
	{"profiling, job running: hold and drop",
	 {{H, 100, 100, 0}}, 1, 0, {555, 100, 0}, SATURN_COMPANION_RUNNING, 8,
	 SATURN_BPOL_PROFILING, "LHD", {555, 100, 0}, "saturn: profiling (job 555)", 0, 0, NULL, {0, 0, 0}, 0},
	{"profiling, job state not looked up: taken as running",
	 {{H, 100, 100, 0}}, 1, 0, {555, 100, 0}, SATURN_COMPANION_UNKNOWN, 8,
	 SATURN_BPOL_PROFILING, "LHD", {555, 100, 0}, "waiting for profiler job 555", 0, 0, NULL, {0, 0, 0}, 0},
	{"job ended without a profile: fall back with the reason, saved",
	 {{H, 100, 100, 0}}, 1, 0, {555, 100, 0}, SATURN_COMPANION_ENDED, 8,
	 SATURN_BPOL_FELL_BACK, "LFW", {555, 100, 1},
	 "profiler job 555 ended without a usable profile: falling back to the users' requests", 0, 0, NULL, {0, 0, 0}, 0},
	{"fell back: planned as asked, nothing to do",
	 {{H, 100, 100, 0}}, 1, 0, {555, 100, 1}, SATURN_COMPANION_ENDED, 8,
	 SATURN_BPOL_FELL_BACK, "", {555, 100, 1}, NULL, 0, 0, NULL, {0, 0, 0}, 0},
	{"name re-used by a new submission after a fallback: profile anew",
	 {{H, 200, 200, 0}, {H, 201, 200, 1}}, 2, 0, {555, 100, 1}, SATURN_COMPANION_ENDED, 8,
	 SATURN_BPOL_SUBMITTING, "LS", {0, 200, 0}, "profiler job 555 was for job 100, not this submission", 8,
	 777, "WLHD", {777, 200, 0}, SATURN_BPOL_PROFILING},
	{"name re-used while the old profiler job runs: profile anew",
	 {{H, 200, 200, 0}}, 1, 0, {555, 100, 0}, SATURN_COMPANION_RUNNING, 8,
	 SATURN_BPOL_SUBMITTING, "LS", {0, 200, 0}, "profiling anew", 8,
	 888, "WLHD", {888, 200, 0}, SATURN_BPOL_PROFILING},
	{"name re-used after a failed submission: profile anew",
	 {{H, 200, 200, 3}}, 1, 0, {0, 100, 1}, SATURN_COMPANION_UNKNOWN, 8,
	 SATURN_BPOL_SUBMITTING, "LS", {0, 200, 0}, "no profiler job for job 100, not this submission", 8,
	 0, "LF", {0, 200, 1}, SATURN_BPOL_FELL_BACK},
	{"running tasks but no job: nothing",
	 {{R, 100, 100, 0}, {H, 101, 100, 1}}, 2, 0, {0, 0, 0}, SATURN_COMPANION_UNKNOWN, 8,
	 SATURN_BPOL_UNPROFILED, "", {0, 0, 0}, NULL, 0, 0, NULL, {0, 0, 0}, 0},
	{"released tasks but no job: nothing",
	 {{P, 100, 100, 0}}, 1, 0, {0, 0, 0}, SATURN_COMPANION_UNKNOWN, 8,
	 SATURN_BPOL_UNPROFILED, "", {0, 0, 0}, NULL, 0, 0, NULL, {0, 0, 0}, 0},
	{"profiling with a task released: only the held one is held and dropped",
	 {{P, 100, 100, 0}, {H, 101, 100, 1}}, 2, 0, {555, 100, 0}, SATURN_COMPANION_RUNNING, 8,
	 SATURN_BPOL_PROFILING, "LHD", {555, 100, 0}, NULL, 0, 0, NULL, {0, 0, 0}, 0},
	{"two submissions of the batch, the recorded one among them: no reset",
	 {{H, 100, 100, 0}, {H, 200, 200, 5}}, 2, 0, {555, 200, 0}, SATURN_COMPANION_PENDING, 8,
	 SATURN_BPOL_PROFILING, "LHD", {555, 200, 0}, NULL, 0, 0, NULL, {0, 0, 0}, 0},
	{"a job that is not an array: task id 0, the job is the submission",
	 {{H, 300, 0, -1}}, 1, 0, {0, 0, 0}, SATURN_COMPANION_UNKNOWN, 4,
	 SATURN_BPOL_SUBMITTING, "S", {0, 300, 0}, "0", 4,
	 301, "WLHD", {301, 300, 0}, SATURN_BPOL_PROFILING},
};

static void assert_rec(const saturn_prof_rec_t *got, const saturn_prof_rec_t *want, const char *what)
{
	ck_assert_msg(got->job_id == want->job_id && got->array_id == want->array_id &&
			      got->fell_back == want->fell_back,
		      "%s: record {%u, %u, %d}, expected {%u, %u, %d}", what, got->job_id,
		      got->array_id, got->fell_back, want->job_id, want->array_id, want->fell_back);
}

/* Every HOLD and DROP names held tasks only, each held task once. */
static void assert_holds(const saturn_snapshot_t *s, const saturn_bpol_actions_t *l, int from,
			 const char *what)
{
	int nheld = 0;

	for (int k = 0; k < s->njobs; k++)
		nheld += s->jobs[k].state == SATURN_SNAP_HELD;
	for (int i = from; i < l->n; i++) {
		if (l->a[i].kind != SATURN_BPOL_HOLD && l->a[i].kind != SATURN_BPOL_DROP)
			continue;
		ck_assert_msg(l->a[i].ntasks == nheld, "%s: %d tasks, %d held", what,
			      l->a[i].ntasks, nheld);
		for (int k = 0; k < l->a[i].ntasks; k++)
			ck_assert_int_eq(s->jobs[l->a[i].tasks[k]].state, SATURN_SNAP_HELD);
	}
}

START_TEST(test_profiler)
{
	const struct prof_case *c = &prof_cases[_i];
	saturn_snapshot_t *s = snap(c->node_gpus);
	saturn_bpol_actions_t l = {0};
	saturn_prof_rec_t rec = c->in;
	saturn_companion_t job = {c->in.job_id, c->cstate, 900};
	int m[4], st, sub, n0;
	char k[32];

	for (int i = 0; i < c->njobs; i++) {
		add_job(s, c->jobs[i].state, c->jobs[i].job, c->jobs[i].array, c->jobs[i].task, "sweep",
			1001);
		m[i] = i;
	}
	st = saturn_bpol_profiler(s, m, c->njobs, c->exists, &rec, &job, 7, &l);
	kinds(&l, 0, k, sizeof(k));
	ck_assert_msg(st == c->state, "%s: state %d, expected %d", c->what, st, c->state);
	ck_assert_msg(!strcmp(k, c->kinds), "%s: actions %s, expected %s", c->what, k, c->kinds);
	assert_rec(&rec, &c->out, c->what);
	ck_assert_msg(!c->text || has_text(&l, 0, c->text), "%s: no action says \"%s\"", c->what,
		      c->text);
	for (int i = 0; i < l.n; i++)
		ck_assert_int_eq(l.a[i].tag, 7);
	assert_holds(s, &l, 0, c->what);
	if ((sub = find_kind(&l, 0, SATURN_BPOL_SUBMIT_PROFILER)) >= 0) {
		ck_assert_msg(l.a[sub].gpus == c->gpus, "%s: %d GPUs, expected %d", c->what,
			      l.a[sub].gpus, c->gpus);
		n0 = l.n;
		st = saturn_bpol_profiler_submitted(&l, sub, c->gives, &rec);
		kinds(&l, n0, k, sizeof(k));
		ck_assert_msg(st == c->state_after, "%s: after, state %d, expected %d", c->what, st,
			      c->state_after);
		ck_assert_msg(!strcmp(k, c->kinds_after), "%s: after, actions %s, expected %s",
			      c->what, k, c->kinds_after);
		assert_rec(&rec, &c->out_after, c->what);
		assert_holds(s, &l, n0, c->what);
		if (c->gives) {
			char want[64];

			snprintf(want, sizeof(want), "saturn: profiling (job %u)", c->gives);
			ck_assert_msg(has_text(&l, n0, want), "%s: no hold \"%s\"", c->what, want);
		} else {
			ck_assert(has_text(&l, n0, "no profiler job: falling back to the users' requests"));
		}
	}
	/* the outcome of anything but a submission is refused */
	ck_assert_int_eq(saturn_bpol_profiler_submitted(&l, l.n, 1, &rec), -1);
	saturn_bpol_actions_free(&l);
	ck_assert_int_eq(l.n, 0);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The profiler job's GPUs: the largest node of the batch's partitions. */
START_TEST(test_profiler_partitions)
{
	saturn_snapshot_t *s = snap(8);
	saturn_snap_node_t *n = saturn_snapshot_add_node(s);
	saturn_bpol_actions_t l = {0};
	saturn_prof_rec_t rec = {0};
	int m[1] = {0};

	s->nodes[0].part_mask = 0x1;
	snprintf(n->name, sizeof(n->name), "n2");
	n->gpus = 4;
	n->part_mask = 0x2;
	add_job(s, H, 100, 100, 0, "sweep", 1001)->part_mask = 0x2;
	ck_assert_int_eq(saturn_bpol_profiler(s, m, 1, 0, &rec, NULL, 0, &l), SATURN_BPOL_SUBMITTING);
	ck_assert_int_eq(l.a[0].kind, SATURN_BPOL_SUBMIT_PROFILER);
	ck_assert_int_eq(l.a[0].gpus, 4);
	saturn_bpol_actions_free(&l);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Two users with the same batch name: two batches, each with its own
 * record, task ids and outcome. */
START_TEST(test_profiler_two_users)
{
	saturn_snapshot_t *s = snap(8);
	saturn_batch_groups_t g;
	saturn_bpol_actions_t l = {0};
	saturn_prof_rec_t rec[2] = {{0}};
	saturn_companion_t job[2] = {{0}};
	int exists[2], gi[2];

	add_job(s, H, 10, 10, 0, "sweep", 1001);
	add_job(s, H, 20, 20, 4, "sweep", 1002);
	add_job(s, H, 11, 10, 1, "sweep", 1001);
	add_job(s, H, 21, 20, 5, "sweep", 1002);
	ck_assert_int_eq(saturn_batch_groups(s, NULL, s->njobs, &g), 0);
	ck_assert_int_eq(g.ngroups, 2);
	/* group of 1001 first (uid order) */
	gi[0] = s->jobs[g.member[g.first[0]]].uid == 1001 ? 0 : 1;
	gi[1] = 1 - gi[0];

	/* user 1001 has a profile, user 1002 not: only 1002 is profiled,
	 * with its own task ids */
	exists[gi[0]] = 1;
	exists[gi[1]] = 0;
	for (int b = 0; b < 2; b++)
		saturn_bpol_profiler(s, &g.member[g.first[b]], g.first[b + 1] - g.first[b], exists[b],
				     &rec[b], &job[b], b, &l);
	ck_assert_int_eq(l.n, 1);
	ck_assert_int_eq(l.a[0].kind, SATURN_BPOL_SUBMIT_PROFILER);
	ck_assert_int_eq(l.a[0].tag, gi[1]);
	ck_assert_str_eq(l.a[0].text, "4,5");
	ck_assert_int_eq(rec[gi[1]].array_id, 20);
	ck_assert_int_eq(rec[gi[0]].array_id, 0);
	saturn_bpol_actions_free(&l);

	/* both profiling; 1001's job ends: 1001 falls back, 1002 waits */
	rec[gi[0]] = (saturn_prof_rec_t){555, 10, 0};
	rec[gi[1]] = (saturn_prof_rec_t){556, 20, 0};
	job[gi[0]] = (saturn_companion_t){555, SATURN_COMPANION_ENDED, 0};
	job[gi[1]] = (saturn_companion_t){556, SATURN_COMPANION_RUNNING, 0};
	for (int b = 0; b < 2; b++)
		saturn_bpol_profiler(s, &g.member[g.first[b]], g.first[b + 1] - g.first[b], 0,
				     &rec[b], &job[b], b, &l);
	ck_assert_int_eq(rec[gi[0]].fell_back, 1);
	ck_assert_int_eq(rec[gi[1]].fell_back, 0);
	for (int i = 0; i < l.n; i++) {
		if (l.a[i].kind == SATURN_BPOL_HOLD) {
			ck_assert_int_eq(l.a[i].tag, gi[1]);
			ck_assert_str_eq(l.a[i].text, "saturn: profiling (job 556)");
			for (int k = 0; k < l.a[i].ntasks; k++)
				ck_assert_int_eq(s->jobs[l.a[i].tasks[k]].uid, 1002);
		}
		if (l.a[i].kind == SATURN_BPOL_FALL_BACK)
			ck_assert_int_eq(l.a[i].tag, gi[0]);
	}
	saturn_bpol_actions_free(&l);
	saturn_batch_groups_free(&g);
	saturn_snapshot_destroy(s);
}
END_TEST

START_TEST(test_profiler_note)
{
	saturn_prof_rec_t fb = {555, 100, 1}, ok = {555, 100, 0};
	char buf[80];

	ck_assert_str_eq(saturn_bpol_profiler_note(&fb, buf, sizeof(buf)),
			 "saturn: profiler job 555 failed, users' requests; ");
	ck_assert_str_eq(saturn_bpol_profiler_note(&ok, buf, sizeof(buf)), "");
	ck_assert_str_eq(saturn_bpol_profiler_note(NULL, buf, sizeof(buf)), "");
}
END_TEST

/* --- records --------------------------------------------------------------- */

static const struct prec_case {
	const char *text;
	int ok;
	saturn_prof_rec_t rec;
} prec_cases[] = {
	{"555 100\n", 1, {555, 100, 0}},
	{"555 100 fallback\n", 1, {555, 100, 1}},
	{"555 100", 1, {555, 100, 0}},
	{"4294967295 1\n", 1, {4294967295u, 1, 0}},
	{"4294967296 1\n", 0, {0}},
	{"555\n", 0, {0}},
	{"abc def\n", 0, {0}},
	{"555 100 junk\n", 0, {0}},
	{"-1 100\n", 0, {0}},
	{"", 0, {0}},
};

START_TEST(test_prof_rec)
{
	const struct prec_case *c = &prec_cases[_i];
	saturn_prof_rec_t r, back;
	char buf[64];

	ck_assert_int_eq(saturn_prof_rec_parse(c->text, &r), c->ok ? 0 : -1);
	assert_rec(&r, &c->rec, c->text);
	if (c->ok) {
		saturn_prof_rec_format(&r, buf, sizeof(buf));
		ck_assert_int_eq(saturn_prof_rec_parse(buf, &back), 0);
		assert_rec(&back, &r, buf);
	}
}
END_TEST

static const struct mrec_case {
	const char *text;
	int ok;
	uint32_t job, array;
	int rounds;
	const char *items, *tried;
} mrec_cases[] = {
	{"700 100 1 0:ddp:2\nddp:2@m/bs8\n", 1, 700, 100, 1, "0:ddp:2", "ddp:2@m/bs8\n"},
	{"0 100 2 -\nddp:2@m/bs8\nddp:4@m/bs8\n", 1, 0, 100, 2, NULL, "ddp:2@m/bs8\nddp:4@m/bs8\n"},
	{"0 0 0 -\n", 1, 0, 0, 0, NULL, NULL},
	{"0 0 0 -", 1, 0, 0, 0, NULL, NULL},
	{"1 2 3\n", 0, 0, 0, 0, NULL, NULL},
	{"1 2 3 a b\n", 0, 0, 0, 0, NULL, NULL},
	{"x 2 3 -\n", 0, 0, 0, 0, NULL, NULL},
	{"", 0, 0, 0, 0, NULL, NULL},
};

START_TEST(test_meas_rec)
{
	const struct mrec_case *c = &mrec_cases[_i];
	saturn_meas_rec_t r, back;
	char *txt;

	ck_assert_int_eq(saturn_meas_rec_parse(c->text, &r), c->ok ? 0 : -1);
	ck_assert_uint_eq(r.job_id, c->job);
	ck_assert_uint_eq(r.array_id, c->array);
	ck_assert_int_eq(r.rounds, c->rounds);
	ck_assert_pstr_eq(r.items, c->items);
	ck_assert_pstr_eq(r.tried, c->tried);
	if (c->ok) {
		ck_assert_ptr_nonnull(txt = saturn_meas_rec_format(&r));
		ck_assert_int_eq(saturn_meas_rec_parse(txt, &back), 0);
		ck_assert_uint_eq(back.job_id, r.job_id);
		ck_assert_pstr_eq(back.items, r.items);
		ck_assert_pstr_eq(back.tried, r.tried);
		free(txt);
		saturn_meas_rec_free(&back);
	}
	saturn_meas_rec_free(&r);
}
END_TEST

/* A --measure list longer than the old 1023-character reading limit comes
 * back whole. */
START_TEST(test_meas_rec_long)
{
	saturn_meas_rec_t r = {0}, back;
	char *items = malloc(2001), *txt;

	memset(items, 'x', 2000);
	items[2000] = '\0';
	r.job_id = 9;
	r.items = items;
	ck_assert_ptr_nonnull(txt = saturn_meas_rec_format(&r));
	ck_assert_int_eq(saturn_meas_rec_parse(txt, &back), 0);
	ck_assert_str_eq(back.items, items);
	free(txt);
	saturn_meas_rec_free(&back);
	saturn_meas_rec_free(&r);
}
END_TEST

/* --- measurement --------------------------------------------------------- */

/* Tasks 0-7: one signature, ddp on 1 GPU measured, on 2, 4 and 8
 * predicted, "x;y" (not a plain name) on 2 predicted; tasks 8-9: a
 * signature with a newline, ddp on 2 predicted. The loader refuses both
 * names (safetext.h): profile() puts them in after parsing, as a lookup
 * could hand over a profile that never went through the loader. */
static const char profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-7\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 1, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.6, \"status\": \"predicted\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.35, \"status\": \"predicted\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 8, \"sec_per_batch\": 0.2, \"status\": \"predicted\"},"
	"  {\"technique\": \"x_semi_y\", \"gpus\": 2, \"sec_per_batch\": 0.5, \"status\": \"predicted\"} ] },"
	" {\"signature\": \"n_nl_l\", \"task_ids\": \"8-9\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.6, \"status\": \"predicted\"} ] } ] }";

static const saturn_profile_t *lookup(const char *batch, long uid, void *arg)
{
	return strcmp(batch, "sweep") || (uid != 1001 && uid != 1002) ? NULL : arg;
}

static saturn_profile_t *profile(const char *text)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(text, strlen(text), &err);

	ck_assert_msg(pr != NULL, "profile: %s", err.text);
	for (int t = 0; t < pr->ntasks; t++) {
		if (!strcmp(pr->tasks[t].signature, "n_nl_l"))
			strcpy(pr->tasks[t].signature, "n\nl");
		for (int o = 0; o < pr->tasks[t].noptions; o++)
			if (!strcmp(pr->tasks[t].options[o].technique, "x_semi_y"))
				strcpy(pr->tasks[t].options[o].technique, "x;y");
	}
	return pr;
}

struct mdec {
	int task, release;
	const char *tech;
	int gpus;
};

static const struct meas_case {
	const char *what;
	struct mdec d[4];
	int nd;
	uint32_t in_job, in_array;
	int in_rounds;
	const char *in_tried;
	int node_gpus;
	uint32_t array;     /* the tasks' submission */
	int nbatches;       /* batches with a due decision */
	const char *kinds;
	const char *list;   /* the SUBMIT_MEASURE's --measure list */
	int gpus;
	uint32_t gives;     /* the submission's job id (0 = failed) */
	const char *kinds_after;
	uint32_t job_after;
	int rounds_after;
	const char *tried_after;
	const char *held;   /* decisions held in the end ("01": 0 and 1) */
	const char *text;   /* in some action's text */
} meas_cases[] = {
	{"a predicted option due: measure it, hold the task",
	 {{0, 1, "ddp", 2}}, 1, 0, 0, 0, NULL, 8, 100, 1, "M", "0:ddp:2", 2,
	 700, "LWH", 700, 1, "ddp:2@m/bs8\n", "0", "saturn: measuring predicted ddp on 2 GPUs (job 700)"},
	{"a measured option due: released, nothing to do",
	 {{0, 1, "ddp", 1}}, 1, 0, 0, 0, NULL, 8, 100, 0, "", NULL, 0, 0, NULL, 0, 0, NULL, "", NULL},
	{"a predicted option not due yet: nothing yet",
	 {{0, 0, "ddp", 4}}, 1, 0, 0, 0, NULL, 8, 100, 0, "", NULL, 0, 0, NULL, 0, 0, NULL, "", NULL},
	{"due and later ones: the later ones needing no more GPUs join, only the due one held",
	 {{0, 1, "ddp", 4}, {1, 0, "ddp", 2}, {2, 0, "ddp", 8}}, 3, 0, 0, 0, NULL, 8, 100, 1,
	 "M", "0:ddp:4,1:ddp:2", 4, 700, "LWH", 700, 1, "ddp:4@m/bs8\nddp:2@m/bs8\n", "0",
	 "measuring predicted option(s) 0:ddp:4,1:ddp:2 before relying on them (job 700, round 1)"},
	{"two due tasks on the same option: one item, both held",
	 {{0, 1, "ddp", 2}, {1, 1, "ddp", 2}}, 2, 0, 0, 0, NULL, 8, 100, 1, "M", "0:ddp:2", 2,
	 700, "LWHH", 700, 1, "ddp:2@m/bs8\n", "01", NULL},
	{"a measurement job running: the due tasks wait for it",
	 {{0, 1, "ddp", 4}, {1, 0, "ddp", 2}}, 2, 700, 100, 1, "ddp:4@m/bs8\n", 8, 100, 1, "H",
	 NULL, 0, 0, NULL, 0, 0, NULL, "0", "saturn: measuring predicted ddp on 4 GPUs (job 700)"},
	{"the measurement failed: rely on the prediction, once",
	 {{0, 1, "ddp", 2}}, 1, 0, 100, 1, "ddp:2@m/bs8\n", 8, 100, 1, "L", NULL, 0, 0, NULL, 0, 0,
	 NULL, "", "task 0 relies on the predicted ddp on 2 GPU(s) (measured once already"},
	{"an option tried, another not: only the new one measured",
	 {{0, 1, "ddp", 2}, {1, 1, "ddp", 4}}, 2, 0, 100, 1, "ddp:2@m/bs8\n", 8, 100, 1, "LM",
	 "1:ddp:4", 4, 701, "LWH", 701, 2, "ddp:2@m/bs8\nddp:4@m/bs8\n", "1", NULL},
	{"the round cap: rely on the prediction",
	 {{0, 1, "ddp", 2}}, 1, 0, 100, SATURN_BPOL_MEASURE_ROUNDS, NULL, 8, 100, 1, "L", NULL, 0,
	 0, NULL, 0, 0, NULL, "", "(not measurable now)"},
	{"more GPUs than any node: rely on the prediction",
	 {{0, 1, "ddp", 8}}, 1, 0, 0, 0, NULL, 4, 100, 1, "L", NULL, 0, 0, NULL, 0, 0, NULL, "",
	 "(not measurable now)"},
	{"a technique that is not a plain name: never in a shell line",
	 {{0, 1, "x;y", 2}}, 1, 0, 0, 0, NULL, 8, 100, 1, "L", NULL, 0, 0, NULL, 0, 0, NULL, "",
	 "(not measurable now)"},
	{"a signature with a newline: never in a record line",
	 {{8, 1, "ddp", 2}}, 1, 0, 0, 0, NULL, 8, 100, 1, "L", NULL, 0, 0, NULL, 0, 0, NULL, "",
	 "(not measurable now)"},
	{"the submission fails: tried all the same, the task relies on the prediction",
	 {{0, 1, "ddp", 2}}, 1, 0, 0, 0, NULL, 8, 100, 1, "M", "0:ddp:2", 2, 0, "LW", 0, 1,
	 "ddp:2@m/bs8\n", "", "no measurement job: relying on the predictions 0:ddp:2"},
	{"a new submission of the batch name: the record starts afresh",
	 {{0, 1, "ddp", 2}}, 1, 700, 100, SATURN_BPOL_MEASURE_ROUNDS, "ddp:2@m/bs8\n", 8, 200, 1,
	 "M", "0:ddp:2", 2, 701, "LWH", 701, 1, "ddp:2@m/bs8\n", "0", NULL},
};

static saturn_snapshot_t *meas_snap(int node_gpus, uint32_t array)
{
	saturn_snapshot_t *s = snap(node_gpus);

	for (int t = 0; t < 10; t++)
		add_job(s, H, array, array, t, "sweep", 1001);
	return s;
}

/* The identity saturn_sched_decide gives decisions d[0..nd-1] about s:
 * the option of their technique, GPUs and nodes in profile pr, named
 * source ("" the batch's own). */
static void identify(const saturn_snapshot_t *s, saturn_decision_t *d, int nd,
		     const saturn_profile_t *pr, const char *source)
{
	for (int i = 0; i < nd; i++) {
		const saturn_snap_job_t *j = &s->jobs[d[i].job];
		const saturn_profile_task_t *pt = saturn_profile_find(pr, j->task_id);

		d[i].prof_opt =
		    saturn_profile_task_option(pt, d[i].technique, d[i].gpus, d[i].nnodes);
		snprintf(d[i].source, sizeof(d[i].source), "%s", source);
	}
}

static saturn_decision_t *decisions(const struct mdec *md, int nd)
{
	saturn_decision_t *d = calloc((size_t)nd, sizeof(*d));

	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < nd; i++) {
		d[i].job = md[i].task; /* job index = task id in meas_snap */
		d[i].release = md[i].release;
		d[i].gpus = md[i].gpus;
		snprintf(d[i].technique, sizeof(d[i].technique), "%s", md[i].tech);
		snprintf(d[i].node, sizeof(d[i].node), "n1");
		snprintf(d[i].reason, sizeof(d[i].reason), "planned");
	}
	return d;
}

/* What the plugin does with HOLD actions on decisions. */
static void apply_holds(const saturn_bpol_actions_t *l, saturn_decision_t *d)
{
	for (int i = 0; i < l->n; i++)
		if (l->a[i].kind == SATURN_BPOL_HOLD)
			for (int k = 0; k < l->a[i].ntasks; k++) {
				d[l->a[i].tasks[k]].release = 0;
				snprintf(d[l->a[i].tasks[k]].reason, sizeof(d->reason), "%s",
					 l->a[i].text);
			}
}

START_TEST(test_measure)
{
	const struct meas_case *c = &meas_cases[_i];
	saturn_profile_t *pr = profile(profile_text);
	saturn_snapshot_t *s = meas_snap(c->node_gpus, c->array);
	saturn_decision_t *d = decisions(c->d, c->nd);
	saturn_bpol_measure_t w;
	saturn_bpol_actions_t l = {0};
	saturn_meas_rec_t rec = {c->in_job, c->in_array, c->in_rounds,
				 c->in_tried ? strdup(c->in_tried) : NULL, NULL};
	char k[32], held[8] = "";
	int sub, n0, nh = 0;

	identify(s, d, c->nd, pr, "");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, c->nd, lookup, pr, &w), 0);
	ck_assert_msg(w.nbatches == c->nbatches, "%s: %d batches due, expected %d", c->what,
		      w.nbatches, c->nbatches);
	for (int b = 0; b < w.nbatches; b++)
		ck_assert_int_ge(saturn_bpol_measure_batch(s, d, &w, b, &rec, b, &l), 0);
	kinds(&l, 0, k, sizeof(k));
	ck_assert_msg(!strcmp(k, c->kinds), "%s: actions %s, expected %s", c->what, k, c->kinds);
	if ((sub = find_kind(&l, 0, SATURN_BPOL_SUBMIT_MEASURE)) >= 0) {
		ck_assert_str_eq(l.a[sub].text, c->list);
		ck_assert_int_eq(l.a[sub].gpus, c->gpus);
		n0 = l.n;
		ck_assert_int_eq(saturn_bpol_measure_submitted(d, &l, sub, c->gives, &rec), 0);
		kinds(&l, n0, k, sizeof(k));
		ck_assert_msg(!strcmp(k, c->kinds_after), "%s: after, actions %s, expected %s",
			      c->what, k, c->kinds_after);
		ck_assert_uint_eq(rec.job_id, c->job_after);
		ck_assert_uint_eq(rec.array_id, c->array);
		ck_assert_int_eq(rec.rounds, c->rounds_after);
		ck_assert_pstr_eq(rec.tried, c->tried_after);
		if (c->gives)
			ck_assert_str_eq(rec.items, c->list);
		else
			ck_assert_ptr_null(rec.items);
	} else if (c->nbatches) {
		/* no submission: the record keeps its job and count */
		ck_assert_uint_eq(rec.job_id, c->in_job);
		ck_assert_int_eq(rec.rounds, c->in_rounds);
	}
	ck_assert_msg(!c->text || has_text(&l, 0, c->text), "%s: no action says \"%s\"", c->what,
		      c->text);
	apply_holds(&l, d);
	for (int i = 0; i < c->nd; i++)
		if (c->d[i].release && !d[i].release)
			held[nh++] = (char)('0' + i);
	held[nh] = '\0';
	ck_assert_msg(!strcmp(held, c->held), "%s: held %s, expected %s", c->what, held, c->held);
	saturn_bpol_actions_free(&l);
	saturn_bpol_measure_free(&w);
	saturn_meas_rec_free(&rec);
	free(d);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
}
END_TEST

/* A whole measurement: due -> measured by job 700 -> job ended (poll) ->
 * the profile now says measured -> released. */
/* Multi-node options (#12): tasks 0-7 with ddp on 1 GPU measured, on 2
 * predicted, and on 2 GPUs x 2 nodes predicted. */
static const char profile_nodes_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-7\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 1, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.6, \"status\": \"predicted\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"nodes\": 2, \"sec_per_batch\": 0.4, \"status\": \"predicted\"} ] } ] }";

struct ndec {
	int task, release, gpus, nodes;
};

static const struct nodes_case {
	const char *what;
	struct ndec d[3];
	int nd;
	int nnodes;          /* snapshot nodes of 4 GPUs */
	const char *in_tried;
	const char *kinds;
	const char *list;    /* NULL: no submission */
	int gpus, nodes;     /* of the submission */
	const char *tried_after;
	const char *text;    /* in some action's text */
} nodes_cases[] = {
	{"a predicted two-node option due: measured on 2 nodes, the task held",
	 {{0, 1, 2, 2}}, 1, 4, NULL, "M", "0:ddp:2x2", 2, 2, "ddp:2x2@m/bs8\n",
	 "saturn: measuring predicted ddp on 2 GPUs x 2 nodes (job 700)"},
	{"one node with the GPUs only: not measurable, relies on the prediction",
	 {{0, 1, 2, 2}}, 1, 1, NULL, "L", NULL, 0, 0, NULL,
	 "task 0 relies on the predicted ddp on 2 GPU(s) x 2 nodes (not measurable now)"},
	{"the one-node option tried is another option than the two-node one",
	 {{0, 1, 2, 2}}, 1, 4, "ddp:2@m/bs8\n", "M", "0:ddp:2x2", 2, 2,
	 "ddp:2@m/bs8\nddp:2x2@m/bs8\n", NULL},
	{"the two-node option tried once: relies on the prediction",
	 {{0, 1, 2, 2}}, 1, 4, "ddp:2x2@m/bs8\n", "L", NULL, 0, 0, NULL,
	 "(measured once already"},
	{"a later two-node option does not join a one-node job",
	 {{0, 1, 2, 1}, {1, 0, 2, 2}}, 2, 4, NULL, "M", "0:ddp:2", 2, 1, "ddp:2@m/bs8\n", NULL},
	{"a later one-node option joins a two-node job",
	 {{0, 1, 2, 2}, {1, 0, 2, 1}}, 2, 4, NULL, "M", "0:ddp:2x2,1:ddp:2", 2, 2,
	 "ddp:2x2@m/bs8\nddp:2@m/bs8\n", NULL},
};

START_TEST(test_measure_nodes)
{
	const struct nodes_case *c = &nodes_cases[_i];
	saturn_profile_t *pr = profile(profile_nodes_text);
	saturn_snapshot_t *s = snap(4);
	saturn_decision_t *d = calloc(3, sizeof(*d));
	saturn_bpol_measure_t w;
	saturn_bpol_actions_t l = {0};
	saturn_meas_rec_t rec = {0, c->in_tried ? 100 : 0, c->in_tried ? 1 : 0,
				 c->in_tried ? strdup(c->in_tried) : NULL, NULL};
	char k[32];
	int sub;

	ck_assert_ptr_nonnull(d);
	for (int n = 1; n < c->nnodes; n++) {
		saturn_snap_node_t *nd = saturn_snapshot_add_node(s);

		ck_assert_ptr_nonnull(nd);
		snprintf(nd->name, sizeof(nd->name), "n%d", n + 1);
		nd->gpus = 4;
	}
	for (int t = 0; t < 8; t++)
		add_job(s, H, 100, 100, t, "sweep", 1001);
	for (int i = 0; i < c->nd; i++) {
		d[i].job = c->d[i].task;
		d[i].release = c->d[i].release;
		d[i].gpus = c->d[i].gpus;
		d[i].nnodes = c->d[i].nodes;
		snprintf(d[i].technique, sizeof(d[i].technique), "ddp");
		snprintf(d[i].node, sizeof(d[i].node), "n1");
	}
	identify(s, d, c->nd, pr, "");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, c->nd, lookup, pr, &w), 0);
	ck_assert_int_eq(w.nbatches, 1);
	ck_assert_int_ge(saturn_bpol_measure_batch(s, d, &w, 0, &rec, 0, &l), 0);
	kinds(&l, 0, k, sizeof(k));
	ck_assert_msg(!strcmp(k, c->kinds), "%s: actions %s, expected %s", c->what, k, c->kinds);
	sub = find_kind(&l, 0, SATURN_BPOL_SUBMIT_MEASURE);
	if (c->list) {
		ck_assert_int_ge(sub, 0);
		ck_assert_str_eq(l.a[sub].text, c->list);
		ck_assert_int_eq(l.a[sub].gpus, c->gpus);
		ck_assert_int_eq(l.a[sub].nodes, c->nodes);
		ck_assert_int_eq(saturn_bpol_measure_submitted(d, &l, sub, 700, &rec), 0);
		ck_assert_pstr_eq(rec.tried, c->tried_after);
		ck_assert_str_eq(rec.items, c->list);
		apply_holds(&l, d);
		ck_assert_int_eq(d[0].release, 0);
	} else {
		ck_assert_int_lt(sub, 0);
	}
	ck_assert_msg(!c->text || has_text(&l, 0, c->text), "%s: no action says \"%s\"", c->what,
		      c->text);
	/* the record with two-node items reads back */
	{
		char *txt = saturn_meas_rec_format(&rec);
		saturn_meas_rec_t back;

		ck_assert_ptr_nonnull(txt);
		ck_assert_int_eq(saturn_meas_rec_parse(txt, &back), 0);
		ck_assert_pstr_eq(back.items, rec.items);
		ck_assert_pstr_eq(back.tried, rec.tried);
		saturn_meas_rec_free(&back);
		free(txt);
	}
	saturn_bpol_actions_free(&l);
	saturn_bpol_measure_free(&w);
	saturn_meas_rec_free(&rec);
	free(d);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
}
END_TEST

START_TEST(test_measure_then_release)
{
	saturn_profile_t *pr = profile(profile_text), *after;
	char *measured = strdup(profile_text), *p;
	saturn_snapshot_t *s = meas_snap(8, 100);
	struct mdec md[1] = {{0, 1, "ddp", 2}};
	saturn_decision_t *d = decisions(md, 1);
	saturn_bpol_measure_t w;
	saturn_bpol_actions_t l = {0};
	saturn_meas_rec_t rec = {0};
	saturn_companion_t ended = {700, SATURN_COMPANION_ENDED, 0};

	identify(s, d, 1, pr, "");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 1, lookup, pr, &w), 0);
	ck_assert_int_eq(saturn_bpol_measure_batch(s, d, &w, 0, &rec, 0, &l), 1);
	ck_assert_int_eq(saturn_bpol_measure_submitted(d, &l, 0, 700, &rec), 0);
	saturn_bpol_measure_free(&w);
	saturn_bpol_actions_free(&l);
	ck_assert_int_eq(saturn_bpol_measure_poll(&rec, &ended, 2000, 0, &l), 1);
	ck_assert_uint_eq(rec.job_id, 0);
	saturn_bpol_actions_free(&l);
	/* the profile comes back with ddp on 2 GPUs measured */
	p = strstr(measured, "0.6, \"status\": \"predicted\"");
	ck_assert_ptr_nonnull(p);
	memcpy(p, "0.6, \"status\": \"measured\" ", strlen("0.6, \"status\": \"predicted\""));
	after = profile(measured);
	free(d);
	d = decisions(md, 1);
	identify(s, d, 1, after, "");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 1, lookup, after, &w), 0);
	ck_assert_int_eq(w.nbatches, 0);
	ck_assert_int_eq(d[0].release, 1);
	saturn_bpol_measure_free(&w);
	saturn_meas_rec_free(&rec);
	free(d);
	free(measured);
	saturn_profile_destroy(after);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* At most SATURN_BPOL_MEASURE_ITEMS options in one job: 20 signatures,
 * each due on its predicted ddp/2. */
START_TEST(test_measure_items_cap)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	saturn_profile_t *pr;
	saturn_snapshot_t *s = snap(8);
	saturn_decision_t d[20];
	saturn_bpol_measure_t w;
	saturn_bpol_actions_t l = {0};
	saturn_meas_rec_t rec = {0};
	int sub, nitems = 1, nlog = 0;

	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1, \"tasks\": [");
	for (int t = 0; t < 20; t++)
		fprintf(f, "%s{\"signature\": \"s%d\", \"task_ids\": \"%d\", \"batches\": 10,"
			   " \"options\": [{\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 1,"
			   " \"status\": \"predicted\"}]}",
			t ? "," : "", t, t);
	fprintf(f, "]}");
	fclose(f);
	pr = profile(text);
	memset(d, 0, sizeof(d));
	for (int t = 0; t < 20; t++) {
		add_job(s, H, 100, 100, t, "sweep", 1001);
		d[t].job = t;
		d[t].release = 1;
		d[t].gpus = 2;
		snprintf(d[t].technique, sizeof(d[t].technique), "ddp");
	}
	identify(s, d, 20, pr, "");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 20, lookup, pr, &w), 0);
	ck_assert_int_eq(saturn_bpol_measure_batch(s, d, &w, 0, &rec, 0, &l), 1);
	sub = find_kind(&l, 0, SATURN_BPOL_SUBMIT_MEASURE);
	ck_assert_int_ge(sub, 0);
	for (const char *p = l.a[sub].text; *p; p++)
		nitems += *p == ',';
	ck_assert_int_eq(nitems, SATURN_BPOL_MEASURE_ITEMS);
	ck_assert_int_eq(l.a[sub].ntasks, SATURN_BPOL_MEASURE_ITEMS);
	for (int i = 0; i < l.n; i++)
		nlog += l.a[i].kind == SATURN_BPOL_LOG;
	ck_assert_int_eq(nlog, 20 - SATURN_BPOL_MEASURE_ITEMS);
	saturn_bpol_actions_free(&l);
	saturn_bpol_measure_free(&w);
	saturn_meas_rec_free(&rec);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
	free(text);
}
END_TEST

/* Two users with the same batch name: one waits for its running job, the
 * other gets its own measurement. */
START_TEST(test_measure_two_users)
{
	saturn_profile_t *pr = profile(profile_text);
	saturn_snapshot_t *s = snap(8);
	saturn_decision_t d[2];
	saturn_bpol_measure_t w;
	saturn_bpol_actions_t l = {0};
	saturn_meas_rec_t rec[2] = {{700, 10, 1, NULL, NULL}, {0}};
	int b1001;

	add_job(s, H, 10, 10, 0, "sweep", 1001);
	add_job(s, H, 20, 20, 0, "sweep", 1002);
	memset(d, 0, sizeof(d));
	for (int i = 0; i < 2; i++) {
		d[i].job = i;
		d[i].release = 1;
		d[i].gpus = 2;
		snprintf(d[i].technique, sizeof(d[i].technique), "ddp");
	}
	identify(s, d, 2, pr, "");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 2, lookup, pr, &w), 0);
	ck_assert_int_eq(w.nbatches, 2);
	b1001 = s->jobs[d[w.due[0]].job].uid == 1001 ? 0 : 1;
	ck_assert_int_eq(saturn_bpol_measure_batch(s, d, &w, b1001, &rec[0], b1001, &l), 0);
	ck_assert_int_eq(saturn_bpol_measure_batch(s, d, &w, 1 - b1001, &rec[1], 1 - b1001, &l), 1);
	ck_assert_int_eq(l.n, 2);
	ck_assert_int_eq(l.a[0].kind, SATURN_BPOL_HOLD);
	ck_assert_int_eq(l.a[0].tasks[0], 0);
	ck_assert_int_eq(l.a[1].kind, SATURN_BPOL_SUBMIT_MEASURE);
	ck_assert_int_eq(l.a[1].tasks[0], 1);
	ck_assert_uint_eq(rec[1].array_id, 20);
	ck_assert_uint_eq(rec[0].job_id, 700);
	saturn_bpol_actions_free(&l);
	saturn_bpol_measure_free(&w);
	saturn_meas_rec_free(&rec[0]);
	saturn_meas_rec_free(&rec[1]);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
}
END_TEST

/* Node classes: class h100's own profile (PROFILE_DIR/UID/sweep@h100.json)
 * has ddp on 2 GPUs predicted and on 4 measured, the batch's profile the
 * other way round for 4. A decision on an h100 node relies on h100's own
 * options: measured in a job of its own (entry with class h100), the
 * a100 one from the batch's profile in another; ddp on 4 on h100 is
 * measured there, so nothing to do for it. */
static const char class_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-7\", \"batches\": 100,"
	" \"class\": \"h100\", \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.3, \"status\": \"predicted\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.2, \"status\": \"measured\"} ] } ] }";

static const saturn_profile_t *class_lookup(const char *batch, long uid, const char *klass,
					    void *arg)
{
	return strcmp(batch, "sweep") || uid != 1001 || strcmp(klass, "h100") ? NULL : arg;
}

START_TEST(test_measure_class)
{
	saturn_profile_t *pr = profile(profile_text), *cp = profile(class_text);
	saturn_snapshot_t *s = meas_snap(4, 100);
	saturn_snap_node_t *n2 = saturn_snapshot_add_node(s);
	struct mdec md[3] = {{0, 1, "ddp", 2}, {1, 1, "ddp", 2}, {2, 1, "ddp", 4}};
	saturn_decision_t *d = decisions(md, 3);
	saturn_bpol_measure_t w;
	saturn_bpol_actions_t l = {0};
	saturn_meas_rec_t rec[2] = {{0}, {0}};
	int bh, sub;

	snprintf(s->nodes[0].klass, sizeof(s->nodes[0].klass), "a100");
	snprintf(s->nodes[0].gpu_types, sizeof(s->nodes[0].gpu_types), "a100");
	ck_assert_ptr_nonnull(n2);
	snprintf(n2->name, sizeof(n2->name), "n2");
	snprintf(n2->klass, sizeof(n2->klass), "h100");
	snprintf(n2->gpu_types, sizeof(n2->gpu_types), "h100");
	n2->gpus = 8;
	s->class_profile = class_lookup;
	s->class_profile_arg = cp;
	snprintf(d[0].klass, sizeof(d[0].klass), "a100");
	for (int i = 1; i < 3; i++) {
		snprintf(d[i].node, sizeof(d[i].node), "n2");
		snprintf(d[i].klass, sizeof(d[i].klass), "h100");
	}
	ck_assert_str_eq(saturn_bpol_class_gpu_type(s, "h100"), "h100");
	ck_assert_ptr_null(saturn_bpol_class_gpu_type(s, "v100"));
	/* the decisions on h100 nodes rely on h100's own options (the
	 * build gave them that class's options only) */
	identify(s, d, 1, pr, "");
	identify(s, d + 1, 2, cp, "h100");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 3, lookup, pr, &w), 0);
	ck_assert_int_eq(w.nbatches, 2);
	ck_assert_ptr_null(w.sig[2]); /* measured in h100's own profile */
	bh = w.bclass[0] ? 0 : 1;
	ck_assert_ptr_null(w.bclass[1 - bh]);
	ck_assert_str_eq(w.bclass[bh], "h100");
	ck_assert_int_eq(w.due[bh], 1);
	ck_assert_int_eq(w.due[1 - bh], 0);
	/* class h100: its own job, only its task */
	ck_assert_int_eq(saturn_bpol_measure_batch(s, d, &w, bh, &rec[1], bh, &l), 1);
	sub = find_kind(&l, 0, SATURN_BPOL_SUBMIT_MEASURE);
	ck_assert_int_ge(sub, 0);
	ck_assert_str_eq(l.a[sub].text, "1:ddp:2");
	ck_assert_int_eq(l.a[sub].ntasks, 1);
	ck_assert_int_eq(l.a[sub].tasks[0], 1);
	ck_assert_pstr_eq(rec[1].tried, "ddp:2@m/bs8\n");
	saturn_bpol_actions_free(&l);
	/* the batch's profile: task 0 on a100 alone (4 GPUs there at most) */
	ck_assert_int_eq(saturn_bpol_measure_batch(s, d, &w, 1 - bh, &rec[0], 1 - bh, &l), 1);
	sub = find_kind(&l, 0, SATURN_BPOL_SUBMIT_MEASURE);
	ck_assert_int_ge(sub, 0);
	ck_assert_str_eq(l.a[sub].text, "0:ddp:2");
	ck_assert_int_eq(l.a[sub].ntasks, 1);
	ck_assert_int_eq(l.a[sub].tasks[0], 0);
	saturn_bpol_actions_free(&l);
	saturn_bpol_measure_free(&w);
	/* once h100's profile says measured, its decision is released */
	cp->tasks[0].options[0].status = SATURN_OPT_MEASURED;
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d + 1, 2, lookup, pr, &w), 0);
	ck_assert_int_eq(w.nbatches, 0);
	saturn_bpol_measure_free(&w);
	saturn_meas_rec_free(&rec[0]);
	saturn_meas_rec_free(&rec[1]);
	free(d);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
	saturn_profile_destroy(cp);
}
END_TEST

/* The profile a decision relies on is the one its option came from (its
 * identity), not the one its node's class has: ddp on 2 GPUs is predicted
 * in both the batch's profile and h100's own, and a decision on an h100
 * node planned with the batch's option is measured from the batch's. */
START_TEST(test_measure_identity)
{
	saturn_profile_t *pr = profile(profile_text), *cp = profile(class_text);
	saturn_snapshot_t *s = meas_snap(4, 100);
	saturn_snap_node_t *n2 = saturn_snapshot_add_node(s);
	struct mdec md[1] = {{0, 1, "ddp", 2}};
	saturn_decision_t *d = decisions(md, 1);
	saturn_bpol_measure_t w;

	ck_assert_ptr_nonnull(n2);
	snprintf(n2->name, sizeof(n2->name), "n2");
	snprintf(n2->klass, sizeof(n2->klass), "h100");
	snprintf(n2->gpu_types, sizeof(n2->gpu_types), "h100");
	n2->gpus = 8;
	s->class_profile = class_lookup;
	s->class_profile_arg = cp;
	snprintf(d[0].node, sizeof(d[0].node), "n2");
	snprintf(d[0].klass, sizeof(d[0].klass), "h100");
	identify(s, d, 1, pr, "");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 1, lookup, pr, &w), 0);
	ck_assert_int_eq(w.nbatches, 1);
	ck_assert_ptr_null(w.klass[0]);
	ck_assert_ptr_null(w.bclass[0]);
	saturn_bpol_measure_free(&w);
	/* planned with h100's own option: measured from h100's profile */
	identify(s, d, 1, cp, "h100");
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 1, lookup, pr, &w), 0);
	ck_assert_int_eq(w.nbatches, 1);
	ck_assert_str_eq(w.bclass[0], "h100");
	saturn_bpol_measure_free(&w);
	/* the user's request (no profile option): nothing to measure */
	d[0].prof_opt = -1;
	d[0].source[0] = '\0';
	ck_assert_int_eq(saturn_bpol_measure_prepare(s, d, 1, lookup, pr, &w), 0);
	ck_assert_int_eq(w.nbatches, 0);
	saturn_bpol_measure_free(&w);
	free(d);
	saturn_snapshot_destroy(s);
	saturn_profile_destroy(pr);
	saturn_profile_destroy(cp);
}
END_TEST

/* The class profiler jobs' names, found again after a restart. */
static const struct cjn_case {
	const char *name;
	int ok;
	const char *batch, *klass;
} cjn_cases[] = {
	{"saturn-profile:sweep@h100x8", 1, "sweep", "h100x8"},
	{"saturn-profile:my.sweep-2@a100-pcie+nv_1", 1, "my.sweep-2", "a100-pcie+nv_1"},
	{"saturn-profile:sweep", 0, "", ""},             /* the batch's own job */
	{"saturn-measure:sweep@h100", 0, "", ""},        /* not a profiler job */
	{"saturn-profile:@h100", 0, "", ""},
	{"saturn-profile:sweep@", 0, "", ""},
	{"saturn-profile:sweep@.h100", 0, "", ""},
	{"saturn-profile:sw/eep@h100", 0, "", ""},
	{"saturn-profile:a@b@h100", 0, "", ""},          /* '@' in the class */
	{"saturn-profile:sweep@h 100", 0, "", ""},
	{"xsaturn-profile:sweep@h100", 0, "", ""},
	{"", 0, "", ""},
	{NULL, 0, "", ""},
};

START_TEST(test_class_job_name)
{
	const struct cjn_case *c = &cjn_cases[_i];
	char batch[SATURN_NAME_LEN] = "x", klass[SATURN_CLASS_NAME_MAX + 1] = "x";

	ck_assert_int_eq(saturn_bpol_class_job_name(c->name, batch, sizeof(batch), klass,
						    sizeof(klass)), c->ok ? 0 : -1);
	ck_assert_str_eq(batch, c->batch);
	ck_assert_str_eq(klass, c->klass);
}
END_TEST

START_TEST(test_class_job_name_long)
{
	char name[300], batch[8], klass[SATURN_CLASS_NAME_MAX + 1];

	/* a batch longer than the buffer, a class over the limit */
	ck_assert_int_eq(saturn_bpol_class_job_name("saturn-profile:longbatch@h100", batch,
						    sizeof(batch), klass, sizeof(klass)), -1);
	snprintf(name, sizeof(name), "saturn-profile:b@%0*d", SATURN_CLASS_NAME_MAX + 1, 0);
	ck_assert_int_eq(saturn_bpol_class_job_name(name, batch, sizeof(batch), klass,
						    sizeof(klass)), -1);
	snprintf(name, sizeof(name), "saturn-profile:b@%0*d", SATURN_CLASS_NAME_MAX, 0);
	ck_assert_int_eq(saturn_bpol_class_job_name(name, batch, sizeof(batch), klass,
						    sizeof(klass)), 0);
}
END_TEST

static const struct poll_case {
	const char *what;
	uint32_t job;        /* the record's */
	saturn_companion_t c;
	double now;
	int rc;
	const char *kinds;
	const char *text;
} poll_cases[] = {
	{"ended: no longer waited for", 700, {700, SATURN_COMPANION_ENDED, 0}, 2000, 1, "LW",
	 "measurement job 700 ended (0:ddp:2)"},
	{"pending over 5 minutes: not waited for", 700, {700, SATURN_COMPANION_PENDING, 1000},
	 1000 + SATURN_BPOL_MEASURE_WAIT_S + 1, 1, "LW", "still pending after 300s"},
	{"pending a while: waited for", 700, {700, SATURN_COMPANION_PENDING, 1000},
	 1000 + SATURN_BPOL_MEASURE_WAIT_S, 0, "", NULL},
	{"running: waited for", 700, {700, SATURN_COMPANION_RUNNING, 0}, 9999, 0, "", NULL},
	{"not looked up: waited for", 700, {700, SATURN_COMPANION_UNKNOWN, 0}, 9999, 0, "", NULL},
	{"about another job: nothing", 700, {701, SATURN_COMPANION_ENDED, 0}, 9999, 0, "", NULL},
	{"no job: nothing", 0, {0, SATURN_COMPANION_ENDED, 0}, 9999, 0, "", NULL},
};

START_TEST(test_poll)
{
	const struct poll_case *c = &poll_cases[_i];
	saturn_meas_rec_t rec = {c->job, 100, 1, strdup("ddp:2@m/bs8\n"), strdup("0:ddp:2")};
	saturn_bpol_actions_t l = {0};
	char k[16];

	ck_assert_int_eq(saturn_bpol_measure_poll(&rec, &c->c, c->now, 3, &l), c->rc);
	kinds(&l, 0, k, sizeof(k));
	ck_assert_msg(!strcmp(k, c->kinds), "%s: actions %s, expected %s", c->what, k, c->kinds);
	ck_assert_msg(!c->text || has_text(&l, 0, c->text), "%s: no \"%s\"", c->what, c->text);
	ck_assert_uint_eq(rec.job_id, c->rc ? 0 : c->job);
	if (c->rc)
		ck_assert_ptr_null(rec.items);
	ck_assert_str_eq(rec.tried, "ddp:2@m/bs8\n"); /* tried stays */
	ck_assert_int_eq(rec.rounds, 1);
	saturn_bpol_actions_free(&l);
	saturn_meas_rec_free(&rec);
}
END_TEST

START_TEST(test_technique_ok)
{
	ck_assert(saturn_bpol_technique_ok("ddp"));
	ck_assert(saturn_bpol_technique_ok("fsdp-2.1+x_y"));
	ck_assert(!saturn_bpol_technique_ok(""));
	ck_assert(!saturn_bpol_technique_ok(NULL));
	ck_assert(!saturn_bpol_technique_ok("a b"));
	ck_assert(!saturn_bpol_technique_ok("a'b"));
	ck_assert(!saturn_bpol_technique_ok("a;b"));
	{
		char longest[SATURN_TECHNIQUE_NAME_MAX + 2];

		memset(longest, 'a', sizeof(longest));
		longest[SATURN_TECHNIQUE_NAME_MAX] = '\0';
		ck_assert(saturn_bpol_technique_ok(longest));
		longest[SATURN_TECHNIQUE_NAME_MAX] = 'a';
		longest[SATURN_TECHNIQUE_NAME_MAX + 1] = '\0';
		ck_assert(!saturn_bpol_technique_ok(longest));
	}
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void add_tests(TCase *tc)
{
	tcase_add_loop_test(tc, test_profiler, 0, N(prof_cases));
	tcase_add_test(tc, test_profiler_partitions);
	tcase_add_test(tc, test_profiler_two_users);
	tcase_add_test(tc, test_profiler_note);
	tcase_add_loop_test(tc, test_prof_rec, 0, N(prec_cases));
	tcase_add_loop_test(tc, test_meas_rec, 0, N(mrec_cases));
	tcase_add_test(tc, test_meas_rec_long);
	tcase_add_loop_test(tc, test_measure, 0, N(meas_cases));
	tcase_add_loop_test(tc, test_measure_nodes, 0, sizeof(nodes_cases) / sizeof(nodes_cases[0]));
	tcase_add_test(tc, test_measure_then_release);
	tcase_add_test(tc, test_measure_items_cap);
	tcase_add_test(tc, test_measure_two_users);
	tcase_add_test(tc, test_measure_class);
	tcase_add_test(tc, test_measure_identity);
	tcase_add_loop_test(tc, test_class_job_name, 0, N(cjn_cases));
	tcase_add_test(tc, test_class_job_name_long);
	tcase_add_loop_test(tc, test_poll, 0, N(poll_cases));
	tcase_add_test(tc, test_technique_ok);
}

int main(void)
{
	return fx_run_suite("batch_policy", 0, add_tests);
}
