/* profile.c - saturn-profile/1 (skeleton: every entry point fails cleanly). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "profile.h"

const char *saturn_opt_status_name(saturn_opt_status_t s)
{
	return NULL;
}

int saturn_opt_status_parse(const char *name, saturn_opt_status_t *s)
{
	return -1;
}

saturn_profile_t *saturn_profile_create(void)
{
	return calloc(1, sizeof(saturn_profile_t));
}

void saturn_profile_destroy(saturn_profile_t *pr)
{
	free(pr);
}

saturn_profile_t *saturn_profile_parse(const char *buf, size_t len, saturn_error_t *err)
{
	saturn_error_set(err, "not implemented");
	return NULL;
}

saturn_profile_t *saturn_profile_load(const char *path, long expect_uid, saturn_error_t *err)
{
	saturn_error_set(err, "%s: not implemented", path);
	return NULL;
}

char *saturn_profile_to_json(const saturn_profile_t *pr)
{
	errno = ENOSYS;
	return NULL;
}

const saturn_profile_task_t *saturn_profile_find(const saturn_profile_t *pr, int task_id)
{
	return NULL;
}

int saturn_profile_options(const saturn_profile_task_t *pt, saturn_option_t **opts)
{
	*opts = NULL;
	return 0;
}
