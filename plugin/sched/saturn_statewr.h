/* saturn_statewr.h - the state writer: a thread of its own that writes
 * STATE_DIR/state.json and the users' views of it (saturn_views.c) from
 * the text a cycle serialised, so that a slow disk never makes a cycle
 * late (saturn_statewr.c).
 */
#ifndef SCHED_SATURN_STATEWR_H
#define SCHED_SATURN_STATEWR_H

#include "saturn_ctx.h"

/* Start the writer thread (at init, after saturn_statewr_target). When it
 * cannot be started (logged), saturn_statewr_put() writes in its caller's
 * thread. */
void saturn_statewr_start(void);
/* Where to write from now on: ctx's STATE_DIR and the descriptors of it
 * and of STATE_DIR/users (duplicated: the writer never reads ctx), whether
 * per-user views can be made, and state.json's owner (a uid, or
 * SATURN_ANY_UID). Waits for a write under way; forgets the views written
 * (saturn_views_reset). Call after every saturn_files_open(). */
void saturn_statewr_target(const saturn_ctx_t *ctx, long owner);
/* Hand the state's text (malloc'd, taken; NULL: nothing) to the writer. A
 * state not yet written is dropped for it: only the newest counts. */
void saturn_statewr_put(char *txt);
/* Write the state still waiting, stop the thread and close the
 * descriptors (at fini, after the agent thread was joined). */
void saturn_statewr_stop(void);

#endif /* SCHED_SATURN_STATEWR_H */
