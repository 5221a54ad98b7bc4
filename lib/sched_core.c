/* sched_core.c - the Slurm-free half of sched/saturn (see sched_core.h): settings,
 * snapshot -> planner problem, the first-come-first-served fallback plan and
 * the per-job decisions. Progress files and the persisted state live in
 * sched_state.c. Nothing here knows about slurmctld; the plugin fills the
 * snapshot under read locks and applies the decisions under write locks.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listsched.h"
#include "planner.h"
#include "sched_core.h"

/* --- settings -------------------------------------------------------- */

void saturn_sched_settings_init(saturn_sched_settings_t *s)
{
	memset(s, 0, sizeof(*s));
	s->interval_s = 10.0;
	s->solver_time_s = 2.0;
	s->min_gain = 0.05;
	s->backfill = 1;
	s->release_slack_s = 5.0;
	s->profile_time_min = 30;
	s->measure_predicted = 1;
	s->profile_cache = 1;
}

void saturn_sched_settings_free(saturn_sched_settings_t *s)
{
	if (!s)
		return;
	free(s->state_dir);
	free(s->profile_dir);
	free(s->profiler);
	s->state_dir = s->profile_dir = s->profiler = NULL;
}

static int parse_num(const char *v, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi)
		return -1;
	*out = d;
	return 0;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "true")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(v, "no") || !strcmp(v, "0") || !strcmp(v, "false")) {
		*out = 0;
		return 0;
	}
	return -1;
}

static int parse_path(const char *v, char **out)
{
	char *d;

	if (v[0] != '/' || strlen(v) > 1024)
		return -1;
	d = strdup(v);
	if (!d)
		return -1;
	free(*out);
	*out = d;
	return 0;
}

int saturn_sched_settings_parse(saturn_sched_settings_t *s, const char *params,
				saturn_error_t *err)
{
	char *copy, *tok, *save = NULL;
	int bad = 0;

	if (!params || !params[0])
		return 0;
	copy = strdup(params);
	if (!copy) {
		saturn_error_set(err, "out of memory");
		return 1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const char *key = tok, *val, *why = NULL;

		if (strncmp(tok, "saturn_", 7) != 0)
			continue;
		if (!eq) {
			why = "needs a value (key=value)";
			goto bad;
		}
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(key, "saturn_interval")) {
			if (parse_num(val, 1, 3600, &s->interval_s) < 0)
				why = "must be a number of seconds from 1 to 3600";
		} else if (!strcmp(key, "saturn_solver_time")) {
			if (parse_num(val, 0.05, 600, &s->solver_time_s) < 0)
				why = "must be a number of seconds from 0.05 to 600";
		} else if (!strcmp(key, "saturn_min_gain")) {
			if (parse_num(val, 0, 1, &s->min_gain) < 0)
				why = "must be a fraction from 0 to 1 (e.g. 0.05)";
		} else if (!strcmp(key, "saturn_release_slack")) {
			if (parse_num(val, 0, 3600, &s->release_slack_s) < 0)
				why = "must be a number of seconds from 0 to 3600";
		} else if (!strcmp(key, "saturn_backfill")) {
			if (parse_bool(val, &s->backfill) < 0)
				why = "must be yes or no";
		} else if (!strcmp(key, "saturn_state_dir")) {
			if (parse_path(val, &s->state_dir) < 0)
				why = "must be an absolute path";
		} else if (!strcmp(key, "saturn_profile_dir")) {
			if (parse_path(val, &s->profile_dir) < 0)
				why = "must be an absolute path";
		} else if (!strcmp(key, "saturn_profiler")) {
			if (!strcmp(val, "none")) {
				free(s->profiler);
				s->profiler = NULL;
			} else if (parse_path(val, &s->profiler) < 0) {
				why = "must be an absolute path or none";
			}
		} else if (!strcmp(key, "saturn_profile_time")) {
			double m;

			if (parse_num(val, 1, 10080, &m) < 0 || m != (int)m)
				why = "must be a whole number of minutes from 1 to 10080";
			else
				s->profile_time_min = (int)m;
		} else if (!strcmp(key, "saturn_measure_predicted")) {
			if (parse_bool(val, &s->measure_predicted) < 0)
				why = "must be yes or no";
		} else if (!strcmp(key, "saturn_profile_cache")) {
			if (parse_bool(val, &s->profile_cache) < 0)
				why = "must be yes or no";
		} else if (!strncmp(key, "saturn_reconfigure", 18)) {
			/* reconfig.c: saturn_reconfig_settings_parse */
		} else {
			why = "unknown saturn_ key (known: saturn_interval, saturn_solver_time, saturn_state_dir, saturn_profile_dir, saturn_min_gain, saturn_backfill, saturn_release_slack, saturn_profiler, saturn_profile_time, saturn_measure_predicted, saturn_profile_cache, saturn_reconfigure*)";
		}
		if (!why)
			continue;
		if (eq)
			*eq = '=';
bad:
		if (!bad++)
			saturn_error_set(err, "SchedulerParameters %s: %s", tok, why);
	}
	free(copy);
	return bad;
}

/* --- snapshot -------------------------------------------------------- */

saturn_snapshot_t *saturn_snapshot_create(void)
{
	return calloc(1, sizeof(saturn_snapshot_t));
}

void saturn_snapshot_reset(saturn_snapshot_t *s)
{
	s->nnodes = s->nbusy = s->njobs = 0;
	s->now = 0;
}

void saturn_snapshot_destroy(saturn_snapshot_t *s)
{
	if (!s)
		return;
	free(s->nodes);
	free(s->busy);
	free(s->jobs);
	free(s);
}

static void *add_entry(void **arr, int *n, int *cap, size_t sz)
{
	char *p;

	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 64;
		void *na = realloc(*arr, (size_t)nc * sz);

		if (!na)
			return NULL;
		*arr = na;
		*cap = nc;
	}
	p = (char *)*arr + (size_t)(*n)++ * sz;
	memset(p, 0, sz);
	return p;
}

saturn_snap_node_t *saturn_snapshot_add_node(saturn_snapshot_t *s)
{
	return add_entry((void **)&s->nodes, &s->nnodes, &s->cap_nodes, sizeof(*s->nodes));
}

saturn_snap_busy_t *saturn_snapshot_add_busy(saturn_snapshot_t *s)
{
	return add_entry((void **)&s->busy, &s->nbusy, &s->cap_busy, sizeof(*s->busy));
}

saturn_snap_job_t *saturn_snapshot_add_job(saturn_snapshot_t *s)
{
	saturn_snap_job_t *j = add_entry((void **)&s->jobs, &s->njobs, &s->cap_jobs,
					 sizeof(*s->jobs));

	if (j) {
		j->node = -1;
		j->task_id = -1;
		j->batches_left = -1;
		j->batches_done = -1;
	}
	return j;
}

int saturn_snapshot_node_index(const saturn_snapshot_t *s, const char *name)
{
	for (int i = 0; i < s->nnodes; i++)
		if (!strcmp(s->nodes[i].name, name))
			return i;
	return -1;
}

int saturn_snap_same_batch(const saturn_snap_job_t *a, const saturn_snap_job_t *b)
{
	return a->uid == b->uid && !strcmp(a->batch, b->batch);
}

typedef struct group_key {
	const saturn_snap_job_t *j;
	int pos;
} group_key_t;

static int cmp_group_key(const void *a, const void *b)
{
	const group_key_t *x = a, *y = b;
	int c;

	if (x->j->uid != y->j->uid)
		return x->j->uid < y->j->uid ? -1 : 1;
	if ((c = strcmp(x->j->batch, y->j->batch)))
		return c;
	return x->pos - y->pos; /* keeps input order within a batch */
}

void saturn_batch_groups_free(saturn_batch_groups_t *g)
{
	if (!g)
		return;
	free(g->member);
	free(g->first);
	memset(g, 0, sizeof(*g));
}

int saturn_batch_groups(const saturn_snapshot_t *s, const int *jobs, int n,
			saturn_batch_groups_t *g)
{
	group_key_t *k = NULL;

	memset(g, 0, sizeof(*g));
	if (n < 0)
		n = 0;
	g->member = malloc(sizeof(int) * (size_t)(n ? n : 1));
	g->first = malloc(sizeof(int) * (size_t)(n + 1));
	k = malloc(sizeof(*k) * (size_t)(n ? n : 1));
	if (!g->member || !g->first || !k) {
		free(k);
		saturn_batch_groups_free(g);
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		k[i].j = &s->jobs[jobs ? jobs[i] : i];
		k[i].pos = i;
	}
	qsort(k, (size_t)n, sizeof(*k), cmp_group_key);
	for (int i = 0; i < n; i++) {
		if (i == 0 || !saturn_snap_same_batch(k[i - 1].j, k[i].j))
			g->first[g->ngroups++] = i;
		g->member[i] = k[i].pos;
	}
	g->first[g->ngroups] = n;
	free(k);
	return 0;
}

int saturn_snapshot_max_gpus(const saturn_snapshot_t *s, uint64_t part_mask)
{
	int maxg = 0;

	for (int n = 0; n < s->nnodes; n++)
		if ((!part_mask || (part_mask & s->nodes[n].part_mask)) && s->nodes[n].gpus > maxg)
			maxg = s->nodes[n].gpus;
	return maxg;
}

void saturn_sched_task_name(const saturn_snap_job_t *j, char *buf, size_t len)
{
	if (j->task_id >= 0 && j->array_job_id)
		snprintf(buf, len, "%u_%d", j->array_job_id, j->task_id);
	else
		snprintf(buf, len, "%u", j->job_id);
}

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
		if (bad[0]) {
			if (!why[0])
				snprintf(why, whylen, "saturn: profile: %.32s/%d GPUs: %s",
					 tech && tech[0] ? tech : "?", o[i].gpus, bad);
			free(o[i].technique);
			free(o[i].klass);
			continue;
		}
		o[k++] = o[i];
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
	est = saturn_fb_blend(spb, j->obs_spb, j->batches_done);
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
	if (!(left <= cap))
		left = cap;
	if (!(left >= 1))
		left = 1;
	return left;
}

static int fits_some_node(const saturn_snapshot_t *s, const saturn_option_t *o, int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < s->nnodes; k++)
			if (o[i].gpus <= s->nodes[k].gpus)
				return 1;
	return 0;
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

/* Node classes from partitions: one per distinct node part_mask, set only
 * when some held or released job may not use some node (n == 0 otherwise:
 * no classes, the problem is the same as without partitions). */
typedef struct part_classes {
	int n;
	uint64_t *mask; /* per class: the nodes' part_mask */
	int *max_gpus;  /* per class: GPUs of its largest node */
	int *of_node;   /* snapshot node -> class */
} part_classes_t;

static void part_classes_free(part_classes_t *pc)
{
	free(pc->mask);
	free(pc->max_gpus);
	free(pc->of_node);
	memset(pc, 0, sizeof(*pc));
}

static void part_class_name(char *buf, size_t len, uint64_t mask)
{
	snprintf(buf, len, "partitions:0x%llx", (unsigned long long)mask);
}

/* Fill pc from s. O(nodes x classes + jobs x classes). Returns 0 or -1
 * (ENOMEM). */
static int part_classes_init(part_classes_t *pc, const saturn_snapshot_t *s)
{
	uint64_t last = 0;
	int need = 0, any = 0;

	memset(pc, 0, sizeof(*pc));
	for (int i = 0; i < s->njobs && !any; i++)
		if (s->jobs[i].state != SATURN_SNAP_RUNNING && s->jobs[i].part_mask)
			any = 1;
	if (!any || s->nnodes == 0)
		return 0;
	pc->mask = calloc((size_t)s->nnodes, sizeof(*pc->mask));
	pc->max_gpus = calloc((size_t)s->nnodes, sizeof(int));
	pc->of_node = calloc((size_t)s->nnodes, sizeof(int));
	if (!pc->mask || !pc->max_gpus || !pc->of_node) {
		part_classes_free(pc);
		return -1;
	}
	for (int n = 0; n < s->nnodes; n++) {
		int c = 0;

		while (c < pc->n && pc->mask[c] != s->nodes[n].part_mask)
			c++;
		if (c == pc->n)
			pc->mask[pc->n++] = s->nodes[n].part_mask;
		if (pc->max_gpus[c] < s->nodes[n].gpus)
			pc->max_gpus[c] = s->nodes[n].gpus;
		pc->of_node[n] = c;
	}
	/* classes only when some held or released job may not use some node
	 * (an array's tasks share their mask: checked once) */
	for (int i = 0; i < s->njobs && !need; i++) {
		const saturn_snap_job_t *j = &s->jobs[i];

		if (j->state == SATURN_SNAP_RUNNING || !j->part_mask || j->part_mask == last)
			continue;
		last = j->part_mask;
		for (int c = 0; c < pc->n && !need; c++)
			if (!(j->part_mask & pc->mask[c]))
				need = 1;
	}
	if (!need)
		part_classes_free(pc);
	return 0;
}

/* Restrict the options of a held or released job to the node classes of
 * its partitions: one copy of each option per class that shares a
 * partition with the job and has a node with enough GPUs (at most
 * SATURN_MAX_OPTIONS copies). Nothing changes when the job may use every
 * class. Returns 0 (t->options replaced or unchanged), 1 when no node of
 * the job's partitions fits (why filled, t unchanged), -1 on ENOMEM. */
static int restrict_to_partitions(const part_classes_t *pc, const saturn_snap_job_t *j,
				  saturn_task_t *t, char *why, size_t whylen)
{
	saturn_option_t *no;
	int neligible = 0, nn = 0, maxg = 0;
	char name[64];

	if (!pc->n || !j->part_mask)
		return 0;
	for (int c = 0; c < pc->n; c++)
		if (pc->mask[c] & j->part_mask)
			neligible++;
	if (neligible == pc->n)
		return 0;
	if (neligible == 0) {
		snprintf(why, whylen, "saturn: no usable GPU node in partition(s) of this job");
		return 1;
	}
	no = calloc((size_t)t->noptions * (size_t)neligible, sizeof(*no));
	if (!no)
		return -1;
	for (int o = 0; o < t->noptions; o++)
		for (int c = 0; c < pc->n && nn < SATURN_MAX_OPTIONS; c++) {
			if (!(pc->mask[c] & j->part_mask))
				continue;
			if (pc->max_gpus[c] > maxg)
				maxg = pc->max_gpus[c];
			if (t->options[o].gpus > pc->max_gpus[c])
				continue;
			part_class_name(name, sizeof(name), pc->mask[c]);
			no[nn] = t->options[o];
			no[nn].class_idx = -1;
			no[nn].technique = strdup(t->options[o].technique);
			no[nn].klass = strdup(name);
			if (!no[nn].technique || !no[nn].klass) {
				free_options(no, nn + 1);
				return -1;
			}
			nn++;
		}
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
			    double spb)
{
	saturn_fb_key_t key;
	double r;

	if (!s->feedback || !pt)
		return spb;
	saturn_fb_key_set(&key, j->uid, j->batch, pt->signature, technique, gpus, pt->klass);
	r = saturn_fb_correction(s->feedback, &key, NULL);
	if (r == 1)
		return spb;
	spb *= r;
	if (pt->batches > 0 && !(pt->batches * spb <= SATURN_MAX_RUNTIME_S))
		spb = SATURN_MAX_RUNTIME_S / pt->batches;
	return spb;
}

/* Options and work of one job, within the model's limits: a bad profile
 * option is dropped, a bad remaining time clamped, and what cannot be
 * mended skips this job only. run_used: per snapshot node, the GPUs of the
 * running tasks taken so far (updated). Returns 0 with t filled (options
 * owned by t), 1 when the job has to be skipped (why filled), -1 on
 * ENOMEM. */
static int job_task(const saturn_snapshot_t *s, const part_classes_t *pc,
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
		/* A profile's class says where it was measured and applies to
		 * every node; the node classes here are partitions (below). */
		for (int i = 0; i < nopts; i++) {
			free(opts[i].klass);
			opts[i].klass = NULL;
			opts[i].class_idx = -1;
			if (j->state == SATURN_SNAP_HELD)
				opts[i].sec_per_batch = corrected_spb(s, j, pt, opts[i].technique,
								      opts[i].gpus,
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
			t->noptions = 1;
			t->batches = fallback_runtime(j);
		}
		{
			double nb = j->begin_time > j->not_before ? j->begin_time : j->not_before;

			t->release_s = nb > s->now ? nb - s->now : 0;
		}
		if (!fits_some_node(s, t->options, t->noptions)) {
			snprintf(why, whylen, "saturn: no option fits any node (needs %d GPUs on one node)",
				 t->options[0].gpus);
			free_options(t->options, t->noptions);
			t->options = NULL;
			return 1;
		}
		rc = restrict_to_partitions(pc, j, t, why, whylen);
		if (rc != 0) {
			free_options(t->options, t->noptions);
			t->options = NULL;
		}
		return rc;
	}

	/* Released or running: keep what it was released with, as one option
	 * measured in seconds (sec_per_batch 1, batches = seconds left). */
	{
		double spb = 0, total, left;

		for (int i = 0; i < nopts; i++)
			if (opts[i].gpus == j->gpus && !strcmp(opts[i].technique, j->technique))
				spb = opts[i].sec_per_batch;
		/* not started yet, or the prior of a running one's speed */
		if (spb > 0)
			spb = corrected_spb(s, j, pt, j->technique, j->gpus, spb);
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

			rc = restrict_to_partitions(pc, j, t, ignored, sizeof(ignored));
			if (rc < 0)
				return -1;
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

	/* running first (pinned), then released, then held in submission order */
	if (x->state != y->state)
		return x->state > y->state ? -1 : 1;
	if (x->submit_time != y->submit_time)
		return x->submit_time < y->submit_time ? -1 : 1;
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
	uint64_t *run_used = NULL;
	part_classes_t pc = {0};
	const saturn_profile_t *pr = NULL;

	memset(out, 0, sizeof(*out));
	p = out->problem = saturn_problem_create();
	out->job_of_task = calloc((size_t)(s->njobs ? s->njobs : 1), sizeof(int));
	order = calloc((size_t)(s->njobs ? s->njobs : 1), sizeof(int));
	run_used = calloc((size_t)(s->nnodes ? s->nnodes : 1), sizeof(*run_used));
	if (!p || !out->job_of_task || !order || !run_used || part_classes_init(&pc, s) < 0)
		goto nomem;

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
			char cname[64];

			part_class_name(cname, sizeof(cname), pc.mask[pc.of_node[n]]);
			if (!(node.klass = strdup(cname))) {
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

	for (int k = 0, prev = -1; k < s->njobs; k++) {
		int i = order[k], fp, rc;
		const saturn_snap_job_t *j = &s->jobs[i];
		saturn_task_t t = {0};
		char name[48], why[128] = "";

		/* one lookup per run of tasks of the same batch and user (an
		 * array's tasks are adjacent in order) */
		if (prev < 0 || strcmp(s->jobs[prev].batch, j->batch) || s->jobs[prev].uid != j->uid)
			pr = lookup ? lookup(j->batch, j->uid, arg) : NULL;
		prev = i;
		rc = job_task(s, &pc, j, pr, &t, run_used, &fp, why, sizeof(why));
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
			goto nomem;
		}
		out->job_of_task[p->ntasks - 1] = i;
		if (fp)
			out->any_profile = 1;
	}
	free(order);
	free(run_used);
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
	free(run_used);
	part_classes_free(&pc);
	saturn_sched_build_free(out);
	return saturn_error_set(err, "out of memory building the problem");
}

/* --- FCFS plan ------------------------------------------------------- */

/* The simple plans below (users' requests, carried plans) are built by
 * listsched.c's placement by id: Slurm picks the ids itself, and every task
 * takes the GPUs of its node that free up first. */

saturn_plan_t *saturn_sched_fcfs(const saturn_problem_t *p)
{
	saturn_plan_t *plan = saturn_plan_create(p->ntasks);
	double **free_at = plan ? spase_gpu_free_create(p) : NULL;
	int cand[SATURN_MAX_GPUS_PER_NODE];

	if (!free_at || spase_plan_pin_running(plan, p) < 0)
		goto fail;
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];
		double best_end = INFINITY;
		int best_n = -1, best_o = -1;

		if (task->is_running)
			continue;
		for (int o = 0; o < task->noptions; o++) {
			for (int n = 0; n < p->nnodes; n++) {
				int G = task->options[o].gpus;
				double start, end;

				if (!saturn_option_fits(p, t, o, n))
					continue;
				start = spase_gpu_pick(free_at[n], p->nodes[n].gpus, G, cand);
				if (start < task->release_s)
					start = task->release_s;
				end = start + saturn_task_runtime(task, o);
				if (end < best_end - 1e-9) {
					best_end = end;
					best_n = n;
					best_o = o;
				}
			}
		}
		if (best_n < 0)
			goto fail; /* saturn_problem_check guarantees a fit */
		if (spase_place_ids(free_at, plan, p, t, best_o, best_n, task->release_s) < 0)
			goto fail;
	}
	spase_plan_set_makespan(plan);
	snprintf(plan->method, sizeof(plan->method), "fcfs");
	snprintf(plan->status, sizeof(plan->status), "feasible");
	spase_gpu_free_destroy(free_at, p->nnodes);
	return plan;
fail:
	spase_gpu_free_destroy(free_at, p->nnodes);
	saturn_plan_destroy(plan);
	errno = ENOMEM;
	return NULL;
}

/* --- decisions ------------------------------------------------------- */

void saturn_sched_reason(char *buf, size_t len, double start_s,
			 const char *node, int gpus, const char *technique)
{
	long s = start_s < 0 ? 0 : lround(start_s);
	char when[32];

	if (s > 7 * 86400) {
		/* behind jobs without a time limit: no meaningful ETA */
		snprintf(buf, len, "saturn: waits for GPUs held by other jobs; then %s, %d GPU%s, %s",
			 node, gpus, gpus == 1 ? "" : "s", technique);
		return;
	}
	if (s < 60)
		snprintf(when, sizeof(when), "~%lds", s);
	else if (s < 3600)
		snprintf(when, sizeof(when), "~%ldm", (s + 30) / 60);
	else
		snprintf(when, sizeof(when), "~%ldh%02ldm", s / 3600, (s % 3600) / 60);
	snprintf(buf, len, "saturn: starts in %s on %s, %d GPU%s, %s", when, node, gpus,
		 gpus == 1 ? "" : "s", technique);
}

int saturn_sched_decide(const saturn_snapshot_t *s, const saturn_sched_build_t *b,
			const saturn_plan_t *plan, double slack_s,
			saturn_decision_t **out)
{
	saturn_decision_t *d;
	int n = 0;

	*out = NULL;
	if (!plan || plan->nassign == 0)
		return 0;
	d = calloc((size_t)plan->nassign, sizeof(*d));
	if (!d)
		return -1;
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *a = &plan->assign[i];
		int t = a->task >= 0 ? a->task : i, job;

		if (t < 0 || t >= b->problem->ntasks)
			continue;
		job = b->job_of_task[t];
		if (s->jobs[job].state != SATURN_SNAP_HELD)
			continue;
		d[n].job = job;
		d[n].start_s = a->start_s;
		d[n].gpus = a->gpus;
		snprintf(d[n].node, sizeof(d[n].node), "%s", a->node_name ? a->node_name : "");
		snprintf(d[n].technique, sizeof(d[n].technique), "%s", a->technique ? a->technique : "user");
		d[n].release = a->start_s <= slack_s && b->problem->tasks[t].release_s <= 0;
		if (!d[n].release)
			saturn_sched_reason(d[n].reason, sizeof(d[n].reason), a->start_s, d[n].node,
					    d[n].gpus, d[n].technique);
		n++;
	}
	if (!n) {
		free(d);
		return 0;
	}
	*out = d;
	return n;
}

saturn_rehold_cause_t saturn_sched_rehold_cause(const saturn_snapshot_t *s,
						const saturn_snap_job_t *j, char *buf, size_t len)
{
	char tmp[160];

	if (!buf) {
		buf = tmp;
		len = sizeof(tmp);
	}
	buf[0] = '\0';
	if (j->state != SATURN_SNAP_RELEASED)
		return SATURN_REHOLD_NONE;
	if (j->exit_held) {
		snprintf(buf, len, "saturn: re-planning (requeued and held by its exit code)");
		return SATURN_REHOLD_REQUEUED;
	}
	if (j->requeued && j->pinned[0] && j->begin_time > s->now) {
		snprintf(buf, len, "saturn: re-planning (requeued after running on %s)", j->pinned);
		return SATURN_REHOLD_REQUEUED;
	}
	if (j->pinned[0] && (j->node < 0 || j->node >= s->nnodes)) {
		snprintf(buf, len, "saturn: re-planning (node %s %s)", j->pinned,
			 j->pinned_state[0] ? j->pinned_state : "not usable");
		return SATURN_REHOLD_NODE;
	}
	if (!j->planned) {
		snprintf(buf, len, "saturn: re-planning (left its hold outside the plan)");
		return SATURN_REHOLD_UNPLANNED;
	}
	return SATURN_REHOLD_NONE;
}

int saturn_sched_decide_rehold(const saturn_snapshot_t *s, saturn_rehold_t **out)
{
	saturn_rehold_t *r = NULL;
	int n = 0, cap = 0;

	*out = NULL;
	for (int i = 0; i < s->njobs; i++) {
		char why[160];
		saturn_rehold_cause_t c = saturn_sched_rehold_cause(s, &s->jobs[i], why, sizeof(why));

		if (c == SATURN_REHOLD_NONE)
			continue;
		if (n == cap) {
			int nc = cap ? 2 * cap : 8;
			saturn_rehold_t *nr = realloc(r, sizeof(*r) * (size_t)nc);

			if (!nr) {
				free(r);
				return -1;
			}
			r = nr;
			cap = nc;
		}
		r[n].job = i;
		r[n].cause = c;
		snprintf(r[n].reason, sizeof(r[n].reason), "%s", why);
		n++;
	}
	*out = r;
	return n;
}

void saturn_snapshot_mark_held(saturn_snapshot_t *s, saturn_snap_job_t *j)
{
	/* the credential delay Slurm set for the requeue: planned as release_s */
	if (j->requeued && j->begin_time > s->now)
		j->not_before = j->begin_time;
	j->begin_time = 0;
	j->state = SATURN_SNAP_HELD;
	j->node = -1;
	j->gpu_mask = 0;
	j->pinned[0] = '\0';
	j->pinned_state[0] = '\0';
	j->planned = 0;
	j->exit_held = 0;
	snprintf(j->technique, sizeof(j->technique), "user");
	j->gpus = j->req_gpus;
}

int saturn_sched_should_switch(double new_makespan_s, double old_makespan_left_s,
			       double min_gain)
{
	if (old_makespan_left_s <= 0)
		return 1;
	return new_makespan_s < old_makespan_left_s * (1.0 - min_gain);
}

/* --- carrying a plan over to the next cycle -------------------------- */

saturn_plan_t *saturn_sched_carry(const saturn_plan_t *prev, double elapsed_s,
				  const saturn_problem_t *p)
{
	saturn_plan_t *plan;
	int *from = NULL, *order = NULL, norder = 0;
	double **free_at = NULL;

	if (!prev)
		return NULL;
	plan = saturn_plan_create(p->ntasks);
	from = malloc(sizeof(int) * (size_t)(p->ntasks ? p->ntasks : 1));
	order = malloc(sizeof(int) * (size_t)(p->ntasks ? p->ntasks : 1));
	if (!plan || !from || !order)
		goto fail;
	/* every task of p must be in prev (tasks that finished may be gone) */
	for (int t = 0; t < p->ntasks; t++) {
		from[t] = -1;
		for (int i = 0; i < prev->nassign && from[t] < 0; i++)
			if (prev->assign[i].task_id && !strcmp(prev->assign[i].task_id, p->tasks[t].id))
				from[t] = i;
		if (from[t] < 0)
			goto fail;
	}
	/* running tasks as they are */
	if (!(free_at = spase_gpu_free_create(p)) || spase_plan_pin_running(plan, p) < 0)
		goto fail;
	for (int t = 0; t < p->ntasks; t++)
		if (!p->tasks[t].is_running)
			order[norder++] = t;
	/* the rest in their planned order, each on its planned GPUs, shifted
	 * right where a GPU is not free yet (an earlier task overran) */
	for (int i = 1; i < norder; i++)
		for (int k = i; k > 0 && prev->assign[from[order[k]]].start_s <
					     prev->assign[from[order[k - 1]]].start_s; k--) {
			int x = order[k];

			order[k] = order[k - 1];
			order[k - 1] = x;
		}
	for (int i = 0; i < norder; i++) {
		int t = order[i], o = -1, n = -1;
		const saturn_assign_t *a = &prev->assign[from[t]];
		const saturn_task_t *task = &p->tasks[t];
		double start;

		for (int k = 0; k < p->nnodes; k++)
			if (a->node_name && !strcmp(p->nodes[k].name, a->node_name))
				n = k;
		/* the option of that technique and count that fits the node
		 * (one copy per node class when partitions restrict the task) */
		for (int k = 0; n >= 0 && k < task->noptions && o < 0; k++)
			if (task->options[k].gpus == a->gpus &&
			    !strcmp(task->options[k].technique, a->technique ? a->technique : "") &&
			    saturn_option_fits(p, t, k, n))
				o = k;
		if (o < 0 || n < 0)
			goto fail;
		start = a->start_s - elapsed_s;
		if (start < task->release_s)
			start = task->release_s;
		if (start < 0)
			start = 0;
		/* Slurm picks the GPU ids itself: take the planned count on the
		 * planned node, the GPUs that are free earliest */
		if (spase_place_ids(free_at, plan, p, t, o, n, start) < 0)
			goto fail;
	}
	spase_plan_set_makespan(plan);
	/* The bound of p, not prev's: prev's was a bound from prev's origin,
	 * elapsed_s ago, and for the remaining times known then. Copied, it
	 * stood above the carried plan's makespan as soon as elapsed_s ate
	 * into it (a plan carried for a minute: bound 120 s, makespan 61 s),
	 * and a kept carried plan was persisted and shown like that. */
	{
		saturn_bounds_t bd;

		plan->lower_bound_s = saturn_planner_bounds_cheap(p, &bd, NULL) == 0 ? bd.best : 0;
	}
	snprintf(plan->method, sizeof(plan->method), "%s", prev->method);
	snprintf(plan->status, sizeof(plan->status), "carried");
	goto out;
fail:
	saturn_plan_destroy(plan);
	plan = NULL;
out:
	spase_gpu_free_destroy(free_at, p->nnodes);
	free(from);
	free(order);
	return plan;
}
