/* saturn_backfill.c - Slurm's own sched/backfill, loaded beside
 * sched/saturn (unless saturn_backfill=no) to schedule every job that is
 * not Saturn's: found in PluginDir, checked to be a sched plugin of this
 * Slurm version, and started. saturn_agent.c forwards reconfigure and fini
 * to it (saturn_backfill_reconfig, saturn_backfill_fini); its hooks stay
 * in this file.
 */
#include "config.h" /* Slurm's */

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "saturn_backfill.h"

/* sched/backfill, loaded beside us for every other job */
static void *bf_handle;
/* its fini and sched_p_reconfig once loaded and started, else NULL */
static void (*bf_fini)(void);
static int (*bf_reconfig)(void);

void saturn_backfill_load(const saturn_ctx_t *ctx)
{
	char *dirs, *dir, *save = NULL;

	if (!ctx->cfg.backfill) {
		info("sched/saturn: saturn_backfill=no: other jobs are scheduled by the main scheduler only");
		return;
	}
	dirs = xstrdup(slurm_conf.plugindir);
	for (dir = strtok_r(dirs, ":", &save); dir && !bf_handle;
	     dir = strtok_r(NULL, ":", &save)) {
		char *path = xstrdup_printf("%s/sched_backfill.so", dir);
		const uint32_t *version;
		int (*bf_init)(void);

		if (access(path, R_OK) == 0) {
			bf_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
			if (!bf_handle) {
				error("sched/saturn: cannot load %s: %s", path, dlerror());
			} else {
				version = dlsym(bf_handle, "plugin_version");
				bf_init = (int (*)(void))dlsym(bf_handle, "init");
				bf_fini = (void (*)(void))dlsym(bf_handle, "fini");
				bf_reconfig = (int (*)(void))dlsym(bf_handle, "sched_p_reconfig");
				if (!version || *version != SLURM_VERSION_NUMBER || !bf_init ||
				    !bf_fini || !bf_reconfig) {
					error("sched/saturn: %s is not a matching sched/backfill plugin", path);
					dlclose(bf_handle);
					bf_handle = NULL;
				} else if (bf_init() != SLURM_SUCCESS) {
					error("sched/saturn: sched/backfill init failed");
					bf_fini = NULL;
					bf_reconfig = NULL;
				} else {
					info("sched/saturn: sched/backfill loaded from %s for non-Saturn jobs", path);
				}
			}
		}
		xfree(path);
	}
	xfree(dirs);
	if (!bf_handle)
		error("sched/saturn: sched/backfill not found in PluginDir %s: other jobs are scheduled by the main scheduler only",
		      slurm_conf.plugindir);
}

void saturn_backfill_reconfig(void)
{
	if (bf_reconfig)
		bf_reconfig();
}

void saturn_backfill_fini(void)
{
	if (bf_fini)
		bf_fini();
	/* bf_handle stays loaded: its thread is joined, and unloading code a
	 * late callback might still reach buys nothing. */
	bf_fini = NULL;
	bf_reconfig = NULL;
}
