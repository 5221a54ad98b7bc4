/* mu_parse.c - the optional "batches" of a saturn-problem/1 document
 * (doc/formats.md) for saturn plan --objective (multiuser.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "multiuser.h"

/* --- batches in saturn-problem/1 --------------------------------------- */

#define MU_MAX_BATCHES 10000

typedef struct mu_id {
	const char *id;
	int task;
} mu_id_t;

static int cmp_id(const void *a, const void *b)
{
	return strcmp(((const mu_id_t *)a)->id, ((const mu_id_t *)b)->id);
}

int saturn_mu_parse(const char *buf, size_t len, const saturn_problem_t *p, saturn_mu_t *m,
		    saturn_error_t *err)
{
	json_object *root = sj_parse(buf, len, err), *arr;
	mu_id_t *ids = NULL;
	char **users = NULL, **names = NULL;
	int *ucap_g = NULL, *ucap_j = NULL, nb = 0, nu = 0, rc = -1, rest = 0;
	size_t n;

	memset(m, 0, sizeof(*m));
	if (!root)
		return -1;
	if (sj_get(root, "", "batches", false, json_type_array, &arr, err) < 0)
		goto out;
	if (!arr) {
		rc = saturn_mu_init(m, p->ntasks, 1, 1, 0) < 0 ?
			     saturn_error_set(err, "out of memory") :
			     0;
		goto out;
	}
	n = json_object_array_length(arr);
	if (n > MU_MAX_BATCHES) {
		saturn_error_set(err, "batches: more than %d batches", MU_MAX_BATCHES);
		goto out;
	}
	ids = calloc((size_t)p->ntasks + 1, sizeof(*ids));
	users = calloc(n + 2, sizeof(char *));
	names = calloc(n + 2, sizeof(char *));
	ucap_g = calloc(n + 2, sizeof(int));
	ucap_j = calloc(n + 2, sizeof(int));
	if (!ids || !users || !names || !ucap_g || !ucap_j ||
	    saturn_mu_init(m, p->ntasks, (int)n + 1, (int)n + 1, (int)n + 1) < 0) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	for (int t = 0; t < p->ntasks; t++) {
		ids[t].id = p->tasks[t].id;
		ids[t].task = t;
		m->batch_of_task[t] = -1;
	}
	qsort(ids, (size_t)p->ntasks, sizeof(*ids), cmp_id);
	for (size_t i = 0; i < n; i++) {
		json_object *b = json_object_array_get_idx(arr, i), *tasks;
		char ctx[48], *user = NULL;
		double w = 1, sub = 0;
		int mg = 0, mj = 0, rg = 0, u;

		snprintf(ctx, sizeof(ctx), "batches[%zu]", i);
		if (!json_object_is_type(b, json_type_object)) {
			saturn_error_set(err, "%s: must be an object", ctx);
			goto out;
		}
		if (sj_str(b, ctx, "name", true, true, SATURN_BATCH_NAME_MAX, &names[i], err) < 0 ||
		    sj_str(b, ctx, "user", false, true, SATURN_BATCH_NAME_MAX, &user, err) < 0 ||
		    sj_num(b, ctx, "weight", false, 0, true, &w, err) < 0 ||
		    sj_num(b, ctx, "submit_s", false, -1e12, false, &sub, err) < 0 ||
		    sj_int(b, ctx, "max_gpus", false, 0, 1000000, &mg, err) < 0 ||
		    sj_int(b, ctx, "max_jobs", false, 0, 1000000, &mj, err) < 0 ||
		    sj_int(b, ctx, "request_gpus", false, 0, SATURN_MAX_GPUS_PER_NODE, &rg, err) < 0 ||
		    sj_get(b, ctx, "tasks", true, json_type_array, &tasks, err) < 0) {
			free(user);
			goto out;
		}
		for (size_t k = 0; k < i; k++)
			if (!strcmp(names[k], names[i])) {
				saturn_error_set(err, "%s.name: \"%s\" is batches[%zu]'s name too", ctx,
						 names[i], k);
				free(user);
				goto out;
			}
		if (!user && !(user = strdup(names[i]))) {
			saturn_error_set(err, "out of memory");
			goto out;
		}
		for (u = 0; u < nu && strcmp(users[u], user); u++)
			;
		if (u == nu)
			users[nu++] = user;
		else
			free(user);
		if (mg && (!ucap_g[u] || mg < ucap_g[u]))
			ucap_g[u] = mg;
		if (mj && (!ucap_j[u] || mj < ucap_j[u]))
			ucap_j[u] = mj;
		m->weight[nb] = w;
		m->submit[nb] = sub;
		m->user_of_batch[nb] = u;
		for (size_t k = 0; k < json_object_array_length(tasks); k++) {
			json_object *v = json_object_array_get_idx(tasks, k);
			mu_id_t key = {json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL, 0}, *f;

			if (!key.id) {
				saturn_error_set(err, "%s.tasks[%zu]: must be a task id (a string)", ctx, k);
				goto out;
			}
			f = bsearch(&key, ids, (size_t)p->ntasks, sizeof(*ids), cmp_id);
			if (!f) {
				saturn_error_set(err, "%s.tasks[%zu]: no task \"%.64s\" in the problem", ctx, k, key.id);
				goto out;
			}
			if (m->batch_of_task[f->task] >= 0) {
				saturn_error_set(err, "%s.tasks[%zu]: task \"%.64s\" is in two batches", ctx, k, key.id);
				goto out;
			}
			m->batch_of_task[f->task] = nb;
			m->req_gpus[f->task] = rg;
		}
		nb++;
	}
	/* the rest: one batch of its own user */
	for (int t = 0; t < p->ntasks; t++)
		if (m->batch_of_task[t] < 0) {
			m->batch_of_task[t] = nb;
			rest = 1;
		}
	if (rest) {
		m->user_of_batch[nb] = nu++;
		nb++;
	}
	m->nbatches = nb;
	m->nusers = nu;
	/* one limit group per user with a cap */
	m->ngroups = 0;
	for (int u = 0; u < nu; u++) {
		if (!ucap_g[u] && !ucap_j[u])
			continue;
		m->max_gpus[m->ngroups] = ucap_g[u];
		m->max_jobs[m->ngroups] = ucap_j[u];
		for (int t = 0; t < p->ntasks; t++)
			if (m->user_of_batch[m->batch_of_task[t]] == u)
				m->group_of_task[t][0] = m->ngroups;
		m->ngroups++;
	}
	rc = 1;
out:
	if (rc < 0)
		saturn_mu_free(m);
	for (size_t i = 0; users && i < n + 2; i++)
		free(users[i]);
	for (size_t i = 0; names && i < n + 2; i++)
		free(names[i]);
	free(users);
	free(names);
	free(ucap_g);
	free(ucap_j);
	free(ids);
	json_object_put(root);
	return rc;
}
