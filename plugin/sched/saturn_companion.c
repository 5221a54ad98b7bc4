/* saturn_companion.c - what sched/saturn's companion jobs (profiler,
 * measurement) share: each user's count of them against
 * saturn_companion_jobs (lib/sched/budget.h decides), and the removal of a
 * batch's companion record and script copy (STATE_DIR/KIND-UID-KEY.job,
 * STATE_DIR/scripts/UID-KEY.K.script). Used by saturn_profiles.c and
 * saturn_measure.c; the counts are taken by saturn_prune.c every cycle.
 * Agent thread only, no locks.
 */
#include "config.h" /* Slurm's */

#include <string.h>

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "budget.h"

#include "saturn_companion.h"
#include "saturn_files.h"

int saturn_companion_gate(saturn_ctx_t *ctx, saturn_bpol_actions_t *acts, int n0, long uid)
{
	for (int i = n0; i < acts->n; i++) {
		int rc;

		if (acts->a[i].kind != SATURN_BPOL_SUBMIT_PROFILER &&
		    acts->a[i].kind != SATURN_BPOL_SUBMIT_MEASURE)
			continue;
		rc = saturn_budget_companion_wait(acts, i,
						  (int)saturn_uidtab_get(&ctx->companions, uid),
						  ctx->cfg.companion_jobs);
		if (rc == 0 && saturn_uidtab_add(&ctx->companions, uid, 1) < 0)
			error("sched/saturn: out of memory counting companion jobs");
		if (rc < 0)
			error("sched/saturn: uid %ld: out of memory limiting companion jobs: submitted",
			      uid);
		return rc;
	}
	return 0;
}

void saturn_companion_files_remove(const saturn_ctx_t *ctx, const char *kind, long uid,
				   const char *key)
{
	int profiler = !strcmp(kind, "profiler");
	char *rec = xstrdup_printf("%s-%ld-%s.job", kind, uid, key);
	char *script = xstrdup_printf("%ld-%s.%s.script", uid, key, profiler ? "profile" : "measure");
	char *sdir = xstrdup_printf("%s/scripts", ctx->state_dir);
	int n = saturn_remove_at(ctx->state_fd, ctx->state_dir, rec);

	n += saturn_remove_at(ctx->scripts_fd, sdir, script);
	if (n)
		debug("sched/saturn: batch %s of uid %ld: no tasks and no %s job left: removed its record and script copy",
		      key, uid, profiler ? "profiler" : "measurement");
	xfree(rec);
	xfree(script);
	xfree(sdir);
}
