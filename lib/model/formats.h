/* formats.h - JSON forms of problems and plans (doc/formats.md).
 *
 * Parsers reject bad input with a message that names the field and, where
 * there is one, the task or node ("tasks[3] (lr-sweep_3): options[0].gpus:
 * must be an integer >= 1"). They never abort, whatever the bytes.
 */
#ifndef SATURN_FORMATS_H
#define SATURN_FORMATS_H

#include <stddef.h>

#include "model.h"

/* Parse a saturn-problem/1 or /2 document of len bytes (need not be
 * NUL-terminated) and check it with saturn_problem_check(). Returns a new
 * problem or NULL with err set. */
saturn_problem_t *saturn_problem_parse(const char *buf, size_t len,
				       saturn_error_t *err);

/* Read and parse a file ("-" = stdin). Files over 64 MiB are refused. The
 * error text starts with the file name. */
saturn_problem_t *saturn_problem_load(const char *path, saturn_error_t *err);

/* Serialise a problem as saturn-problem/1, or /2 when an option spans
 * several nodes (saturn_problem_multinode()). Returns a malloc'd NUL-terminated
 * string (caller frees) or NULL (ENOMEM). */
char *saturn_problem_to_json(const saturn_problem_t *p);

/* Parse a saturn-plan/1 or /2 document. Names are not resolved (indices are -1);
 * see saturn_plan_resolve(). NULL with err on bad input. */
saturn_plan_t *saturn_plan_parse(const char *buf, size_t len,
				 saturn_error_t *err);

/* Serialise a plan as saturn-plan/1, or /2 when an entry spans several
 * nodes (pretty when pretty != 0). malloc'd
 * string or NULL (ENOMEM). */
char *saturn_plan_to_json(const saturn_plan_t *plan, int pretty);

/* saturn_read_file() and saturn_write_file_atomic() live in safefile.h,
 * included here for the callers that read problems and plans. */
#include "safefile.h"

#endif /* SATURN_FORMATS_H */
