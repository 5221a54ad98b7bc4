/* safetext.h - the one validator for text that comes from a user's file
 * and may reach a log line, a squeue reason, a job record (AdminComment,
 * the job's environment), a plan or the persisted state.
 *
 * A user writes profiles (saturn-profile/1) in a folder of their own; the
 * controller copies their technique names into slurmctld.log, into the
 * plan record of AdminComment and into reasons, and their signatures and
 * hardware descriptions into log lines and the state. A line break there
 * forges a log line or a record field; a terminal escape rewrites what an
 * operator sees. Every such string is checked here once, when the file is
 * loaded, and a file with a bad one is refused with the field named.
 *
 * Two character sets:
 *   SATURN_TEXT_NAME  identifiers (technique and node class names): ASCII
 *                     letters, digits, '.', '_', '+', '-', the first a
 *                     letter, digit or '_'. Safe in a shell word, a file
 *                     name, a "key=value" record and a log line.
 *   SATURN_TEXT_LINE  free text on one line (signatures, reasons, GPU
 *                     models, node names, the batch name a profile names):
 *                     printable ASCII, 0x20 (space) to 0x7e; no control
 *                     character, no line break, no byte above 0x7e.
 * Slurm-free, no I/O. Tested in tests/unit/test_safetext.c, fuzzed through
 * tests/fuzz/fuzz_profile.c.
 */
#ifndef SATURN_SAFETEXT_H
#define SATURN_SAFETEXT_H

#include <stddef.h>

#include "error.h"

typedef enum saturn_text_kind {
	SATURN_TEXT_NAME = 0,
	SATURN_TEXT_LINE,
} saturn_text_kind_t;

/* Index of the first byte of s (NUL-terminated) outside kind's set, or -1
 * when every byte is inside it. The empty string is inside both sets (the
 * callers decide whether a value may be empty). */
long saturn_text_bad_at(const char *s, saturn_text_kind_t kind);

/* 1 when s is inside kind's set (saturn_text_bad_at() < 0), else 0. NULL
 * gives 0. */
int saturn_text_ok(const char *s, saturn_text_kind_t kind);

/* 0 when s is inside kind's set; else -1 with err "FIELD: character 0x0a
 * at offset 1 is not allowed (WHAT)", which names the byte by its code,
 * never echoes it, and says which set applies. field is the caller's name
 * for the value ("tasks[0].options[1].technique"); NULL s is refused. */
int saturn_text_check(const char *field, const char *s, saturn_text_kind_t kind,
		      saturn_error_t *err);

/* Copy s into buf (len >= 1) with every byte outside kind's set replaced
 * by '?' (for text that did not come through a check, e.g. a value Slurm
 * handed over); always NUL-terminated, truncated to fit. Returns buf. */
char *saturn_text_clean(const char *s, saturn_text_kind_t kind, char *buf, size_t len);

#endif /* SATURN_SAFETEXT_H */
