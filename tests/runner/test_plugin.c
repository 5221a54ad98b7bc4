/* test_plugin.c - a technique plugin used by the loader tests: "zero3",
 * 2..8 GPUs, a search hook that picks stages = gpus/2, an execute hook that
 * sets ZERO3_EXECUTED=1 in the child. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "technique.h"

static int search(const saturn_technique_ctx_v1_t *ctx, char *params,
		  size_t len, char *errbuf, size_t errlen)
{
	if (ctx->gpus > 8)
		return 1;
	snprintf(params, len, "{}");
	return 0;
}

static int execute(const saturn_technique_ctx_v1_t *ctx, char **launch,
		   char *errbuf, size_t errlen)
{
	setenv("ZERO3_EXECUTED", "1", 1);
	*launch = NULL;
	return 0;
}

static const char *const env[] = {"ZERO3_GPUS={gpus}", NULL};

const saturn_technique_plugin_v1_t saturn_technique_plugin_v1 = {
    .abi = SATURN_TECHNIQUE_PLUGIN_ABI,
    .size = sizeof(saturn_technique_plugin_v1_t),
    .name = "zero3",
    .description = "test plugin",
    .min_gpus = 2,
    .max_gpus = 8,
    .launch = "{command}",
    .env = env,
    .search = search,
    .execute = execute,
};
