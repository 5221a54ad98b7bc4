/* formats.c - JSON forms of problems and plans. (Skeleton: filled in by the
 * formats work; every entry point fails cleanly until then.) */
#include "config.h"

#include <errno.h>

#include "formats.h"

saturn_problem_t *saturn_problem_parse(const char *buf, size_t len, saturn_error_t *err)
{
	saturn_error_set(err, "not implemented");
	return NULL;
}

saturn_problem_t *saturn_problem_load(const char *path, saturn_error_t *err)
{
	saturn_error_set(err, "%s: not implemented", path);
	return NULL;
}

char *saturn_problem_to_json(const saturn_problem_t *p)
{
	errno = ENOSYS;
	return NULL;
}

saturn_plan_t *saturn_plan_parse(const char *buf, size_t len, saturn_error_t *err)
{
	saturn_error_set(err, "not implemented");
	return NULL;
}

char *saturn_plan_to_json(const saturn_plan_t *plan, int pretty)
{
	errno = ENOSYS;
	return NULL;
}

char *saturn_read_file(const char *path, size_t max, size_t *len, saturn_error_t *err)
{
	saturn_error_set(err, "%s: not implemented", path);
	return NULL;
}

int saturn_write_file_atomic(const char *path, const char *data, size_t len, saturn_error_t *err)
{
	return saturn_error_set(err, "%s: not implemented", path);
}
