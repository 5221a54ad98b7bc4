/* test_listsched.c - plan construction (lib/planner/listsched.c, listsched.h): the
 * GPUs of a problem by id, placement by id (FCFS, carried plans), the count
 * view the decoder and the baseline place by, and the two views agreeing.
 * Cases: GPU ids disjoint while tasks overlap, busy GPUs and running tasks'
 * ids honoured, release times honoured, ties broken the same way every time. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_fixtures.h"
#include "planner_int.h"
#include "sched_core.h"

static const opt_spec_t two[] = {{"ddp", 2, 1.0, NULL}};
static const opt_spec_t one[] = {{"ddp", 1, 1.0, NULL}};

/* The ids of assignment a as "i,j,..." into buf (128 bytes). */
static const char *ids_into(char *buf, const saturn_assign_t *a)
{
	size_t k = 0;

	buf[0] = '\0';
	for (int g = 0; g < a->gpus && k < 128 - 4; g++)
		k += (size_t)snprintf(buf + k, 128 - k, "%s%d", g ? "," : "",
				      a->gpu_ids[g]);
	return buf;
}

/* The same into a static buffer: one call per expression. */
static const char *ids_of(const saturn_assign_t *a)
{
	static char buf[128];

	return ids_into(buf, a);
}

static void valid(const saturn_problem_t *p, const saturn_plan_t *pl)
{
	saturn_error_t err = {{0}};
	const char *why = fx_validate(p, pl);

	ck_assert_msg(!why, "fx_validate: %s", why);
	ck_assert_msg(saturn_plan_validate(pl, p, &err) == 0, "validate: %s",
		      err.text);
}

/* Busy entries and running tasks land on their ids, the maximum wins, ids
 * out of range are ignored. */
START_TEST(test_gpu_free_create)
{
	static const int busy01[] = {0, 1}, busy1[] = {1}, run3[] = {3};
	saturn_problem_t *p = fx_problem();
	double **f;

	fx_node(p, "a", 4, NULL);
	fx_node(p, "b", 2, NULL);
	fx_busy(p, 0, busy01, 2, 50);
	fx_busy(p, 0, busy1, 1, 70);
	fx_task(p, "r", 20, 0, one, 1); /* 20 s */
	fx_running(p, 0, 0, 0, run3);
	fx_check(p);
	f = spase_gpu_free_create(p);
	ck_assert_ptr_nonnull(f);
	ck_assert_double_eq(f[0][0], 50);
	ck_assert_double_eq(f[0][1], 70);
	ck_assert_double_eq(f[0][2], 0);
	ck_assert_double_eq(f[0][3], 20);
	ck_assert_double_eq(f[1][0], 0);
	ck_assert_double_eq(f[1][1], 0);
	spase_gpu_free_destroy(f, p->nnodes);
	spase_gpu_free_destroy(NULL, 0);
	saturn_problem_destroy(p);
}
END_TEST

/* The G GPUs free first, ties to the lower id, ids ascending; the same
 * answer every time. */
START_TEST(test_gpu_pick_ties)
{
	static const struct {
		double f[8];
		int n, G;
		double ready;
		int ids[8];
	} c[] = {
	    {{0, 0, 0, 0}, 4, 2, 0, {0, 1}},
	    {{5, 0, 0, 5}, 4, 2, 0, {1, 2}},
	    {{5, 0, 0, 5}, 4, 3, 5, {0, 1, 2}},
	    {{9, 3, 7, 3, 1, 9, 0, 7}, 8, 4, 3, {1, 3, 4, 6}},
	    {{9, 3, 7, 3, 1, 9, 0, 7}, 8, 5, 7, {1, 2, 3, 4, 6}},
	    {{2, 2, 2, 2, 2, 2, 2, 2}, 8, 8, 2, {0, 1, 2, 3, 4, 5, 6, 7}},
	};

	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++)
		for (int rep = 0; rep < 2; rep++) {
			int ids[8];

			ck_assert_double_eq(
			    spase_gpu_pick(c[k].f, c[k].n, c[k].G, ids),
			    c[k].ready);
			for (int g = 0; g < c[k].G; g++)
				ck_assert_msg(ids[g] == c[k].ids[g],
					      "case %zu: id %d is %d, not %d",
					      k, g, ids[g], c[k].ids[g]);
		}
}
END_TEST

/* Placement by id: overlapping tasks get disjoint ids, a busy GPU and a
 * running task's GPU are not used before they are free, a release time
 * holds the start back, and a GPU freed is reused by id. */
START_TEST(test_place_ids)
{
	static const int busy0[] = {0}, run1[] = {1};
	saturn_problem_t *p = fx_problem();
	saturn_plan_t *pl;
	double **f;

	fx_node(p, "a", 4, NULL);
	fx_busy(p, 0, busy0, 1, 30);
	fx_task(p, "r", 10, 0, one, 1); /* running on GPU 1 until 10 */
	fx_task(p, "x", 40, 0, two, 1); /* GPUs 2,3 on [0, 40) */
	fx_task(p, "y", 20, 0, two, 1); /* GPUs 0,1 from 30 (busy GPU 0) */
	fx_task(p, "z", 5, 45, one, 1); /* released at 45: GPU 2 */
	fx_running(p, 0, 0, 0, run1);
	fx_check(p);
	pl = saturn_plan_create(p->ntasks);
	f = spase_gpu_free_create(p);
	ck_assert_ptr_nonnull(pl);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(spase_plan_pin_running(pl, p), 0);
	ck_assert_int_eq(spase_place_ids(f, pl, p, 1, 0, 0, 0), 0);
	ck_assert_int_eq(spase_place_ids(f, pl, p, 2, 0, 0, 0), 0);
	ck_assert_int_eq(
	    spase_place_ids(f, pl, p, 3, 0, 0, p->tasks[3].release_s), 0);
	spase_plan_set_makespan(pl);
	ck_assert_str_eq(ids_of(&pl->assign[0]), "1");
	ck_assert_double_eq(pl->assign[1].start_s, 0);
	ck_assert_str_eq(ids_of(&pl->assign[1]), "2,3");
	ck_assert_double_eq(pl->assign[2].start_s, 30);
	ck_assert_str_eq(ids_of(&pl->assign[2]), "0,1");
	ck_assert_double_eq(pl->assign[3].start_s, 45);
	ck_assert_str_eq(ids_of(&pl->assign[3]), "2");
	ck_assert_double_eq(pl->makespan_s, 50);
	ck_assert_double_eq(f[0][0], 50);
	ck_assert_double_eq(f[0][2], 50);
	ck_assert_double_eq(f[0][3], 40);
	valid(p, pl);
	spase_gpu_free_destroy(f, p->nnodes);
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}
END_TEST

/* The count view: free(t) = #{GPUs free by t}, and its earliest start for
 * g GPUs from r (no other task placed) is max(r, the time placement by id
 * finds), on random free times: the two views of one model agree. */
START_TEST(test_count_view_agrees)
{
	uint64_t s = 42;

	for (int k = 0; k < 2000; k++) {
		int n = 1 + fx_rand(&s, 8), G = 1 + fx_rand(&s, n), ids[8], fa;
		double f[8], r = fx_rand(&s, 3) ? 0 : 5.0 * fx_rand(&s, 10);
		double d = fx_rand(&s, 4) ? 1 + fx_rand(&s, 20) : 0, ready, e;
		spase_prof_t pr;

		for (int i = 0; i < n; i++)
			f[i] = fx_rand(&s, 2) ? 0 : 10.0 * fx_rand(&s, 6);
		ck_assert_int_eq(spase_prof_init(&pr, 2), 0);
		ck_assert_int_eq(spase_prof_from_gpus(&pr, f, n), 0);
		ck_assert_double_eq(pr.t[0], 0);
		for (int j = 0; j < pr.n; j++) {
			int cnt = 0;

			for (int i = 0; i < n; i++)
				cnt += f[i] <= pr.t[j];
			ck_assert_int_eq(pr.free[j], cnt);
		}
		ck_assert_int_eq(pr.free[pr.n - 1], n);
		ready = spase_gpu_pick(f, n, G, ids);
		e = spase_prof_earliest(&pr, G, d, r, &fa);
		ck_assert_double_eq(e, ready > r ? ready : r);
		ck_assert_int_ge(fa, G);
		spase_prof_free(&pr);
	}
}
END_TEST

/* Placement by count, then ids in start order: GPUs overlapping in time
 * never share an id, busy GPUs and running tasks keep theirs, releases
 * hold; FCFS and carried plans (placement by id) likewise. Random problems
 * with busy GPUs, running tasks, releases, classes and zero-length tasks. */
START_TEST(test_random_plans_valid)
{
	uint64_t s = 7 + (uint64_t)_i;

	for (int k = 0; k < 150; k++) {
		saturn_problem_t *p = fx_random(&s, 4, 12);
		saturn_error_t err = {{0}};
		saturn_plan_t *f, *c;

		fx_check(p);
		f = saturn_sched_fcfs(p);
		ck_assert_ptr_nonnull(f);
		valid(p, f);
		c = saturn_sched_carry(f, p);
		ck_assert_ptr_nonnull(c);
		valid(p, c);
		saturn_plan_destroy(c);
		saturn_plan_destroy(f);
		for (int g = 1; g <= 8; g *= 2) {
			saturn_plan_t *b = saturn_planner_baseline(p, g, &err);

			ck_assert_msg(b != NULL, "baseline %d: %s", g,
				      err.text);
			valid(p, b);
			saturn_plan_destroy(b);
		}
		saturn_problem_destroy(p);
	}
}
END_TEST

/* Ties between nodes go to the lower node index, the same way each time:
 * arrival order (the baseline), the decoder and FCFS on two equal nodes
 * put a lone task on the first. */
START_TEST(test_node_ties)
{
	saturn_problem_t *p = fx_problem();
	saturn_error_t err = {{0}};
	spase_inst_t *in;
	spase_work_t *w;
	spase_sol_t *sol;
	saturn_plan_t *pl;
	int opt[1] = {0};

	fx_node(p, "a", 4, NULL);
	fx_node(p, "b", 4, NULL);
	fx_task(p, "x", 10, 0, two, 1);
	fx_check(p);
	in = spase_inst_create(p);
	w = spase_work_create(in);
	sol = spase_sol_create(in);
	pl = saturn_plan_create(1);
	ck_assert(in && w && sol && pl);
	ck_assert_int_eq(spase_place_arrival(in, opt, pl, &err), 0);
	ck_assert_int_eq(pl->assign[0].node, 0);
	for (int rep = 0; rep < 3; rep++) {
		sol->opt[0] = 0;
		ck_assert_double_eq(spase_decode(w, sol, 1), 10);
		ck_assert_int_eq(w->node[0], 0);
		ck_assert_double_eq(w->start[0], 0);
	}
	saturn_plan_destroy(pl);
	pl = saturn_sched_fcfs(p);
	ck_assert_ptr_nonnull(pl);
	ck_assert_int_eq(pl->assign[0].node, 0);
	ck_assert_str_eq(ids_of(&pl->assign[0]), "0,1");
	saturn_plan_destroy(pl);
	spase_sol_destroy(sol);
	spase_work_destroy(w);
	spase_inst_destroy(in);
	saturn_problem_destroy(p);
}
END_TEST

/* Building the same plans twice gives the same plans (no hidden state). */
START_TEST(test_deterministic)
{
	uint64_t s = 99;

	for (int k = 0; k < 50; k++) {
		saturn_problem_t *p = fx_random(&s, 3, 10);
		saturn_plan_t *a, *b;

		fx_check(p);
		a = saturn_sched_fcfs(p);
		b = saturn_sched_fcfs(p);
		ck_assert(a && b);
		for (int i = 0; i < p->ntasks; i++) {
			char x[128], y[128];

			ck_assert_int_eq(a->assign[i].node, b->assign[i].node);
			ck_assert_double_eq(a->assign[i].start_s,
					    b->assign[i].start_s);
			ck_assert_str_eq(ids_into(x, &a->assign[i]),
					 ids_into(y, &b->assign[i]));
		}
		saturn_plan_destroy(a);
		saturn_plan_destroy(b);
		a = saturn_planner_baseline(p, 2, NULL);
		b = saturn_planner_baseline(p, 2, NULL);
		ck_assert(a && b);
		for (int i = 0; i < p->ntasks; i++) {
			char x[128], y[128];

			ck_assert_int_eq(a->assign[i].node, b->assign[i].node);
			ck_assert_double_eq(a->assign[i].start_s,
					    b->assign[i].start_s);
			ck_assert_str_eq(ids_into(x, &a->assign[i]),
					 ids_into(y, &b->assign[i]));
		}
		saturn_plan_destroy(a);
		saturn_plan_destroy(b);
		saturn_problem_destroy(p);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("listsched");
	TCase *tc = tcase_create("listsched");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_gpu_free_create);
	tcase_add_test(tc, test_gpu_pick_ties);
	tcase_add_test(tc, test_place_ids);
	tcase_add_test(tc, test_count_view_agrees);
	tcase_add_loop_test(tc, test_random_plans_valid, 0, 2);
	tcase_add_test(tc, test_node_ties);
	tcase_add_test(tc, test_deterministic);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
