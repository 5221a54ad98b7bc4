/* envarray.c - lookup in "NAME=value" arrays (see envarray.h). */
#include "config.h"

#include <string.h>

#include "envarray.h"

long saturn_env_index(char *const *env, size_t n, const char *name)
{
	size_t len;

	if (!env || !name || !*name || strchr(name, '='))
		return -1;
	len = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (env[i] && !strncmp(env[i], name, len) && env[i][len] == '=')
			return (long)i;
	return -1;
}

const char *saturn_env_value(char *const *env, size_t n, const char *name)
{
	long i = saturn_env_index(env, n, name);

	return i < 0 ? NULL : env[i] + strlen(name) + 1;
}
