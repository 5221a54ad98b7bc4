/* bpol_measure.c - the decisions about each batch's measurement job
 * (saturn-measure:NAME, bpol_measure.h): which predicted options to
 * measure before releasing a task onto them, the job's record, and its
 * polling; state and facts in, actions out (the cycle's measurement step,
 * cycle_measure.c, and plugin/sched/saturn_measure.c's polling carry them
 * out). Split from batch_policy.c, which keeps the action
 * list and the profiler job.
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

/* --- measurement ------------------------------------------------------------ */

void saturn_meas_rec_free(saturn_meas_rec_t *rec)
{
	if (!rec)
		return;
	free(rec->tried);
	free(rec->items);
	memset(rec, 0, sizeof(*rec));
}

int saturn_meas_rec_copy(saturn_meas_rec_t *dst, const saturn_meas_rec_t *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->job_id = src->job_id;
	dst->array_id = src->array_id;
	dst->rounds = src->rounds;
	if ((src->tried && !(dst->tried = strdup(src->tried))) ||
	    (src->items && !(dst->items = strdup(src->items)))) {
		saturn_meas_rec_free(dst);
		errno = ENOMEM;
		return -1;
	}
	return 0;
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
	if (!p || saturn_bpol_parse_u32(&p, &rec->job_id) < 0 || *p++ != ' ' ||
	    saturn_bpol_parse_u32(&p, &rec->array_id) < 0 || *p++ != ' ' ||
	    saturn_bpol_parse_u32(&p, &rounds) < 0 || rounds > 1000000 || *p++ != ' ')
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

/* Task j's profile task in pr and, in *op, the option decision d uses
 * (its identity: pr is the profile d->source names); NULL when there is
 * none (saturn_sched_decision_profile_option). */
static const saturn_profile_task_t *option_of(const saturn_profile_t *pr,
					      const saturn_snap_job_t *j,
					      const saturn_decision_t *d,
					      const saturn_profile_option_t **op)
{
	const saturn_profile_task_t *pt;

	*op = saturn_sched_decision_profile_option(pr, j->task_id >= 0 ? j->task_id : 0, d, &pt);
	return *op ? pt : NULL;
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

		/* the profile the option came from: a class's own (the build
		 * planned the class with it, build_classes.c), or the batch's */
		if (d[i].prof_opt < 0)
			continue; /* the user's request: nothing predicted */
		if (d[i].source[0]) {
			if (s->class_profile &&
			    (pt = option_of(s->class_profile(j->batch, j->uid, d[i].source,
							     s->class_profile_arg),
					    j, &d[i], &op)))
				w->klass[i] = d[i].source;
		} else {
			pt = option_of(lookup(j->batch, j->uid, arg), j, &d[i], &op);
		}
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
	add = saturn_bpol_vfmt(fmt, ap);
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

const char *saturn_bpol_measure_reason(const saturn_decision_t *d, uint32_t job_id, char *buf,
				       size_t len)
{
	char words[32], job[24] = "";

	if (job_id)
		snprintf(job, sizeof(job), " (job %u)", job_id);
	snprintf(buf, len, "saturn: measuring predicted %s on %d GPU%s%s%s", d->technique, d->gpus,
		 gpus_word(d->gpus), nodes_words(dec_nodes(d), words, sizeof(words)), job);
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
	uint32_t sub = saturn_bpol_submission_of(j);
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
				if (due && saturn_bpol_push(out, SATURN_BPOL_HOLD, tag, 0, 0, &k, 1,
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
				    saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
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
		    saturn_bpol_push(out, SATURN_BPOL_SUBMIT_MEASURE, tag, 0, gpus, listed, nlisted, "%s",
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
	saturn_bpol_truncate(out, n0);
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
		if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
				     "measuring predicted option(s) %s before relying on them (job %u, round %d)",
				     list, job_id, rec->rounds) < 0 ||
		    saturn_bpol_push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
			goto nomem;
		for (int x = 0; x < ntasks; x++) {
			const saturn_decision_t *dk = &d[tasks[x]];

			char reason[sizeof(dk->reason)];

			saturn_bpol_measure_reason(dk, job_id, reason, sizeof(reason));
			if (saturn_bpol_push(out, SATURN_BPOL_HOLD, tag, 0, 0, &tasks[x], 1, "%s",
					     reason) < 0)
				goto nomem;
		}
		free(rec->items);
		rec->items = list;
		list = NULL;
		rec->job_id = job_id;
	} else {
		if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_ERROR, 0, NULL, 0,
				     "no measurement job: relying on the predictions %s", list) < 0 ||
		    saturn_bpol_push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
			goto nomem;
		rec->job_id = 0;
	}
	free(tasks);
	free(list);
	return 0;
nomem:
	saturn_bpol_truncate(out, n0);
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
		if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
				     "measurement job %u ended (%s)", rec->job_id,
				     rec->items ? rec->items : "-") < 0)
			goto nomem;
	} else if (job->state == SATURN_COMPANION_PENDING &&
		   now - job->pending_since > SATURN_BPOL_MEASURE_WAIT_S) {
		if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_INFO, 0, NULL, 0,
				     "measurement job %u still pending after %ds: not waiting for it (the tasks run on the predictions; the job still updates the profile when it runs)",
				     rec->job_id, SATURN_BPOL_MEASURE_WAIT_S) < 0)
			goto nomem;
	} else {
		return 0;
	}
	if (saturn_bpol_push(out, SATURN_BPOL_SAVE, tag, 0, 0, NULL, 0, NULL) < 0)
		goto nomem;
	rec->job_id = 0;
	free(rec->items);
	rec->items = NULL;
	return 1;
nomem:
	saturn_bpol_truncate(out, n0);
	errno = ENOMEM;
	return -1;
}
