/* saturn-profile - the companion profiler job of a Saturn batch
 * (saturn-profile(1)).
 *
 * Inside a one-node allocation: probe the node (GPU model and memory, links
 * from hwloc or gres.conf, NCCL bus bandwidth per GPU count), learn each
 * array task's signature by running the batch script in SATURN_MODE=
 * signature, then run trials (SATURN_MODE=trial) for each distinct
 * signature x technique x a few GPU counts, concurrently on disjoint GPU
 * subsets, predict the other GPU counts with a fitted scaling model
 * (lib/job/sweep.h), and write a saturn-profile/1 file atomically.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cache.h"
#include "formats.h"
#include "hw.h"
#include "idset.h"
#include "internode.h"
#include "measure.h"
#include "numparse.h"
#include "probe.h"
#include "profile.h"
#include "signatures.h"
#include "sweep.h"
#include "technique.h"
#include "topology.h"
#include "trials.h"

#define MAX_CAND 3

const char *prog = "saturn-profile";

/* one sweep over a GPU range with one parameter candidate */
struct tsweep {
	const saturn_technique_t *t;
	int cand;
	char params[512];
	saturn_sweep_t *sw;
	int lo, hi;
	int skipped; /* not measured on purpose (skip_offload): why */
	char skip_why[200];
	int cached; /* options taken from the profile cache: */
	const saturn_profile_task_t *from_cache;
};

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return d;
}

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
static int run_sweeps(struct trial_pool *pool, struct sig *sigs, int nsigs,
		      const saturn_bw_table_t *bw, int ndev, int exhaustive)
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
static int setup_sweeps(const struct opts *o, const saturn_techniques_t *reg,
			struct sig *sigs, int nsigs, int ndev)
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
static int assemble_task(const struct opts *o, struct sig *s,
			 saturn_profile_task_t *pt, int ndev)
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
static void use_cache(const struct pcache *pc, struct sig *sigs, int nsigs,
		      saturn_profile_t **entries, int reuse)
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
static void store_cache(const struct pcache *pc, const char *batch,
			struct sig *sigs, saturn_profile_t *pr,
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

/* --- main: parse options, prepare (probe), measure, write ----------------
 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s --batch NAME --script FILE --task-ids LIST "
		"--output FILE\n"
		"       [--trial-batches N] [--warmup N] [--timeout S] "
		"[--max-gpus N]\n"
		"       [--techniques LIST] [--exhaustive] [--backend "
		"auto|cpu|cuda]\n"
		"       [--topology XML] [--gres-conf FILE] [--class NAME] "
		"[--keep] [--quiet]\n"
		"       [--cache DIR | --no-cache] [--cache-max-age DAYS]\n"
		"       [--internode-bw GB/s [--internode-nodes K]]\n"
		"   or: %s --batch NAME --script FILE --output PROFILE "
		"--measure TASK:TECHNIQUE:GPUS[,...]\n"
		"       [--escalate PCT] [--cache DIR | --no-cache] [--timeout S] [--backend "
		"auto|cpu|cuda] ...\n"
		"see saturn-profile(1)\n",
		prog, prog);
}

/* An option value numparse refused: print its message; exit status 2. */
static int bad_option(const saturn_error_t *err)
{
	fprintf(stderr, "%s: %s\n", prog, err->text);
	return 2;
}

/* Everything one profiling run holds: the steps below fill it in turn and
 * run_free() releases it, whichever step stopped. */
struct run {
	struct opts o;
	struct pcache cache;
	saturn_profile_t **entries;
	char devs[MAX_GPUS][32], work[PATH_MAX];
	int have_work; /* work_dir_make() succeeded: work_dir_done() at the end */
	int ndev, nids, nsigs, done_trials, usable_all;
	int *ids;
	double ar[MAX_GPUS + 1], ag[MAX_GPUS + 1], t0;
	struct trial_pool pool;
	saturn_profile_t *pr;
	saturn_profile_hw_t *hw;
	struct sig *sigs;
	saturn_techniques_t *reg;
	saturn_error_t err;
	saturn_bw_table_t bw;
};

/* Step 1: the command line into *o; *show is set by --show-topology.
 * Returns -1 when main goes on, else main's exit status (0 after --help,
 * 2 after a bad option, its message printed). */
static int parse_options(int argc, char **argv, struct opts *o, int *show)
{
	static const struct option longopts[] = {
	    {"batch", required_argument, NULL, 'b'},
	    {"script", required_argument, NULL, 's'},
	    {"task-ids", required_argument, NULL, 'i'},
	    {"output", required_argument, NULL, 'o'},
	    {"trial-batches", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"timeout", required_argument, NULL, 't'},
	    {"max-gpus", required_argument, NULL, 'g'},
	    {"techniques", required_argument, NULL, 'T'},
	    {"exhaustive", no_argument, NULL, 'x'},
	    {"backend", required_argument, NULL, 'B'},
	    {"topology", required_argument, NULL, 'X'},
	    {"gres-conf", required_argument, NULL, 'G'},
	    {"class", required_argument, NULL, 'c'},
	    {"keep", no_argument, NULL, 'k'},
	    {"cache", required_argument, NULL, 'C'},
	    {"no-cache", no_argument, NULL, 'N'},
	    {"cache-max-age", required_argument, NULL, 'A'},
	    {"measure", required_argument, NULL, 'M'},
	    {"escalate", required_argument, NULL, 'E'},
	    {"show-topology", no_argument, NULL, 'S'},
	    {"internode-bw", required_argument, NULL, 'I'},
	    {"internode-nodes", required_argument, NULL, 'K'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	saturn_error_t err = {{0}};
	int c;

	while ((c = getopt_long(argc, argv,
				"b:s:i:o:n:w:t:g:T:xB:X:G:c:kqhSC:NA:M:E:I:K:",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o->batch = optarg;
			break;
		case 's':
			o->script = optarg;
			break;
		case 'i':
			o->task_ids = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'n':
			if (saturn_parse_int("--trial-batches", optarg, 1, INT_MAX,
					     &o->trial_batches, &err) < 0)
				return bad_option(&err);
			break;
		case 'w':
			if (saturn_parse_int("--warmup", optarg, 0, INT_MAX,
					     &o->warmup, &err) < 0)
				return bad_option(&err);
			break;
		case 't':
			if (saturn_parse_double("--timeout", optarg, 0, INFINITY,
						SATURN_NUM_LO_OPEN, &o->timeout,
						&err) < 0)
				return bad_option(&err);
			break;
		case 'g':
			if (saturn_parse_int("--max-gpus", optarg, 0, INT_MAX,
					     &o->max_gpus, &err) < 0)
				return bad_option(&err);
			break;
		case 'T':
			o->techniques = optarg;
			break;
		case 'x':
			o->exhaustive = 1;
			break;
		case 'B':
			o->backend = optarg;
			break;
		case 'X':
			o->topology = optarg;
			break;
		case 'G':
			o->gres_conf = optarg;
			break;
		case 'c':
			o->klass = optarg;
			break;
		case 'k':
			o->keep = 1;
			break;
		case 'C':
			o->cache_dir = optarg;
			break;
		case 'N':
			o->no_cache = 1;
			break;
		case 'A': /* days */
			if (saturn_parse_double("--cache-max-age", optarg, 0,
						INFINITY, 0, &o->cache_max_age,
						&err) < 0)
				return bad_option(&err);
			break;
		case 'E': /* percent, 0 = off */
			if (saturn_parse_double("--escalate", optarg, 0, INFINITY,
						0, &o->escalate, &err) < 0)
				return bad_option(&err);
			break;
		case 'I': /* GB/s, 0 = none */
			if (saturn_parse_double("--internode-bw", optarg, 0,
						1e6, 0, &o->internode_gbs,
						&err) < 0)
				return bad_option(&err);
			break;
		case 'K':
			if (saturn_parse_int("--internode-nodes", optarg, 2,
					     SATURN_MAX_TASK_NODES,
					     &o->internode_nodes, &err) < 0)
				return bad_option(&err);
			break;
		case 'M':
			o->measure = optarg;
			break;
		case 'S':
			*show = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

/* --measure: re-measure options of an existing profile (measure.c) on the
 * visible GPUs. Exit status. */
static int measure_mode(const struct opts *o)
{
	char devs[MAX_GPUS][32];
	saturn_techniques_t *reg;
	saturn_error_t err = {{0}};
	int ndev, rc;

	ndev = visible_devices(devs, MAX_GPUS);
	if (o->max_gpus && ndev > o->max_gpus)
		ndev = o->max_gpus;
	if (!(reg = saturn_techniques_default(&err))) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		return 2;
	}
	rc = measure_run(o, reg, devs, ndev);
	saturn_techniques_destroy(reg);
	return rc;
}

/* Step 2: task ids, GPUs, techniques, the work folder, and the node probed
 * into r->pr's hardware entry. 0, or main's exit status (2 on a usage or
 * setup problem, 77 when the asked-for backend has no device, 1 on
 * ENOMEM), the problem printed. */
static int prepare(struct run *r)
{
	if ((r->nids = saturn_idset_parse("--task-ids", r->o.task_ids,
					  SATURN_TASK_ID_MAX, SATURN_MAX_TASKS,
					  &r->ids, &r->err)) < 1) {
		fprintf(stderr, "%s: %s\n", prog, r->err.text);
		return 2;
	}
	r->ndev = visible_devices(r->devs, MAX_GPUS);
	if (r->ndev < 1) {
		fprintf(stderr,
			"%s: no GPUs: CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS "
			"are unset\n",
			prog);
		return 2;
	}
	if (r->o.max_gpus && r->ndev > r->o.max_gpus)
		r->ndev = r->o.max_gpus;
	if (!(r->reg = saturn_techniques_default(&r->err))) {
		fprintf(stderr, "%s: %s\n", prog, r->err.text);
		return 2;
	}
	if (work_dir_make(r->work) < 0)
		return 2;
	r->have_work = 1;
	if (!(r->pr = saturn_profile_create()) ||
	    !(r->pr->batch = strdup(r->o.batch)) ||
	    !(r->pr->hw = calloc(1, sizeof(*r->pr->hw))))
		return 1;
	r->pr->created = (double)time(NULL);
	r->pr->nhw = 1;
	r->hw = r->pr->hw;
	{
		int rc = probe_hw(&r->o, r->ndev, r->hw, r->ar, r->ag);

		if (rc != 0)
			return rc == 77 ? 77 : 2;
	}
	r->bw.max = r->ndev;
	r->bw.ar = r->ar;
	r->bw.ag = r->ag;
	if (!r->o.quiet) {
		saturn_profile_hw_t *hw = r->hw;

		fprintf(stderr, "%s: %d GPUs (%s, %.0f MiB, %s)", prog, r->ndev,
			hw->gpu_model, hw->gpu_mem_mb, hw->interconnect);
		for (int i = 0; i < hw->nnccl; i++)
			fprintf(stderr, "%s%d:%.1f/%.1f",
				i ? " " : "; all-reduce/all-gather busbw GB/s ",
				hw->nccl[i].gpus,
				hw->nccl[i].allreduce_busbw_gbs,
				hw->nccl[i].allgather_busbw_gbs);
		fputc('\n', stderr);
	}
	return 0;
}

/* Step 3: each task's signature, then the sweeps: options the profile
 * cache still holds are reused, the others measured in rounds of trials
 * packed onto disjoint GPUs. 0, or 1 (printed where it is not ENOMEM). */
static int measure_options(struct run *r)
{
	r->nsigs = signature_pass(&r->o, r->work, r->nids, r->ids, &r->sigs);
	if (r->nsigs < 1) {
		fprintf(stderr,
			"%s: no task produced a signature (is saturn-run in "
			"the script?)\n",
			prog);
		return 1;
	}

	if (setup_sweeps(&r->o, r->reg, r->sigs, r->nsigs, r->ndev) < 0 ||
	    !(r->entries = calloc(r->nsigs, sizeof(*r->entries))))
		return 1;
	pcache_open(&r->cache, &r->o, r->hw);
	/* --exhaustive measures anew (the entries' other techniques are kept)
	 */
	use_cache(&r->cache, r->sigs, r->nsigs, r->entries, !r->o.exhaustive);

	/* rounds of independent trials, packed onto disjoint GPUs */
	r->pool.o = &r->o;
	r->pool.work = r->work;
	r->pool.devs = r->devs;
	r->pool.ndev = r->ndev;
	r->pool.t0 = r->t0;
	if (run_sweeps(&r->pool, r->sigs, r->nsigs, &r->bw, r->ndev,
		       r->o.exhaustive) < 0)
		return 1;
	r->done_trials = r->pool.done;
	return 0;
}

/* --internode-bw: predicted options on 2 .. --internode-nodes nodes
 * (internode.h) added to pr. 0, or -1 (printed). */
static int predict_internode(const struct opts *o, saturn_profile_t *pr)
{
	saturn_internode_t in = {o->internode_gbs,
				 o->internode_nodes ? o->internode_nodes : 2,
				 "--internode-bw"};
	saturn_error_t err = {{0}};
	int n;

	if (!(o->internode_gbs > 0))
		return 0;
	if ((n = saturn_profile_predict_nodes(pr, &in, &err)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		return -1;
	}
	if (!o->quiet)
		fprintf(stderr,
			"%s: %d option(s) on 2 to %d nodes predicted from the "
			"inter-node bandwidth %g GB/s\n",
			prog, n, in.max_nodes, in.gbs);
	return 0;
}

/* Free the options each task has beyond keep[task]. */
static void drop_tail(saturn_profile_t *pr, const int *keep)
{
	for (int ti = 0; ti < pr->ntasks; ti++) {
		saturn_profile_task_t *pt = &pr->tasks[ti];

		for (int i = keep[ti]; i < pt->noptions; i++) {
			free(pt->options[i].technique);
			free(pt->options[i].reason);
			free(pt->options[i].params);
		}
		pt->noptions = keep[ti];
	}
}

/* Step 4: the profile assembled from the sweeps, written atomically to
 * --output, and its new entries stored in the cache. 0, or 1 when some
 * signature has no usable option or the profile could not be written
 * (printed). */
static int write_profile(struct run *r)
{
	saturn_profile_t *pr = r->pr;

	pr->tasks = calloc(r->nsigs, sizeof(*pr->tasks));
	if (!pr->tasks)
		return 1;
	for (int si = 0; si < r->nsigs; si++)
		if (assemble_task(&r->o, &r->sigs[si], &pr->tasks[pr->ntasks++],
				  r->ndev) == 0)
			r->usable_all = 0;
	{
		char *json;
		int *keep = calloc(pr->ntasks ? pr->ntasks : 1, sizeof(*keep));

		if (!keep)
			return 1;
		for (int ti = 0; ti < pr->ntasks; ti++)
			keep[ti] = pr->tasks[ti].noptions;
		if (predict_internode(&r->o, pr) < 0) {
			free(keep);
			return 1;
		}
		json = saturn_profile_to_json(pr);
		/* the cache keeps measurements, not what one bandwidth
		 * predicted */
		drop_tail(pr, keep);
		free(keep);

		if (!json) {
			fprintf(stderr,
				"%s: cannot serialise the profile: %s\n", prog,
				strerror(errno));
			return 1;
		}
		if (saturn_write_file_atomic(r->o.output, json, strlen(json),
					     &r->err) < 0) {
			fprintf(stderr, "%s: %s\n", prog, r->err.text);
			free(json);
			return 1;
		}
		free(json);
	}
	store_cache(&r->cache, r->o.batch, r->sigs, pr, r->entries);
	if (!r->o.quiet)
		fprintf(stderr,
			"%s: %d trials in %.0f s; profile written to %s\n",
			prog, r->done_trials, mono() - r->t0, r->o.output);
	if (!r->usable_all)
		fprintf(stderr, "%s: some signatures have no usable option\n",
			prog);
	return r->usable_all ? 0 : 1;
}

/* Release what the steps left in r (the work folder removed unless
 * --keep: work_dir_done). */
static void run_free(struct run *r)
{
	if (r->have_work)
		work_dir_done(&r->o, r->work);
	for (int si = 0; r->sigs && si < r->nsigs; si++) {
		for (int k = 0;
		     r->sigs[si].ts && k < r->sigs[si].ntech * MAX_CAND; k++)
			saturn_sweep_destroy(r->sigs[si].ts[k].sw);
		free(r->sigs[si].ts);
	}
	sigs_free(r->sigs, r->nsigs);
	free(r->ids);
	saturn_profile_destroy(r->pr);
	saturn_techniques_destroy(r->reg);
	for (int si = 0; r->entries && si < r->nsigs; si++)
		saturn_profile_destroy(r->entries[si]);
	free(r->entries);
	pcache_close(&r->cache);
}

int main(int argc, char **argv)
{
	struct run r = {.o = {.trial_batches = 3,
			      .warmup = 1,
			      .timeout = 300,
			      .backend = "auto",
			      .cache_max_age = 30,
			      .escalate = 15},
			.usable_all = 1};
	int show = 0, rc;

	r.t0 = mono();
	if ((rc = parse_options(argc, argv, &r.o, &show)) >= 0)
		return rc;
	if (show)
		return show_topology(&r.o);
	if (!r.o.batch || !r.o.script || (!r.o.task_ids && !r.o.measure) ||
	    !r.o.output || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (r.o.measure)
		return measure_mode(&r.o);
	rc = prepare(&r);
	if (rc == 0)
		rc = measure_options(&r);
	if (rc == 0)
		rc = write_profile(&r);
	run_free(&r);
	return rc;
}
