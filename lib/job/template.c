/* template.c - technique parameters (resolution against their declared
 * ranges, search candidates) and launch templates (placeholder expansion,
 * argv construction); the registry itself is in technique.c.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "technique.h"

/* --- parameters ---------------------------------------------------------- */

static long pmax(const saturn_tparam_t *p, int gpus)
{
	return p->max_is_gpus ? gpus : p->max;
}

static long pdef(const saturn_tparam_t *p, int gpus)
{
	return p->def_is_gpus ? gpus : p->def;
}

char *saturn_technique_params(const saturn_technique_t *t, int gpus,
			      const char *json, saturn_error_t *err)
{
	json_object *in = NULL, *out = NULL;
	char *res = NULL;

	if (json && *json) {
		enum json_tokener_error jerr;

		in = json_tokener_parse_verbose(json, &jerr);
		if (!in || !json_object_is_type(in, json_type_object)) {
			saturn_error_set(err, "params: not a JSON object%s%s",
					 in ? "" : ": ",
					 in ? ""
					    : json_tokener_error_desc(jerr));
			goto out;
		}
		json_object_object_foreach(in, key, val)
		{
			int known = 0;

			(void)val;
			for (int i = 0; i < t->nparams; i++)
				known |= strcmp(t->params[i].name, key) == 0;
			if (!known) {
				saturn_error_set(err,
						 "params.%s: technique %s has "
						 "no such parameter",
						 key, t->name);
				goto out;
			}
		}
	}
	if (!(out = json_object_new_object()))
		goto nomem;
	for (int i = 0; i < t->nparams; i++) {
		const saturn_tparam_t *p = &t->params[i];
		json_object *v = NULL;
		long val = pdef(p, gpus);

		if (in && json_object_object_get_ex(in, p->name, &v)) {
			if (p->type == SATURN_TPARAM_BOOL &&
			    json_object_is_type(v, json_type_boolean)) {
				val = json_object_get_boolean(v);
			} else if (json_object_is_type(v, json_type_int)) {
				val = (long)json_object_get_int64(v);
			} else {
				saturn_error_set(err, "params.%s: want %s",
						 p->name,
						 p->type == SATURN_TPARAM_BOOL
						     ? "true, false, 0 or 1"
						     : "an integer");
				goto out;
			}
		}
		if (val < p->min || val > pmax(p, gpus)) {
			saturn_error_set(err,
					 "params.%s: %ld is out of range [%ld, "
					 "%ld] on %d GPUs",
					 p->name, val, p->min, pmax(p, gpus),
					 gpus);
			goto out;
		}
		if (json_object_object_add(out, p->name,
					   json_object_new_int64(val)) < 0)
			goto nomem;
	}
	res =
	    strdup(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	if (!res)
		goto nomem;
	goto out;
nomem:
	saturn_error_set(err, "params: out of memory");
out:
	json_object_put(in);
	json_object_put(out);
	return res;
}

long saturn_technique_param(const char *json, const char *name, long def)
{
	json_object *o, *v;
	long r = def;

	if (!json || !(o = json_tokener_parse(json)))
		return def;
	if (json_object_object_get_ex(o, name, &v)) {
		if (json_object_is_type(v, json_type_int))
			r = (long)json_object_get_int64(v);
		else if (json_object_is_type(v, json_type_boolean))
			r = json_object_get_boolean(v);
	}
	json_object_put(o);
	return r;
}

/* Built-in candidates: the defaults, then memory-saving variants. */
static const char *const fsdp_candidates[] = {
    "{}",
    "{\"activation_checkpointing\":1}",
    "{\"activation_checkpointing\":1,\"cpu_offload\":1}",
    NULL,
};

int saturn_technique_candidate(const saturn_technique_t *t, int gpus, int i,
			       const char *signature, char *buf, size_t len,
			       saturn_error_t *err)
{
	const char *c = NULL;
	char *r;

	if (t->plugin && t->plugin->search) {
		saturn_technique_ctx_v1_t ctx = {signature ? signature : "",
						 gpus, "{}", 0, 0};
		char ebuf[256] = "";
		int rc;

		if (i > 0)
			return 1;
		rc = t->plugin->search(&ctx, buf, len, ebuf, sizeof(ebuf));
		if (rc < 0)
			return saturn_error_set(err, "technique %s: search: %s",
						t->name, ebuf);
		if (rc > 0)
			return 1;
		buf[len - 1] = '\0';
		r = saturn_technique_params(t, gpus, buf, err);
		if (!r)
			return saturn_error_prefix(
			    err, "technique %s: search result", t->name);
		free(r);
		return 0;
	}
	if (strcmp(t->name, "fsdp") == 0 && t->nparams == 2) {
		if (i >= 3)
			return 1;
		c = fsdp_candidates[i];
	} else if (i == 0) {
		c = "{}";
	} else {
		return 1;
	}
	r = saturn_technique_params(t, gpus, c, err);
	if (!r)
		return -1;
	if (strlen(r) >= len) {
		free(r);
		return saturn_error_set(
		    err, "technique %s: parameters too long", t->name);
	}
	strcpy(buf, r);
	free(r);
	return 0;
}

/* --- templates ----------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
};

static int sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *ns = realloc(b->s, cap);

		if (!ns)
			return -1;
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

char *saturn_template_expand(const char *tmpl, const saturn_kv_t *vars,
			     int nvars, saturn_error_t *err)
{
	struct sbuf b = {0};
	const char *p = tmpl;

	if (sb_add(&b, "", 0) < 0)
		goto nomem;
	while (*p) {
		if (p[0] == '{' && p[1] == '{') {
			if (sb_add(&b, "{", 1) < 0)
				goto nomem;
			p += 2;
		} else if (p[0] == '}' && p[1] == '}') {
			if (sb_add(&b, "}", 1) < 0)
				goto nomem;
			p += 2;
		} else if (*p == '}') {
			saturn_error_set(err,
					 "unmatched '}' at offset %td (write "
					 "}} for a brace)",
					 p - tmpl);
			goto fail;
		} else if (*p == '{') {
			const char *end = strchr(p + 1, '}');
			size_t n;
			int found = 0;

			if (!end) {
				saturn_error_set(
				    err,
				    "unterminated placeholder at offset %td",
				    p - tmpl);
				goto fail;
			}
			n = end - p - 1;
			for (const char *q = p + 1; q < end; q++)
				if (!(isalnum((unsigned char)*q) ||
				      *q == '_')) {
					saturn_error_set(err,
							 "bad placeholder "
							 "{%.*s} at offset %td",
							 (int)n, p + 1,
							 p - tmpl);
					goto fail;
				}
			for (int i = 0; i < nvars && !found; i++) {
				if (strlen(vars[i].key) == n &&
				    strncmp(vars[i].key, p + 1, n) == 0) {
					if (sb_add(&b, vars[i].value,
						   strlen(vars[i].value)) < 0)
						goto nomem;
					found = 1;
				}
			}
			if (!found) {
				saturn_error_set(
				    err,
				    "unknown placeholder {%.*s} at offset %td",
				    (int)n, p + 1, p - tmpl);
				goto fail;
			}
			p = end + 1;
		} else {
			size_t n = strcspn(p, "{}");

			if (sb_add(&b, p, n) < 0)
				goto nomem;
			p += n;
		}
	}
	return b.s;
nomem:
	saturn_error_set(err, "out of memory");
fail:
	free(b.s);
	return NULL;
}

void saturn_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

static int argv_push(char ***argv, int *n, char *s)
{
	char **na = realloc(*argv, (*n + 2) * sizeof(*na));

	if (!na) {
		free(s);
		return -1;
	}
	*argv = na;
	na[(*n)++] = s;
	na[*n] = NULL;
	return 0;
}

int saturn_template_argv(const char *tmpl, const saturn_kv_t *vars, int nvars,
			 char *const *cmd, int ncmd, char ***argvp,
			 saturn_error_t *err)
{
	char **argv = NULL;
	int n = 0;
	const char *p = tmpl;
	struct sbuf w = {0};

	*argvp = NULL;
	if (!(argv = calloc(1, sizeof(*argv))))
		return saturn_error_set(err, "out of memory");
	while (*p) {
		int quoted = 0;
		char *exp;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		w.len = 0;
		if (sb_add(&w, "", 0) < 0)
			goto nomem;
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == '\'' || *p == '"') {
				char q = *p;
				const char *end = strchr(p + 1, q);

				if (!end) {
					saturn_error_set(
					    err,
					    "launch template: unterminated %c "
					    "quote at offset %td",
					    q, p - tmpl);
					goto fail;
				}
				if (sb_add(&w, p + 1, end - p - 1) < 0)
					goto nomem;
				quoted = 1;
				p = end + 1;
			} else {
				if (sb_add(&w, p, 1) < 0)
					goto nomem;
				p++;
			}
		}
		if (!quoted && strcmp(w.s, "{command}") == 0) {
			for (int i = 0; i < ncmd; i++) {
				char *a = strdup(cmd[i]);

				if (!a || argv_push(&argv, &n, a) < 0)
					goto nomem;
			}
			continue;
		}
		if (strstr(w.s, "{command}")) {
			saturn_error_set(err, "launch template: {command} must "
					      "be a word of its own");
			goto fail;
		}
		exp = saturn_template_expand(w.s, vars, nvars, err);
		if (!exp) {
			saturn_error_prefix(err, "launch template");
			goto fail;
		}
		if (argv_push(&argv, &n, exp) < 0)
			goto nomem;
	}
	if (n == 0) {
		saturn_error_set(err, "launch template: empty command");
		goto fail;
	}
	free(w.s);
	*argvp = argv;
	return n;
nomem:
	saturn_error_set(err, "out of memory");
fail:
	free(w.s);
	saturn_argv_free(argv);
	return -1;
}

int saturn_technique_vars(const saturn_technique_t *t, int gpus, int nodes,
			  const char *params, const char *batch,
			  const char *plan_id, saturn_kv_t *vars, int max,
			  char *store, size_t storelen)
{
	int n = 0;
	size_t used = 0;

#define PUT(k, fmt, ...)                                                       \
	do {                                                                   \
		int l_;                                                        \
		if (n >= max)                                                  \
			return -1;                                             \
		l_ =                                                           \
		    snprintf(store + used, storelen - used, fmt, __VA_ARGS__); \
		if (l_ < 0 || (size_t)l_ >= storelen - used)                   \
			return -1;                                             \
		vars[n].key = (k);                                             \
		vars[n].value = store + used;                                  \
		used += l_ + 1;                                                \
		n++;                                                           \
	} while (0)

	PUT("gpus", "%d", gpus);
	PUT("technique", "%s", t->name);
	PUT("batch", "%s", batch ? batch : "");
	PUT("plan_id", "%s", plan_id ? plan_id : "");
	PUT("nodes", "%d", nodes > 0 ? nodes : 1);
	for (int i = 0; i < t->nparams; i++)
		PUT(t->params[i].name, "%ld",
		    saturn_technique_param(params, t->params[i].name,
					   pdef(&t->params[i], gpus)));
#undef PUT
	return n;
}
