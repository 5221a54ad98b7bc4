/* sched_snapshot.c - the plain snapshot sched/saturn copies out of
 * slurmctld under read locks (sched_core.h): its arrays, node lookup,
 * batch grouping and task names. No Slurm symbol.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_core.h"

/* --- snapshot -------------------------------------------------------- */

saturn_snapshot_t *saturn_snapshot_create(void)
{
	return calloc(1, sizeof(saturn_snapshot_t));
}

void saturn_snapshot_reset(saturn_snapshot_t *s)
{
	s->nnodes = s->nbusy = s->njobs = 0;
	s->now = 0;
}

void saturn_snapshot_destroy(saturn_snapshot_t *s)
{
	if (!s)
		return;
	free(s->nodes);
	free(s->busy);
	free(s->jobs);
	free(s);
}

/* Room for one more entry at the end of *arr (grown by doubling); -1
 * on ENOMEM with *arr unchanged. */
static int grow(void **arr, int n, int *cap, size_t sz)
{
	if (n == *cap) {
		int nc = *cap ? *cap * 2 : 64;
		void *na = realloc(*arr, (size_t)nc * sz);

		if (!na)
			return -1;
		*arr = na;
		*cap = nc;
	}
	return 0;
}

static void *add_entry(void **arr, int *n, int *cap, size_t sz)
{
	char *p;

	if (grow(arr, *n, cap, sz) < 0)
		return NULL;
	p = (char *)*arr + (size_t)(*n)++ * sz;
	memset(p, 0, sz);
	return p;
}

saturn_snap_node_t *saturn_snapshot_add_node(saturn_snapshot_t *s)
{
	return add_entry((void **)&s->nodes, &s->nnodes, &s->cap_nodes, sizeof(*s->nodes));
}

saturn_snap_busy_t *saturn_snapshot_add_busy(saturn_snapshot_t *s)
{
	return add_entry((void **)&s->busy, &s->nbusy, &s->cap_busy, sizeof(*s->busy));
}

saturn_snap_job_t *saturn_snapshot_add_job(saturn_snapshot_t *s)
{
	saturn_snap_job_t *j = add_entry((void **)&s->jobs, &s->njobs, &s->cap_jobs,
					 sizeof(*s->jobs));

	if (j) {
		j->node = -1;
		j->task_id = -1;
		j->batches_left = -1;
		j->batches_done = -1;
	}
	return j;
}

saturn_snap_job_t *saturn_snapshot_add_job_copy(saturn_snapshot_t *s, int src)
{
	if (src < 0 || src >= s->njobs ||
	    grow((void **)&s->jobs, s->njobs, &s->cap_jobs, sizeof(*s->jobs)) < 0)
		return NULL;
	s->jobs[s->njobs] = s->jobs[src];
	return &s->jobs[s->njobs++];
}

int saturn_snapshot_node_index(const saturn_snapshot_t *s, const char *name)
{
	for (int i = 0; i < s->nnodes; i++)
		if (!strcmp(s->nodes[i].name, name))
			return i;
	return -1;
}

void saturn_snapshot_classify(saturn_snapshot_t *s)
{
	for (int i = 0; i < s->nnodes; i++) {
		saturn_snap_node_t *n = &s->nodes[i];

		if (!n->klass[0])
			saturn_node_class(s->class_rules, n->name, n->gpu_types, n->gpus, n->link,
					  n->features, n->klass, sizeof(n->klass));
	}
}

int saturn_snap_job_fits_node(const saturn_snap_job_t *j, const saturn_snap_node_t *n)
{
	if (j->constraint_bad)
		return -1;
	if (!saturn_gpu_type_match(j->gpu_type, n->gpu_types))
		return 0;
	return saturn_constraint_match(j->constraint, n->features);
}

int saturn_snapshot_classes_line(saturn_snapshot_t *s, char *buf, size_t len)
{
	int nc = 0;
	size_t at = 0;

	saturn_snapshot_classify(s);
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < s->nnodes; i++) {
		int seen = 0, nodes = 0, gpus = 0;

		for (int k = 0; k < i && !seen; k++)
			seen = !strcmp(s->nodes[k].klass, s->nodes[i].klass);
		if (seen)
			continue;
		for (int k = i; k < s->nnodes; k++)
			if (!strcmp(s->nodes[k].klass, s->nodes[i].klass)) {
				nodes++;
				gpus += s->nodes[k].gpus;
			}
		nc++;
		if (at < len) {
			int w = snprintf(buf + at, len - at, "%s%s: %d node%s, %d GPUs", nc > 1 ? "; " : "",
					 s->nodes[i].klass, nodes, nodes == 1 ? "" : "s", gpus);

			at += w > 0 ? (size_t)w : 0;
		}
	}
	return nc;
}

int saturn_snap_same_batch(const saturn_snap_job_t *a, const saturn_snap_job_t *b)
{
	return a->uid == b->uid && !strcmp(a->batch, b->batch);
}

typedef struct group_key {
	const saturn_snap_job_t *j;
	int pos;
} group_key_t;

static int cmp_group_key(const void *a, const void *b)
{
	const group_key_t *x = a, *y = b;
	int c;

	if (x->j->uid != y->j->uid)
		return x->j->uid < y->j->uid ? -1 : 1;
	if ((c = strcmp(x->j->batch, y->j->batch)))
		return c;
	return x->pos - y->pos; /* keeps input order within a batch */
}

void saturn_batch_groups_free(saturn_batch_groups_t *g)
{
	if (!g)
		return;
	free(g->member);
	free(g->first);
	memset(g, 0, sizeof(*g));
}

int saturn_batch_groups(const saturn_snapshot_t *s, const int *jobs, int n,
			saturn_batch_groups_t *g)
{
	group_key_t *k = NULL;

	memset(g, 0, sizeof(*g));
	if (n < 0)
		n = 0;
	g->member = malloc(sizeof(int) * (size_t)(n ? n : 1));
	g->first = malloc(sizeof(int) * (size_t)(n + 1));
	k = malloc(sizeof(*k) * (size_t)(n ? n : 1));
	if (!g->member || !g->first || !k) {
		free(k);
		saturn_batch_groups_free(g);
		errno = ENOMEM;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		k[i].j = &s->jobs[jobs ? jobs[i] : i];
		k[i].pos = i;
	}
	qsort(k, (size_t)n, sizeof(*k), cmp_group_key);
	for (int i = 0; i < n; i++) {
		if (i == 0 || !saturn_snap_same_batch(k[i - 1].j, k[i].j))
			g->first[g->ngroups++] = i;
		g->member[i] = k[i].pos;
	}
	g->first[g->ngroups] = n;
	free(k);
	return 0;
}

int saturn_snapshot_max_gpus(const saturn_snapshot_t *s, uint64_t part_mask)
{
	int maxg = 0;

	for (int n = 0; n < s->nnodes; n++)
		if ((!part_mask || (part_mask & s->nodes[n].part_mask)) && s->nodes[n].gpus > maxg)
			maxg = s->nodes[n].gpus;
	return maxg;
}

void saturn_sched_task_name(const saturn_snap_job_t *j, char *buf, size_t len)
{
	if (j->task_id >= 0 && j->array_job_id)
		snprintf(buf, len, "%u_%d", j->array_job_id, j->task_id);
	else
		snprintf(buf, len, "%u", j->job_id);
}
