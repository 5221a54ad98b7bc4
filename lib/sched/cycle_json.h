/* cycle_json.h - internal: the json-c forms of a cycle record's parts
 * (cycle_record.h), shared by cycle_snapjson.c (the snapshot),
 * cycle_statejson.c (plans, the state, the profiles, the tape, the
 * outputs) and cycle_record.c (the document). Not a public header:
 * json-c types appear here.
 *
 * Builders return 0 with *out a new reference (NULL only where JSON null
 * is meant), or -1 (ENOMEM). Parsers take the value and a context ("CTX"
 * in the messages "CTX.KEY: ..."), return 0 or -1 with err.
 */
#ifndef SATURN_CYCLE_JSON_H
#define SATURN_CYCLE_JSON_H

#include <stdint.h>

#include "cycle_record.h"
#include "jsonutil.h"

/* Add val (NULL: JSON null) under key / at the end of arr; val is dropped
 * on failure. 0 or -1. */
int cj_put(json_object *obj, const char *key, json_object *val);
int cj_append(json_object *arr, json_object *val);

/* A uint64_t as "0x..." and back (1 to 16 hex digits). */
json_object *cj_hex64(uint64_t v);
int cj_as_hex64(json_object *v, const char *what, uint64_t *out, saturn_error_t *err);

/* An array field of at most max entries: 1 with *arr and *n, 0 when
 * absent (optional), -1 with err. */
int cj_array(json_object *obj, const char *ctx, const char *key, bool required, size_t max,
	     json_object **arr, size_t *n, saturn_error_t *err);

/* A string field copied into a buffer of size bytes (at most size - 1
 * characters, no NUL inside): 1, 0 when absent (dst unchanged), -1. */
int cj_strbuf(json_object *obj, const char *ctx, const char *key, bool required, char *dst,
	      size_t size, saturn_error_t *err);

/* Our own text (a writer's output) as a value; NULL on ENOMEM. */
json_object *cj_from_text(const char *text);

/* The snapshot. */
int cj_snapshot(const saturn_snapshot_t *s, json_object **out);
int cj_snapshot_parse(json_object *o, const char *ctx, saturn_snapshot_t *s, saturn_error_t *err);

/* A plan (saturn-plan/1 or /2 with an "index" object per entry: task,
 * option, node, more_nodes), or null for NULL. */
int cj_plan(const saturn_plan_t *plan, json_object **out);
/* o NULL (JSON null) gives *plan NULL. */
int cj_plan_parse(json_object *o, const char *ctx, saturn_plan_t **plan, saturn_error_t *err);

/* The state (plan, ids, times, feedback). */
int cj_state(const saturn_cycle_state_t *st, json_object **out);
int cj_state_parse(json_object *o, const char *ctx, saturn_cycle_state_t *st, saturn_error_t *err);

/* The profile set, as a list of {uid, batch, class, profile}. */
int cj_profset(const saturn_profset_t *ps, json_object **out);
/* Into ps (empty; owns set to 1). */
int cj_profset_parse(json_object *o, const char *ctx, saturn_profset_t *ps, saturn_error_t *err);

/* The tape: a list of plans or nulls. */
int cj_tape(const saturn_plan_tape_t *t, json_object **out);
/* Into t (empty; mode PLAY). */
int cj_tape_parse(json_object *o, const char *ctx, saturn_plan_tape_t *t, saturn_error_t *err);

/* The outputs. */
int cj_out(const saturn_cycle_out_t *out, json_object **res);

/* Measurement (cycle_measjson.c): the records as a list of {uid, batch,
 * class, record} (record: the file text, bpol_measure.h); the companion
 * jobs per user as {uid, n}. The parsers read the optional array field
 * named ctx of root into ms / t (empty; absent gives none). */
int cj_measset(const saturn_measset_t *ms, json_object **out);
int cj_measset_parse(json_object *root, const char *ctx, saturn_measset_t *ms, saturn_error_t *err);
int cj_uidtab(const saturn_uidtab_t *t, json_object **out);
int cj_uidtab_parse(json_object *root, const char *ctx, saturn_uidtab_t *t, saturn_error_t *err);
/* Add the cycle's measurement jobs ("measure") and changed records
 * ("measure_records") to the "out" object o, each only when not empty. */
int cj_measure_out(const saturn_cycle_out_t *out, json_object *o);

/* Profiler jobs (cycle_profjson.c): the facts per batch as a list of
 * {uid, batch, exists, record, job, classes}, read from the optional array
 * field named ctx of root into ps (empty; absent gives none). The cycle's jobs ("profilers"), holds
 * ("profiler_holds") and changed records ("profiler_records") added to the "out" object o, each
 * only when not empty. */
int cj_profstate(const saturn_profstate_t *ps, json_object **out);
int cj_profstate_parse(json_object *root, const char *ctx, saturn_profstate_t *ps,
		       saturn_error_t *err);
int cj_profiler_out(const saturn_cycle_out_t *out, json_object *o);

#endif /* SATURN_CYCLE_JSON_H */
