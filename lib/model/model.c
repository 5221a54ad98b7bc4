/* model.c - problems and plans: construction, copies, consistency checks.
 * (Validation of plans lives in validate.c, JSON in formats.c.) */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int *dup_ints(const int *v, int n)
{
	int *r;

	if (!v || n <= 0)
		return NULL;
	r = malloc(sizeof(*r) * (size_t)n);
	if (r)
		memcpy(r, v, sizeof(*r) * (size_t)n);
	return r;
}

saturn_problem_t *saturn_problem_create(void)
{
	return calloc(1, sizeof(saturn_problem_t));
}

static void node_free(saturn_node_t *n)
{
	free(n->name);
	free(n->klass);
	for (int i = 0; i < n->nbusy; i++)
		free(n->busy[i].gpu_ids);
	free(n->busy);
}

static void task_free(saturn_task_t *t)
{
	free(t->id);
	for (int i = 0; i < t->noptions; i++)
		saturn_option_clear(&t->options[i]);
	free(t->options);
	free(t->running.gpu_ids);
	free(t->running.more_nodes);
}

void saturn_problem_destroy(saturn_problem_t *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nnodes; i++)
		node_free(&p->nodes[i]);
	for (int i = 0; i < p->ntasks; i++)
		task_free(&p->tasks[i]);
	for (int i = 0; i < p->nclasses; i++)
		free(p->classes[i]);
	free(p->nodes);
	free(p->tasks);
	free(p->classes);
	free(p);
}

/* Make room for one more element of size sz in *arr holding n of *cap. */
static int grow(void **arr, int n, int *cap, size_t sz)
{
	void *r;
	int ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	r = realloc(*arr, (size_t)ncap * sz);
	if (!r)
		return -1;
	*arr = r;
	*cap = ncap;
	return 0;
}

int saturn_problem_add_node(saturn_problem_t *p, const saturn_node_t *n)
{
	if (p->nnodes >= SATURN_MAX_NODES) {
		errno = E2BIG;
		return -1;
	}
	if (grow((void **)&p->nodes, p->nnodes, &p->cap_nodes, sizeof(*n)) < 0)
		return -1;
	p->nodes[p->nnodes] = *n;
	p->nodes[p->nnodes].class_idx = 0;
	return p->nnodes++;
}

int saturn_problem_add_task(saturn_problem_t *p, const saturn_task_t *t)
{
	if (p->ntasks >= SATURN_MAX_TASKS) {
		errno = E2BIG;
		return -1;
	}
	if (grow((void **)&p->tasks, p->ntasks, &p->cap_tasks, sizeof(*t)) < 0)
		return -1;
	p->tasks[p->ntasks] = *t;
	return p->ntasks++;
}

saturn_problem_t *saturn_problem_copy(const saturn_problem_t *p)
{
	saturn_problem_t *c = saturn_problem_create();

	if (!c)
		return NULL;
	c->nodes = calloc((size_t)p->nnodes + 1, sizeof(*c->nodes));
	c->tasks = calloc((size_t)p->ntasks + 1, sizeof(*c->tasks));
	c->classes = calloc((size_t)p->nclasses + 1, sizeof(*c->classes));
	if (!c->nodes || !c->tasks || !c->classes)
		goto fail;
	c->cap_nodes = p->nnodes + 1;
	c->cap_tasks = p->ntasks + 1;
	for (int i = 0; i < p->nnodes; i++) {
		const saturn_node_t *s = &p->nodes[i];
		saturn_node_t *d = &c->nodes[i];

		c->nnodes++;
		*d = *s;
		d->name = dup_or_null(s->name);
		d->klass = dup_or_null(s->klass);
		d->busy = NULL;
		d->nbusy = 0;
		if ((s->name && !d->name) || (s->klass && !d->klass))
			goto fail;
		if (s->nbusy > 0) {
			d->busy = calloc((size_t)s->nbusy, sizeof(*d->busy));
			if (!d->busy)
				goto fail;
			for (int b = 0; b < s->nbusy; b++) {
				d->busy[b] = s->busy[b];
				d->busy[b].gpu_ids = dup_ints(s->busy[b].gpu_ids,
							      s->busy[b].ngpus);
				d->nbusy++;
				if (s->busy[b].ngpus > 0 && !d->busy[b].gpu_ids)
					goto fail;
			}
		}
	}
	for (int i = 0; i < p->ntasks; i++) {
		const saturn_task_t *s = &p->tasks[i];
		saturn_task_t *d = &c->tasks[i];

		c->ntasks++;
		*d = *s;
		d->id = dup_or_null(s->id);
		d->options = NULL;
		d->noptions = 0;
		d->running.gpu_ids = dup_ints(s->running.gpu_ids,
					      s->running.ngpus *
					      saturn_running_nnodes(&s->running));
		d->running.more_nodes =
			dup_ints(s->running.more_nodes,
				 saturn_running_nnodes(&s->running) - 1);
		if ((s->id && !d->id) ||
		    (s->running.ngpus > 0 && s->running.gpu_ids &&
		     !d->running.gpu_ids) ||
		    (s->running.more_nodes && s->running.nnodes > 1 &&
		     !d->running.more_nodes))
			goto fail;
		if (s->noptions > 0) {
			d->options = calloc((size_t)s->noptions,
					    sizeof(*d->options));
			if (!d->options)
				goto fail;
			for (int o = 0; o < s->noptions; o++) {
				if (saturn_option_copy(&d->options[o], &s->options[o]) < 0)
					goto fail;
				d->noptions++;
			}
		}
	}
	for (int i = 0; i < p->nclasses; i++) {
		c->classes[i] = dup_or_null(p->classes[i]);
		c->nclasses++;
		if (p->classes[i] && !c->classes[i])
			goto fail;
	}
	return c;
fail:
	saturn_problem_destroy(c);
	errno = ENOMEM;
	return NULL;
}

double saturn_task_runtime(const saturn_task_t *t, int o)
{
	return t->batches * t->options[o].sec_per_batch;
}

bool saturn_option_fits(const saturn_problem_t *p, int t, int o, int n)
{
	const saturn_option_t *opt = &p->tasks[t].options[o];
	const saturn_node_t *node = &p->nodes[n];

	if (opt->gpus > node->gpus)
		return false;
	return opt->class_idx < 0 || opt->class_idx == node->class_idx;
}

bool saturn_option_placeable(const saturn_problem_t *p, int t, int o)
{
	const saturn_option_t *opt = &p->tasks[t].options[o];
	int k = saturn_option_nodes(opt);

	for (int c = 0; c < p->nclasses || c == 0; c++) {
		int fit = 0;

		for (int n = 0; n < p->nnodes; n++)
			fit += (p->nclasses == 0 || p->nodes[n].class_idx == c) &&
			       saturn_option_fits(p, t, o, n);
		if (fit >= k)
			return true;
	}
	return false;
}

static int class_index(const saturn_problem_t *p, const char *name)
{
	for (int i = 0; i < p->nclasses; i++)
		if (strcmp(p->classes[i], name) == 0)
			return i;
	return -1;
}

static bool finite_nonneg(double v)
{
	return isfinite(v) && v >= 0;
}

/* Check a list of GPU ids on node n: in range and distinct. */
static int check_ids(const saturn_node_t *n, const int *ids, int nids,
		     const char *what, saturn_error_t *err)
{
	unsigned long long seen = 0;

	if (nids < 1 || nids > n->gpus || !ids)
		return saturn_error_set(err,
					"%s: needs 1 to %d GPU ids on node %s",
					what, n->gpus, n->name);
	for (int i = 0; i < nids; i++) {
		if (ids[i] < 0 || ids[i] >= n->gpus)
			return saturn_error_set(
				err, "%s: GPU id %d out of range on node %s (0..%d)",
				what, ids[i], n->name, n->gpus - 1);
		if (seen & (1ULL << ids[i]))
			return saturn_error_set(err,
						"%s: GPU id %d listed twice", what,
						ids[i]);
		seen |= 1ULL << ids[i];
	}
	return 0;
}

static int check_nodes(saturn_problem_t *p, saturn_error_t *err)
{
	for (int i = 0; i < p->nnodes; i++) {
		saturn_node_t *n = &p->nodes[i];
		char what[SATURN_ERROR_LEN / 2];

		if (!n->name || !n->name[0])
			return saturn_error_set(err, "nodes[%d].name: missing or empty", i);
		if (strlen(n->name) > SATURN_MAX_ID_LEN)
			return saturn_error_set(err, "nodes[%d].name: longer than %d characters", i, SATURN_MAX_ID_LEN);
		for (int j = 0; j < i; j++)
			if (strcmp(p->nodes[j].name, n->name) == 0)
				return saturn_error_set(err, "nodes[%d].name: duplicate node name \"%s\"", i, n->name);
		if (n->gpus < 1 || n->gpus > SATURN_MAX_GPUS_PER_NODE)
			return saturn_error_set(err, "nodes[%d] (%s).gpus: must be an integer from 1 to %d", i, n->name, SATURN_MAX_GPUS_PER_NODE);
		for (int b = 0; b < n->nbusy; b++) {
			snprintf(what, sizeof(what), "nodes[%d] (%.64s).busy[%d]", i, n->name, b);
			if (!finite_nonneg(n->busy[b].until_s))
				return saturn_error_set(err, "%s.until_s: must be a finite number >= 0", what);
			if (check_ids(n, n->busy[b].gpu_ids, n->busy[b].ngpus, what, err) < 0)
				return -1;
		}
	}
	return 0;
}

static int collect_classes(saturn_problem_t *p, saturn_error_t *err)
{
	for (int i = 0; i < p->nclasses; i++)
		free(p->classes[i]);
	free(p->classes);
	p->classes = calloc((size_t)p->nnodes + 1, sizeof(*p->classes));
	p->nclasses = 0;
	if (!p->classes)
		return saturn_error_set(err, "out of memory");
	for (int i = 0; i < p->nnodes; i++) {
		const char *k = p->nodes[i].klass ? p->nodes[i].klass : "";
		int idx = class_index(p, k);

		if (idx < 0) {
			p->classes[p->nclasses] = strdup(k);
			if (!p->classes[p->nclasses])
				return saturn_error_set(err, "out of memory");
			idx = p->nclasses++;
		}
		p->nodes[i].class_idx = idx;
	}
	return 0;
}

static int check_task(saturn_problem_t *p, int ti, saturn_error_t *err)
{
	saturn_task_t *t = &p->tasks[ti];
	bool any_fits = false;
	char what[SATURN_ERROR_LEN / 2];

	if (!t->id || !t->id[0])
		return saturn_error_set(err, "tasks[%d].id: missing or empty", ti);
	if (strlen(t->id) > SATURN_MAX_ID_LEN)
		return saturn_error_set(err, "tasks[%d].id: longer than %d characters", ti, SATURN_MAX_ID_LEN);
	snprintf(what, sizeof(what), "tasks[%d] (%.64s)", ti, t->id);
	if (!finite_nonneg(t->batches))
		return saturn_error_set(err, "%s.batches: must be a finite number >= 0", what);
	if (!finite_nonneg(t->release_s))
		return saturn_error_set(err, "%s.release_s: must be a finite number >= 0", what);
	if (t->noptions < 1)
		return saturn_error_set(err, "%s.options: at least one option is needed", what);
	if (t->noptions > SATURN_MAX_OPTIONS)
		return saturn_error_set(err, "%s.options: more than %d options", what, SATURN_MAX_OPTIONS);
	for (int o = 0; o < t->noptions; o++) {
		saturn_option_t *opt = &t->options[o];
		int fit = 0;

		if (!opt->technique || !opt->technique[0])
			return saturn_error_set(err, "%s.options[%d].technique: missing or empty", what, o);
		if (opt->gpus < 1 || opt->gpus > SATURN_MAX_GPUS_PER_NODE)
			return saturn_error_set(err, "%s.options[%d].gpus: must be an integer from 1 to %d", what, o, SATURN_MAX_GPUS_PER_NODE);
		if (!isfinite(opt->sec_per_batch) || opt->sec_per_batch <= 0)
			return saturn_error_set(err, "%s.options[%d].sec_per_batch: must be a finite number > 0", what, o);
		if (!isfinite(saturn_task_runtime(t, o)) || saturn_task_runtime(t, o) > SATURN_MAX_RUNTIME_S)
			return saturn_error_set(err, "%s.options[%d]: runtime batches x sec_per_batch = %.6g s is beyond the limit of %.0f s", what, o, saturn_task_runtime(t, o), SATURN_MAX_RUNTIME_S);
		opt->class_idx = -1;
		if (opt->klass) {
			opt->class_idx = class_index(p, opt->klass);
			if (opt->class_idx < 0)
				return saturn_error_set(err, "%s.options[%d].class: no node has class \"%s\"", what, o, opt->klass);
		}
		if (opt->nodes < 0 || opt->nodes > SATURN_MAX_TASK_NODES)
			return saturn_error_set(err, "%s.options[%d].nodes: must be an integer from 1 to %d", what, o, SATURN_MAX_TASK_NODES);
		fit = saturn_option_placeable(p, ti, o);
		if (fit)
			any_fits = true;
	}
	if (!any_fits)
		return saturn_error_set(err, "%s: no option fits any node (GPU count, class or number of nodes)", what);
	if (t->is_running) {
		saturn_running_t *r = &t->running;
		const saturn_option_t *opt;
		int k = saturn_running_nnodes(r);

		if (r->node < 0 || r->node >= p->nnodes)
			return saturn_error_set(err, "%s.running.node: unknown node", what);
		if (r->option < 0 || r->option >= t->noptions)
			return saturn_error_set(err, "%s.running: technique and gpus match none of the task's options", what);
		opt = &t->options[r->option];
		if (k != saturn_option_nodes(opt))
			return saturn_error_set(err, "%s.running: on %d nodes but its option spans %d", what, k, saturn_option_nodes(opt));
		if (k > 1 && !r->more_nodes)
			return saturn_error_set(err, "%s.running: %d nodes but no list of them", what, k);
		if (opt->gpus != r->ngpus)
			return saturn_error_set(err, "%s.running.gpu_ids: %d ids for a %d-GPU option", what, r->ngpus, opt->gpus);
		for (int j = 0; j < k; j++) {
			int n = saturn_running_node_at(r, j);

			if (n < 0 || n >= p->nnodes)
				return saturn_error_set(err, "%s.running.nodes[%d]: unknown node", what, j);
			for (int m = 0; m < j; m++)
				if (saturn_running_node_at(r, m) == n ||
				    p->nodes[saturn_running_node_at(r, m)].class_idx != p->nodes[n].class_idx)
					return saturn_error_set(err, "%s.running: node %s twice or of another class", what, p->nodes[n].name);
			if (!saturn_option_fits(p, ti, r->option, n))
				return saturn_error_set(err, "%s.running: option does not fit node %s", what, p->nodes[n].name);
			if (check_ids(&p->nodes[n], r->gpu_ids + (size_t)j * (size_t)r->ngpus, r->ngpus, what, err) < 0)
				return -1;
		}
		if (t->release_s > 0)
			return saturn_error_set(err, "%s: a running task cannot have release_s > 0", what);
	}
	if (t->is_released) {
		if (t->is_running)
			return saturn_error_set(err, "%s: a running task cannot be released", what);
		if (t->released_node < 0 || t->released_node >= p->nnodes)
			return saturn_error_set(err, "%s: released to an unknown node", what);
	}
	return 0;
}

/* Running tasks must not share GPUs with each other (one pass, a GPU mask
 * per node). */
static int check_running_overlap(const saturn_problem_t *p, saturn_error_t *err)
{
	unsigned long long *used = calloc((size_t)p->nnodes + 1, sizeof(*used));

	if (!used)
		return saturn_error_set(err, "out of memory");
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];
		int n = task->running.node;

		if (!task->is_running)
			continue;
		for (int j = 0; j < saturn_running_nnodes(&task->running); j++) {
			n = saturn_running_node_at(&task->running, j);
			for (int g = 0; g < task->running.ngpus; g++) {
				int id = task->running.gpu_ids[(size_t)j * (size_t)task->running.ngpus + (size_t)g];
				unsigned long long bit = 1ULL << id;

				if (used[n] & bit) {
					free(used);
					return saturn_error_set(err, "tasks[%d] (%.64s).running.gpu_ids: GPU %d of node %s is used by another running task", t, task->id, id, p->nodes[n].name);
				}
				used[n] |= bit;
			}
		}
	}
	free(used);
	return 0;
}

static _Thread_local const saturn_problem_t *sort_p;

static int cmp_task_id(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	const char *ix = sort_p->tasks[x].id, *iy = sort_p->tasks[y].id;
	int c = strcmp(ix ? ix : "", iy ? iy : "");

	return c ? c : (x > y) - (x < y);
}

/* Duplicate task ids, by sorting (O(n log n): problems hold up to
 * SATURN_MAX_TASKS tasks). Reports the later of the first duplicate pair. */
static int check_duplicate_ids(const saturn_problem_t *p, saturn_error_t *err)
{
	int *order = malloc(sizeof(int) * ((size_t)p->ntasks + 1));
	int dup = -1;

	if (!order)
		return saturn_error_set(err, "out of memory");
	for (int i = 0; i < p->ntasks; i++)
		order[i] = i;
	sort_p = p;
	qsort(order, (size_t)p->ntasks, sizeof(int), cmp_task_id);
	sort_p = NULL;
	for (int i = 1; i < p->ntasks; i++)
		if (strcmp(p->tasks[order[i]].id, p->tasks[order[i - 1]].id) == 0 &&
		    (dup < 0 || order[i] < dup))
			dup = order[i];
	free(order);
	if (dup >= 0)
		return saturn_error_set(err, "tasks[%d].id: duplicate task id \"%s\"", dup, p->tasks[dup].id);
	return 0;
}

int saturn_problem_check(saturn_problem_t *p, saturn_error_t *err)
{
	if (p->nnodes < 1)
		return saturn_error_set(err, "nodes: at least one node is needed");
	if (check_nodes(p, err) < 0 || collect_classes(p, err) < 0)
		return -1;
	for (int t = 0; t < p->ntasks; t++)
		if (check_task(p, t, err) < 0)
			return -1;
	if (check_duplicate_ids(p, err) < 0)
		return -1;
	return check_running_overlap(p, err);
}

int saturn_problem_bad_tasks(saturn_problem_t *p,
			     void (*on_bad)(int t, const char *why, void *arg),
			     void *arg, saturn_error_t *err)
{
	saturn_error_t e = {{0}};
	unsigned long long *used = NULL;
	char *bad = NULL;
	int *order = NULL, nbad = 0;

	if (p->nnodes < 1)
		return saturn_error_set(err, "nodes: at least one node is needed");
	if (check_nodes(p, err) < 0 || collect_classes(p, err) < 0)
		return -1;
	bad = calloc((size_t)p->ntasks + 1, 1);
	order = malloc(sizeof(int) * ((size_t)p->ntasks + 1));
	used = calloc((size_t)p->nnodes + 1, sizeof(*used));
	if (!bad || !order || !used) {
		nbad = saturn_error_set(err, "out of memory");
		goto out;
	}
	for (int t = 0; t < p->ntasks; t++)
		if (check_task(p, t, &e) < 0) {
			bad[t] = 1;
			nbad++;
			on_bad(t, e.text, arg);
		}
	/* running tasks on GPUs an earlier running task holds */
	for (int t = 0; t < p->ntasks; t++) {
		const saturn_task_t *task = &p->tasks[t];
		unsigned long long m = 0;

		const saturn_running_t *r = &task->running;
		int k, clash = 0;

		if (bad[t] || !task->is_running)
			continue;
		k = saturn_running_nnodes(r);
		for (int j = 0; j < k && !clash; j++) {
			m = 0;
			for (int g = 0; g < r->ngpus; g++)
				m |= 1ULL << r->gpu_ids[(size_t)j * (size_t)r->ngpus + (size_t)g];
			clash = (used[saturn_running_node_at(r, j)] & m) != 0;
		}
		if (clash) {
			bad[t] = 1;
			nbad++;
			on_bad(t, "running on GPUs another running task holds", arg);
			continue;
		}
		for (int j = 0; j < k; j++) {
			m = 0;
			for (int g = 0; g < r->ngpus; g++)
				m |= 1ULL << r->gpu_ids[(size_t)j * (size_t)r->ngpus + (size_t)g];
			used[saturn_running_node_at(r, j)] |= m;
		}
	}
	/* the later of two tasks with one id */
	for (int i = 0; i < p->ntasks; i++)
		order[i] = i;
	sort_p = p;
	qsort(order, (size_t)p->ntasks, sizeof(int), cmp_task_id);
	sort_p = NULL;
	for (int i = 0, keep = -1; i < p->ntasks; i++) {
		int b = order[i];

		if (bad[b])
			continue;
		if (keep < 0 || strcmp(p->tasks[keep].id, p->tasks[b].id)) {
			keep = b; /* sorted by id, then index: the earliest */
			continue;
		}
		bad[b] = 1;
		nbad++;
		on_bad(b, "duplicate task id", arg);
	}
out:
	free(bad);
	free(order);
	free(used);
	return nbad;
}

/* --- plans ----------------------------------------------------------- */

saturn_plan_t *saturn_plan_create(int nassign)
{
	saturn_plan_t *plan = calloc(1, sizeof(*plan));

	if (!plan)
		return NULL;
	if (nassign > 0) {
		plan->assign = calloc((size_t)nassign, sizeof(*plan->assign));
		if (!plan->assign) {
			free(plan);
			return NULL;
		}
	}
	plan->nassign = nassign;
	for (int i = 0; i < nassign; i++)
		plan->assign[i].task = plan->assign[i].option =
			plan->assign[i].node = -1;
	return plan;
}

static void assign_free(saturn_assign_t *a)
{
	free(a->task_id);
	free(a->technique);
	free(a->node_name);
	free(a->gpu_ids);
	if (a->more_names)
		for (int j = 0; j + 1 < saturn_assign_nnodes(a); j++)
			free(a->more_names[j]);
	free(a->more_names);
	free(a->more_nodes);
}

/* The more_ arrays of a multi-node entry (k nodes), zeroed. */
static int assign_alloc_more(saturn_assign_t *a, int k)
{
	a->nnodes = k;
	if (k <= 1)
		return 0;
	a->more_nodes = calloc((size_t)k - 1, sizeof(int));
	a->more_names = calloc((size_t)k - 1, sizeof(char *));
	return a->more_nodes && a->more_names ? 0 : -1;
}

void saturn_plan_destroy(saturn_plan_t *plan)
{
	if (!plan)
		return;
	for (int i = 0; i < plan->nassign; i++)
		assign_free(&plan->assign[i]);
	free(plan->assign);
	free(plan);
}

saturn_plan_t *saturn_plan_copy(const saturn_plan_t *plan)
{
	saturn_plan_t *c = saturn_plan_create(plan->nassign);

	if (!c)
		return NULL;
	memcpy(c->method, plan->method, sizeof(c->method));
	memcpy(c->status, plan->status, sizeof(c->status));
	c->makespan_s = plan->makespan_s;
	c->lower_bound_s = plan->lower_bound_s;
	c->solve_s = plan->solve_s;
	for (int i = 0; i < plan->nassign; i++) {
		const saturn_assign_t *s = &plan->assign[i];
		saturn_assign_t *d = &c->assign[i];

		int k = saturn_assign_nnodes(s), bad = 0;

		*d = *s;
		d->more_nodes = NULL;
		d->more_names = NULL;
		d->task_id = dup_or_null(s->task_id);
		d->technique = dup_or_null(s->technique);
		d->node_name = dup_or_null(s->node_name);
		d->gpu_ids = dup_ints(s->gpu_ids, s->gpus * k);
		if (k > 1 && s->more_nodes && s->more_names) {
			bad = assign_alloc_more(d, k) < 0;
			for (int j = 0; !bad && j + 1 < k; j++) {
				d->more_nodes[j] = s->more_nodes[j];
				d->more_names[j] = dup_or_null(s->more_names[j]);
				bad = s->more_names[j] && !d->more_names[j];
			}
		} else {
			d->nnodes = 1;
		}
		if (bad || (s->task_id && !d->task_id) ||
		    (s->technique && !d->technique) ||
		    (s->node_name && !d->node_name) ||
		    (s->gpu_ids && s->gpus > 0 && !d->gpu_ids)) {
			saturn_plan_destroy(c);
			errno = ENOMEM;
			return NULL;
		}
	}
	return c;
}

int saturn_plan_set(saturn_plan_t *plan, int i, const saturn_problem_t *p,
		    int task, int option, int node, double start_s,
		    const int *gpu_ids)
{
	if (saturn_option_nodes(&p->tasks[task].options[option]) != 1) {
		errno = EINVAL;
		return -1;
	}
	return saturn_plan_set_nodes(plan, i, p, task, option, &node, start_s,
				     gpu_ids);
}

int saturn_plan_set_nodes(saturn_plan_t *plan, int i,
			  const saturn_problem_t *p, int task, int option,
			  const int *nodes, double start_s, const int *gpu_ids)
{
	saturn_assign_t *a = &plan->assign[i];
	const saturn_task_t *t = &p->tasks[task];
	const saturn_option_t *o = &t->options[option];
	int k = saturn_option_nodes(o), nids = o->gpus * k;
	saturn_assign_t n = {0};

	for (int j = 0; j < k; j++)
		for (int m = 0; m < j; m++)
			if (nodes[j] == nodes[m]) {
				errno = EINVAL;
				return -1;
			}
	n.task = task;
	n.option = option;
	n.node = nodes[0];
	n.gpus = o->gpus;
	n.start_s = start_s;
	n.end_s = start_s + saturn_task_runtime(t, option);
	n.task_id = strdup(t->id);
	n.technique = strdup(o->technique);
	n.node_name = strdup(p->nodes[nodes[0]].name);
	n.gpu_ids = calloc((size_t)nids, sizeof(int));
	if (!n.task_id || !n.technique || !n.node_name || !n.gpu_ids ||
	    assign_alloc_more(&n, k) < 0)
		goto nomem;
	for (int j = 1; j < k; j++) {
		n.more_nodes[j - 1] = nodes[j];
		n.more_names[j - 1] = strdup(p->nodes[nodes[j]].name);
		if (!n.more_names[j - 1])
			goto nomem;
	}
	if (gpu_ids)
		memcpy(n.gpu_ids, gpu_ids, sizeof(int) * (size_t)nids);
	else
		for (int g = 0; g < nids; g++)
			n.gpu_ids[g] = -1;
	assign_free(a);
	*a = n;
	return 0;
nomem:
	assign_free(&n);
	errno = ENOMEM;
	return -1;
}

bool saturn_problem_multinode(const saturn_problem_t *p)
{
	for (int t = 0; t < p->ntasks; t++)
		for (int o = 0; o < p->tasks[t].noptions; o++)
			if (saturn_option_nodes(&p->tasks[t].options[o]) > 1)
				return true;
	return false;
}

bool saturn_plan_multinode(const saturn_plan_t *plan)
{
	for (int i = 0; i < plan->nassign; i++)
		if (saturn_assign_nnodes(&plan->assign[i]) > 1)
			return true;
	return false;
}
