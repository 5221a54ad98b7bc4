/* test_feedback.c - runtime feedback (lib/sched/feedback.c): observed speeds,
 * their blending with the profile, the corrections per signature, how the
 * build plans running and not-yet-started tasks with them, and their place
 * in the persisted state. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feedback.h"
#include "profile.h"
#include "progress.h"
#include "sched_core.h"

#include "sched_fixture.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-9 * (1 + fabs((double)(b))))

/* one signature, ddp at 1, 2, 4 GPUs and single at 1: the technique's
 * other counts are corrected, another technique is not */
static const char profile_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-5\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"single\", \"gpus\": 1, \"sec_per_batch\": 1.0, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 1, \"sec_per_batch\": 1.1, \"status\": \"predicted\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.5, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.3, \"status\": \"predicted\"} ] },"
	" {\"signature\": \"big/bs8\", \"task_ids\": \"6-7\", \"batches\": 100,"
	" \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.6, \"status\": \"measured\"} ] } ] }";

static const saturn_profile_t *lookup_one(const char *batch, long uid, void *arg)
{
	return strcmp(batch, "sweep") || uid != 1001 ? NULL : arg;
}

/* --- pure functions ---------------------------------------------------- */

static const struct obs_case {
	const char *what;
	double reported, done, updated, first_done, first_updated, expect;
} obs_cases[] = {
	{"the job's own number", 0.7, 10, 100, 0, 50, 0.7},
	{"two reports: start-up left out", 0, 30, 160, 10, 100, 3.0},
	{"one report: unknown", 0, 10, 100, 10, 100, 0},
	{"nothing", 0, 0, 0, 0, 0, 0},
	{"no progress since the first", 0, 10, 200, 10, 100, 0},
	{"clock went back", 0, 20, 90, 10, 100, 0},
	{"not a number", NAN, 20, INFINITY, 10, 100, 0},
	{"negative reported", -1, 30, 160, 10, 100, 3.0},
};

/* A short task's batches weigh more: a tenth of it counts as
 * SATURN_FB_MIN_BATCHES; from 200 batches up, nothing changes. */
START_TEST(test_confidence)
{
	ck_assert(NEAR(saturn_fb_confidence(5, 50), 20));
	ck_assert(NEAR(saturn_fb_confidence(10, 100), 20));
	ck_assert(NEAR(saturn_fb_confidence(10, 200), 10));
	ck_assert(NEAR(saturn_fb_confidence(10, 4000), 10));
	ck_assert(NEAR(saturn_fb_confidence(10, 0), 10));
	ck_assert(NEAR(saturn_fb_confidence(10, NAN), 10));
	ck_assert(NEAR(saturn_fb_confidence(-1, 50), 0));
	ck_assert(NEAR(saturn_fb_confidence(INFINITY, 50), 0));
	ck_assert(saturn_fb_confidence(SATURN_FB_MIN_SHARE * 50, 50) >= SATURN_FB_MIN_BATCHES);
}
END_TEST

START_TEST(test_observed)
{
	const struct obs_case *c = &obs_cases[_i];
	double v = saturn_fb_observed_spb(c->reported, c->done, c->updated, c->first_done,
					  c->first_updated);

	ck_assert_msg(NEAR(v, c->expect), "%s: %g, want %g", c->what, v, c->expect);
}
END_TEST

START_TEST(test_pure)
{
	/* EWMA */
	ck_assert(NEAR(saturn_fb_ewma(0, 2), 2));
	ck_assert(NEAR(saturn_fb_ewma(1, 0), 1));
	ck_assert(NEAR(saturn_fb_ewma(1, 2), 1 + SATURN_FB_ALPHA));
	ck_assert(NEAR(saturn_fb_ewma(0, NAN), 0));
	/* blend: the profile counts as SATURN_FB_PRIOR_BATCHES batches */
	ck_assert(NEAR(saturn_fb_blend(1, 0, 50), 1));
	ck_assert(NEAR(saturn_fb_blend(0, 2, 0), 2));
	ck_assert(NEAR(saturn_fb_blend(0, 0, 5), 0));
	ck_assert(NEAR(saturn_fb_blend(1, 2, 0), 1));
	ck_assert(NEAR(saturn_fb_blend(1, 2, SATURN_FB_PRIOR_BATCHES), 1.5));
	ck_assert(NEAR(saturn_fb_blend(1, 2, -3), 1));
	ck_assert(saturn_fb_blend(1, 2, 1e6) > 1.999);
	/* remaining */
	ck_assert(NEAR(saturn_fb_remaining_s(50, 2, -1), 100));
	ck_assert(NEAR(saturn_fb_remaining_s(50, 2, 30), 70));
	ck_assert(NEAR(saturn_fb_remaining_s(50, 2, 300), 0));
	ck_assert(NEAR(saturn_fb_remaining_s(0, 2, 0), 0));
	ck_assert(NEAR(saturn_fb_remaining_s(-1, 2, 0), -1));
	ck_assert(NEAR(saturn_fb_remaining_s(5, 0, 0), -1));
	ck_assert(NEAR(saturn_fb_remaining_s(5, 1, NAN), 5));
	/* clamp */
	ck_assert(NEAR(saturn_fb_clamp_ratio(2), 2));
	ck_assert(NEAR(saturn_fb_clamp_ratio(100), SATURN_FB_RATIO_MAX));
	ck_assert(NEAR(saturn_fb_clamp_ratio(0.01), SATURN_FB_RATIO_MIN));
	ck_assert(NEAR(saturn_fb_clamp_ratio(0), 1));
	ck_assert(NEAR(saturn_fb_clamp_ratio(-2), 1));
	ck_assert(NEAR(saturn_fb_clamp_ratio(NAN), 1));
	ck_assert(NEAR(saturn_fb_clamp_ratio(INFINITY), 1));
}
END_TEST

/* the per-job tracking: first report, EWMA of new reports only, sweep */
START_TEST(test_job_report)
{
	saturn_fb_t *fb = saturn_fb_create();

	ck_assert_ptr_nonnull(fb);
	/* no report yet */
	ck_assert(NEAR(saturn_fb_job_report(fb, 7, 0, 0, 0), 0));
	/* first report without sec_per_batch: start-up unknown, no speed */
	ck_assert(NEAR(saturn_fb_job_report(fb, 7, 0, 10, 1000), 0));
	ck_assert(NEAR(fb->jobs[0].first_updated, 1000));
	ck_assert(NEAR(fb->jobs[0].first_done, 10));
	/* second: 20 batches in 40 s */
	ck_assert(NEAR(saturn_fb_job_report(fb, 7, 0, 30, 1040), 2));
	/* the same report again changes nothing */
	ck_assert(NEAR(saturn_fb_job_report(fb, 7, 3, 30, 1040), 2));
	/* a new one with the job's number: smoothed */
	ck_assert(NEAR(saturn_fb_job_report(fb, 7, 3, 40, 1070), 2 + SATURN_FB_ALPHA));
	/* another job; then a cycle without job 7: forgotten */
	ck_assert(NEAR(saturn_fb_job_report(fb, 8, 0.5, 1, 1000), 0.5));
	ck_assert_int_eq(fb->njobs, 2);
	saturn_fb_jobs_sweep(fb);
	ck_assert_int_eq(fb->njobs, 2);
	ck_assert(NEAR(saturn_fb_job_report(fb, 8, 0.5, 2, 1010), 0.5));
	saturn_fb_jobs_sweep(fb);
	ck_assert_int_eq(fb->njobs, 1);
	ck_assert_int_eq(fb->jobs[0].job_id, 8);
	saturn_fb_destroy(fb);
	saturn_fb_destroy(NULL);
}
END_TEST

/* corrections: minimum batches, own count, the technique's other counts
 * weighted by batches, nothing across signatures, classes, users */
START_TEST(test_corrections)
{
	saturn_fb_t *fb = saturn_fb_create();
	saturn_fb_key_t k, q;
	double w;

	saturn_fb_key_set(&k, 1001, "sweep", "m/bs8", "ddp", 2, NULL);
	ck_assert(NEAR(saturn_fb_correction(NULL, &k, &w), 1));
	ck_assert(NEAR(w, 0));
	/* too few batches: not trusted */
	ck_assert_int_eq(saturn_fb_record(fb, &k, 2, SATURN_FB_MIN_BATCHES - 1, 10), 0);
	ck_assert_int_eq(fb->ncorr, 0);
	ck_assert_int_eq(saturn_fb_record(fb, &k, NAN, 100, 10), 0);
	ck_assert_int_eq(fb->ncorr, 0);
	ck_assert_int_eq(saturn_fb_record(fb, &k, 2, 40, 10), 0);
	ck_assert(NEAR(saturn_fb_correction(fb, &k, &w), 2));
	ck_assert(NEAR(w, 40));
	/* the same key again: EWMA, confidence the larger */
	ck_assert_int_eq(saturn_fb_record(fb, &k, 3, 30, 11), 0);
	ck_assert(NEAR(saturn_fb_correction(fb, &k, &w), 2 + SATURN_FB_ALPHA));
	ck_assert(NEAR(w, 40));
	ck_assert(NEAR(fb->corr[0].updated, 11));
	/* clamped */
	saturn_fb_key_set(&q, 1001, "sweep", "m/bs8", "ddp", 8, NULL);
	ck_assert_int_eq(saturn_fb_record(fb, &q, 50, 120, 12), 0);
	ck_assert(NEAR(saturn_fb_correction(fb, &q, NULL), SATURN_FB_RATIO_MAX));
	/* ddp at 4 GPUs: the two counts weighted by their batches */
	saturn_fb_key_set(&q, 1001, "sweep", "m/bs8", "ddp", 4, NULL);
	ck_assert(NEAR(saturn_fb_correction(fb, &q, &w),
		       (40 * (2 + SATURN_FB_ALPHA) + 120 * SATURN_FB_RATIO_MAX) / 160));
	ck_assert(NEAR(w, 160));
	/* another technique: the shrunk cross-technique ratio (below) */
	saturn_fb_key_set(&q, 1001, "sweep", "m/bs8", "single", 2, NULL);
	ck_assert(NEAR(saturn_fb_correction(fb, &q, &w),
		       exp(SATURN_FB_CROSS_SHRINK *
			   (40 * log(2 + SATURN_FB_ALPHA) + 120 * log(SATURN_FB_RATIO_MAX)) / 160)));
	ck_assert(NEAR(w, 160));
	/* another signature, class, user or batch: nothing */
	saturn_fb_key_set(&q, 1001, "sweep", "big/bs8", "ddp", 2, NULL);
	ck_assert(NEAR(saturn_fb_correction(fb, &q, NULL), 1));
	saturn_fb_key_set(&q, 1001, "sweep", "m/bs8", "ddp", 2, "a100");
	ck_assert(NEAR(saturn_fb_correction(fb, &q, NULL), 1));
	saturn_fb_key_set(&q, 1002, "sweep", "m/bs8", "ddp", 2, NULL);
	ck_assert(NEAR(saturn_fb_correction(fb, &q, NULL), 1));
	saturn_fb_key_set(&q, 1001, "other", "m/bs8", "ddp", 2, NULL);
	ck_assert(NEAR(saturn_fb_correction(fb, &q, NULL), 1));
	/* put (a restored state) replaces and clamps */
	{
		saturn_fb_corr_t c = {.key = k, .ratio = 0.01, .batches = 70, .updated = 5};

		ck_assert_int_eq(saturn_fb_put(fb, &c), 0);
		ck_assert_int_eq(fb->ncorr, 2);
		ck_assert(NEAR(saturn_fb_correction(fb, &k, NULL), SATURN_FB_RATIO_MIN));
	}
	/* a restored entry below the minimum is not trusted */
	{
		saturn_fb_corr_t c = {.ratio = 2, .batches = 3};

		saturn_fb_key_set(&c.key, 9, "b", "s", "t", 1, NULL);
		ck_assert_int_eq(saturn_fb_put(fb, &c), 0);
		ck_assert(NEAR(saturn_fb_correction(fb, &c.key, NULL), 1));
	}
	saturn_fb_destroy(fb);
}
END_TEST

/* cross-technique: a technique with no trusted ratio of its own takes the
 * signature's other techniques' geometric mean, shrunk towards 1 (less
 * than observed, either way); one with its own keeps it; other
 * signatures and users get nothing */
START_TEST(test_cross_technique)
{
	saturn_fb_t *fb = saturn_fb_create();
	saturn_fb_key_t ddp2, ddp4, single, fsdp, pipe, other_sig, other_user, other_class;
	double w, r;

	saturn_fb_key_set(&ddp2, 1001, "sweep", "gpt2-medium", "ddp", 2, NULL);
	saturn_fb_key_set(&ddp4, 1001, "sweep", "gpt2-medium", "ddp", 4, NULL);
	saturn_fb_key_set(&single, 1001, "sweep", "gpt2-medium", "single", 1, NULL);
	saturn_fb_key_set(&fsdp, 1001, "sweep", "gpt2-medium", "fsdp", 4, NULL);
	saturn_fb_key_set(&pipe, 1001, "sweep", "gpt2-medium", "pipeline", 4, NULL);
	saturn_fb_key_set(&other_sig, 1001, "sweep", "gpt2-large", "single", 1, NULL);
	saturn_fb_key_set(&other_user, 1002, "sweep", "gpt2-medium", "single", 1, NULL);
	saturn_fb_key_set(&other_class, 1001, "sweep", "gpt2-medium", "single", 1, "a100");
	/* ddp on 2 GPUs observed 1.5x slower */
	ck_assert_int_eq(saturn_fb_record(fb, &ddp2, 1.5, 40, 10), 0);
	r = saturn_fb_correction(fb, &single, &w);
	ck_assert_msg(NEAR(r, sqrt(1.5)), "single %g", r);
	ck_assert(r > 1 && r < saturn_fb_correction(fb, &ddp2, NULL));
	ck_assert(NEAR(w, 40));
	/* the same technique's other count keeps the whole ratio */
	ck_assert(NEAR(saturn_fb_correction(fb, &ddp4, NULL), 1.5));
	/* faster: pulled towards 1 from below the same way */
	ck_assert_int_eq(saturn_fb_record(fb, &pipe, 0.25, 60, 10), 0);
	ck_assert(NEAR(saturn_fb_correction(fb, &pipe, NULL), 0.25));
	/* single: the batch-weighted geometric mean of ddp (1.5, 40) and
	 * pipeline (0.25, 60), square-rooted */
	r = saturn_fb_correction(fb, &single, &w);
	ck_assert_msg(NEAR(r, exp(0.5 * (40 * log(1.5) + 60 * log(0.25)) / 100)), "single %g", r);
	ck_assert(NEAR(w, 100));
	/* a technique with its own trusted ratio keeps its own, also at
	 * another count */
	ck_assert_int_eq(saturn_fb_record(fb, &single, 0.8, 30, 10), 0);
	ck_assert(NEAR(saturn_fb_correction(fb, &single, NULL), 0.8));
	ck_assert(NEAR(saturn_fb_correction(fb, &ddp2, NULL), 1.5));
	ck_assert(NEAR(saturn_fb_correction(fb, &pipe, NULL), 0.25));
	/* fsdp: all three others */
	ck_assert(NEAR(saturn_fb_correction(fb, &fsdp, NULL),
		       exp(0.5 * (40 * log(1.5) + 60 * log(0.25) + 30 * log(0.8)) / 130)));
	/* another signature, user, class: untouched */
	ck_assert(NEAR(saturn_fb_correction(fb, &other_sig, &w), 1));
	ck_assert(NEAR(w, 0));
	ck_assert(NEAR(saturn_fb_correction(fb, &other_user, NULL), 1));
	ck_assert(NEAR(saturn_fb_correction(fb, &other_class, NULL), 1));
	saturn_fb_destroy(fb);

	/* untrusted ratios of another technique give nothing; a clamped
	 * one is shrunk from the clamp */
	fb = saturn_fb_create();
	ck_assert_int_eq(saturn_fb_record(fb, &ddp2, 3, SATURN_FB_MIN_BATCHES - 1, 10), 0);
	ck_assert(NEAR(saturn_fb_correction(fb, &single, NULL), 1));
	ck_assert_int_eq(saturn_fb_record(fb, &ddp2, 100, 50, 10), 0);
	ck_assert(NEAR(saturn_fb_correction(fb, &single, NULL), sqrt(SATURN_FB_RATIO_MAX)));
	saturn_fb_destroy(fb);
}
END_TEST

START_TEST(test_progress_summary)
{
	saturn_progress_t p = {.batches_done = 30, .batches_total = 100, .sec_per_batch = 0.5,
			       .updated = 77};
	saturn_progress_obs_t o;

	saturn_progress_summary(&p, &o);
	ck_assert(NEAR(o.batches_left, 70));
	ck_assert(NEAR(o.batches_done, 30));
	ck_assert(NEAR(o.sec_per_batch, 0.5));
	ck_assert(NEAR(o.updated, 77));
	p.batches_total = 0; /* no batches_total: unknown */
	saturn_progress_summary(&p, &o);
	ck_assert(NEAR(o.batches_left, -1));
	ck_assert(NEAR(o.batches_done, 30));
	p.batches_total = 10; /* past its total */
	saturn_progress_summary(&p, &o);
	ck_assert(NEAR(o.batches_left, 0));
}
END_TEST

/* --- the build ----------------------------------------------------------- */

#define NOW 100000.0

/* One 8-GPU node; job 0 runs (task 0, ddp on 2 GPUs, started 60 s ago);
 * jobs 1 and 2 are held (tasks 1 and 6: the other signature). */
static saturn_snapshot_t *cluster(void)
{
	saturn_snapshot_t *s = fx_snapshot(NOW, 1, 8);
	saturn_snap_job_t *j;

	for (int i = 0; i < 3; i++) {
		j = saturn_snapshot_add_job(s);
		j->job_id = 100 + (uint32_t)i;
		j->array_job_id = 100;
		j->task_id = i == 2 ? 6 : i;
		j->uid = 1001;
		snprintf(j->batch, sizeof(j->batch), "sweep");
		j->req_gpus = 2;
		j->submit_time = NOW - 1000;
		j->state = SATURN_SNAP_HELD;
	}
	j = &s->jobs[0];
	j->state = SATURN_SNAP_RUNNING;
	j->start_time = NOW - 60;
	j->node = 0;
	j->gpu_mask = 0x3;
	j->gpus = 2;
	snprintf(j->technique, sizeof(j->technique), "ddp");
	return s;
}

/* planned batches (seconds) of the running task; spb of an option of a
 * held job */
static double running_left(const saturn_sched_build_t *b)
{
	for (int t = 0; t < b->problem->ntasks; t++)
		if (b->problem->tasks[t].is_running)
			return b->problem->tasks[t].batches * b->problem->tasks[t].options[0].sec_per_batch;
	return -1;
}

static double held_spb(const saturn_sched_build_t *b, int job, const char *tech, int gpus)
{
	for (int t = 0; t < b->problem->ntasks; t++) {
		const saturn_task_t *task = &b->problem->tasks[t];

		if (b->job_of_task[t] != job)
			continue;
		for (int o = 0; o < task->noptions; o++)
			if (task->options[o].gpus == gpus && !strcmp(task->options[o].technique, tech))
				return task->options[o].sec_per_batch;
	}
	return -1;
}

static const struct run_case {
	const char *what;
	double batches_left, batches_done, progress_spb, since_report;
	int feedback; /* run saturn_sched_feedback first */
	double expect_left;
	double expect_ddp4, expect_single, expect_big; /* held spb after */
} run_cases[] = {
	/* no progress file: the profile's total (100 x 0.5) less 60 s run */
	{"no report", -1, -1, 0, 0, 1, 50 - 60 < 1 ? 1 : 0, 0.3, 1.0, 0.6},
	/* the batches_left path without feedback: profile speed, capped by
	 * the time-based estimate (100 x 0.5 - 60 s: used up, so progress) */
	{"batches_left, profile speed", 40, 60, 0, 0, 0, 40 * 0.5, 0.3, 1.0, 0.6},
	/* observed 1.0 s/batch (x2), 60 done: the running task's prior is
	 * its own corrected speed (1.0), so 40 x 1.0; its siblings at
	 * ddp/4 x2 (the curve), single x sqrt(2) (cross-technique, shrunk),
	 * the other signature untouched */
	{"batches_left, observed x2", 40, 60, 1.0, 0, 1, 40 * 1.0, 0.6, M_SQRT2, 0.6},
	/* the time since the report comes off */
	{"report 10 s old", 40, 60, 1.0, 10, 1, 40 * 1.0 - 10, 0.6, M_SQRT2, 0.6},
	/* too few batches to correct anyone: the running task blends its
	 * own speed with the profile's (K = 20 batches; a 100-batch task's
	 * batches count twice, saturn_fb_confidence: 4 done weigh 8) */
	{"few batches", 96, 4, 1.0, 0, 1, 96 * (20 * 0.5 + 8 * 1.0) / 28, 0.3, 1.0, 0.6},
	/* 10 of 100 batches: a tenth of the task counts as 20 batches, the
	 * correction is trusted (the siblings x2, single x sqrt(2)) and the
	 * running task's prior is its own corrected speed */
	{"a tenth of a short task", 90, 10, 1.0, 0, 1, 90 * 1.0, 0.6, M_SQRT2, 0.6},
	/* no batches_total: the profile's 100 batches less those done */
	{"no batches_total", -1, 60, 0.25, 0, 1, 40 * 0.25, 0.15, M_SQRT1_2, 0.6},
	/* an absurd speed is clamped for the siblings (x5), and the running
	 * task's remaining time to the model's limit at worst */
	{"100x slower", 40, 60, 50.0, 0, 1, 40 * (20 * 2.5 + 120 * 50.0) / 140, 1.5, 2.2360679774997896, 0.6},
};

START_TEST(test_build_running)
{
	const struct run_case *c = &run_cases[_i];
	saturn_snapshot_t *s = cluster();
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_fb_t *fb = saturn_fb_create();
	saturn_sched_build_t b;
	saturn_snap_job_t *j = &s->jobs[0];
	double left;

	ck_assert_msg(pr != NULL, "%s", err.text);
	j->batches_left = c->batches_left;
	j->batches_done = c->batches_done;
	j->progress_spb = c->progress_spb;
	j->progress_updated = c->batches_done >= 0 ? NOW - c->since_report : 0;
	if (c->feedback) {
		ck_assert_int_eq(saturn_sched_feedback(fb, s, lookup_one, pr), 0);
		ck_assert_ptr_eq(s->feedback, fb);
		ck_assert(NEAR(j->obs_spb, c->progress_spb));
		if (c->batches_done >= 0)
			ck_assert(NEAR(j->prior_spb, 0.5));
		ck_assert(NEAR(j->first_report, c->batches_done >= 0 ? NOW - c->since_report : 0));
	}
	ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
	ck_assert_int_eq(b.nskipped, 0);
	left = running_left(&b);
	if (c->batches_done < 0)
		ck_assert_msg(NEAR(left, 1), "%s: %g", c->what, left);
	else
		ck_assert_msg(NEAR(left, c->expect_left), "%s: left %g, want %g", c->what, left,
			      c->expect_left);
	ck_assert_msg(NEAR(held_spb(&b, 1, "ddp", 4), c->expect_ddp4), "%s: ddp/4 %g", c->what,
		      held_spb(&b, 1, "ddp", 4));
	ck_assert_msg(NEAR(held_spb(&b, 1, "ddp", 2), c->expect_ddp4 / 0.3 * 0.5), "%s: ddp/2 %g",
		      c->what, held_spb(&b, 1, "ddp", 2));
	ck_assert_msg(NEAR(held_spb(&b, 1, "single", 1), c->expect_single), "%s: single %g",
		      c->what, held_spb(&b, 1, "single", 1));
	ck_assert(NEAR(held_spb(&b, 2, "ddp", 4), c->expect_big));
	saturn_sched_build_free(&b);

	/* the corrections outlive the running job: it ended, the held task
	 * keeps its corrected speed */
	if (c->feedback) {
		j->state = SATURN_SNAP_HELD;
		j->job_id = 999;
		ck_assert_int_eq(saturn_sched_feedback(fb, s, lookup_one, pr), 0);
		ck_assert_int_eq(fb->njobs, 0);
		ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
		ck_assert(NEAR(held_spb(&b, 1, "ddp", 4), c->expect_ddp4));
		saturn_sched_build_free(&b);
		/* the batch is over (another user's job left): its
		 * corrections go */
		for (int i = 0; i < s->njobs; i++)
			s->jobs[i].uid = 1002;
		ck_assert_int_eq(saturn_sched_feedback(fb, s, lookup_one, pr), 0);
		ck_assert_int_eq(fb->ncorr, 0);
	}
	saturn_fb_destroy(fb);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* Node classes: n1 is an a100 node, n2 an h100 one with a profile of its
 * own (sweep@h100.json: ddp on 2 GPUs 0.25 s, on 4 predicted 0.15 s).
 * The task running on n2 is compared with h100's profile (observed 0.5
 * s/batch: x2 there, where the batch's profile would say x1), the
 * correction is h100's, and it corrects h100's options only. */
static const char h100_text[] =
	"{\"format\": \"saturn-profile/1\", \"batch\": \"sweep\", \"created\": 1,"
	" \"tasks\": [ {\"signature\": \"m/bs8\", \"task_ids\": \"0-5\", \"batches\": 100,"
	" \"class\": \"h100\", \"options\": ["
	"  {\"technique\": \"ddp\", \"gpus\": 2, \"sec_per_batch\": 0.25, \"status\": \"measured\"},"
	"  {\"technique\": \"ddp\", \"gpus\": 4, \"sec_per_batch\": 0.15, \"status\": \"predicted\"} ] } ] }";

static const saturn_profile_t *lookup_h100(const char *batch, long uid, const char *klass,
					   void *arg)
{
	return strcmp(batch, "sweep") || uid != 1001 || strcmp(klass, "h100") ? NULL : arg;
}

/* spb of job's option tech/gpus planned on a class whose name has klass */
static double class_spb(const saturn_sched_build_t *b, int job, const char *tech, int gpus,
			const char *klass)
{
	for (int t = 0; t < b->problem->ntasks; t++) {
		const saturn_task_t *task = &b->problem->tasks[t];

		if (b->job_of_task[t] != job)
			continue;
		for (int o = 0; o < task->noptions; o++)
			if (task->options[o].gpus == gpus && !strcmp(task->options[o].technique, tech) &&
			    task->options[o].klass && strstr(task->options[o].klass, klass))
				return task->options[o].sec_per_batch;
	}
	return -1;
}

START_TEST(test_class_feedback)
{
	saturn_snapshot_t *s = cluster();
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_profile_t *cp = saturn_profile_parse(h100_text, strlen(h100_text), &err);
	saturn_snap_node_t *n2 = saturn_snapshot_add_node(s);
	saturn_fb_t *fb = saturn_fb_create();
	saturn_sched_build_t b;
	saturn_snap_job_t *j = &s->jobs[0];
	saturn_fb_key_t key;
	int nfound;

	ck_assert_msg(pr && cp, "%s", err.text);
	ck_assert_ptr_nonnull(n2);
	snprintf(s->nodes[0].gpu_types, sizeof(s->nodes[0].gpu_types), "a100");
	snprintf(n2->name, sizeof(n2->name), "n2");
	snprintf(n2->gpu_types, sizeof(n2->gpu_types), "h100");
	n2->gpus = 8;
	s->class_profile = lookup_h100;
	s->class_profile_arg = cp;
	snprintf(s->nodes[0].klass, sizeof(s->nodes[0].klass), "a100");
	snprintf(n2->klass, sizeof(n2->klass), "h100");
	j->node = 1;
	j->batches_left = 40;
	j->batches_done = 60;
	j->progress_spb = 0.5;
	j->progress_updated = NOW;
	ck_assert_int_eq(saturn_sched_feedback(fb, s, lookup_one, pr), 0);
	ck_assert(NEAR(j->prior_spb, 0.25));
	ck_assert_int_eq(fb->ncorr, 1);
	ck_assert_str_eq(fb->corr[0].key.klass, "h100");
	ck_assert(NEAR(fb->corr[0].ratio, 2));
	saturn_fb_key_set(&key, 1001, "sweep", "m/bs8", "ddp", 4, "");
	ck_assert(NEAR(saturn_fb_correction(fb, &key, NULL), 1)); /* not the batch's */
	ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
	/* h100's own options: x2 (the curve) */
	ck_assert_msg(NEAR(class_spb(&b, 1, "ddp", 4, "h100"), 0.3), "h100 ddp/4 %g",
		      class_spb(&b, 1, "ddp", 4, "h100"));
	ck_assert_msg(NEAR(class_spb(&b, 1, "ddp", 2, "h100"), 0.5), "h100 ddp/2 %g",
		      class_spb(&b, 1, "ddp", 2, "h100"));
	/* the batch's profile on a100: untouched */
	ck_assert_msg(NEAR(class_spb(&b, 1, "ddp", 4, "a100"), 0.3), "a100 ddp/4 %g",
		      class_spb(&b, 1, "ddp", 4, "a100"));
	ck_assert_msg(NEAR(class_spb(&b, 1, "single", 1, "a100"), 1.0), "a100 single %g",
		      class_spb(&b, 1, "single", 1, "a100"));
	saturn_sched_build_free(&b);
	/* released onto n2 with ddp on 4: planned at h100's own speed
	 * (100 x 0.15 s), not the batch's (100 x 0.3 s) */
	j = saturn_snapshot_add_job(s);
	ck_assert_ptr_nonnull(j);
	j->job_id = 110;
	j->array_job_id = 100;
	j->task_id = 2;
	j->uid = 1001;
	snprintf(j->batch, sizeof(j->batch), "sweep");
	j->state = SATURN_SNAP_RELEASED;
	j->node = -1;
	j->gpus = 4;
	snprintf(j->technique, sizeof(j->technique), "ddp");
	snprintf(j->pinned, sizeof(j->pinned), "n2");
	s->feedback = NULL;
	ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
	nfound = 0;
	for (int t = 0; t < b.problem->ntasks; t++)
		if (b.job_of_task[t] == s->njobs - 1) {
			ck_assert_msg(NEAR(b.problem->tasks[t].batches *
					   b.problem->tasks[t].options[0].sec_per_batch, 15),
				      "released on h100: %g s", b.problem->tasks[t].batches);
			nfound++;
		}
	ck_assert_int_eq(nfound, 1);
	saturn_sched_build_free(&b);
	saturn_fb_destroy(fb);
	saturn_profile_destroy(pr);
	saturn_profile_destroy(cp);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A running task without a profile (users' requests) still goes by its
 * observed speed when its progress file has batches_total. */
START_TEST(test_build_no_profile)
{
	saturn_snapshot_t *s = cluster();
	saturn_error_t err = {{0}};
	saturn_fb_t *fb = saturn_fb_create();
	saturn_sched_build_t b;
	saturn_snap_job_t *j = &s->jobs[0];

	j->time_limit_s = 7200;
	j->batches_left = 100;
	j->batches_done = 50;
	j->progress_spb = 3;
	j->progress_updated = NOW;
	ck_assert_int_eq(saturn_sched_feedback(fb, s, NULL, NULL), 0);
	ck_assert(NEAR(j->obs_spb, 3));
	ck_assert(NEAR(j->prior_spb, 0));
	ck_assert_int_eq(fb->ncorr, 0);
	ck_assert_msg(saturn_sched_build(s, NULL, NULL, &b, &err) == 0, "%s", err.text);
	ck_assert(NEAR(running_left(&b), 300));
	saturn_sched_build_free(&b);
	saturn_fb_destroy(fb);
	saturn_snapshot_destroy(s);
}
END_TEST

/* saturn_feedback=yes|no, as the controller applies it: with no, the
 * running task's remaining time and the held tasks' speeds are the
 * profile's (as before feedback existed) and nothing is recorded, even
 * after a cycle with it on */
static const struct switch_case {
	const char *params;
	int on;
	double expect_left, expect_ddp4, expect_single;
} switch_cases[] = {
	{"", 1, 40 * 1.0, 0.6, M_SQRT2},
	{"saturn_feedback=yes", 1, 40 * 1.0, 0.6, M_SQRT2},
	{"saturn_interval=5,saturn_feedback=no", 0, 40 * 0.5, 0.3, 1.0},
	{"saturn_feedback=0", 0, 40 * 0.5, 0.3, 1.0},
};

START_TEST(test_switch)
{
	const struct switch_case *c = &switch_cases[_i];
	saturn_sched_settings_t cfg;
	saturn_snapshot_t *s = cluster();
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_fb_t *fb = saturn_fb_create();
	saturn_sched_build_t b;
	saturn_snap_job_t *j = &s->jobs[0];
	saturn_plan_t *plan;
	char *txt;

	ck_assert_msg(pr != NULL, "%s", err.text);
	saturn_sched_settings_init(&cfg);
	ck_assert_int_eq(cfg.feedback, 1);
	fx_setting(&cfg, c->params, 0, NULL);
	ck_assert_int_eq(cfg.feedback, c->on);
	j->batches_left = 40;
	j->batches_done = 60;
	j->progress_spb = 1.0; /* x2 the profile's 0.5 */
	j->progress_updated = NOW;
	ck_assert_int_eq(saturn_sched_feedback(cfg.feedback ? fb : NULL, s, lookup_one, pr), 0);
	ck_assert_int_eq(fb->ncorr, c->on);
	ck_assert_int_eq(fb->njobs, c->on);
	ck_assert_ptr_eq(s->feedback, c->on ? fb : NULL);
	ck_assert(NEAR(j->obs_spb, c->on ? 1.0 : 0));
	ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
	ck_assert_msg(NEAR(running_left(&b), c->expect_left), "%s: left %g", c->params,
		      running_left(&b));
	ck_assert(NEAR(held_spb(&b, 1, "ddp", 4), c->expect_ddp4));
	ck_assert(NEAR(held_spb(&b, 1, "ddp", 2), c->expect_ddp4 / 0.3 * 0.5));
	ck_assert(NEAR(held_spb(&b, 1, "single", 1), c->expect_single));
	ck_assert(NEAR(held_spb(&b, 2, "ddp", 4), 0.6));
	/* the state: corrections and observed speeds only with it on */
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	txt = saturn_sched_state_to_json(s, &b, plan, "p1", NOW);
	ck_assert_ptr_nonnull(txt);
	ck_assert_int_eq(strstr(txt, "\"corrections\"") != NULL, c->on);
	ck_assert_int_eq(strstr(txt, "\"spb_observed\"") != NULL, c->on);
	free(txt);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);

	/* switched off at a reconfigure after a cycle with it on: the
	 * snapshot forgets the table, the plan is the profile's again */
	if (c->on) {
		fx_setting(&cfg, "saturn_feedback=no", 0, NULL);
		ck_assert_int_eq(cfg.feedback, 0);
		ck_assert_int_eq(saturn_sched_feedback(NULL, s, lookup_one, pr), 0);
		ck_assert_ptr_null(s->feedback);
		ck_assert(NEAR(j->obs_spb, 0));
		ck_assert(NEAR(j->prior_spb, 0));
		ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
		ck_assert(NEAR(running_left(&b), 40 * 0.5));
		ck_assert(NEAR(held_spb(&b, 1, "ddp", 4), 0.3));
		ck_assert(NEAR(held_spb(&b, 1, "single", 1), 1.0));
		saturn_sched_build_free(&b);
	}
	saturn_sched_settings_free(&cfg);
	saturn_fb_destroy(fb);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* A plan made on speeds that turned out wrong: once the carried plan,
 * re-timed on this cycle's problem, has slipped by min_gain or more from
 * what it expected when it was made, a plan shorter by 1 % replaces it
 * (min_gain alone kept the profile's plan of slurm-bench's scaling sweep
 * to the end: 143.5 s left against 137.9 s, 3.9 % shorter, every cycle). */
static const struct slip_case {
	const char *what;
	double new_mk, carried, expected, min_gain;
	int expect_switch;
} slip_cases[] = {
	{"slipped 10 %: 3.9 % shorter replaces it", 137.9, 143.5, 130.5, 0.05, 1},
	{"slipped: 0.3 % shorter does not", 143.0, 143.5, 130.5, 0.05, 0},
	{"as expected: 3 % shorter does not", 118.0, 121.5, 121.5, 0.05, 0},
	{"as expected: 6 % shorter does", 114.0, 121.5, 121.5, 0.05, 1},
	{"slipped under min_gain: min_gain", 130.0, 135.0, 130.0, 0.05, 0},
	{"expected unknown (restored plan): min_gain", 137.9, 143.5, 0, 0.05, 0},
	{"min_gain 0: any shorter", 143.4, 143.5, 130.5, 0, 1},
};

START_TEST(test_slipped)
{
	const struct slip_case *c = &slip_cases[_i];
	double gain = saturn_sched_switch_gain(c->carried, c->expected, c->min_gain);

	ck_assert_msg(gain <= c->min_gain && gain >= 0, "%s: gain %g", c->what, gain);
	ck_assert_msg(saturn_sched_should_switch(c->new_mk, c->carried, gain) == c->expect_switch,
		      "%s: gain %g", c->what, gain);
}
END_TEST

/* The carried plan re-timed with the observed speeds: a plan made on the
 * profile (task 0 at 0.5 s/batch) slips when task 0 is seen at 1.0; with
 * saturn_feedback=no the problem is the profile's and nothing slips. */
START_TEST(test_slipped_feedback)
{
	saturn_snapshot_t *s = cluster();
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_fb_t *fb = saturn_fb_create();
	saturn_sched_build_t b;
	saturn_snap_job_t *j = &s->jobs[0];
	saturn_plan_t *made, *carried;

	ck_assert_msg(pr != NULL, "%s", err.text);
	j->batches_left = 40;
	j->batches_done = 60;
	j->progress_spb = 0.5;
	j->progress_updated = NOW;
	ck_assert_int_eq(saturn_sched_feedback(NULL, s, lookup_one, pr), 0);
	ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
	made = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(made);
	saturn_sched_build_free(&b);

	for (int on = 0; on <= 1; on++) {
		double gain;

		j->progress_spb = on ? 1.0 : 0.5; /* x2 the profile's 0.5 */
		j->obs_spb = j->prior_spb = 0;
		ck_assert_int_eq(saturn_sched_feedback(on ? fb : NULL, s, lookup_one, pr), 0);
		ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
		carried = saturn_sched_carry(made, b.problem);
		ck_assert_ptr_nonnull(carried);
		gain = saturn_sched_switch_gain(carried->makespan_s, made->makespan_s, 0.05);
		ck_assert_msg(on ? carried->makespan_s > made->makespan_s * 1.05
				 : NEAR(carried->makespan_s, made->makespan_s),
			      "feedback %d: carried %g, made %g", on, carried->makespan_s,
			      made->makespan_s);
		ck_assert_msg(NEAR(gain, on ? SATURN_SLIPPED_GAIN : 0.05), "feedback %d: gain %g", on,
			      gain);
		saturn_plan_destroy(carried);
		saturn_sched_build_free(&b);
	}
	saturn_plan_destroy(made);
	saturn_fb_destroy(fb);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

/* a bad value keeps the previous one and names the key; the unknown-key
 * message lists it */
START_TEST(test_switch_parse)
{
	saturn_sched_settings_t cfg;

	saturn_sched_settings_init(&cfg);
	fx_setting(&cfg, "saturn_feedback=maybe", 1, "saturn_feedback=maybe: must be yes or no");
	ck_assert_int_eq(cfg.feedback, 1);
	fx_setting(&cfg, "saturn_feedback=no", 0, NULL);
	fx_setting(&cfg, "saturn_feedback=", 1, NULL);
	ck_assert_int_eq(cfg.feedback, 0);
	fx_setting(&cfg, "saturn_feedbak=no", 1, "did you mean saturn_feedback?");
	saturn_sched_settings_free(&cfg);
}
END_TEST

/* --- the state ----------------------------------------------------------- */

START_TEST(test_state)
{
	saturn_snapshot_t *s = cluster();
	saturn_error_t err = {{0}};
	saturn_profile_t *pr = saturn_profile_parse(profile_text, strlen(profile_text), &err);
	saturn_fb_t *fb = saturn_fb_create();
	saturn_sched_build_t b;
	saturn_sched_state_t *st;
	saturn_plan_t *plan;
	char *txt;
	int nrun = 0;

	s->jobs[0].batches_left = 40;
	s->jobs[0].batches_done = 60;
	s->jobs[0].progress_spb = 1.0;
	s->jobs[0].progress_updated = NOW;
	ck_assert_int_eq(saturn_sched_feedback(fb, s, lookup_one, pr), 0);
	ck_assert_int_eq(fb->ncorr, 1);
	ck_assert_msg(saturn_sched_build(s, lookup_one, pr, &b, &err) == 0, "%s", err.text);
	plan = saturn_sched_fcfs(b.problem);
	ck_assert_ptr_nonnull(plan);
	txt = saturn_sched_state_to_json(s, &b, plan, "p1", NOW);
	ck_assert_ptr_nonnull(txt);
	st = saturn_sched_state_parse(txt, strlen(txt), &err);
	ck_assert_msg(st != NULL, "%s", err.text);
	ck_assert_int_eq(st->ncorr, 1);
	ck_assert_int_eq(st->corr[0].key.uid, 1001);
	ck_assert_str_eq(st->corr[0].key.batch, "sweep");
	ck_assert_str_eq(st->corr[0].key.signature, "m/bs8");
	ck_assert_str_eq(st->corr[0].key.technique, "ddp");
	ck_assert_str_eq(st->corr[0].key.klass, "");
	ck_assert_int_eq(st->corr[0].key.gpus, 2);
	ck_assert(NEAR(st->corr[0].ratio, 2));
	/* its confidence: 60 of a 100-batch task weigh 120 (saturn_fb_confidence) */
	ck_assert(NEAR(st->corr[0].batches, 120));
	ck_assert(NEAR(st->corr[0].updated, NOW));
	for (int i = 0; i < st->ntasks; i++)
		if (!strcmp(st->tasks[i].state, "running")) {
			nrun++;
			ck_assert(NEAR(st->tasks[i].spb_profile, 0.5));
			ck_assert(NEAR(st->tasks[i].spb_observed, 1.0));
		} else {
			ck_assert(NEAR(st->tasks[i].spb_observed, 0));
		}
	ck_assert_int_eq(nrun, 1);
	saturn_sched_state_destroy(st);
	free(txt);
	saturn_plan_destroy(plan);
	saturn_sched_build_free(&b);
	saturn_fb_destroy(fb);
	saturn_profile_destroy(pr);
	saturn_snapshot_destroy(s);
}
END_TEST

static const struct state_case {
	const char *corr; /* the "corrections" member, or "" */
	int ok, ncorr;
	const char *expect;
} state_cases[] = {
	{"", 1, 0, NULL}, /* a state written before: no corrections */
	{",\"corrections\":[]", 1, 0, NULL},
	{",\"corrections\":[{\"uid\":5,\"batch\":\"b\",\"signature\":\"s\",\"technique\":\"t\","
	 "\"gpus\":2,\"class\":\"\",\"ratio\":9,\"batches\":30}]", 1, 1, NULL},
	{",\"corrections\":{}", 0, 0, "corrections: must be an array"},
	{",\"corrections\":[3]", 0, 0, "corrections[0]: must be an object"},
	{",\"corrections\":[{\"uid\":5,\"batch\":\"b\",\"signature\":\"s\",\"technique\":\"t\","
	 "\"gpus\":0,\"ratio\":1,\"batches\":30}]", 0, 0, "corrections[0].gpus: must be an integer from 1"},
	{",\"corrections\":[{\"uid\":-5,\"batch\":\"b\",\"signature\":\"s\",\"technique\":\"t\","
	 "\"gpus\":1,\"ratio\":1,\"batches\":30}]", 0, 0, "corrections[0].uid: must be an integer from 0"},
	{",\"corrections\":[{\"uid\":5,\"batch\":\"b\",\"signature\":\"s\",\"technique\":\"t\","
	 "\"gpus\":1,\"ratio\":0,\"batches\":30}]", 0, 0, "corrections[0].ratio: must be a number > 0"},
	{",\"corrections\":[{\"uid\":5,\"batch\":\"b\",\"signature\":\"s\",\"technique\":\"t\","
	 "\"gpus\":1,\"ratio\":1}]", 0, 0, "corrections[0].batches: missing"},
};

START_TEST(test_state_parse)
{
	const struct state_case *c = &state_cases[_i];
	char buf[1024];
	saturn_error_t err = {{0}};
	saturn_sched_state_t *st;

	snprintf(buf, sizeof(buf),
		 "{\"format\":\"saturn-sched-state/1\",\"tasks\":[{\"id\":\"1\",\"start\":1,\"end\":2}]%s}",
		 c->corr);
	st = saturn_sched_state_parse(buf, strlen(buf), &err);
	if (!c->ok) {
		ck_assert_ptr_null(st);
		ck_assert_msg(strstr(err.text, c->expect), "%s", err.text);
		return;
	}
	ck_assert_msg(st != NULL, "%s", err.text);
	ck_assert_int_eq(st->ncorr, c->ncorr);
	if (c->ncorr)
		ck_assert(NEAR(st->corr[0].ratio, SATURN_FB_RATIO_MAX)); /* clamped */
	ck_assert(NEAR(st->tasks[0].spb_observed, 0));
	saturn_sched_state_destroy(st);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_loop_test(tc, test_observed, 0, sizeof(obs_cases) / sizeof(obs_cases[0]));
	tcase_add_test(tc, test_pure);
	tcase_add_test(tc, test_confidence);
	tcase_add_test(tc, test_job_report);
	tcase_add_test(tc, test_corrections);
	tcase_add_test(tc, test_cross_technique);
	tcase_add_test(tc, test_progress_summary);
	tcase_add_loop_test(tc, test_build_running, 0, sizeof(run_cases) / sizeof(run_cases[0]));
	tcase_add_test(tc, test_build_no_profile);
	tcase_add_test(tc, test_class_feedback);
	tcase_add_loop_test(tc, test_switch, 0, sizeof(switch_cases) / sizeof(switch_cases[0]));
	tcase_add_loop_test(tc, test_slipped, 0, sizeof(slip_cases) / sizeof(slip_cases[0]));
	tcase_add_test(tc, test_slipped_feedback);
	tcase_add_test(tc, test_switch_parse);
	tcase_add_test(tc, test_state);
	tcase_add_loop_test(tc, test_state_parse, 0, sizeof(state_cases) / sizeof(state_cases[0]));
}

int main(void)
{
	return fx_run_suite("feedback", 0, add_tests);
}
