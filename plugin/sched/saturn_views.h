/* saturn_views.h - what each user may read of sched/saturn's state
 * (saturn_views.c; the state writer's thread, saturn_statewr.c, no locks).
 */
#ifndef SCHED_SATURN_VIEWS_H
#define SCHED_SATURN_VIEWS_H

/* Where the views go: STATE_DIR (for the messages), the descriptor of
 * STATE_DIR/users (-1: missing or refused: no views), and whether per-user
 * views can be handed to their users (controller running as root). */
typedef struct saturn_views_dest {
	const char *state_dir;
	int users_fd;
	int user_dirs;
} saturn_views_dest_t;

/* After state.json was written with txt: STATE_DIR/users/UID.json (0400,
 * owned by UID) per user with a task or correction, and users/all.json
 * (0644, everything) only when PrivateData hides none of jobs, users,
 * accounts; stale views removed. Logged, never fatal. */
void saturn_views_write(const saturn_views_dest_t *dest, const char *txt);
/* Forget the views written (the users folder was (re)opened or closed):
 * the next saturn_views_write() writes and sweeps afresh. */
void saturn_views_reset(void);

#endif /* SCHED_SATURN_VIEWS_H */
