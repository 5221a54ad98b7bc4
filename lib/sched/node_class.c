/* node_class.c - node classes from the nodes (GPU type, count,
 * interconnect, features) or the admin's saturn_node_classes rules; the
 * --constraint reader and the typed GRES string of a release
 * (node_class.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_class.h"

/* Whether the word of n bytes at w is one of the comma-separated items of
 * list. */
static int in_list(const char *w, size_t n, const char *list)
{
	const char *p = list;

	if (!list || n == 0)
		return 0;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);

		if (k == n && !strncmp(p, w, n))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* Append n bytes of s to buf (used bytes *at), characters outside the
 * class-name set becoming '_', cut at len - 1. */
static void put(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
	for (size_t i = 0; i < n && *at + 1 < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || c == '+'))
			c = c == ',' ? '+' : '_';
		buf[(*at)++] = c;
	}
	buf[*at] = '\0';
}

void saturn_node_class_derive(char *buf, size_t len, const char *gpu_types, int gpus,
			      const char *link, const char *features)
{
	char num[24];
	size_t at = 0;
	const char *p = features;

	if (!buf || len < 8) {
		if (buf && len)
			buf[0] = '\0';
		return;
	}
	buf[0] = '\0';
	if (gpu_types && gpu_types[0])
		put(buf, len, &at, gpu_types, strlen(gpu_types));
	else
		put(buf, len, &at, "gpu", 3);
	snprintf(num, sizeof(num), "x%d", gpus);
	put(buf, len, &at, num, strlen(num));
	if (link && link[0]) {
		put(buf, len, &at, "-", 1);
		put(buf, len, &at, link, strlen(link));
	}
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t k = e ? (size_t)(e - p) : strlen(p);

		if (k && !in_list(p, k, gpu_types) &&
		    !(link && strlen(link) == k && !strncmp(p, link, k))) {
			put(buf, len, &at, "+", 1);
			put(buf, len, &at, p, k);
		}
		if (!e)
			break;
		p = e + 1;
	}
}

/* --- the admin's rules ------------------------------------------------ */

struct saturn_class_rule {
	char name[SATURN_CLASS_NAME_MAX + 1];
	int nmatch;
	char match[SATURN_CLASS_MATCH_MAX][SATURN_CLASS_NAME_MAX + 1];
};

struct saturn_class_rules {
	int n;
	struct saturn_class_rule rule[SATURN_CLASS_RULES_MAX];
};

static int word_ok(const char *w, size_t n)
{
	if (n == 0 || n > SATURN_CLASS_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = w[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

int saturn_class_name_ok(const char *k)
{
	if (!k || !k[0] || k[0] == '.' || strlen(k) > SATURN_CLASS_NAME_MAX)
		return 0;
	for (const char *c = k; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '_' || *c == '-' || *c == '+'))
			return 0;
	return 1;
}

saturn_class_rules_t *saturn_class_rules_parse(const char *text, saturn_error_t *err)
{
	saturn_class_rules_t *r = calloc(1, sizeof(*r));
	const char *p = text;

	if (!r) {
		saturn_error_set(err, "saturn_node_classes: out of memory");
		return NULL;
	}
	while (p && *p) {
		const char *e = strchr(p, ';');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *colon = memchr(p, ':', n);
		struct saturn_class_rule *ru;
		const char *m;

		if (n == 0)
			goto next; /* "a:x;;b:y" or a trailing ';' */
		if (!colon) {
			saturn_error_set(err, "saturn_node_classes: '%.*s' has no ':MATCH' (want NAME:MATCH[+MATCH...][;...])",
					 (int)(n > 64 ? 64 : n), p);
			goto fail;
		}
		if (!word_ok(p, (size_t)(colon - p))) {
			saturn_error_set(err, "saturn_node_classes: class name '%.*s' must be 1 to %d characters from A-Z a-z 0-9 . _ -",
					 (int)((size_t)(colon - p) > 64 ? 64 : (size_t)(colon - p)), p,
					 SATURN_CLASS_NAME_MAX);
			goto fail;
		}
		if (r->n == SATURN_CLASS_RULES_MAX) {
			saturn_error_set(err, "saturn_node_classes: more than %d classes",
					 SATURN_CLASS_RULES_MAX);
			goto fail;
		}
		ru = &r->rule[r->n++];
		memcpy(ru->name, p, (size_t)(colon - p));
		m = colon + 1;
		while (m <= p + n) {
			const char *pe = memchr(m, '+', (size_t)(p + n - m));
			size_t k = pe ? (size_t)(pe - m) : (size_t)(p + n - m);

			if (!word_ok(m, k)) {
				saturn_error_set(err, "saturn_node_classes: class %s: match word '%.*s' must be 1 to %d characters from A-Z a-z 0-9 . _ -",
						 ru->name, (int)(k > 64 ? 64 : k), m,
						 SATURN_CLASS_NAME_MAX);
				goto fail;
			}
			if (ru->nmatch == SATURN_CLASS_MATCH_MAX) {
				saturn_error_set(err, "saturn_node_classes: class %s: more than %d match words",
						 ru->name, SATURN_CLASS_MATCH_MAX);
				goto fail;
			}
			memcpy(ru->match[ru->nmatch++], m, k);
			if (!pe)
				break;
			m = pe + 1;
		}
next:
		p = e ? e + 1 : NULL;
	}
	return r;
fail:
	free(r);
	return NULL;
}

void saturn_class_rules_free(saturn_class_rules_t *r)
{
	free(r);
}

int saturn_class_rules_count(const saturn_class_rules_t *r)
{
	return r ? r->n : 0;
}

int saturn_node_class(const saturn_class_rules_t *r, const char *node_name,
		      const char *gpu_types, int gpus, const char *link, const char *features,
		      char *buf, size_t len)
{
	for (int i = 0; r && i < r->n; i++)
		for (int k = 0; k < r->rule[i].nmatch; k++) {
			const char *w = r->rule[i].match[k];
			size_t n = strlen(w);

			if (in_list(w, n, gpu_types) || in_list(w, n, features) ||
			    (node_name && !strcmp(w, node_name))) {
				snprintf(buf, len, "%s", r->rule[i].name);
				return 1;
			}
		}
	/* features stay out of the name: a cluster's many feature sets would
	 * make as many classes (and profiler jobs); a --constraint splits a
	 * class by features in the problem only (sched_build.c) */
	saturn_node_class_derive(buf, len, gpu_types, gpus, link, NULL);
	return 0;
}

/* --- requests ---------------------------------------------------------- */

int saturn_constraint_match(const char *expr, const char *features)
{
	const char *p = expr;
	int any = 0, term = 1, nterm = 0;

	if (!expr || !expr[0])
		return 1;
	if (strpbrk(expr, "[]()*!:{}"))
		return -1; /* brackets, counts, change features: Slurm's alone */
	/* OR of AND-terms: any = some finished term held */
	for (;;) {
		size_t n = strcspn(p, "&,|");

		while (n && p[0] == ' ') {
			p++;
			n--;
		}
		while (n && p[n - 1] == ' ')
			n--;
		if (!word_ok(p, n))
			return -1;
		nterm++;
		if (!in_list(p, n, features))
			term = 0;
		p += strcspn(p, "&,|");
		if (*p == '|' || *p == '\0') {
			any |= term;
			term = 1;
		}
		if (*p == '\0')
			break;
		p++;
	}
	return nterm ? any : -1;
}

int saturn_gpu_type_match(const char *type, const char *gpu_types)
{
	if (!type || !type[0])
		return 1;
	return in_list(type, strlen(type), gpu_types);
}

int saturn_gres_string(char *buf, size_t len, const char *prefix, const char *type, int gpus)
{
	int n;

	if (!buf || len == 0)
		return -1;
	if (gpus < 1 || !prefix || (strcmp(prefix, "gres:") && strcmp(prefix, "gres/"))) {
		buf[0] = '\0';
		return -1;
	}
	if (type && type[0])
		n = snprintf(buf, len, "%sgpu:%s:%d", prefix, type, gpus);
	else
		n = snprintf(buf, len, "%sgpu:%d", prefix, gpus);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

const char *saturn_release_type(const char *req_type, const char *node_gpu_types)
{
	if (req_type && req_type[0])
		return req_type;
	if (!node_gpu_types || !node_gpu_types[0] || strchr(node_gpu_types, ','))
		return NULL;
	return node_gpu_types;
}
