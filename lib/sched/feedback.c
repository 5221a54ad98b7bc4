/* feedback.c - observed speeds of running tasks and the corrections they
 * give the profile (feedback.h says what and why).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedback.h"
#include "sched_core.h"

static int num(double x)
{
	return isfinite(x) && x > 0;
}

double saturn_fb_observed_spb(double reported_spb, double batches_done, double updated,
			      double first_done, double first_updated)
{
	if (num(reported_spb))
		return reported_spb;
	if (num(batches_done) && num(updated) && num(first_updated) && isfinite(first_done) &&
	    first_done >= 0 && batches_done > first_done && updated > first_updated)
		return (updated - first_updated) / (batches_done - first_done);
	return 0;
}

double saturn_fb_ewma(double prev, double x)
{
	if (!num(x))
		return num(prev) ? prev : 0;
	if (!num(prev))
		return x;
	return prev + SATURN_FB_ALPHA * (x - prev);
}

double saturn_fb_blend(double prior_spb, double observed_spb, double batches_done)
{
	double k = SATURN_FB_PRIOR_BATCHES, d = num(batches_done) ? batches_done : 0;

	if (!num(observed_spb))
		return num(prior_spb) ? prior_spb : 0;
	if (!num(prior_spb))
		return observed_spb;
	return (k * prior_spb + d * observed_spb) / (k + d);
}

double saturn_fb_confidence(double batches_done, double task_batches)
{
	double f = 1;

	if (!(batches_done >= 0) || !isfinite(batches_done))
		return 0;
	if (num(task_batches) && SATURN_FB_MIN_SHARE * task_batches < SATURN_FB_MIN_BATCHES)
		f = SATURN_FB_MIN_BATCHES / (SATURN_FB_MIN_SHARE * task_batches);
	return batches_done * f;
}

double saturn_fb_remaining_s(double batches_left, double spb, double since_report_s)
{
	double left;

	if (!(batches_left >= 0) || !num(spb))
		return -1;
	left = batches_left * spb;
	if (since_report_s > 0 && isfinite(since_report_s))
		left -= since_report_s;
	return left > 0 ? left : 0;
}

double saturn_fb_clamp_ratio(double r)
{
	if (!num(r))
		return 1;
	if (r < SATURN_FB_RATIO_MIN)
		return SATURN_FB_RATIO_MIN;
	if (r > SATURN_FB_RATIO_MAX)
		return SATURN_FB_RATIO_MAX;
	return r;
}

saturn_fb_t *saturn_fb_create(void)
{
	return calloc(1, sizeof(saturn_fb_t));
}

void saturn_fb_destroy(saturn_fb_t *fb)
{
	if (!fb)
		return;
	free(fb->corr);
	free(fb->jobs);
	free(fb);
}

static void *grow(void **arr, int n, int *cap, size_t sz)
{
	if (n == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		void *na = realloc(*arr, sz * (size_t)nc);

		if (!na)
			return NULL;
		*arr = na;
		*cap = nc;
	}
	return (char *)*arr + sz * (size_t)n;
}

double saturn_fb_job_report(saturn_fb_t *fb, uint32_t job_id, double reported_spb,
			    double batches_done, double updated)
{
	saturn_fb_job_t *j = NULL;
	double x;

	for (int i = 0; i < fb->njobs; i++)
		if (fb->jobs[i].job_id == job_id)
			j = &fb->jobs[i];
	if (!j) {
		if (!(j = grow((void **)&fb->jobs, fb->njobs, &fb->cap_jobs, sizeof(*j))))
			return -1;
		memset(j, 0, sizeof(*j));
		j->job_id = job_id;
		fb->njobs++;
	}
	j->seen = 1;
	if (!num(updated) || updated == j->last_updated)
		return j->spb; /* no report, or the one already folded in */
	if (!num(j->first_updated) && isfinite(batches_done) && batches_done >= 0) {
		j->first_updated = updated;
		j->first_done = batches_done;
	}
	x = saturn_fb_observed_spb(reported_spb, batches_done, updated, j->first_done,
				   j->first_updated);
	j->spb = saturn_fb_ewma(j->spb, x);
	j->last_updated = updated;
	return j->spb;
}

void saturn_fb_jobs_sweep(saturn_fb_t *fb)
{
	int k = 0;

	for (int i = 0; i < fb->njobs; i++) {
		if (!fb->jobs[i].seen)
			continue;
		fb->jobs[i].seen = 0;
		fb->jobs[k++] = fb->jobs[i];
	}
	fb->njobs = k;
}

/* same user's batch, signature and class of node (any technique) */
static int same_signature(const saturn_fb_key_t *a, const saturn_fb_key_t *b)
{
	return a->uid == b->uid && !strcmp(a->batch, b->batch) &&
	       !strcmp(a->signature, b->signature) && !strcmp(a->klass, b->klass);
}

static int same_curve(const saturn_fb_key_t *a, const saturn_fb_key_t *b)
{
	return same_signature(a, b) && !strcmp(a->technique, b->technique);
}

static saturn_fb_corr_t *find(const saturn_fb_t *fb, const saturn_fb_key_t *key)
{
	for (int i = 0; i < fb->ncorr; i++)
		if (fb->corr[i].key.gpus == key->gpus && same_curve(&fb->corr[i].key, key))
			return &fb->corr[i];
	return NULL;
}

int saturn_fb_put(saturn_fb_t *fb, const saturn_fb_corr_t *c)
{
	saturn_fb_corr_t *e = find(fb, &c->key);

	if (!e) {
		if (!(e = grow((void **)&fb->corr, fb->ncorr, &fb->cap_corr, sizeof(*e))))
			return -1;
		fb->ncorr++;
	}
	*e = *c;
	e->ratio = saturn_fb_clamp_ratio(c->ratio);
	if (!(e->batches >= 0) || !isfinite(e->batches))
		e->batches = 0;
	return 0;
}

int saturn_fb_record(saturn_fb_t *fb, const saturn_fb_key_t *key, double ratio,
		     double batches_done, double now)
{
	saturn_fb_corr_t *e;

	if (!num(ratio) || !(batches_done >= SATURN_FB_MIN_BATCHES) || !isfinite(batches_done))
		return 0;
	ratio = saturn_fb_clamp_ratio(ratio);
	if (!(e = find(fb, key))) {
		saturn_fb_corr_t c = {.key = *key, .ratio = ratio, .batches = batches_done,
				      .updated = now};

		return saturn_fb_put(fb, &c);
	}
	e->ratio = saturn_fb_clamp_ratio(saturn_fb_ewma(e->ratio, ratio));
	if (batches_done > e->batches)
		e->batches = batches_done;
	e->updated = now;
	return 0;
}

double saturn_fb_correction(const saturn_fb_t *fb, const saturn_fb_key_t *key, double *batches)
{
	const saturn_fb_corr_t *e;
	double w = 0, wr = 0;

	if (batches)
		*batches = 0;
	if (!fb)
		return 1;
	e = find(fb, key);
	if (e && e->batches >= SATURN_FB_MIN_BATCHES) {
		if (batches)
			*batches = e->batches;
		return e->ratio;
	}
	/* the technique's other GPU counts: the whole curve by one factor */
	for (int i = 0; i < fb->ncorr; i++) {
		e = &fb->corr[i];
		if (e->batches >= SATURN_FB_MIN_BATCHES && same_curve(&e->key, key)) {
			w += e->batches;
			wr += e->batches * e->ratio;
		}
	}
	if (w > 0) {
		if (batches)
			*batches = w;
		return saturn_fb_clamp_ratio(wr / w);
	}
	/* the signature's other techniques: their batch-weighted geometric
	 * mean, pulled towards 1 (SATURN_FB_CROSS_SHRINK of its log) */
	for (int i = 0; i < fb->ncorr; i++) {
		e = &fb->corr[i];
		if (e->batches >= SATURN_FB_MIN_BATCHES && same_signature(&e->key, key)) {
			w += e->batches;
			wr += e->batches * log(saturn_fb_clamp_ratio(e->ratio));
		}
	}
	if (!(w > 0))
		return 1;
	if (batches)
		*batches = w;
	return saturn_fb_clamp_ratio(exp(SATURN_FB_CROSS_SHRINK * wr / w));
}

void saturn_fb_key_set(saturn_fb_key_t *k, long uid, const char *batch, const char *signature,
		       const char *technique, int gpus, const char *klass)
{
	memset(k, 0, sizeof(*k));
	k->uid = uid;
	k->gpus = gpus;
	snprintf(k->batch, sizeof(k->batch), "%s", batch ? batch : "");
	snprintf(k->signature, sizeof(k->signature), "%s", signature ? signature : "");
	snprintf(k->technique, sizeof(k->technique), "%s", technique ? technique : "");
	snprintf(k->klass, sizeof(k->klass), "%s", klass ? klass : "");
}

/* --- the snapshot's running jobs ----------------------------------------- */

/* The profile's sec_per_batch for technique x gpus of pt; 0 when it has no
 * usable one. */
static double profile_spb(const saturn_profile_task_t *pt, const char *technique, int gpus,
			  int nodes)
{
	int i = saturn_profile_task_option(pt, technique, gpus, nodes);
	const saturn_profile_option_t *o = i >= 0 ? &pt->options[i] : NULL;

	if (o && (o->status == SATURN_OPT_MEASURED || o->status == SATURN_OPT_PREDICTED) &&
	    num(o->sec_per_batch))
		return o->sec_per_batch;
	return 0;
}

/* Drop the corrections of batches with no job left in s: the batch is
 * over, and the table stays as small as the batches in flight. */
static void prune(saturn_fb_t *fb, const saturn_snapshot_t *s)
{
	int k = 0;

	for (int c = 0; c < fb->ncorr; c++) {
		const saturn_fb_key_t *key = &fb->corr[c].key;
		int live = 0;

		for (int i = 0; i < s->njobs && !live; i++)
			live = s->jobs[i].uid == key->uid && !strcmp(s->jobs[i].batch, key->batch);
		if (live)
			fb->corr[k++] = fb->corr[c];
	}
	fb->ncorr = k;
}

int saturn_sched_feedback(saturn_fb_t *fb, saturn_snapshot_t *s, saturn_profile_lookup_fn lookup,
			  void *arg)
{
	const saturn_profile_t *pr = NULL;
	int rc = 0, prev = -1;

	/* A progress file older than the job's current start is its previous
	 * run's (Slurm requeued it: a reconfiguration restarts it with
	 * another option, maybe on another node). It says where this run
	 * resumed, not how fast it goes: its speed and time are dropped,
	 * its batches kept, until this run reports. */
	for (int i = 0; i < s->njobs; i++) {
		saturn_snap_job_t *j = &s->jobs[i];

		if (j->state == SATURN_SNAP_RUNNING && j->progress_updated > 0 &&
		    j->start_time > 0 && j->progress_updated < j->start_time) {
			j->progress_spb = 0;
			j->progress_updated = 0;
		}
	}
	if (!fb) {
		/* saturn_feedback=no: the profile only, nothing recorded */
		s->feedback = NULL;
		for (int i = 0; i < s->njobs; i++)
			s->jobs[i].obs_spb = s->jobs[i].prior_spb = s->jobs[i].first_report = 0;
		return 0;
	}
	s->feedback = fb;
	prune(fb, s);
	if (s->class_profile)
		saturn_snapshot_classify(s); /* the running tasks' classes */
	for (int i = 0; i < s->njobs; i++) {
		saturn_snap_job_t *j = &s->jobs[i];
		const saturn_profile_task_t *pt;
		saturn_fb_key_t key;
		const char *klass;
		double spb;

		if (j->state != SATURN_SNAP_RUNNING)
			continue;
		spb = saturn_fb_job_report(fb, j->job_id, j->progress_spb,
					   j->batches_done >= 0 ? j->batches_done : 0,
					   j->batches_done >= 0 ? j->progress_updated : 0);
		if (spb < 0) {
			rc = -1;
			continue;
		}
		j->obs_spb = spb;
		for (int k = 0; k < fb->njobs; k++)
			if (fb->jobs[k].job_id == j->job_id)
				j->first_report = fb->jobs[k].first_updated;
		/* one lookup per run of jobs of one batch (an array's tasks are
		 * adjacent) */
		if (prev < 0 || s->jobs[prev].uid != j->uid || strcmp(s->jobs[prev].batch, j->batch))
			pr = lookup ? lookup(j->batch, j->uid, arg) : NULL;
		prev = i;
		pt = pr ? saturn_profile_find(pr, j->task_id >= 0 ? j->task_id : 0) : NULL;
		klass = pt ? pt->klass : NULL;
		/* on a node whose class has a profile of its own covering the
		 * task, it runs with that profile's option (sched_build.c):
		 * compared with that, and the correction is that class's */
		if (s->class_profile && j->node >= 0 && j->node < s->nnodes &&
		    s->nodes[j->node].klass[0]) {
			const saturn_profile_t *cp = s->class_profile(j->batch, j->uid,
								      s->nodes[j->node].klass,
								      s->class_profile_arg);
			const saturn_profile_task_t *cpt =
				cp ? saturn_profile_find(cp, j->task_id >= 0 ? j->task_id : 0) : NULL;

			if (cpt && profile_spb(cpt, j->technique, j->gpus,
					       j->nnodes > 1 ? j->nnodes : 1) > 0) {
				pt = cpt;
				klass = s->nodes[j->node].klass;
			}
		}
		if (!pt)
			continue;
		j->prior_spb = profile_spb(pt, j->technique, j->gpus, j->nnodes > 1 ? j->nnodes : 1);
		/* a GPU count or technique no node or profile can have makes
		 * no correction (the state would refuse it); nor does a task
		 * on several nodes (the key has no node count: it would
		 * correct the one-node option of its technique and count) */
		if (!(j->prior_spb > 0) || !(spb > 0) || j->gpus < 1 || j->nnodes > 1 ||
		    j->gpus > SATURN_MAX_GPUS_PER_NODE || !j->technique[0])
			continue;
		saturn_fb_key_set(&key, j->uid, j->batch, pt->signature, j->technique, j->gpus,
				  klass);
		if (saturn_fb_record(fb, &key, spb / j->prior_spb,
				     saturn_fb_confidence(j->batches_done, pt->batches), s->now) < 0)
			rc = -1;
	}
	saturn_fb_jobs_sweep(fb);
	return rc;
}
