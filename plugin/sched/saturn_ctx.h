/* saturn_ctx.h - the one thing the files of sched/saturn share: a
 * saturn_ctx_t, owned by sched_saturn.c for the plugin's lifetime, handed
 * to the agent thread (saturn_agent.c) and from there, as an argument, to
 * every function that needs it (const where the function only reads). No
 * file keeps a pointer to it or a copy of it between calls. Once the
 * thread runs, it is the context's only user: init fills it before the
 * thread starts, fini empties it after the thread was joined. A type
 * only: no file defines anything declared here.
 */
#ifndef SCHED_SATURN_CTX_H
#define SCHED_SATURN_CTX_H

#include <time.h>

#include "budget.h"
#include "sched_settings.h"

typedef struct saturn_ctx {
	/* The saturn_* SchedulerParameters, (re)read at init and at
	 * reconfigure (saturn_agent.c); saturn_files_open() clears profiler
	 * when companion jobs cannot be run safely. */
	saturn_sched_settings_t cfg;
	/* The SchedulerParameters text they were read from (xmalloc'd, NULL
	 * when none): what a recorded cycle says its settings were, copied
	 * under the conf lock so that no later read races a reconfigure. */
	char *sched_params;
	/* STATE_DIR, PROFILE_DIR and STATE_DIR/progress (xmalloc'd), set
	 * with the settings. */
	char *state_dir, *profile_dir, *progress_dir;
	/* Descriptors of the folders (-1 when missing or refused, logged),
	 * opened by saturn_files_open(): STATE_DIR, PROFILE_DIR,
	 * STATE_DIR/progress, STATE_DIR/jobs, STATE_DIR/scripts,
	 * STATE_DIR/users; and whether per-user folders can be handed to
	 * their users (controller running as root). */
	int state_fd, profile_fd, progress_fd, jobs_fd, scripts_fd, users_fd;
	int user_dirs;
	/* Each user's companion jobs (profiler, measurement) pending or
	 * running: counted by saturn_prune_pass() every cycle, raised by each
	 * submission (saturn_companion_gate()). */
	saturn_uidtab_t companions;
	/* The current plan's id ("pNOW-SEQ"), set when a new plan is adopted
	 * (saturn_agent.c); written into the plan records and the released
	 * tasks' environment. */
	char plan_id[64];
	/* last_job_update right after our own changes (saturn_apply.c,
	 * saturn_rehold.c): not news for the agent's loop. */
	time_t own_update;
} saturn_ctx_t;

/* A context with nothing read yet and every descriptor closed (-1). */
#define SATURN_CTX_INIT                                                                            \
	{                                                                                          \
		.state_fd = -1, .profile_fd = -1, .progress_fd = -1, .jobs_fd = -1,                \
		.scripts_fd = -1, .users_fd = -1                                                   \
	}

#endif /* SCHED_SATURN_CTX_H */
