/* jsonutil.c - strict JSON parsing and typed field access for the formats
 * (see jsonutil.h). Every message names the field it rejects, so that users
 * and the plugin's log can point at the line to fix.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonutil.h"

#ifndef JSON_TOKENER_VALIDATE_UTF8
#define JSON_TOKENER_VALIDATE_UTF8 0
#endif

/* "CTX.KEY" or "KEY" at the top level. */
static void field_name(char *buf, size_t sz, const char *ctx, const char *key)
{
	if (ctx && ctx[0])
		snprintf(buf, sz, "%s.%s", ctx, key);
	else
		snprintf(buf, sz, "%s", key);
}

static void line_col(const char *buf, size_t off, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

json_object *sj_parse(const char *buf, size_t len, saturn_error_t *err)
{
	struct json_tokener *tok;
	json_object *root;
	enum json_tokener_error jerr;
	size_t i, end, line, col;

	for (i = 0; i < len; i++)
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' &&
		    buf[i] != '\r')
			break;
	if (i == len) {
		saturn_error_set(err, "empty input (expected a JSON object)");
		return NULL;
	}
	if (len > INT_MAX) {
		saturn_error_set(err, "input too large");
		return NULL;
	}
	if (buf[i] != '{') {
		line_col(buf, i, &line, &col);
		saturn_error_set(err, "malformed JSON at byte %zu (line %zu, column %zu): the document must be a JSON object", i, line, col);
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		saturn_error_set(err, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
#if JSON_C_VERSION_NUM >= ((0 << 16) | (15 << 8))
	end = json_tokener_get_parse_end(tok);
#else
	end = (size_t)tok->char_offset; /* json-c 0.13, 0.14 */
#endif
	json_tokener_free(tok);
	if (!root || jerr != json_tokener_success) {
		json_object_put(root);
		if (jerr == json_tokener_continue) {
			saturn_error_set(err, "truncated JSON: the document ends early (after %zu bytes)", len);
			return NULL;
		}
		if (end > len)
			end = len;
		/* json-c stops one past the offending byte */
		if (end > 0 && jerr != json_tokener_error_depth)
			end--;
		line_col(buf, end, &line, &col);
		saturn_error_set(err, "malformed JSON at byte %zu (line %zu, column %zu): %s", end, line, col, json_tokener_error_desc(jerr));
		return NULL;
	}
	/* strict mode already refuses trailing non-space data */
	return root;
}

int sj_check_format(json_object *root, const char *want, saturn_error_t *err)
{
	json_object *f;
	const char *s;

	if (!json_object_is_type(root, json_type_object))
		return saturn_error_set(err, "the document must be a JSON object");
	if (!json_object_object_get_ex(root, "format", &f) || !f)
		return saturn_error_set(err, "format: missing (expected \"%s\")", want);
	if (!json_object_is_type(f, json_type_string))
		return saturn_error_set(err, "format: must be a string (expected \"%s\")", want);
	s = json_object_get_string(f);
	if (strcmp(s, want) != 0 && !saturn_text_ok(s, SATURN_TEXT_LINE))
		return saturn_error_set(err, "format: unsupported value, not one line of printable text (expected \"%s\")", want);
	if (strcmp(s, want) != 0)
		return saturn_error_set(err, "format: unsupported \"%.64s\" (expected \"%s\")", s, want);
	return 0;
}

static const char *type_word(json_type t)
{
	switch (t) {
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	case json_type_boolean:
		return "true or false";
	default:
		return "a number";
	}
}

int sj_get(json_object *obj, const char *ctx, const char *key, bool required,
	   json_type want, json_object **out, saturn_error_t *err)
{
	char name[SATURN_ERROR_LEN / 2];
	json_object *v = NULL;

	*out = NULL;
	field_name(name, sizeof(name), ctx, key);
	if (!json_object_object_get_ex(obj, key, &v) || !v) {
		if (required)
			return saturn_error_set(err, "%s: missing", name);
		return 0;
	}
	if ((want == json_type_object || want == json_type_array ||
	     want == json_type_string || want == json_type_boolean) &&
	    !json_object_is_type(v, want))
		return saturn_error_set(err, "%s: must be %s", name, type_word(want));
	*out = v;
	return 1;
}

int sj_str(json_object *obj, const char *ctx, const char *key, bool required,
	   bool nonempty, size_t maxlen, char **out, saturn_error_t *err)
{
	char name[SATURN_ERROR_LEN / 2];
	json_object *v;
	const char *s;
	size_t n;
	int rc;

	*out = NULL;
	rc = sj_get(obj, ctx, key, required, json_type_string, &v, err);
	if (rc <= 0)
		return rc;
	field_name(name, sizeof(name), ctx, key);
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (strlen(s) != n)
		return saturn_error_set(err, "%s: must not contain NUL characters", name);
	if (nonempty && n == 0)
		return saturn_error_set(err, "%s: must not be empty", name);
	if (n > maxlen)
		return saturn_error_set(err, "%s: longer than %zu characters", name, maxlen);
	*out = strdup(s);
	if (!*out)
		return saturn_error_set(err, "out of memory");
	return 1;
}

int sj_text(json_object *obj, const char *ctx, const char *key, bool required,
	    bool nonempty, size_t maxlen, saturn_text_kind_t kind, char **out,
	    saturn_error_t *err)
{
	char name[SATURN_ERROR_LEN / 2];
	int rc = sj_str(obj, ctx, key, required, nonempty, maxlen, out, err);

	if (rc <= 0)
		return rc;
	field_name(name, sizeof(name), ctx, key);
	if (saturn_text_check(name, *out, kind, err) < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 1;
}

int sj_as_int(json_object *v, const char *what, long long min, long long max,
	      int *out, saturn_error_t *err)
{
	long long x;

	if (min < INT_MIN)
		min = INT_MIN;
	if (max > INT_MAX)
		max = INT_MAX;
	if (sj_as_llong(v, what, min, max, &x, err) < 0)
		return -1;
	*out = (int)x;
	return 0;
}

int sj_as_llong(json_object *v, const char *what, long long min, long long max,
		long long *out, saturn_error_t *err)
{
	long long x;

	if (json_object_is_type(v, json_type_int)) {
		x = json_object_get_int64(v);
		/* uint64 values above INT64_MAX come back as INT64_MAX */
	} else if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);

		if (!isfinite(d) || d != floor(d) || d < (double)min ||
		    d > (double)max)
			goto bad;
		x = (long long)d;
	} else {
		goto bad;
	}
	if (x < min || x > max)
		goto bad;
	*out = x;
	return 0;
bad:
	return saturn_error_set(err, "%s: must be an integer from %lld to %lld", what, min, max);
}

int sj_int(json_object *obj, const char *ctx, const char *key, bool required,
	   long long min, long long max, int *out, saturn_error_t *err)
{
	long long x;
	int rc = sj_llong(obj, ctx, key, required, min < INT_MIN ? INT_MIN : min,
			  max > INT_MAX ? INT_MAX : max, &x, err);

	if (rc > 0)
		*out = (int)x;
	return rc;
}

int sj_llong(json_object *obj, const char *ctx, const char *key, bool required,
	     long long min, long long max, long long *out, saturn_error_t *err)
{
	char name[SATURN_ERROR_LEN / 2];
	json_object *v;
	int rc = sj_get(obj, ctx, key, required, json_type_null, &v, err);

	if (rc <= 0)
		return rc;
	field_name(name, sizeof(name), ctx, key);
	if (sj_as_llong(v, name, min, max, out, err) < 0)
		return -1;
	return 1;
}

int sj_num(json_object *obj, const char *ctx, const char *key, bool required,
	   double min, bool strict, double *out, saturn_error_t *err)
{
	char name[SATURN_ERROR_LEN / 2];
	json_object *v;
	double d;
	int rc = sj_get(obj, ctx, key, required, json_type_null, &v, err);

	if (rc <= 0)
		return rc;
	field_name(name, sizeof(name), ctx, key);
	if (!json_object_is_type(v, json_type_int) &&
	    !json_object_is_type(v, json_type_double))
		return saturn_error_set(err, "%s: must be a number", name);
	d = json_object_get_double(v);
	if (!isfinite(d))
		return saturn_error_set(err, "%s: must be a finite number", name);
	if (strict ? !(d > min) : !(d >= min))
		return saturn_error_set(err, "%s: must be a number %s %g", name, strict ? ">" : ">=", min);
	*out = d;
	return 1;
}

int sj_int_array(json_object *obj, const char *ctx, const char *key,
		 bool required, int min, int max, int maxn, int **out, int *n,
		 saturn_error_t *err)
{
	char name[SATURN_ERROR_LEN / 2], what[SATURN_ERROR_LEN / 2];
	json_object *v;
	size_t len;
	int *ids;
	int rc = sj_get(obj, ctx, key, required, json_type_array, &v, err);

	*out = NULL;
	*n = 0;
	if (rc <= 0)
		return rc;
	field_name(name, sizeof(name), ctx, key);
	len = json_object_array_length(v);
	if (len < 1 || len > (size_t)maxn)
		return saturn_error_set(err, "%s: must list 1 to %d integers", name, maxn);
	ids = calloc(len, sizeof(int));
	if (!ids)
		return saturn_error_set(err, "out of memory");
	for (size_t i = 0; i < len; i++) {
		snprintf(what, sizeof(what), "%s[%zu]", name, i);
		if (sj_as_int(json_object_array_get_idx(v, i), what, min, max,
			      &ids[i], err) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++)
			if (ids[j] == ids[i]) {
				saturn_error_set(err, "%s: %d listed twice", name, ids[i]);
				goto fail;
			}
	}
	*out = ids;
	*n = (int)len;
	return 1;
fail:
	free(ids);
	return -1;
}

/* Shortest decimal that reads back as exactly d ("%.1f" for integers, so
 * that numbers stay numbers-with-a-point). buf >= 40 bytes. */
static const char *num_text(double d, char *buf, size_t sz)
{
	if (!isfinite(d)) /* never written by us; keep the output valid JSON */
		d = 0;
	if (d == floor(d) && fabs(d) < 1e15) {
		snprintf(buf, sz, "%.1f", d);
	} else {
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sz, "%.*g", prec, d);
			if (strtod(buf, NULL) == d)
				break;
		}
	}
	return buf;
}

json_object *sj_new_num(double d)
{
	char buf[40];

	return json_object_new_double_s(d, num_text(d, buf, sizeof(buf)));
}

static void put_string(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static bool is_scalar(json_object *v)
{
	return !json_object_is_type(v, json_type_object) &&
	       !json_object_is_type(v, json_type_array);
}

static void newline(FILE *f, bool pretty, int depth)
{
	if (pretty)
		fprintf(f, "\n%*s", 2 * depth, "");
}

/* Our own writer (json-c's allocates a buffer per value, which is slow for
 * plans of 100,000 tasks). Pretty output indents by two spaces but keeps
 * arrays of scalars on one line ("gpu_ids": [0, 1, 2, 3]). */
static void write_value(FILE *f, json_object *v, int depth, bool pretty)
{
	char buf[40];

	switch (json_object_get_type(v)) {
	case json_type_null:
		fputs("null", f);
		break;
	case json_type_boolean:
		fputs(json_object_get_boolean(v) ? "true" : "false", f);
		break;
	case json_type_double:
		fputs(num_text(json_object_get_double(v), buf, sizeof(buf)), f);
		break;
	case json_type_int:
		/* uint64 above INT64_MAX only occurs in pass-through params */
		fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), f);
		break;
	case json_type_string:
		put_string(f, json_object_get_string(v),
			   (size_t)json_object_get_string_len(v));
		break;
	case json_type_object: {
		bool first = true;

		fputc('{', f);
		json_object_object_foreach(v, key, val) {
			fputs(first ? "" : ",", f);
			newline(f, pretty, depth + 1);
			put_string(f, key, strlen(key));
			fputs(pretty ? ": " : ":", f);
			write_value(f, val, depth + 1, pretty);
			first = false;
		}
		if (!first)
			newline(f, pretty, depth);
		fputc('}', f);
		break;
	}
	case json_type_array: {
		size_t n = json_object_array_length(v);
		bool flat = true;

		for (size_t i = 0; i < n && flat; i++)
			flat = is_scalar(json_object_array_get_idx(v, i));
		fputc('[', f);
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputs(flat && pretty ? ", " : ",", f);
			if (!flat)
				newline(f, pretty, depth + 1);
			write_value(f, json_object_array_get_idx(v, i), depth + 1, pretty);
		}
		if (!flat && n > 0)
			newline(f, pretty, depth);
		fputc(']', f);
		break;
	}
	}
}

char *sj_to_string(json_object *root, bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	write_value(f, root, 0, pretty);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *sj_read_fd(int fd, size_t max, size_t *len, saturn_error_t *err)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);

	if (!buf) {
		saturn_error_set(err, "out of memory");
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap > max)
				break;
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				saturn_error_set(err, "out of memory");
				return NULL;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			saturn_error_set(err, "%s", strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			break;
	}
	if (n > max) {
		free(buf);
		saturn_error_set(err, "larger than %zu bytes", max);
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int sj_put(json_object *obj, const char *key, json_object *val)
{
	if (!obj || !val || json_object_object_add(obj, key, val) < 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}

int sj_append(json_object *arr, json_object *val)
{
	if (!arr || !val || json_object_array_add(arr, val) < 0) {
		json_object_put(val);
		return -1;
	}
	return 0;
}
