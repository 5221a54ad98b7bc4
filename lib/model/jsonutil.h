/* jsonutil.h - internal helpers shared by the JSON formats (formats.c,
 * profile.c): strict parsing with positions in the error text, typed field
 * access that names the field in every message, round-trip number output
 * and bounded file reading. Not a public header: json-c types appear here.
 *
 * Field helpers take a context string ("tasks[3] (lr-sweep_3)", or "" at
 * the top level) and a key; their messages read "CTX.KEY: what is wrong".
 * A JSON null counts as absent. They return 1 when the field was found, 0
 * when absent and optional, -1 with err set otherwise.
 */
#ifndef SATURN_JSONUTIL_H
#define SATURN_JSONUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "error.h"
#include "safetext.h"

/* Parse len bytes as one JSON value (strict mode: no
 * trailing commas, no trailing garbage; UTF-8 checked). Empty input,
 * truncation and syntax errors get distinct messages with byte offset,
 * line and column. Returns a new reference or NULL with err set. Note that
 * json-c accepts NaN and Infinity literals even in strict mode: the number
 * helpers below reject non-finite values. */
json_object *sj_parse(const char *buf, size_t len, saturn_error_t *err);

/* The top-level object with "format" equal to want. -1 with err otherwise. */
int sj_check_format(json_object *root, const char *want, saturn_error_t *err);

/* Object field lookup with type check (want: json_type_object, _array,
 * _string; any other value is not checked). */
int sj_get(json_object *obj, const char *ctx, const char *key, bool required,
	   json_type want, json_object **out, saturn_error_t *err);

/* A string field, copied into *out (malloc'd). Strings with NUL bytes,
 * longer than maxlen, or empty when nonempty is set, are refused. */
int sj_str(json_object *obj, const char *ctx, const char *key, bool required,
	   bool nonempty, size_t maxlen, char **out, saturn_error_t *err);

/* sj_str() for text from a user's file: the value must also be inside the
 * character set kind (safetext.h), else -1 with err naming the field and
 * the byte ("CTX.KEY: character 0x0a at offset 1 is not allowed (...)");
 * *out is NULL after any failure. */
int sj_text(json_object *obj, const char *ctx, const char *key, bool required,
	    bool nonempty, size_t maxlen, saturn_text_kind_t kind, char **out,
	    saturn_error_t *err);

/* An integer field in [min, max] (a JSON number with no fractional part). */
int sj_int(json_object *obj, const char *ctx, const char *key, bool required,
	   long long min, long long max, int *out, saturn_error_t *err);

/* The same for a long long in [min, max] (e.g. a uid or a job id). */
int sj_llong(json_object *obj, const char *ctx, const char *key, bool required,
	     long long min, long long max, long long *out, saturn_error_t *err);

/* A finite number field >= min (> min when strict). */
int sj_num(json_object *obj, const char *ctx, const char *key, bool required,
	   double min, bool strict, double *out, saturn_error_t *err);

/* Value checks for array elements: what names the element
 * ("nodes[0].busy[1].gpu_ids[2]"). */
int sj_as_int(json_object *v, const char *what, long long min, long long max,
	      int *out, saturn_error_t *err);
int sj_as_llong(json_object *v, const char *what, long long min, long long max,
		long long *out, saturn_error_t *err);

/* An array of distinct integers in [min, max], 1..maxn long: malloc'd copy
 * in *out, count in *n. */
int sj_int_array(json_object *obj, const char *ctx, const char *key,
		 bool required, int min, int max, int maxn, int **out, int *n,
		 saturn_error_t *err);

/* A JSON number that prints as the shortest decimal that reads back as
 * exactly d. NULL on ENOMEM. */
json_object *sj_new_num(double d);

/* Builders: add val to obj under key / append it to arr. When obj/arr or
 * val is NULL, or the add fails, val is dropped and -1 returned, so that
 * builders can chain calls with || and check once. */
int sj_put(json_object *obj, const char *key, json_object *val);
int sj_append(json_object *arr, json_object *val);

/* Serialise root (pretty or compact) into a malloc'd string; NULL on
 * ENOMEM. Does not drop the reference. */
char *sj_to_string(json_object *root, bool pretty);

/* Read everything from fd, refusing more than max bytes. Returns a malloc'd
 * NUL-terminated buffer (length in *len) or NULL with err set (no file
 * name: the caller prefixes it). */
char *sj_read_fd(int fd, size_t max, size_t *len, saturn_error_t *err);

#endif /* SATURN_JSONUTIL_H */
