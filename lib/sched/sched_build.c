/* sched_build.c - snapshot -> planner problem (saturn_sched_build): one
 * task per held or running Saturn job, its options from the batch's profile
 * (corrected by the runtime feedback) or the user's own request, partitions
 * as node classes, and the tasks that cannot be planned left held with a
 * reason (sched_core.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_policy.h"
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

static void free_options(saturn_option_t *o, int n)
{
	for (int i = 0; i < n; i++) {
		free(o[i].technique);
		free(o[i].klass);
	}
	free(o);
}

/* One step of filtering o[0 .. n) in place: o[i] moves to o[k] and the
 * count kept grows when keep, else o[i]'s strings are freed. Returns the
 * new count kept. */
static int keep_option(saturn_option_t *o, int i, int k, int keep)
{
	if (!keep) {
		free(o[i].technique);
		free(o[i].klass);
		return k;
	}
	o[k] = o[i];
	return k + 1;
}

static saturn_option_t *one_option(const char *tech, int gpus, double spb)
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
static double fallback_runtime(const saturn_snap_job_t *j)
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
static int options_in_limits(const saturn_profile_task_t *pt, saturn_option_t *o, int n,
			     char *why, size_t whylen)
{
	int k = 0;

	why[0] = '\0';
	if (!(pt->batches >= 0 && pt->batches <= SATURN_MAX_BATCHES)) {
		snprintf(why, whylen, "saturn: profile: batches %.3g out of range (0 to %.0e)",
			 pt->batches, SATURN_MAX_BATCHES);
		free_options(o, n);
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
		k = keep_option(o, i, k, !bad[0]);
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
static double running_left(const saturn_snapshot_t *s, const saturn_snap_job_t *j, double total,
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
static int fits_some_node(const saturn_snapshot_t *s, const saturn_option_t *o, int n)
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
static int options_for_nodes(const saturn_profile_task_t *pt, const saturn_snap_job_t *j,
			     saturn_option_t *o, int n, int measurable)
{
	int k = 0, need = j->req_nodes > 1 ? j->req_nodes : 1;

	for (int i = 0; i < n; i++) {
		int nodes = saturn_option_nodes(&o[i]), predicted = 0;

		for (int q = 0; pt && q < pt->noptions; q++)
			if (pt->options[q].gpus == o[i].gpus &&
			    saturn_profile_option_nodes(&pt->options[q]) == nodes &&
			    pt->options[q].technique && o[i].technique &&
			    !strcmp(pt->options[q].technique, o[i].technique))
				predicted = pt->options[q].status == SATURN_OPT_PREDICTED;
		k = keep_option(
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

/* Node classes: one per distinct (partitions, hardware class) of the
 * nodes, set only when some held or released job may not use some node
 * (partitions, its GPU type or --constraint) or the nodes are of more
 * than one hardware class (node_class.h); n == 0 otherwise: no classes,
 * the problem is the same as without them. The partitions are part of a
 * class only when they matter (parts). */
#define CLASS_LEN (SATURN_CLASS_NAME_MAX + 200)
/* The class profiles of the batch being built (one lookup per class and
 * run of tasks of one batch, as for the batch's profile): asked[c] once
 * pr[c] was looked up. */
typedef struct class_cache {
	const saturn_profile_t **pr;
	char *asked;
} class_cache_t;

/* class_idx of an option from a class's own profile while the build
 * routes it (restrict_to_partitions sets -1 in the copies). */
#define CLASS_OWN (-2)

typedef struct part_classes {
	int n;
	uint64_t *mask; /* per class: the nodes' part_mask (0 when !parts) */
	char (*hw)[SATURN_CLASS_NAME_MAX + 1]; /* per class: hardware class */
	char (*name)[CLASS_LEN]; /* per class: its name in the problem */
	int *max_gpus;  /* per class: GPUs of its largest node */
	int *of_node;   /* snapshot node -> class */
	const char **feat; /* per class: its nodes' features (cons), else "" */
	int parts;      /* partitions restrict some job */
} part_classes_t;

static void part_classes_free(part_classes_t *pc)
{
	free(pc->mask);
	free(pc->hw);
	free(pc->name);
	free(pc->max_gpus);
	free(pc->of_node);
	free(pc->feat);
	memset(pc, 0, sizeof(*pc));
}

/* Whether a held or released job asks for hardware (a GPU type, a
 * --constraint) that not every node may have. */
static int job_wants_hw(const saturn_snap_job_t *j)
{
	return j->state != SATURN_SNAP_RUNNING &&
	       (j->gpu_type[0] || j->constraint[0] || j->constraint_bad);
}

/* Fill pc from s. O(nodes x classes + jobs x classes). Returns 0 or -1
 * (ENOMEM). */
static int part_classes_init(part_classes_t *pc, const saturn_snapshot_t *s)
{
	uint64_t last = 0, *pmask;
	int npm = 0, hwneed = 0, nhw = 0, cons = 0;
	char (*hw)[SATURN_CLASS_NAME_MAX + 1];

	memset(pc, 0, sizeof(*pc));
	if (s->nnodes == 0)
		return 0;
	hw = calloc((size_t)s->nnodes, sizeof(*hw));
	pmask = calloc((size_t)s->nnodes, sizeof(*pmask));
	pc->mask = calloc((size_t)s->nnodes, sizeof(*pc->mask));
	pc->hw = calloc((size_t)s->nnodes, sizeof(*pc->hw));
	pc->name = calloc((size_t)s->nnodes, sizeof(*pc->name));
	pc->max_gpus = calloc((size_t)s->nnodes, sizeof(int));
	pc->of_node = calloc((size_t)s->nnodes, sizeof(int));
	pc->feat = calloc((size_t)s->nnodes, sizeof(*pc->feat));
	if (!hw || !pmask || !pc->mask || !pc->hw || !pc->name || !pc->max_gpus || !pc->of_node ||
	    !pc->feat) {
		free(hw);
		free(pmask);
		part_classes_free(pc);
		return -1;
	}
	/* each node's hardware class; the distinct ones and part_masks */
	for (int n = 0; n < s->nnodes; n++) {
		const saturn_snap_node_t *nd = &s->nodes[n];
		int c = 0;

		if (nd->klass[0])
			snprintf(hw[n], sizeof(hw[n]), "%s", nd->klass);
		else
			saturn_node_class(s->class_rules, nd->name, nd->gpu_types, nd->gpus, nd->link,
					  nd->features, hw[n], sizeof(hw[n]));
		while (c < n && strcmp(hw[c], hw[n]))
			c++;
		nhw += c == n;
		c = 0;
		while (c < npm && pmask[c] != nd->part_mask)
			c++;
		if (c == npm)
			pmask[npm++] = nd->part_mask;
	}
	/* partitions matter when some held or released job may not use some
	 * node's partitions (an array's tasks share their mask: checked
	 * once); hardware when there are several classes or some job asks
	 * for a type or constraint */
	for (int i = 0; i < s->njobs; i++) {
		const saturn_snap_job_t *j = &s->jobs[i];

		if (job_wants_hw(j))
			hwneed = 1;
		if (j->state != SATURN_SNAP_RUNNING && (j->constraint[0] || j->constraint_bad))
			cons = 1;
		if (j->state == SATURN_SNAP_RUNNING || !j->part_mask || j->part_mask == last ||
		    pc->parts)
			continue;
		last = j->part_mask;
		for (int c = 0; c < npm && !pc->parts; c++)
			if (!(j->part_mask & pmask[c]))
				pc->parts = 1;
	}
	if (nhw > 1)
		hwneed = 1;
	free(pmask);
	if (!pc->parts && !hwneed) {
		free(hw);
		part_classes_free(pc);
		return 0;
	}
	for (int n = 0; n < s->nnodes; n++) {
		uint64_t m = pc->parts ? s->nodes[n].part_mask : 0;
		const char *f = cons ? s->nodes[n].features : "";
		int c = 0;

		while (c < pc->n && (pc->mask[c] != m || strcmp(pc->hw[c], hw[n]) ||
				     strcmp(pc->feat[c], f)))
			c++;
		if (c == pc->n) {
			char fs[SATURN_FEATURES_MAX + 3] = "";

			pc->mask[c] = m;
			pc->feat[c] = f;
			memcpy(pc->hw[c], hw[n], sizeof(hw[n]));
			/* a constraint splits a class by its nodes' features */
			if (f[0])
				snprintf(fs, sizeof(fs), "{%.120s}", f);
			if (pc->parts && hwneed)
				snprintf(pc->name[c], sizeof(pc->name[c]), "%s%s@partitions:0x%llx",
					 hw[n], fs, (unsigned long long)m);
			else if (pc->parts)
				snprintf(pc->name[c], sizeof(pc->name[c]), "partitions:0x%llx",
					 (unsigned long long)m);
			else
				snprintf(pc->name[c], sizeof(pc->name[c]), "%s%s", hw[n], fs);
			pc->n++;
		}
		if (pc->max_gpus[c] < s->nodes[n].gpus)
			pc->max_gpus[c] = s->nodes[n].gpus;
		pc->of_node[n] = c;
	}
	free(hw);
	return 0;
}

/* Whether job j may use class c: it shares a partition with it (when
 * partitions matter) and every node of it has the GPU type and features
 * the job asks for. 1 yes, 0 no, -1 the job's constraint cannot be read. */
static int class_ok(const saturn_snapshot_t *s, const part_classes_t *pc, const saturn_snap_job_t *j,
		    int c)
{
	if (pc->parts && j->part_mask && !(pc->mask[c] & j->part_mask))
		return 0;
	if (!job_wants_hw(j))
		return 1;
	for (int n = 0; n < s->nnodes; n++) {
		int f;

		if (pc->of_node[n] != c)
			continue;
		f = saturn_snap_job_fits_node(j, &s->nodes[n]);
		if (f <= 0)
			return f;
	}
	return 1;
}

/* Whether option o applies to class c: measured there (its klass names
 * c's hardware class), or, for an option of the batch's profile (not of
 * a class's own, CLASS_OWN), when c has no option of its own (a profile
 * measured elsewhere applies everywhere, as before classes). */
static int option_for_class(const part_classes_t *pc, const saturn_task_t *t, int o, int c)
{
	const char *k = t->options[o].klass;

	if (k && !strcmp(k, pc->hw[c]))
		return 1;
	if (t->options[o].class_idx == CLASS_OWN)
		return 0; /* from another class's own profile */
	for (int i = 0; i < t->noptions; i++)
		if (t->options[i].klass && !strcmp(t->options[i].klass, pc->hw[c]))
			return 0; /* c has options of its own */
	return 1;
}

static double corrected_spb_class(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
				  const saturn_profile_task_t *pt, const char *klass,
				  const char *technique, int gpus, int nodes, double spb);

/* Per-class profiles (saturn_snapshot_t.class_profile): for every class
 * of pc with a profile of its own covering held job j, that profile's
 * usable options, within the model's limits, appended to t's with klass
 * the class's hardware name (so they go to that class only). Nothing when
 * s has no class_profile or pc no classes. 0, or -1 (ENOMEM: t keeps
 * what it had). */
static int add_class_options(const saturn_snapshot_t *s, const part_classes_t *pc,
			     class_cache_t *cc, const saturn_snap_job_t *j, saturn_task_t *t)
{
	if (!s->class_profile || !pc->n || j->state != SATURN_SNAP_HELD || !cc->pr)
		return 0;
	for (int c = 0; c < pc->n; c++) {
		const saturn_profile_t *cp;
		const saturn_profile_task_t *pt;
		saturn_option_t *o = NULL, *all;
		char why[128];
		int seen = 0, n, k;

		for (int d = 0; d < c && !seen; d++)
			seen = !strcmp(pc->hw[d], pc->hw[c]);
		if (seen)
			continue;
		if (!cc->asked[c]) {
			cc->pr[c] = s->class_profile(j->batch, j->uid, pc->hw[c], s->class_profile_arg);
			cc->asked[c] = 1;
		}
		cp = cc->pr[c];
		pt = cp ? saturn_profile_find(cp, j->task_id >= 0 ? j->task_id : 0) : NULL;
		if (!pt)
			continue;
		n = saturn_profile_options(pt, &o);
		if (n < 0)
			return -1;
		k = n ? options_in_limits(pt, o, n, why, sizeof(why)) : 0;
		if (k > 0)
			k = options_for_nodes(pt, j, o, k, 0); /* the user's --nodes */
		if (k == 0)
			continue; /* options_in_limits / options_for_nodes freed them */
		if (t->batches <= 0 || !(pt->batches > 0) || t->noptions + k > SATURN_MAX_OPTIONS) {
			free_options(o, k);
			continue;
		}
		all = realloc(t->options, (size_t)(t->noptions + k) * sizeof(*all));
		if (!all) {
			free_options(o, k);
			return -1;
		}
		t->options = all;
		for (int i = 0; i < k; i++) {
			free(o[i].klass);
			o[i].klass = strdup(pc->hw[c]);
			o[i].class_idx = CLASS_OWN;
			/* corrected by what this class's tasks observed */
			o[i].sec_per_batch = corrected_spb_class(s, j, pt, pc->hw[c], o[i].technique,
								 o[i].gpus, saturn_option_nodes(&o[i]),
								 o[i].sec_per_batch);
			/* in the task's unit of work: its batches are the
			 * batch profile's; the same work at this class's speed */
			o[i].sec_per_batch *= pt->batches / t->batches;
			if (!o[i].klass) {
				for (int r = i; r < k; r++) {
					free(o[r].technique);
					free(o[r].klass);
				}
				free(o);
				return -1;
			}
			t->options[t->noptions++] = o[i];
		}
		free(o);
	}
	return 0;
}

static void clear_klass(saturn_task_t *t)
{
	for (int i = 0; i < t->noptions; i++) {
		free(t->options[i].klass);
		t->options[i].klass = NULL;
		t->options[i].class_idx = -1;
	}
}

/* Nodes of class c with at least gpus GPUs (a multi-node option needs
 * its node count of them in one class). */
static int class_nodes(const saturn_snapshot_t *s, const part_classes_t *pc, int c, int gpus)
{
	int n = 0;

	for (int k = 0; k < s->nnodes; k++)
		if (pc->of_node[k] == c && s->nodes[k].gpus >= gpus)
			n++;
	return n;
}

/* Restrict the options of a held or released job to the node classes it
 * may use (its partitions, GPU type and --constraint): one copy of each
 * option per such class that has a node with enough GPUs, the options
 * measured on a class (the profile's klass) going to that class only (at
 * most SATURN_MAX_OPTIONS copies). Nothing changes when the job may use
 * every class and no option is measured on one of them. The options'
 * klass is the problem's class name afterwards, or NULL. Returns 0
 * (t->options replaced or unchanged), 1 when no node the job may use fits
 * (why filled, t unchanged), -1 on ENOMEM. */
static int restrict_to_partitions(const saturn_snapshot_t *s, const part_classes_t *pc,
				  const saturn_snap_job_t *j, saturn_task_t *t, char *why,
				  size_t whylen)
{
	saturn_option_t *no;
	int neligible = 0, nn = 0, maxg = 0, specific = 0, unreadable = 0, partok = 0;
	char *ok;

	if (!pc->n) {
		clear_klass(t);
		return 0;
	}
	ok = calloc((size_t)pc->n, 1);
	if (!ok)
		return -1;
	for (int c = 0; c < pc->n; c++) {
		int r = class_ok(s, pc, j, c);

		ok[c] = r > 0;
		unreadable |= r < 0;
		neligible += r > 0;
		if (!pc->parts || !j->part_mask || (pc->mask[c] & j->part_mask))
			partok = 1;
		for (int o = 0; o < t->noptions && !specific; o++)
			if (t->options[o].klass && !strcmp(t->options[o].klass, pc->hw[c]))
				specific = 1;
	}
	if (neligible == pc->n && !specific) {
		free(ok);
		clear_klass(t);
		return 0;
	}
	if (neligible == 0) {
		free(ok);
		if (!partok)
			snprintf(why, whylen, "saturn: no usable GPU node in partition(s) of this job");
		else if (unreadable)
			snprintf(why, whylen,
				 "saturn: --constraint '%.60s' cannot be planned (use FEATURE, & and |)",
				 j->constraint_bad ? "(too long, or several GPU types)" : j->constraint);
		else
			snprintf(why, whylen,
				 "saturn: no usable GPU node has%s%.40s%s%s%.60s",
				 j->gpu_type[0] ? " GPU type " : "", j->gpu_type,
				 j->gpu_type[0] && j->constraint[0] ? " and" : "",
				 j->constraint[0] ? " features " : "", j->constraint);
		return 1;
	}
	no = calloc((size_t)t->noptions * (size_t)neligible, sizeof(*no));
	if (!no) {
		free(ok);
		return -1;
	}
	for (int o = 0; o < t->noptions; o++)
		for (int c = 0; c < pc->n && nn < SATURN_MAX_OPTIONS; c++) {
			if (!ok[c])
				continue;
			if (pc->max_gpus[c] > maxg)
				maxg = pc->max_gpus[c];
			if (t->options[o].gpus > pc->max_gpus[c] || !option_for_class(pc, t, o, c) ||
			    class_nodes(s, pc, c, t->options[o].gpus) < saturn_option_nodes(&t->options[o]))
				continue;
			no[nn] = t->options[o];
			no[nn].class_idx = -1;
			no[nn].technique = strdup(t->options[o].technique);
			no[nn].klass = strdup(pc->name[c]);
			if (!no[nn].technique || !no[nn].klass) {
				free(ok);
				free_options(no, nn + 1);
				return -1;
			}
			nn++;
		}
	free(ok);
	if (nn == 0) {
		free(no);
		snprintf(why, whylen,
			 "saturn: no usable GPU node in partition(s) of this job with %d GPUs (largest: %d)",
			 t->options[0].gpus, maxg);
		return 1;
	}
	free_options(t->options, t->noptions);
	t->options = no;
	t->noptions = nn;
	return 0;
}

/* Runtime feedback: the profile's seconds per batch of a task not started
 * yet times the correction its signature has earned (feedback.h), kept
 * within the model's limit. */
static double corrected_spb(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
			    const saturn_profile_task_t *pt, const char *technique, int gpus,
			    int nodes, double spb)
{
	return corrected_spb_class(s, j, pt, pt ? pt->klass : NULL, technique, gpus, nodes, spb);
}

/* As corrected_spb, with the correction of node class klass (a class's
 * own profile: what its tasks observed there, feedback.c). */
static double corrected_spb_class(const saturn_snapshot_t *s, const saturn_snap_job_t *j,
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
static int running_gang(const saturn_snapshot_t *s, const saturn_snap_job_t *j, uint64_t mask,
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
	free_options(t->options, 1);
	t->options = NULL;
	return 1;
}

/* A released or running job j on a node (its allocation's first, or the
 * node it is pinned to) whose class has a profile of its own covering it
 * with j's option (technique, GPUs, nodes): that option's seconds per
 * batch (in *cpt's batches; *cpt and *klass, the class, set), else 0. */
static double class_spb(const saturn_snapshot_t *s, const part_classes_t *pc, class_cache_t *cc,
			const saturn_snap_job_t *j, const saturn_profile_task_t **cpt,
			const char **klass)
{
	const saturn_profile_t *cp;
	const saturn_profile_task_t *p;
	int n = j->node, c;

	if (!s->class_profile || !pc->n || !cc->pr)
		return 0;
	if ((n < 0 || n >= s->nnodes) && j->pinned[0])
		n = saturn_snapshot_node_index(s, j->pinned);
	if (n < 0 || n >= s->nnodes)
		return 0;
	/* asked once per run of a batch's jobs, in add_class_options' slot
	 * (the first class of that hardware): a lookup may reload */
	c = pc->of_node[n];
	for (int d = 0; d < c; d++)
		if (!strcmp(pc->hw[d], pc->hw[c])) {
			c = d;
			break;
		}
	if (!cc->asked[c]) {
		cc->pr[c] = s->class_profile(j->batch, j->uid, pc->hw[c], s->class_profile_arg);
		cc->asked[c] = 1;
	}
	cp = cc->pr[c];
	if (!cp || !(p = saturn_profile_find(cp, j->task_id >= 0 ? j->task_id : 0)))
		return 0;
	for (int i = 0; i < p->noptions; i++) {
		const saturn_profile_option_t *o = &p->options[i];

		if (o->gpus == j->gpus && o->technique && !strcmp(o->technique, j->technique) &&
		    saturn_profile_option_nodes(o) == (j->nnodes > 1 ? j->nnodes : 1) &&
		    (o->status == SATURN_OPT_MEASURED || o->status == SATURN_OPT_PREDICTED) &&
		    o->sec_per_batch > 0 && isfinite(o->sec_per_batch) && p->batches > 0 &&
		    p->batches * o->sec_per_batch <= SATURN_MAX_RUNTIME_S) {
			*cpt = p;
			*klass = pc->hw[pc->of_node[n]];
			return o->sec_per_batch;
		}
	}
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
		nopts = options_in_limits(pt, opts, nraw, why, whylen);
		if (nopts == 0)
			opts = NULL;
		if (nraw > 0 && nopts == 0 && j->state == SATURN_SNAP_HELD)
			return 1; /* why: the option beyond the limits */
		why[0] = '\0';
		/* none on the user's node count: the user's request */
		if (nopts > 0 && j->state == SATURN_SNAP_HELD &&
		    (nopts = options_for_nodes(pt, j, opts, nopts, s->measure_multinode)) == 0)
			opts = NULL;
		/* A profile's class says where it was measured: the options
		 * go to that class (restrict_to_partitions), or everywhere
		 * when the nodes have no classes. */
		for (int i = 0; i < nopts; i++) {
			opts[i].class_idx = -1;
			if (j->state == SATURN_SNAP_HELD)
				opts[i].sec_per_batch = corrected_spb(s, j, pt, opts[i].technique,
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
			free_options(opts, nopts);
			t->options = one_option("user", j->req_gpus > 0 ? j->req_gpus : 1, 1.0);
			if (!t->options)
				return -1;
			t->options[0].nodes = j->req_nodes > 1 ? j->req_nodes : 1;
			t->noptions = 1;
			t->batches = fallback_runtime(j);
		}
		{
			double nb = j->begin_time > j->not_before ? j->begin_time : j->not_before;

			t->release_s = nb > s->now ? nb - s->now : 0;
		}
		if (*from_profile && add_class_options(s, pc, cc, j, t) < 0) {
			free_options(t->options, t->noptions);
			t->options = NULL;
			return -1;
		}
		if (!fits_some_node(s, t->options, t->noptions)) {
			if (saturn_option_nodes(&t->options[0]) > 1)
				snprintf(why, whylen, "saturn: no option fits any node (needs %d nodes with %d GPUs each)",
					 saturn_option_nodes(&t->options[0]), t->options[0].gpus);
			else
				snprintf(why, whylen, "saturn: no option fits any node (needs %d GPUs on one node)",
					 t->options[0].gpus);
			free_options(t->options, t->noptions);
			t->options = NULL;
			return 1;
		}
		rc = restrict_to_partitions(s, pc, j, t, why, whylen);
		if (rc != 0) {
			free_options(t->options, t->noptions);
			t->options = NULL;
		} else if (saturn_sched_requeue_charge(s, j, t) > t->release_s) {
			/* it requeued itself: charged like a running task */
			t->release_s = saturn_sched_requeue_charge(s, j, t);
		}
		return rc;
	}

	/* Released or running: keep what it was released with, as one option
	 * measured in seconds (sec_per_batch 1, batches = seconds left). */
	{
		double spb = 0, total, left;
		const char *klass = NULL;

		for (int i = 0; i < nopts; i++)
			if (opts[i].gpus == j->gpus && !strcmp(opts[i].technique, j->technique) &&
			    saturn_option_nodes(&opts[i]) == (j->nnodes > 1 ? j->nnodes : 1))
				spb = opts[i].sec_per_batch;
		/* on a class with a profile of its own, at that profile's
		 * speed (it was planned there with it) */
		if (pt) {
			const saturn_profile_task_t *cpt = NULL;
			double cspb = class_spb(s, pc, cc, j, &cpt, &klass);

			if (cspb > 0) {
				spb = cspb;
				pt = cpt;
			} else {
				klass = pt->klass;
			}
		}
		/* not started yet, or the prior of a running one's speed */
		if (spb > 0)
			spb = corrected_spb_class(s, j, pt, klass, j->technique, j->gpus,
						  j->nnodes > 1 ? j->nnodes : 1, spb);
		if (spb > 0) {
			*from_profile = 1;
			total = pt->batches * spb; /* within the limit: options_in_limits */
		} else {
			total = fallback_runtime(j);
		}
		free_options(opts, nopts);
		if (j->state == SATURN_SNAP_RUNNING)
			left = running_left(s, j, total, spb, pt ? pt->batches : 0);
		else
			left = total < 1 ? 1 : total;
		t->options = one_option(j->technique, j->gpus > 0 ? j->gpus : 1, 1.0);
		if (!t->options)
			return -1;
		t->options[0].nodes = j->nnodes > 1 ? j->nnodes : 1;
		t->noptions = 1;
		t->batches = left;
		/* a running task's count is its allocation's (below) */
		if (j->state != SATURN_SNAP_RUNNING && !fits_some_node(s, t->options, 1)) {
			snprintf(why, whylen, "saturn: released with %d GPUs, more than any node has",
				 t->options[0].gpus);
			free_options(t->options, 1);
			t->options = NULL;
			return 1;
		}
		/* released: Slurm places it within its partitions; without a
		 * fitting node there, it stays unrestricted in the model */
		if (j->state == SATURN_SNAP_RELEASED) {
			char ignored[128];

			rc = restrict_to_partitions(s, pc, j, t, ignored, sizeof(ignored));
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
			free_options(t->options, 1);
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
			free_options(t->options, 1);
			t->options = NULL;
			return 1;
		}
		if (j->nnodes > 1)
			return running_gang(s, j, mask, t, run_used, why, whylen);
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
			free_options(t->options, 1);
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
		for (int k = 1; k < task->noptions; k++) {
			free(task->options[k].technique);
			free(task->options[k].klass);
		}
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
	free_options(t->options, t->noptions);
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
	if (!p || !out->job_of_task || !order || !run_used || part_classes_init(&pc, s) < 0)
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
			free_options(t.options, t.noptions);
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
	part_classes_free(&pc);
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
	part_classes_free(&pc);
	saturn_sched_build_free(out);
	return saturn_error_set(err, "out of memory building the problem");
}
