/* sched_build.c - snapshot -> planner problem (saturn_sched_build): one
 * task per held or running Saturn job, its options from the batch's profile
 * (corrected by the runtime feedback) or the user's own request, partitions
 * as node classes, and the tasks that cannot be planned left held with a
 * reason (sched_core.h). One task's options are built in build_options.c,
 * the node classes in build_classes.c (build_int.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_policy.h"
#include "build_int.h"
#include "planner.h"
#include "safetext.h"
#include "sched_core.h"

/* --- problem --------------------------------------------------------- */

static int mask_ids(uint64_t mask, int **ids)
{
	int n = 0, k = 0;

	for (int g = 0; g < 64; g++)
		if (mask & (1ULL << g))
			n++;
	*ids = calloc((size_t)(n ? n : 1), sizeof(int));
	if (!*ids)
		return -1;
	for (int g = 0; g < 64; g++)
		if (mask & (1ULL << g))
			(*ids)[k++] = g;
	return n;
}

static int add_skip(saturn_sched_build_t *out, int job, const char *why)
{
	int *ns = realloc(out->skipped, sizeof(int) * (size_t)(out->nskipped + 1));
	char(*nr)[128];

	if (!ns)
		return -1;
	out->skipped = ns;
	nr = realloc(out->skip_reason, sizeof(*nr) * (size_t)(out->nskipped + 1));
	if (!nr)
		return -1;
	out->skip_reason = nr;
	out->skipped[out->nskipped] = job;
	snprintf(out->skip_reason[out->nskipped], sizeof(nr[0]), "%s", why);
	out->nskipped++;
	return 0;
}

/* Options and work of one job, within the model's limits: a bad profile
 * option is dropped, a bad remaining time clamped, and what cannot be
 * mended skips this job only. run_used: per snapshot node, the GPUs of the
 * running tasks taken so far (updated). Returns 0 with t filled (options
 * owned by t), 1 when the job has to be skipped (why filled), -1 on
 * ENOMEM. */
static int job_task(const saturn_snapshot_t *s, const part_classes_t *pc, class_cache_t *cc,
		    const saturn_snap_job_t *j, const saturn_profile_t *pr, saturn_task_t *t,
		    uint64_t *run_used, int *from_profile, char *why, size_t whylen)
{
	const saturn_profile_task_t *pt = NULL;
	saturn_option_t *opts = NULL;
	int nopts = 0, rc;

	*from_profile = 0;
	if (pr)
		pt = saturn_profile_find(pr, j->task_id >= 0 ? j->task_id : 0);
	if (pt) {
		int nraw = saturn_profile_options(pt, &opts);

		if (nraw < 0)
			return -1;
		nopts = saturn_bld_options_in_limits(pt, opts, nraw, why, whylen);
		if (nopts == 0)
			opts = NULL;
		if (nraw > 0 && nopts == 0 && j->state == SATURN_SNAP_HELD)
			return 1; /* why: the option beyond the limits */
		why[0] = '\0';
		/* none on the user's node count: the user's request */
		if (nopts > 0 && j->state == SATURN_SNAP_HELD &&
		    (nopts = saturn_bld_options_for_nodes(pt, j, opts, nopts, s->measure_multinode)) == 0)
			opts = NULL;
		/* A profile's class says where it was measured: the options
		 * go to that class (restrict_to_partitions), or everywhere
		 * when the nodes have no classes. */
		for (int i = 0; i < nopts; i++) {
			opts[i].class_idx = -1;
			if (j->state == SATURN_SNAP_HELD)
				opts[i].sec_per_batch = saturn_bld_corrected_spb(s, j, pt, opts[i].technique,
								      opts[i].gpus,
								      saturn_option_nodes(&opts[i]),
								      opts[i].sec_per_batch);
		}
	}
	if (j->state == SATURN_SNAP_HELD) {
		if (nopts > 0) {
			t->options = opts;
			t->noptions = nopts;
			t->batches = pt->batches;
			*from_profile = 1;
		} else {
			saturn_bld_free_options(opts, nopts);
			t->options = saturn_bld_one_option("user", j->req_gpus > 0 ? j->req_gpus : 1, 1.0);
			if (!t->options)
				return -1;
			t->options[0].nodes = j->req_nodes > 1 ? j->req_nodes : 1;
			t->noptions = 1;
			t->batches = saturn_bld_fallback_runtime(j);
		}
		{
			double nb = j->begin_time > j->not_before ? j->begin_time : j->not_before;

			t->release_s = nb > s->now ? nb - s->now : 0;
		}
		if (*from_profile && saturn_bld_add_class_options(s, pc, cc, j, t) < 0) {
			saturn_bld_free_options(t->options, t->noptions);
			t->options = NULL;
			return -1;
		}
		if (!saturn_bld_fits_some_node(s, t->options, t->noptions)) {
			if (saturn_option_nodes(&t->options[0]) > 1)
				snprintf(why, whylen, "saturn: no option fits any node (needs %d nodes with %d GPUs each)",
					 saturn_option_nodes(&t->options[0]), t->options[0].gpus);
			else
				snprintf(why, whylen, "saturn: no option fits any node (needs %d GPUs on one node)",
					 t->options[0].gpus);
			saturn_bld_free_options(t->options, t->noptions);
			t->options = NULL;
			return 1;
		}
		rc = saturn_bld_restrict_to_partitions(s, pc, j, t, why, whylen);
		if (rc != 0) {
			saturn_bld_free_options(t->options, t->noptions);
			t->options = NULL;
		} else {
			/* it requeued itself: charged like a running task */
			double charge = saturn_sched_requeue_charge(s, j, t);

			if (charge > t->release_s)
				t->release_s = charge;
		}
		return rc;
	}

	/* Released or running: keep what it was released with, as one option
	 * measured in seconds (sec_per_batch 1, batches = seconds left). */
	{
		double spb = 0, total, left;
		const char *klass = NULL;

		/* the option it runs with, named by its technique and GPUs */
		const saturn_task_t run = {.options = opts, .noptions = nopts};
		int ro = saturn_task_find_option(&run, j->technique, j->gpus, j->nnodes, NULL);

		if (ro >= 0)
			spb = opts[ro].sec_per_batch;
		/* on a class with a profile of its own, at that profile's
		 * speed (it was planned there with it) */
		if (pt) {
			const saturn_profile_task_t *cpt = NULL;
			double cspb = saturn_bld_class_spb(s, pc, cc, j, &cpt, &klass);

			if (cspb > 0) {
				spb = cspb;
				pt = cpt;
			} else {
				klass = pt->klass;
			}
		}
		/* not started yet, or the prior of a running one's speed */
		if (spb > 0)
			spb = saturn_bld_corrected_spb_class(s, j, pt, klass, j->technique, j->gpus,
						  j->nnodes > 1 ? j->nnodes : 1, spb);
		if (spb > 0) {
			*from_profile = 1;
			total = pt->batches * spb; /* within the limit: options_in_limits */
		} else {
			total = saturn_bld_fallback_runtime(j);
		}
		saturn_bld_free_options(opts, nopts);
		if (j->state == SATURN_SNAP_RUNNING)
			left = saturn_bld_running_left(s, j, total, spb, pt ? pt->batches : 0);
		else
			left = total < 1 ? 1 : total;
		t->options = saturn_bld_one_option(j->technique, j->gpus > 0 ? j->gpus : 1, 1.0);
		if (!t->options)
			return -1;
		t->options[0].nodes = j->nnodes > 1 ? j->nnodes : 1;
		t->noptions = 1;
		t->batches = left;
		/* a running task's count is its allocation's (below) */
		if (j->state != SATURN_SNAP_RUNNING && !saturn_bld_fits_some_node(s, t->options, 1)) {
			snprintf(why, whylen, "saturn: released with %d GPUs, more than any node has",
				 t->options[0].gpus);
			saturn_bld_free_options(t->options, 1);
			t->options = NULL;
			return 1;
		}
		/* released: Slurm places it within its partitions; without a
		 * fitting node there, it stays unrestricted in the model */
		if (j->state == SATURN_SNAP_RELEASED) {
			char ignored[128];

			rc = saturn_bld_restrict_to_partitions(s, pc, j, t, ignored, sizeof(ignored));
			if (rc < 0)
				return -1;
			/* Slurm starts it on its pinned node as soon as the
			 * GPUs there are free, whatever a new plan says (not
			 * one that waits for its begin time or an exit hold) */
			if (j->node >= 0 && j->node < s->nnodes && !j->exit_held &&
			    !(j->begin_time > s->now)) {
				t->is_released = true;
				t->released_node = j->node;
			}
		}
	}
	if (j->state == SATURN_SNAP_RUNNING) {
		uint64_t mask;
		int n;

		if (j->node < 0 || j->node >= s->nnodes) {
			snprintf(why, whylen, "saturn: running on a node that is not usable");
			saturn_bld_free_options(t->options, 1);
			t->options = NULL;
			return 1;
		}
		/* GPU ids the node does not have (its count changed) are
		 * dropped; GPUs another running task holds are a
		 * contradiction in the snapshot: this task is left out
		 * rather than the problem refused */
		mask = j->gpu_mask;
		if (s->nodes[j->node].gpus < 64)
			mask &= s->nodes[j->node].gpus > 0 ? (1ULL << s->nodes[j->node].gpus) - 1 : 0;
		if (mask & run_used[j->node]) {
			snprintf(why, whylen, "saturn: running on GPUs another running task holds on %.64s",
				 s->nodes[j->node].name);
			saturn_bld_free_options(t->options, 1);
			t->options = NULL;
			return 1;
		}
		if (j->nnodes > 1)
			return saturn_bld_running_gang(s, j, mask, t, run_used, why, whylen);
		n = mask_ids(mask, &t->running.gpu_ids);
		if (n < 0)
			return -1;
		if (n != t->options[0].gpus) {
			/* Allocation differs from what we think it runs
			 * with: trust the allocation. */
			t->options[0].gpus = n > 0 ? n : 1;
		}
		if (n == 0) {
			free(t->running.gpu_ids);
			t->running.gpu_ids = NULL;
			snprintf(why, whylen, "saturn: running without GPUs");
			saturn_bld_free_options(t->options, 1);
			t->options = NULL;
			return 1;
		}
		t->is_running = true;
		t->running.node = j->node;
		t->running.ngpus = n;
		t->running.option = 0;
		run_used[j->node] |= mask;
	}
	return 0;
}

static int cmp_submit(const void *a, const void *b, void *arg)
{
	const saturn_snapshot_t *s = arg;
	const saturn_snap_job_t *x = &s->jobs[*(const int *)a];
	const saturn_snap_job_t *y = &s->jobs[*(const int *)b];
	uint32_t xa = x->array_job_id ? x->array_job_id : x->job_id;
	uint32_t ya = y->array_job_id ? y->array_job_id : y->job_id;
	double xs = saturn_sched_queued_at(x), ys = saturn_sched_queued_at(y);

	/* running first (pinned), then released, then held in submission
	 * order (a task that requeued itself: from its requeue, requeue.c) */
	if (x->state != y->state)
		return x->state > y->state ? -1 : 1;
	if (xs != ys)
		return xs < ys ? -1 : 1;
	if (xa != ya)
		return xa < ya ? -1 : 1;
	return x->task_id - y->task_id;
}

/* qsort_r is a GNU extension; keep a portable insertion-merge sort. */
static void sort_jobs(int *idx, int n, const saturn_snapshot_t *s)
{
	int *tmp;

	if (n < 2)
		return;
	tmp = malloc(sizeof(int) * (size_t)n);
	if (!tmp) { /* fall back to insertion sort */
		for (int i = 1; i < n; i++)
			for (int k = i; k > 0 && cmp_submit(&idx[k], &idx[k - 1], (void *)s) < 0; k--) {
				int t = idx[k];

				idx[k] = idx[k - 1];
				idx[k - 1] = t;
			}
		return;
	}
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int a = lo, b = mid, k = lo;

			while (a < mid && b < hi)
				tmp[k++] = cmp_submit(&idx[b], &idx[a], (void *)s) < 0 ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[k++] = idx[a++];
			while (b < hi)
				tmp[k++] = idx[b++];
		}
		memcpy(idx, tmp, sizeof(int) * (size_t)n);
	}
	free(tmp);
}

void saturn_sched_build_free(saturn_sched_build_t *out)
{
	if (!out)
		return;
	saturn_problem_destroy(out->problem);
	free(out->job_of_task);
	free(out->skipped);
	free(out->skip_reason);
	memset(out, 0, sizeof(*out));
}

int saturn_sched_pin_released(const saturn_snapshot_t *s, saturn_sched_build_t *b,
			      saturn_plan_t *plan, const unsigned char *held_before)
{
	int pinned = 0;

	if (!plan || !b->problem || !held_before)
		return 0;
	for (int i = 0; i < plan->nassign; i++) {
		saturn_assign_t *a = &plan->assign[i];
		int t = a->task >= 0 ? a->task : i, o = a->option;
		saturn_task_t *task;

		if (t < 0 || t >= b->problem->ntasks || !held_before[t])
			continue;
		task = &b->problem->tasks[t];
		if (task->is_running || task->is_released ||
		    s->jobs[b->job_of_task[t]].state != SATURN_SNAP_RELEASED ||
		    a->node < 0 || a->node >= b->problem->nnodes || o < 0 || o >= task->noptions)
			continue;
		if (o != 0) {
			saturn_option_t x = task->options[0];

			task->options[0] = task->options[o];
			task->options[o] = x;
		}
		for (int k = 1; k < task->noptions; k++)
			saturn_option_clear(&task->options[k]);
		task->noptions = 1;
		a->option = 0;
		task->is_released = true;
		task->released_node = a->node;
		pinned++;
	}
	return pinned;
}

/* The tasks saturn_problem_bad_tasks() names, collected for drop_bad(). */
typedef struct bad_tasks {
	saturn_sched_build_t *out;
	char *bad; /* per problem task */
	int failed; /* ENOMEM recording a skip */
} bad_tasks_t;

static void note_bad(int t, const char *why, void *arg)
{
	bad_tasks_t *bt = arg;
	char reason[128];

	bt->bad[t] = 1;
	snprintf(reason, sizeof(reason), "saturn: left out of the plan: %s", why);
	if (add_skip(bt->out, bt->out->job_of_task[t], reason) < 0)
		bt->failed = 1;
}

static void task_free(saturn_task_t *t)
{
	free(t->id);
	saturn_bld_free_options(t->options, t->noptions);
	free(t->running.gpu_ids);
	free(t->running.more_nodes);
}

/* saturn_problem_check() refused the built problem: the checks while
 * building missed something. Drop the tasks it refuses for reasons of
 * their own (each becomes a skipped job with the check's words as its
 * reason) and check again, so that one task never stops the plan of all.
 * Returns 0, or -1 with err (the nodes are bad, nothing to drop, ENOMEM). */
static int drop_bad(saturn_sched_build_t *out, saturn_error_t *err)
{
	saturn_problem_t *p = out->problem;
	bad_tasks_t bt = {out, calloc((size_t)p->ntasks + 1, 1), 0};
	saturn_error_t first = *err;
	int nbad, k = 0;

	if (!bt.bad)
		return saturn_error_set(err, "out of memory building the problem");
	nbad = saturn_problem_bad_tasks(p, note_bad, &bt, err);
	if (nbad <= 0 || bt.failed) {
		free(bt.bad);
		if (nbad == 0)
			*err = first;
		return bt.failed ? saturn_error_set(err, "out of memory building the problem") : -1;
	}
	for (int t = 0; t < p->ntasks; t++) {
		if (bt.bad[t]) {
			task_free(&p->tasks[t]);
			continue;
		}
		p->tasks[k] = p->tasks[t];
		out->job_of_task[k++] = out->job_of_task[t];
	}
	p->ntasks = k;
	free(bt.bad);
	return saturn_problem_check(p, err);
}

int saturn_sched_build(const saturn_snapshot_t *s, saturn_profile_lookup_fn lookup,
		       void *arg, saturn_sched_build_t *out, saturn_error_t *err)
{
	saturn_problem_t *p;
	int *order = NULL;
	unsigned char *keep = NULL;
	uint64_t *run_used = NULL;
	part_classes_t pc = {0};
	class_cache_t cc = {0};
	const saturn_profile_t *pr = NULL;

	memset(out, 0, sizeof(*out));
	p = out->problem = saturn_problem_create();
	out->job_of_task = calloc((size_t)(s->njobs ? s->njobs : 1), sizeof(int));
	order = calloc((size_t)(s->njobs ? s->njobs : 1), sizeof(int));
	run_used = calloc((size_t)(s->nnodes ? s->nnodes : 1), sizeof(*run_used));
	if (!p || !out->job_of_task || !order || !run_used || saturn_bld_part_classes_init(&pc, s) < 0)
		goto nomem;
	if (pc.n && s->class_profile) {
		cc.pr = calloc((size_t)pc.n, sizeof(*cc.pr));
		cc.asked = calloc((size_t)pc.n, 1);
		if (!cc.pr || !cc.asked)
			goto nomem;
	}

	for (int n = 0; n < s->nnodes; n++) {
		saturn_node_t node = {0};
		int nb = 0;

		for (int b = 0; b < s->nbusy; b++)
			if (s->busy[b].node == n && s->busy[b].gpu_mask)
				nb++;
		node.name = strdup(s->nodes[n].name);
		node.gpus = s->nodes[n].gpus < SATURN_MAX_GPUS_PER_NODE ? s->nodes[n].gpus
									 : SATURN_MAX_GPUS_PER_NODE;
		if (!node.name)
			goto nomem;
		if (pc.n) {
			if (!(node.klass = strdup(pc.name[pc.of_node[n]]))) {
				free(node.name);
				goto nomem;
			}
		}
		if (nb) {
			node.busy = calloc((size_t)nb, sizeof(*node.busy));
			if (!node.busy) {
				free(node.klass);
				free(node.name);
				goto nomem;
			}
		}
		for (int b = 0; b < s->nbusy; b++) {
			saturn_busy_t *bz;

			if (s->busy[b].node != n || !s->busy[b].gpu_mask)
				continue;
			bz = &node.busy[node.nbusy];
			bz->ngpus = mask_ids(s->busy[b].gpu_mask & ((node.gpus < 64) ? ((1ULL << node.gpus) - 1) : ~0ULL), &bz->gpu_ids);
			if (bz->ngpus < 0)
				goto nomem_node;
			if (bz->ngpus == 0) {
				free(bz->gpu_ids);
				bz->gpu_ids = NULL;
				continue;
			}
			bz->until_s = s->busy[b].until - s->now;
			if (!(bz->until_s <= SATURN_MAX_RUNTIME_S))
				bz->until_s = SATURN_MAX_RUNTIME_S; /* no end, or none known */
			if (bz->until_s < 0)
				bz->until_s = 0;
			node.nbusy++;
			continue;
nomem_node:
			for (int k = 0; k < node.nbusy; k++)
				free(node.busy[k].gpu_ids);
			free(node.busy);
			free(node.klass);
			free(node.name);
			goto nomem;
		}
		if (saturn_problem_add_node(p, &node) < 0) {
			for (int k = 0; k < node.nbusy; k++)
				free(node.busy[k].gpu_ids);
			free(node.busy);
			free(node.klass);
			free(node.name);
			goto nomem;
		}
	}

	for (int i = 0; i < s->njobs; i++)
		order[i] = i;
	sort_jobs(order, s->njobs, s);
	/* past the cap: the first held tasks in Slurm's queue order */
	if (!(keep = malloc((size_t)(s->njobs ? s->njobs : 1))) ||
	    saturn_sched_task_cap(s, s->max_tasks, keep) < 0)
		goto nomem;

	for (int k = 0, prev = -1; k < s->njobs; k++) {
		int i = order[k], fp, rc;
		const saturn_snap_job_t *j = &s->jobs[i];
		saturn_task_t t = {0};
		char name[48], why[128] = "";

		if (!keep[i]) {
			if (add_skip(out, i, SATURN_CAP_REASON) < 0)
				goto nomem;
			continue;
		}
		if (j->state == SATURN_SNAP_HELD && j->never[0]) {
			/* released, it would hold its GPUs in every plan, for ever */
			snprintf(why, sizeof(why), SATURN_NEVER_PREFIX "%s", j->never);
			if (add_skip(out, i, why) < 0)
				goto nomem;
			continue;
		}
		/* one lookup per run of tasks of the same batch and user (an
		 * array's tasks are adjacent in order) */
		if (prev < 0 || strcmp(s->jobs[prev].batch, j->batch) || s->jobs[prev].uid != j->uid) {
			pr = lookup ? lookup(j->batch, j->uid, arg) : NULL;
			if (cc.asked)
				memset(cc.asked, 0, (size_t)pc.n);
		}
		prev = i;
		rc = job_task(s, &pc, &cc, j, pr, &t, run_used, &fp, why, sizeof(why));
		if (rc < 0)
			goto nomem;
		if (rc > 0) {
			if (add_skip(out, i, why) < 0)
				goto nomem;
			continue;
		}
		saturn_sched_task_name(j, name, sizeof(name));
		t.id = strdup(name);
		if (!t.id || saturn_problem_add_task(p, &t) < 0) {
			free(t.id);
			saturn_bld_free_options(t.options, t.noptions);
			free(t.running.gpu_ids);
			free(t.running.more_nodes);
			goto nomem;
		}
		out->job_of_task[p->ntasks - 1] = i;
		if (fp)
			out->any_profile = 1;
	}
	free(order);
	free(keep);
	free(run_used);
	free(cc.pr);
	free(cc.asked);
	saturn_bld_part_classes_free(&pc);
	if (p->nnodes == 0) {
		saturn_sched_build_free(out);
		return saturn_error_set(err, "no usable node with GPUs");
	}
	if (saturn_problem_check(p, err) < 0 && drop_bad(out, err) < 0) {
		saturn_sched_build_free(out);
		return -1;
	}
	return 0;
nomem:
	free(order);
	free(keep);
	free(run_used);
	free(cc.pr);
	free(cc.asked);
	saturn_bld_part_classes_free(&pc);
	saturn_sched_build_free(out);
	return saturn_error_set(err, "out of memory building the problem");
}
