/* state_view.c - per-user views of sched/saturn's state (state_view.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jsonutil.h"
#include "state_view.h"

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* the "uid" of an array element; -1 when it has none */
static long elem_uid(json_object *e)
{
	json_object *v;

	if (!json_object_is_type(e, json_type_object) ||
	    !json_object_object_get_ex(e, "uid", &v) || !json_object_is_type(v, json_type_int))
		return -1;
	return (long)json_object_get_int64(v);
}

/* arr's elements of uid, sharing them (reference counts); NULL on ENOMEM */
static json_object *filter(json_object *arr, long uid)
{
	json_object *out = json_object_new_array();
	size_t n = json_object_array_length(arr);

	for (size_t i = 0; out && i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (elem_uid(e) != uid)
			continue;
		if (json_object_array_add(out, json_object_get(e)) < 0) {
			json_object_put(e);
			json_object_put(out);
			return NULL;
		}
	}
	return out;
}

static char *view_of(json_object *root, long uid)
{
	json_object *v = json_object_new_object();
	char *txt = NULL;

	if (!v)
		return NULL;
	json_object_object_foreach(root, key, val) {
		json_object *nv;

		if ((!strcmp(key, "tasks") || !strcmp(key, "corrections")) &&
		    json_object_is_type(val, json_type_array))
			nv = filter(val, uid);
		else
			nv = json_object_get(val);
		if (!nv || json_object_object_add(v, key, nv) < 0) {
			json_object_put(nv);
			json_object_put(v);
			return NULL;
		}
	}
	txt = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY));
	json_object_put(v);
	return txt;
}

int saturn_state_views(const char *txt, size_t len, saturn_state_view_t **views, int *nviews,
		       saturn_error_t *err)
{
	json_object *root = sj_parse(txt, len, err), *arr;
	static const char *const keys[] = {"tasks", "corrections"};
	long *uids = NULL;
	size_t nuids = 0, cap = 0;
	int n = 0;

	*views = NULL;
	*nviews = 0;
	if (!root)
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		saturn_error_set(err, "state: not a JSON object");
		goto fail;
	}
	for (int k = 0; k < 2; k++) {
		if (!json_object_object_get_ex(root, keys[k], &arr) ||
		    !json_object_is_type(arr, json_type_array))
			continue;
		cap += json_object_array_length(arr);
	}
	if (cap && !(uids = calloc(cap, sizeof(*uids))))
		goto oom;
	for (int k = 0; k < 2; k++) {
		size_t m;

		if (!json_object_object_get_ex(root, keys[k], &arr) ||
		    !json_object_is_type(arr, json_type_array))
			continue;
		m = json_object_array_length(arr);
		for (size_t i = 0; i < m; i++) {
			long u = elem_uid(json_object_array_get_idx(arr, i));

			if (u >= 0)
				uids[nuids++] = u;
		}
	}
	qsort(uids, nuids, sizeof(*uids), cmp_long);
	if (nuids && !(*views = calloc(nuids, sizeof(**views))))
		goto oom;
	for (size_t i = 0; i < nuids; i++) {
		if (i && uids[i] == uids[i - 1])
			continue;
		(*views)[n].uid = uids[i];
		if (!((*views)[n].text = view_of(root, uids[i]))) {
			*nviews = n;
			goto oom;
		}
		n++;
	}
	*nviews = n;
	free(uids);
	json_object_put(root);
	return 0;
oom:
	saturn_error_set(err, "state views: out of memory");
fail:
	saturn_state_views_free(*views, *nviews);
	*views = NULL;
	*nviews = 0;
	free(uids);
	json_object_put(root);
	return -1;
}

void saturn_state_views_free(saturn_state_view_t *views, int nviews)
{
	for (int i = 0; views && i < nviews; i++)
		free(views[i].text);
	free(views);
}

unsigned long long saturn_state_view_hash(const char *txt, size_t len)
{
	unsigned long long h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)txt[i];
		h *= 1099511628211ULL;
	}
	return h;
}
