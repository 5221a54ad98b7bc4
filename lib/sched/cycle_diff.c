/* cycle_diff.c - compare a recorded cycle's outputs or state with a
 * replay's (cycle_record.h): a structural walk of two JSON values that
 * stops at the first difference and names its path
 * ("out.decisions[2].release: 1 recorded, 0 replayed").
 *
 * Structural, not textual: a record written by another version of the
 * writer may order its keys or print its numbers differently. "solve_s"
 * keys are skipped at any depth: the planner's time is the machine's.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cycle_json.h"

#define PATH_MAX_LEN 512

typedef struct walk {
	char path[PATH_MAX_LEN];
	char *buf;
	size_t len;
} walk_t;

static int ignored(const char *key)
{
	return !strcmp(key, "solve_s");
}

/* v as short JSON text ("absent" for a missing value). */
static void show(json_object *v, int present, char *out, size_t sz)
{
	const char *s;

	if (!present) {
		snprintf(out, sz, "absent");
		return;
	}
	s = json_object_to_json_string_ext(v,
					   JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		s = "?";
	if (strlen(s) < sz)
		snprintf(out, sz, "%s", s);
	else
		snprintf(out, sz, "%.*s...", (int)(sz > 4 ? sz - 4 : 0), s);
}

static int differ(walk_t *w, json_object *a, int pa, json_object *b, int pb)
{
	char ta[96], tb[96];

	show(a, pa, ta, sizeof(ta));
	show(b, pb, tb, sizeof(tb));
	snprintf(w->buf, w->len, "%s: %s recorded, %s replayed", w->path, ta, tb);
	return 1;
}

static int is_num(json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

static int same_scalar(json_object *a, json_object *b)
{
	if (!a || !b)
		return !a && !b;
	if (is_num(a) && is_num(b)) {
		if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
			return json_object_get_int64(a) == json_object_get_int64(b);
		return json_object_get_double(a) == json_object_get_double(b);
	}
	if (json_object_get_type(a) != json_object_get_type(b))
		return 0;
	switch (json_object_get_type(a)) {
	case json_type_boolean:
		return json_object_get_boolean(a) == json_object_get_boolean(b);
	case json_type_string:
		return json_object_get_string_len(a) == json_object_get_string_len(b) &&
		       !memcmp(json_object_get_string(a), json_object_get_string(b),
			       (size_t)json_object_get_string_len(a));
	default:
		return 0;
	}
}

static int walk(walk_t *w, json_object *a, json_object *b);

/* Recurse into path + suffix, then cut the path back. */
static int step(walk_t *w, const char *suffix, json_object *a, json_object *b)
{
	size_t at = strlen(w->path);
	int rc;

	snprintf(w->path + at, sizeof(w->path) - at, "%s", suffix);
	rc = walk(w, a, b);
	w->path[at] = '\0';
	return rc;
}

static int walk_object(walk_t *w, json_object *a, json_object *b)
{
	char suffix[PATH_MAX_LEN / 2];
	size_t at = strlen(w->path);
	json_object *v;
	int rc;

	json_object_object_foreach(a, ka, va)
	{
		if (ignored(ka))
			continue;
		snprintf(suffix, sizeof(suffix), ".%s", ka);
		if (!json_object_object_get_ex(b, ka, &v)) {
			snprintf(w->path + at, sizeof(w->path) - at, "%s", suffix);
			return differ(w, va, 1, NULL, 0);
		}
		if ((rc = step(w, suffix, va, v)) != 0)
			return rc;
	}
	json_object_object_foreach(b, kb, vb)
	{
		if (ignored(kb) || json_object_object_get_ex(a, kb, &v))
			continue;
		snprintf(w->path + at, sizeof(w->path) - at, ".%s", kb);
		return differ(w, NULL, 0, vb, 1);
	}
	return 0;
}

static int walk_array(walk_t *w, json_object *a, json_object *b)
{
	size_t na = json_object_array_length(a), nb = json_object_array_length(b);
	char suffix[32];
	int rc;

	for (size_t i = 0; i < na && i < nb; i++) {
		snprintf(suffix, sizeof(suffix), "[%zu]", i);
		if ((rc = step(w, suffix, json_object_array_get_idx(a, i),
			       json_object_array_get_idx(b, i))) != 0)
			return rc;
	}
	if (na != nb) {
		snprintf(w->buf, w->len, "%s: %zu entries recorded, %zu replayed", w->path, na, nb);
		return 1;
	}
	return 0;
}

static int walk(walk_t *w, json_object *a, json_object *b)
{
	if (a && b && json_object_is_type(a, json_type_object) &&
	    json_object_is_type(b, json_type_object))
		return walk_object(w, a, b);
	if (a && b && json_object_is_type(a, json_type_array) &&
	    json_object_is_type(b, json_type_array))
		return walk_array(w, a, b);
	if ((a && (json_object_is_type(a, json_type_object) ||
		   json_object_is_type(a, json_type_array))) ||
	    (b && (json_object_is_type(b, json_type_object) ||
		   json_object_is_type(b, json_type_array))) ||
	    !same_scalar(a, b))
		return differ(w, a, 1, b, 1);
	return 0;
}

static int diff_texts(const char *root, const char *recorded, const char *replayed, char *buf,
		      size_t len)
{
	saturn_error_t e;
	json_object *a, *b;
	walk_t w;
	int rc;

	w.buf = len ? buf : (char[1]){0};
	w.len = len ? len : 1;
	w.buf[0] = '\0';
	snprintf(w.path, sizeof(w.path), "%s", root);
	if (!recorded || !(a = sj_parse(recorded, strlen(recorded), &e))) {
		snprintf(w.buf, w.len, "%s: the recorded text is not JSON", root);
		return -1;
	}
	if (!replayed || !(b = sj_parse(replayed, strlen(replayed), &e))) {
		json_object_put(a);
		snprintf(w.buf, w.len, "%s: the replayed text is not JSON", root);
		return -1;
	}
	rc = walk(&w, a, b);
	json_object_put(a);
	json_object_put(b);
	return rc;
}

int saturn_cycle_out_diff(const char *recorded_out_json, const char *replayed_out_json, char *buf,
			  size_t len)
{
	return diff_texts("out", recorded_out_json, replayed_out_json, buf, len);
}

int saturn_cycle_state_diff(const char *recorded_state_json, const char *replayed_state_json,
			    char *buf, size_t len)
{
	return diff_texts("state_out", recorded_state_json, replayed_state_json, buf, len);
}
