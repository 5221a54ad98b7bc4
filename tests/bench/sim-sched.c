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
 * Saturn (sim_saturn_cycle): sched/saturn's own cycle, saturn_cycle_run
 * (lib/sched/sched_cycle.h), as the plugin calls it. The snapshot: a node
 * per simulated node (its class = its GPU type), the running jobs' GPUs
 * busy until their true end (the profile is exact here), the queued jobs
 * held (all, or the first max_plan in arrival order: saturn_max_tasks).
 * The profiles: one batch per job type (jtK), one profile task per job
 * (its steps as batches), a profile per GPU type (jtK@TYPE) holding every
 * count measured there (seconds per batch = 1 / steps per second). The
 * cycle carries its plan, searches with the budget, keeps the carried plan
 * unless the new one gains saturn_min_gain, and releases the jobs due now:
 * they start on their decision's node (the first free GPUs, as Slurm
 * picks them) with its GPU count.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "planner.h"
#include "profile.h"
#include "sched_core.h"
#include "sched_cycle.h"

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

#define SIM_T0 1000000.0 /* epoch of the trace's start in the snapshots */

/* What the Saturn scheduler keeps between cycles: sched/saturn's cycle
 * state, the profiles (one batch per job type, "jtK", with a profile per
 * GPU type "jtK@TYPE" holding that type's measured counts) and the
 * snapshot it refills. */
typedef struct sim_saturn {
	saturn_cycle_state_t st;
	saturn_profset_t ps;
	saturn_sched_settings_t cfg;
	saturn_snapshot_t *snap;
} sim_saturn_t;

/* The profile of job type jt: one task per job of that type (its own
 * steps as batches), with every count measured on GPU type ty (ty < 0:
 * type 0's, as the batch's own profile; every class has its own). NULL on
 * ENOMEM. */
static saturn_profile_t *jt_profile(const sim_t *s, int jt, int ty)
{
	saturn_profile_t *pr = saturn_profile_create();
	char name[96];
	int n = 0, y = ty < 0 ? 0 : ty;

	if (!pr)
		return NULL;
	snprintf(name, sizeof(name), "jt%d", jt);
	pr->batch = dup(name);
	pr->created = 1;
	for (int i = 0; i < s->njobs; i++)
		n += s->jobs[i].jt == jt;
	pr->tasks = calloc(n ? n : 1, sizeof(*pr->tasks));
	if (!pr->batch || !pr->tasks)
		goto fail;
	for (int i = 0; i < s->njobs; i++) {
		saturn_profile_task_t *t;

		if (s->jobs[i].jt != jt)
			continue;
		t = &pr->tasks[pr->ntasks++];
		snprintf(name, sizeof(name), "job%d", i);
		t->signature = dup(name);
		t->task_ids = malloc(sizeof(int));
		t->options = calloc(SIM_NSCALE, sizeof(*t->options));
		if (!t->signature || !t->task_ids || !t->options)
			goto fail;
		t->task_ids[0] = i;
		t->ntask_ids = 1;
		t->batches = s->jobs[i].steps;
		if (ty >= 0 && !(t->klass = dup(s->tab->type[ty])))
			goto fail;
		for (int k = 0; k < SIM_NSCALE; k++) {
			saturn_profile_option_t *o = &t->options[t->noptions];
			double v = s->tab->sps[jt][y][k];

			if (!(o->technique = dup("dp")))
				goto fail;
			o->gpus = 1 << k;
			t->noptions++;
			if (v > 0) {
				o->sec_per_batch = 1.0 / v;
				o->status = SATURN_OPT_MEASURED;
			} else {
				o->status = SATURN_OPT_OOM;
			}
		}
	}
	return pr;
fail:
	saturn_profile_destroy(pr);
	return NULL;
}

/* The scheduler's state, made at the first cycle; NULL on ENOMEM. */
static sim_saturn_t *sat_init(sim_t *s)
{
	sim_saturn_t *z = calloc(1, sizeof(*z));

	if (!z || !(z->snap = saturn_snapshot_create()))
		goto fail;
	saturn_cycle_state_init(&z->st);
	saturn_sched_settings_init(&z->cfg);
	z->cfg.solver_time_s = s->solve_s;
	z->cfg.min_gain = s->min_gain;
	z->cfg.release_slack_s = 0;
	z->cfg.max_tasks = s->max_plan > 0 ? s->max_plan : SATURN_MAX_TASKS;
	z->ps.owns = 1;
	for (int jt = 0; jt < s->tab->njt; jt++) {
		char name[48];

		snprintf(name, sizeof(name), "jt%d", jt);
		for (int ty = -1; ty < s->tab->ntypes; ty++) {
			saturn_profile_t *pr = jt_profile(s, jt, ty);

			if (!pr || saturn_profset_add(&z->ps, 0, name, ty < 0 ? "" : s->tab->type[ty],
						      pr) < 0) {
				saturn_profile_destroy(pr);
				goto fail;
			}
		}
	}
	return z;
fail:
	sim_saturn_free(z);
	return NULL;
}

void sim_saturn_free(struct sim_saturn *z)
{
	if (!z)
		return;
	saturn_cycle_state_free(&z->st);
	saturn_profset_free(&z->ps);
	saturn_sched_settings_free(&z->cfg);
	saturn_snapshot_destroy(z->snap);
	free(z);
}

/* The snapshot of now: every node (class = its GPU type), the running
 * jobs' GPUs busy until their true end (the profile is exact here), the
 * queued jobs held (job type jt's batch "jtK", task id = the job's
 * index, its own steps as batches left). 0, or -1 on ENOMEM. */
static int snapshot(sim_t *s, saturn_snapshot_t *sn)
{
	saturn_snapshot_reset(sn);
	sn->now = SIM_T0 + s->now;
	sn->max_tasks = s->max_plan > 0 ? s->max_plan : SATURN_MAX_TASKS;
	for (int n = 0; n < s->nnodes; n++) {
		saturn_snap_node_t *nd = saturn_snapshot_add_node(sn);

		if (!nd)
			return -1;
		snprintf(nd->name, sizeof(nd->name), "n%d", n);
		nd->gpus = SIM_GPN;
		snprintf(nd->gpu_types, sizeof(nd->gpu_types), "%s", s->tab->type[s->nodes[n].type]);
		snprintf(nd->klass, sizeof(nd->klass), "%s", s->tab->type[s->nodes[n].type]);
	}
	for (int r = 0; r < s->nrun; r++) {
		const sim_job_t *j = &s->jobs[s->run[r]];
		saturn_snap_busy_t *b = saturn_snapshot_add_busy(sn);

		if (!b)
			return -1;
		b->node = j->node;
		b->gpu_mask = 0;
		for (int i = 0; i < (1 << j->k); i++)
			b->gpu_mask |= 1ULL << j->gpu[i];
		b->until = SIM_T0 + (j->end > s->now ? j->end : s->now);
	}
	for (int q = 0; q < s->nqueue; q++) {
		const sim_job_t *j = &s->jobs[s->queue[q]];
		saturn_snap_job_t *h = saturn_snapshot_add_job(sn);

		if (!h)
			return -1;
		h->job_id = 1 + (uint32_t)s->queue[q];
		h->array_job_id = 1000000 + (uint32_t)j->jt;
		h->task_id = s->queue[q];
		snprintf(h->batch, sizeof(h->batch), "jt%d", j->jt);
		h->uid = 0;
		h->state = SATURN_SNAP_HELD;
		h->req_gpus = j->g;
		h->submit_time = SIM_T0 + j->arrival;
		h->node = -1;
		h->batches_left = h->batches_done = -1;
	}
	return 0;
}

double sim_saturn_cycle(sim_t *s)
{
	sim_saturn_t *z = s->sat;
	saturn_cycle_in_t in = {0};
	saturn_cycle_out_t out;
	struct timespec a, b;
	double next = -1;
	int qn = 0;

	s->cycles++;
	if (!z && !(z = s->sat = sat_init(s))) {
		fprintf(stderr, "saturn-sim: out of memory\n");
		s->errors++;
		return -1;
	}
	if (s->nqueue == 0 && s->nrun == 0)
		return -1;
	if (snapshot(s, z->snap) < 0) {
		fprintf(stderr, "saturn-sim: out of memory\n");
		s->errors++;
		return -1;
	}
	in.snap = z->snap;
	in.profiles = &z->ps;
	in.cfg = &z->cfg;
	in.max_evals = s->evals;
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (saturn_cycle_run(&in, &z->st, &out) < 0) {
		for (int l = 0; l < out.nlog; l++)
			fprintf(stderr, "saturn-sim: t=%.0f: %s\n", s->now, out.log[l].text);
		s->errors++;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	s->solve_wall += (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
	if (getenv("SATURN_SIM_DEBUG"))
		for (int l = 0; l < out.nlog; l++)
			fprintf(stderr, "t=%.1f %s\n", s->now, out.log[l].text);
	/* a plan searched for (not the carried one kept) is applied after
	 * the solve, as in the plugin */
	s->extra = out.kind == SATURN_CYCLE_NEW && out.plan && strcmp(out.plan->method, "warm") ?
			   s->solve_delay :
			   0;
	for (int i = 0; i < out.nd; i++) {
		const saturn_decision_t *d = &out.d[i];
		int ji = z->snap->jobs[d->job].task_id, n, k = 0;

		if (!d->release)
			continue;
		n = saturn_snapshot_node_index(z->snap, d->node);
		while ((1 << k) < d->gpus)
			k++;
		if (n < 0 || sim_start(s, ji, n, k, NULL) < 0)
			s->errors++;
	}
	if (out.next_due_s >= 0)
		next = s->now + (out.next_due_s > 0.5 ? out.next_due_s : 0.5);
	saturn_cycle_out_free(&out);
	for (int q = 0; q < s->nqueue; q++)
		if (s->jobs[s->queue[q]].state == SJ_QUEUED)
			s->queue[qn++] = s->queue[q];
	s->nqueue = qn;
	s->extra = 0;
	return next;
}
