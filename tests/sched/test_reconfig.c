/* test_reconfig.c - lib/sched/reconfig.c: settings, which running tasks may be
 * restarted, the problem with them unpinned, and the decision on the
 * typical wins (the tail of a batch, a task much slower than profiled, a
 * lost node) and the cases where nothing may be restarted. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feedback.h"
#include "multiuser.h"
#include "planner.h"
#include "profile.h"
#include "reconfig.h"
#include "sched_core.h"

#include "sched_fixture.h"

/* A model that scales sublinearly past 4 GPUs; 2000 batches a task. */
static const char profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-5\", \"batches\": 2000,"
	" \"options\": ["
	"  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.55, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.3, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 8, \"sec_per_batch\": 0.25, \"status\": \"measured\"} ] } ] }";

static const saturn_profile_t *lookup_one(const char *batch, long uid, void *arg)
{
	(void)uid;
	return strcmp(batch, "sweep") ? NULL : arg;
}

static const struct settings_case {
	const char *params;
	int bad;
	int on, max;
	double margin, ckpt, startup;
	const char *expect;
} settings_cases[] = {
	{NULL, 0, 0, 2, 60, 30, 30, NULL},
	{"saturn_interval=5,saturn_reconfigure=yes,saturn_reconfigure_margin=10", 0, 1, 2, 10, 30, 30, NULL},
	{"saturn_reconfigure_max=0,saturn_reconfigure_checkpoint=5,saturn_reconfigure_startup=1", 0, 0, 0,
	 60, 5, 1, NULL},
	{"saturn_reconfigure=maybe", 1, 0, 2, 60, 30, 30, "saturn_reconfigure=maybe: must be yes or no"},
	{"saturn_reconfigure_max=1.5", 1, 0, 2, 60, 30, 30, "whole number"},
	{"saturn_reconfigure_margin=-1,saturn_reconfigure_bogus=1", 2, 0, 2, 60, 30, 30,
	 "saturn_reconfigure_margin=-1: must be seconds"},
};

START_TEST(test_settings)
{
	const struct settings_case *c = &settings_cases[_i];
	saturn_reconfig_settings_t rs, dflt;
	saturn_sched_settings_t ss;
	saturn_error_t err = {{0}};

	/* one parser for every key: the reconfiguration keys land in .reconfig */
	saturn_sched_settings_init(&ss);
	ck_assert_int_eq(saturn_sched_settings_parse(&ss, c->params, &err), c->bad);
	rs = ss.reconfig;
	ck_assert_int_eq(rs.default_on, c->on);
	ck_assert_int_eq(rs.max_restarts, c->max);
	ck_assert_double_eq(rs.margin_s, c->margin);
	ck_assert_double_eq(rs.checkpoint_s, c->ckpt);
	ck_assert_double_eq(rs.startup_s, c->startup);
	ck_assert_double_eq(saturn_reconfig_restart_cost(&rs), c->ckpt + 121 + c->startup);
	if (c->expect)
		ck_assert_msg(strstr(err.text, c->expect), "error '%s' lacks '%s'", err.text, c->expect);
	saturn_sched_settings_free(&ss);
	/* saturn_reconfig_settings_init: the same defaults */
	saturn_reconfig_settings_init(&dflt);
	ck_assert_int_eq(dflt.default_on, 0);
	ck_assert_int_eq(dflt.max_restarts, 2);
	ck_assert_double_eq(dflt.margin_s, 60);
	ck_assert_double_eq(saturn_reconfig_restart_cost(&dflt), 30 + 121 + 30);
}
END_TEST

/* A running task of batch sweep, opted in, requeue-able, under
 * saturn-run (done batches reported). */
static saturn_snap_job_t *running(saturn_snapshot_t *s, int task, int node, const char *tech,
				  int gpus, uint64_t mask, double done, double left)
{
	saturn_snap_job_t *j = saturn_snapshot_add_job(s);

	j->job_id = 100 + task;
	j->array_job_id = 7;
	j->task_id = task;
	snprintf(j->batch, sizeof(j->batch), "sweep");
	j->state = SATURN_SNAP_RUNNING;
	j->submit_time = 100;
	j->start_time = s->now - 100;
	j->node = node;
	j->gpu_mask = mask;
	snprintf(j->technique, sizeof(j->technique), "%s", tech);
	j->gpus = gpus;
	j->batches_done = done;
	j->batches_left = left;
	j->progress_updated = s->now;
	j->reconfigure = 1;
	j->requeue = 1;
	return j;
}

static saturn_snap_job_t *held(saturn_snapshot_t *s, int task)
{
	saturn_snap_job_t *j = fx_add_held(s, 7, task, "sweep");

	j->submit_time = 100;
	return j;
}

typedef struct world {
	saturn_profile_t *pr;
	saturn_sched_build_t b;
	saturn_plan_t *plan;
	saturn_reconfig_settings_t rs;
	saturn_planner_opts_t opts;
	saturn_reconfig_result_t r;
} world_t;

/* Build s, plan it with the planner (the cycle's plan), decide. */
static int decide(world_t *w, saturn_snapshot_t *s, double min_gain)
{
	saturn_error_t err = {{0}};
	int n;

	w->pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	ck_assert_msg(w->pr != NULL, "%s", err.text);
	ck_assert_msg(saturn_sched_build(s, lookup_one, w->pr, &w->b, &err) == 0, "%s", err.text);
	w->opts = fx_opts(0.5);
	w->plan = saturn_planner_solve(w->b.problem, &w->opts, &err);
	ck_assert_msg(w->plan != NULL, "%s", err.text);
	n = saturn_reconfig_decide(s, &w->b, w->plan, lookup_one, w->pr, &w->rs, min_gain, &w->opts,
				   &w->r, &err);
	ck_assert_msg(n >= 0, "%s", err.text);
	ck_assert_int_eq(n, w->r.nchoices);
	return n;
}

static void world_free(world_t *w, saturn_snapshot_t *s)
{
	saturn_reconfig_result_free(&w->r);
	saturn_plan_destroy(w->plan);
	saturn_sched_build_free(&w->b);
	saturn_profile_destroy(w->pr);
	saturn_snapshot_destroy(s);
}

/* The tail of a batch: the last task runs alone on 1 GPU of an idle
 * 8-GPU node; restarted on 8 it ends ~500 s sooner despite the restart. */
START_TEST(test_tail)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 1, 8);
	world_t w = {0};

	saturn_reconfig_settings_init(&w.rs);
	running(s, 2, 0, "single", 1, 0x1, 1100, 900);
	ck_assert_int_eq(decide(&w, s, 0.05), 1);
	ck_assert_int_eq(w.r.ncandidates, 1);
	ck_assert_int_eq(w.r.choices[0].job, 0);
	ck_assert_int_eq(w.r.choices[0].gpus, 8);
	ck_assert_str_eq(w.r.choices[0].technique, "ddp");
	ck_assert_str_eq(w.r.choices[0].node, "n1");
	/* 900 s now; 30 + 121 + 30 s restart + 900 x 0.25 s after */
	ck_assert_double_eq_tol(w.r.old_makespan_s, 900, 1);
	ck_assert_double_eq_tol(w.r.new_makespan_s, 181 + 225, 1);
	ck_assert_double_eq_tol(w.r.gain_s, 900 - 406, 1);
	ck_assert_double_eq_tol(w.r.choices[0].start_s, 181, 1e-6);
	ck_assert_double_eq_tol(w.r.choices[0].old_end_s, 900, 1);
	world_free(&w, s);
}
END_TEST

/* A task much slower than profiled: ddp on 4 GPUs at 1.2 s a batch
 * instead of 0.3; the profile's other options are not known to be slow. */
START_TEST(test_slow)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 1, 8);
	saturn_snap_job_t *j;
	world_t w = {0};

	saturn_reconfig_settings_init(&w.rs);
	j = running(s, 0, 0, "ddp", 4, 0xf, 1500, 500);
	j->obs_spb = 1.2;
	ck_assert_int_eq(decide(&w, s, 0.05), 1);
	ck_assert_msg(!(w.r.choices[0].gpus == 4 && !strcmp(w.r.choices[0].technique, "ddp")),
		      "restarted with what runs slowly");
	ck_assert_msg(w.r.old_makespan_s > 500, "old makespan %.0f", w.r.old_makespan_s);
	ck_assert_double_eq_tol(w.r.new_makespan_s, 181 + 500 * 0.25, 1);
	world_free(&w, s);
}
END_TEST

/* A lost node: its task came back held; the other task holds all 8 GPUs
 * of the one node left, so the held one waits for it. Both on 4 GPUs at
 * once end sooner (ddp scales poorly from 4 to 8). */
START_TEST(test_lost_node)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 1, 8);
	world_t w = {0};

	saturn_reconfig_settings_init(&w.rs);
	running(s, 0, 0, "ddp", 8, 0xff, 0, 2000);
	held(s, 1)->requeued = 1;
	ck_assert_int_eq(decide(&w, s, 0.05), 1);
	ck_assert_int_eq(w.r.choices[0].job, 0);
	ck_assert_int_eq(w.r.choices[0].gpus, 4);
	/* it ran 100 s of its 500: 400 s left, then the other 500 s */
	ck_assert_double_eq_tol(w.r.old_makespan_s, 900, 1);
	ck_assert_double_eq_tol(w.r.new_makespan_s, 181 + 600, 1);
	ck_assert_double_eq_tol(w.r.gain_s, 900 - 781, 1);
	world_free(&w, s);
}
END_TEST

/* Nothing to gain: the task already runs with its best option. */
START_TEST(test_already_best)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 1, 8);
	world_t w = {0};

	saturn_reconfig_settings_init(&w.rs);
	running(s, 0, 0, "ddp", 8, 0xff, 1100, 900);
	ck_assert_int_eq(decide(&w, s, 0.05), 0);
	ck_assert_int_eq(w.r.ncandidates, 1);
	ck_assert_ptr_null(w.r.choices);
	ck_assert_msg(strstr(w.r.why, "no plan can gain enough: bound"), "why: %s", w.r.why);
	ck_assert_double_eq(w.r.new_makespan_s, 0); /* not solved */
	world_free(&w, s);
}
END_TEST

/* The tail case, with one thing that forbids or outweighs the restart. */
static const struct deny_case {
	const char *what;
	int reconfigure, requeue, restarts, default_on;
	double done, margin, min_gain;
	int choices;
	const char *why;
} deny_cases[] = {
	{"opted in", 1, 1, 0, 0, 1100, 60, 0.05, 1, NULL},
	{"not opted in, default no", 0, 1, 0, 0, 1100, 60, 0.05, 0, "qualifies"},
	{"not opted in, default yes", 0, 1, 0, 1, 1100, 60, 0.05, 1, NULL},
	{"opted out, default yes", -1, 1, 0, 1, 1100, 60, 0.05, 0, "qualifies"},
	{"not requeue-able", 1, 0, 0, 0, 1100, 60, 0.05, 0, "qualifies"},
	{"restarted once", 1, 1, 1, 0, 1100, 60, 0.05, 1, NULL},
	{"restarted twice", 1, 1, 2, 0, 1100, 60, 0.05, 0, "qualifies"},
	{"no progress report", 1, 1, 0, 0, -1, 60, 0.05, 0, "qualifies"},
	{"gain below the margin", 1, 1, 0, 0, 1100, 600, 0.05, 0, "saturn_reconfigure_margin 600s"},
	{"gain below min_gain", 1, 1, 0, 0, 1100, 60, 0.6, 0, "saturn_min_gain 60%"},
};

START_TEST(test_deny)
{
	const struct deny_case *c = &deny_cases[_i];
	saturn_snapshot_t *s = fx_snapshot(10000, 1, 8);
	saturn_snap_job_t *j;
	world_t w = {0};

	saturn_reconfig_settings_init(&w.rs);
	w.rs.margin_s = c->margin;
	w.rs.default_on = c->default_on;
	j = running(s, 2, 0, "single", 1, 0x1, c->done, 900);
	j->reconfigure = c->reconfigure;
	j->requeue = c->requeue;
	j->restarts = c->restarts;
	ck_assert_msg(decide(&w, s, c->min_gain) == c->choices, "%s: %d choices (%s)", c->what,
		      w.r.nchoices, w.r.why);
	if (c->why)
		ck_assert_msg(strstr(w.r.why, c->why), "%s: why '%s' lacks '%s'", c->what, w.r.why,
			      c->why);
	world_free(&w, s);
}
END_TEST

static const struct elig_case {
	saturn_snap_state_t state;
	int reconfigure, requeue, restarts;
	double done;
	int ok;
	const char *why;
} elig_cases[] = {
	{SATURN_SNAP_RUNNING, 1, 1, 0, 0, 1, ""},
	{SATURN_SNAP_HELD, 1, 1, 0, 0, 0, "not running"},
	{SATURN_SNAP_RUNNING, 0, 1, 0, 0, 0, "not opted in"},
	{SATURN_SNAP_RUNNING, 1, 0, 0, 0, 0, "not requeue-able"},
	{SATURN_SNAP_RUNNING, 1, 1, 2, 0, 0, "restarted 2 times (saturn_reconfigure_max=2)"},
	{SATURN_SNAP_RUNNING, 1, 1, 0, -1, 0, "no progress report"},
};

START_TEST(test_eligible)
{
	const struct elig_case *c = &elig_cases[_i];
	saturn_reconfig_settings_t rs;
	saturn_snap_job_t j;
	char why[128];

	memset(&j, 0, sizeof(j));
	saturn_reconfig_settings_init(&rs);
	j.state = c->state;
	j.reconfigure = c->reconfigure;
	j.requeue = c->requeue;
	j.restarts = c->restarts;
	j.batches_done = c->done;
	ck_assert_int_eq(saturn_reconfig_eligible(&j, &rs, why, sizeof(why)), c->ok);
	ck_assert_msg(strstr(why, c->why) && (c->why[0] || !why[0]), "why '%s', want '%s'", why,
		      c->why);
}
END_TEST

/* The unpinned problem: remaining batches, every option, the restart as
 * release, the GPUs busy while it checkpoints; the others untouched; the
 * remaining batches from the profile when the report has no total. */
START_TEST(test_problem)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 2, 8);
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_reconfig_settings_t rs;
	saturn_sched_build_t b;
	saturn_problem_t *p = NULL;
	saturn_snap_job_t *j;
	char unp[3];
	int tr = -1, tn = -1, th = -1;

	ck_assert_ptr_nonnull(pr);
	saturn_reconfig_settings_init(&rs);
	rs.requeue_delay_s = 6;
	running(s, 0, 0, "single", 1, 0x4, 1200, -1);   /* profile: 800 left */
	j = running(s, 1, 1, "ddp", 2, 0x3, 100, 1900);
	j->requeue = 0;
	held(s, 2);
	ck_assert_int_eq(saturn_sched_build(s, lookup_one, pr, &b, &err), 0);
	ck_assert_int_eq(b.problem->ntasks, 3);
	for (int t = 0; t < 3; t++) {
		int k = b.job_of_task[t];

		if (k == 0)
			tr = t;
		else if (k == 1)
			tn = t;
		else
			th = t;
	}
	ck_assert_int_eq(saturn_reconfig_problem(s, &b, lookup_one, pr, &rs, unp, &p, &err), 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(unp[tr], 1);
	ck_assert_int_eq(unp[tn], 0);
	ck_assert_int_eq(unp[th], 0);
	ck_assert(!p->tasks[tr].is_running);
	ck_assert_int_eq(p->tasks[tr].noptions, 4);
	ck_assert_double_eq(p->tasks[tr].batches, 800);
	ck_assert_double_eq(p->tasks[tr].release_s, 30 + 6 + 30);
	ck_assert(p->tasks[tn].is_running);
	ck_assert_int_eq(p->nodes[0].nbusy, 1);
	ck_assert_int_eq(p->nodes[0].busy[0].ngpus, 1);
	ck_assert_int_eq(p->nodes[0].busy[0].gpu_ids[0], 2);
	ck_assert_double_eq(p->nodes[0].busy[0].until_s, 30);
	ck_assert_int_eq(p->nodes[1].nbusy, 0);
	/* the build's problem is left as it was */
	ck_assert(b.problem->tasks[tr].is_running);
	saturn_problem_destroy(p);
	/* no profile: nothing to choose from */
	ck_assert_int_eq(saturn_reconfig_problem(s, &b, lookup_one, NULL, &rs, unp, &p, &err), 0);
	ck_assert_ptr_null(p);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

static const struct exit_case {
	const char *re, *hold;
	int ok;
} exit_cases[] = {
	{NULL, NULL, 0},     {"75", NULL, 1},      {NULL, "75", 1}, {"1-9,70-80", "", 1},
	{"1-9", "76", 0},    {"x", NULL, 0},       {"", "", 0},     {"75,75", NULL, 0},
};

START_TEST(test_requeues)
{
	const struct exit_case *c = &exit_cases[_i];

	ck_assert_int_eq(saturn_reconfig_requeues(c->re, c->hold, SATURN_RECONFIG_EXIT), c->ok);
}
END_TEST

/* Partitions: with node classes in the problem, an unpinned task may
 * move only among the nodes of its node's class. */
START_TEST(test_problem_classes)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 2, 8);
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_reconfig_settings_t rs;
	saturn_sched_build_t b;
	saturn_problem_t *p = NULL;
	saturn_snap_job_t *h;
	char unp[2];
	int tr;

	ck_assert_ptr_nonnull(pr);
	saturn_reconfig_settings_init(&rs);
	s->nodes[0].part_mask = 0x1;
	s->nodes[1].part_mask = 0x2;
	running(s, 0, 0, "single", 1, 0x1, 100, 1900);
	h = held(s, 1);
	h->part_mask = 0x2;
	ck_assert_int_eq(saturn_sched_build(s, lookup_one, pr, &b, &err), 0);
	ck_assert_ptr_nonnull(b.problem->nodes[0].klass);
	tr = b.job_of_task[0] == 0 ? 0 : 1;
	ck_assert_int_eq(saturn_reconfig_problem(s, &b, lookup_one, pr, &rs, unp, &p, &err), 1);
	for (int o = 0; o < p->tasks[tr].noptions; o++) {
		ck_assert_ptr_nonnull(p->tasks[tr].options[o].klass);
		ck_assert_str_eq(p->tasks[tr].options[o].klass, p->nodes[0].klass);
		ck_assert(saturn_option_fits(p, tr, o, 0));
		ck_assert(!saturn_option_fits(p, tr, o, 1));
	}
	saturn_problem_destroy(p);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Two tasks of an array on 1 GPU each, one per 8-GPU node (the e2e test
 * sched-reconfig.sh). With both nodes free, each restarts on its own node
 * with 8 GPUs, even with no solver time at all (the cheap candidates are
 * always tried). With 7 GPUs of n1 held by another job for 10 minutes (one
 * of the jobs that held them has ended, the other not yet), both on 4 GPUs
 * of n2 is the best there is: not a bad solve. */
static const struct split_case {
	int n1_busy;
	double time_limit_s;
	int gpus;
	const char *node0, *node1;
	double new_makespan;
} split_cases[] = {
	{0, 1e-9, 8, "n1", "n2", 181 + 1040 * 0.25},
	{0, 0.5, 8, "n1", "n2", 181 + 1040 * 0.25},
	{1, 1e-9, 4, "n2", "n2", 181 + 1040 * 0.3},
	{1, 0.5, 4, "n2", "n2", 181 + 1040 * 0.3},
};

START_TEST(test_split_nodes)
{
	const struct split_case *c = &split_cases[_i];
	saturn_snapshot_t *s = fx_snapshot(10000, 2, 8);
	saturn_error_t err = {{0}};
	world_t w = {0};
	int n;

	saturn_reconfig_settings_init(&w.rs);
	running(s, 0, 0, "single", 1, 0x1, 160, 1040);
	running(s, 1, 1, "single", 1, 0x1, 160, 1040);
	if (c->n1_busy) {
		saturn_snap_busy_t *bz = saturn_snapshot_add_busy(s);

		ck_assert_ptr_nonnull(bz);
		bz->node = 0;
		bz->gpu_mask = 0xfe;
		bz->until = s->now + 600;
	}
	w.pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	ck_assert_msg(w.pr != NULL, "%s", err.text);
	ck_assert_msg(saturn_sched_build(s, lookup_one, w.pr, &w.b, &err) == 0, "%s", err.text);
	saturn_planner_opts_init(&w.opts);
	w.opts.time_limit_s = 0.5;
	w.plan = saturn_planner_solve(w.b.problem, &w.opts, &err);
	ck_assert_msg(w.plan != NULL, "%s", err.text);
	w.opts.time_limit_s = c->time_limit_s;
	n = saturn_reconfig_decide(s, &w.b, w.plan, lookup_one, w.pr, &w.rs, 0.05, &w.opts, &w.r,
				   &err);
	ck_assert_msg(n >= 0, "%s", err.text);
	ck_assert_int_eq(n, 2);
	ck_assert_double_eq_tol(w.r.old_makespan_s, 1040, 1);
	ck_assert_double_eq_tol(w.r.new_makespan_s, c->new_makespan, 1);
	for (int i = 0; i < 2; i++) {
		const saturn_reconfig_choice_t *ch = &w.r.choices[i];

		ck_assert_int_eq(ch->gpus, c->gpus);
		ck_assert_str_eq(ch->technique, "ddp");
		ck_assert_str_eq(ch->node, s->jobs[ch->job].task_id == 0 ? c->node0 : c->node1);
	}
	world_free(&w, s);
}
END_TEST

/* tests/bench/reconfig-bench.sh's batch: a model that scales near-linearly
 * (tasks 0-1) and one that scales sublinearly (2-3). */
static const char bench_profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"linear/bs256\", \"task_ids\": \"0-1\", \"batches\": 300,"
	" \"options\": ["
	"  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 0.40, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.21, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.11, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 8, \"sec_per_batch\": 0.058, \"status\": \"measured\"} ] },"
	" {\"signature\": \"sublinear/bs32\", \"task_ids\": \"2-3\", \"batches\": 600,"
	" \"options\": ["
	"  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 0.20, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.12, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.085, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 8, \"sec_per_batch\": 0.075, \"status\": \"measured\"} ] } ] }";

/* The decision acts as soon as the GPUs free up (reconfig-bench.sh at the
 * other job's end): 4 tasks on 1 GPU each of 2 idle 8-GPU nodes, restart
 * cost 15 s. The plan with them free is within 1% of its bound but not on
 * it, so the decision's search stops there (saturn_reconfig_stop_ratio)
 * rather than spending its whole budget (5 s here) while the freed GPUs
 * wait; it still restarts all four. */
START_TEST(test_prompt)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 2, 8);
	saturn_error_t err = {{0}};
	world_t w = {0};
	struct timespec a, b;
	double el;
	int n;

	saturn_reconfig_settings_init(&w.rs);
	w.rs.checkpoint_s = 2;
	w.rs.requeue_delay_s = 6;
	w.rs.startup_s = 7;
	w.rs.margin_s = 10;
	running(s, 0, 0, "single", 1, 0x1, 55, 245);
	running(s, 1, 0, "single", 1, 0x2, 55, 245);
	running(s, 2, 1, "single", 1, 0x1, 110, 490);
	running(s, 3, 1, "single", 1, 0x2, 110, 490);
	for (int i = 0; i < 4; i++)
		s->jobs[i].obs_spb = i < 2 ? 0.40 : 0.20;
	w.pr = saturn_profile_parse(bench_profile_text, strlen(bench_profile_text), &err);
	ck_assert_msg(w.pr != NULL, "%s", err.text);
	ck_assert_msg(saturn_sched_build(s, lookup_one, w.pr, &w.b, &err) == 0, "%s", err.text);
	w.opts = fx_opts(0.5);
	w.plan = saturn_planner_solve(w.b.problem, &w.opts, &err);
	ck_assert_msg(w.plan != NULL, "%s", err.text);
	w.opts = fx_opts(5);
	clock_gettime(CLOCK_MONOTONIC, &a);
	n = saturn_reconfig_decide(s, &w.b, w.plan, lookup_one, w.pr, &w.rs, 0.05, &w.opts, &w.r,
				   &err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	ck_assert_msg(n >= 0, "%s", err.text);
	fprintf(stderr, "test_prompt: %d restart(s), makespan %.1f -> %.1f, decided in %.3f s\n", n,
		w.r.old_makespan_s, w.r.new_makespan_s, el);
	ck_assert_int_eq(n, 4);
	ck_assert_msg(el < 2.5, "decided in %.2f s: the search used its budget (5 s)", el);
	/* what it may give up: min_gain of the bound (56.6 s) */
	ck_assert_double_eq_tol(w.r.new_makespan_s, 56.7, 0.05 * 56.7);
	world_free(&w, s);
}
END_TEST

/* Just after the restarts of test_prompt: the four tasks resumed 3 s ago
 * on 4 GPUs each; their progress files are still the previous run's (1 GPU,
 * its speed, written before this run started). That file says where the
 * run resumed, not how fast it goes: no observed speed, no correction of
 * the 4-GPU option from it, and no second restart back onto 1 GPU (the
 * previous run's speed read as the new option's, reconfig-bench.sh run 1
 * under load). */
START_TEST(test_resumed_progress)
{
	saturn_snapshot_t *s = fx_snapshot(10000, 2, 8);
	saturn_fb_t *fb = saturn_fb_create();
	saturn_error_t err = {{0}};
	world_t w = {0};
	int n;

	ck_assert_ptr_nonnull(fb);
	saturn_reconfig_settings_init(&w.rs);
	w.rs.checkpoint_s = 2;
	w.rs.requeue_delay_s = 6;
	w.rs.startup_s = 7;
	w.rs.margin_s = 10;
	running(s, 0, 0, "ddp", 4, 0x0f, 55, 245);
	running(s, 1, 0, "ddp", 4, 0xf0, 55, 245);
	running(s, 2, 1, "ddp", 4, 0x0f, 110, 490);
	running(s, 3, 1, "ddp", 4, 0xf0, 110, 490);
	for (int i = 0; i < 4; i++) {
		s->jobs[i].start_time = s->now - 3;
		s->jobs[i].progress_updated = s->now - 10;
		s->jobs[i].progress_spb = i < 2 ? 0.40 : 0.20;
	}
	w.pr = saturn_profile_parse(bench_profile_text, strlen(bench_profile_text), &err);
	ck_assert_msg(w.pr != NULL, "%s", err.text);
	ck_assert_int_eq(saturn_sched_feedback(fb, s, lookup_one, w.pr), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(s->jobs[i].obs_spb == 0,
			      "task %d: the previous run's %.2f s/batch taken as observed", i,
			      s->jobs[i].obs_spb);
		ck_assert_double_eq(s->jobs[i].batches_done, i < 2 ? 55 : 110);
	}
	ck_assert_int_eq(fb->ncorr, 0);
	ck_assert_msg(saturn_sched_build(s, lookup_one, w.pr, &w.b, &err) == 0, "%s", err.text);
	w.opts = fx_opts(0.5);
	w.plan = saturn_planner_solve(w.b.problem, &w.opts, &err);
	ck_assert_msg(w.plan != NULL, "%s", err.text);
	n = saturn_reconfig_decide(s, &w.b, w.plan, lookup_one, w.pr, &w.rs, 0.05, &w.opts, &w.r,
				   &err);
	ck_assert_msg(n == 0, "%d task(s) restarted again: %s", n, w.r.why);
	saturn_fb_destroy(fb);
	world_free(&w, s);
}
END_TEST

static const saturn_profile_t *lookup_any(const char *batch, long uid, void *arg)
{
	(void)batch;
	(void)uid;
	return arg;
}

/* Two users under a multi-batch objective on one 8-GPU node; A's task
 * runs, B's (held, asks for 4 GPUs) waits.
 * Whole node: A's task runs on the 8 GPUs with 225 s left; B's waits for
 * it and ends at 725 s on 8 GPUs. Restarting A's task on 4 GPUs lets B
 * start at 30 s on the other 4: B ends at 630 s, A at 451 s instead of
 * 225 s, the makespan 95 s shorter. The makespan restarts A; bounded by
 * stock Slurm may not (A's bound is its end now: running tasks keep their
 * place); weighted with equal weights may not (the flow times' sum grows);
 * weighted with B ten times A's priority finds B first on the whole node,
 * then A again on 8 GPUs best: a preemption, refused.
 * Tail: A's task runs on 1 GPU with 900 s left, B's on 4 GPUs beside it
 * (600 s); A restarted on 4 GPUs ends at 451 s: every objective takes it
 * (A's own batch ends sooner). Bounded by the fair share, B (share 4 GPUs,
 * deadline 490 s) misses its bound on 4 GPUs: the plan runs B on the whole
 * node from 30 s and A on 8 GPUs after it (755 s, still sooner than 900 s
 * for A). */
static const struct mu_case {
	int tail;      /* the tail case, else the whole-node one */
	int objective;
	int stock;     /* m->deadline from saturn_mu_stock_deadlines */
	double prio_b; /* B's priority, A's 1 */
	int expect;    /* choices */
	const char *why;
} mu_cases[] = {
	{0, SATURN_FAIR_NONE, 0, 1, 1, NULL},
	{0, SATURN_FAIR_BOUNDED, 1, 1, 0, "past its bound"},
	{0, SATURN_FAIR_WEIGHTED, 0, 1, 0, "weighted flow time"},
	{0, SATURN_FAIR_WEIGHTED, 0, 10, 0, "preemption"},
	{1, SATURN_FAIR_NONE, 0, 1, 1, NULL},
	{1, SATURN_FAIR_BOUNDED, 1, 1, 1, NULL},
	{1, SATURN_FAIR_BOUNDED, 0, 1, 1, NULL},
	{1, SATURN_FAIR_WEIGHTED, 0, 1, 1, NULL},
};

START_TEST(test_mu_objective)
{
	const struct mu_case *c = &mu_cases[_i];
	saturn_snapshot_t *s = fx_snapshot(10000, 1, 8);
	saturn_profile_t *pr;
	saturn_sched_build_t b = {0};
	saturn_plan_t *plan;
	saturn_reconfig_settings_t rs;
	saturn_planner_opts_t opts;
	saturn_reconfig_result_t r;
	saturn_error_t err = {{0}};
	saturn_mu_t m = {0};
	saturn_snap_job_t *j;
	int n;

	saturn_reconfig_settings_init(&rs);
	if (c->tail)
		j = running(s, 2, 0, "single", 1, 0x1, 1100, 900);
	else
		j = running(s, 2, 0, "ddp", 8, 0xff, 1100, 900);
	j->uid = 1001;
	j->prio = 1;
	j->submit_time = s->now - 10;
	j = held(s, 0);
	snprintf(j->batch, sizeof(j->batch), "other");
	j->job_id = 8;
	j->array_job_id = 8;
	j->uid = 1002;
	j->req_gpus = 4;
	j->prio = c->prio_b;
	j->submit_time = s->now - 10;
	pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	ck_assert_msg(pr != NULL, "%s", err.text);
	ck_assert_msg(saturn_sched_build(s, lookup_any, pr, &b, &err) == 0, "%s", err.text);
	ck_assert_int_eq(b.problem->ntasks, 2);
	ck_assert_int_eq(saturn_mu_from_snapshot(&m, s, &b), 0);
	ck_assert_int_eq(m.nbatches, 2);
	if (c->stock) {
		m.deadline = calloc((size_t)m.nbatches, sizeof(double));
		ck_assert_ptr_nonnull(m.deadline);
		ck_assert_int_eq(saturn_mu_stock_deadlines(&m, b.problem, m.deadline), 0);
	}
	saturn_planner_opts_init(&opts);
	opts.time_limit_s = 0.5;
	plan = saturn_mu_plan(c->objective, &m, b.problem, &opts, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	ck_assert_double_eq_tol(plan->makespan_s, c->tail ? 900 : 725, 1);
	n = saturn_reconfig_decide_mu(s, &b, plan, lookup_any, pr, &rs, 0.05, &opts, c->objective,
				      &m, &r, &err);
	ck_assert_msg(n >= 0, "%s", err.text);
	ck_assert_msg(n == c->expect, "objective %d: %d choice(s), expected %d (why: %s; value %g -> %g, makespan %g -> %g)",
		      c->objective, n, c->expect, r.why, r.old_value, r.new_value, r.old_makespan_s, r.new_makespan_s);
	ck_assert_int_eq(r.ncandidates, 1);
	if (n && !(c->tail && c->objective == SATURN_FAIR_BOUNDED && !c->stock)) {
		ck_assert_int_eq(r.choices[0].gpus, 4);
		ck_assert_double_eq_tol(r.new_makespan_s, c->tail ? 600 : 630, 1);
	}
	if (c->why)
		ck_assert_msg(strstr(r.why, c->why), "why '%s' lacks '%s'", r.why, c->why);
	saturn_reconfig_result_free(&r);
	saturn_plan_destroy(plan);
	saturn_mu_free(&m);
	saturn_sched_build_free(&b);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_loop_test(tc, test_settings, 0, sizeof(settings_cases) / sizeof(settings_cases[0]));
	tcase_add_loop_test(tc, test_eligible, 0, sizeof(elig_cases) / sizeof(elig_cases[0]));
	tcase_add_loop_test(tc, test_requeues, 0, sizeof(exit_cases) / sizeof(exit_cases[0]));
	tcase_add_test(tc, test_problem);
	tcase_add_test(tc, test_problem_classes);
	tcase_add_test(tc, test_tail);
	tcase_add_test(tc, test_slow);
	tcase_add_test(tc, test_lost_node);
	tcase_add_test(tc, test_already_best);
	tcase_add_loop_test(tc, test_deny, 0, sizeof(deny_cases) / sizeof(deny_cases[0]));
	tcase_add_loop_test(tc, test_mu_objective, 0, sizeof(mu_cases) / sizeof(mu_cases[0]));
	tcase_add_test(tc, test_prompt);
	tcase_add_test(tc, test_resumed_progress);
	tcase_add_loop_test(tc, test_split_nodes, 0, sizeof(split_cases) / sizeof(split_cases[0]));
}

int main(void)
{
	return fx_run_suite("reconfig", 60, add_tests);
}
