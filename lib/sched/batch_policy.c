/* batch_policy.c - the decisions about each batch's companion jobs:
 * the action list (bpol_int.h) and the profiler job; state and facts in,
 * actions out (the measurement job: bpol_measure.c). The state machine is
 * described in batch_policy.h; sched/saturn gathers the facts and carries
 * out the actions (plugin/sched/saturn_profiles.c, saturn_measure.c).
 *
 * Every function that fails (ENOMEM) leaves the record and the action list
 * as they were: actions are appended first, the record is changed last.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_policy.h"
#include "bpol_int.h"

/* --- actions ------------------------------------------------------------ */

void saturn_bpol_actions_free(saturn_bpol_actions_t *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++) {
		free(l->a[i].tasks);
		free(l->a[i].text);
	}
	free(l->a);
	memset(l, 0, sizeof(*l));
}

void saturn_bpol_truncate(saturn_bpol_actions_t *l, int n0)
{
	while (l->n > n0) {
		l->n--;
		free(l->a[l->n].tasks);
		free(l->a[l->n].text);
	}
}

char *saturn_bpol_vfmt(const char *fmt, va_list ap)
{
	va_list aq;
	int len;
	char *p;

	va_copy(aq, ap);
	len = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (len < 0 || !(p = malloc((size_t)len + 1)))
		return NULL;
	vsnprintf(p, (size_t)len + 1, fmt, ap);
	return p;
}

int saturn_bpol_push(saturn_bpol_actions_t *l, saturn_bpol_kind_t kind, int tag,
		     saturn_bpol_level_t level, int gpus, const int *tasks, int ntasks,
		     const char *fmt, ...)
{
	saturn_bpol_action_t *a;

	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 8;
		saturn_bpol_action_t *na = realloc(l->a, (size_t)cap * sizeof(*na));

		if (!na)
			return -1;
		l->a = na;
		l->cap = cap;
	}
	a = &l->a[l->n];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->tag = tag;
	a->level = level;
	a->gpus = gpus;
	if (ntasks > 0) {
		if (!(a->tasks = malloc((size_t)ntasks * sizeof(int))))
			return -1;
		memcpy(a->tasks, tasks, (size_t)ntasks * sizeof(int));
		a->ntasks = ntasks;
	}
	if (fmt) {
		va_list ap;

		va_start(ap, fmt);
		a->text = saturn_bpol_vfmt(fmt, ap);
		va_end(ap);
		if (!a->text) {
			free(a->tasks);
			return -1;
		}
	}
	l->n++;
	return 0;
}

uint32_t saturn_bpol_submission_of(const saturn_snap_job_t *j)
{
	return j->array_job_id ? j->array_job_id : j->job_id;
}

/* --- profiler ------------------------------------------------------------ */

int saturn_bpol_profiler(const saturn_snapshot_t *s, const int *m, int n, int profile_exists,
			 saturn_prof_rec_t *rec, const saturn_companion_t *job, int tag,
			 saturn_bpol_actions_t *out)
{
	const saturn_snap_job_t *j0 = &s->jobs[m[0]];
	saturn_prof_rec_t r;
	int n0 = out->n, has_running = 0, same = 0, nheld = 0, *held = NULL, state, maxg;
	char *ids = NULL;
	size_t idlen = 0;

	if (profile_exists)
		return SATURN_BPOL_PROFILED; /* planned from the file */
	r = *rec;
	for (int k = 0; k < n; k++) {
		const saturn_snap_job_t *j = &s->jobs[m[k]];

		if (j->state != SATURN_SNAP_HELD)
			has_running = 1;
		if (saturn_bpol_submission_of(j) == r.array_id)
			same = 1;
	}
	/* a batch name used again by a new submission is profiled again */
	if (r.array_id && !same) {
		if ((r.job_id ? saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
						 "profiler job %u was for job %u, not this submission: profiling anew",
						 r.job_id, r.array_id) :
				saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
						 "no profiler job for job %u, not this submission: profiling anew",
						 r.array_id)) < 0)
			goto nomem;
		memset(&r, 0, sizeof(r));
	}
	if (r.fell_back) {
		state = SATURN_BPOL_FELL_BACK;
		goto done;
	}
	if (has_running && !r.job_id) {
		state = SATURN_BPOL_UNPROFILED;
		goto done;
	}
	if (!(held = malloc((size_t)n * sizeof(int))))
		goto nomem;
	for (int k = 0; k < n; k++)
		if (s->jobs[m[k]].state == SATURN_SNAP_HELD)
			held[nheld++] = m[k];
	if (r.job_id) {
		if (job && job->job_id == r.job_id && job->state == SATURN_COMPANION_ENDED) {
			if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
					     "profiler job %u ended without a usable profile: falling back to the users' requests",
					     r.job_id) < 0 ||
			    saturn_bpol_push(out, SATURN_BPOL_FALL_BACK, tag, 0, 0, NULL, 0, NULL) < 0 ||
			    saturn_bpol_push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
				goto nomem;
			r.fell_back = 1;
			state = SATURN_BPOL_FELL_BACK;
			goto done;
		}
		if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_DEBUG, 0, NULL, 0,
				     "waiting for profiler job %u", r.job_id) < 0 ||
		    (nheld && (saturn_bpol_push(out, SATURN_BPOL_HOLD, tag, 0, 0, held, nheld,
						"saturn: profiling (job %u)", r.job_id) < 0 ||
			       saturn_bpol_push(out, SATURN_BPOL_DROP, tag, 0, 0, held, nheld, NULL) < 0)))
			goto nomem;
		state = SATURN_BPOL_PROFILING;
		goto done;
	}
	/* no job yet, every task held: one profiler job for all the batch's
	 * tasks (only this user's: the group is one (uid, name)), on the GPUs
	 * of the largest node the batch's partitions offer */
	r.array_id = saturn_bpol_submission_of(j0);
	maxg = saturn_snapshot_max_gpus(s, j0->part_mask);
	if (maxg <= 0) {
		if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
				     "no GPU node in the batch's partitions for a profiler job") < 0 ||
		    saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
				     "no profiler job: falling back to the users' requests") < 0 ||
		    saturn_bpol_push(out, SATURN_BPOL_FALL_BACK, tag, 0, 0, NULL, 0, NULL) < 0)
			goto nomem;
		r.fell_back = 1;
		state = SATURN_BPOL_FELL_BACK;
		goto done;
	}
	if (!(ids = malloc((size_t)n * 12 + 1)))
		goto nomem;
	ids[0] = '\0';
	for (int k = 0; k < n; k++) {
		int t = s->jobs[m[k]].task_id;

		idlen += (size_t)snprintf(ids + idlen, 13, "%s%d", k ? "," : "", t < 0 ? 0 : t);
	}
	if (saturn_bpol_push(out, SATURN_BPOL_SUBMIT_PROFILER, tag, 0, maxg, held, nheld, "%s", ids) < 0)
		goto nomem;
	state = SATURN_BPOL_SUBMITTING;
done:
	*rec = r;
	free(held);
	free(ids);
	return state;
nomem:
	saturn_bpol_truncate(out, n0);
	free(held);
	free(ids);
	errno = ENOMEM;
	return -1;
}

int saturn_bpol_class_wait(const saturn_snapshot_t *s, const int *m, int n,
			   const saturn_companion_t *jobs, const char *const *classes, int njobs,
			   int tag, saturn_bpol_actions_t *out)
{
	int n0 = out->n, nheld = 0, *held, k;

	for (k = 0; k < njobs; k++)
		if (jobs[k].state != SATURN_COMPANION_ENDED)
			break;
	if (k == njobs)
		return 0;
	if (!(held = malloc((size_t)(n ? n : 1) * sizeof(int)))) {
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (s->jobs[m[i]].state == SATURN_SNAP_HELD)
			held[nheld++] = m[i];
	if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_DEBUG, 0, NULL, 0,
			     "waiting for profiler job %u of class %s", jobs[k].job_id, classes[k]) < 0 ||
	    (nheld && (saturn_bpol_push(out, SATURN_BPOL_HOLD, tag, 0, 0, held, nheld,
					"saturn: profiling class %.64s (job %u)", classes[k], jobs[k].job_id) < 0 ||
		       saturn_bpol_push(out, SATURN_BPOL_DROP, tag, 0, 0, held, nheld, NULL) < 0))) {
		saturn_bpol_truncate(out, n0);
		free(held);
		errno = ENOMEM;
		return -1;
	}
	free(held);
	return 1;
}

int saturn_bpol_class_job_name(const char *name, char *batch, size_t blen, char *klass,
			       size_t klen)
{
	static const char prefix[] = "saturn-profile:";
	const char *b, *at;
	size_t bl, kl;

	if (blen)
		batch[0] = '\0';
	if (klen)
		klass[0] = '\0';
	if (!name || strncmp(name, prefix, sizeof(prefix) - 1))
		goto bad;
	b = name + sizeof(prefix) - 1;
	if (!(at = strchr(b, '@')))
		goto bad;
	bl = (size_t)(at - b);
	kl = strlen(at + 1);
	if (bl == 0 || bl >= blen || memchr(b, '/', bl) || kl == 0 || kl >= klen ||
	    kl > SATURN_CLASS_NAME_MAX || at[1] == '.')
		goto bad;
	for (const char *c = at + 1; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("._-+", *c))
			goto bad;
	memcpy(batch, b, bl);
	batch[bl] = '\0';
	memcpy(klass, at + 1, kl + 1);
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int saturn_bpol_profiler_submitted(saturn_bpol_actions_t *out, int i, uint32_t job_id,
				   saturn_prof_rec_t *rec)
{
	int n0 = out->n, tag, ntasks, *tasks = NULL, rc;

	if (i < 0 || i >= out->n || out->a[i].kind != SATURN_BPOL_SUBMIT_PROFILER) {
		errno = EINVAL;
		return -1;
	}
	tag = out->a[i].tag;
	ntasks = out->a[i].ntasks;
	/* out->a moves when it grows: copy the tasks first */
	if (ntasks && !(tasks = malloc((size_t)ntasks * sizeof(int))))
		goto nomem;
	if (ntasks)
		memcpy(tasks, out->a[i].tasks, (size_t)ntasks * sizeof(int));
	if (job_id) {
		if (saturn_bpol_push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0 ||
		    saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_DEBUG, 0, NULL, 0,
				     "waiting for profiler job %u", job_id) < 0 ||
		    (ntasks && (saturn_bpol_push(out, SATURN_BPOL_HOLD, tag, 0, 0, tasks, ntasks,
						 "saturn: profiling (job %u)", job_id) < 0 ||
				saturn_bpol_push(out, SATURN_BPOL_DROP, tag, 0, 0, tasks, ntasks, NULL) < 0)))
			goto nomem;
		rec->job_id = job_id;
		rec->fell_back = 0;
		rc = SATURN_BPOL_PROFILING;
	} else {
		if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
				     "no profiler job: falling back to the users' requests") < 0 ||
		    saturn_bpol_push(out, SATURN_BPOL_FALL_BACK, tag, 0, 0, NULL, 0, NULL) < 0)
			goto nomem;
		rec->job_id = 0;
		rec->fell_back = 1;
		rc = SATURN_BPOL_FELL_BACK;
	}
	free(tasks);
	return rc;
nomem:
	saturn_bpol_truncate(out, n0);
	free(tasks);
	errno = ENOMEM;
	return -1;
}

const char *saturn_bpol_profiler_note(const saturn_prof_rec_t *rec, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (rec && rec->fell_back && len)
		snprintf(buf, len, "saturn: profiler job %u failed, users' requests; ", rec->job_id);
	return buf;
}

const char *saturn_prof_rec_format(const saturn_prof_rec_t *rec, char *buf, size_t len)
{
	snprintf(buf, len, "%u %u%s\n", rec->job_id, rec->array_id,
		 rec->fell_back ? " fallback" : "");
	return buf;
}

int saturn_bpol_parse_u32(const char **p, uint32_t *v)
{
	unsigned long long x = 0;
	const char *q = *p;

	if (!isdigit((unsigned char)*q))
		return -1;
	for (; isdigit((unsigned char)*q); q++) {
		x = x * 10 + (unsigned)(*q - '0');
		if (x > UINT32_MAX)
			return -1;
	}
	*v = (uint32_t)x;
	*p = q;
	return 0;
}

int saturn_prof_rec_parse(const char *text, saturn_prof_rec_t *rec)
{
	const char *p = text;

	memset(rec, 0, sizeof(*rec));
	if (!p || saturn_bpol_parse_u32(&p, &rec->job_id) < 0 || *p++ != ' ' ||
	    saturn_bpol_parse_u32(&p, &rec->array_id) < 0)
		goto bad;
	if (!strncmp(p, " fallback", 9)) {
		rec->fell_back = 1;
		p += 9;
	}
	if (*p && strcmp(p, "\n"))
		goto bad;
	return 0;
bad:
	memset(rec, 0, sizeof(*rec));
	errno = EINVAL;
	return -1;
}
