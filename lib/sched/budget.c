/* budget.c - bounded resources for sched/saturn (budget.h): per-uid
 * counters, the profile cache budget (per user and in all, the heaviest
 * user paying for the total), the batches that still have tasks, the
 * per-user limit on companion jobs, and the names of the files kept per
 * batch. Slurm-free; every failing function leaves its inputs unchanged.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpol_int.h" /* saturn_bpol_push */
#include "budget.h"
#include "jobreq.h" /* saturn_batch_name_check */

/* --- per-uid counters ------------------------------------------------- */

/* The index of uid in t, or -(insertion point) - 1. */
static int uid_find(const saturn_uidtab_t *t, long uid)
{
	int lo = 0, hi = t->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (t->e[mid].uid == uid)
			return mid;
		if (t->e[mid].uid < uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -lo - 1;
}

size_t saturn_uidtab_get(const saturn_uidtab_t *t, long uid)
{
	int i = uid_find(t, uid);

	return i >= 0 ? t->e[i].amount : 0;
}

int saturn_uidtab_add(saturn_uidtab_t *t, long uid, long long delta)
{
	int i = uid_find(t, uid);

	if (i < 0) {
		if (delta <= 0)
			return 0;
		if (t->n == t->cap) {
			int cap = t->cap ? 2 * t->cap : 8;
			struct saturn_uid_amount *ne = realloc(t->e, (size_t)cap * sizeof(*ne));

			if (!ne) {
				errno = ENOMEM;
				return -1;
			}
			t->e = ne;
			t->cap = cap;
		}
		i = -i - 1;
		memmove(&t->e[i + 1], &t->e[i], (size_t)(t->n - i) * sizeof(*t->e));
		t->n++;
		t->e[i].uid = uid;
		t->e[i].amount = 0;
	}
	if (delta < 0 && (unsigned long long)-delta >= t->e[i].amount)
		t->e[i].amount = 0;
	else
		t->e[i].amount += (size_t)delta;
	return 0;
}

void saturn_uidtab_clear(saturn_uidtab_t *t)
{
	t->n = 0;
}

void saturn_uidtab_free(saturn_uidtab_t *t)
{
	if (!t)
		return;
	free(t->e);
	memset(t, 0, sizeof(*t));
}

/* --- profile cache budget --------------------------------------------- */

void saturn_budget_init(saturn_budget_t *b, size_t user_cap, size_t total_cap)
{
	memset(b, 0, sizeof(*b));
	saturn_budget_set_caps(b, user_cap, total_cap);
}

void saturn_budget_set_caps(saturn_budget_t *b, size_t user_cap, size_t total_cap)
{
	b->user_cap = user_cap;
	b->total_cap = total_cap;
}

void saturn_budget_free(saturn_budget_t *b)
{
	if (!b)
		return;
	saturn_uidtab_free(&b->used);
	b->total = 0;
}

static double mib(size_t n)
{
	return (double)n / (1024.0 * 1024.0);
}

saturn_budget_verdict_t saturn_budget_check(const saturn_budget_t *b, long uid, size_t bytes,
					    long *victim, size_t *need, char *why, size_t len)
{
	size_t mine = saturn_uidtab_get(&b->used, uid), after = mine + bytes, heavy = 0;
	long who = -1;

	if (len)
		why[0] = '\0';
	if (b->user_cap && (bytes > b->user_cap || after > b->user_cap)) {
		if (len)
			snprintf(why, len,
				 "%.1f MiB of this user's profiles cached + %.1f MiB > the per-user budget of %.0f MiB (saturn_profile_cache_mb)",
				 mib(mine), mib(bytes), mib(b->user_cap));
		return SATURN_BUDGET_USER;
	}
	if (!b->total_cap || b->total + bytes <= b->total_cap)
		return SATURN_BUDGET_OK;
	/* the total is full: the user holding the most pays, as long as it
	 * still holds more than uid would */
	for (int i = 0; i < b->used.n; i++)
		if (b->used.e[i].uid != uid && b->used.e[i].amount > heavy) {
			heavy = b->used.e[i].amount;
			who = b->used.e[i].uid;
		}
	if (who >= 0 && heavy > after && bytes <= b->total_cap) {
		if (victim)
			*victim = who;
		if (need)
			*need = b->total + bytes - b->total_cap;
		return SATURN_BUDGET_EVICT;
	}
	if (len)
		snprintf(why, len,
			 "%.1f MiB of all users' profiles cached + %.1f MiB > the total budget of %.0f MiB (saturn_profile_cache_total_mb), and no user holds more than this one",
			 mib(b->total), mib(bytes), mib(b->total_cap));
	return SATURN_BUDGET_TOTAL;
}

int saturn_budget_charge(saturn_budget_t *b, long uid, size_t bytes)
{
	if (saturn_uidtab_add(&b->used, uid, (long long)bytes) < 0)
		return -1;
	b->total += bytes;
	return 0;
}

void saturn_budget_uncharge(saturn_budget_t *b, long uid, size_t bytes)
{
	size_t had = saturn_uidtab_get(&b->used, uid);

	if (bytes > had)
		bytes = had;
	saturn_uidtab_add(&b->used, uid, -(long long)bytes);
	b->total = b->total > bytes ? b->total - bytes : 0;
}

/* malloc's bookkeeping per block and its rounding: 16 bytes more, up to
 * the next 16 (glibc on 64 bits). */
static size_t block(size_t n)
{
	return n ? ((n + 8 + 15) / 16) * 16 + 16 : 0;
}

static size_t str_bytes(const char *s)
{
	return s ? block(strlen(s) + 1) : 0;
}

size_t saturn_profile_mem_bytes(const saturn_profile_t *pr)
{
	size_t n;

	if (!pr)
		return 0;
	n = block(sizeof(*pr)) + str_bytes(pr->batch);
	n += block((size_t)pr->nhw * sizeof(*pr->hw));
	for (int h = 0; h < pr->nhw; h++) {
		const saturn_profile_hw_t *hw = &pr->hw[h];

		n += str_bytes(hw->klass) + str_bytes(hw->node) + str_bytes(hw->gpu_model) +
		     str_bytes(hw->interconnect);
		if (hw->link_gbs && hw->gpus > 0)
			n += block((size_t)hw->gpus * (size_t)hw->gpus * sizeof(double));
		n += block((size_t)hw->nnccl * sizeof(*hw->nccl));
	}
	n += block((size_t)pr->ntasks * sizeof(*pr->tasks));
	for (int t = 0; t < pr->ntasks; t++) {
		const saturn_profile_task_t *pt = &pr->tasks[t];

		n += str_bytes(pt->signature) + str_bytes(pt->klass);
		n += block((size_t)pt->ntask_ids * sizeof(int));
		n += block((size_t)pt->noptions * sizeof(*pt->options));
		for (int o = 0; o < pt->noptions; o++) {
			const saturn_profile_option_t *op = &pt->options[o];

			n += str_bytes(op->technique) + str_bytes(op->reason) + str_bytes(op->params);
		}
	}
	return n;
}

/* --- batches with tasks ----------------------------------------------- */

static int live_cmp(const void *x, const void *y)
{
	const struct saturn_live_batch *a = x, *b = y;

	if (a->uid != b->uid)
		return a->uid < b->uid ? -1 : 1;
	return strcmp(a->batch, b->batch);
}

int saturn_live_from_snapshot(const saturn_snapshot_t *s, saturn_live_t *l)
{
	int w = 0;

	memset(l, 0, sizeof(*l));
	if (s->njobs <= 0)
		return 0;
	if (!(l->b = malloc((size_t)s->njobs * sizeof(*l->b)))) {
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < s->njobs; i++) {
		l->b[i].uid = s->jobs[i].uid;
		l->b[i].batch = s->jobs[i].batch;
	}
	qsort(l->b, (size_t)s->njobs, sizeof(*l->b), live_cmp);
	for (int i = 0; i < s->njobs; i++)
		if (!w || live_cmp(&l->b[w - 1], &l->b[i]))
			l->b[w++] = l->b[i];
	l->n = w;
	return 0;
}

int saturn_live_has(const saturn_live_t *l, long uid, const char *key)
{
	char name[SATURN_BATCH_NAME_MAX + 2];
	const char *at = strchr(key, '@');
	struct saturn_live_batch k = {uid, key};
	size_t len = at ? (size_t)(at - key) : strlen(key);

	if (l->n == 0 || len >= sizeof(name))
		return 0;
	if (at) {
		memcpy(name, key, len);
		name[len] = '\0';
		k.batch = name;
	}
	return bsearch(&k, l->b, (size_t)l->n, sizeof(*l->b), live_cmp) != NULL;
}

void saturn_live_free(saturn_live_t *l)
{
	if (!l)
		return;
	free(l->b);
	memset(l, 0, sizeof(*l));
}

/* --- companion jobs per user ------------------------------------------ */

int saturn_budget_companion_wait(saturn_bpol_actions_t *out, int i, int active, int limit)
{
	char reason[160], line[200];
	saturn_bpol_kind_t kind;
	int n0 = out->n, tag, profiler;
	char *text;

	if (i < 0 || i >= out->n ||
	    (out->a[i].kind != SATURN_BPOL_SUBMIT_PROFILER &&
	     out->a[i].kind != SATURN_BPOL_SUBMIT_MEASURE)) {
		errno = EINVAL;
		return -1;
	}
	if (limit <= 0 || active < limit)
		return 0;
	kind = out->a[i].kind;
	profiler = kind == SATURN_BPOL_SUBMIT_PROFILER;
	tag = out->a[i].tag;
	snprintf(reason, sizeof(reason),
		 "saturn: waiting: %d profiler or measurement job(s) of this user already (saturn_companion_jobs=%d)",
		 active, limit);
	snprintf(line, sizeof(line),
		 "no %s job now: the user has %d profiler or measurement job(s) pending or running (saturn_companion_jobs=%d); its tasks wait",
		 profiler ? "profiler" : "measurement", active, limit);
	if (!(text = strdup(reason)))
		goto nomem;
	/* out->a may move: copy what the appended actions need first */
	if (profiler && out->a[i].ntasks &&
	    saturn_bpol_push(out, SATURN_BPOL_DROP, tag, 0, 0, out->a[i].tasks, out->a[i].ntasks, NULL) < 0)
		goto nomem;
	if (saturn_bpol_push(out, SATURN_BPOL_LOG, tag, SATURN_BPOL_DEBUG, 0, NULL, 0, "%s", line) < 0)
		goto nomem;
	free(out->a[i].text);
	out->a[i].text = text;
	out->a[i].kind = SATURN_BPOL_HOLD;
	out->a[i].gpus = 0;
	out->a[i].nodes = 0;
	return 1;
nomem:
	free(text);
	while (out->n > n0) {
		out->n--;
		free(out->a[out->n].tasks);
		free(out->a[out->n].text);
	}
	errno = ENOMEM;
	return -1;
}

/* --- names of the files kept per batch -------------------------------- */

/* Whether key[0 .. len) is NAME or NAME@CLASS: a valid batch name
 * (saturn_batch_name_check), and a class name as a class's own profile
 * has it (saturn_class_name_ok). */
static int key_ok(const char *key, size_t len)
{
	char buf[SATURN_BATCH_NAME_MAX + SATURN_CLASS_NAME_MAX + 2], *at;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, key, len);
	buf[len] = '\0';
	if ((at = strchr(buf, '@'))) {
		*at = '\0';
		if (!saturn_class_name_ok(at + 1))
			return 0;
	}
	return saturn_batch_name_check(buf, NULL, 0) == 0;
}

/* "UID-" at *p: *uid set, *p moved past the '-'. -1 when not. */
static int uid_prefix(const char **p, long *uid)
{
	const char *q = *p;
	long v = 0;

	if (*q < '0' || *q > '9')
		return -1;
	for (; *q >= '0' && *q <= '9'; q++) {
		if (v > 100000000000L)
			return -1;
		v = v * 10 + (*q - '0');
	}
	if (*q != '-')
		return -1;
	*uid = v;
	*p = q + 1;
	return 0;
}

static int set_key(const char *k, size_t len, char *key, size_t klen, const char *kind,
		   char *kbuf, size_t klen2)
{
	if (!key_ok(k, len) || len >= klen || klen2 < 16) {
		errno = EINVAL;
		return -1;
	}
	memcpy(key, k, len);
	key[len] = '\0';
	snprintf(kbuf, klen2, "%s", kind);
	return 0;
}

int saturn_budget_record_name(const char *name, long *uid, char *key, size_t klen, char *kind,
			      size_t klen2)
{
	const char *p, *kd;
	size_t len = strlen(name);

	if (!strncmp(name, "profiler-", 9)) {
		kd = "profiler";
		p = name + 9;
	} else if (!strncmp(name, "measure-", 8)) {
		kd = "measure";
		p = name + 8;
	} else {
		errno = EINVAL;
		return -1;
	}
	if (len < 4 || strcmp(name + len - 4, ".job") || uid_prefix(&p, uid) < 0 ||
	    p >= name + len - 4) {
		errno = EINVAL;
		return -1;
	}
	return set_key(p, (size_t)(name + len - 4 - p), key, klen, kd, kind, klen2);
}

int saturn_budget_script_name(const char *name, long *uid, char *key, size_t klen, char *kind,
			      size_t klen2)
{
	const char *p = name, *end, *kd;
	size_t len = strlen(name);

	if (len > 7 && !strcmp(name + len - 7, ".script"))
		end = name + len - 7;
	else {
		errno = EINVAL;
		return -1;
	}
	if (end - name > 8 && !strncmp(end - 8, ".profile", 8)) {
		kd = "profiler";
		end -= 8;
	} else if (end - name > 8 && !strncmp(end - 8, ".measure", 8)) {
		kd = "measure";
		end -= 8;
	} else {
		errno = EINVAL;
		return -1;
	}
	if (uid_prefix(&p, uid) < 0 || p >= end) {
		errno = EINVAL;
		return -1;
	}
	return set_key(p, (size_t)(end - p), key, klen, kd, kind, klen2);
}
