/* saturn_measure.c - re-measure a predicted option before a task runs on it
 * (saturn_measure_predicted=yes, with saturn_profiler set).
 *
 * The profiler measures a few GPU counts per technique and predicts the
 * rest from a scaling fit. When the plan is about to release a task onto a
 * `predicted` option, the task stays held ("saturn: measuring predicted ddp
 * on 4 GPUs (job N)") while a short job saturn-measure:NAME runs
 * "saturn-profile --measure TASK:TECHNIQUE:GPUS,..." as the batch's user on
 * every predicted option the plan uses for the batch (the due ones first);
 * it rewrites the profile with those options measured (or oom/failed) and
 * their techniques' other predictions re-fitted, and the next cycle plans
 * from that. Each option (signature, technique, GPU count) is tried once per
 * submission: when the job ends without measuring it, the prediction is
 * relied on and the log says so. The record of the running job survives a
 * slurmctld restart (STATE_DIR/measure-UID-NAME.job, root only). A batch is
 * (uid, name): each user's batch of a name has its own record and job.
 */
#include "config.h" /* Slurm's */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "formats.h"
#include "profile.h"
#include "sched_core.h"

#include "saturn_int.h"

/* At most this many measurement jobs per submission of a batch: a plan
 * that keeps moving to other predicted options then runs on predictions. */
#define MEASURE_ROUNDS 8
#define MEASURE_ITEMS 16
/* A measurement job still pending after this long (its GPUs are taken by
 * long jobs) is not waited for: the held tasks go on the predictions, and
 * the job still updates the profile whenever it runs. */
#define MEASURE_WAIT_S 300

typedef struct measure_rec {
	char batch[SATURN_NAME_LEN];
	long uid;
	uint32_t job_id;   /* running measurement job, 0 = none */
	uint32_t array_id; /* the submission it measures for */
	int rounds;        /* jobs submitted for that submission */
	char *tried;       /* "\n"-separated keys "TECH:GPUS@SIGNATURE" */
	char *items;       /* the running job's --measure list */
} measure_rec_t;

static measure_rec_t *recs;
static int nrecs;

static void rec_save(const measure_rec_t *m)
{
	char *txt = xstrdup_printf("%u %u %d %s\n%s", m->job_id, m->array_id, m->rounds,
				   m->items ? m->items : "-", m->tried ? m->tried : "");

	saturn_record_write("measure", m->uid, m->batch, m->job_id, txt);
	xfree(txt);
}

static measure_rec_t *rec_get(const char *batch, long uid)
{
	measure_rec_t *m;
	char *buf;

	for (int i = 0; i < nrecs; i++)
		if (recs[i].uid == uid && !strcmp(recs[i].batch, batch))
			return &recs[i];
	xrecalloc(recs, nrecs + 1, sizeof(*recs));
	m = &recs[nrecs++];
	snprintf(m->batch, sizeof(m->batch), "%s", batch);
	m->uid = uid;
	/* "JOBID ARRAYID ROUNDS ITEMS\nKEY\nKEY..." written by rec_save */
	if ((buf = saturn_record_read("measure", uid, batch))) {
		char items[1024] = "";
		char *nl = strchr(buf, '\n');

		if (sscanf(buf, "%u %u %d %1023s", &m->job_id, &m->array_id, &m->rounds, items) == 4) {
			if (strcmp(items, "-"))
				m->items = xstrdup(items);
			if (nl && nl[1])
				m->tried = xstrdup(nl + 1);
			info("sched/saturn: batch %s of uid %ld: measurement record found (job %u, %d round(s))",
			     batch, uid, m->job_id, m->rounds);
		} else {
			m->job_id = m->array_id = 0;
			m->rounds = 0;
		}
		free(buf);
	}
	return m;
}

/* key: "\nTECH:GPUS@SIGNATURE\n"; m->tried holds them one per line */
static int tried(const measure_rec_t *m, const char *key)
{
	size_t l = strlen(key) - 2;

	key++;
	for (const char *p = m->tried; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == l && !strncmp(p, key, l))
			return 1;
		p += n + (e ? 1 : 0);
	}
	return 0;
}

/* Technique names go into a shell line: letters, digits and _.+- only. */
static int tech_ok(const char *t)
{
	if (!t || !*t || strlen(t) > 64)
		return 0;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && !strchr("_.+-", *t))
			return 0;
	return 1;
}

enum { MJOB_ENDED, MJOB_RUNNING, MJOB_PENDING };

/* The measurement job's state; *since = its submit time when pending. */
static int job_state(uint32_t job_id, time_t *since)
{
	slurmctld_lock_t read_lock = {.job = READ_LOCK};
	job_record_t *jr;
	int st;

	lock_slurmctld(read_lock);
	jr = find_job_record(job_id);
	if (!jr || IS_JOB_FINISHED(jr) || IS_JOB_COMPLETING(jr)) {
		st = MJOB_ENDED;
	} else if (IS_JOB_PENDING(jr)) {
		st = MJOB_PENDING;
		*since = jr->details ? jr->details->submit_time : time(NULL);
	} else {
		st = MJOB_RUNNING;
	}
	unlock_slurmctld(read_lock);
	return st;
}

static uint32_t submission_of(const saturn_snap_job_t *j)
{
	return j->array_job_id ? j->array_job_id : j->job_id;
}

/* The signature of task j when decision d relies on a predicted option of
 * its profile (as loaded this cycle), else NULL. */
static const char *predicted_sig(const saturn_snap_job_t *j, const saturn_decision_t *d)
{
	const saturn_profile_t *pr = saturn_profile_cached(j->batch, j->uid);
	const saturn_profile_task_t *pt;

	if (!pr || !(pt = saturn_profile_find(pr, j->task_id >= 0 ? j->task_id : 0)))
		return NULL;
	for (int o = 0; o < pt->noptions; o++) {
		const saturn_profile_option_t *op = &pt->options[o];

		if (op->gpus == d->gpus && !xstrcmp(op->technique, d->technique))
			return op->status == SATURN_OPT_PREDICTED ? pt->signature : NULL;
	}
	return NULL;
}

static void hold(saturn_decision_t *d, uint32_t job_id)
{
	d->release = 0;
	snprintf(d->reason, sizeof(d->reason), "saturn: measuring predicted %s on %d GPU%s (job %u)",
		 d->technique, d->gpus, d->gpus == 1 ? "" : "s", job_id);
}

/* mark[] of a decision on a predicted option: due now (release) or later */
enum { DUE = 1, LATER, SEEN, LISTED };

/* One batch (uid, name), when some decision is due on a predicted option:
 * one job measures every predicted option the plan uses for the batch (due
 * ones first; later ones too, since a wrong prediction moves the whole
 * plan, but only those needing no more GPUs than the due ones, which are
 * free now); only the due tasks are held for it. mb[0..nmb-1]: the
 * decisions of the batch (ascending); i: its first due decision. */
static void measure_batch(const saturn_snapshot_t *s, saturn_decision_t *d, const int *mb,
			  int nmb, int i, char *mark, const char **sig, int maxg)
{
	const saturn_snap_job_t *j = &s->jobs[d[i].job];
	const char *batch = j->batch;
	measure_rec_t *m = rec_get(batch, j->uid);
	char *list = NULL, *round = xstrdup("\n");
	int nitems = 0, gpus = 0, due_max = 0;

	if (m->array_id && m->array_id != submission_of(j)) {
		/* the batch name is used again: its options may be tried again */
		m->job_id = m->array_id = 0;
		m->rounds = 0;
		xfree(m->tried);
		xfree(m->items);
	}
	for (int pass = DUE; pass <= LATER; pass++) {
		for (int x = 0; x < nmb; x++) {
			int k = mb[x];
			const saturn_snap_job_t *jk = &s->jobs[d[k].job];
			int due = pass == DUE;
			char *key;

			if (mark[k] != pass)
				continue;
			if (due && d[k].gpus > due_max)
				due_max = d[k].gpus;
			/* a later task needing more GPUs than the due ones free
			 * now would keep the job (and them) waiting */
			if (!due && d[k].gpus > due_max)
				continue;
			mark[k] = SEEN;
			if (m->job_id) {
				if (due)
					hold(&d[k], m->job_id); /* wait for the running job */
				continue;
			}
			key = xstrdup_printf("\n%s:%d@%s\n", d[k].technique, d[k].gpus, sig[k]);
			if (strstr(round, key)) {
				if (due) /* another task of the same signature and option */
					mark[k] = LISTED;
			} else if (tried(m, key) || m->rounds >= MEASURE_ROUNDS ||
				   !tech_ok(d[k].technique) || d[k].gpus > maxg ||
				   nitems >= MEASURE_ITEMS) {
				if (due)
					info("sched/saturn: batch %s of uid %ld: task %d relies on the predicted %s on %d GPU(s) (%s)",
					     batch, j->uid, jk->task_id, d[k].technique, d[k].gpus,
					     tried(m, key) ?
						     "measured once already; the measurement did not replace it" :
						     "not measurable now");
			} else {
				xstrfmtcat(round, "%s", key + 1);
				xstrfmtcat(list, "%s%d:%s:%d", list ? "," : "",
					   jk->task_id < 0 ? 0 : jk->task_id, d[k].technique,
					   d[k].gpus);
				nitems++;
				if (d[k].gpus > gpus)
					gpus = d[k].gpus;
				if (due)
					mark[k] = LISTED;
			}
			xfree(key);
		}
	}
	if (list) {
		saturn_batch_owner_t o;
		char *args = xstrdup_printf("--measure '%s'", list);

		if (saturn_batch_owner(j->job_id, &o) == 0 && (long)o.uid == j->uid)
			m->job_id = saturn_submit_profiler("measure", batch, &o, args, gpus);
		saturn_batch_owner_free(&o);
		m->array_id = submission_of(j);
		m->rounds++;
		xstrfmtcat(m->tried, "%s", round + 1); /* tried once, whatever happens */
		if (m->job_id) {
			m->items = xstrdup(list);
			info("sched/saturn: batch %s of uid %ld: measuring predicted option(s) %s before relying on them (job %u, round %d)",
			     batch, j->uid, list, m->job_id, m->rounds);
		} else {
			error("sched/saturn: batch %s of uid %ld: no measurement job: relying on the predictions %s",
			      batch, j->uid, list);
		}
		rec_save(m);
		for (int x = 0; x < nmb; x++)
			if (mark[mb[x]] == LISTED && m->job_id)
				hold(&d[mb[x]], m->job_id);
		xfree(args);
		xfree(list);
	}
	xfree(round);
}

void saturn_measure_poll(void)
{
	for (int r = 0; r < nrecs; r++) {
		measure_rec_t *m = &recs[r];

		time_t since = 0;
		int st;

		if (!m->job_id)
			continue;
		st = job_state(m->job_id, &since);
		if (st == MJOB_ENDED) {
			info("sched/saturn: batch %s of uid %ld: measurement job %u ended (%s)", m->batch,
			     m->uid, m->job_id, m->items ? m->items : "-");
		} else if (st == MJOB_PENDING && time(NULL) - since > MEASURE_WAIT_S) {
			info("sched/saturn: batch %s of uid %ld: measurement job %u still pending after %ds: not waiting for it (the tasks run on the predictions; the job still updates the profile when it runs)",
			     m->batch, m->uid, m->job_id, MEASURE_WAIT_S);
		} else {
			continue;
		}
		m->job_id = 0;
		xfree(m->items);
		rec_save(m);
	}
}

void saturn_measure_pass(const saturn_snapshot_t *s, saturn_decision_t *d, int nd)
{
	char *mark;
	const char **sig;
	int *jobs, any = 0;
	saturn_batch_groups_t g;

	if (!saturn_cfg.profiler || !saturn_cfg.measure_predicted || nd <= 0)
		return;
	mark = xcalloc(nd, 1);
	sig = xcalloc(nd, sizeof(*sig));
	for (int i = 0; i < nd; i++)
		if ((sig[i] = predicted_sig(&s->jobs[d[i].job], &d[i]))) {
			mark[i] = d[i].release ? DUE : LATER;
			any |= d[i].release;
		}
	/* the decisions grouped by batch (uid, name) once: O(nd log nd) */
	jobs = xcalloc(nd, sizeof(*jobs));
	for (int i = 0; i < nd; i++)
		jobs[i] = d[i].job;
	if (any && saturn_batch_groups(s, jobs, nd, &g) < 0) {
		error("sched/saturn: out of memory grouping decisions by batch: no measurement this cycle");
		any = 0;
	}
	for (int b = 0; any && b < g.ngroups; b++) {
		const int *mb = &g.member[g.first[b]];
		int nmb = g.first[b + 1] - g.first[b];

		for (int x = 0; x < nmb; x++)
			if (mark[mb[x]] == DUE) {
				int i = mb[x];

				measure_batch(s, d, mb, nmb, i, mark, sig,
					      saturn_snapshot_max_gpus(s, s->jobs[d[i].job].part_mask));
				break;
			}
	}
	if (any)
		saturn_batch_groups_free(&g);
	xfree(jobs);
	xfree(mark);
	xfree(sig);
}

void saturn_measure_fini(void)
{
	for (int i = 0; i < nrecs; i++) {
		xfree(recs[i].tried);
		xfree(recs[i].items);
	}
	xfree(recs);
	nrecs = 0;
}
