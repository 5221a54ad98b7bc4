/* option.c - one option's strings (clear, copy) and the one key by which
 * an option is matched when its identity comes from outside (model.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

void saturn_option_clear(saturn_option_t *o)
{
	if (!o)
		return;
	free(o->technique);
	free(o->klass);
	free(o->source);
	o->technique = o->klass = o->source = NULL;
}

/* A copy of s, or NULL; *ok cleared when s was not NULL and the copy
 * failed. */
static char *dup_opt(const char *s, int *ok)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*ok = 0;
	return d;
}

int saturn_option_copy(saturn_option_t *dst, const saturn_option_t *src)
{
	int ok = 1;

	*dst = *src;
	dst->technique = dup_opt(src->technique, &ok);
	dst->klass = dup_opt(src->klass, &ok);
	dst->source = dup_opt(src->source, &ok);
	if (!ok) {
		saturn_option_clear(dst);
		memset(dst, 0, sizeof(*dst));
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int saturn_task_find_option(const saturn_task_t *t, const char *technique, int gpus, int nodes,
			    const char *klass)
{
	if (!t || !technique)
		return -1;
	if (nodes < 1)
		nodes = 1;
	for (int o = 0; o < t->noptions; o++) {
		const saturn_option_t *x = &t->options[o];

		if (x->gpus == gpus && saturn_option_nodes(x) == nodes && x->technique &&
		    !strcmp(x->technique, technique) &&
		    (!klass || !x->klass || !strcmp(x->klass, klass)))
			return o;
	}
	return -1;
}
