/* fair-bench.c - how two users' batches share the cluster: the joint plan
 * sched/saturn makes today against each batch alone, a static fair-share
 * split of the GPUs, and saturn_fairness=share (the users one after the
 * other in order of their fair-share finish tags).
 *
 * User A submits a large batch at t = 0, user B a small one at t = t_B;
 * 4 nodes x 8 GPUs, NVLink; the cost model of saturn-bench (README.md).
 * Policies, each batch's completion measured from its own submission:
 *   alone   each batch planned by itself on the whole cluster
 *   split   each batch planned by itself on its fair share (nodes / users),
 *           from its submission: the "fair-share deadline" D of the batch
 *   joint   today: A planned at 0; at t_B the tasks of A that started keep
 *           running (remaining batches), and A's held tasks and B's are
 *           re-planned together to minimise the makespan of all of them
 *   share   saturn_fairness=share (lib/sched/fairness.c) on the problem of
 *           `joint`: users in order of their fair-share finish tags; here
 *           B (small, so its tag is earlier) is planned first, on the GPUs
 *           as A's running tasks free them; then A's held tasks on what is
 *           left (each GPU busy until the later of its occupants ends)
 * Slowdown = completion / completion alone. "D met" says whether the batch
 * finished by its fair-share deadline (the no-harm bound).
 *
 * Usage: fair-bench [seeds=5] [time_limit_s=3] [t_B_s=3600] [a_tasks=60]
 *                   [b_tasks=4] [first_seed=1]
 * libsaturn only (no Slurm); every plan comes from saturn_planner_solve().
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "model.h"
#include "planner.h"
#include "sched_core.h"

#include "bench_model.h"

#define NODES 4
#define GPUS 8

/* One fine-tuning job of the sweep grid; its options are rebuilt in the
 * same order every time, so an option index stays valid across problems. */
typedef struct job {
	char id[48];
	double params;
	int B;
	double batches;
} job_t;

static void make_jobs(job_t *j, int n, const char *user)
{
	for (int i = 0; i < n; i++) {
		draw_job(&j[i].params, &j[i].B, &j[i].batches);
		snprintf(j[i].id, sizeof(j[i].id), "%s-%d", user, i);
	}
}

static double job_spb(const job_t *j, int opt)
{
	return grid_option_spb(j->params, j->B, GPUS, opt);
}

/* Append job j with `batches` left; running: is_running on node/gpus of a
 * (an assignment of an earlier plan, times shifted by the caller). */
static void add_job(saturn_problem_t *p, const job_t *j, double batches,
		    const saturn_assign_t *running)
{
	saturn_task_t t = {0};

	t.id = xstrdup(j->id);
	t.batches = batches;
	add_grid_options(&t, j->params, j->B, GPUS, 0);
	if (running)
		set_running(&t, running->node, running->option, running->gpus, running->gpu_ids);
	if (saturn_problem_add_task(p, &t) < 0)
		exit(2);
}

/* A problem with `nodes` free nodes. */
static saturn_problem_t *new_problem(int nodes)
{
	return grid_problem(nodes, GPUS);
}

static double limit_s = 3;
static unsigned plan_seed = 1;

static saturn_plan_t *solve(saturn_problem_t *p)
{
	saturn_error_t err = {{0}};
	saturn_planner_opts_t o;
	saturn_plan_t *pl;

	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "fair-bench: bad problem: %s\n", err.text);
		exit(2);
	}
	saturn_planner_opts_init(&o);
	o.time_limit_s = limit_s;
	o.seed = plan_seed;
	pl = saturn_planner_solve(p, &o, &err);
	if (!pl) {
		fprintf(stderr, "fair-bench: %s\n", err.text);
		exit(1);
	}
	return pl;
}

/* Makespan of jobs j[0..n) planned alone on `nodes` free nodes. */
static double alone(const job_t *j, int n, int nodes)
{
	saturn_problem_t *p = new_problem(nodes);
	saturn_plan_t *pl;
	double mk;

	for (int i = 0; i < n; i++)
		add_job(p, &j[i], j[i].batches, NULL);
	pl = solve(p);
	mk = pl->makespan_s;
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
	return mk;
}

/* Where A stands at t_B under its plan from 0: per task 0 done (end in
 * done_end), 1 running, 2 held. */
static void state_at(const saturn_plan_t *pa, const job_t *a, int na, double tb, int *state,
		     double *done_end)
{
	*done_end = 0;
	for (int i = 0; i < na; i++) {
		const saturn_assign_t *x = &pa->assign[i];

		if (x->end_s <= tb) {
			state[i] = 0;
			if (x->end_s > *done_end)
				*done_end = x->end_s;
		} else {
			state[i] = x->start_s < tb ? 1 : 2;
		}
	}
	(void)a;
}

static double left_batches(const job_t *j, const saturn_assign_t *x, double tb)
{
	double b = j->batches - (tb - x->start_s) / job_spb(j, x->option);

	return b > 0 ? b : 0;
}

/* joint: A's running, A's held and B re-planned together at t_B. */
static void joint(const saturn_plan_t *pa, const job_t *a, int na, const job_t *b, int nb,
		  double tb, double *ca, double *cb)
{
	saturn_problem_t *p = new_problem(NODES);
	int *st = xcalloc((size_t)na, sizeof(int));
	int *idx = xcalloc((size_t)na, sizeof(int));
	saturn_plan_t *pl;
	double done;
	int k = 0;

	state_at(pa, a, na, tb, st, &done);
	for (int i = 0; i < na; i++) {
		if (st[i] == 0)
			continue;
		idx[k++] = i;
		add_job(p, &a[i],
			st[i] == 1 ? left_batches(&a[i], &pa->assign[i], tb) : a[i].batches,
			st[i] == 1 ? &pa->assign[i] : NULL);
	}
	for (int i = 0; i < nb; i++)
		add_job(p, &b[i], b[i].batches, NULL);
	pl = solve(p);
	*ca = done;
	*cb = 0;
	for (int i = 0; i < pl->nassign; i++) {
		double e = tb + pl->assign[i].end_s;

		if (i < k && e > *ca)
			*ca = e;
		if (i >= k && e - tb > *cb)
			*cb = e - tb;
	}
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
	free(st);
	free(idx);
}

/* share: the joint problem of `joint`, planned by saturn_fair_plan() with
 * the tags saturn_fair_tags() gives (what saturn_fairness=share does). */
static void share(const saturn_plan_t *pa, const job_t *a, int na, const job_t *b, int nb,
		  double tb, double *ca, double *cb)
{
	saturn_problem_t *p = new_problem(NODES);
	saturn_snapshot_t *s = saturn_snapshot_create();
	saturn_sched_build_t bd = {0};
	saturn_planner_opts_t o;
	saturn_error_t err = {{0}};
	int *st = xcalloc((size_t)na, sizeof(int));
	int *map = xcalloc((size_t)(na + nb), sizeof(int));
	double *tag = xcalloc((size_t)(na + nb), sizeof(double));
	saturn_plan_t *pl;
	double done;
	int k = 0;

	if (!s)
		exit(2);
	s->now = tb;
	state_at(pa, a, na, tb, st, &done);
	for (int i = 0; i < na + nb; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(s);
		int is_a = i < na;

		if (!j)
			exit(2);
		j->uid = is_a ? 1 : 2;
		snprintf(j->batch, sizeof(j->batch), "%s", is_a ? "big" : "small");
		j->submit_time = is_a ? 0 : tb;
		if (is_a && st[i] == 0)
			continue;
		map[k++] = i;
		if (!is_a)
			add_job(p, &b[i - na], b[i - na].batches, NULL);
		else
			add_job(p, &a[i],
				st[i] == 1 ? left_batches(&a[i], &pa->assign[i], tb) : a[i].batches,
				st[i] == 1 ? &pa->assign[i] : NULL);
	}
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "fair-bench: bad problem: %s\n", err.text);
		exit(2);
	}
	bd.problem = p;
	bd.job_of_task = map;
	if (saturn_fair_tags(s, &bd, tag) < 0)
		exit(2);
	saturn_planner_opts_init(&o);
	o.time_limit_s = limit_s * 2; /* two groups: limit_s each */
	o.seed = plan_seed;
	if (!(pl = saturn_fair_plan(p, tag, &o, &err))) {
		fprintf(stderr, "fair-bench: %s\n", err.text);
		exit(1);
	}
	*ca = done;
	*cb = 0;
	for (int i = 0; i < pl->nassign; i++) {
		double e = pl->assign[i].end_s;

		if (map[i] < na && tb + e > *ca)
			*ca = tb + e;
		if (map[i] >= na && e > *cb)
			*cb = e;
	}
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
	saturn_snapshot_destroy(s);
	free(st);
	free(map);
	free(tag);
}

typedef struct acc {
	double sum, max;
	int n, met;
} acc_t;

static void acc_add(acc_t *s, double v, int met)
{
	s->sum += v;
	if (s->n == 0 || v > s->max)
		s->max = v;
	s->n++;
	s->met += met;
}

int main(int argc, char **argv)
{
	int seeds = argc > 1 ? atoi(argv[1]) : 5;
	double tb = argc > 3 ? atof(argv[3]) : 3600;
	int na = argc > 4 ? atoi(argv[4]) : 60;
	int nb = argc > 5 ? atoi(argv[5]) : 4;
	int first = argc > 6 ? atoi(argv[6]) : 1;
	/* [policy][user] */
	acc_t sd[3][2] = {{{0}}};
	static const char *pol[] = {"split", "joint", "share"};

	if (argc > 2)
		limit_s = atof(argv[2]);
	if (seeds < 1 || na < 1 || nb < 1 || tb < 0 || limit_s <= 0) {
		fprintf(stderr, "usage: fair-bench [seeds] [time_limit_s] [t_B_s] "
				"[a_tasks] [b_tasks] [first_seed]\n");
		return 2;
	}
	printf("# %d x %d GPUs; user A: %d tasks at 0, user B: %d tasks at "
	       "t_B = %.0f s; %.3g s per solve; hours from each batch's "
	       "submission, slowdown = / alone; D = fair-share deadline "
	       "(split), * = D missed\n",
	       NODES, GPUS, na, nb, tb, limit_s);
	printf("%4s | %7s %7s | %7s %7s | %13s %13s | %13s %13s | %13s %13s\n", "seed", "A_alone",
	       "B_alone", "A_D", "B_D", "A_joint", "B_joint", "A_share", "B_share", "A_split",
	       "B_split");
	for (int s = first; s < first + seeds; s++) {
		job_t *a = xcalloc((size_t)na, sizeof(*a));
		job_t *b = xcalloc((size_t)nb, sizeof(*b));
		saturn_problem_t *p;
		saturn_plan_t *pa;
		double aa, ba, ad, bd, c[3][2];

		rng_state = seed_mix((uint64_t)s * 1000003ULL);
		plan_seed = (unsigned)s;
		make_jobs(a, na, "a");
		make_jobs(b, nb, "b");
		p = new_problem(NODES);
		for (int i = 0; i < na; i++)
			add_job(p, &a[i], a[i].batches, NULL);
		pa = solve(p);
		aa = pa->makespan_s;
		ba = alone(b, nb, NODES);
		ad = alone(a, na, NODES / 2);
		bd = alone(b, nb, NODES / 2);
		c[0][0] = ad;
		c[0][1] = bd;
		joint(pa, a, na, b, nb, tb, &c[1][0], &c[1][1]);
		share(pa, a, na, b, nb, tb, &c[2][0], &c[2][1]);
		printf("%4d | %7.2f %7.2f | %7.2f %7.2f |", s, aa / 3600, ba / 3600, ad / 3600,
		       bd / 3600);
		for (int k = 1; k <= 3; k++) {
			int q = k % 3; /* joint, share, split */

			for (int u = 0; u < 2; u++) {
				double al = u ? ba : aa, d = u ? bd : ad;
				int met = c[q][u] <= d * 1.0001 + 1;

				printf(" %6.2f %5.1fx%s", c[q][u] / 3600, c[q][u] / al,
				       met ? " " : "*");
				acc_add(&sd[q][u], c[q][u] / al, met);
			}
			printf(k < 3 ? " |" : "\n");
		}
		fflush(stdout);
		saturn_plan_destroy(pa);
		saturn_problem_destroy(p);
		free(a);
		free(b);
	}
	for (int q = 0; q < 3; q++)
		printf("SUMMARY %-7s A slowdown mean %.2f max %.2f D met %d/%d  "
		       "B slowdown mean %.2f max %.2f D met %d/%d\n",
		       pol[q], sd[q][0].sum / sd[q][0].n, sd[q][0].max, sd[q][0].met, sd[q][0].n,
		       sd[q][1].sum / sd[q][1].n, sd[q][1].max, sd[q][1].met, sd[q][1].n);
	return 0;
}
