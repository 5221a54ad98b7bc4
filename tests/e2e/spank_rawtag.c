/* spank_rawtag.c - a test-only SPANK plugin that puts SATURN_BATCH=$SATURN_RAW_TAG
 * into the job's SPANK environment without any check, the way a user with
 * their own plugstack.conf (SLURM_CONF pointing at their own slurm.conf)
 * could. tests/e2e/raw-tag.sh uses it to show that job_submit/saturn checks
 * the name again on the controller. Every NAME=VALUE word of
 * $SATURN_RAW_SPANK_ENV (space-separated) goes into that environment too:
 * tests/e2e/hostile-env.sh shows that sched/saturn never reads its own
 * variables from there. Never installed.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

SPANK_PLUGIN(rawtag, 1);

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	const char *tag = getenv("SATURN_RAW_TAG");
	spank_context_t ctx = spank_context();

	const char *extra = getenv("SATURN_RAW_SPANK_ENV");

	if (!tag || (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL))
		return 0;
	while (extra && *extra) {
		char word[512], *eq;
		size_t n = strcspn(extra, " ");

		if (n > 0 && n < sizeof(word)) {
			memcpy(word, extra, n);
			word[n] = '\0';
			if ((eq = strchr(word, '=')) && eq != word) {
				*eq = '\0';
				if (spank_job_control_setenv(sp, word, eq + 1, 1) != ESPANK_SUCCESS)
					return -1;
			}
		}
		extra += n;
		extra += strspn(extra, " ");
	}
	return spank_job_control_setenv(sp, "SATURN_BATCH", tag, 1) == ESPANK_SUCCESS ? 0 : -1;
}
