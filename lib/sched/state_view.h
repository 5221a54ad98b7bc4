/* state_view.h - what each caller may see of sched/saturn's state
 * (doc/security.md, "PrivateData").
 *
 * STATE_DIR/state.json holds every user's tasks and is root's alone. With
 * Slurm's PrivateData hiding jobs, users or accounts, each user reads
 * instead a view of it that holds only their own tasks and runtime
 * corrections: the same document (saturn-sched-state), with "tasks" and
 * "corrections" limited to one uid. The plan's figures (plan id, method,
 * makespan, lower bound) and the node list (what sinfo shows) are kept.
 */
#ifndef SATURN_STATE_VIEW_H
#define SATURN_STATE_VIEW_H

#include <stddef.h>

#include "error.h"

typedef struct {
	long uid;
	char *text; /* malloc'd JSON, the view of uid */
} saturn_state_view_t;

/* One view per uid that has a task or a correction in the state text txt,
 * in increasing uid order (at most one per task or correction, so bounded
 * by the state's own size). 0 with *views (malloc'd; NULL when none) and
 * *nviews, or -1 with err (not JSON, ENOMEM). */
int saturn_state_views(const char *txt, size_t len, saturn_state_view_t **views, int *nviews,
		       saturn_error_t *err);

void saturn_state_views_free(saturn_state_view_t *views, int nviews);

/* 64-bit FNV-1a of len bytes: a view is rewritten only when this changes */
unsigned long long saturn_state_view_hash(const char *txt, size_t len);

#endif /* SATURN_STATE_VIEW_H */
