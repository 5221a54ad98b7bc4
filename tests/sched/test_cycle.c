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
	ck_assert_int_eq(f.st.solve_due, 0);
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

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_new_plan);
	tcase_add_test(tc, test_fast_path);
	tcase_add_test(tc, test_slipped_no_fast_path);
	tcase_add_loop_test(tc, test_keep, 0, (int)(sizeof(keep_cases) / sizeof(keep_cases[0])));
	tcase_add_test(tc, test_no_nodes);
	tcase_add_test(tc, test_no_profile);
	tcase_add_test(tc, test_tape);
	tcase_add_test(tc, test_feedback_setting);
	tcase_add_test(tc, test_profset);
}

int main(void)
{
	return fx_run_suite("cycle", 60, add_tests);
}
