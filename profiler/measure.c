/* measure.c - saturn-profile --measure (measure.h): one trial per listed
 * TASK:TECHNIQUE:GPUS[xNODES] option of an existing profile, the option
 * updated in place, the technique's other one-node predictions re-fitted
 * from all its measured counts, the profile written back atomically and
 * the cache refreshed. An option on NODES > 1 nodes is measured by a trial
 * whose saturn-run launches its ranks as one srun step on NODES of the
 * job's nodes (trials.h, nodes); it is not part of the one-node fit.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cache.h"
#include "formats.h"
#include "measure.h"
#include "signatures.h"
#include "sweep.h"
#include "trials.h"

#define MAX_ITEMS 256
#define MAX_CAND 3

struct item {
	char text[96];
	int task;
	const saturn_technique_t *t;
	int gpus;
	int nodes; /* xNODES: the option's nodes (1 = one node) */
	saturn_profile_task_t *pt;
	saturn_profile_option_t *op;
	saturn_opt_status_t was;
	double was_spb;
	int ran; /* a trial ran and reported */
};

static int bad_item(const char *text, const char *why)
{
	fprintf(stderr, "%s: --measure item '%s': %s\n", prog, text, why);
	return -1;
}

/* Parse the list into items, each naming an option of the profile. */
static int parse_list(const char *list, const saturn_techniques_t *reg,
		      saturn_profile_t *pr, struct item *items)
{
	int n = 0;
	const char *p = list;

	for (;;) {
		size_t l = strcspn(p, ",");
		struct item *it = &items[n];
		char tech[64], *end;
		const char *c1, *c2;
		long v;

		if (n == MAX_ITEMS)
			return bad_item(p, "too many items");
		memset(it, 0, sizeof(*it));
		snprintf(it->text, sizeof(it->text), "%.*s", (int)l, p);
		c1 = strchr(it->text, ':');
		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || strchr(c2 + 1, ':'))
			return bad_item(it->text,
					"want TASK:TECHNIQUE:GPUS[xNODES]");
		errno = 0;
		v = strtol(it->text, &end, 10);
		if (end == it->text || end != c1 || v < 0 || v > 1 << 30)
			return bad_item(it->text,
					"TASK: want an array task id");
		it->task = (int)v;
		snprintf(tech, sizeof(tech), "%.*s", (int)(c2 - c1 - 1),
			 c1 + 1);
		if (!(it->t = saturn_techniques_find(reg, tech)))
			return bad_item(it->text, "unknown technique");
		v = strtol(c2 + 1, &end, 10);
		if (end == c2 + 1 || (*end && *end != 'x') || v < 1 ||
		    v > MAX_GPUS)
			return bad_item(it->text, "GPUS: want a GPU count");
		it->gpus = (int)v;
		it->nodes = 1;
		if (*end == 'x') {
			const char *np = end + 1;

			v = strtol(np, &end, 10);
			if (end == np || *end || *np < '0' || *np > '9' ||
			    v < 1 || v > SATURN_MAX_TASK_NODES)
				return bad_item(it->text,
						"xNODES: want a node count");
			it->nodes = (int)v;
		}
		it->pt =
		    (saturn_profile_task_t *)saturn_profile_find(pr, it->task);
		if (!it->pt)
			return bad_item(it->text,
					"the profile has no such array task");
		/* the option on exactly that many nodes */
		for (int i = 0; i < it->pt->noptions && !it->op; i++)
			if (it->pt->options[i].gpus == it->gpus &&
			    saturn_profile_option_nodes(&it->pt->options[i]) ==
				it->nodes &&
			    strcmp(it->pt->options[i].technique, tech) == 0)
				it->op = &it->pt->options[i];
		if (!it->op)
			return bad_item(it->text,
					"the profile has no such option");
		for (int i = 0; i < n; i++)
			if (items[i].op == it->op)
				return bad_item(it->text, "listed twice");
		it->was = it->op->status;
		it->was_spb = it->op->sec_per_batch;
		n++;
		p += l;
		if (!*p)
			break;
		p++;
	}
	return n;
}

/* Which parameter candidate of t an option's params are (default = 0,
 * then memory-saving settings), or -1: the fit only mixes counts measured
 * with the same setting. */
static int candidate_of(const saturn_technique_t *t, const char *sig,
			const saturn_profile_option_t *op)
{
	json_object *have = json_tokener_parse(op->params ? op->params : "{}");
	int found = -1;

	for (int c = 0; c < MAX_CAND && found < 0 && have; c++) {
		char buf[512];
		saturn_error_t err = {{0}};
		json_object *want;

		if (saturn_technique_candidate(t, op->gpus, c, sig, buf,
					       sizeof(buf), &err) != 0)
			break;
		want = json_tokener_parse(buf);
		if (want && json_object_equal(have, want))
			found = c;
		json_object_put(want);
	}
	json_object_put(have);
	return found;
}

static void set_reason(saturn_profile_option_t *op, const char *why)
{
	free(op->reason);
	op->reason = why && *why ? xstrdup(why) : NULL;
}

/* The measured one-GPU time of the built-in single technique in pt, when t
 * is the built-in ddp or fsdp with its default parameters (candidate grp
 * 0): on one GPU they run the same program, and saturn-profile lent that
 * time to their one-GPU count. 0 otherwise. */
static double single_time(const saturn_profile_task_t *pt,
			  const saturn_technique_t *t, int grp,
			  const saturn_techniques_t *reg)
{
	const saturn_technique_t *single =
	    saturn_techniques_find(reg, "single");

	if (grp != 0 || !t->source || strcmp(t->source, "builtin") != 0 ||
	    (strcmp(t->name, "ddp") != 0 && strcmp(t->name, "fsdp") != 0) ||
	    !single || !single->source ||
	    strcmp(single->source, "builtin") != 0)
		return 0;
	for (int i = 0; i < pt->noptions; i++) {
		const saturn_profile_option_t *op = &pt->options[i];

		if (op->gpus == 1 && strcmp(op->technique, "single") == 0 &&
		    op->status == SATURN_OPT_MEASURED && op->sec_per_batch > 0)
			return op->sec_per_batch;
	}
	return 0;
}

/* Re-predict the still-predicted counts of it's technique (same parameter
 * candidate) from all its measured counts, with single's one-GPU time
 * where saturn-profile lent it (single_time); counts below an OOM become
 * oom. */
static void refit(const struct item *it, const saturn_bw_table_t *bw,
		  const saturn_techniques_t *reg, int quiet)
{
	saturn_profile_task_t *pt = it->pt;
	const char *sig = pt->signature;
	int grp = candidate_of(it->t, sig, it->op), n = 0, g[MAX_GPUS + 1],
	    changed = 0, micro_g[MAX_GPUS + 1] = {0};
	double t[MAX_GPUS + 1], lent;
	saturn_scale_fit_t fit;
	char why[160];

	for (int i = 0; i < pt->noptions; i++) {
		saturn_profile_option_t *op = &pt->options[i];

		/* the fit is of one-node counts: a multi-node option is
		 * neither data nor target (predicted from the inter-node
		 * bandwidth instead) */
		if (strcmp(op->technique, it->t->name) != 0 ||
		    saturn_profile_option_nodes(op) != 1 ||
		    candidate_of(it->t, sig, op) != grp)
			continue;
		/* each count's own micro-batches (pipelines) */
		if (op->gpus >= 1 && op->gpus <= MAX_GPUS)
			micro_g[op->gpus] = (int)saturn_technique_param(
			    op->params, "micro_batches", 0);
		if (op->status == SATURN_OPT_MEASURED &&
		    op->sec_per_batch > 0 && n <= MAX_GPUS) {
			g[n] = op->gpus;
			t[n++] = op->sec_per_batch;
		}
		if (it->op->status == SATURN_OPT_OOM &&
		    op->status == SATURN_OPT_PREDICTED && op->gpus < it->gpus) {
			op->status = SATURN_OPT_OOM;
			op->sec_per_batch = 0;
			snprintf(why, sizeof(why),
				 "out of memory on %d GPUs, and memory per GPU "
				 "does not fall with fewer",
				 it->gpus);
			set_reason(op, why);
			changed++;
		}
	}
	lent = single_time(pt, it->t, grp, reg);
	for (int i = 0; lent > 0 && i < n; i++)
		if (g[i] == 1)
			lent = 0; /* measured itself */
	if (lent > 0 && n <= MAX_GPUS) {
		g[n] = 1;
		t[n++] = lent;
	}
	if (n > 0 && saturn_scale_fit_micro(
			 saturn_scale_kind(it->t->name),
			 (int)saturn_technique_param(it->op->params,
						     "micro_batches", 8),
			 micro_g, MAX_GPUS, n, g, t, bw, &fit, NULL) == 0) {
		snprintf(why, sizeof(why),
			 "scaling fit of %d measured GPU counts (re-fitted by "
			 "--measure)",
			 n);
		for (int i = 0; i < pt->noptions; i++) {
			saturn_profile_option_t *op = &pt->options[i];
			double v;

			if (op->status != SATURN_OPT_PREDICTED ||
			    strcmp(op->technique, it->t->name) != 0 ||
			    saturn_profile_option_nodes(op) != 1 ||
			    candidate_of(it->t, sig, op) != grp ||
			    (lent > 0 && op->gpus == 1))
				continue;
			v = saturn_scale_predict(&fit, op->gpus, bw);
			if (!(v > 0) || !isfinite(v))
				continue;
			op->sec_per_batch = v;
			set_reason(op, why);
			changed++;
		}
	}
	if (changed && !quiet)
		fprintf(stderr, "%s: %s: %d other %s option%s re-fitted\n",
			prog, sig, changed, it->t->name,
			changed == 1 ? "" : "s");
}

/* The per-item line. */
static void report_item(const struct item *it)
{
	const saturn_profile_option_t *op = it->op;
	char was[64], now[360];

	if (it->was == SATURN_OPT_MEASURED || it->was == SATURN_OPT_PREDICTED)
		snprintf(was, sizeof(was), "%s %.3f s/batch",
			 saturn_opt_status_name(it->was), it->was_spb);
	else
		snprintf(was, sizeof(was), "was %s",
			 saturn_opt_status_name(it->was));
	if (op->status == SATURN_OPT_MEASURED && it->was_spb > 0)
		snprintf(now, sizeof(now), "measured %.3f s/batch (%+.0f%%)",
			 op->sec_per_batch,
			 100.0 * (op->sec_per_batch / it->was_spb - 1));
	else if (op->status == SATURN_OPT_MEASURED)
		snprintf(now, sizeof(now), "measured %.3f s/batch",
			 op->sec_per_batch);
	else
		snprintf(now, sizeof(now), "now %s (%.300s)",
			 saturn_opt_status_name(op->status),
			 op->reason ? op->reason : "no reason given");
	fprintf(stderr, "%s: measure %s (sig %s): %s, %s\n", prog, it->text,
		it->pt->signature, was, now);
}

static const saturn_profile_hw_t *hw_of(const saturn_profile_t *pr,
					const saturn_profile_task_t *pt)
{
	for (int i = 0; i < pr->nhw; i++) {
		const char *a = pr->hw[i].klass, *b = pt->klass;

		if ((!a && !b) || (a && b && strcmp(a, b) == 0))
			return &pr->hw[i];
	}
	return pr->nhw ? &pr->hw[0] : NULL;
}

/* The nodes of the job this runs in (SLURM_JOB_NUM_NODES, else
 * SLURM_NNODES), 1 outside a job: a multi-node item needs as many. */
static int job_nodes(void)
{
	const char *nn = getenv("SLURM_JOB_NUM_NODES");

	if (!nn || !*nn)
		nn = getenv("SLURM_NNODES");
	return nn && atoi(nn) > 0 ? atoi(nn) : 1;
}

/* Compare each item's task signature now with the profile's; run the
 * trials of those that match. Returns how many items ran, -1 on error. */
static int run_items(const struct opts *o, const char *work, char (*devs)[32],
		     int ndev, struct item *items, int n)
{
	int ids[MAX_ITEMS], nids = 0, nsigs, nq = 0, ran = 0;
	struct sig *sigs = NULL;
	struct trial *q = calloc(n, sizeof(*q));
	struct trial_pool pool = {
	    .o = o, .work = work, .devs = devs, .ndev = ndev, .t0 = mono()};

	if (!q)
		return -1;
	for (int i = 0; i < n; i++) {
		int seen = 0;

		for (int k = 0; k < nids; k++)
			seen |= ids[k] == items[i].task;
		if (!seen && items[i].gpus <= ndev)
			ids[nids++] = items[i].task;
	}
	nsigs = nids ? signature_pass(o, work, nids, ids, &sigs) : 0;
	for (int i = 0; i < n; i++) {
		struct item *it = &items[i];
		const char *now = NULL;
		struct trial *tr;

		if (it->gpus > ndev) {
			fprintf(stderr,
				"%s: measure %s: %d GPUs asked for, the "
				"allocation has %d; skipped\n",
				prog, it->text, it->gpus, ndev);
			continue;
		}
		if (it->nodes > job_nodes()) {
			fprintf(stderr,
				"%s: measure %s: %d nodes asked for, the "
				"allocation has %d; skipped\n",
				prog, it->text, it->nodes, job_nodes());
			continue;
		}
		for (int s = 0; s < nsigs && !now; s++)
			for (int k = 0; k < sigs[s].nids; k++)
				if (sigs[s].ids[k] == it->task)
					now = sigs[s].signature;
		if (!now || strcmp(now, it->pt->signature) != 0) {
			fprintf(
			    stderr,
			    "%s: measure %s: task %d's signature is %s%s%s, "
			    "the profile's is '%s'; skipped\n",
			    prog, it->text, it->task, now ? "'" : "",
			    now ? now : "unknown", now ? "'" : "",
			    it->pt->signature);
			continue;
		}
		tr = &q[nq++];
		tr->task_id = it->task;
		tr->technique = it->t->name;
		tr->gpus = it->gpus;
		tr->nodes = it->nodes;
		snprintf(tr->params, sizeof(tr->params), "%s",
			 it->op->params ? it->op->params : "{}");
		tr->label = it->pt->signature;
		tr->owner = it;
	}
	sigs_free(sigs, nsigs > 0 ? nsigs : 0);
	if (nq && trial_pool_run(&pool, q, nq) < 0) {
		fprintf(stderr, "%s: cannot start a trial: %s\n", prog,
			strerror(errno));
		free(q);
		return -1;
	}
	for (int j = 0; j < nq; j++) {
		struct item *it = q[j].owner;
		saturn_profile_option_t *op = it->op;

		if (!q[j].reported) {
			fprintf(stderr, "%s: measure %s: %s; option left %s\n",
				prog, it->text, q[j].reason,
				saturn_opt_status_name(op->status));
			continue;
		}
		it->ran = 1;
		ran++;
		op->status =
		    q[j].state == SATURN_PT_MEASURED  ? SATURN_OPT_MEASURED
		    : q[j].state == SATURN_PT_OOM     ? SATURN_OPT_OOM
		    : q[j].state == SATURN_PT_TIMEOUT ? SATURN_OPT_TIMEOUT
						      : SATURN_OPT_FAILED;
		op->sec_per_batch =
		    op->status == SATURN_OPT_MEASURED ? q[j].sec_per_batch : 0;
		op->peak_mem_mb = q[j].peak_mem_mb;
		set_reason(op, op->status == SATURN_OPT_MEASURED ? NULL
								 : q[j].reason);
	}
	free(q);
	return ran;
}

/* A listed prediction that missed its measurement by more than
 * --escalate percent says the scaling fit is off for that technique: the
 * technique's other predicted counts of that signature (same parameter
 * candidate, within the allocation) are appended to items[] to be measured
 * in this job too, instead of only being re-fitted with the same model.
 * Returns how many were added; *n grows. */
static int escalate(const struct opts *o, struct item *items, int *n,
		    int ndev)
{
	int n0 = *n, added = 0;

	for (int i = 0; i < n0; i++) {
		struct item *it = &items[i];
		saturn_profile_task_t *pt = it->pt;
		int grp, k0 = *n;
		double miss;

		if (!it->ran || it->nodes > 1 || it->was != SATURN_OPT_PREDICTED ||
		    it->op->status != SATURN_OPT_MEASURED || !(it->was_spb > 0))
			continue;
		miss = it->op->sec_per_batch / it->was_spb - 1;
		if (fabs(miss) * 100 <= o->escalate)
			continue;
		grp = candidate_of(it->t, pt->signature, it->op);
		for (int k = 0; k < pt->noptions && *n < MAX_ITEMS; k++) {
			saturn_profile_option_t *op = &pt->options[k];
			int dup = 0;

			if (op->status != SATURN_OPT_PREDICTED ||
			    strcmp(op->technique, it->t->name) != 0 ||
			    saturn_profile_option_nodes(op) != 1 ||
			    op->gpus > ndev ||
			    candidate_of(it->t, pt->signature, op) != grp)
				continue;
			for (int j = 0; j < *n; j++)
				dup |= items[j].op == op;
			if (dup)
				continue;
			items[*n] = *it;
			items[*n].op = op;
			items[*n].gpus = op->gpus;
			items[*n].nodes = 1;
			items[*n].was = op->status;
			items[*n].was_spb = op->sec_per_batch;
			items[*n].ran = 0;
			snprintf(items[*n].text, sizeof(items[*n].text),
				 "%d:%s:%d", it->task, it->t->name, op->gpus);
			(*n)++;
		}
		added += *n - k0;
		if (*n > k0 && !o->quiet)
			fprintf(stderr,
				"%s: measure %s: %+.0f%% off its prediction "
				"(more than --escalate %.0f%%): measuring "
				"%d other predicted %s count%s too\n",
				prog, it->text, 100 * miss, o->escalate,
				*n - k0, it->t->name, *n - k0 == 1 ? "" : "s");
	}
	return added;
}

int measure_run(const struct opts *o, const saturn_techniques_t *reg,
		char (*devs)[32], int ndev)
{
	saturn_error_t err = {{0}};
	saturn_profile_t *pr =
	    saturn_profile_load(o->output, (long)getuid(), &err);
	struct item *items = NULL;
	char work[PATH_MAX];
	int n, nlisted, ran, rc = 2;

	if (!pr) {
		fprintf(stderr, "%s: --measure: %s\n", prog, err.text);
		return 2;
	}
	if (!(items = calloc(MAX_ITEMS, sizeof(*items))) ||
	    (n = parse_list(o->measure, reg, pr, items)) < 1)
		goto out;
	nlisted = n;
	if (work_dir_make(work) < 0)
		goto out;
	rc = 1;
	ran = run_items(o, work, devs, ndev, items, n);
	if (ran > 0 && o->escalate > 0) {
		int n0 = n, more = escalate(o, items, &n, ndev);

		/* the extra items run too; rc stays about the listed ones */
		if (more > 0 && run_items(o, work, devs, ndev, items + n0,
					  n - n0) < 0)
			ran = -1;
	}
	if (ran > 0) {
		char *json;

		for (int i = 0; i < n; i++) {
			const saturn_profile_hw_t *hw;
			double ar[MAX_GPUS + 1] = {0}, ag[MAX_GPUS + 1] = {0};
			saturn_bw_table_t bw = {MAX_GPUS, ar, ag};

			if (!items[i].ran)
				continue;
			if ((hw = hw_of(pr, items[i].pt)))
				for (int k = 0; k < hw->nnccl; k++)
					if (hw->nccl[k].gpus >= 0 &&
					    hw->nccl[k].gpus <= MAX_GPUS) {
						ar[hw->nccl[k].gpus] =
						    hw->nccl[k]
							.allreduce_busbw_gbs;
						ag[hw->nccl[k].gpus] =
						    hw->nccl[k]
							.allgather_busbw_gbs;
					}
			report_item(&items[i]);
			/* the one-node fit knows nothing of a multi-node
			 * measurement */
			if (items[i].nodes <= 1)
				refit(&items[i], &bw, reg, o->quiet);
		}
		json = saturn_profile_to_json(pr);
		if (!json || saturn_write_file_atomic(o->output, json,
						      strlen(json), &err) < 0) {
			fprintf(stderr, "%s: profile not written: %s\n", prog,
				json ? err.text : strerror(errno));
			free(json);
			ran = -1;
		} else {
			free(json);
		}
	}
	if (ran > 0) {
		/* refresh the cache entry of each signature measured */
		for (int i = 0; i < n; i++) {
			struct pcache c;
			saturn_profile_t *e;
			int first = items[i].ran;
			const saturn_profile_hw_t *hw = hw_of(pr, items[i].pt);

			for (int k = 0; k < i && first; k++)
				first = !(items[k].ran &&
					  items[k].pt == items[i].pt);
			if (!first || !hw)
				continue;
			pcache_open(&c, o, hw);
			e = pcache_get(&c, items[i].pt->signature);
			{
				/* one-node options only: the cache keeps
				 * what one node measures (multi-node options
				 * stay in the profile) */
				saturn_profile_task_t one = *items[i].pt;
				saturn_profile_option_t *keep = calloc(
				    (size_t)one.noptions + 1, sizeof(*keep));

				one.noptions = 0;
				for (int k = 0; keep && k < items[i].pt->noptions;
				     k++)
					if (saturn_profile_option_nodes(
						&items[i].pt->options[k]) == 1)
						keep[one.noptions++] =
						    items[i].pt->options[k];
				one.options = keep;
				if (keep)
					pcache_put(&c, pr->batch, &one,
						   e && e->created < pr->created
						       ? e->created
						       : pr->created);
				free(keep);
			}
			saturn_profile_destroy(e);
			pcache_close(&c);
		}
	}
	if (ran >= nlisted)
		rc = 0;
	work_dir_done(o, work);
out:
	free(items);
	saturn_profile_destroy(pr);
	return rc;
}
