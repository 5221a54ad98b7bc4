/* multi-bench.c - several users' batches of different sizes arriving over
 * time, planned under each saturn_objective and under a stand-in for stock
 * Slurm; each batch's slowdown against running alone, and the makespan.
 *
 * 4 nodes x 8 GPUs, NVLink; the cost model of saturn-bench (README.md).
 * Batches (user: tasks at submission):
 *   a  user 1: 40 tasks at 0
 *   b  user 2: 12 tasks at 1800 s
 *   c  user 3:  4 tasks at 3600 s
 *   d  user 2:  4 tasks at 5400 s
 * sched/saturn re-plans at every arrival: tasks already started keep
 * running (their remaining batches), the held ones and the new batch are
 * planned with the objective (multiuser.h; share: fairness.h with each
 * user's latest fair-share deadline as the tag). "stock" stands in for
 * Slurm with the users' own requests: every task asks for 4 GPUs (the
 * first technique that fits on 4), first come first served in
 * submission order, each at the earliest time 4 GPUs are free on a node
 * (saturn_sched_fcfs; no re-planning). "alone": each batch planned by
 * itself on the whole cluster. Slowdown = (completion - submission) /
 * that of the batch alone. All users weigh the same unless weights are
 * given (the priority Slurm would give each user's jobs). bounded-stock:
 * saturn_objective=bounded with saturn_bound=stock (the bound: first come
 * first served with 4 GPUs per task, from the re-planning time).
 *
 * Usage: multi-bench [seeds=3] [time_limit_s=2] [first_seed=1]
 *                    [w1 w2 w3 (weights of users 1-3, default 1)]
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairness.h"
#include "model.h"
#include "multiuser.h"
#include "planner.h"
#include "sched_core.h"

#include "bench_model.h"

#define NODES 4
#define GPUS 8
#define NB 4
#define NPOL 6
#define OBJ_BOUNDED_STOCK 100

static const struct {
	const char *name;
	int user, ntasks;
	double submit;
} batches[NB] = {{"a", 0, 40, 0}, {"b", 1, 12, 1800}, {"c", 2, 4, 3600}, {"d", 1, 4, 5400}};
static const char *pol_names[NPOL] = {"makespan", "share",		"weighted",
				      "bounded",  "bounded-stock", "stock"};
static const int pol_obj[NPOL] = {SATURN_FAIR_NONE,    SATURN_FAIR_SHARE, SATURN_FAIR_WEIGHTED,
				  SATURN_FAIR_BOUNDED, OBJ_BOUNDED_STOCK, -1};
static double user_w[3] = {1, 1, 1};

typedef struct job {
	char id[48];
	double params;
	int B, batch;
	double batches;
	/* the current plan, absolute times; planned 0 = not yet */
	int planned, option, node, gpus;
	int ids[GPUS];
	double start, end;
} job_t;

static void make_jobs(job_t *j, int n, int batch)
{
	for (int i = 0; i < n; i++) {
		draw_job(&j[i].params, &j[i].B, &j[i].batches);
		j[i].batch = batch;
		snprintf(j[i].id, sizeof(j[i].id), "%s-%d", batches[batch].name, i);
	}
}

/* options in a fixed order (technique, then 1, 2, 4, 8 GPUs); request:
 * only the 4-GPU one of the first technique that fits (the user's ask) */
static void add_job(saturn_problem_t *p, const job_t *j, double left, int running, int request,
		    double release)
{
	saturn_task_t t = {0};

	t.id = xstrdup(j->id);
	t.batches = left;
	t.release_s = release;
	add_grid_options(&t, j->params, j->B, GPUS, request);
	if (running)
		set_running(&t, j->node, j->option, j->gpus, j->ids);
	if (saturn_problem_add_task(p, &t) < 0)
		exit(2);
}

static double job_spb(const job_t *j, int opt)
{
	return grid_option_spb(j->params, j->B, GPUS, opt);
}

static saturn_problem_t *new_problem(void)
{
	return grid_problem(NODES, GPUS);
}

static double limit_s = 2;
static unsigned plan_seed = 1;

static void check(saturn_problem_t *p)
{
	saturn_error_t err = {{0}};

	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "multi-bench: bad problem: %s\n", err.text);
		exit(2);
	}
}

static saturn_planner_opts_t opts(void)
{
	saturn_planner_opts_t o;

	saturn_planner_opts_init(&o);
	o.time_limit_s = limit_s;
	o.seed = plan_seed;
	return o;
}

/* batch b planned alone on the whole cluster: its makespan */
static double alone(const job_t *j, int n)
{
	saturn_problem_t *p = new_problem();
	saturn_planner_opts_t o = opts();
	saturn_error_t err = {{0}};
	saturn_plan_t *pl;
	double mk;

	for (int i = 0; i < n; i++)
		add_job(p, &j[i], j[i].batches, 0, 0, 0);
	check(p);
	if (!(pl = saturn_planner_solve(p, &o, &err))) {
		fprintf(stderr, "multi-bench: %s\n", err.text);
		exit(1);
	}
	mk = pl->makespan_s;
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
	return mk;
}

/* stock: every task's request, first come first served */
static void stock(job_t *j, int n, double *done)
{
	saturn_problem_t *p = new_problem();
	saturn_plan_t *pl;

	for (int i = 0; i < n; i++)
		add_job(p, &j[i], j[i].batches, 0, 1, batches[j[i].batch].submit);
	check(p);
	if (!(pl = saturn_sched_fcfs(p)))
		exit(2);
	for (int b = 0; b < NB; b++)
		done[b] = 0;
	for (int i = 0; i < n; i++)
		if (pl->assign[i].end_s > done[j[i].batch])
			done[j[i].batch] = pl->assign[i].end_s;
	saturn_plan_destroy(pl);
	saturn_problem_destroy(p);
}

/* sched/saturn with objective obj: re-planned at every arrival */
static void replan(job_t *j, int n, int policy, double *done)
{
	for (int i = 0; i < n; i++)
		j[i].planned = 0;
	for (int k = 0; k < NB; k++) {
		int obj = policy;
		double t = batches[k].submit;
		saturn_problem_t *p = new_problem();
		saturn_planner_opts_t o = opts();
		saturn_error_t err = {{0}};
		saturn_plan_t *pl;
		saturn_mu_t m;
		int *map = xcalloc((size_t)n, sizeof(int)), np = 0, bidx[NB], uidx[3], nbt = 0, nu = 0;

		for (int b = 0; b < NB; b++)
			bidx[b] = -1;
		for (int u = 0; u < 3; u++)
			uidx[u] = -1;
		for (int i = 0; i < n; i++) {
			int b = j[i].batch, running;

			if (b > k || (j[i].planned && j[i].end <= t))
				continue;
			running = j[i].planned && j[i].start < t;
			add_job(p, &j[i],
				running ? fmax(1, j[i].batches - (t - j[i].start) / job_spb(&j[i], j[i].option)) :
					  j[i].batches,
				running, 0, 0);
			if (running) /* what the remaining batches take, exactly */
				p->tasks[np].batches = (j[i].end - t) / job_spb(&j[i], j[i].option);
			map[np++] = i;
			if (bidx[b] < 0)
				bidx[b] = nbt++;
			if (uidx[batches[b].user] < 0)
				uidx[batches[b].user] = nu++;
		}
		check(p);
		if (saturn_mu_init(&m, np, nbt, nu, 0) < 0)
			exit(2);
		for (int q = 0; q < np; q++) {
			int b = j[map[q]].batch;

			m.batch_of_task[q] = bidx[b];
			m.user_of_batch[bidx[b]] = uidx[batches[b].user];
			m.submit[bidx[b]] = batches[b].submit - t;
			m.weight[bidx[b]] = user_w[batches[b].user];
			m.req_gpus[q] = 4;
		}
		if (obj == OBJ_BOUNDED_STOCK) {
			/* saturn_bound=stock: as the plugin computes it */
			m.deadline = xcalloc((size_t)nbt, sizeof(double));
			if (saturn_mu_stock_deadlines(&m, p, m.deadline) < 0)
				exit(2);
			obj = SATURN_FAIR_BOUNDED;
		}
		if (obj == SATURN_FAIR_SHARE && nu > 1) {
			/* each user's tag: the deadline of their last batch */
			double *dl = xcalloc((size_t)nbt, sizeof(double)), *ut = xcalloc(3, sizeof(double));
			double *tag = xcalloc((size_t)np, sizeof(double));

			saturn_mu_deadlines(&m, p, dl);
			for (int b = 0; b < nbt; b++)
				if (dl[b] > ut[m.user_of_batch[b]])
					ut[m.user_of_batch[b]] = dl[b];
			for (int q = 0; q < np; q++)
				tag[q] = ut[m.user_of_batch[m.batch_of_task[q]]];
			o.time_limit_s *= 2;
			pl = saturn_fair_plan(p, tag, &o, &err);
			if (pl && saturn_mu_compact(&m, p, pl, &err) < 0)
				exit(2);
			free(dl);
			free(ut);
			free(tag);
		} else {
			pl = saturn_mu_plan(obj == SATURN_FAIR_SHARE ? SATURN_FAIR_NONE : obj, &m, p, &o,
					    &err);
		}
		if (!pl) {
			fprintf(stderr, "multi-bench: %s\n", err.text);
			exit(1);
		}
		for (int q = 0; q < np; q++) {
			job_t *x = &j[map[q]];
			const saturn_assign_t *a = &pl->assign[q];

			if (p->tasks[q].is_running) {
				continue; /* keeps its place */
			}
			x->planned = 1;
			x->option = a->option;
			x->node = a->node;
			x->gpus = a->gpus;
			memcpy(x->ids, a->gpu_ids, sizeof(int) * (size_t)a->gpus);
			x->start = t + a->start_s;
			x->end = t + a->end_s;
		}
		saturn_plan_destroy(pl);
		saturn_mu_free(&m);
		saturn_problem_destroy(p);
		free(map);
	}
	for (int b = 0; b < NB; b++)
		done[b] = 0;
	for (int i = 0; i < n; i++)
		if (j[i].end > done[j[i].batch])
			done[j[i].batch] = j[i].end;
}

typedef struct acc {
	double sum, max;
	int n;
} acc_t;

static void acc_add(acc_t *s, double v)
{
	s->sum += v;
	if (s->n == 0 || v > s->max)
		s->max = v;
	s->n++;
}

int main(int argc, char **argv)
{
	int seeds = argc > 1 ? atoi(argv[1]) : 3;
	int first = argc > 3 ? atoi(argv[3]) : 1;
	acc_t sd[NPOL][NB + 1] = {{{0}}}; /* NB: the makespan */
	int n = 0;

	if (argc > 2)
		limit_s = atof(argv[2]);
	for (int u = 0; u < 3 && argc > 4 + u; u++)
		user_w[u] = atof(argv[4 + u]);
	if (seeds < 1 || limit_s <= 0) {
		fprintf(stderr, "usage: multi-bench [seeds] [time_limit_s] [first_seed] [w1 w2 w3]\n");
		return 2;
	}
	for (int b = 0; b < NB; b++)
		n += batches[b].ntasks;
	printf("# %d x %d GPUs; batches a (user 1, %d tasks at 0), b (user 2, %d at %.0f s), c (user 3, %d at %.0f s), d (user 2, %d at %.0f s); weights %g %g %g; %.3g s per solve\n",
	       NODES, GPUS, batches[0].ntasks, batches[1].ntasks, batches[1].submit, batches[2].ntasks,
	       batches[2].submit, batches[3].ntasks, batches[3].submit, user_w[0], user_w[1],
	       user_w[2], limit_s);
	printf("# per seed: slowdown of a b c d, makespan (h)\n");
	for (int s = first; s < first + seeds; s++) {
		job_t *j = xcalloc((size_t)n, sizeof(*j));
		double al[NB];
		int k = 0;

		rng_state = seed_mix((uint64_t)s * 1000003ULL);
		plan_seed = (unsigned)s;
		for (int b = 0; b < NB; b++) {
			make_jobs(j + k, batches[b].ntasks, b);
			al[b] = alone(j + k, batches[b].ntasks);
			k += batches[b].ntasks;
		}
		printf("%4d alone(h):", s);
		for (int b = 0; b < NB; b++)
			printf(" %.2f", al[b] / 3600);
		printf("\n");
		for (int q = 0; q < NPOL; q++) {
			double done[NB], mk = 0;

			if (pol_obj[q] < 0)
				stock(j, n, done);
			else
				replan(j, n, pol_obj[q], done);
			printf("     %-9s", pol_names[q]);
			for (int b = 0; b < NB; b++) {
				double x = (done[b] - batches[b].submit) / al[b];

				acc_add(&sd[q][b], x);
				printf(" %6.2f", x);
				if (done[b] > mk)
					mk = done[b];
			}
			acc_add(&sd[q][NB], mk / 3600);
			printf(" | %6.2f\n", mk / 3600);
			fflush(stdout);
		}
		free(j);
	}
	printf("\n| policy | a (40) | b (12) | c (4) | d (4) | makespan (h) |\n|---|---|---|---|---|---|\n");
	for (int q = 0; q < NPOL; q++) {
		printf("| %s |", pol_names[q]);
		for (int b = 0; b <= NB; b++)
			printf(" %.2f / %.2f |", sd[q][b].sum / sd[q][b].n, sd[q][b].max);
		printf("\n");
	}
	return 0;
}
