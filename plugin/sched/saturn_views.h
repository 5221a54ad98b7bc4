/* saturn_views.h - what each user may read of sched/saturn's state
 * (saturn_views.c; agent thread, no locks).
 */
#ifndef SCHED_SATURN_VIEWS_H
#define SCHED_SATURN_VIEWS_H

#include "saturn_ctx.h"

/* After state.json was written with txt: STATE_DIR/users/UID.json (0400,
 * owned by UID) per user with a task or correction, and users/all.json
 * (0644, everything) only when PrivateData hides none of jobs, users,
 * accounts; stale views removed. Logged, never fatal. */
void saturn_views_write(const saturn_ctx_t *ctx, const char *txt);
/* Forget the views written (the users folder was (re)opened or closed):
 * the next saturn_views_write() writes and sweeps afresh. */
void saturn_views_reset(void);

#endif /* SCHED_SATURN_VIEWS_H */
