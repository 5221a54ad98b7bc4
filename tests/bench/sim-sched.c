/* sim-sched.c - saturn-sim's two schedulers.
 *
 * Backfill (sim_backfill): Slurm-like first-come-first-served with EASY
 * backfill on the users' own requests. Each job asks for its trace's GPU
 * count on any GPU type (it does not choose one). In arrival order, a job
 * starts on the best-fitting node (fewest free GPUs that still fit) of any
 * type that measured it at that count (ties: the lowest-numbered node, as
 * Slurm with equal node weights; --bf-prefer newest: the node of the type
 * listed last in --types first, as node weights that favour the newest
 * GPUs). The first job that cannot start
 * gets a reservation: the node and time at which it could start soonest,
 * computed from the running jobs' time limits (not their true ends, which
 * Slurm does not know). Later jobs start now only where they fit and
 * either use another node or end, by their own time limit, before that
 * reservation. One reservation per pass (EASY; Slurm's backfill reserves
 * for up to bf_max_job_test jobs).
 *
 * Saturn (sim_saturn_cycle): the held jobs (all, or the first max_plan in
 * arrival order) become one saturn_problem_t: a node per simulated node
 * (class = its GPU type), the running jobs' GPUs busy until their true end
 * (the plugin's profile is exact here), and per job every measured GPU
 * type x count 1/2/4/8 as an option (seconds per batch = 1 / steps per
 * second). saturn_planner_solve() with the cycle's budget; the jobs whose
 * planned start is now start with the planned option, node and GPUs.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "planner.h"

#include "sim.h"

static int node_free(const sim_node_t *n)
{
	int f = 0;

	for (int i = 0; i < SIM_GPN; i++)
		f += n->owner[i] < 0;
	return f;
}

/* The earliest time node n has `need` GPUs free, by the running jobs'
 * time limits. */
static double node_ready(const sim_t *s, int n, int need)
{
	double ends[SIM_GPN];
	int ne = 0, free = 0;

	for (int i = 0; i < SIM_GPN; i++) {
		int o = s->nodes[n].owner[i];

		if (o < 0)
			free++;
		else
			ends[ne++] = s->jobs[o].limit_end;
	}
	if (free >= need)
		return s->now;
	/* one entry per GPU: sorted, the need-free-th smallest */
	for (int a = 1; a < ne; a++)
		for (int b = a; b > 0 && ends[b] < ends[b - 1]; b--) {
			double x = ends[b];

			ends[b] = ends[b - 1];
			ends[b - 1] = x;
		}
	return ends[need - free - 1];
}

/* Best-fitting node of an allowed type for job j (count index k) with
 * `need` free GPUs, skipping node `avoid` unless its limit ends before
 * `shadow`. -1 when none. */
static int fit_node(const sim_t *s, const sim_job_t *j, int k, int avoid,
		    double shadow)
{
	int best = -1, bestf = SIM_GPN + 1, need = 1 << k;

	for (int n = 0; n < s->nnodes; n++) {
		int t = s->nodes[n].type, f;
		double rt = sim_runtime(s, j, t, k);

		if (rt < 0)
			continue;
		f = node_free(&s->nodes[n]);
		if (f < need)
			continue;
		if (best >= 0 && s->prefer_newest && t != s->nodes[best].type) {
			if (t < s->nodes[best].type)
				continue; /* node weights: the later --types first */
		} else if (f >= bestf) {
			continue;
		}
		if (n == avoid &&
		    s->now + s->latency + s->limit_factor * rt > shadow)
			continue;
		best = n;
		bestf = f;
	}
	return best;
}

void sim_backfill(sim_t *s)
{
	int resv = -1, out = 0;
	double shadow = INFINITY;
	int maxfree = 0;

	s->passes++;
	for (int n = 0; n < s->nnodes && maxfree < SIM_GPN; n++) {
		int f = node_free(&s->nodes[n]);

		if (f > maxfree)
			maxfree = f;
	}
	for (int q = 0; q < s->nqueue; q++) {
		int ji = s->queue[q], n = -1;
		sim_job_t *j = &s->jobs[ji];
		int need = 1 << j->kreq;

		if (need <= maxfree)
			n = fit_node(s, j, j->kreq, resv, shadow);
		if (n >= 0 && sim_start(s, ji, n, j->kreq, NULL) == 0) {
			if (node_free(&s->nodes[n]) + need == maxfree) {
				maxfree = 0; /* recount */
				for (int m = 0; m < s->nnodes && maxfree < SIM_GPN; m++) {
					int f = node_free(&s->nodes[m]);

					if (f > maxfree)
						maxfree = f;
				}
			}
			continue;
		}
		s->queue[out++] = ji;
		if (resv < 0) { /* the first blocked job: its reservation */
			for (int m = 0; m < s->nnodes; m++) {
				double r;

				if (sim_runtime(s, j, s->nodes[m].type, j->kreq) < 0)
					continue;
				r = node_ready(s, m, need);
				if (r < shadow) {
					shadow = r;
					resv = m;
				}
			}
		}
	}
	s->nqueue = out;
}

static char *dup(const char *x)
{
	size_t n = strlen(x) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, x, n);
	return d;
}

/* The problem of this cycle; *held gets the jobs planned (task order).
 * NULL on ENOMEM. */
static saturn_problem_t *build(sim_t *s, int *held, int *nheld)
{
	saturn_problem_t *p = saturn_problem_create();
	char name[32];
	int nh = s->nqueue;

	if (!p)
		return NULL;
	if (s->max_plan > 0 && nh > s->max_plan)
		nh = s->max_plan;
	for (int n = 0; n < s->nnodes; n++) {
		saturn_node_t nd = {0};
		int owners[SIM_GPN], no = 0;

		snprintf(name, sizeof(name), "n%d", n);
		nd.name = dup(name);
		nd.gpus = SIM_GPN;
		nd.klass = dup(s->tab->type[s->nodes[n].type]);
		nd.busy = calloc(SIM_GPN, sizeof(*nd.busy));
		for (int i = 0; i < SIM_GPN; i++) {
			int o = s->nodes[n].owner[i], seen = 0;

			for (int a = 0; a < no; a++)
				seen |= owners[a] == o;
			if (o >= 0 && !seen)
				owners[no++] = o;
		}
		for (int a = 0; nd.busy && a < no; a++) {
			const sim_job_t *j = &s->jobs[owners[a]];
			saturn_busy_t *b = &nd.busy[nd.nbusy++];

			b->ngpus = 1 << j->k;
			b->gpu_ids = malloc(sizeof(int) * b->ngpus);
			if (b->gpu_ids)
				memcpy(b->gpu_ids, j->gpu, sizeof(int) * b->ngpus);
			b->until_s = j->end > s->now ? j->end - s->now : 0;
		}
		if (!nd.name || !nd.klass || !nd.busy ||
		    saturn_problem_add_node(p, &nd) < 0) {
			saturn_problem_destroy(p);
			return NULL; /* leaks nd on this path: the run ends */
		}
	}
	for (int h = 0; h < nh; h++) {
		const sim_job_t *j = &s->jobs[s->queue[h]];
		saturn_task_t t = {0};

		snprintf(name, sizeof(name), "j%d", s->queue[h]);
		t.id = dup(name);
		t.batches = j->steps;
		t.options = calloc(SIM_MAX_TYPES * SIM_NSCALE, sizeof(*t.options));
		for (int ty = 0; t.options && ty < s->tab->ntypes; ty++)
			for (int k = 0; k < SIM_NSCALE; k++) {
				double v = s->tab->sps[j->jt][ty][k];
				saturn_option_t *o;

				if (v <= 0)
					continue;
				o = &t.options[t.noptions++];
				o->technique = dup("dp");
				o->gpus = 1 << k;
				o->sec_per_batch = 1.0 / v;
				o->klass = dup(s->tab->type[ty]);
			}
		if (!t.id || !t.options || saturn_problem_add_task(p, &t) < 0) {
			saturn_problem_destroy(p);
			return NULL;
		}
		held[h] = s->queue[h];
	}
	*nheld = nh;
	return p;
}

double sim_saturn_cycle(sim_t *s)
{
	saturn_planner_opts_t o;
	saturn_error_t err;
	saturn_problem_t *p;
	saturn_plan_t *plan, *warm = NULL;
	int *held, nheld = 0, out = 0;
	double next = -1;
	struct timespec a, b;

	s->cycles++;
	if (s->nqueue == 0) {
		saturn_plan_destroy(s->prev);
		s->prev = NULL;
		return -1;
	}
	held = malloc(sizeof(int) * s->nqueue);
	p = held ? build(s, held, &nheld) : NULL;
	if (!p || saturn_problem_check(p, &err) < 0) {
		fprintf(stderr, "saturn-sim: problem at t=%.0f: %s\n", s->now,
			p ? err.text : "out of memory");
		s->errors++;
		saturn_problem_destroy(p);
		free(held);
		return -1;
	}
	saturn_planner_opts_init(&o);
	o.time_limit_s = s->solve_s;
	o.seed = 1;
	o.max_evals = s->evals;
	o.use_milp = 0;
	if (s->prev && s->min_gain > 0 && s->min_gain < 1) {
		/* as sched/saturn carries its plan: the last one, its times
		 * from now, seeds the search and stays unless a plan shorter
		 * by min_gain is found */
		double dt = s->now - s->prev_t;

		warm = saturn_plan_copy(s->prev);
		for (int i = 0; warm && i < warm->nassign; i++) {
			saturn_assign_t *as = &warm->assign[i];
			double d = as->end_s - as->start_s;

			as->start_s = as->start_s - dt > 0 ? as->start_s - dt : 0;
			as->end_s = as->start_s + d;
		}
		if (warm) {
			warm->makespan_s = 0;
			for (int i = 0; i < warm->nassign; i++)
				if (warm->assign[i].end_s > warm->makespan_s)
					warm->makespan_s = warm->assign[i].end_s;
		}
		o.warm = warm;
		o.stop_ratio = 1.0 / (1.0 - s->min_gain);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	plan = saturn_planner_solve(p, &o, &err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (getenv("SATURN_SIM_DEBUG") && plan)
		fprintf(stderr, "t=%.1f held %d plan %.1f bound %.1f %s %s\n", s->now,
			nheld, plan->makespan_s, plan->lower_bound_s, plan->method,
			plan->status);
	s->solve_wall += (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
	if (!plan) {
		fprintf(stderr, "saturn-sim: planner: %s\n", err.text);
		s->errors++;
	}
	/* a plan searched for (not the carried one kept) is applied after
	 * the solve, as in the plugin */
	s->extra = plan && strcmp(plan->method, "warm") ? s->solve_delay : 0;
	for (int i = 0; plan && i < plan->nassign; i++) {
		const saturn_assign_t *as = &plan->assign[i];
		int k = 0;

		if (as->start_s > 1e-6) {
			if (next < 0 || s->now + as->start_s < next)
				next = s->now + as->start_s;
			continue;
		}
		while ((1 << k) < as->gpus)
			k++;
		if (sim_start(s, held[as->task], as->node, k, as->gpu_ids) < 0)
			s->errors++;
	}
	for (int q = 0; q < s->nqueue; q++)
		if (s->jobs[s->queue[q]].state == SJ_QUEUED)
			s->queue[out++] = s->queue[q];
	s->nqueue = out;
	s->extra = 0;
	saturn_plan_destroy(warm);
	saturn_plan_destroy(s->prev);
	s->prev = plan;
	s->prev_t = s->now;
	saturn_problem_destroy(p);
	free(held);
	return next;
}
