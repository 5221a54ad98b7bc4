/* batch_policy.c - the decisions about each batch's companion jobs
 * (profiler, measurement): state and facts in, actions out. The state
 * machine is described in batch_policy.h; sched/saturn gathers the facts
 * and carries out the actions (plugin/sched/saturn_profiles.c,
 * saturn_measure.c).
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

/* Drop the actions appended after the first n0 (a failed call). */
static void truncate_to(saturn_bpol_actions_t *l, int n0)
{
	while (l->n > n0) {
		l->n--;
		free(l->a[l->n].tasks);
		free(l->a[l->n].text);
	}
}

static char *vfmt(const char *fmt, va_list ap)
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

/* Append an action (tasks copied; text formatted, NULL fmt = none). */
static int push(saturn_bpol_actions_t *l, saturn_bpol_kind_t kind, int tag,
		saturn_bpol_level_t level, int gpus, const int *tasks, int ntasks,
		const char *fmt, ...) __attribute__((format(printf, 8, 9)));

static int push(saturn_bpol_actions_t *l, saturn_bpol_kind_t kind, int tag,
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
		a->text = vfmt(fmt, ap);
		va_end(ap);
		if (!a->text) {
			free(a->tasks);
			return -1;
		}
	}
	l->n++;
	return 0;
}

static uint32_t submission_of(const saturn_snap_job_t *j)
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
		if (submission_of(j) == r.array_id)
			same = 1;
	}
	/* a batch name used again by a new submission is profiled again */
	if (r.array_id && !same) {
		if ((r.job_id ? push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
				     "profiler job %u was for job %u, not this submission: profiling anew",
				     r.job_id, r.array_id) :
				push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
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
			if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
				 "profiler job %u ended without a usable profile: falling back to the users' requests",
				 r.job_id) < 0 ||
			    push(out, SATURN_BPOL_FALL_BACK, tag, 0, 0, NULL, 0, NULL) < 0 ||
			    push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
				goto nomem;
			r.fell_back = 1;
			state = SATURN_BPOL_FELL_BACK;
			goto done;
		}
		if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_DEBUG, 0, NULL, 0,
			 "waiting for profiler job %u", r.job_id) < 0 ||
		    (nheld && (push(out, SATURN_BPOL_HOLD, tag, 0, 0, held, nheld,
				    "saturn: profiling (job %u)", r.job_id) < 0 ||
			       push(out, SATURN_BPOL_DROP, tag, 0, 0, held, nheld, NULL) < 0)))
			goto nomem;
		state = SATURN_BPOL_PROFILING;
		goto done;
	}
	/* no job yet, every task held: one profiler job for all the batch's
	 * tasks (only this user's: the group is one (uid, name)), on the GPUs
	 * of the largest node the batch's partitions offer */
	r.array_id = submission_of(j0);
	maxg = saturn_snapshot_max_gpus(s, j0->part_mask);
	if (maxg <= 0) {
		if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
			 "no GPU node in the batch's partitions for a profiler job") < 0 ||
		    push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
			 "no profiler job: falling back to the users' requests") < 0 ||
		    push(out, SATURN_BPOL_FALL_BACK, tag, 0, 0, NULL, 0, NULL) < 0)
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
	if (push(out, SATURN_BPOL_SUBMIT_PROFILER, tag, 0, maxg, held, nheld, "%s", ids) < 0)
		goto nomem;
	state = SATURN_BPOL_SUBMITTING;
done:
	*rec = r;
	free(held);
	free(ids);
	return state;
nomem:
	truncate_to(out, n0);
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
	if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_DEBUG, 0, NULL, 0,
		 "waiting for profiler job %u of class %s", jobs[k].job_id, classes[k]) < 0 ||
	    (nheld && (push(out, SATURN_BPOL_HOLD, tag, 0, 0, held, nheld,
			    "saturn: profiling class %.64s (job %u)", classes[k], jobs[k].job_id) < 0 ||
		       push(out, SATURN_BPOL_DROP, tag, 0, 0, held, nheld, NULL) < 0))) {
		truncate_to(out, n0);
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
		if (push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0 ||
		    push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_DEBUG, 0, NULL, 0,
			 "waiting for profiler job %u", job_id) < 0 ||
		    (ntasks && (push(out, SATURN_BPOL_HOLD, tag, 0, 0, tasks, ntasks,
				     "saturn: profiling (job %u)", job_id) < 0 ||
				push(out, SATURN_BPOL_DROP, tag, 0, 0, tasks, ntasks, NULL) < 0)))
			goto nomem;
		rec->job_id = job_id;
		rec->fell_back = 0;
		rc = SATURN_BPOL_PROFILING;
	} else {
		if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
			 "no profiler job: falling back to the users' requests") < 0 ||
		    push(out, SATURN_BPOL_FALL_BACK, tag, 0, 0, NULL, 0, NULL) < 0)
			goto nomem;
		rec->job_id = 0;
		rec->fell_back = 1;
		rc = SATURN_BPOL_FELL_BACK;
	}
	free(tasks);
	return rc;
nomem:
	truncate_to(out, n0);
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

/* A decimal uint32 at *p (no sign), p moved past it. -1 when none. */
static int parse_u32(const char **p, uint32_t *v)
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
	if (!p || parse_u32(&p, &rec->job_id) < 0 || *p++ != ' ' ||
	    parse_u32(&p, &rec->array_id) < 0)
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

/* --- measurement ------------------------------------------------------------ */

void saturn_meas_rec_free(saturn_meas_rec_t *rec)
{
	if (!rec)
		return;
	free(rec->tried);
	free(rec->items);
	memset(rec, 0, sizeof(*rec));
}

char *saturn_meas_rec_format(const saturn_meas_rec_t *rec)
{
	const char *items = rec->items && *rec->items ? rec->items : "-";
	const char *tried = rec->tried ? rec->tried : "";
	size_t len = strlen(items) + strlen(tried) + 3 * 12 + 8;
	char *p = malloc(len);

	if (p)
		snprintf(p, len, "%u %u %d %s\n%s", rec->job_id, rec->array_id, rec->rounds, items,
			 tried);
	return p;
}

int saturn_meas_rec_parse(const char *text, saturn_meas_rec_t *rec)
{
	const char *p = text, *nl, *sp;
	uint32_t rounds;

	memset(rec, 0, sizeof(*rec));
	if (!p || parse_u32(&p, &rec->job_id) < 0 || *p++ != ' ' ||
	    parse_u32(&p, &rec->array_id) < 0 || *p++ != ' ' || parse_u32(&p, &rounds) < 0 ||
	    rounds > 1000000 || *p++ != ' ')
		goto bad;
	rec->rounds = (int)rounds;
	nl = strchr(p, '\n');
	sp = p + strcspn(p, " \t\n");
	if (sp == p || (nl ? sp != nl : *sp))
		goto bad; /* ITEMS: one word, the rest of the line */
	if ((size_t)(sp - p) != 1 || *p != '-') {
		if (!(rec->items = strndup(p, (size_t)(sp - p))))
			goto nomem;
	}
	if (nl && nl[1] && !(rec->tried = strdup(nl + 1)))
		goto nomem;
	return 0;
bad:
	saturn_meas_rec_free(rec);
	errno = EINVAL;
	return -1;
nomem:
	saturn_meas_rec_free(rec);
	errno = ENOMEM;
	return -1;
}

int saturn_bpol_technique_ok(const char *t)
{
	if (!t || !*t || strlen(t) > SATURN_TECHNIQUE_NAME_MAX)
		return 0;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && !strchr("_.+-", *t))
			return 0;
	return 1;
}

/* marks of a decision on a predicted option: due now (release) or later */
enum { DUE = 1, LATER, SEEN, LISTED };

/* Task j's profile task in pr and, in *op, its option decision d uses
 * (NULL when pr has none: the task, or the option). */
static const saturn_profile_task_t *option_of(const saturn_profile_t *pr,
					      const saturn_snap_job_t *j,
					      const saturn_decision_t *d,
					      const saturn_profile_option_t **op)
{
	const saturn_profile_task_t *pt;

	*op = NULL;
	if (!pr || !(pt = saturn_profile_find(pr, j->task_id >= 0 ? j->task_id : 0)))
		return NULL;
	for (int o = 0; o < pt->noptions; o++) {
		const saturn_profile_option_t *x = &pt->options[o];

		if (x->gpus == d->gpus && x->technique && !strcmp(x->technique, d->technique) &&
		    saturn_profile_option_nodes(x) == (d->nnodes > 1 ? d->nnodes : 1)) {
			*op = x;
			return pt;
		}
	}
	return NULL;
}

/* Node i's class: its klass, or derived as saturn_snapshot_classify would. */
static const char *node_klass(const saturn_snapshot_t *s, int i, char *buf, size_t len)
{
	const saturn_snap_node_t *n = &s->nodes[i];

	if (n->klass[0])
		return n->klass;
	saturn_node_class(s->class_rules, n->name, n->gpu_types, n->gpus, n->link, n->features,
			  buf, len);
	return buf;
}

const char *saturn_bpol_class_gpu_type(const saturn_snapshot_t *s, const char *klass)
{
	const char *type = NULL;

	if (!klass || !klass[0])
		return NULL;
	for (int i = 0; i < s->nnodes; i++) {
		char buf[SATURN_CLASS_NAME_MAX + 1];
		const char *t = s->nodes[i].gpu_types;

		if (strcmp(node_klass(s, i, buf, sizeof(buf)), klass))
			continue;
		if (!t[0] || strchr(t, ',') || (type && strcmp(type, t)))
			return NULL;
		type = t;
	}
	return type;
}

/* The most GPUs of a node of class klass (NULL = any) in partitions mask. */
static int class_max_gpus(const saturn_snapshot_t *s, uint64_t mask, const char *klass)
{
	int maxg = 0;

	if (!klass)
		return saturn_snapshot_max_gpus(s, mask);
	for (int i = 0; i < s->nnodes; i++) {
		char buf[SATURN_CLASS_NAME_MAX + 1];

		if (mask && !(s->nodes[i].part_mask & mask))
			continue;
		if (!strcmp(node_klass(s, i, buf, sizeof(buf)), klass) && s->nodes[i].gpus > maxg)
			maxg = s->nodes[i].gpus;
	}
	return maxg;
}

static int same_class(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

void saturn_bpol_measure_free(saturn_bpol_measure_t *w)
{
	if (!w)
		return;
	free(w->mark);
	free(w->sig);
	saturn_batch_groups_free(&w->groups);
	free(w->group);
	free(w->due);
	free(w->klass);
	free(w->bclass);
	memset(w, 0, sizeof(*w));
}

int saturn_bpol_measure_prepare(const saturn_snapshot_t *s, const saturn_decision_t *d, int nd,
				saturn_profile_lookup_fn lookup, void *arg,
				saturn_bpol_measure_t *w)
{
	int any = 0, *jobs = NULL;

	memset(w, 0, sizeof(*w));
	if (nd <= 0)
		return 0;
	w->nd = nd;
	if (!(w->mark = calloc((size_t)nd, 1)) || !(w->sig = calloc((size_t)nd, sizeof(*w->sig))) ||
	    !(w->klass = calloc((size_t)nd, sizeof(*w->klass))))
		goto nomem;
	for (int i = 0; i < nd; i++) {
		const saturn_snap_job_t *j = &s->jobs[d[i].job];
		const saturn_profile_option_t *op = NULL;
		const saturn_profile_task_t *pt = NULL;

		/* the option of the class's own profile, when the build
		 * planned the class with one (sched_build.c) */
		if (d[i].klass[0] && s->class_profile &&
		    (pt = option_of(s->class_profile(j->batch, j->uid, d[i].klass,
						     s->class_profile_arg), j, &d[i], &op)))
			w->klass[i] = d[i].klass;
		else
			pt = option_of(lookup(j->batch, j->uid, arg), j, &d[i], &op);
		if (pt && op->status == SATURN_OPT_PREDICTED) {
			w->sig[i] = pt->signature;
			w->mark[i] = d[i].release ? DUE : LATER;
			any |= d[i].release;
		}
	}
	if (!any)
		return 0;
	/* the decisions grouped by batch (uid, name) once: O(nd log nd) */
	if (!(jobs = malloc((size_t)nd * sizeof(*jobs))))
		goto nomem;
	for (int i = 0; i < nd; i++)
		jobs[i] = d[i].job;
	if (saturn_batch_groups(s, jobs, nd, &w->groups) < 0)
		goto nomem;
	free(jobs);
	jobs = NULL;
	/* at most one entry per (batch, class): nd of them */
	if (!(w->group = malloc((size_t)nd * sizeof(int))) ||
	    !(w->due = malloc((size_t)nd * sizeof(int))) ||
	    !(w->bclass = calloc((size_t)nd, sizeof(*w->bclass))))
		goto nomem;
	for (int g = 0; g < w->groups.ngroups; g++) {
		int b0 = w->nbatches;

		for (int x = w->groups.first[g]; x < w->groups.first[g + 1]; x++) {
			int k = w->groups.member[x], seen = 0;

			if (w->mark[k] != DUE)
				continue;
			for (int b = b0; b < w->nbatches && !seen; b++)
				seen = same_class(w->bclass[b], w->klass[k]);
			if (seen)
				continue;
			w->group[w->nbatches] = g;
			w->bclass[w->nbatches] = w->klass[k];
			w->due[w->nbatches++] = k;
		}
	}
	return 0;
nomem:
	free(jobs);
	saturn_bpol_measure_free(w);
	errno = ENOMEM;
	return -1;
}

/* Whether "\n" key (without its newlines) is one of the lines of tried. */
static int was_tried(const char *tried, const char *key)
{
	size_t l = strlen(key) - 2;

	key++;
	for (const char *p = tried; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n == l && !strncmp(p, key, l))
			return 1;
		p += n + (e ? 1 : 0);
	}
	return 0;
}

/* A signature goes into a record line: no control character. */
static int signature_ok(const char *sig)
{
	for (; *sig; sig++)
		if (iscntrl((unsigned char)*sig))
			return 0;
	return 1;
}

/* Append a string to a growing malloc'd string; -1 on ENOMEM (*dst kept). */
static int cat(char **dst, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int cat(char **dst, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *add, *p;
	size_t l;

	va_start(ap, fmt);
	add = vfmt(fmt, ap);
	va_end(ap);
	if (!add)
		return -1;
	l = strlen(add);
	if (!(p = realloc(*dst, *len + l + 1))) {
		free(add);
		return -1;
	}
	memcpy(p + *len, add, l + 1);
	*dst = p;
	*len += l;
	free(add);
	return 0;
}

static const char *gpus_word(int g)
{
	return g == 1 ? "" : "s";
}

/* Multi-node measurement (#12): a decision's node count, 1 for one node. */
static int dec_nodes(const saturn_decision_t *d)
{
	return d->nnodes > 1 ? d->nnodes : 1;
}

/* "xN" after a GPU count in items and tried keys for N > 1 nodes, "" for
 * one node (the one-node forms are those from before). */
static const char *nodes_suffix(int n, char *buf, size_t len)
{
	if (n > 1)
		snprintf(buf, len, "x%d", n);
	else
		buf[0] = '\0';
	return buf;
}

/* " x N nodes" in a hold reason for N > 1, else "". */
static const char *nodes_words(int n, char *buf, size_t len)
{
	if (n > 1)
		snprintf(buf, len, " x %d nodes", n);
	else
		buf[0] = '\0';
	return buf;
}

/* How many nodes of the partitions in part_mask (0 = any) have at least
 * gpus GPUs: a k-node measurement needs k of them. */
static int nodes_with_gpus(const saturn_snapshot_t *s, uint64_t part_mask, int gpus)
{
	int n = 0;

	for (int i = 0; i < s->nnodes; i++)
		if ((!part_mask || (part_mask & s->nodes[i].part_mask)) && s->nodes[i].gpus >= gpus)
			n++;
	return n;
}

/* One job measures every predicted option the plan uses for the batch
 * (due ones first; later ones too, since a wrong prediction moves the
 * whole plan, but only those needing no more GPUs than the due ones, which
 * are free now); only the due tasks are held for it. */
int saturn_bpol_measure_batch(const saturn_snapshot_t *s, const saturn_decision_t *d,
			      saturn_bpol_measure_t *w, int b, saturn_meas_rec_t *rec, int tag,
			      saturn_bpol_actions_t *out)
{
	const saturn_batch_groups_t *g = &w->groups;
	const int *mb = &g->member[g->first[w->group[b]]];
	int nmb = g->first[w->group[b] + 1] - g->first[w->group[b]];
	const saturn_snap_job_t *j = &s->jobs[d[w->due[b]].job];
	uint32_t sub = submission_of(j);
	int reset = rec->array_id && rec->array_id != sub;
	uint32_t job_id = reset ? 0 : rec->job_id;
	int rounds = reset ? 0 : rec->rounds;
	const char *tried = reset ? NULL : rec->tried;
	int maxg = class_max_gpus(s, j->part_mask, w->bclass[b]);
	int n0 = out->n, nitems = 0, gpus = 0, due_max = 0, nlisted = 0, *listed = NULL;
	int nodes = 1, due_nodes = 1;
	char sfx[16], words[32];
	char *list = NULL, *round = NULL, *key = NULL, *newtried = NULL, *mark = w->mark;
	size_t list_len = 0, round_len = 0;
	char *mark0 = NULL;

	/* the marks change as the batch is worked through; kept to undo */
	if (!(mark0 = malloc((size_t)w->nd)) ||
	    !(listed = malloc((size_t)nmb * sizeof(int))) || cat(&round, &round_len, "\n") < 0)
		goto nomem;
	memcpy(mark0, mark, (size_t)w->nd);
	for (int pass = DUE; pass <= LATER; pass++) {
		for (int x = 0; x < nmb; x++) {
			int k = mb[x];
			const saturn_snap_job_t *jk = &s->jobs[d[k].job];
			int due = pass == DUE, is_tried, nk = dec_nodes(&d[k]);

			if (mark[k] != pass || !same_class(w->klass[k], w->bclass[b]))
				continue;
			if (due && d[k].gpus > due_max)
				due_max = d[k].gpus;
			if (due && nk > due_nodes)
				due_nodes = nk;
			/* a later task needing more GPUs (or nodes) than the
			 * due ones free now would keep the job (and them)
			 * waiting */
			if (!due && (d[k].gpus > due_max || nk > due_nodes))
				continue;
			mark[k] = SEEN;
			if (job_id) {
				/* wait for the running job */
				if (due && push(out, SATURN_BPOL_HOLD, tag, 0, 0, &k, 1,
						"saturn: measuring predicted %s on %d GPU%s%s (job %u)",
						d[k].technique, d[k].gpus, gpus_word(d[k].gpus),
						nodes_words(nk, words, sizeof(words)), job_id) < 0)
					goto nomem;
				continue;
			}
			free(key);
			key = NULL;
			{
				size_t kl = 0;

				if (cat(&key, &kl, "\n%s:%d%s@%s\n", d[k].technique, d[k].gpus,
					nodes_suffix(nk, sfx, sizeof(sfx)), w->sig[k]) < 0)
					goto nomem;
			}
			is_tried = was_tried(tried, key);
			if (strstr(round, key)) {
				if (due) /* another task of the same signature and option */
					mark[k] = LISTED;
			} else if (is_tried || rounds >= SATURN_BPOL_MEASURE_ROUNDS ||
				   !saturn_bpol_technique_ok(d[k].technique) || d[k].gpus > maxg ||
				   (nk > 1 && nodes_with_gpus(s, j->part_mask, d[k].gpus) < nk) ||
				   nitems >= SATURN_BPOL_MEASURE_ITEMS || !signature_ok(w->sig[k])) {
				if (due &&
				    push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
					 "task %d relies on the predicted %s on %d GPU(s)%s (%s)",
					 jk->task_id, d[k].technique, d[k].gpus,
					 nodes_words(nk, words, sizeof(words)),
					 is_tried ? "measured once already; the measurement did not replace it" :
						    "not measurable now") < 0)
					goto nomem;
			} else {
				if (cat(&round, &round_len, "%s", key + 1) < 0 ||
				    cat(&list, &list_len, "%s%d:%s:%d%s", list ? "," : "",
					jk->task_id < 0 ? 0 : jk->task_id, d[k].technique,
					d[k].gpus, nodes_suffix(nk, sfx, sizeof(sfx))) < 0)
					goto nomem;
				nitems++;
				if (d[k].gpus > gpus)
					gpus = d[k].gpus;
				if (nk > nodes)
					nodes = nk;
				if (due)
					mark[k] = LISTED;
			}
		}
	}
	for (int x = 0; x < nmb; x++)
		if (mark[mb[x]] == LISTED && same_class(w->klass[mb[x]], w->bclass[b]))
			listed[nlisted++] = mb[x];
	if (list) {
		size_t tl = 0;

		/* tried once, whatever happens */
		if ((tried && cat(&newtried, &tl, "%s", tried) < 0) ||
		    cat(&newtried, &tl, "%s", round + 1) < 0 ||
		    push(out, SATURN_BPOL_SUBMIT_MEASURE, tag, 0, gpus, listed, nlisted, "%s",
			 list) < 0)
			goto nomem;
		out->a[out->n - 1].nodes = nodes;
	}
	/* all appended: now the record */
	if (reset) {
		rec->job_id = rec->array_id = 0;
		rec->rounds = 0;
		free(rec->items);
		rec->items = NULL;
		free(rec->tried);
		rec->tried = NULL;
	}
	if (list) {
		rec->array_id = sub;
		rec->rounds++;
		free(rec->tried);
		rec->tried = newtried;
	}
	free(mark0);
	free(listed);
	free(list);
	free(round);
	free(key);
	return list ? 1 : 0;
nomem:
	if (mark0)
		memcpy(mark, mark0, (size_t)w->nd);
	truncate_to(out, n0);
	free(mark0);
	free(listed);
	free(list);
	free(round);
	free(key);
	free(newtried);
	errno = ENOMEM;
	return -1;
}

int saturn_bpol_measure_submitted(const saturn_decision_t *d, saturn_bpol_actions_t *out, int i,
				  uint32_t job_id, saturn_meas_rec_t *rec)
{
	int n0 = out->n, tag, ntasks, *tasks = NULL;
	char *list = NULL;

	if (i < 0 || i >= out->n || out->a[i].kind != SATURN_BPOL_SUBMIT_MEASURE) {
		errno = EINVAL;
		return -1;
	}
	tag = out->a[i].tag;
	ntasks = out->a[i].ntasks;
	/* out->a moves when it grows: copy first */
	if ((ntasks && !(tasks = malloc((size_t)ntasks * sizeof(int)))) ||
	    !(list = strdup(out->a[i].text ? out->a[i].text : "")))
		goto nomem;
	if (ntasks)
		memcpy(tasks, out->a[i].tasks, (size_t)ntasks * sizeof(int));
	if (job_id) {
		if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
			 "measuring predicted option(s) %s before relying on them (job %u, round %d)",
			 list, job_id, rec->rounds) < 0 ||
		    push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
			goto nomem;
		for (int x = 0; x < ntasks; x++) {
			const saturn_decision_t *dk = &d[tasks[x]];
			char words[32];

			if (push(out, SATURN_BPOL_HOLD, tag, 0, 0, &tasks[x], 1,
				 "saturn: measuring predicted %s on %d GPU%s%s (job %u)", dk->technique,
				 dk->gpus, gpus_word(dk->gpus),
				 nodes_words(dec_nodes(dk), words, sizeof(words)), job_id) < 0)
				goto nomem;
		}
		free(rec->items);
		rec->items = list;
		list = NULL;
		rec->job_id = job_id;
	} else {
		if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
			 "no measurement job: relying on the predictions %s", list) < 0 ||
		    push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
			goto nomem;
		rec->job_id = 0;
	}
	free(tasks);
	free(list);
	return 0;
nomem:
	truncate_to(out, n0);
	free(tasks);
	free(list);
	errno = ENOMEM;
	return -1;
}

int saturn_bpol_measure_poll(saturn_meas_rec_t *rec, const saturn_companion_t *job, double now,
			     int tag, saturn_bpol_actions_t *out)
{
	int n0 = out->n;

	if (!rec->job_id || !job || job->job_id != rec->job_id)
		return 0;
	if (job->state == SATURN_COMPANION_ENDED) {
		if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
			 "measurement job %u ended (%s)", rec->job_id,
			 rec->items ? rec->items : "-") < 0)
			goto nomem;
	} else if (job->state == SATURN_COMPANION_PENDING &&
		   now - job->pending_since > SATURN_BPOL_MEASURE_WAIT_S) {
		if (push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
			 "measurement job %u still pending after %ds: not waiting for it (the tasks run on the predictions; the job still updates the profile when it runs)",
			 rec->job_id, SATURN_BPOL_MEASURE_WAIT_S) < 0)
			goto nomem;
	} else {
		return 0;
	}
	if (push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
		goto nomem;
	rec->job_id = 0;
	free(rec->items);
	rec->items = NULL;
	return 1;
nomem:
	truncate_to(out, n0);
	errno = ENOMEM;
	return -1;
}
