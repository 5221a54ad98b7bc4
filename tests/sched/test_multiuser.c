/* test_multiuser.c - lib/sched/multiuser.c: batches, weights and limit
 * groups out of a snapshot; weighted fair-share deadlines; the weighted and
 * bounded objectives against the joint makespan plan; the users' limits
 * (GPUs and tasks at once) applied to a plan and checked; the
 * saturn_objective setting. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "multiuser.h"
#include "planner.h"
#include "sched_core.h"

/* Decodes of the search in the tests whose plan must not depend on load. */
#ifndef EVALS
#define EVALS 20000
#endif

#include "sched_fixture.h"

/* --- from a snapshot ----------------------------------------------------- */

START_TEST(test_from_snapshot)
{
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t b = {0};
	saturn_mu_t m;
	int map[5], one = 1;
	double spb = 1;
	/* uid, batch, prio, seconds ago, limit key/caps/used, running */
	static const struct {
		long uid;
		const char *batch;
		double prio, ago;
		uint64_t key;
		int max_gpus, max_jobs, used_gpus, used_jobs, running;
	} in[5] = {
	    {7, "big", 1000, 100, 70, 4, 0, 3, 2, 1},
	    {7, "big", 3000, 90, 70, 4, 0, 3, 2, 0},
	    {9, "small", 0, 10, 0, 0, 0, 0, 0, 0},
	    {7, "other", 500, 50, 70, 4, 0, 3, 2, 0},
	    {9, "small", 0, 5, 90, 0, 2, 0, 1, 0},
	};

	s->now = 1000;
	b.problem = saturn_problem_create();
	b.job_of_task = map;
	fx_add_node(b.problem, "n1", 8);
	for (int i = 0; i < 5; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);
		char id[16];

		j->uid = in[i].uid;
		snprintf(j->batch, sizeof(j->batch), "%s", in[i].batch);
		j->prio = in[i].prio;
		j->submit_time = s->now - in[i].ago;
		j->limits[0] = (saturn_snap_limit_t){in[i].key, in[i].max_gpus, in[i].max_jobs,
						     in[i].used_gpus, in[i].used_jobs};
		snprintf(id, sizeof(id), "t%d", i);
		ck_assert_int_eq(fx_add_task(b.problem, id, 100, 1, &one, &spb), i);
		map[i] = i;
	}
	/* task 0 runs on GPU 0 */
	b.problem->tasks[0].is_running = true;
	b.problem->tasks[0].running.ngpus = 1;
	b.problem->tasks[0].running.gpu_ids = calloc(1, sizeof(int));
	ck_assert_int_eq(saturn_mu_from_snapshot(&m, s, &b), 0);
	ck_assert_int_eq(m.nbatches, 3);
	ck_assert_int_eq(m.nusers, 2);
	/* batches by (uid, name): 7/big, 7/other, 9/small */
	ck_assert_int_eq(m.batch_of_task[0], m.batch_of_task[1]);
	ck_assert_int_ne(m.batch_of_task[0], m.batch_of_task[3]);
	ck_assert_int_eq(m.batch_of_task[2], m.batch_of_task[4]);
	ck_assert_int_eq(m.user_of_batch[m.batch_of_task[0]], m.user_of_batch[m.batch_of_task[3]]);
	ck_assert_int_ne(m.user_of_batch[m.batch_of_task[0]], m.user_of_batch[m.batch_of_task[2]]);
	/* weight: the mean known priority, 1 when none is known */
	ck_assert_double_eq_tol(m.weight[m.batch_of_task[0]], 2000, 1e-9);
	ck_assert_double_eq_tol(m.weight[m.batch_of_task[3]], 500, 1e-9);
	ck_assert_double_eq_tol(m.weight[m.batch_of_task[2]], 1, 1e-9);
	ck_assert_double_eq_tol(m.submit[m.batch_of_task[0]], -100, 1e-9);
	ck_assert_double_eq_tol(m.submit[m.batch_of_task[2]], -10, 1e-9);
	/* groups: key 70 (4 GPUs; Slurm counts 3 in use, 1 of them our running
	 * task: cap 4 - 2 = 2), key 90 (2 jobs, 1 used by another: cap 1) */
	ck_assert_int_eq(m.ngroups, 2);
	ck_assert_int_eq(m.group_of_task[0][0], 0);
	ck_assert_int_eq(m.group_of_task[0][1], -1);
	ck_assert_int_eq(m.group_of_task[2][0], -1);
	ck_assert_int_eq(m.group_of_task[4][0], 1);
	ck_assert_int_eq(m.max_gpus[0], 2);
	ck_assert_int_eq(m.max_jobs[0], 0);
	ck_assert_int_eq(m.max_gpus[1], 0);
	ck_assert_int_eq(m.max_jobs[1], 1);
	saturn_mu_free(&m);
	saturn_problem_destroy(b.problem);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- releases within the caps ------------------------------------------- */

/* One group (user 7: 4 GPUs, 2 jobs) and user 9 without one: task 0 of
 * user 7 runs (1 GPU), task 1 is released (2 GPUs); tasks 2-4 of user 7
 * and 5 of user 9 are held. Decisions release 2 (due now, 1 GPU: fits
 * neither the jobs cap, 2 + 1 > 2), 3 and 4 (ahead of their start) and 5. */
START_TEST(test_limit_releases)
{
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t b = {0};
	saturn_decision_t d[4];
	saturn_mu_t m;
	int map[6], one = 1;
	double spb = 1;

	b.problem = saturn_problem_create();
	b.job_of_task = map;
	fx_add_node(b.problem, "n1", 8);
	for (int i = 0; i < 6; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);
		char id[16];

		j->uid = i < 5 ? 7 : 9;
		snprintf(j->batch, sizeof(j->batch), "b%ld", j->uid);
		j->state = i == 0 ? SATURN_SNAP_RUNNING : i == 1 ? SATURN_SNAP_RELEASED : SATURN_SNAP_HELD;
		j->gpus = i == 0 ? 1 : i == 1 ? 2 : 0;
		if (i < 5)
			j->limits[0] = (saturn_snap_limit_t){70, 4, 2, 1, 1};
		snprintf(id, sizeof(id), "t%d", i);
		ck_assert_int_eq(fx_add_task(b.problem, id, 100, 1, &one, &spb), i);
		map[i] = i;
	}
	b.problem->tasks[0].is_running = true;
	b.problem->tasks[0].running.ngpus = 1;
	b.problem->tasks[0].running.gpu_ids = calloc(1, sizeof(int));
	ck_assert_int_eq(saturn_mu_from_snapshot(&m, s, &b), 0);
	ck_assert_int_eq(m.max_jobs[0], 2);
	ck_assert_int_eq(m.max_gpus[0], 4);
	memset(d, 0, sizeof(d));
	for (int i = 0; i < 4; i++) {
		d[i].job = i + 2;
		d[i].release = 1;
		d[i].gpus = 1;
		snprintf(d[i].node, sizeof(d[i].node), "n1");
		snprintf(d[i].technique, sizeof(d[i].technique), "ddp");
	}
	d[1].start_s = d[2].start_s = 3;
	/* 2 of user 7's tasks hold their group: none of its releases now */
	ck_assert_int_eq(saturn_mu_limit_releases(&m, s, &b, d, 4), 3);
	ck_assert_int_eq(d[0].release, 0);
	ck_assert_str_eq(d[0].reason, "saturn: waits for its association or QOS limit; then n1, 1 GPU, ddp");
	ck_assert_int_eq(d[1].release, 0);
	ck_assert_str_eq(d[1].reason, "saturn: starts in ~3s on n1, 1 GPU, ddp");
	ck_assert_int_eq(d[2].release, 0);
	ck_assert_int_eq(d[3].release, 1);
	/* the released task 1 started elsewhere and ended: one job free; the
	 * task due now takes it before those ahead of their start */
	s->jobs[1].state = SATURN_SNAP_HELD;
	for (int i = 0; i < 4; i++)
		d[i].release = 1;
	d[0].start_s = 1;
	d[2].start_s = 0;
	ck_assert_int_eq(saturn_mu_limit_releases(&m, s, &b, d, 4), 2);
	ck_assert_int_eq(d[0].release, 0);
	ck_assert_int_eq(d[1].release, 0);
	ck_assert_int_eq(d[2].release, 1);
	ck_assert_int_eq(d[3].release, 1);
	/* the GPU cap (4, task 0 holds 1): one more task on 2 GPUs fits, a
	 * second not; user 9's is not held; a task on more GPUs than the cap
	 * is not held for it (Slurm's to keep pending) */
	for (int i = 0; i < 4; i++) {
		d[i].release = 1;
		d[i].start_s = 0;
		d[i].gpus = 2;
	}
	d[2].gpus = 6;
	ck_assert_int_eq(saturn_mu_limit_releases(&m, s, &b, d, 3), 2);
	ck_assert_int_eq(d[0].release, 1);
	ck_assert_int_eq(d[1].release, 0);
	ck_assert_int_eq(d[2].release, 0); /* the jobs cap: 3 > 2 */
	m.max_jobs[0] = 0;
	for (int i = 0; i < 4; i++)
		d[i].release = 1;
	ck_assert_int_eq(saturn_mu_limit_releases(&m, s, &b, d, 4), 1);
	ck_assert_int_eq(d[0].release, 1);
	ck_assert_int_eq(d[1].release, 0);
	ck_assert_int_eq(d[2].release, 1);
	ck_assert_int_eq(d[3].release, 1);
	/* no caps, or no decisions: nothing held */
	ck_assert_int_eq(saturn_mu_limit_releases(NULL, s, &b, d, 4), 0);
	ck_assert_int_eq(saturn_mu_limit_releases(&m, s, &b, d, 0), 0);
	saturn_mu_free(&m);
	saturn_problem_destroy(b.problem);
	saturn_snapshot_destroy(s);
}
END_TEST

/* --- deadlines --------------------------------------------------------- */

START_TEST(test_deadlines)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_mu_t m;
	int one = 1;
	double spb = 1, dl[3];

	fx_add_node(p, "n1", 8);
	/* user 0: batch 0 (2 x 600 GPU-s, weight 3), batch 1 (600, weight 1,
	 * submitted at -50); user 1: batch 2 (400, weight 1) */
	fx_add_task(p, "a1", 600, 1, &one, &spb);
	fx_add_task(p, "a2", 600, 1, &one, &spb);
	fx_add_task(p, "a3", 600, 1, &one, &spb);
	fx_add_task(p, "b1", 400, 1, &one, &spb);
	ck_assert_int_eq(saturn_mu_init(&m, 4, 3, 2, 0), 0);
	m.batch_of_task[0] = m.batch_of_task[1] = 0;
	m.batch_of_task[2] = 1;
	m.batch_of_task[3] = 2;
	m.user_of_batch[0] = m.user_of_batch[1] = 0;
	m.user_of_batch[2] = 1;
	m.weight[0] = 3;
	m.submit[0] = -100;
	m.submit[1] = -50;
	m.submit[2] = 0;
	ck_assert_int_eq(saturn_mu_deadlines(&m, p, dl), 0);
	/* user 0: w 3 of 4: share 6 GPUs; 1200 / 6 = 200 from -100: 100;
	 * then 600 / 6 = 100 after it: 200. user 1: 2 GPUs: 400 / 2 = 200 */
	ck_assert_double_eq_tol(dl[0], 100, 1e-9);
	ck_assert_double_eq_tol(dl[1], 200, 1e-9);
	ck_assert_double_eq_tol(dl[2], 200, 1e-9);
	/* a1 of user 0 runs on GPUs 0-5 for 600 s (3600 GPU-s now): user 1's
	 * share (2 GPUs) is free now (GPUs 6, 7): the same; user 0's own
	 * running task does not delay its share: -100 + 4200 / 6 = 600 */
	p->tasks[0].is_running = true;
	p->tasks[0].running.ngpus = 6;
	p->tasks[0].running.gpu_ids = calloc(6, sizeof(int));
	for (int g = 0; g < 6; g++)
		p->tasks[0].running.gpu_ids[g] = g;
	ck_assert_int_eq(saturn_mu_deadlines(&m, p, dl), 0);
	ck_assert_double_eq_tol(dl[2], 200, 1e-9);
	ck_assert_double_eq_tol(dl[0], 600, 1e-9);
	/* with user 1 weighing 3 as well: 4 GPUs each; user 1's 4 GPUs are
	 * free once a1 ends (600 s): 600 + 400 / 4 = 700 */
	m.weight[2] = 3;
	ck_assert_int_eq(saturn_mu_deadlines(&m, p, dl), 0);
	ck_assert_double_eq_tol(dl[2], 700, 1e-9);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* saturn_mu_plan() of objective obj within limit_s seconds; fails the
 * test when it returns NULL. */
static saturn_plan_t *mu_plan_ok(int obj, const saturn_mu_t *m, const saturn_problem_t *p,
				 double limit_s)
{
	/* limit_s < 0: a budget of decodes (-limit_s), the same plan on
	 * every machine and under any load */
	saturn_planner_opts_t o = limit_s < 0 ? fx_opts_evals((unsigned long)-limit_s) : fx_opts(limit_s);
	saturn_error_t err = {{0}};
	saturn_plan_t *plan = saturn_mu_plan(obj, m, p, &o, &err);

	ck_assert_msg(plan != NULL, "%s", err.text);
	return plan;
}

/* --- objectives -------------------------------------------------------- */

/* A large batch (24 tasks, 1-8 GPUs each, 0.5-2 h) and a small one (3
 * tasks of 0.3-0.6 h) on 2 x 8 GPUs, the small one submitted later. */
static saturn_problem_t *two_batches(saturn_mu_t *m, double w_small)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	int gpus[4] = {1, 2, 4, 8};
	unsigned r = 12345;

	fx_add_node(p, "n1", 8);
	fx_add_node(p, "n2", 8);
	for (int i = 0; i < 27; i++) {
		double base = i < 24 ? 1800 + (r = r * 1103515245 + 12345) % 5400 :
				       1080 + (r = r * 1103515245 + 12345) % 1080;
		double spb[4];
		char id[16];

		for (int o = 0; o < 4; o++)
			spb[o] = base / 1000 / (gpus[o] * (1 - 0.08 * o));
		snprintf(id, sizeof(id), "%c%d", i < 24 ? 'a' : 'b', i);
		ck_assert_int_eq(fx_add_task(p, id, 1000, 4, gpus, spb), i);
	}
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	ck_assert_int_eq(saturn_mu_init(m, 27, 2, 2, 0), 0);
	for (int t = 0; t < 27; t++)
		m->batch_of_task[t] = t < 24 ? 0 : 1;
	m->user_of_batch[1] = 1;
	m->submit[0] = -600;
	m->weight[1] = w_small;
	return p;
}

START_TEST(test_weighted)
{
	saturn_mu_t m;
	saturn_problem_t *p = two_batches(&m, 1);
	saturn_error_t err = {{0}};
	saturn_plan_t *joint, *w;
	double cj[2], cw[2];

	joint = mu_plan_ok(SATURN_FAIR_NONE, &m, p, -EVALS);
	w = mu_plan_ok(SATURN_FAIR_WEIGHTED, &m, p, -EVALS);
	ck_assert_int_eq(saturn_plan_validate(w, p, &err), 0);
	saturn_mu_completions(&m, joint, cj);
	saturn_mu_completions(&m, w, cw);
	/* never worse by its own objective than the joint plan, and at least
	 * its lower bound */
	ck_assert_double_le(saturn_mu_value(SATURN_FAIR_WEIGHTED, &m, w, NULL),
			    saturn_mu_value(SATURN_FAIR_WEIGHTED, &m, joint, NULL) * (1 + 1e-9));
	ck_assert_double_ge(saturn_mu_value(SATURN_FAIR_WEIGHTED, &m, w, NULL) * (1 + 1e-9),
			    saturn_mu_weighted_bound(&m, p));
	/* the small batch: done within its longest task's time (it goes first) */
	ck_assert_double_le(cw[1], 2160 + 1e-6);
	ck_assert_str_eq(w->method, "smith");
	saturn_plan_destroy(joint);
	saturn_plan_destroy(w);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

START_TEST(test_bounded)
{
	saturn_mu_t m;
	saturn_problem_t *p = two_batches(&m, 1);
	saturn_error_t err = {{0}};
	saturn_plan_t *joint, *bd;
	double dl[2], c[2];

	ck_assert_int_eq(saturn_mu_deadlines(&m, p, dl), 0);
	joint = mu_plan_ok(SATURN_FAIR_NONE, &m, p, 0.5);
	bd = mu_plan_ok(SATURN_FAIR_BOUNDED, &m, p, 0.5);
	ck_assert_int_eq(saturn_plan_validate(bd, p, &err), 0);
	/* never a larger stretch than the joint plan; the small batch by its
	 * fair-share deadline (8 GPUs for it alone are plenty) */
	ck_assert_double_le(saturn_mu_value(SATURN_FAIR_BOUNDED, &m, bd, dl),
			    saturn_mu_value(SATURN_FAIR_BOUNDED, &m, joint, dl) + 1e-9);
	saturn_mu_completions(&m, bd, c);
	ck_assert_double_le(c[1], dl[1] * 3);
	/* better(): within the bound the shorter makespan wins */
	{
		saturn_plan_t *x = saturn_plan_copy(bd), *y = saturn_plan_copy(bd);

		x->makespan_s = 10;
		y->makespan_s = 20;
		for (int i = 0; i < x->nassign; i++)
			x->assign[i].end_s = y->assign[i].end_s = 1;
		ck_assert_int_eq(saturn_mu_better(SATURN_FAIR_BOUNDED, &m, x, y, dl), 1);
		ck_assert_int_eq(saturn_mu_better(SATURN_FAIR_BOUNDED, &m, y, x, dl), 0);
		/* over the bound: the lower stretch wins whatever the makespan */
		for (int i = 24; i < x->nassign; i++)
			x->assign[i].end_s = dl[1] * 10;
		ck_assert_int_eq(saturn_mu_better(SATURN_FAIR_BOUNDED, &m, x, y, dl), 0);
		ck_assert_int_eq(saturn_mu_better(SATURN_FAIR_BOUNDED, &m, y, x, dl), 1);
		saturn_plan_destroy(x);
		saturn_plan_destroy(y);
	}
	saturn_plan_destroy(joint);
	saturn_plan_destroy(bd);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* A heavier small batch goes first under weighted even when later. */
START_TEST(test_weight_order)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_mu_t m;
	int eight = 8;
	double spb = 1, c[2];

	fx_add_node(p, "n1", 8);
	/* two batches of one 8-GPU task each, 1000 s and 1200 s: by weight
	 * the longer one goes first when it weighs 2 */
	fx_add_task(p, "x", 1000, 1, &eight, &spb);
	fx_add_task(p, "y", 1200, 1, &eight, &spb);
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	ck_assert_int_eq(saturn_mu_init(&m, 2, 2, 2, 0), 0);
	m.batch_of_task[1] = m.user_of_batch[1] = 1;
	plan = mu_plan_ok(SATURN_FAIR_WEIGHTED, &m, p, 0.2);
	saturn_mu_completions(&m, plan, c);
	ck_assert_double_eq_tol(c[0], 1000, 1e-6);
	saturn_plan_destroy(plan);
	m.weight[1] = 2;
	plan = mu_plan_ok(SATURN_FAIR_WEIGHTED, &m, p, 0.2);
	saturn_mu_completions(&m, plan, c);
	ck_assert_double_eq_tol(c[1], 1200, 1e-6);
	ck_assert_double_eq_tol(c[0], 2200, 1e-6);
	saturn_plan_destroy(plan);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* --- limits ------------------------------------------------------------ */

START_TEST(test_limits)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_planner_opts_t o;
	saturn_plan_t *plan;
	saturn_mu_t m;
	int g2[2] = {2, 4};
	double spb[2] = {1, 0.6};

	fx_add_node(p, "n1", 8);
	fx_add_node(p, "n2", 8);
	/* user 0: 6 tasks of 2 or 4 GPUs, capped at 4 GPUs and 2 tasks at
	 * once; user 1: 2 tasks, uncapped */
	for (int i = 0; i < 8; i++) {
		char id[8];

		snprintf(id, sizeof(id), "t%d", i);
		fx_add_task(p, id, 1000, 2, g2, spb);
	}
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	ck_assert_int_eq(saturn_mu_init(&m, 8, 2, 2, 1), 0);
	for (int t = 0; t < 8; t++) {
		m.batch_of_task[t] = t >= 6;
		if (t < 6)
			m.group_of_task[t][0] = 0;
	}
	m.user_of_batch[1] = 1;
	m.max_gpus[0] = 4;
	m.max_jobs[0] = 2;
	o = fx_opts(0.2);
	/* the planner alone runs more of user 0's tasks at once */
	plan = saturn_planner_solve(p, &o, &err);
	ck_assert_ptr_nonnull(plan);
	ck_assert_int_eq(saturn_mu_limits_check(&m, p, plan, &err), -1);
	ck_assert_msg(strstr(err.text, "limit group 0 over its caps"), "%s", err.text);
	ck_assert_int_eq(saturn_mu_apply_limits(&m, p, plan, &err), 0);
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), 0);
	ck_assert_msg(saturn_mu_limits_check(&m, p, plan, &err) == 0, "%s", err.text);
	saturn_plan_destroy(plan);
	/* every objective plans within the caps */
	for (int obj = SATURN_FAIR_NONE; obj <= SATURN_FAIR_BOUNDED; obj++) {
		plan = mu_plan_ok(obj, &m, p, 0.2);
		ck_assert_msg(saturn_mu_limits_check(&m, p, plan, &err) == 0, "%s", err.text);
		saturn_plan_destroy(plan);
	}
	/* a cap of 2 GPUs: the 4-GPU option is replaced by the 2-GPU one */
	m.max_gpus[0] = 2;
	m.max_jobs[0] = 0;
	plan = saturn_planner_solve(p, &o, &err);
	ck_assert_int_eq(saturn_mu_apply_limits(&m, p, plan, &err), 0);
	for (int t = 0; t < 6; t++)
		ck_assert_int_eq(plan->assign[t].gpus, 2);
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), 0);
	ck_assert_int_eq(saturn_mu_limits_check(&m, p, plan, &err), 0);
	/* user 0's tasks one after the other: 6 x 1000 s */
	ck_assert_double_ge(plan->makespan_s, 6 * 1000 - 1e-6);
	saturn_plan_destroy(plan);
	/* a cap no option meets: counted, the tasks kept */
	m.max_gpus[0] = 1;
	plan = saturn_planner_solve(p, &o, &err);
	ck_assert_int_eq(saturn_mu_apply_limits(&m, p, plan, &err), 6);
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), 0);
	ck_assert_int_eq(saturn_mu_limits_check(&m, p, plan, &err), 0);
	saturn_plan_destroy(plan);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* running tasks hold their part of the cap */
START_TEST(test_limits_running)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_mu_t m;
	int two = 2;
	double spb = 1;

	fx_add_node(p, "n1", 8);
	fx_add_task(p, "r", 500, 1, &two, &spb);
	fx_add_task(p, "q", 100, 1, &two, &spb);
	fx_set_running(p, 0, 0);
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	ck_assert_int_eq(saturn_mu_init(&m, 2, 1, 1, 1), 0);
	m.group_of_task[0][0] = m.group_of_task[1][0] = 0;
	m.max_jobs[0] = 1;
	plan = mu_plan_ok(SATURN_FAIR_NONE, &m, p, 0.2);
	ck_assert_double_eq_tol(plan->assign[1].start_s, 500, 1e-6);
	saturn_plan_destroy(plan);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* the stock-Slurm bound: the users' GPU counts, first come first served */
START_TEST(test_stock_deadlines)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_mu_t m;
	int g[2] = {4, 8};
	double spb[2] = {2, 1}, dl[2];

	fx_add_node(p, "n1", 8);
	/* batch 0 (submitted -100): 2 tasks asking for 4 GPUs (2000 s each
	 * there, 1000 s on 8); batch 1 (submitted -50): 1 task asking for 8 */
	fx_add_task(p, "a0", 1000, 2, g, spb);
	fx_add_task(p, "a1", 1000, 2, g, spb);
	fx_add_task(p, "b0", 1000, 2, g, spb);
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	ck_assert_int_eq(saturn_mu_init(&m, 3, 2, 2, 0), 0);
	m.batch_of_task[2] = m.user_of_batch[1] = 1;
	m.submit[0] = -100;
	m.submit[1] = -50;
	m.req_gpus[0] = m.req_gpus[1] = 4;
	m.req_gpus[2] = 8;
	ck_assert_int_eq(saturn_mu_stock_deadlines(&m, p, dl), 0);
	/* a0 and a1 side by side on 4 GPUs each until 2000, then b0: 3000 */
	ck_assert_double_eq_tol(dl[0], 2000, 1e-6);
	ck_assert_double_eq_tol(dl[1], 3000, 1e-6);
	/* the problem is left as it was */
	ck_assert_int_eq(p->tasks[0].noptions, 2);
	ck_assert_int_eq(p->tasks[0].options[0].gpus, 4);
	/* within the limits: batch 0's user runs one task at a time, so a1
	 * waits for a0 (2000-4000 s) and b0 for a1's GPUs (4000-5000 s) */
	{
		saturn_mu_t c;
		double dc[2];

		ck_assert_int_eq(saturn_mu_init(&c, 3, 2, 2, 1), 0);
		memcpy(c.batch_of_task, m.batch_of_task, 3 * sizeof(int));
		memcpy(c.req_gpus, m.req_gpus, 3 * sizeof(int));
		c.user_of_batch[1] = 1;
		c.submit[0] = -100;
		c.submit[1] = -50;
		c.group_of_task[0][0] = c.group_of_task[1][0] = 0;
		c.max_jobs[0] = 1;
		ck_assert_int_eq(saturn_mu_stock_deadlines(&c, p, dc), 0);
		ck_assert_double_eq_tol(dc[0], 4000, 1e-6);
		ck_assert_double_eq_tol(dc[1], 5000, 1e-6);
		saturn_mu_free(&c);
	}
	/* Slurm's order is by priority: batch 1 weighing more runs first
	 * (0-1000 s on 8 GPUs), then a0 and a1 (1000-3000 s) */
	{
		saturn_mu_t c;
		double dc[2];

		ck_assert_int_eq(saturn_mu_init(&c, 3, 2, 2, 0), 0);
		memcpy(c.batch_of_task, m.batch_of_task, 3 * sizeof(int));
		memcpy(c.req_gpus, m.req_gpus, 3 * sizeof(int));
		c.user_of_batch[1] = 1;
		c.submit[0] = -100;
		c.submit[1] = -50;
		c.weight[0] = 10;
		c.weight[1] = 1000;
		ck_assert_int_eq(saturn_mu_stock_deadlines(&c, p, dc), 0);
		ck_assert_double_eq_tol(dc[1], 1000, 1e-6);
		ck_assert_double_eq_tol(dc[0], 3000, 1e-6);
		saturn_mu_free(&c);
	}
	/* bounded by it: every batch by its stock completion, the makespan
	 * shorter (8 GPUs each: 3000 s in all at most) */
	m.deadline = calloc(2, sizeof(double));
	memcpy(m.deadline, dl, sizeof(dl));
	plan = mu_plan_ok(SATURN_FAIR_BOUNDED, &m, p, 0.2);
	ck_assert_double_le(saturn_mu_value(SATURN_FAIR_BOUNDED, &m, plan, dl), 1 + 1e-9);
	ck_assert_double_le(plan->makespan_s, 3000 + 1e-6);
	saturn_plan_destroy(plan);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* saturn_bound=stock: no held task gets an option longer than its user's
 * request, so GPUs free at least as often as under stock Slurm (here the
 * 2-GPU option, 48 s against 27 s on the 4 GPUs asked for, is not used;
 * the makespan alone would use it: four tasks side by side) */
START_TEST(test_stock_turnover)
{
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_plan_t *plan;
	saturn_planner_opts_t o;
	saturn_mu_t m;
	int g[2] = {2, 4};
	double spb[2] = {1.2, 0.68};

	fx_add_node(p, "n1", 8);
	for (int t = 0; t < 5; t++) {
		char id[8];

		snprintf(id, sizeof(id), "t%d", t);
		fx_add_task(p, id, 40, 2, g, spb);
	}
	ck_assert_int_eq(saturn_problem_check(p, &err), 0);
	ck_assert_int_eq(saturn_mu_init(&m, 5, 2, 2, 0), 0);
	m.batch_of_task[4] = m.user_of_batch[1] = 1;
	m.submit[0] = -10;
	m.submit[1] = -5;
	for (int t = 0; t < 5; t++)
		m.req_gpus[t] = 4;
	m.deadline = calloc(2, sizeof(double));
	ck_assert_int_eq(saturn_mu_stock_deadlines(&m, p, m.deadline), 0);
	saturn_planner_opts_init(&o);
	o.time_limit_s = 0.2;
	plan = saturn_mu_plan(SATURN_FAIR_BOUNDED, &m, p, &o, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	for (int i = 0; i < plan->nassign; i++) {
		ck_assert_int_eq(plan->assign[i].gpus, 4);
		ck_assert_int_eq(p->tasks[plan->assign[i].task].options[plan->assign[i].option].gpus, 4);
	}
	ck_assert_int_eq(saturn_plan_validate(plan, p, &err), 0);
	/* the problem keeps its options */
	ck_assert_int_eq(p->tasks[0].noptions, 2);
	saturn_plan_destroy(plan);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* compaction: a plan in stages gets its gaps filled, no task later */
START_TEST(test_compact)
{
	saturn_mu_t m;
	saturn_problem_t *p = two_batches(&m, 1);
	saturn_planner_opts_t o;
	saturn_error_t err = {{0}};
	saturn_plan_t *plan, *before;
	double *tag = calloc(27, sizeof(double));

	/* B's stage first, then A's: A's tasks see a GPU busy until B's last
	 * task on it ends */
	for (int t = 0; t < 27; t++)
		tag[t] = t < 24 ? 2 : 1;
	o = fx_opts(0.5);
	plan = saturn_fair_plan(p, tag, &o, &err);
	ck_assert_msg(plan != NULL, "%s", err.text);
	before = saturn_plan_copy(plan);
	ck_assert_int_eq(saturn_mu_compact(&m, p, plan, &err), 0);
	ck_assert_msg(saturn_plan_validate(plan, p, &err) == 0, "%s", err.text);
	for (int t = 0; t < 27; t++)
		ck_assert_double_le(plan->assign[t].start_s, before->assign[t].start_s + 1e-6);
	ck_assert_double_le(plan->makespan_s, before->makespan_s + 1e-6);
	saturn_plan_destroy(before);
	saturn_plan_destroy(plan);
	free(tag);
	saturn_mu_free(&m);
	saturn_problem_destroy(p);
}
END_TEST

/* --- batches in saturn-problem/1 ------------------------------------------ */

static const struct parse_case {
	const char *batches; /* the "batches" value, NULL = none */
	int rc;
	const char *want; /* error text part, or for rc 1 "" */
} parse_cases[] = {
    /* clang-format off */
	{NULL, 0, ""},
	{"[]", 1, ""},
	{"[{\"name\": \"x\", \"tasks\": [\"t0\"]}]", 1, ""},
	{"{}", -1, "batches: "},
	{"[1]", -1, "batches[0]: must be an object"},
	{"[{\"tasks\": []}]", -1, "batches[0]"},
	{"[{\"name\": \"\", \"tasks\": []}]", -1, "batches[0].name"},
	{"[{\"name\": \"x\"}]", -1, "batches[0]"},
	{"[{\"name\": \"x\", \"tasks\": [3]}]", -1, "batches[0].tasks[0]: must be a task id"},
	{"[{\"name\": \"x\", \"tasks\": [\"t9\"]}]", -1, "no task \"t9\" in the problem"},
	{"[{\"name\": \"x\", \"tasks\": [\"t0\"]}, {\"name\": \"x\", \"tasks\": []}]", -1,
	 "batches[1].name: \"x\" is batches[0]'s name too"},
	{"[{\"name\": \"x\", \"tasks\": [\"t0\", \"t0\"]}]", -1, "is in two batches"},
	{"[{\"name\": \"x\", \"tasks\": [], \"weight\": 0}]", -1, "batches[0].weight"},
	{"[{\"name\": \"x\", \"tasks\": [], \"max_gpus\": -1}]", -1, "batches[0].max_gpus"},
	{"[{\"name\": \"x\", \"tasks\": [], \"request_gpus\": 65}]", -1, "batches[0].request_gpus"},
	{"[{\"name\": \"x\", \"tasks\": [], \"submit_s\": \"now\"}]", -1, "batches[0].submit_s"},
    /* clang-format on */
};

START_TEST(test_parse)
{
	const struct parse_case *c = &parse_cases[_i];
	char buf[1024];
	saturn_problem_t *p = saturn_problem_create();
	saturn_error_t err = {{0}};
	saturn_mu_t m;
	int one = 1, rc;
	double spb = 1;

	fx_add_node(p, "n1", 8);
	fx_add_task(p, "t0", 10, 1, &one, &spb);
	fx_add_task(p, "t1", 10, 1, &one, &spb);
	snprintf(buf, sizeof(buf), "{\"format\": \"saturn-problem/1\"%s%s}",
		 c->batches ? ", \"batches\": " : "", c->batches ? c->batches : "");
	rc = saturn_mu_parse(buf, strlen(buf), p, &m, &err);
	ck_assert_msg(rc == c->rc, "%s: rc %d (%s)", buf, rc, err.text);
	if (rc < 0) {
		ck_assert_msg(strstr(err.text, c->want), "%s: %s", buf, err.text);
		ck_assert_ptr_null(m.batch_of_task);
	} else {
		/* every task in a batch of a known user */
		for (int t = 0; t < 2; t++) {
			ck_assert_int_ge(m.batch_of_task[t], 0);
			ck_assert_int_lt(m.batch_of_task[t], m.nbatches);
			ck_assert_int_lt(m.user_of_batch[m.batch_of_task[t]], m.nusers);
		}
		saturn_mu_free(&m);
	}
	saturn_problem_destroy(p);
}
END_TEST

/* --- the setting ---------------------------------------------------------- */

START_TEST(test_setting)
{
	saturn_sched_settings_t ss;

	saturn_sched_settings_init(&ss);
	fx_setting(&ss, "saturn_objective=weighted", 0, NULL);
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_WEIGHTED);
	ck_assert_str_eq(saturn_objective_name(ss.fairness), "weighted");
	fx_setting(&ss, "saturn_objective=bounded", 0, NULL);
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_BOUNDED);
	fx_setting(&ss, "saturn_objective=share", 0, NULL);
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_SHARE);
	fx_setting(&ss, "saturn_objective=fast", 1,
		   "saturn_objective=fast: must be makespan, share, weighted or bounded");
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_SHARE);
	ck_assert_int_eq(ss.bound, SATURN_BOUND_SHARE);
	fx_setting(&ss, "saturn_bound=stock", 0, NULL);
	ck_assert_int_eq(ss.bound, SATURN_BOUND_STOCK);
	fx_setting(&ss, "saturn_bound=slurm", 1, "saturn_bound=slurm: must be share or stock");
	fx_setting(&ss, "saturn_bound=share", 0, NULL);
	ck_assert_int_eq(ss.bound, SATURN_BOUND_SHARE);
	fx_setting(&ss, "saturn_objective=makespan", 0, NULL);
	ck_assert_int_eq(ss.fairness, SATURN_FAIR_NONE);
	ck_assert_str_eq(saturn_objective_name(ss.fairness), "makespan");
	saturn_sched_settings_free(&ss);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_from_snapshot);
	tcase_add_test(tc, test_limit_releases);
	tcase_add_test(tc, test_deadlines);
	tcase_add_test(tc, test_weighted);
	tcase_add_test(tc, test_bounded);
	tcase_add_test(tc, test_weight_order);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_limits_running);
	tcase_add_test(tc, test_compact);
	tcase_add_test(tc, test_stock_deadlines);
	tcase_add_test(tc, test_stock_turnover);
	tcase_add_loop_test(tc, test_parse, 0, sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_test(tc, test_setting);
}

int main(void)
{
	return fx_run_suite("multiuser", 120, add_tests);
}
