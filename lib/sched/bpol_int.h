/* bpol_int.h - what batch_policy.c (the action list, the profiler job) and
 * bpol_measure.c (the measurement job) share inside lib/sched; not for
 * the plugin. Defined in batch_policy.c.
 */
#ifndef SATURN_BPOL_INT_H
#define SATURN_BPOL_INT_H

#include <stdarg.h>
#include <stdint.h>

#include "batch_policy.h"

/* Append an action to l (tasks copied; text formatted, NULL fmt = none).
 * 0, or -1 (ENOMEM) with l as it was. */
int saturn_bpol_push(saturn_bpol_actions_t *l, saturn_bpol_kind_t kind, int tag,
		     saturn_bpol_level_t level, int gpus, const int *tasks, int ntasks,
		     const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* fmt formatted with ap into a malloc'd string, or NULL (ENOMEM). */
char *saturn_bpol_vfmt(const char *fmt, va_list ap);

/* Drop the actions appended after the first n0 (a failed call). */
void saturn_bpol_truncate(saturn_bpol_actions_t *l, int n0);

/* The submission of a task: its array job id, else its job id. */
uint32_t saturn_bpol_submission_of(const saturn_snap_job_t *j);

/* A decimal uint32 at *p (no sign), p moved past it. 0, or -1 when none
 * (*p and *v unchanged). */
int saturn_bpol_parse_u32(const char **p, uint32_t *v);

#endif /* SATURN_BPOL_INT_H */
