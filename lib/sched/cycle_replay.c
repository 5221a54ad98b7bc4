/* cycle_replay.c - run a recorded scheduling cycle again
 * (saturn_cycle_replay_one, cycle_record.h) and compare what it gives with
 * what was recorded: the check behind `saturn replay`.
 *
 * The replay works on copies (the run changes its snapshot and state in
 * place) and plays the record's tape back, so the planner's results are
 * the recorded ones and everything around the search must come out the
 * same.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle_record.h"

static saturn_snapshot_t *snapshot_copy(const saturn_snapshot_t *s)
{
	saturn_snapshot_t *c = saturn_snapshot_create();

	if (!c)
		return NULL;
	c->now = s->now;
	c->max_tasks = s->max_tasks;
	c->measure_multinode = s->measure_multinode;
	for (int i = 0; i < s->nnodes; i++) {
		saturn_snap_node_t *n = saturn_snapshot_add_node(c);

		if (!n)
			goto fail;
		*n = s->nodes[i];
	}
	for (int i = 0; i < s->nbusy; i++) {
		saturn_snap_busy_t *b = saturn_snapshot_add_busy(c);

		if (!b)
			goto fail;
		*b = s->busy[i];
	}
	for (int i = 0; i < s->njobs; i++) {
		saturn_snap_job_t *j = saturn_snapshot_add_job(c);

		if (!j)
			goto fail;
		*j = s->jobs[i];
	}
	return c;
fail:
	saturn_snapshot_destroy(c);
	return NULL;
}

static saturn_fb_t *fb_copy(const saturn_fb_t *fb)
{
	saturn_fb_t *c = saturn_fb_create();

	if (!c)
		return NULL;
	if ((fb->ncorr && !(c->corr = calloc((size_t)fb->ncorr, sizeof(*c->corr)))) ||
	    (fb->njobs && !(c->jobs = calloc((size_t)fb->njobs, sizeof(*c->jobs))))) {
		saturn_fb_destroy(c);
		return NULL;
	}
	if (fb->ncorr)
		memcpy(c->corr, fb->corr, (size_t)fb->ncorr * sizeof(*c->corr));
	if (fb->njobs)
		memcpy(c->jobs, fb->jobs, (size_t)fb->njobs * sizeof(*c->jobs));
	c->ncorr = c->cap_corr = fb->ncorr;
	c->njobs = c->cap_jobs = fb->njobs;
	return c;
}

/* A deep copy of st into c (zeroed first). 0 or -1 (ENOMEM, c empty). */
static int state_copy(const saturn_cycle_state_t *st, saturn_cycle_state_t *c)
{
	*c = *st;
	c->plan = NULL;
	c->feedback = NULL;
	if ((st->plan && !(c->plan = saturn_plan_copy(st->plan))) ||
	    (st->feedback && !(c->feedback = fb_copy(st->feedback)))) {
		saturn_cycle_record_state_clear(c);
		return -1;
	}
	return 0;
}

int saturn_cycle_replay_one(const saturn_cycle_record_t *rec, char *diff, size_t len,
			    saturn_error_t *err)
{
	saturn_sched_settings_t cfg;
	saturn_error_t perr;
	saturn_cycle_state_t st;
	saturn_cycle_out_t out;
	saturn_cycle_in_t in;
	saturn_plan_tape_t tape;
	char *out_json = NULL, *st_json = NULL;
	int rc = -1;

	if (len)
		diff[0] = '\0';
	memset(&out, 0, sizeof(out));
	memset(&in, 0, sizeof(in));
	saturn_sched_settings_init(&cfg);
	/* a bad key keeps its default, as it did in the plugin (which logged it) */
	saturn_sched_settings_parse(&cfg, rec->sched_params, &perr);
	cfg.reconfig.requeue_delay_s = rec->requeue_delay_s;
	if (!(in.snap = snapshot_copy(rec->snap))) {
		saturn_sched_settings_free(&cfg);
		return saturn_error_set(err, "out of memory");
	}
	if (state_copy(&rec->state_in, &st) < 0) {
		saturn_snapshot_destroy(in.snap);
		saturn_sched_settings_free(&cfg);
		return saturn_error_set(err, "out of memory");
	}
	/* the record's plans, played from the start; the copies the planner
	 * returns are the run's, the tape's own stay the record's */
	tape = rec->tape;
	tape.mode = SATURN_TAPE_PLAY;
	tape.pos = 0;
	in.profiles = &rec->profiles;
	in.measure = &rec->measure;
	in.companions = &rec->companions;
	in.profiler = &rec->profiler;
	in.cfg = &cfg;
	in.requeue_ok = rec->requeue_ok;
	in.requeued_now = rec->requeued_now;
	in.max_evals = rec->max_evals;
	in.tape = &tape;
	/* a cycle that failed was recorded with its outputs: compare them too */
	(void)saturn_cycle_run(&in, &st, &out);
	out_json = saturn_cycle_out_to_json(&out);
	st_json = saturn_cycle_state_to_json(&st);
	if (!out_json || !st_json) {
		saturn_error_set(err, "out of memory");
		goto done;
	}
	rc = saturn_cycle_out_diff(rec->out, out_json, diff, len);
	if (rc == 0)
		rc = saturn_cycle_state_diff(rec->state_out, st_json, diff, len);
	if (rc == 0 && tape.pos != tape.n) {
		snprintf(diff, len, "tape: %d planner result(s) recorded, %d used by the replay",
			 tape.n, tape.pos);
		rc = 1;
	}
	if (rc < 0)
		saturn_error_set(err, "%s", diff);
done:
	free(out_json);
	free(st_json);
	saturn_cycle_out_free(&out);
	saturn_cycle_state_free(&st);
	saturn_snapshot_destroy(in.snap);
	saturn_sched_settings_free(&cfg);
	return rc;
}
