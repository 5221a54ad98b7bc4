/* test_cycle.c - saturn_cycle_run (lib/sched/sched_cycle.h): one cycle as
 * one call, from a snapshot and the profiles to the decisions and the plan
 * kept, with no Slurm, file or clock.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "sched_core.h"
#include "sched_cycle.h"
#include "sched_fixture.h"

/* one task signature, 100 batches: 1 GPU at 1 s/batch, 2 GPUs at 0.52 s */
static const char profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-7\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.52, \"status\": \"measured\"}"
	" ] } ] }";

typedef struct fx_cycle {
	saturn_sched_settings_t cfg;
	saturn_profset_t ps;
	saturn_profile_t *prof;
	saturn_cycle_state_t st;
	saturn_cycle_out_t out;
	saturn_cycle_in_t in;
} fx_cycle_t;

static void fx_init(fx_cycle_t *f, const char *params, int with_profile)
{
	saturn_error_t err = {{0}};

	memset(f, 0, sizeof(*f));
	saturn_sched_settings_init(&f->cfg);
	ck_assert_int_eq(saturn_sched_settings_parse(&f->cfg, params, &err), 0);
	if (with_profile) {
		f->prof = saturn_profile_parse(profile_text, strlen(profile_text), &err);
		ck_assert_msg(f->prof != NULL, "%s", err.text);
		ck_assert_int_eq(saturn_profset_add(&f->ps, 0, "sweep", "", f->prof), 0);
	}
	saturn_cycle_state_init(&f->st);
	f->in.profiles = &f->ps;
	f->in.cfg = &f->cfg;
	f->in.requeue_ok = 1;
}

static void fx_fini(fx_cycle_t *f)
{
	saturn_cycle_out_free(&f->out);
	saturn_cycle_state_free(&f->st);
	saturn_profset_free(&f->ps);
	saturn_profile_destroy(f->prof);
	saturn_sched_settings_free(&f->cfg);
}

/* Run one cycle on s (the previous output freed first). */
static int fx_run(fx_cycle_t *f, saturn_snapshot_t *s)
{
	saturn_cycle_out_free(&f->out);
	f->in.snap = s;
	return saturn_cycle_run(&f->in, &f->st, &f->out);
}

/* Whether a log line of the last cycle contains want. */
static int logged(const fx_cycle_t *f, const char *want)
{
	for (int i = 0; i < f->out.nlog; i++)
		if (strstr(f->out.log[i].text, want))
			return 1;
	return 0;
}

/* n held tasks of batch sweep on nodes nodes x gpus GPUs, at now. */
static saturn_snapshot_t *held(double now, int nodes, int gpus, int n)
{
	saturn_snapshot_t *s = fx_snapshot(now, nodes, gpus);

	for (int t = 0; t < n; t++)
		fx_add_held(s, 100, t, "sweep")->submit_time = now - 10;
	return s;
}

static int releases(const saturn_cycle_out_t *out)
{
	int n = 0;

	for (int i = 0; i < out->nd; i++)
		n += out->d[i].release;
	return n;
}

/* A new plan: every held task decided exactly once, the plan kept with its
 * id and the time it was made. */
START_TEST(test_new_plan)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 2, 4, 6);
	int seen[6] = {0};

	fx_init(&f, "saturn_solver_time=0.2", 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.kind, SATURN_CYCLE_NEW);
	ck_assert_str_eq(f.out.plan_id, "p1000-1");
	ck_assert_str_eq(f.st.plan_id, "p1000-1");
	ck_assert_ptr_eq(f.out.plan, f.st.plan);
	ck_assert_double_eq(f.st.made_now, 1000);
	ck_assert_double_eq(f.st.made_makespan, f.st.plan->makespan_s);
	ck_assert_int_eq(f.out.nd, 6);
	for (int i = 0; i < f.out.nd; i++)
		seen[f.out.d[i].job]++;
	for (int t = 0; t < 6; t++)
		ck_assert_int_eq(seen[t], 1);
	/* 8 GPUs, 6 tasks: some start now */
	ck_assert_int_gt(releases(&f.out), 0);
	ck_assert(logged(&f, "plan p1000-1: 6 task(s) on 2 node(s)"));
	{
		/* the gap logged is the plan's against its own bound */
		char gap[64];

		ck_assert(f.st.plan->lower_bound_s > 0);
		snprintf(gap, sizeof(gap), "bound %.0fs, gap %.1f%%", f.st.plan->lower_bound_s,
			 100.0 * (f.st.plan->makespan_s / f.st.plan->lower_bound_s - 1));
		ck_assert_msg(logged(&f, gap), "no \"%s\" logged", gap);
	}
	ck_assert_int_eq(f.st.solve_due, 0);
	/* the snapshot's tasks keep their states: the apply marks releases */
	for (int i = 0; i < s->njobs; i++)
		ck_assert_int_eq(s->jobs[i].state, SATURN_SNAP_HELD);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The carried plan releases a task due now without a solve; the solve
 * follows in the next cycle. */
START_TEST(test_fast_path)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 1, 1, 2);
	int r;

	fx_init(&f, "saturn_solver_time=0.2", 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.kind, SATURN_CYCLE_NEW);
	ck_assert_int_eq(releases(&f.out), 1);
	r = f.out.d[0].release ? f.out.d[0].job : f.out.d[1].job;
	ck_assert_double_eq_tol(f.out.next_due_s, 100 - f.cfg.release_slack_s, 0.5);
	saturn_snapshot_destroy(s);

	/* 100 s later the released task has ended; the other is due */
	s = fx_snapshot(1100, 1, 1);
	fx_add_held(s, 100, 1 - r, "sweep")->submit_time = 990;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.kind, SATURN_CYCLE_CARRIED);
	ck_assert_str_eq(f.out.plan_id, "p1000-1");
	ck_assert_int_eq(f.out.nd, 1);
	ck_assert_int_eq(f.out.d[0].release, 1);
	ck_assert_int_eq(f.st.solve_due, 1);
	ck_assert_double_eq(f.out.next_due_s, 0);
	ck_assert(!logged(&f, "plan p"));

	/* the next cycle solves: nothing held is left to decide */
	s->now = 1101;
	s->jobs[0].state = SATURN_SNAP_RELEASED;
	s->jobs[0].node = 0;
	s->jobs[0].gpus = 1;
	snprintf(s->jobs[0].technique, sizeof(s->jobs[0].technique), "single");
	snprintf(s->jobs[0].pinned, sizeof(s->jobs[0].pinned), "n1");
	s->jobs[0].planned = 1;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.st.solve_due, 0);
	ck_assert_int_eq(f.out.nd, 0);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A carried plan that has slipped (it now ends later than it expected
 * when it was made) releases nothing before a search: the search comes
 * first. The same cycle as test_fast_path's second, with the plan made
 * expecting to end 50 s sooner. */
START_TEST(test_slipped_no_fast_path)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 1, 1, 2);
	int r;

	fx_init(&f, "saturn_solver_time=0.2", 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	r = f.out.d[0].release ? f.out.d[0].job : f.out.d[1].job;
	saturn_snapshot_destroy(s);
	f.st.made_makespan -= 50;
	s = fx_snapshot(1100, 1, 1);
	fx_add_held(s, 100, 1 - r, "sweep")->submit_time = 990;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert(logged(&f, "has slipped"));
	ck_assert_int_eq(f.st.solve_due, 0);
	/* the search's plan decides: the task is released all the same */
	ck_assert_int_eq(f.out.nd, 1);
	ck_assert_int_eq(f.out.d[0].release, 1);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A plan restored from the state file (made_now 0: when it was made is
 * not known) is not judged as slipped: a task due under it is released
 * on the fast path. */
START_TEST(test_restored_not_slipped)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 1, 1, 2);
	int r;

	fx_init(&f, "saturn_solver_time=0.2", 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	r = f.out.d[0].release ? f.out.d[0].job : f.out.d[1].job;
	saturn_snapshot_destroy(s);
	f.st.made_now = 0;
	f.st.made_makespan = 0;
	s = fx_snapshot(1100, 1, 1);
	fx_add_held(s, 100, 1 - r, "sweep")->submit_time = 990;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert(!logged(&f, "has slipped"));
	ck_assert_int_eq(f.out.kind, SATURN_CYCLE_CARRIED);
	ck_assert_int_eq(f.st.solve_due, 1);
	ck_assert_int_eq(f.out.nd, 1);
	ck_assert_int_eq(f.out.d[0].release, 1);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The kept plan's tasks are all gone and another batch's came: nothing
 * to carry, a new plan (and no slip judged on a plan not carried). */
START_TEST(test_nothing_to_carry)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 2, 4, 3);

	fx_init(&f, "saturn_solver_time=0.2", 1);
	ck_assert_int_eq(saturn_profset_add(&f.ps, 0, "other", "", f.prof), 0);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_str_eq(f.st.plan_id, "p1000-1");
	saturn_snapshot_destroy(s);
	s = fx_snapshot(1050, 2, 4);
	for (int t = 0; t < 3; t++)
		fx_add_held(s, 200, t, "other")->submit_time = 1040;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.kind, SATURN_CYCLE_NEW);
	ck_assert_str_eq(f.st.plan_id, "p1050-2");
	ck_assert(!logged(&f, "has slipped"));
	ck_assert_int_eq(f.out.nd, 3);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Table: what one cycle on a state with a kept plan does. */
static const struct keep_case {
	const char *what;
	int requeued_now; /* in.requeued_now */
	int jobs;         /* held tasks in the second snapshot (0: none left) */
	int kind;         /* expected out.kind */
	int plan_kept;    /* a plan kept after it */
	const char *log;  /* expected log text */
	unsigned long seq; /* expected plan_seq after it */
} keep_cases[] = {
	{"same tasks: carried", 0, 6, SATURN_CYCLE_CARRIED, 1, NULL, 1},
	{"a task requeued itself: planned afresh", 1, 6, SATURN_CYCLE_NEW, 1,
	 "1 task(s) requeued themselves: plan p1000-1 not carried", 2},
	{"no task left: plan done", 0, 0, SATURN_CYCLE_NO_PLAN, 0,
	 "no Saturn jobs left: plan p1000-1 done", 1},
};

START_TEST(test_keep)
{
	const struct keep_case *c = &keep_cases[_i];
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 2, 8, 6);

	/* 16 GPUs: every task starts now; nothing is due later */
	fx_init(&f, "saturn_solver_time=0.2", 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.kind, SATURN_CYCLE_NEW);
	saturn_snapshot_destroy(s);
	s = held(1000, 2, 8, c->jobs);
	/* the first plan released them all: held again, as after a re-hold */
	f.in.requeued_now = c->requeued_now;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_msg(c->kind != SATURN_CYCLE_CARRIED || f.out.kind == SATURN_CYCLE_CARRIED ||
			      f.out.kind == SATURN_CYCLE_NEW,
		      "%s", c->what);
	if (c->kind != SATURN_CYCLE_CARRIED)
		ck_assert_msg((int)f.out.kind == c->kind, "%s: kind %d", c->what, f.out.kind);
	ck_assert_msg((f.st.plan != NULL) == c->plan_kept, "%s", c->what);
	if (c->log)
		ck_assert_msg(logged(&f, c->log), "%s: no '%s'", c->what, c->log);
	if (c->kind != SATURN_CYCLE_CARRIED)
		ck_assert_uint_eq(f.st.plan_seq, c->seq);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* No usable node: said when it starts and every 10 minutes, not every
 * cycle. */
START_TEST(test_no_nodes)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 0, 0, 2);

	fx_init(&f, NULL, 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert(logged(&f, "2 Saturn task(s) but no usable node"));
	s->now = 1300;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.nlog, 0);
	s->now = 1700;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert(logged(&f, "no usable node"));
	ck_assert_int_eq(f.out.nd, 0);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Without a profile: first come first served with the users' requests. */
START_TEST(test_no_profile)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 1, 4, 3);

	for (int i = 0; i < 3; i++) {
		s->jobs[i].req_gpus = 2;
		s->jobs[i].time_limit_s = 600;
	}
	fx_init(&f, NULL, 0);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.kind, SATURN_CYCLE_NEW);
	ck_assert_int_eq(f.out.nd, 3);
	ck_assert_int_eq(releases(&f.out), 2);
	for (int i = 0; i < f.out.nd; i++)
		ck_assert_int_eq(f.out.d[i].gpus, 2);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The decisions of a cycle whose planner results were recorded are the
 * same when the tape plays them back; a tape without them is refused by
 * name and the cycle falls back to first come first served. */
START_TEST(test_tape)
{
	saturn_plan_tape_t rec = {.mode = SATURN_TAPE_RECORD};
	saturn_plan_tape_t empty = {.mode = SATURN_TAPE_PLAY};
	fx_cycle_t a, b;
	saturn_snapshot_t *s1 = held(1000, 2, 4, 6), *s2 = held(1000, 2, 4, 6);

	fx_init(&a, "saturn_solver_time=0.2", 1);
	a.in.tape = &rec;
	ck_assert_int_eq(fx_run(&a, s1), 0);
	ck_assert_int_ge(rec.n, 1);
	rec.mode = SATURN_TAPE_PLAY;
	fx_init(&b, "saturn_solver_time=0.2", 1);
	b.in.tape = &rec;
	ck_assert_int_eq(fx_run(&b, s2), 0);
	ck_assert_int_eq(rec.pos, rec.n);
	ck_assert_int_eq(b.out.nd, a.out.nd);
	ck_assert_double_eq(b.st.plan->makespan_s, a.st.plan->makespan_s);
	for (int i = 0; i < a.out.nd; i++) {
		ck_assert_int_eq(b.out.d[i].job, a.out.d[i].job);
		ck_assert_int_eq(b.out.d[i].release, a.out.d[i].release);
		ck_assert_int_eq(b.out.d[i].gpus, a.out.d[i].gpus);
		ck_assert_str_eq(b.out.d[i].node, a.out.d[i].node);
		ck_assert_str_eq(b.out.d[i].technique, a.out.d[i].technique);
		ck_assert_double_eq(b.out.d[i].start_s, a.out.d[i].start_s);
	}
	fx_fini(&b);
	saturn_snapshot_destroy(s2);

	s2 = held(1000, 2, 4, 6);
	fx_init(&b, "saturn_solver_time=0.2", 1);
	b.in.tape = &empty;
	ck_assert_int_eq(fx_run(&b, s2), 0);
	ck_assert(logged(&b, "planner failed (replay: no recorded planner result for call 1"));
	ck_assert_int_eq(b.out.kind, SATURN_CYCLE_NEW);
	fx_fini(&b);
	saturn_snapshot_destroy(s2);

	/* a recorded plan that does not fit the problem (a task's end
	 * moved: its duration no longer matches its option) is refused */
	s2 = held(1000, 2, 4, 6);
	rec.pos = 0;
	rec.plans[0]->assign[0].end_s += 5;
	fx_init(&b, "saturn_solver_time=0.2", 1);
	b.in.tape = &rec;
	ck_assert_int_eq(fx_run(&b, s2), 0);
	ck_assert(logged(&b, "replay: planner call 1: the recorded plan does not fit the problem"));
	fx_fini(&b);
	fx_fini(&a);
	saturn_plan_tape_free(&rec);
	saturn_snapshot_destroy(s1);
	saturn_snapshot_destroy(s2);
}
END_TEST

/* saturn_feedback=no keeps no feedback state; yes creates it. */
START_TEST(test_feedback_setting)
{
	fx_cycle_t f;
	saturn_snapshot_t *s = held(1000, 1, 4, 2);

	fx_init(&f, "saturn_feedback=no", 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_ptr_null(f.st.feedback);
	ck_assert_ptr_null(s->feedback);
	fx_fini(&f);
	fx_init(&f, NULL, 1);
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_ptr_nonnull(f.st.feedback);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The profile set: one entry per (uid, batch, class), the batch's own and
 * its class profiles apart. */
START_TEST(test_profset)
{
	saturn_profset_t ps = {0};
	saturn_profile_t a = {0}, b = {0};
	char longname[SATURN_BATCH_NAME_MAX + 2];

	ck_assert_int_eq(saturn_profset_add(&ps, 5, "x", NULL, &a), 0);
	ck_assert_int_eq(saturn_profset_add(&ps, 5, "x", "fast", &b), 0);
	ck_assert_int_eq(saturn_profset_add(&ps, 6, "x", "", NULL), 0);
	ck_assert_ptr_eq(saturn_profset_lookup("x", 5, &ps), &a);
	ck_assert_ptr_eq(saturn_profset_lookup_class("x", 5, "fast", &ps), &b);
	ck_assert_ptr_null(saturn_profset_lookup_class("x", 5, "", &ps));
	ck_assert_ptr_null(saturn_profset_lookup("x", 6, &ps));
	ck_assert_ptr_null(saturn_profset_lookup("x", 7, &ps));
	ck_assert_int_eq(saturn_profset_add(&ps, 5, "x", "", &b), 0);
	ck_assert_ptr_eq(saturn_profset_lookup("x", 5, &ps), &b);
	ck_assert_int_eq(ps.n, 3);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(saturn_profset_add(&ps, 5, longname, NULL, &a), -1);
	ck_assert_int_eq(ps.n, 3);
	saturn_profset_free(&ps);
}
END_TEST

/* --- measurement of predicted options (saturn_measure_predicted) ---- */

/* ddp on 2 GPUs predicted, and so fast that the plan runs both tasks on it
 * one after the other (60 s against 100 s side by side on 1 GPU each) */
static const char predicted_text[] =
    "{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
    " \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-7\", \"batches\": 100,"
    " \"options\": ["
    "  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
    "  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.3, \"status\": \"predicted\"}"
    " ] } ] }";

#define MEAS_PARAMS "saturn_solver_time=0.2,saturn_profiler=/usr/bin/saturn-profile"

static void fx_predicted(fx_cycle_t *f, const char *params)
{
	saturn_error_t err = {{0}};

	fx_init(f, params, 0);
	f->prof = saturn_profile_parse(predicted_text, strlen(predicted_text), &err);
	ck_assert_msg(f->prof != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_profset_add(&f->ps, 0, "sweep", "", f->prof), 0);
}

static const saturn_decision_t *decision_of(const saturn_cycle_out_t *out, int job)
{
	for (int i = 0; i < out->nd; i++)
		if (out->d[i].job == job)
			return &out->d[i];
	return NULL;
}

static const struct meas_cycle_case {
	const char *what;
	const char *params;
	int active;	       /* the user's companion jobs already pending or running */
	const char *rec;       /* the batch's record given (NULL: none) */
	int nmeasure;	       /* jobs asked for */
	const char *reason;    /* task 0's reason (released when NULL) */
	const char *rec_after; /* the record the cycle gives (NULL: none) */
	const char *log;       /* in a log line */
} meas_cycle_cases[] = {
    {"a task due on a predicted option: held, a job asked for, the option tried", MEAS_PARAMS, 0,
     NULL, 1, "saturn: measuring predicted ddp on 2 GPUs", "0 100 1 -\nddp:2@m/bs8\n", NULL},
    {"the same with an empty record of another submission: reset, then the same", MEAS_PARAMS, 0,
     "0 99 3 -\nddp:2@m/bs8\n", 1, "saturn: measuring predicted ddp on 2 GPUs",
     "0 100 1 -\nddp:2@m/bs8\n", NULL},
    {"the user at the companion limit: held waiting, no job, the record as it was",
     MEAS_PARAMS ",saturn_companion_jobs=2", 2, NULL, 0,
     "saturn: waiting: 2 profiler or measurement job(s) of this user already "
     "(saturn_companion_jobs=2)",
     NULL, "no measurement job now"},
    {"the option tried already (no job ran it): released on the prediction", MEAS_PARAMS, 0,
     "0 100 1 -\nddp:2@m/bs8\n", 0, NULL, NULL, "relies on the predicted ddp"},
    {"a measurement job running: held for it, nothing asked", MEAS_PARAMS, 1,
     "700 100 1 0:ddp:2\nddp:2@m/bs8\n", 0, "saturn: measuring predicted ddp on 2 GPUs (job 700)",
     NULL, NULL},
    {"saturn_measure_predicted=no: released on the prediction",
     MEAS_PARAMS ",saturn_measure_predicted=no", 0, NULL, 0, NULL, NULL, NULL},
    {"no saturn_profiler: released on the prediction", "saturn_solver_time=0.2", 0, NULL, 0, NULL,
     NULL, NULL},
};

/* The measurement veto is the cycle's: the task due on a predicted option
 * is held in the decisions the cycle returns, the job is an output, the
 * record comes out changed; the limits and the records given decide. */
START_TEST(test_measure_case)
{
	const struct meas_cycle_case *c = &meas_cycle_cases[_i];
	saturn_measset_t ms = {0};
	saturn_uidtab_t comp = {0};
	saturn_snapshot_t *s = held(1000, 1, 2, 2);
	const saturn_decision_t *d0;
	fx_cycle_t f;

	fx_predicted(&f, c->params);
	if (c->rec) {
		saturn_meas_rec_t r;

		ck_assert_int_eq(saturn_meas_rec_parse(c->rec, &r), 0);
		ck_assert_int_ge(saturn_measset_put(&ms, 0, "sweep", "", &r), 0);
	}
	if (c->active)
		ck_assert_int_eq(saturn_uidtab_add(&comp, 0, c->active), 0);
	f.in.measure = &ms;
	f.in.companions = &comp;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_msg((d0 = decision_of(&f.out, 0)) != NULL, "%s: task 0 not decided", c->what);
	ck_assert_str_eq(d0->technique, "ddp");
	if (c->reason) {
		ck_assert_msg(!d0->release, "%s: task 0 released", c->what);
		ck_assert_str_eq(d0->reason, c->reason);
	} else {
		ck_assert_msg(d0->release, "%s: task 0 held: %s", c->what, d0->reason);
	}
	ck_assert_int_eq(f.out.nmeasure, c->nmeasure);
	if (c->nmeasure) {
		const saturn_cycle_measure_t *m = &f.out.measure[0];

		ck_assert_str_eq(m->batch, "sweep");
		ck_assert_str_eq(m->klass, "");
		ck_assert_str_eq(m->list, "0:ddp:2");
		ck_assert_int_eq(m->gpus, 2);
		ck_assert_int_eq(f.out.d[m->tasks[0]].job, 0);
		ck_assert_int_eq(m->owner, 0);
	}
	if (c->rec_after) {
		char *text;

		ck_assert_int_eq(f.out.meas_records.n, 1);
		text = saturn_meas_rec_format(&f.out.meas_records.e[0].rec);
		ck_assert_str_eq(text, c->rec_after);
		free(text);
	} else {
		ck_assert_int_eq(f.out.meas_records.n, 0);
	}
	if (c->log)
		ck_assert_msg(logged(&f, c->log), "%s: no log line with \"%s\"", c->what, c->log);
	for (int i = 0; i < f.out.nlog; i++)
		ck_assert_msg(f.out.log[i].level != SATURN_CYCLE_ERROR, "%s: error logged: %s",
			      c->what, f.out.log[i].text);
	/* the inputs are not changed */
	if (c->rec) {
		char *text = saturn_meas_rec_format(&ms.e[0].rec);

		ck_assert_str_eq(text, c->rec);
		free(text);
	}
	ck_assert_int_eq((int)saturn_uidtab_get(&comp, 0), c->active);
	saturn_measset_free(&ms);
	saturn_uidtab_free(&comp);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The user's companion jobs count those the cycle itself asks for: with
 * saturn_companion_jobs=1 and two of the user's batches due on predicted
 * options in one cycle, one job is asked for and the other batch waits. */
START_TEST(test_measure_limit_in_cycle)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 1, 4);
	int waiting = 0;
	fx_cycle_t f;

	fx_predicted(&f, MEAS_PARAMS ",saturn_companion_jobs=1");
	ck_assert_int_eq(saturn_profset_add(&f.ps, 0, "other", "", f.prof), 0);
	fx_add_held(s, 100, 0, "sweep")->submit_time = 990;
	fx_add_held(s, 200, 0, "other")->submit_time = 990;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.nd, 2);
	ck_assert_int_eq(f.out.nmeasure, 1);
	ck_assert_int_eq(f.out.meas_records.n, 1);
	ck_assert_str_eq(f.out.meas_records.e[0].batch, f.out.measure[0].batch);
	for (int i = 0; i < f.out.nd; i++) {
		ck_assert(!f.out.d[i].release);
		waiting += strstr(f.out.d[i].reason, "saturn: waiting: 1 profiler or measurement job") != NULL;
	}
	ck_assert_int_eq(waiting, 1);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The submission's outcome: with a job, the held task's reason names it
 * and the record keeps the job; without one, the task stays held this
 * cycle and the record says no job (the next cycle relies on the
 * prediction: test_measure_case's fourth row). */
START_TEST(test_measure_submitted)
{
	for (int ok = 0; ok < 2; ok++) {
		saturn_snapshot_t *s = held(1000, 1, 2, 2);
		saturn_bpol_actions_t acts = {0};
		saturn_meas_rec_t rec;
		int logs = 0, saves = 0;
		fx_cycle_t f;

		fx_predicted(&f, MEAS_PARAMS);
		ck_assert_int_eq(fx_run(&f, s), 0);
		ck_assert_int_eq(f.out.nmeasure, 1);
		ck_assert_int_eq(saturn_meas_rec_copy(&rec, &f.out.meas_records.e[0].rec), 0);
		ck_assert_int_eq(
		    saturn_cycle_measure_submitted(&f.out, 0, ok ? 700 : 0, &rec, &acts), 0);
		ck_assert(!decision_of(&f.out, 0)->release);
		ck_assert_str_eq(decision_of(&f.out, 0)->reason,
				 ok ? "saturn: measuring predicted ddp on 2 GPUs (job 700)"
				    : "saturn: measuring predicted ddp on 2 GPUs");
		ck_assert_uint_eq(rec.job_id, ok ? 700 : 0);
		if (ok)
			ck_assert_str_eq(rec.items, "0:ddp:2");
		for (int i = 0; i < acts.n; i++) {
			logs += acts.a[i].kind == SATURN_BPOL_LOG;
			saves += acts.a[i].kind == SATURN_BPOL_SAVE;
			ck_assert(acts.a[i].kind == SATURN_BPOL_LOG ||
				  acts.a[i].kind == SATURN_BPOL_SAVE);
		}
		ck_assert_int_eq(logs, 1);
		ck_assert_int_eq(saves, 1);
		saturn_bpol_actions_free(&acts);
		saturn_meas_rec_free(&rec);
		fx_fini(&f);
		saturn_snapshot_destroy(s);
	}
}
END_TEST

/* --- profiler jobs (saturn_profiler) ---------------------------------- */

static const struct prof_cycle_case {
	const char *what;
	const char *params;
	int exists;	       /* the batch's profile file is there */
	const char *rec;       /* its record ("JOBID ARRAYID[ fallback]"), NULL: none */
	int job_state;	       /* its job's state (saturn_companion_state_t) */
	const char *klass;     /* a class profiler job of the batch, NULL: none */
	int active;	       /* the user's companion jobs already */
	int nprofilers;	       /* jobs asked for */
	const char *hold;      /* every task's hold reason (NULL: planned) */
	const char *rec_after; /* the record the cycle gives (NULL: none) */
	const char *reason;    /* a held decision's reason starts so (NULL: not checked) */
	const char *log;
} prof_cycle_cases[] = {
    {"no profile, no job: a job asked for, the tasks wait for it out of the cycle",
     "saturn_profiler=/usr/bin/saturn-profile", 0, NULL, 0, NULL, 0, 1, "saturn: profiling",
     "0 100\n", NULL, NULL},
    {"its job pending: the tasks wait", "saturn_profiler=/usr/bin/saturn-profile", 0, "700 100\n",
     SATURN_COMPANION_PENDING, NULL, 1, 0, "saturn: profiling (job 700)", NULL, NULL,
     "waiting for profiler job 700"},
    {"its job ended without a profile: the users' requests, with a note",
     "saturn_profiler=/usr/bin/saturn-profile", 0, "700 100\n", SATURN_COMPANION_ENDED, NULL, 0, 0,
     NULL, "700 100 fallback\n", "saturn: profiler job 700 failed, users' requests; ",
     "ended without a usable profile"},
    {"the user at saturn_companion_jobs: the tasks wait, no job",
     "saturn_profiler=/usr/bin/saturn-profile,saturn_companion_jobs=1", 0, NULL, 0, NULL, 1, 0,
     "saturn: waiting: 1 profiler or measurement job(s) of this user already "
     "(saturn_companion_jobs=1)",
     "0 100\n", NULL, NULL},
    {"a profile: planned from it", "saturn_profiler=/usr/bin/saturn-profile", 1, NULL, 0, NULL, 0,
     0, NULL, NULL, NULL, NULL},
    {"a profile and a class job running: the tasks wait for it",
     "saturn_profiler=/usr/bin/saturn-profile", 1, NULL, 0, "fast", 1, 0,
     "saturn: profiling class fast (job 800)", NULL, NULL,
     "waiting for profiler job 800 of class fast"},
    {"a profile, its class job ended: planned", "saturn_profiler=/usr/bin/saturn-profile", 1, NULL,
     0, "ended", 0, 0, NULL, NULL, NULL, NULL},
    {"fallen back, a class job still running: planned from the requests, not waiting for it",
     "saturn_profiler=/usr/bin/saturn-profile", 0, "700 100 fallback\n", SATURN_COMPANION_ENDED,
     "fast", 1, 0, NULL, NULL, "saturn: profiler job 700 failed, users' requests; ", NULL},
    {"no saturn_profiler: planned as asked", NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL},
    {"the record of an older submission, the user at the limit: profiled anew, waiting",
     "saturn_profiler=/usr/bin/saturn-profile,saturn_companion_jobs=1", 0, "0 99\n", 0, NULL, 1, 0,
     "saturn: waiting: 1 profiler or measurement job(s) of this user already "
     "(saturn_companion_jobs=1)",
     "0 100\n", NULL, "not this submission: profiling anew"},
};

/* The profiler step is the cycle's: the waiting tasks leave its snapshot
 * with their reasons, the job to submit and the record are outputs, a
 * batch that fell back is planned with its note. 3 tasks of batch sweep
 * (submission 100), 8 GPUs, 20 cycles of 10 batches in between. */
START_TEST(test_profiler_case)
{
	const struct prof_cycle_case *c = &prof_cycle_cases[_i];
	saturn_profstate_t facts = {0};
	saturn_profstate_entry_t e;
	saturn_uidtab_t comp = {0};
	saturn_snapshot_t *s = held(1000, 1, 2, 3);
	fx_cycle_t f;

	fx_init(&f, c->params, c->exists);
	memset(&e, 0, sizeof(e));
	snprintf(e.batch, sizeof(e.batch), "sweep");
	e.exists = c->exists;
	if (c->rec)
		ck_assert_int_eq(saturn_prof_rec_parse(c->rec, &e.rec), 0);
	e.job.job_id = e.rec.job_id;
	e.job.state = (saturn_companion_state_t)c->job_state;
	if (c->klass) {
		int ended = !strcmp(c->klass, "ended");

		e.nclass = 1;
		snprintf(e.cls[0].klass, sizeof(e.cls[0].klass), "%s", c->klass);
		e.cls[0].job.job_id = 800;
		e.cls[0].job.state = ended ? SATURN_COMPANION_ENDED : SATURN_COMPANION_RUNNING;
	}
	ck_assert_int_eq(saturn_profstate_put(&facts, &e), 0);
	if (c->active)
		ck_assert_int_eq(saturn_uidtab_add(&comp, 0, c->active), 0);
	f.in.profiler = &facts;
	f.in.companions = &comp;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.nprofilers, c->nprofilers);
	if (c->nprofilers) {
		ck_assert_str_eq(f.out.profilers[0].batch, "sweep");
		ck_assert_str_eq(f.out.profilers[0].task_ids, "0,1,2");
		ck_assert_uint_eq(f.out.profilers[0].owner, 100);
		ck_assert_int_eq(f.out.profilers[0].gpus, 2);
	}
	if (c->hold) {
		/* every task waits, out of the cycle: nothing planned */
		ck_assert_int_eq(f.out.nprof_holds, 3);
		ck_assert_int_eq(s->njobs, 0);
		ck_assert_int_eq(f.out.nd, 0);
		for (int i = 0; i < 3; i++) {
			ck_assert_str_eq(f.out.prof_holds[i].reason, c->hold);
			ck_assert_int_eq(f.out.prof_holds[i].profiler, c->nprofilers ? 0 : -1);
			ck_assert_int_eq(f.out.prof_holds[i].job.task_id, i);
		}
	} else {
		ck_assert_int_eq(f.out.nprof_holds, 0);
		ck_assert_int_eq(f.out.nd, 3);
	}
	if (c->rec_after) {
		char buf[64];

		ck_assert_int_eq(f.out.nprof_records, 1);
		ck_assert_str_eq(
		    saturn_prof_rec_format(&f.out.prof_records[0].rec, buf, sizeof(buf)),
		    c->rec_after);
	} else {
		ck_assert_int_eq(f.out.nprof_records, 0);
	}
	if (c->reason) {
		int held_n = 0;

		for (int i = 0; i < f.out.nd; i++)
			if (!f.out.d[i].release) {
				held_n++;
				ck_assert_msg(
				    !strncmp(f.out.d[i].reason, c->reason, strlen(c->reason)),
				    "%s: reason %s", c->what, f.out.d[i].reason);
			}
		ck_assert_int_gt(held_n, 0);
	}
	if (c->log)
		ck_assert_msg(logged(&f, c->log), "%s: no log line with \"%s\"", c->what, c->log);
	for (int i = 0; i < f.out.nlog; i++)
		ck_assert_msg(f.out.log[i].level != SATURN_CYCLE_ERROR ||
				  strstr(f.out.log[i].text, "ended without"),
			      "%s: error logged: %s", c->what, f.out.log[i].text);
	/* a note only before the held tasks' reasons of a batch that fell
	 * back, once, and every held reason still says whose it is */
	for (int i = 0; i < f.out.nd; i++) {
		const char *r = f.out.d[i].reason;

		if (f.out.d[i].release) {
			ck_assert_msg(!strstr(r, "profiler job"), "%s: released with %s", c->what, r);
			continue;
		}
		ck_assert_msg(!strncmp(r, "saturn: ", 8), "%s: reason %s", c->what, r);
		ck_assert_msg(!strstr(r, "; saturn: "), "%s: reason %s", c->what, r);
		if (!c->reason)
			ck_assert_msg(!strstr(r, "profiler job"), "%s: reason %s", c->what, r);
	}
	saturn_profstate_free(&facts);
	saturn_uidtab_free(&comp);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* The user's companion jobs count the profiler jobs this cycle asks for:
 * with saturn_companion_jobs=1, of three batches without a profile one
 * gets a job and two wait. */
START_TEST(test_profiler_limit_in_cycle)
{
	saturn_snapshot_t *s = fx_snapshot(1000, 1, 4);
	saturn_profstate_t facts = {0};
	const char *names[] = {"b1", "b2", "b3"};
	int waiting = 0;
	fx_cycle_t f;

	fx_init(&f, "saturn_profiler=/usr/bin/saturn-profile,saturn_companion_jobs=1", 0);
	for (int b = 0; b < 3; b++) {
		saturn_profstate_entry_t e = {0};

		snprintf(e.batch, sizeof(e.batch), "%s", names[b]);
		ck_assert_int_eq(saturn_profstate_put(&facts, &e), 0);
		fx_add_held(s, 100 + b, 0, names[b]);
	}
	f.in.profiler = &facts;
	ck_assert_int_eq(fx_run(&f, s), 0);
	ck_assert_int_eq(f.out.nprofilers, 1);
	ck_assert_int_eq(f.out.nprof_holds, 3);
	for (int i = 0; i < 3; i++)
		waiting +=
		    strstr(f.out.prof_holds[i].reason, "saturn: waiting: 1 profiler") != NULL;
	ck_assert_int_eq(waiting, 2);
	saturn_profstate_free(&facts);
	fx_fini(&f);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Every task waits for a profiler job: the plan kept stays (nothing
 * planned, nothing dropped); the submission's outcome names the job in
 * the reasons, or falls back. */
START_TEST(test_profiler_outcome)
{
	for (int ok = 0; ok < 2; ok++) {
		saturn_snapshot_t *s = held(1000, 1, 2, 3);
		saturn_bpol_actions_t acts = {0};
		saturn_profstate_t facts = {0};
		saturn_profstate_entry_t e;
		saturn_prof_rec_t rec;
		fx_cycle_t f;
		int saves = 0, logs = 0;

		/* a plan of another batch kept from before */
		fx_init(&f, "saturn_profiler=/usr/bin/saturn-profile,saturn_solver_time=0.2", 1);
		ck_assert_int_eq(
		    saturn_profstate_put(
			&facts, &(saturn_profstate_entry_t){.batch = "other", .exists = 1}),
		    0);
		ck_assert_int_eq(fx_run(&f, s), 0);
		ck_assert_ptr_nonnull(f.st.plan);
		saturn_snapshot_destroy(s);
		s = fx_snapshot(1010, 1, 2);
		for (int t = 0; t < 3; t++)
			fx_add_held(s, 300, t, "fresh");
		memset(&e, 0, sizeof(e));
		snprintf(e.batch, sizeof(e.batch), "fresh");
		ck_assert_int_eq(saturn_profstate_put(&facts, &e), 0);
		f.in.profiler = &facts;
		ck_assert_int_eq(fx_run(&f, s), 0);
		ck_assert_int_eq(f.out.kind, SATURN_CYCLE_NO_PLAN);
		ck_assert_ptr_nonnull(f.st.plan);
		ck_assert_str_eq(f.st.plan_id, "p1000-1");
		ck_assert_int_eq(f.out.nprofilers, 1);
		rec = f.out.prof_records[0].rec;
		ck_assert_int_eq(
		    saturn_cycle_profiler_submitted(&f.out, 0, ok ? 900 : 0, &rec, &acts), 0);
		for (int i = 0; i < 3; i++)
			ck_assert_str_eq(f.out.prof_holds[i].reason,
					 ok ? "saturn: profiling (job 900)" : "saturn: profiling");
		ck_assert_uint_eq(rec.job_id, ok ? 900 : 0);
		ck_assert_int_eq(rec.fell_back, !ok);
		for (int i = 0; i < acts.n; i++) {
			ck_assert(acts.a[i].kind == SATURN_BPOL_LOG || acts.a[i].kind == SATURN_BPOL_SAVE);
			saves += acts.a[i].kind == SATURN_BPOL_SAVE;
			logs += acts.a[i].kind == SATURN_BPOL_LOG;
		}
		ck_assert_int_eq(saves, ok);
		ck_assert_int_eq(logs, 1);
		saturn_bpol_actions_free(&acts);
		saturn_profstate_free(&facts);
		fx_fini(&f);
		saturn_snapshot_destroy(s);
	}
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_new_plan);
	tcase_add_test(tc, test_fast_path);
	tcase_add_test(tc, test_slipped_no_fast_path);
	tcase_add_test(tc, test_restored_not_slipped);
	tcase_add_test(tc, test_nothing_to_carry);
	tcase_add_loop_test(tc, test_keep, 0, (int)(sizeof(keep_cases) / sizeof(keep_cases[0])));
	tcase_add_test(tc, test_no_nodes);
	tcase_add_test(tc, test_no_profile);
	tcase_add_test(tc, test_tape);
	tcase_add_test(tc, test_feedback_setting);
	tcase_add_test(tc, test_profset);
	tcase_add_loop_test(tc, test_measure_case, 0,
			    (int)(sizeof(meas_cycle_cases) / sizeof(meas_cycle_cases[0])));
	tcase_add_test(tc, test_measure_limit_in_cycle);
	tcase_add_test(tc, test_measure_submitted);
	tcase_add_loop_test(tc, test_profiler_case, 0,
			    (int)(sizeof(prof_cycle_cases) / sizeof(prof_cycle_cases[0])));
	tcase_add_test(tc, test_profiler_limit_in_cycle);
	tcase_add_test(tc, test_profiler_outcome);
}

int main(void)
{
	return fx_run_suite("cycle", 60, add_tests);
}
