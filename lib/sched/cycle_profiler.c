/* cycle_profiler.c - the profiler step of a cycle (cycle_profiler.h):
 * batch_policy.c's profiler decisions on the facts the plugin gathered;
 * the waiting tasks leave the cycle's snapshot, held with their reasons.
 * No file, lock or clock.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpol_int.h"
#include "sched_cycle.h"

/* --- the step -------------------------------------------------------------- */

static saturn_cycle_level_t level_of(saturn_bpol_level_t l)
{
	return l == SATURN_BPOL_ERROR  ? SATURN_CYCLE_ERROR
	       : l == SATURN_BPOL_INFO ? SATURN_CYCLE_INFO
				       : SATURN_CYCLE_DEBUG;
}

/* Hold snapshot job k with reason (profiler: the job it waits for, -1). */
static int add_hold(saturn_cycle_out_t *out, const saturn_snap_job_t *j, const char *reason,
		    int profiler)
{
	saturn_cycle_prof_hold_t *h =
	    realloc(out->prof_holds, (size_t)(out->nprof_holds + 1) * sizeof(*h));

	if (!h)
		return -1;
	out->prof_holds = h;
	h = &h[out->nprof_holds++];
	h->job = *j;
	snprintf(h->reason, sizeof(h->reason), "%s", reason);
	h->profiler = profiler;
	return 0;
}

static int add_profiler(saturn_cycle_out_t *out, const saturn_snap_job_t *j0,
			const saturn_bpol_action_t *a)
{
	saturn_cycle_profiler_t *p =
	    realloc(out->profilers, (size_t)(out->nprofilers + 1) * sizeof(*p));

	if (!p)
		return -1;
	out->profilers = p;
	p = &p[out->nprofilers];
	memset(p, 0, sizeof(*p));
	p->uid = j0->uid;
	snprintf(p->batch, sizeof(p->batch), "%s", j0->batch);
	p->owner = j0->job_id;
	p->gpus = a->gpus;
	if (!(p->task_ids = strdup(a->text ? a->text : "")))
		return -1;
	out->nprofilers++;
	return 0;
}

static int add_record(saturn_cycle_out_t *out, const saturn_snap_job_t *j0,
		      const saturn_prof_rec_t *rec)
{
	saturn_cycle_prof_rec_t *r =
	    realloc(out->prof_records, (size_t)(out->nprof_records + 1) * sizeof(*r));

	if (!r)
		return -1;
	out->prof_records = r;
	r = &r[out->nprof_records++];
	r->uid = j0->uid;
	snprintf(r->batch, sizeof(r->batch), "%s", j0->batch);
	r->rec = *rec;
	return 0;
}

/* The policy for group b (its entry e, NULL: no facts, planned as it is):
 * actions appended with tag b, the record worked on in *rec; added: the
 * profiler jobs this cycle asked for so far, per uid. */
static void decide_batch(const saturn_cycle_in_t *in, saturn_cycle_out_t *out,
			 const saturn_batch_groups_t *g, int b, const saturn_profstate_entry_t *e,
			 saturn_prof_rec_t *rec, saturn_uidtab_t *added,
			 saturn_bpol_actions_t *acts)
{
	const saturn_snapshot_t *s = in->snap;
	const int *m = &g->member[g->first[b]];
	int n = g->first[b + 1] - g->first[b], n0 = acts->n, st;
	const saturn_snap_job_t *j0 = &s->jobs[m[0]];

	if (!e)
		return;
	st = saturn_bpol_profiler(s, m, n, e->exists, rec, &e->job, b, acts);
	if (st < 0) {
		saturn_cycle_log(out, SATURN_CYCLE_ERROR,
				 "batch %s of uid %ld: out of memory deciding on its profiler job: "
				 "planned as it is this cycle",
				 j0->batch, j0->uid);
		return;
	}
	if (st == SATURN_BPOL_SUBMITTING) {
		/* at most saturn_companion_jobs of the user's at once */
		long active =
		    (in->companions ? (long)saturn_uidtab_get(in->companions, j0->uid) : 0) +
		    (long)saturn_uidtab_get(added, j0->uid);

		for (int i = n0; i < acts->n; i++) {
			int rc;

			if (acts->a[i].kind != SATURN_BPOL_SUBMIT_PROFILER)
				continue;
			rc = saturn_budget_companion_wait(acts, i, (int)active,
							  in->cfg->companion_jobs);
			if (rc < 0 || (rc == 0 && saturn_uidtab_add(added, j0->uid, 1) < 0))
				saturn_cycle_log(
				    out, SATURN_CYCLE_ERROR,
				    "uid %ld: out of memory limiting companion jobs: submitted",
				    j0->uid);
			break;
		}
	}
	if (e->exists && e->nclass > 0) {
		const char *names[SATURN_CLASS_RULES_MAX];
		saturn_companion_t jobs[SATURN_CLASS_RULES_MAX];
		int nc = e->nclass < SATURN_CLASS_RULES_MAX ? e->nclass : SATURN_CLASS_RULES_MAX;

		for (int k = 0; k < nc; k++) {
			names[k] = e->cls[k].klass;
			jobs[k] = e->cls[k].job;
		}
		if (saturn_bpol_class_wait(s, m, n, jobs, names, nc, b, acts) < 0)
			saturn_cycle_log(out, SATURN_CYCLE_ERROR,
					 "batch %s of uid %ld: out of memory deciding on its class "
					 "profiler jobs",
					 j0->batch, j0->uid);
	}
}

/* Carry out acts: logs, jobs to submit, holds; drop[k] set for the
 * snapshot jobs that leave the cycle. */
static void carry_out(saturn_cycle_out_t *out, const saturn_snapshot_t *s,
		      const saturn_batch_groups_t *g, const saturn_bpol_actions_t *acts, char *drop)
{
	for (int i = 0; i < acts->n; i++) {
		const saturn_bpol_action_t *a = &acts->a[i];
		const saturn_snap_job_t *j0 = &s->jobs[g->member[g->first[a->tag]]];
		int rc = 0, p;

		switch (a->kind) {
		case SATURN_BPOL_LOG:
			saturn_cycle_log(out, level_of(a->level), "batch %s of uid %ld: %s",
					 j0->batch, j0->uid, a->text);
			break;
		case SATURN_BPOL_SUBMIT_PROFILER:
			/* the tasks wait for it; its id goes into their
			 * reasons once submitted */
			p = out->nprofilers;
			rc = add_profiler(out, j0, a);
			for (int k = 0; rc == 0 && k < a->ntasks; k++) {
				rc = add_hold(out, &s->jobs[a->tasks[k]], "saturn: profiling", p);
				drop[a->tasks[k]] = 1;
			}
			break;
		case SATURN_BPOL_HOLD:
			for (int k = 0; rc == 0 && k < a->ntasks; k++)
				if (!drop[a->tasks[k]])
					rc = add_hold(out, &s->jobs[a->tasks[k]], a->text, -1);
			break;
		case SATURN_BPOL_DROP:
			for (int k = 0; k < a->ntasks; k++)
				drop[a->tasks[k]] = 1;
			break;
		default: /* SAVE, FALL_BACK: the records are compared */
			break;
		}
		if (rc < 0)
			saturn_cycle_log(
			    out, SATURN_CYCLE_ERROR,
			    "batch %s of uid %ld: out of memory carrying out its profiler decision",
			    j0->batch, j0->uid);
	}
}

int saturn_cycle_profiler_step(const saturn_cycle_in_t *in, saturn_cycle_out_t *out)
{
	saturn_snapshot_t *s = in->snap;
	saturn_bpol_actions_t acts = {0};
	saturn_uidtab_t added = {0};
	saturn_prof_rec_t *rec = NULL;
	saturn_batch_groups_t g;
	char *drop = NULL;
	int w = 0, dropped;

	if (!in->cfg->profiler || !in->profiler || s->njobs == 0)
		return 0;
	if (saturn_batch_groups(s, NULL, s->njobs, &g) < 0) {
		saturn_cycle_log(
		    out, SATURN_CYCLE_ERROR,
		    "out of memory grouping tasks by batch: no profiler jobs this cycle");
		return 0;
	}
	if (!(rec = calloc((size_t)g.ngroups + 1, sizeof(*rec))) ||
	    !(drop = calloc((size_t)s->njobs, 1))) {
		saturn_cycle_log(out, SATURN_CYCLE_ERROR,
				 "out of memory deciding on profiler jobs: none this cycle");
		goto done;
	}
	for (int b = 0; b < g.ngroups; b++) {
		const saturn_snap_job_t *j0 = &s->jobs[g.member[g.first[b]]];
		const saturn_profstate_entry_t *e =
		    saturn_profstate_find(in->profiler, j0->uid, j0->batch);

		if (e)
			rec[b] = e->rec;
		decide_batch(in, out, &g, b, e, &rec[b], &added, &acts);
		/* the record changed: it goes out */
		if (e && !e->exists && memcmp(&rec[b], &e->rec, sizeof(rec[b])) &&
		    add_record(out, j0, &rec[b]) < 0)
			saturn_cycle_log(
			    out, SATURN_CYCLE_ERROR,
			    "batch %s of uid %ld: out of memory keeping its profiler record",
			    j0->batch, j0->uid);
	}
	carry_out(out, s, &g, &acts, drop);
	for (int k = 0; k < s->njobs; k++)
		if (!drop[k])
			s->jobs[w++] = s->jobs[k];
done:
	dropped = s->njobs - (drop ? w : s->njobs);
	if (drop)
		s->njobs = w;
	free(drop);
	free(rec);
	saturn_uidtab_free(&added);
	saturn_bpol_actions_free(&acts);
	saturn_batch_groups_free(&g);
	return dropped;
}

/* --- notes and outcomes ---------------------------------------------------- */

/* The record of (uid, batch) as this cycle leaves it, or NULL. */
static const saturn_prof_rec_t *
record_of(const saturn_cycle_in_t *in, const saturn_cycle_out_t *out, long uid, const char *batch)
{
	const saturn_profstate_entry_t *e;

	for (int i = 0; i < out->nprof_records; i++)
		if (out->prof_records[i].uid == uid && !strcmp(out->prof_records[i].batch, batch))
			return &out->prof_records[i].rec;
	e = saturn_profstate_find(in->profiler, uid, batch);
	return e && !e->exists ? &e->rec : NULL;
}

void saturn_cycle_profiler_notes(const saturn_cycle_in_t *in, saturn_cycle_out_t *out)
{
	if (!in->cfg->profiler || !in->profiler)
		return;
	for (int i = 0; i < out->nd; i++) {
		saturn_decision_t *d = &out->d[i];
		const saturn_snap_job_t *j = &in->snap->jobs[d->job];
		char note[80], text[sizeof(d->reason)];
		const char *r = d->reason;

		if (d->release)
			continue;
		/* "saturn: profiler job N failed, users' requests; starts in ..." */
		saturn_bpol_profiler_note(record_of(in, out, j->uid, j->batch), note, sizeof(note));
		if (!note[0])
			continue;
		if (!strncmp(r, "saturn: ", 8))
			r += 8;
		snprintf(text, sizeof(text), "%s%s", note, r);
		memcpy(d->reason, text, sizeof(d->reason));
	}
}

int saturn_cycle_profiler_submitted(saturn_cycle_out_t *out, int i, uint32_t job_id,
				    saturn_prof_rec_t *rec, saturn_bpol_actions_t *acts)
{
	const saturn_cycle_profiler_t *p = &out->profilers[i];
	saturn_bpol_actions_t one = {0};
	int rc = -1, nt = 0, *tasks = NULL;

	/* the synthetic SUBMIT: its tasks are the holds waiting for it */
	for (int k = 0; k < out->nprof_holds; k++)
		nt += out->prof_holds[k].profiler == i;
	if ((nt && !(tasks = malloc((size_t)nt * sizeof(int)))) ||
	    !(one.a = calloc(1, sizeof(*one.a))))
		goto out;
	nt = 0;
	for (int k = 0; k < out->nprof_holds; k++)
		if (out->prof_holds[k].profiler == i)
			tasks[nt++] = k;
	one.n = one.cap = 1;
	one.a[0].kind = SATURN_BPOL_SUBMIT_PROFILER;
	one.a[0].gpus = p->gpus;
	one.a[0].tasks = tasks;
	one.a[0].ntasks = nt;
	tasks = NULL;
	if (!(one.a[0].text = strdup(p->task_ids)))
		goto out;
	rc = saturn_bpol_profiler_submitted(&one, 0, job_id, rec);
	for (int k = 1; rc >= 0 && k < one.n; k++) {
		saturn_bpol_action_t *x = &one.a[k];

		if (x->kind == SATURN_BPOL_HOLD) {
			for (int t = 0; t < x->ntasks; t++)
				snprintf(out->prof_holds[x->tasks[t]].reason,
					 sizeof(out->prof_holds[x->tasks[t]].reason), "%s",
					 x->text);
			continue;
		}
		if (x->kind != SATURN_BPOL_LOG && x->kind != SATURN_BPOL_SAVE)
			continue; /* DROP: out of the cycle already; FALL_BACK: the record */
		if (saturn_bpol_push(acts, x->kind, 0, x->level, 0, NULL, 0, "%s",
				     x->text ? x->text : "") < 0) {
			rc = -1;
			break;
		}
	}
out:
	free(tasks);
	saturn_bpol_actions_free(&one);
	if (rc < 0) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}
