/* build_options.c - the options of one task of the problem (sched_build.c):
 * from the profile within the model's limits and the nodes there are,
 * corrected by the runtime feedback, or the user's own request; what a
 * running task has left, and a running task's gang across nodes.
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

void saturn_bld_free_options(saturn_option_t *o, int n)
{
	for (int i = 0; i < n; i++)
		saturn_option_clear(&o[i]);
	free(o);
}

/* One step of filtering o[0 .. n) in place: o[i] moves to o[k] and the
 * count kept grows when keep, else o[i]'s strings are freed. Returns the
 * new count kept. */
int saturn_bld_keep_option(saturn_option_t *o, int i, int k, int keep)
{
	if (!keep) {
		saturn_option_clear(&o[i]);
		return k;
	}
	o[k] = o[i];
	return k + 1;
}

saturn_option_t *saturn_bld_one_option(const char *tech, int gpus, double spb)
{
	saturn_option_t *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->technique = strdup(tech && tech[0] ? tech : "user");
	o->gpus = gpus;
	o->sec_per_batch = spb;
	o->class_idx = -1;
	if (!o->technique) {
		free(o);
		return NULL;
	}
	return o;
}

/* Planned total runtime of a task that has no usable profile option for
 * what it runs with: its time limit (at most the model's limit), or an
 * hour. */
double saturn_bld_fallback_runtime(const saturn_snap_job_t *j)
{
	if (!(j->time_limit_s > 0))
		return 3600.0; /* none (0), or not a number */
	return j->time_limit_s < SATURN_MAX_RUNTIME_S ? j->time_limit_s : SATURN_MAX_RUNTIME_S;
}

/* Keep the options of profile task pt that are within the model's limits
 * (model.h, the checks of saturn_problem_check()), in order, at most
 * SATURN_MAX_OPTIONS; free the others. A profile read by
 * saturn_profile_load() is already within them; a lookup may hand over any
 * profile, and one bad option must cost its task, never the problem.
 * Returns the count kept; why names the first option dropped ("" when
 * none was). */
int saturn_bld_options_in_limits(const saturn_profile_task_t *pt, saturn_option_t *o, int n,
			     char *why, size_t whylen)
{
	int k = 0;

	why[0] = '\0';
	if (!(pt->batches >= 0 && pt->batches <= SATURN_MAX_BATCHES)) {
		snprintf(why, whylen, "saturn: profile: batches %.3g out of range (0 to %.0e)",
			 pt->batches, SATURN_MAX_BATCHES);
		saturn_bld_free_options(o, n);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const char *tech = o[i].technique;
		double rt = pt->batches * o[i].sec_per_batch;
		char bad[96] = "";

		if (!tech || !tech[0] || strlen(tech) > SATURN_TECHNIQUE_NAME_MAX)
			snprintf(bad, sizeof(bad), "technique name empty or over %d characters",
				 SATURN_TECHNIQUE_NAME_MAX);
		else if (!saturn_text_ok(tech, SATURN_TEXT_NAME))
			snprintf(bad, sizeof(bad), "technique name not letters, digits, '.', '_', '+', '-'");
		else if (o[i].gpus < 1 || o[i].gpus > SATURN_MAX_GPUS_PER_NODE)
			snprintf(bad, sizeof(bad), "gpus %d out of range (1 to %d)", o[i].gpus,
				 SATURN_MAX_GPUS_PER_NODE);
		else if (!(o[i].sec_per_batch > 0) || !isfinite(o[i].sec_per_batch))
			snprintf(bad, sizeof(bad), "sec_per_batch %.3g not a number > 0",
				 o[i].sec_per_batch);
		else if (!(rt <= SATURN_MAX_RUNTIME_S))
			snprintf(bad, sizeof(bad), "batches x sec_per_batch = %.3g s, over %.0e s", rt,
				 SATURN_MAX_RUNTIME_S);
		else if (k >= SATURN_MAX_OPTIONS)
			snprintf(bad, sizeof(bad), "more than %d options", SATURN_MAX_OPTIONS);
		if (bad[0] && !why[0]) {
			char clean[SATURN_TECHNIQUE_NAME_MAX + 1];

			/* the reason reaches squeue: the name as safe text */
			saturn_text_clean(tech && tech[0] ? tech : "?", SATURN_TEXT_NAME, clean,
					  sizeof(clean));
			snprintf(why, whylen, "saturn: profile: %.32s/%d GPUs: %s", clean, o[i].gpus,
				 bad);
		}
		k = saturn_bld_keep_option(o, i, k, !bad[0]);
	}
	if (k == 0)
		free(o);
	return k;
}

/* Remaining seconds of a running task whose planned total is total
 * (already within the limit): what the progress file or the time run
 * says, clamped into [1 s, the time its limit leaves it] and never beyond
 * the model's limit. A task past its time limit (Slurm ends it any moment)
 * or past its plan gets 1 s; a number that is not one (a progress file
 * with an absurd batches_total) gets the cap, never a rejected problem. */
double saturn_bld_running_left(const saturn_snapshot_t *s, const saturn_snap_job_t *j, double total,
			   double spb, double profile_batches)
{
	double elapsed = s->now - j->start_time, left, cap = SATURN_MAX_RUNTIME_S;
	double bl = j->batches_left, est;

	if (!(elapsed >= 0))
		elapsed = 0; /* a start in the future (clock step) or unknown */
	/* no batches_total in the progress file: the profile's total */
	if (bl < 0 && j->batches_done >= 0 && profile_batches > 0)
		bl = profile_batches > j->batches_done ? profile_batches - j->batches_done : 0;
	/* runtime feedback (feedback.h): the observed speed, blended with
	 * the profile's while few batches are done */
	est = saturn_fb_blend(spb, j->obs_spb, saturn_fb_confidence(j->batches_done, profile_batches));
	if (bl >= 0 && j->obs_spb > 0 && est > 0) {
		left = saturn_fb_remaining_s(bl, est, j->progress_updated > 0
							       ? s->now - j->progress_updated
							       : -1);
	} else if (bl >= 0 && spb > 0) {
		/* progress reports come every so often: between two, the
		 * time run says more; a task slower than its profile
		 * (time-based estimate used up) goes by its progress */
		double lt = total - elapsed;

		left = bl * spb;
		if (lt > 0 && lt < left)
			left = lt;
	} else {
		left = total - elapsed;
	}
	if (j->time_limit_s > 0 && j->time_limit_s - elapsed < cap)
		cap = j->time_limit_s - elapsed;
	/* it held a released task's GPUs past their planned start: its
	 * reports and profile lost their credit, it ends when Slurm ends it */
	if (j->overran)
		left = cap;
	if (!(left <= cap))
		left = cap;
	if (!(left >= 1))
		left = 1;
	return left;
}

/* Whether some option fits: as many snapshot nodes with its GPU count as
 * it spans. */
int saturn_bld_fits_some_node(const saturn_snapshot_t *s, const saturn_option_t *o, int n)
{
	for (int i = 0; i < n; i++) {
		int found = 0;

		for (int k = 0; k < s->nnodes; k++)
			if (o[i].gpus <= s->nodes[k].gpus)
				found++;
		if (found >= saturn_option_nodes(&o[i]))
			return 1;
	}
	return 0;
}

/* Multi-node options of a held task (sched_core.h, req_nodes): the user's
 * --nodes=k means k nodes' worth at least, so options on fewer nodes are
 * dropped; so are options on more nodes than its partitions allow
 * (part_max_nodes: Slurm would refuse the release), options beyond the
 * job's per-job QOS and association limits (max_job_gpus, max_node_gpus,
 * max_job_nodes: Slurm would never start it), and a predicted option on
 * several nodes unless it can be measured on its nodes before a task runs
 * on it (measurable: s->measure_multinode for the batch's own profile, its
 * technique a plain name; batch_policy.h). Keeps the order; returns the
 * count kept (the others freed; the array too when none is kept). */
int saturn_bld_options_for_nodes(const saturn_profile_task_t *pt, const saturn_snap_job_t *j,
			     saturn_option_t *o, int n, int measurable)
{
	int k = 0, need = j->req_nodes > 1 ? j->req_nodes : 1;

	for (int i = 0; i < n; i++) {
		int nodes = saturn_option_nodes(&o[i]), q = o[i].prof_opt, predicted;

		/* o[i] is option prof_opt of pt (saturn_profile_options) */
		predicted = pt && o[i].source && q >= 0 && q < pt->noptions &&
			    pt->options[q].status == SATURN_OPT_PREDICTED;
		k = saturn_bld_keep_option(
		    o, i, k,
		    !(nodes < need ||
		      (nodes > 1 && predicted &&
		       !(measurable && saturn_bpol_technique_ok(o[i].technique))) ||
		      (nodes > 1 && j->part_max_nodes > 0 && nodes > j->part_max_nodes) ||
		      (j->max_job_nodes > 0 && nodes > j->max_job_nodes) ||
		      (j->max_node_gpus > 0 && o[i].gpus > j->max_node_gpus) ||
		      (j->max_job_gpus > 0 && (long)o[i].gpus * nodes > j->max_job_gpus)));
	}
	if (k == 0)
		free(o);
	return k;
}

/* Runtime feedback: the profile's seconds per batch of a task not started
 * yet times the correction its signature has earned (feedback.h), kept
 * within the model's limit. */
double saturn_bld_corrected_spb(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
			    const saturn_profile_task_t *pt, const char *technique, int gpus,
			    int nodes, double spb)
{
	return saturn_bld_corrected_spb_class(s, j, pt, pt ? pt->klass : NULL, technique, gpus, nodes, spb);
}

/* As corrected_spb, with the correction of node class klass (a class's
 * own profile: what its tasks observed there, feedback.c). */
double saturn_bld_corrected_spb_class(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
				  const saturn_profile_task_t *pt, const char *klass,
				  const char *technique, int gpus, int nodes, double spb)
{
	saturn_fb_key_t key;
	double r;

	/* the feedback's keys are one-node options (feedback.c records
	 * none for a task on several nodes) */
	if (!s->feedback || !pt || nodes > 1)
		return spb;
	saturn_fb_key_set(&key, j->uid, j->batch, pt->signature, technique, gpus, klass);
	r = saturn_fb_correction(s->feedback, &key, NULL);
	if (r == 1)
		return spb;
	spb *= r;
	if (pt->batches > 0 && !(pt->batches * spb <= SATURN_MAX_RUNTIME_S))
		spb = SATURN_MAX_RUNTIME_S / pt->batches;
	return spb;
}

/* A running task on several nodes (j->nnodes > 1; first node's ids in
 * mask, already checked): pinned on every node with its GPU ids there, the
 * same count on each (the model's gang). Returns 0, 1 when the snapshot
 * contradicts itself (why filled, options freed), -1 on ENOMEM. */
int saturn_bld_running_gang(const saturn_snapshot_t *s, const saturn_snap_job_t *j, uint64_t mask,
			saturn_task_t *t, uint64_t *run_used, char *why, size_t whylen)
{
	int k = j->nnodes > SATURN_SNAP_MAX_NODES ? SATURN_SNAP_MAX_NODES : j->nnodes;
	int per = __builtin_popcountll(mask), *ids;
	uint64_t m[SATURN_SNAP_MAX_NODES];
	int node[SATURN_SNAP_MAX_NODES];

	m[0] = mask;
	node[0] = j->node;
	for (int q = 1; q < k; q++) {
		int n = j->more_node[q - 1];

		node[q] = n;
		m[q] = j->more_mask[q - 1];
		if (n < 0 || n >= s->nnodes) {
			snprintf(why, whylen, "saturn: running on a node that is not usable");
			goto skip;
		}
		for (int r = 0; r < q; r++)
			if (node[r] == n) {
				snprintf(why, whylen, "saturn: running on %.64s twice", s->nodes[n].name);
				goto skip;
			}
		if (s->nodes[n].gpus < 64)
			m[q] &= (1ULL << s->nodes[n].gpus) - 1;
		if (m[q] & run_used[n]) {
			snprintf(why, whylen, "saturn: running on GPUs another running task holds on %.64s",
				 s->nodes[n].name);
			goto skip;
		}
		if (__builtin_popcountll(m[q]) != per) {
			snprintf(why, whylen, "saturn: running with different GPU counts on its nodes");
			goto skip;
		}
	}
	if (per == 0) {
		snprintf(why, whylen, "saturn: running without GPUs");
		goto skip;
	}
	ids = calloc((size_t)k * (size_t)per, sizeof(int));
	t->running.more_nodes = calloc((size_t)k, sizeof(int));
	if (!ids || !t->running.more_nodes) {
		free(ids);
		free(t->running.more_nodes);
		t->running.more_nodes = NULL;
		return -1;
	}
	for (int q = 0, x = 0; q < k; q++)
		for (int g = 0; g < 64; g++)
			if (m[q] & (1ULL << g))
				ids[x++] = g;
	for (int q = 1; q < k; q++)
		t->running.more_nodes[q - 1] = node[q];
	for (int q = 0; q < k; q++)
		run_used[node[q]] |= m[q];
	t->options[0].gpus = per;
	t->options[0].nodes = k;
	t->is_running = true;
	t->running.node = node[0];
	t->running.nnodes = k;
	t->running.gpu_ids = ids;
	t->running.ngpus = per;
	t->running.option = 0;
	return 0;
skip:
	saturn_bld_free_options(t->options, 1);
	t->options = NULL;
	return 1;
}
