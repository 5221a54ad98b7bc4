/* spank_rawtag.c - a test-only SPANK plugin that puts SATURN_BATCH=$SATURN_RAW_TAG
 * into the job's SPANK environment without any check, the way a user with
 * their own plugstack.conf (SLURM_CONF pointing at their own slurm.conf)
 * could. tests/e2e/raw-tag.sh uses it to show that job_submit/saturn checks
 * the name again on the controller. Never installed.
 */
#include "config.h"

#include <stdlib.h>

#include <slurm/spank.h>

SPANK_PLUGIN(rawtag, 1);

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	const char *tag = getenv("SATURN_RAW_TAG");
	spank_context_t ctx = spank_context();

	if (!tag || (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL))
		return 0;
	return spank_job_control_setenv(sp, "SATURN_BATCH", tag, 1) == ESPANK_SUCCESS ? 0 : -1;
}
