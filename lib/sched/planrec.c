/* planrec.c - the plan record of a released task in its job's AdminComment
 * or Comment (planrec.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planrec.h"

const char *saturn_planrec_field_name(int field)
{
	switch (field) {
	case SATURN_PLANREC_ADMIN_COMMENT:
		return "admin_comment";
	case SATURN_PLANREC_COMMENT:
		return "comment";
	default:
		return "none";
	}
}

static int known(double v)
{
	return isfinite(v) && v > 0;
}

size_t saturn_planrec_format(const saturn_planrec_t *r, char *buf, size_t len)
{
	size_t n = 0;
	int w;

#define PUT(...)                                                                                   \
	do {                                                                                       \
		if (n < len) {                                                                     \
			w = snprintf(buf + n, len - n, __VA_ARGS__);                               \
			n = w < 0 ? n : (size_t)w >= len - n ? len - 1 : n + (size_t)w;            \
		}                                                                                  \
	} while (0)
	if (!len)
		return 0;
	buf[0] = '\0';
	PUT(SATURN_PLANREC_PREFIX "batch=%s", r->batch ? r->batch : "?");
	if (r->task_id >= 0)
		PUT(" task=%d", r->task_id);
	PUT(" technique=%s gpus=%d node=%s plan=%s", r->technique ? r->technique : "?", r->gpus,
	    r->node ? r->node : "?", r->plan_id ? r->plan_id : "?");
	if (known(r->pred_spb))
		PUT(" pred_spb=%.4g", r->pred_spb);
	if (known(r->obs_spb))
		PUT(" obs_spb=%.4g", r->obs_spb);
#undef PUT
	return n;
}

const char *saturn_planrec_find(const char *text)
{
	const char *p;

	if (!text)
		return NULL;
	/* the last "; saturn: " segment (ours is always last), else the
	 * whole text when it is one record */
	p = NULL;
	for (const char *q = strstr(text, SATURN_PLANREC_SEP SATURN_PLANREC_PREFIX); q;
	     q = strstr(q + 1, SATURN_PLANREC_SEP SATURN_PLANREC_PREFIX))
		p = q;
	if (p)
		return p + strlen(SATURN_PLANREC_SEP);
	if (!strncmp(text, SATURN_PLANREC_PREFIX, strlen(SATURN_PLANREC_PREFIX)))
		return text;
	return NULL;
}

char *saturn_planrec_merge(const char *old, const char *record)
{
	const char *rec = saturn_planrec_find(old);
	size_t keep, rlen = strlen(record);
	char *out;

	if (!old)
		old = "";
	keep = rec ? (size_t)(rec - old) : strlen(old);
	/* drop the separator before the old record, and trailing blanks */
	if (rec && keep >= strlen(SATURN_PLANREC_SEP))
		keep -= strlen(SATURN_PLANREC_SEP);
	while (keep && (old[keep - 1] == ' ' || old[keep - 1] == '\n'))
		keep--;
	out = malloc(keep + strlen(SATURN_PLANREC_SEP) + rlen + 1);
	if (!out)
		return NULL;
	memcpy(out, old, keep);
	if (keep) {
		memcpy(out + keep, SATURN_PLANREC_SEP, strlen(SATURN_PLANREC_SEP));
		keep += strlen(SATURN_PLANREC_SEP);
	}
	memcpy(out + keep, record, rlen + 1);
	return out;
}

char *saturn_planrec_observe(const char *text, double obs_spb)
{
	const char *rec = saturn_planrec_find(text), *o;
	char val[64], *out;
	size_t head, vlen;

	if (!rec || !known(obs_spb))
		return NULL;
	snprintf(val, sizeof(val), " obs_spb=%.4g", obs_spb);
	vlen = strlen(val);
	o = strstr(rec, " obs_spb=");
	if (o) {
		/* obs_spb is the record's last field: replace up to the end */
		if (!strcmp(o, val))
			return NULL;
		head = (size_t)(o - text);
	} else {
		head = strlen(text);
	}
	out = malloc(head + vlen + 1);
	if (!out)
		return NULL;
	memcpy(out, text, head);
	memcpy(out + head, val, vlen + 1);
	return out;
}

double saturn_planrec_predicted_spb(const saturn_sched_build_t *b, const saturn_decision_t *d)
{
	const saturn_option_t *o = saturn_sched_decision_option(b, d);

	/* not from a profile (the user's request): planned from the time
	 * limit, no speed behind it */
	if (!o || !o->source || !(o->sec_per_batch > 0))
		return 0;
	return o->sec_per_batch;
}

/* v as a whole number in [lo, hi]. 0 or -1. */
static int parse_int(const char *v, long lo, long hi, int *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -1;
	*out = (int)x;
	return 0;
}

static int copy_word(char *dst, size_t len, const char *v)
{
	if (!v[0] || strlen(v) >= len)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

int saturn_planrec_parse(const char *text, saturn_planrec_read_t *r, saturn_error_t *err)
{
	const char *rec = saturn_planrec_find(text);
	char word[256];

	memset(r, 0, sizeof(*r));
	r->task_id = -1;
	if (!rec) {
		saturn_error_set(err, "no plan record");
		return -1;
	}
	rec += strlen(SATURN_PLANREC_PREFIX);
	while (*rec) {
		size_t n = strcspn(rec, " ");
		char *v;
		int bad = 0;

		if (n == 0) {
			rec++;
			continue;
		}
		if (n >= sizeof(word)) {
			saturn_error_set(err, "plan record: a word of %zu characters", n);
			return -1;
		}
		memcpy(word, rec, n);
		word[n] = '\0';
		rec += n;
		if (!(v = strchr(word, '=')))
			continue;
		*v++ = '\0';
		if (!strcmp(word, "batch"))
			bad = copy_word(r->batch, sizeof(r->batch), v);
		else if (!strcmp(word, "task"))
			bad = parse_int(v, 0, 2147483647L, &r->task_id);
		else if (!strcmp(word, "technique"))
			bad = copy_word(r->technique, sizeof(r->technique), v);
		else if (!strcmp(word, "gpus"))
			bad = parse_int(v, 1, 1 << 20, &r->gpus);
		else if (!strcmp(word, "node"))
			bad = copy_word(r->node, sizeof(r->node), v);
		else if (!strcmp(word, "plan"))
			bad = copy_word(r->plan_id, sizeof(r->plan_id), v);
		else if (!strcmp(word, "pred_spb"))
			bad = saturn_setting_num(v, 0, 1e12, &r->pred_spb);
		else if (!strcmp(word, "obs_spb"))
			bad = saturn_setting_num(v, 0, 1e12, &r->obs_spb);
		if (bad) {
			saturn_error_set(err, "plan record: %s=%s: not a valid value", word, v);
			return -1;
		}
	}
	if (!r->batch[0]) {
		saturn_error_set(err, "plan record without batch=");
		return -1;
	}
	return 0;
}
