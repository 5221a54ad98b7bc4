/* sched_saturn.c - the sched/saturn plugin's Slurm entry points: init
 * starts the Saturn agent thread (and, unless saturn_backfill=no, Slurm's own
 * sched/backfill beside it for every other job), fini stops and joins both,
 * sched_p_reconfig re-reads the saturn_* SchedulerParameters. Everything
 * else lives in saturn_agent.c and saturn_apply.c (the Slurm side) and
 * libsaturn's lib/sched/ (the Slurm-free side). Shaped like
 * sched/backfill's backfill_wrapper.c.
 */
#include "config.h" /* Slurm's, from the configured Slurm build folder */

#include <pthread.h>

#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/plugin.h"
#include "src/slurmctld/slurmctld.h"

#include "saturn_agent.h"
#include "saturn_ctx.h"

const char plugin_name[] = "Saturn batch planner (SPASE) scheduler plugin";
const char plugin_type[] = "sched/saturn";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init(void);
extern void fini(void);
extern int sched_p_reconfig(void);

/* The plugin's one context (saturn_ctx.h): filled by saturn_agent_init,
 * used by the agent thread alone while it runs, emptied by
 * saturn_agent_fini once the thread was joined. */
static saturn_ctx_t ctx = SATURN_CTX_INIT;
static pthread_t agent_thread = 0;
static pthread_mutex_t thread_flag_mutex = PTHREAD_MUTEX_INITIALIZER;

extern int init(void)
{
	if (slurmctld_config.scheduling_disabled)
		return SLURM_SUCCESS;

	slurm_mutex_lock(&thread_flag_mutex);
	if (agent_thread) {
		debug2("sched/saturn: agent already running, not starting another");
		slurm_mutex_unlock(&thread_flag_mutex);
		return SLURM_ERROR;
	}
	saturn_agent_init(&ctx);
	/* joined in fini(), so not detached (slurm_thread_create's macro
	 * trips -Wshadow) */
	if (pthread_create(&agent_thread, NULL, saturn_agent, &ctx)) {
		error("sched/saturn: cannot start the agent thread: %m");
		agent_thread = 0;
		slurm_mutex_unlock(&thread_flag_mutex);
		return SLURM_ERROR;
	}
	slurm_mutex_unlock(&thread_flag_mutex);
	sched_verbose("sched/saturn: plugin loaded");
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	slurm_mutex_lock(&thread_flag_mutex);
	if (agent_thread) {
		verbose("sched/saturn: shutting down");
		saturn_agent_stop();
		pthread_join(agent_thread, NULL);
		agent_thread = 0;
		saturn_agent_fini(&ctx);
	}
	slurm_mutex_unlock(&thread_flag_mutex);
}

extern int sched_p_reconfig(void)
{
	saturn_agent_reconfig();
	return SLURM_SUCCESS;
}
