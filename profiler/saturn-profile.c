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
#include "sweeps.h"
#include "sweep.h"
#include "technique.h"
#include "topology.h"
#include "trials.h"

const char *prog = "saturn-profile";

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return d;
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
