/* internode-bench.c - multi-node options predicted from an inter-node
 * bandwidth (lib/job/internode.c) against their measured truth, on the
 * twonode family of saturn-bench: 32-64 jobs on 4 nodes x 8 GPUs, the mix
 * of five model sizes plus 40 B models that fit no single node.
 *
 * Truth: the analytic cost model (bench_model.h); a gang of K nodes x g
 * GPUs runs at sec_per_batch(P, B, tech, K·g, BW_IB). Per job a profile
 * as saturn-profile would write it: one-node options measured (truth),
 * peak memory 16 bytes per parameter (fsdp, pipeline: over g), NCCL bus
 * bandwidth BW_NVL at 2, 4, 8 GPUs; saturn_profile_predict_nodes() with
 * --bw adds ddp/fsdp options on 2-4 nodes. The 40 B jobs fit one node
 * only with offload (one GPU, slow) and have no ddp/fsdp option to
 * predict from: their gangs (8x2, 8x4, 4x4) are taken as measured by the
 * user, in all three plans.
 * Per instance three plans (saturn_planner_solve), each judged by running
 * it with the true times (same GPUs, same order per GPU):
 *   one    one-node options only (what sched/saturn plans without a
 *          bandwidth, predicted multi-node options being left out)
 *   pred   plus the predicted multi-node options, as predicted
 *   truth  the same options with their measured times (the plan once every
 *          prediction is re-measured)
 * against the best uniform request (saturn_planner_baseline at 1..32 GPUs
 * on the truth problem). Prints each ratio, the mean relative error of the
 * predictions the pred plan used and how many tasks it put on several
 * nodes; then means over the runs.
 *
 * --big-scale F multiplies the samples of the 40 B jobs (1: as
 * saturn-bench, where the 40 B jobs alone set the makespan; 0.05: short
 * 40 B runs, so the others' gangs matter).
 *
 * --jobs N: N jobs per instance instead of 32 to 64.
 *
 * Usage: internode-bench [--bw GB/s] [--big-scale F] [--jobs N]
 *                        [--runs N] [--time-limit S] [--seed N]
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_model.h"
#include "internode.h"
#include "model.h"
#include "planner.h"
#include "profile.h"

#define BW_IB 25e9 /* as saturn-bench: one 200 Gb/s NIC per node */

static const model_spec_t mix_models[] = {
	{"gpt2m", 0.35e9}, {"gpt2l", 0.77e9}, {"gpt2xl", 1.5e9},
	{"neo27", 2.7e9},  {"gptj", 6.0e9},   {"big40", 40e9}};

static double truth(double P, int B, int tech, int g, int k)
{
	return k > 1 ? sec_per_batch(P, B, tech, g * k, BW_IB)
		     : sec_per_batch(P, B, tech, g, BW_NVL);
}

static int tech_of(const char *name)
{
	for (int t = 0; t < NTECH; t++)
		if (!strcmp(tech_names[t], name))
			return t;
	return -1;
}

typedef struct job {
	double P;
	int B;
	double batches;
	saturn_profile_task_t *pt; /* the profile's task (owned by prof) */
} job_t;

/* The profile of one job with its predicted options (none for 40 B). */
static saturn_profile_t *job_profile(const job_t *j, double bw_gbs)
{
	saturn_profile_t *pr = saturn_profile_create();
	saturn_profile_hw_t *hw;
	saturn_profile_task_t *pt;
	saturn_internode_t in = {bw_gbs, 4, "--bw"};
	saturn_error_t err = {{0}};

	if (!pr || !(hw = pr->hw = calloc(1, sizeof(*hw))) ||
	    !(pt = pr->tasks = calloc(1, sizeof(*pt))) ||
	    !(hw->nccl = calloc(3, sizeof(*hw->nccl))) ||
	    !(pt->options = calloc(NTECH * 4, sizeof(*pt->options))))
		exit(2);
	pr->nhw = 1;
	pr->ntasks = 1;
	hw->gpus = 8;
	hw->nnccl = 3;
	for (int i = 0; i < 3; i++) {
		hw->nccl[i].gpus = 2 << i;
		hw->nccl[i].allreduce_busbw_gbs = BW_NVL / 1e9;
		hw->nccl[i].allgather_busbw_gbs = BW_NVL / 1e9;
	}
	pt->signature = xstrdup("job");
	pt->batches = j->batches;
	for (int t = 0; t < NTECH; t++)
		for (int g = 1; g <= 8; g *= 2) {
			double s = truth(j->P, j->B, t, g, 1);
			saturn_profile_option_t *o = &pt->options[pt->noptions];

			if (!(s > 0))
				continue;
			o->technique = xstrdup(tech_names[t]);
			o->gpus = g;
			o->sec_per_batch = s;
			o->status = SATURN_OPT_MEASURED;
			o->peak_mem_mb = 16.0 * j->P / 1e6 /
					 (t == T_FSDP || t == T_PIPE ? g : 1);
			pt->noptions++;
		}
	if (saturn_profile_predict_nodes(pr, &in, &err) < 0) {
		fprintf(stderr, "internode-bench: %s\n", err.text);
		exit(2);
	}
	return pr;
}

/* kind 0: one-node options; 1: plus predicted ones as predicted; 2: the
 * same with their true times. The 40 B jobs: their gangs, true times. */
static saturn_problem_t *make_problem(const job_t *jobs, int n,
				      saturn_profile_t **prof, int kind)
{
	saturn_problem_t *p = saturn_problem_create();
	static const int gang[][2] = {{8, 2}, {8, 4}, {4, 4}};
	saturn_error_t err = {{0}};

	for (int i = 0; i < 4; i++) {
		saturn_node_t nd = {0};
		char name[16];

		snprintf(name, sizeof(name), "node%d", i);
		nd.name = xstrdup(name);
		nd.gpus = 8;
		if (saturn_problem_add_node(p, &nd) < 0)
			exit(2);
	}
	for (int i = 0; i < n; i++) {
		const saturn_profile_task_t *pt = &prof[i]->tasks[0];
		saturn_task_t t = {0};
		char id[32];

		snprintf(id, sizeof(id), "job%d", i);
		t.id = xstrdup(id);
		t.batches = jobs[i].batches;
		t.options = calloc(pt->noptions + NTECH * 3 + 1,
				   sizeof(*t.options));
		if (!t.options)
			exit(2);
		for (int q = 0; q < pt->noptions; q++) {
			const saturn_profile_option_t *po = &pt->options[q];
			saturn_option_t *o = &t.options[t.noptions];
			int k = saturn_profile_option_nodes(po);

			if (k > 1 && kind == 0)
				continue;
			o->technique = xstrdup(po->technique);
			o->gpus = po->gpus;
			o->nodes = k;
			o->sec_per_batch =
			    kind == 2 ? truth(jobs[i].P, jobs[i].B,
					      tech_of(po->technique), po->gpus, k)
				      : po->sec_per_batch;
			t.noptions++;
		}
		if (jobs[i].P > 10e9) /* 40 B: the user's measured gangs */
			for (int tech = 0; tech < NTECH; tech++)
				for (int k = 0; k < 3; k++) {
					double s = truth(jobs[i].P, jobs[i].B,
							 tech, gang[k][0],
							 gang[k][1]);
					saturn_option_t *o =
					    &t.options[t.noptions];

					if (!(s > 0))
						continue;
					o->technique = xstrdup(tech_names[tech]);
					o->gpus = gang[k][0];
					o->nodes = gang[k][1];
					o->sec_per_batch = s;
					t.noptions++;
				}
		if (saturn_problem_add_task(p, &t) < 0)
			exit(2);
	}
	if (saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "internode-bench: bad instance: %s\n", err.text);
		exit(2);
	}
	return p;
}

/* The plan run with the true times: each task starts when all its GPUs
 * are free, in the plan's order of starts. Makespan; *err_sum and *nerr: the
 * relative errors of the predicted multi-node options used; *multi: tasks
 * on them. */
static double replay(const saturn_problem_t *p, const job_t *jobs,
		     const saturn_plan_t *pl, double *err_sum, int *nerr,
		     int *multi)
{
	double free_at[4][8] = {{0}}, mk = 0;
	int *order = malloc(sizeof(int) * (size_t)pl->nassign);

	if (!order)
		exit(2);
	for (int i = 0; i < pl->nassign; i++)
		order[i] = i;
	for (int i = 1; i < pl->nassign; i++) /* insertion sort by start */
		for (int k = i; k > 0 && pl->assign[order[k]].start_s <
					      pl->assign[order[k - 1]].start_s;
		     k--) {
			int x = order[k];

			order[k] = order[k - 1];
			order[k - 1] = x;
		}
	for (int r = 0; r < pl->nassign; r++) {
		const saturn_assign_t *a = &pl->assign[order[r]];
		const saturn_option_t *o = &p->tasks[a->task].options[a->option];
		const job_t *j = &jobs[a->task];
		int nn = a->nnodes > 1 ? a->nnodes : 1;
		double s = truth(j->P, j->B, tech_of(o->technique), o->gpus,
				 nn), start = 0, end;

		if (nn > 1 && j->P < 10e9) { /* a predicted option */
			(*multi)++;
			*err_sum += fabs(o->sec_per_batch - s) / s;
			(*nerr)++;
		}
		for (int q = 0; q < nn; q++) {
			int node = q ? a->more_nodes[q - 1] : a->node;

			for (int x = 0; x < a->gpus; x++) {
				double f = free_at[node][a->gpu_ids[q * a->gpus + x]];

				if (f > start)
					start = f;
			}
		}
		end = start + j->batches * s;
		for (int q = 0; q < nn; q++) {
			int node = q ? a->more_nodes[q - 1] : a->node;

			for (int x = 0; x < a->gpus; x++)
				free_at[node][a->gpu_ids[q * a->gpus + x]] = end;
		}
		if (end > mk)
			mk = end;
	}
	free(order);
	return mk;
}

static saturn_plan_t *solve(const saturn_problem_t *p, double limit,
			    unsigned seed)
{
	saturn_planner_opts_t o;
	saturn_error_t err = {{0}};
	saturn_plan_t *pl;

	saturn_planner_opts_init(&o);
	o.time_limit_s = limit;
	o.seed = seed;
	if (!(pl = saturn_planner_solve(p, &o, &err))) {
		fprintf(stderr, "internode-bench: %s\n", err.text);
		exit(1);
	}
	return pl;
}

int main(int argc, char **argv)
{
	double bw = BW_IB / 1e9, limit = 5, big_scale = 1;
	int runs = 6, njobs = 0;
	unsigned long seed = 1;
	double sum[3] = {0}, esum = 0, maxr[3] = {0};
	int nbig = 0, nmulti = 0, nerr = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bw") && i + 1 < argc)
			bw = atof(argv[++i]);
		else if (!strcmp(argv[i], "--big-scale") && i + 1 < argc)
			big_scale = atof(argv[++i]);
		else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			njobs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--time-limit") && i + 1 < argc)
			limit = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: internode-bench [--bw GB/s] "
					"[--big-scale F] [--jobs N] [--runs N] "
					"[--time-limit S] "
					"[--seed N]\n");
			return 64;
		}
	}
	if (runs < 1 || !(bw > 0) || !(big_scale > 0) || njobs < 0 ||
	    njobs > 1000) {
		fprintf(stderr, "internode-bench: --runs >= 1, --bw > 0\n");
		return 64;
	}
	printf("# inter-node bandwidth given %g GB/s (truth %g GB/s), 40 B "
	       "samples x %g, planner %g s, %d runs\n",
	       bw, BW_IB / 1e9, big_scale, limit, runs);
	printf("%4s %5s %4s %9s %9s %9s %7s %6s\n", "run", "jobs", "40B",
	       "one/base", "pred/base", "truth/base", "err", "onpred");
	for (int r = 0; r < runs; r++) {
		int n = njobs ? njobs
			      : 32 + (runs > 1 ? 32 * r / (runs - 1) : 32),
		    big = 0;
		job_t *jobs = calloc(n, sizeof(*jobs));
		saturn_profile_t **prof = calloc(n, sizeof(*prof));
		saturn_problem_t *p[3];
		double base = INFINITY, mk[3], es = 0;
		int ne = 0, multi = 0;
		saturn_error_t err = {{0}};

		if (!jobs || !prof)
			exit(2);
		rng_state = seed_mix(seed * 1000003ULL + (unsigned)r);
		for (int i = 0; i < n; i++) {
			const model_spec_t *m = &mix_models[irand(6)];
			double samples;
			int epochs;

			if (m->params > 10e9 && irand(2))
				m = &mix_models[irand(5)];
			jobs[i].P = m->params;
			jobs[i].B = batch_sizes[irand(4)];
			samples = 500 * pow(100, unif()) *
				  (m->params > 10e9 ? big_scale : 1);
			epochs = 1 + irand(3);
			jobs[i].batches = ceil(samples * epochs / jobs[i].B);
			big += m->params > 10e9;
			prof[i] = job_profile(&jobs[i], bw);
		}
		for (int k = 0; k < 3; k++)
			p[k] = make_problem(jobs, n, prof, k);
		for (int g = 1; g <= 32; g *= 2) {
			saturn_plan_t *x = saturn_planner_baseline(p[2], g, &err);

			if (!x) {
				fprintf(stderr, "internode-bench: %s\n", err.text);
				return 1;
			}
			if (x->makespan_s < base)
				base = x->makespan_s;
			saturn_plan_destroy(x);
		}
		for (int k = 0; k < 3; k++) {
			saturn_plan_t *pl = solve(p[k], limit, (unsigned)seed);
			double e = 0;
			int q = 0, mu = 0;

			mk[k] = replay(p[k], jobs, pl, &e, &q, &mu);
			if (k == 1) {
				es = q ? e / q : 0;
				ne = q;
				multi = mu;
				esum += e;
				nerr += q;
			}
			saturn_plan_destroy(pl);
		}
		if (getenv("BENCH_DEBUG"))
			fprintf(stderr, "base %g mk %g %g %g\n", base, mk[0], mk[1], mk[2]);
		printf("%4d %5d %4d %9.4f %9.4f %9.4f %6.1f%% %6d\n", r, n, big,
		       mk[0] / base, mk[1] / base, mk[2] / base, 100 * es,
		       multi);
		fflush(stdout);
		for (int k = 0; k < 3; k++) {
			sum[k] += mk[k] / base;
			if (mk[k] / base > maxr[k])
				maxr[k] = mk[k] / base;
			saturn_problem_destroy(p[k]);
		}
		nbig += big;
		nmulti += multi;
		(void)ne;
		for (int i = 0; i < n; i++)
			saturn_profile_destroy(prof[i]);
		free(prof);
		free(jobs);
	}
	printf("SUMMARY runs %d  makespan / best uniform request: one-node "
	       "mean %.4f max %.4f  predicted mean %.4f max %.4f  measured "
	       "mean %.4f max %.4f  prediction error of the used multi-node "
	       "options mean %.1f%%  tasks on them %d  40 B jobs %d\n",
	       runs, sum[0] / runs, maxr[0], sum[1] / runs, maxr[1],
	       sum[2] / runs, maxr[2], nerr ? 100 * esum / nerr : 0.0, nmulti,
	       nbig);
	return 0;
}
