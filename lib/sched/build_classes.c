/* build_classes.c - node classes while the problem is built (sched_build.c):
 * one class per distinct (partitions, hardware class) of the nodes, the
 * per-class profiles' options, and each task's options restricted to the
 * classes (partitions, GPU type, --constraint) it may use.
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

void saturn_bld_part_classes_free(part_classes_t *pc)
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
int saturn_bld_part_classes_init(part_classes_t *pc, const saturn_snapshot_t *s)
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
		saturn_bld_part_classes_free(pc);
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
		saturn_bld_part_classes_free(pc);
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

/* Per-class profiles (saturn_snapshot_t.class_profile): for every class
 * of pc with a profile of its own covering held job j, that profile's
 * usable options, within the model's limits, appended to t's with klass
 * the class's hardware name (so they go to that class only). Nothing when
 * s has no class_profile or pc no classes. 0, or -1 (ENOMEM: t keeps
 * what it had). */
int saturn_bld_add_class_options(const saturn_snapshot_t *s, const part_classes_t *pc,
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
		k = n ? saturn_bld_options_in_limits(pt, o, n, why, sizeof(why)) : 0;
		if (k > 0)
			k = saturn_bld_options_for_nodes(pt, j, o, k, 0); /* the user's --nodes */
		if (k == 0)
			continue; /* options_in_limits / options_for_nodes freed them */
		if (t->batches <= 0 || !(pt->batches > 0) || t->noptions + k > SATURN_MAX_OPTIONS) {
			saturn_bld_free_options(o, k);
			continue;
		}
		all = realloc(t->options, (size_t)(t->noptions + k) * sizeof(*all));
		if (!all) {
			saturn_bld_free_options(o, k);
			return -1;
		}
		t->options = all;
		for (int i = 0; i < k; i++) {
			free(o[i].klass);
			o[i].klass = strdup(pc->hw[c]);
			o[i].class_idx = CLASS_OWN;
			/* identity: option prof_opt of this class's own profile */
			free(o[i].source);
			o[i].source = strdup(pc->hw[c]);
			/* corrected by what this class's tasks observed */
			o[i].sec_per_batch = saturn_bld_corrected_spb_class(s, j, pt, pc->hw[c], o[i].technique,
								 o[i].gpus, saturn_option_nodes(&o[i]),
								 o[i].sec_per_batch);
			/* in the task's unit of work: its batches are the
			 * batch profile's; the same work at this class's speed */
			o[i].sec_per_batch *= pt->batches / t->batches;
			if (!o[i].klass || !o[i].source) {
				for (int r = i; r < k; r++)
					saturn_option_clear(&o[r]);
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
int saturn_bld_restrict_to_partitions(const saturn_snapshot_t *s, const part_classes_t *pc,
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
			if (saturn_option_copy(&no[nn], &t->options[o]) < 0) {
				free(ok);
				saturn_bld_free_options(no, nn);
				return -1;
			}
			no[nn].class_idx = -1;
			free(no[nn].klass);
			no[nn].klass = strdup(pc->name[c]);
			if (!no[nn].klass) {
				free(ok);
				saturn_bld_free_options(no, nn + 1);
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
	saturn_bld_free_options(t->options, t->noptions);
	t->options = no;
	t->noptions = nn;
	return 0;
}

/* A released or running job j on a node (its allocation's first, or the
 * node it is pinned to) whose class has a profile of its own covering it
 * with j's option (technique, GPUs, nodes): that option's seconds per
 * batch (in *cpt's batches; *cpt and *klass, the class, set), else 0. */
double saturn_bld_class_spb(const saturn_snapshot_t *s, const part_classes_t *pc, class_cache_t *cc,
			const saturn_snap_job_t *j, const saturn_profile_task_t **cpt,
			const char **klass)
{
	const saturn_profile_t *cp;
	const saturn_profile_task_t *p;
	int n = j->node, c, q;

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
	/* the option it runs with, named by its technique and GPUs */
	q = saturn_profile_task_option(p, j->technique, j->gpus, j->nnodes);
	if (q >= 0) {
		const saturn_profile_option_t *o = &p->options[q];

		if ((o->status == SATURN_OPT_MEASURED || o->status == SATURN_OPT_PREDICTED) &&
		    o->sec_per_batch > 0 && isfinite(o->sec_per_batch) && p->batches > 0 &&
		    p->batches * o->sec_per_batch <= SATURN_MAX_RUNTIME_S) {
			*cpt = p;
			*klass = pc->hw[pc->of_node[n]];
			return o->sec_per_batch;
		}
	}
	return 0;
}
