/* technique_int.h - what the files of the technique registry share
 * (technique.c: registry and built-ins; technique_conf.c: the configuration
 * file; technique_plugin.c: the plugin loader). Not a public header: the
 * registry stays opaque to everyone else (technique.h).
 */
#ifndef SATURN_TECHNIQUE_INT_H
#define SATURN_TECHNIQUE_INT_H

#include "technique.h"

struct saturn_techniques {
	int n;
	int cap;
	saturn_technique_t **t;
	int nhandles;
	void **handles;
};

/* Free a technique and everything it owns; NULL is allowed. */
void technique_free(saturn_technique_t *t);

/* 1 when s is a technique name: [a-z0-9_-], 1 to SATURN_TECHNIQUE_NAME_MAX
 * characters; 0 otherwise (NULL too). */
int valid_name(const char *s);

/* 1 when s is "NAME=value" with NAME a shell variable name; else 0. */
int valid_env_entry(const char *s);

/* Append a copy of "NAME=value" e / of parameter p (name copied) to t.
 * 0, or -1 with errno E2BIG (over the limit) or ENOMEM; t stays valid. */
int add_env(saturn_technique_t *t, const char *e);
int add_param(saturn_technique_t *t, const saturn_tparam_t *p);

/* Insert or replace by name; takes ownership of t. 0, or -1 (ENOMEM: t is
 * still the caller's). */
int reg_put(saturn_techniques_t *reg, saturn_technique_t *t);

#endif /* SATURN_TECHNIQUE_INT_H */
