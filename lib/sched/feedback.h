/* feedback.h - runtime feedback: what the running tasks' progress says
 * about the profile's speeds, and how the plan uses it.
 *
 * The profile (saturn-profile/1) predicts seconds per batch before a task
 * runs; the progress file (saturn-progress/1) says how fast it really runs.
 * The controller (sched/saturn) keeps, across its cycles, a saturn_fb_t:
 *
 *  - per running job: an EWMA of the observed seconds per batch (one step
 *    per new progress report: the training code's own number is a single
 *    recent measurement, not a smoothed one) and the first report seen
 *    (time and batches done), so that a job that does not report
 *    sec_per_batch is measured from its batches over the time since its
 *    first report, which leaves its start-up (data loading, compilation,
 *    the first report's wait) out;
 *  - per (uid, batch, signature, technique, GPU count, node class): the
 *    correction ratio observed / profiled seconds per batch, with the
 *    batches behind it (its confidence). Persisted in the scheduler state.
 *
 * How the plan uses it (sched_build.c, saturn_sched_build):
 *  - a running task's remaining time is batches_left x its speed, the
 *    speed being the profile's blended with the observed one by the
 *    batches done (saturn_fb_blend: the profile counts as
 *    SATURN_FB_PRIOR_BATCHES batches), less the time since the report;
 *  - a task not started yet (held or released) of a signature with a
 *    correction gets the profile's sec_per_batch x ratio: the ratio of its
 *    own technique and GPU count when trusted (at least
 *    SATURN_FB_MIN_BATCHES batches behind it), else the batch-weighted mean
 *    of the trusted ratios of the same technique at other GPU counts,
 *    applied to the whole curve (the profiler's scaling model
 *    t(g) = a comp(g) + b + c comm(g) scaled by one factor: the simplest
 *    sound choice when one count is observed, since a slower GPU, a larger
 *    model or a slower input pipeline slow every term alike; an
 *    interconnect slower than profiled would bend the curve instead, which
 *    one observed count cannot tell apart), else, when another technique
 *    of the same signature has trusted ratios, a shrunk cross-technique
 *    ratio: exp(SATURN_FB_CROSS_SHRINK x the batch-weighted mean of their
 *    logs), i.e. the square root of their geometric mean (x2 observed on
 *    ddp gives x1.41 to single), else 1. Shrunk because the techniques
 *    of one signature share only part of their time: the model's compute
 *    (the same layers, batch and GPU type; a larger model or a slower
 *    input pipeline than profiled shows in every technique) but not
 *    their communication (ddp's all-reduce, fsdp's gathers, pipeline
 *    bubbles are each their own), so another technique's slowdown is
 *    evidence, weaker than one's own; in log space so that x2 and x0.5
 *    pull by the same amount. A technique with a trusted ratio of its
 *    own (at any count) never takes the others'.
 * Ratios are clamped to [SATURN_FB_RATIO_MIN, SATURN_FB_RATIO_MAX]: a
 * progress file can move a plan by that much and no more.
 *
 * Pure functions on plain numbers, plus the small table; no Slurm, no I/O.
 */
#ifndef SATURN_FEEDBACK_H
#define SATURN_FEEDBACK_H

#include <stdint.h>

#include "saturn_limits.h"

#define SATURN_FB_RATIO_MIN 0.2
#define SATURN_FB_RATIO_MAX 5.0
/* batches a job must have done before its speed corrects other tasks */
#define SATURN_FB_MIN_BATCHES 20.0
/* weight of the profile's speed, in batches, when blending it with a
 * running task's observed speed */
#define SATURN_FB_PRIOR_BATCHES 20.0
/* A task shorter than SATURN_FB_MIN_BATCHES / SATURN_FB_MIN_SHARE batches
 * (200) reaches those confidences after this share of its batches instead:
 * a correction that comes after 40 % of a 50-batch task comes too late for
 * the plan of its batch (saturn_fb_confidence) */
#define SATURN_FB_MIN_SHARE 0.1
/* EWMA weight of a new report (per job) and of a job's ratio (per key) */
#define SATURN_FB_ALPHA 0.3
/* fraction of the log of the signature's other techniques' ratio that a
 * technique with none of its own takes (0.5: the square root) */
#define SATURN_FB_CROSS_SHRINK 0.5
#define SATURN_FB_SIG_MAX 127

/* --- pure functions ---------------------------------------------------- */

/* Observed seconds per batch of one job from its progress numbers:
 * reported_spb when > 0 (the job's own measurement); else, from two
 * reports, (updated - first_updated) / (batches_done - first_done), which
 * leaves out the start-up before the first report; else 0 (unknown: one
 * report alone cannot separate start-up from work). Every argument may be
 * 0 for "unknown"; non-finite or negative input gives 0. */
double saturn_fb_observed_spb(double reported_spb, double batches_done, double updated,
			      double first_done, double first_updated);

/* prev updated towards x by SATURN_FB_ALPHA; x when prev <= 0; prev when
 * x <= 0. */
double saturn_fb_ewma(double prev, double x);

/* Speed to plan a running task with: prior_spb (the profile's) when
 * nothing is observed, observed_spb when there is no prior, else
 * (K prior + done observed) / (K + done) with K = SATURN_FB_PRIOR_BATCHES.
 * 0 when neither is known. */
double saturn_fb_blend(double prior_spb, double observed_spb, double batches_done);

/* The confidence, in batches, of batches_done batches of a task of
 * task_batches in all: batches_done, scaled up for a short task so that
 * SATURN_FB_MIN_SHARE of it counts as SATURN_FB_MIN_BATCHES (x4 for a
 * 50-batch task: 5 batches count as 20; unchanged from 200 batches up, or
 * when task_batches is not a number > 0). What saturn_fb_record and
 * saturn_fb_blend are given for a task whose size is known. 0 for
 * batches_done not a number >= 0. */
double saturn_fb_confidence(double batches_done, double task_batches);

/* Remaining seconds of a running task: batches_left x spb less the
 * seconds since its report (since_report_s, ignored when < 0), never below
 * 0. -1 when batches_left < 0 or spb <= 0 (unknown). */
double saturn_fb_remaining_s(double batches_left, double spb, double since_report_s);

/* r clamped into [SATURN_FB_RATIO_MIN, SATURN_FB_RATIO_MAX]; 1 when r is
 * not a finite number > 0. */
double saturn_fb_clamp_ratio(double r);

/* --- the controller's table -------------------------------------------- */

/* What identifies a correction: tasks of one signature of one user's batch
 * run with one technique and GPU count on one class of node. */
typedef struct saturn_fb_key {
	long uid;
	char batch[SATURN_BATCH_NAME_MAX + 1];
	char signature[SATURN_FB_SIG_MAX + 1];
	char technique[SATURN_TECHNIQUE_NAME_MAX + 1];
	int gpus;
	char klass[SATURN_FB_SIG_MAX + 1]; /* the profile task's class; "" = default */
} saturn_fb_key_t;

typedef struct saturn_fb_corr {
	saturn_fb_key_t key;
	double ratio;   /* observed / profiled sec_per_batch, clamped */
	double batches; /* most batches any job behind it had done, as
			 * saturn_fb_confidence weighs them: confidence */
	double updated; /* epoch of the last change */
} saturn_fb_corr_t;

typedef struct saturn_fb_job {
	uint32_t job_id;
	double first_done, first_updated; /* first report seen */
	double last_updated;		  /* last report folded in */
	double spb;			  /* EWMA of observed sec_per_batch */
	int seen;			  /* in the current cycle's snapshot */
} saturn_fb_job_t;

typedef struct saturn_fb {
	int ncorr, cap_corr;
	saturn_fb_corr_t *corr;
	int njobs, cap_jobs;
	saturn_fb_job_t *jobs;
} saturn_fb_t;

/* Empty table, or NULL (ENOMEM). */
saturn_fb_t *saturn_fb_create(void);
/* Free; NULL allowed. */
void saturn_fb_destroy(saturn_fb_t *fb);

/* One progress report of a running job (reported_spb, batches_done,
 * updated: the progress file's numbers, 0 = absent): remembers its first
 * report, folds a new one (updated changed) into the job's EWMA and marks
 * the job seen. Returns the job's smoothed observed sec_per_batch (0 =
 * unknown yet) or -1 (ENOMEM, table unchanged). */
double saturn_fb_job_report(saturn_fb_t *fb, uint32_t job_id, double reported_spb,
			    double batches_done, double updated);

/* Forget the jobs not reported since the last call (ended), and clear the
 * marks. */
void saturn_fb_jobs_sweep(saturn_fb_t *fb);

/* Fold one job's ratio (observed / profiled sec_per_batch) in, done
 * batches behind it, at time now: nothing below SATURN_FB_MIN_BATCHES or
 * for a ratio that is not a number > 0; else the key's ratio moves
 * towards the clamped ratio by SATURN_FB_ALPHA (taken as is the first
 * time). Returns 0, or -1 (ENOMEM, unchanged). */
int saturn_fb_record(saturn_fb_t *fb, const saturn_fb_key_t *key, double ratio,
		     double batches_done, double now);

/* Insert or replace a correction as is (restoring a persisted state);
 * the ratio is clamped. 0 or -1 (ENOMEM). */
int saturn_fb_put(saturn_fb_t *fb, const saturn_fb_corr_t *c);

/* The ratio for a task not started yet, key as above (see the header
 * comment: own count, else the technique's other counts, else the
 * signature's other techniques shrunk, else 1). fb NULL gives 1.
 * *batches (may be NULL): the confidence behind it, 0 for 1. */
double saturn_fb_correction(const saturn_fb_t *fb, const saturn_fb_key_t *key, double *batches);

/* Fill a key; strings are truncated to their buffers, NULL is "". */
void saturn_fb_key_set(saturn_fb_key_t *k, long uid, const char *batch, const char *signature,
		       const char *technique, int gpus, const char *klass);

#endif /* SATURN_FEEDBACK_H */
