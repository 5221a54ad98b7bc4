/* sweeps.c - the trials saturn-profile runs for each signature: the
 * sweeps of each technique over its GPU range (with parameter candidates,
 * lent single-GPU results, skipped offload), run in rounds of independent
 * trials, then assembled into the profile's options, with the profile
 * cache read before and written after (sweeps.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "internode.h"
#include "probe.h"
#include "profile.h"
#include "signatures.h"
#include "sweep.h"
#include "sweeps.h"
#include "technique.h"
#include "trials.h"


/* Add the next parameter candidate's sweep below the GPU count from which
 * the current candidate fits in memory (e.g. FSDP with activation
 * checkpointing where plain FSDP runs out of memory). */
static void chain_candidates(struct sig *s, int ngpus)
{
	for (int k = 0; k < s->ntech; k++) {
		for (int c = 0; c + 1 < MAX_CAND; c++) {
			struct tsweep *cur = &s->ts[k * MAX_CAND + c],
				      *nx = &s->ts[k * MAX_CAND + c + 1];
			int from, hi;
			saturn_error_t err = {{0}};

			if (!cur->sw || nx->t || !saturn_sweep_done(cur->sw))
				continue;
			from = saturn_sweep_feasible_from(cur->sw);
			hi = from ? from - 1 : cur->hi;
			if (hi < cur->lo)
				continue;
			if (saturn_technique_candidate(
				cur->t, hi, c + 1, s->signature, nx->params,
				sizeof(nx->params), &err) != 0)
				continue;
			nx->t = cur->t;
			nx->cand = c + 1;
			nx->lo = cur->lo;
			nx->hi = hi;
		}
	}
	(void)ngpus;
}

/* Queue one trial per GPU count a sweep hands out. -1 on ENOMEM. */
static int queue_sweep(struct sig *s, struct tsweep *ts, struct trial **q,
		       int *nq)
{
	int gl[MAX_GPUS], n = saturn_sweep_next(ts->sw, gl, MAX_GPUS);

	for (int j = 0; j < n; j++) {
		struct trial *nqa = realloc(*q, (*nq + 1) * sizeof(**q));
		struct trial *tr;
		saturn_error_t err = {{0}};

		if (!nqa)
			return -1;
		*q = nqa;
		tr = &nqa[(*nq)++];
		memset(tr, 0, sizeof(*tr));
		tr->task_id = s->ids[0];
		tr->technique = ts->t->name;
		tr->gpus = gl[j];
		tr->label = s->signature;
		tr->memsave = ts->cand != 0;
		tr->owner = ts;
		/* parameters resolved for this GPU count (e.g. pipeline
		 * stages) */
		if (saturn_technique_candidate(ts->t, tr->gpus, ts->cand,
					       s->signature, tr->params,
					       sizeof(tr->params), &err) != 0)
			snprintf(tr->params, sizeof(tr->params), "%s",
				 ts->params);
	}
	return 0;
}

/* A pipeline's micro-batch count on each GPU count, from the parameters
 * its trial there runs with: the scaling fit needs the real one. */
static void set_micro(const struct sig *s, struct tsweep *ts)
{
	if (saturn_scale_kind(ts->t->name) != SATURN_SCALE_PIPELINE)
		return;
	for (int g = ts->lo; g <= ts->hi; g++) {
		char buf[512];
		saturn_error_t err = {{0}};

		if (saturn_technique_candidate(ts->t, g, ts->cand, s->signature,
					       buf, sizeof(buf), &err) == 0)
			saturn_sweep_set_micro(
			    ts->sw, g,
			    (int)saturn_technique_param(buf, "micro_batches",
							8));
	}
}

/* ddp and fsdp with their default parameters on one GPU run the
 * single-GPU program with nothing to communicate: lend them the `single`
 * technique's measurement of the same task (measured in the first round)
 * instead of a trial of their own. Only the built-in techniques: one of
 * the configuration file or a plugin under these names runs what its
 * author wrote. */
static int builtin_named(const saturn_technique_t *t, const char *name)
{
	return t && strcmp(t->name, name) == 0 && t->source &&
	       strcmp(t->source, "builtin") == 0;
}

static void lend_single(const struct sig *s, struct tsweep *ts)
{
	const saturn_point_t *p = NULL;
	char why[160];

	if (ts->cand != 0 || ts->lo != 1 ||
	    (!builtin_named(ts->t, "ddp") && !builtin_named(ts->t, "fsdp")))
		return;
	for (int k = 0; k < s->ntech && !p; k++) {
		const struct tsweep *o = &s->ts[k * MAX_CAND];

		if (o->sw && builtin_named(o->t, "single"))
			p = saturn_sweep_point(o->sw, 1);
	}
	if (!p || p->state != SATURN_PT_MEASURED)
		return;
	snprintf(why, sizeof(why),
		 "the measured time of single on 1 GPU: %s on 1 GPU runs the "
		 "same program with nothing to communicate",
		 ts->t->name);
	saturn_sweep_lend(ts->sw, 1, p->sec_per_batch, p->peak_mem_mb, why);
}

/* The built-in offload runs on one GPU what `single` runs there, with the
 * optimizer state and gradients in host memory: where single fits on one
 * GPU, offload does the same work plus the host transfers and the
 * optimizer on the CPU, never faster, so it is not measured (status
 * `skipped`). Returns 1 when ts waits for single's first-round result, 2
 * when it is skipped (ts->skipped set), else 0: measure it. */
static int skip_offload(const struct sig *s, struct tsweep *ts)
{
	const saturn_point_t *p = NULL;
	int swept = 0;

	if (ts->cand != 0 || ts->lo != 1 || !builtin_named(ts->t, "offload"))
		return 0;
	for (int k = 0; k < s->ntech && !swept; k++) {
		const struct tsweep *o = &s->ts[k * MAX_CAND];

		if (!o->t || o->cached || !builtin_named(o->t, "single") ||
		    o->lo != 1)
			continue;
		swept = 1;
		p = o->sw ? saturn_sweep_point(o->sw, 1) : NULL;
	}
	if (!swept)
		return 0;
	if (!p || p->state == SATURN_PT_UNKNOWN ||
	    p->state == SATURN_PT_PENDING)
		return 1;
	if (p->state != SATURN_PT_MEASURED)
		return 0;
	ts->skipped = 1;
	snprintf(ts->skip_why, sizeof(ts->skip_why),
		 "not measured: single runs on 1 GPU (%.4g s per batch), and "
		 "offload runs the same work with the optimizer on the host, "
		 "never faster",
		 p->sec_per_batch);
	return 2;
}

/* Once every sweep of a signature is done: where its two fastest options
 * at a GPU count are both predicted and within SATURN_SWEEP_CLOSE_TOL of
 * each other, a fit's error picks the technique, so measure both
 * (saturn_sweep_close_calls; at most SATURN_SWEEP_CLOSE_PER_TASK trials a
 * signature, once). Options from the cache take no part. Returns how many
 * counts were handed back to their sweeps, or -1 on ENOMEM. */
static int close_calls(struct sig *s)
{
	saturn_sweep_t **sws;
	int n = s->ntech * MAX_CAND, who[SATURN_SWEEP_CLOSE_MAX],
	    gpus[SATURN_SWEEP_CLOSE_MAX], nc, taken = 0;

	if (s->closed)
		return 0;
	for (int k = 0; k < n; k++)
		if (s->ts[k].sw && !saturn_sweep_done(s->ts[k].sw))
			return 0;
	s->closed = 1;
	if (!(sws = calloc((size_t)n + 1, sizeof(*sws))))
		return -1;
	for (int k = 0; k < n; k++)
		sws[k] = s->ts[k].cached ? NULL : s->ts[k].sw;
	nc = saturn_sweep_close_calls(sws, n, SATURN_SWEEP_CLOSE_TOL,
				      SATURN_SWEEP_CLOSE_PER_TASK, who, gpus);
	for (int i = 0; i < nc; i++)
		taken += saturn_sweep_probe(sws[who[i]], gpus[i]);
	free(sws);
	return taken;
}

/* Run every sweep of every signature to completion, in rounds of
 * independent trials. 0, or -1 (printed). */
int run_sweeps(struct trial_pool *pool, struct sig *sigs, int nsigs, const saturn_bw_table_t *bw,
	       int ndev, int exhaustive)
{
	for (;;) {
		struct trial *q = NULL;
		int nq = 0;

		for (int si = 0; si < nsigs; si++) {
			struct sig *s = &sigs[si];

			chain_candidates(s, ndev);
			for (int k = 0; k < s->ntech * MAX_CAND; k++) {
				struct tsweep *ts = &s->ts[k];

				if (!ts->t || ts->cached || ts->skipped)
					continue;
				if (!ts->sw && !exhaustive &&
				    skip_offload(s, ts) != 0)
					continue;
				if (!ts->sw) {
					ts->sw = saturn_sweep_create(
					    saturn_scale_kind(ts->t->name),
					    (int)saturn_technique_param(
						ts->params, "micro_batches", 8),
					    ts->lo, ts->hi, bw, exhaustive);
					if (!ts->sw)
						goto nomem;
					set_micro(s, ts);
				}
				lend_single(s, ts);
				if (queue_sweep(s, ts, &q, &nq) < 0)
					goto nomem;
			}
		}
		if (nq == 0) {
			/* sweeps just completed may call for another
			 * candidate */
			int more = 0;

			for (int si = 0; si < nsigs; si++)
				chain_candidates(&sigs[si], ndev);
			for (int si = 0; si < nsigs && !more; si++)
				for (int k = 0; k < sigs[si].ntech * MAX_CAND;
				     k++)
					more |= sigs[si].ts[k].t &&
						!sigs[si].ts[k].cached &&
						!sigs[si].ts[k].skipped &&
						!sigs[si].ts[k].sw;
			for (int si = 0; si < nsigs; si++) {
				int c = exhaustive ? 0 : close_calls(&sigs[si]);

				if (c < 0)
					goto nomem;
				more |= c > 0;
			}
			free(q);
			if (more)
				continue;
			return 0;
		}
		if (trial_pool_run(pool, q, nq) < 0) {
			fprintf(stderr, "%s: cannot start a trial: %s\n", prog,
				strerror(errno));
			free(q);
			return -1;
		}
		for (int j = 0; j < nq; j++) {
			struct tsweep *ts = q[j].owner;

			saturn_sweep_report(ts->sw, q[j].gpus, q[j].state,
					    q[j].sec_per_batch,
					    q[j].peak_mem_mb, q[j].reason);
		}
		free(q);
	}
nomem:
	fprintf(stderr, "%s: out of memory\n", prog);
	return -1;
}

/* The techniques to sweep for each signature: those of the registry (or of
 * --techniques) that run on this node, over their GPU range. -1 on ENOMEM. */
int setup_sweeps(const struct opts *o, const saturn_techniques_t *reg, struct sig *sigs, int nsigs,
		 int ndev)
{
	saturn_error_t err = {{0}};

	for (int si = 0; si < nsigs; si++) {
		struct sig *s = &sigs[si];

		s->ts = calloc((size_t)saturn_techniques_count(reg) * MAX_CAND,
			       sizeof(*s->ts));
		for (int k = 0; k < saturn_techniques_count(reg); k++) {
			const saturn_technique_t *t =
			    saturn_techniques_get(reg, k);
			struct tsweep *ts = &s->ts[s->ntech * MAX_CAND];
			int hi = saturn_technique_max_gpus(t, ndev);

			if (o->techniques) {
				int tv = 0;
				char want[128];
				const char *p = o->techniques;
				size_t l;

				for (; *p; p += l + (p[l] == ',')) {
					l = strcspn(p, ",");
					snprintf(want, sizeof(want), "%.*s",
						 (int)l, p);
					tv |= strcmp(want, t->name) == 0;
				}
				if (!tv)
					continue;
			}
			if (t->min_gpus > hi)
				continue;
			if (saturn_technique_candidate(
				t, hi, 0, s->signature, ts->params,
				sizeof(ts->params), &err) != 0) {
				fprintf(stderr,
					"%s: technique %s skipped: %s\n", prog,
					t->name, err.text);
				continue;
			}
			ts->t = t;
			ts->lo = t->min_gpus;
			ts->hi = hi;
			s->ntech++;
		}
	}
	return 0;
}

/* The option for count g of one technique from its sweeps: the first
 * candidate that runs; else the first one's failure. 0, or -1 when no
 * sweep has a result for g. */
static int sweep_option(const struct sig *s, const struct tsweep *base, int g,
			saturn_profile_option_t *op)
{
	const saturn_point_t *best = NULL;
	const struct tsweep *from = NULL;
	char pj[512];
	saturn_error_t perr = {{0}};

	for (int cc = 0; cc < MAX_CAND; cc++) {
		const struct tsweep *ts = &base[cc];
		const saturn_point_t *p =
		    ts->sw ? saturn_sweep_point(ts->sw, g) : NULL;

		if (!p || p->state == SATURN_PT_UNKNOWN ||
		    p->state == SATURN_PT_PENDING)
			continue;
		if (p->state == SATURN_PT_MEASURED ||
		    p->state == SATURN_PT_PREDICTED) {
			best = p;
			from = ts;
			break;
		}
		if (!best) {
			best = p;
			from = ts;
		}
	}
	if (!best)
		return -1;
	op->technique = xstrdup(from->t->name);
	op->gpus = g;
	op->sec_per_batch = best->sec_per_batch;
	op->peak_mem_mb = best->peak_mem_mb;
	if (saturn_technique_candidate(from->t, g, from->cand, s->signature, pj,
				       sizeof(pj), &perr) != 0)
		snprintf(pj, sizeof(pj), "%s", from->params);
	op->params = xstrdup(pj);
	switch (best->state) {
	case SATURN_PT_MEASURED:
		op->status = SATURN_OPT_MEASURED;
		break;
	case SATURN_PT_PREDICTED:
		op->status = SATURN_OPT_PREDICTED;
		break;
	case SATURN_PT_OOM:
	case SATURN_PT_OOM_PRED:
		op->status = SATURN_OPT_OOM;
		break;
	case SATURN_PT_TIMEOUT:
		op->status = SATURN_OPT_TIMEOUT;
		break;
	default:
		op->status = SATURN_OPT_FAILED;
		break;
	}
	if (best->reason[0])
		op->reason = xstrdup(best->reason);
	return 0;
}

static void copy_option(saturn_profile_option_t *d,
			const saturn_profile_option_t *op)
{
	*d = *op;
	d->technique = xstrdup(op->technique);
	d->reason = op->reason ? xstrdup(op->reason) : NULL;
	d->params = op->params ? xstrdup(op->params) : NULL;
}

/* The profile task of signature s: its options from the sweeps, or from
 * the cache entry for techniques taken from it. Prints a summary line.
 * Returns the number of usable options. */
int assemble_task(const struct opts *o, struct sig *s, saturn_profile_task_t *pt, int ndev)
{
	int usable = 0, predicted = 0;

	pt->signature = xstrdup(s->signature);
	pt->ntask_ids = s->nids;
	pt->task_ids = s->ids;
	s->ids = NULL;
	pt->batches = s->batches;
	pt->klass = o->klass ? xstrdup(o->klass) : NULL;
	pt->options = calloc((size_t)s->ntech * ndev + 1, sizeof(*pt->options));
	if (!pt->options)
		return 0;
	for (int k = 0; k < s->ntech; k++) {
		struct tsweep *base = &s->ts[k * MAX_CAND];

		for (int g = base->lo; g <= base->hi; g++) {
			saturn_profile_option_t *op =
			    &pt->options[pt->noptions];

			if (base->cached) {
				const saturn_profile_task_t *e =
				    base->from_cache;

				for (int i = 0; i < e->noptions; i++)
					if (e->options[i].gpus == g &&
					    strcmp(e->options[i].technique,
						   base->t->name) == 0) {
						copy_option(op, &e->options[i]);
						pt->noptions++;
						break;
					}
			} else if (base->skipped) {
				op->technique = xstrdup(base->t->name);
				op->gpus = g;
				op->status = SATURN_OPT_SKIPPED;
				op->params = xstrdup(base->params);
				op->reason = xstrdup(base->skip_why);
				pt->noptions++;
			} else if (sweep_option(s, base, g, op) == 0) {
				pt->noptions++;
			} else {
				continue;
			}
			if (op->status == SATURN_OPT_MEASURED ||
			    op->status == SATURN_OPT_PREDICTED)
				usable++;
			predicted += op->status == SATURN_OPT_PREDICTED;
		}
	}
	if (!o->quiet)
		fprintf(stderr, "%s: %s: %d usable options (%d predicted)\n",
			prog, s->signature, usable, predicted);
	return usable;
}

/* Techniques of each signature whose results the cache holds for every GPU
 * count this run would sweep: taken from the entry, not trialled. */
void use_cache(const struct pcache *pc, struct sig *sigs, int nsigs, saturn_profile_t **entries,
	       int reuse)
{
	for (int si = 0; si < nsigs; si++) {
		struct sig *s = &sigs[si];
		const saturn_profile_task_t *e;
		char when[32];
		time_t tc;

		if (!(entries[si] = pcache_get(pc, s->signature)))
			continue;
		e = &entries[si]->tasks[0];
		for (int k = 0; k < s->ntech; k++) {
			struct tsweep *base = &s->ts[k * MAX_CAND];

			if (reuse && pcache_covers(e, base->t->name, base->lo,
						   base->hi)) {
				base->cached = 1;
				base->from_cache = e;
				s->ncached++;
			}
		}
		tc = (time_t)entries[si]->created;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", localtime(&tc));
		if (!pc->quiet && reuse)
			fprintf(stderr,
				"%s: %s: %d of %d techniques from the cache "
				"(entry created %s)\n",
				prog, s->signature, s->ncached, s->ntech, when);
	}
}

/* Write or refresh each signature's cache entry: this run's options, plus
 * the old entry's for techniques this run did not consider. An entry keeps
 * the creation time of the oldest result it holds. */
void store_cache(const struct pcache *pc, const char *batch, struct sig *sigs, saturn_profile_t *pr,
		 saturn_profile_t **entries)
{
	for (int si = 0; si < pr->ntasks; si++) {
		struct sig *s = &sigs[si];
		const saturn_profile_task_t *pt = &pr->tasks[si];
		const saturn_profile_task_t *e =
		    entries[si] ? &entries[si]->tasks[0] : NULL;
		saturn_profile_task_t m = *pt;
		int old = s->ncached > 0;

		if (e && s->ncached == s->ntech)
			continue; /* nothing new */
		m.options =
		    calloc((size_t)pt->noptions + (e ? e->noptions : 0) + 1,
			   sizeof(*m.options));
		if (!m.options)
			continue;
		memcpy(m.options, pt->options,
		       (size_t)pt->noptions * sizeof(*m.options));
		for (int i = 0; e && i < e->noptions; i++) {
			int seen = 0;

			for (int k = 0; k < s->ntech && !seen; k++)
				seen = strcmp(s->ts[k * MAX_CAND].t->name,
					      e->options[i].technique) == 0;
			if (!seen) {
				m.options[m.noptions++] = e->options[i];
				old = 1;
			}
		}
		pcache_put(pc, batch, &m,
			   old ? entries[si]->created : pr->created);
		free(m.options);
	}
}
