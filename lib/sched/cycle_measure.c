/* cycle_measure.c - the measurement step of a cycle (cycle_measure.h):
 * bpol_measure.c's decisions run on the cycle's decisions, over copies of
 * the batches' records; the holds go into the decisions, the jobs and the
 * changed records into the outputs. No file, lock or clock.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_cycle.h"

/* --- the step -------------------------------------------------------------- */

static saturn_cycle_level_t level_of(saturn_bpol_level_t l)
{
	return l == SATURN_BPOL_ERROR  ? SATURN_CYCLE_ERROR
	       : l == SATURN_BPOL_INFO ? SATURN_CYCLE_INFO
				       : SATURN_CYCLE_DEBUG;
}

/* One batch's record as the cycle starts from it: a copy of the input's,
 * or an empty one. 0 or -1 (ENOMEM). */
static int record_in(const saturn_cycle_in_t *in, const saturn_snap_job_t *j, const char *klass,
		     saturn_meas_rec_t *rec)
{
	int i = saturn_measset_index(in->measure, j->uid, j->batch, klass);

	memset(rec, 0, sizeof(*rec));
	return i < 0 ? 0 : saturn_meas_rec_copy(rec, &in->measure->e[i].rec);
}

/* 1 when a and b differ (as their file texts), 0 when not, -1 (ENOMEM). */
static int record_differs(const saturn_meas_rec_t *a, const saturn_meas_rec_t *b)
{
	char *ta = saturn_meas_rec_format(a), *tb = saturn_meas_rec_format(b);
	int rc = ta && tb ? strcmp(ta, tb) != 0 : -1;

	free(ta);
	free(tb);
	return rc;
}

/* The decision for batch b: its record worked on (work), the companion
 * limit applied to a submission (added: this cycle's submissions per uid).
 * Appends to acts; 1 when work is the batch's record now, 0 when the
 * record stays as it was, -1 (ENOMEM, logged). */
static int decide_batch(const saturn_cycle_in_t *in, saturn_cycle_out_t *out,
			saturn_bpol_measure_t *w, int b, saturn_meas_rec_t *work,
			saturn_uidtab_t *added, saturn_bpol_actions_t *acts)
{
	const saturn_snap_job_t *j = &in->snap->jobs[out->d[w->due[b]].job];
	const char *klass = w->bclass[b] ? w->bclass[b] : "";
	char key[SATURN_MEAS_KEY_LEN];
	int n0 = acts->n, st;

	saturn_meas_key(j->batch, klass, key, sizeof(key));
	if (record_in(in, j, klass, work) < 0 ||
	    (st = saturn_bpol_measure_batch(in->snap, out->d, w, b, work, b, acts)) < 0) {
		saturn_cycle_log(
		    out, SATURN_CYCLE_ERROR,
		    "batch %s of uid %ld: out of memory deciding on measurement: none this cycle",
		    key, j->uid);
		return -1;
	}
	for (int i = n0; st > 0 && i < acts->n; i++) {
		long active;
		int rc;

		if (acts->a[i].kind != SATURN_BPOL_SUBMIT_MEASURE)
			continue;
		active = (in->companions ? (long)saturn_uidtab_get(in->companions, j->uid) : 0) +
			 (long)saturn_uidtab_get(added, j->uid);
		for (int p = 0; p < out->nprofilers; p++)
			active += out->profilers[p].uid == j->uid; /* asked for this cycle */
		rc = saturn_budget_companion_wait(acts, i, (int)active, in->cfg->companion_jobs);
		if (rc == 1)
			return 0; /* it waits: nothing tried, the record as it was */
		if (rc < 0 || saturn_uidtab_add(added, j->uid, 1) < 0)
			saturn_cycle_log(
			    out, SATURN_CYCLE_ERROR,
			    "uid %ld: out of memory limiting companion jobs: submitted", j->uid);
		break;
	}
	return 1;
}

/* Append a submission for the SUBMIT_MEASURE a (of batch b) to out, its
 * tasks held. 0 or -1 (ENOMEM). */
static int add_submission(const saturn_cycle_in_t *in, saturn_cycle_out_t *out,
			  const saturn_bpol_measure_t *w, const saturn_bpol_action_t *a)
{
	const saturn_snap_job_t *j;
	saturn_cycle_measure_t *m, *nm;
	int b = a->tag;

	nm = realloc(out->measure, (size_t)(out->nmeasure + 1) * sizeof(*nm));
	if (!nm)
		return -1;
	out->measure = nm;
	m = &nm[out->nmeasure];
	memset(m, 0, sizeof(*m));
	m->owner = out->d[w->due[b]].job;
	j = &in->snap->jobs[m->owner];
	m->uid = j->uid;
	snprintf(m->batch, sizeof(m->batch), "%s", j->batch);
	snprintf(m->klass, sizeof(m->klass), "%s", w->bclass[b] ? w->bclass[b] : "");
	m->gpus = a->gpus;
	m->nodes = a->nodes > 1 ? a->nodes : 1;
	if (!(m->list = strdup(a->text ? a->text : "")) ||
	    (a->ntasks && !(m->tasks = malloc((size_t)a->ntasks * sizeof(int))))) {
		free(m->list);
		return -1;
	}
	m->ntasks = a->ntasks;
	for (int k = 0; k < a->ntasks; k++) {
		saturn_decision_t *dk = &out->d[a->tasks[k]];

		m->tasks[k] = a->tasks[k];
		dk->release = 0;
		saturn_bpol_measure_reason(dk, 0, dk->reason, sizeof(dk->reason));
	}
	out->nmeasure++;
	return 0;
}

/* Carry out acts into out: logs, holds, submissions. */
static void carry_out(const saturn_cycle_in_t *in, saturn_cycle_out_t *out,
		      const saturn_bpol_measure_t *w, const saturn_bpol_actions_t *acts)
{
	for (int i = 0; i < acts->n; i++) {
		const saturn_bpol_action_t *a = &acts->a[i];
		const saturn_snap_job_t *j = &in->snap->jobs[out->d[w->due[a->tag]].job];
		char key[SATURN_MEAS_KEY_LEN];

		saturn_meas_key(j->batch, w->bclass[a->tag], key, sizeof(key));
		switch (a->kind) {
		case SATURN_BPOL_LOG:
			saturn_cycle_log(out, level_of(a->level), "batch %s of uid %ld: %s", key,
					 j->uid, a->text);
			break;
		case SATURN_BPOL_HOLD:
			for (int k = 0; k < a->ntasks; k++) {
				saturn_decision_t *dk = &out->d[a->tasks[k]];

				dk->release = 0;
				snprintf(dk->reason, sizeof(dk->reason), "%s", a->text);
			}
			break;
		case SATURN_BPOL_SUBMIT_MEASURE:
			if (add_submission(in, out, w, a) < 0)
				saturn_cycle_log(
				    out, SATURN_CYCLE_ERROR,
				    "batch %s of uid %ld: out of memory asking for a measurement "
				    "job: its tasks released on the predictions",
				    key, j->uid);
			break;
		default: /* SAVE: the records are compared instead */
			break;
		}
	}
}

void saturn_cycle_measure_step(const saturn_cycle_in_t *in, saturn_cycle_out_t *out)
{
	saturn_bpol_actions_t acts = {0};
	saturn_uidtab_t added = {0};
	saturn_bpol_measure_t w;

	if (!in->cfg->profiler || !in->cfg->measure_predicted || out->nd <= 0 || !out->d)
		return;
	if (saturn_bpol_measure_prepare(in->snap, out->d, out->nd, saturn_profset_lookup,
					(void *)in->profiles, &w) < 0) {
		saturn_cycle_log(
		    out, SATURN_CYCLE_ERROR,
		    "out of memory grouping decisions by batch: no measurement this cycle");
		return;
	}
	for (int b = 0; b < w.nbatches; b++) {
		const saturn_snap_job_t *j = &in->snap->jobs[out->d[w.due[b]].job];
		const char *klass = w.bclass[b] ? w.bclass[b] : "";
		saturn_meas_rec_t work, was;
		int n0 = acts.n, rc = decide_batch(in, out, &w, b, &work, &added, &acts);

		/* the record changed: it goes out whole */
		if (rc == 1 && record_in(in, j, klass, &was) == 0) {
			rc = record_differs(&work, &was);
			saturn_meas_rec_free(&was);
		} else if (rc == 1) {
			rc = -1;
		}
		if (rc == 1 &&
		    saturn_measset_put(&out->meas_records, j->uid, j->batch, klass, &work) < 0)
			rc = -1;
		if (rc < 0) {
			/* no change of record without its actions, nor the reverse */
			while (acts.n > n0) {
				acts.n--;
				free(acts.a[acts.n].tasks);
				free(acts.a[acts.n].text);
			}
		}
		saturn_meas_rec_free(&work);
	}
	carry_out(in, out, &w, &acts);
	saturn_uidtab_free(&added);
	saturn_bpol_actions_free(&acts);
	saturn_bpol_measure_free(&w);
}

/* --- the outcome of a submission -------------------------------------------- */

int saturn_cycle_measure_submitted(saturn_cycle_out_t *out, int i, uint32_t job_id,
				   saturn_meas_rec_t *rec, saturn_bpol_actions_t *acts)
{
	const saturn_cycle_measure_t *m = &out->measure[i];
	saturn_bpol_actions_t one = {0};
	saturn_bpol_action_t *a;
	int rc;

	if (!(one.a = calloc(1, sizeof(*one.a))))
		goto nomem;
	one.n = one.cap = 1;
	a = &one.a[0];
	a->kind = SATURN_BPOL_SUBMIT_MEASURE;
	a->gpus = m->gpus;
	a->nodes = m->nodes;
	if (!(a->text = strdup(m->list)) ||
	    (m->ntasks && !(a->tasks = malloc((size_t)m->ntasks * sizeof(int)))))
		goto nomem;
	a->ntasks = m->ntasks;
	if (m->ntasks)
		memcpy(a->tasks, m->tasks, (size_t)m->ntasks * sizeof(int));
	rc = saturn_bpol_measure_submitted(out->d, &one, 0, job_id, rec);
	for (int k = 1; rc == 0 && k < one.n; k++) {
		saturn_bpol_action_t *x = &one.a[k];

		if (x->kind == SATURN_BPOL_HOLD) {
			for (int t = 0; t < x->ntasks; t++) {
				saturn_decision_t *dk = &out->d[x->tasks[t]];

				dk->release = 0;
				snprintf(dk->reason, sizeof(dk->reason), "%s", x->text);
			}
			continue;
		}
		/* LOG and SAVE for the plugin: moved, not copied */
		if (acts->n == acts->cap) {
			int cap = acts->cap ? 2 * acts->cap : 8;
			saturn_bpol_action_t *na = realloc(acts->a, (size_t)cap * sizeof(*na));

			if (!na)
				goto nomem;
			acts->a = na;
			acts->cap = cap;
		}
		acts->a[acts->n++] = *x;
		memset(x, 0, sizeof(*x));
	}
	saturn_bpol_actions_free(&one);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
nomem:
	saturn_bpol_actions_free(&one);
	errno = ENOMEM;
	return -1;
}
