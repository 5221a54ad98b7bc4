/* instance.c - the planner's compact view of a problem: non-dominated
 * options per task, running tasks pinned, busy GPUs and running tasks folded
 * into a per-node base capacity profile; plus solutions, the clock and the
 * abort check shared by the search phases. The caller's problem is read,
 * never written. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner_int.h"

double spase_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

spase_clock_t spase_clock_in(double budget_s)
{
	spase_clock_t c = {0};

	c.t0 = spase_now();
	c.deadline = c.t0 + budget_s;
	return c;
}

int spase_stop(spase_clock_t *c)
{
	if (c->stopped)
		return 1;
	c->polls++;
	if (spase_now() >= c->deadline)
		c->stopped = 1;
	else if (c->abort_cb && c->abort_cb(c->abort_arg))
		c->stopped = 1;
	return c->stopped;
}

int spase_stop_floor(spase_clock_t *c)
{
	/* the floor first: no poll of the abort callback before it, so that
	 * small problems poll it exactly as often as they did */
	return spase_now() - c->t0 >= SPASE_FLOOR_S && spase_stop(c);
}

int spase_fits(const spase_inst_t *in, int t, int o, int n)
{
	const spase_opt_t *op = &in->t[t].opt[o];

	if (in->t[t].pinned)
		return n == in->t[t].pin_node;
	if (in->t[t].rel_node >= 0 && n != in->t[t].rel_node)
		return 0;
	if (op->gpus > in->gpus[n])
		return 0;
	return op->klass < 0 || op->klass == in->klass[n];
}

static int opt_cmp(const void *a, const void *b)
{
	const spase_opt_t *x = a, *y = b;

	if (x->width != y->width)
		return x->width < y->width ? -1 : 1;
	if (x->nodes != y->nodes)
		return x->nodes < y->nodes ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	return x->orig - y->orig;
}

/* Whether option a (index ia) makes option b (index ib) useless: no more
 * GPUs, no slower, allowed wherever b is, and strictly better or earlier in
 * the list (so one of two equal options survives). Across node counts only
 * a one-node option can dominate (it fits on the first node of any gang b
 * could have); otherwise both must span the same number of nodes. */
static int dominates(const saturn_option_t *a, int ia, double da,
		     const saturn_option_t *b, int ib, double db)
{
	int ka = saturn_option_nodes(a), kb = saturn_option_nodes(b);

	if (ka != kb && ka != 1)
		return 0;
	if (a->gpus > b->gpus || da > db)
		return 0;
	if (ka != kb)
		return a->class_idx < 0 || a->class_idx == b->class_idx;
	if (a->class_idx >= 0 && a->class_idx != b->class_idx)
		return 0;
	if (a->gpus < b->gpus || da < db || a->class_idx != b->class_idx)
		return 1;
	return ia < ib;
}

static int build_task(spase_inst_t *in, int ti)
{
	const saturn_task_t *st = &in->p->tasks[ti];
	spase_task_t *t = &in->t[ti];

	t->release = st->release_s;
	t->zero = st->batches <= 0;
	t->rel_node = -1;
	t->opt = calloc((size_t)st->noptions, sizeof(*t->opt));
	if (!t->opt)
		return -1;
	if (st->is_running) {
		int o = st->running.option;

		t->pinned = 1;
		t->pin_node = st->running.node;
		t->release = 0;
		t->opt[0].orig = o;
		t->opt[0].gpus = st->options[o].gpus;
		t->opt[0].nodes = saturn_option_nodes(&st->options[o]);
		t->opt[0].width = t->opt[0].gpus * t->opt[0].nodes;
		t->opt[0].klass = st->options[o].class_idx;
		t->opt[0].dur = saturn_task_runtime(st, o);
		t->nopt = 1;
	} else {
		/* placeable once per option: it scans the nodes, and the
		 * dominance test below is quadratic in the options (24
		 * options x 5,000 tasks x 128 nodes took 2.6 s, issue 22) */
		char *place = malloc((size_t)st->noptions);

		if (!place)
			return -1;
		for (int o = 0; o < st->noptions; o++)
			place[o] = (char)saturn_option_placeable(in->p, ti, o);
		for (int o = 0; o < st->noptions; o++) {
			const saturn_option_t *so = &st->options[o];
			double d = saturn_task_runtime(st, o);
			int dom = 0;

			if (!place[o])
				continue;
			for (int q = 0; q < st->noptions && !dom; q++) {
				if (q == o || !place[q])
					continue;
				dom = dominates(&st->options[q], q,
						saturn_task_runtime(st, q), so,
						o, d);
			}
			if (dom)
				continue;
			t->opt[t->nopt].orig = o;
			t->opt[t->nopt].gpus = so->gpus;
			t->opt[t->nopt].nodes = saturn_option_nodes(so);
			/* the sort below orders by width */
			t->opt[t->nopt].width = so->gpus * saturn_option_nodes(so);
			t->opt[t->nopt].klass = so->class_idx;
			t->opt[t->nopt].dur = d;
			t->nopt++;
		}
		free(place);
		if (t->nopt == 0)
			return -1; /* saturn_problem_check() rules this out */
		qsort(t->opt, (size_t)t->nopt, sizeof(*t->opt), opt_cmp);
	}
	if (st->is_released && !st->is_running && st->released_node >= 0 &&
	    st->released_node < in->nn) {
		/* only when some option fits that node (else: unrestricted),
		 * and then only the options that fit it: one that does not
		 * fit could not be placed at all (the decoder failed on it,
		 * reported as out of memory) */
		int n = st->released_node, k = 0;

		for (int o = 0; o < t->nopt; o++)
			if (t->opt[o].nodes == 1 && t->opt[o].gpus <= in->gpus[n] &&
			    (t->opt[o].klass < 0 || t->opt[o].klass == in->klass[n]))
				t->opt[k++] = t->opt[o];
		if (k > 0) {
			t->rel_node = n;
			t->nopt = k;
		}
	}
	for (int o = 0; o < t->nopt; o++) {
		spase_opt_t *op = &t->opt[o];

		op->width = op->gpus * op->nodes;
		op->area = op->width * op->dur;
		if (op->area < t->opt[t->min_area_opt].area)
			t->min_area_opt = o;
		if (op->dur < t->opt[t->fastest_opt].dur)
			t->fastest_opt = o;
	}
	return 0;
}

/* The base profile of node n: the count view of its GPUs' free times. */
static int build_node(spase_inst_t *in, int n)
{
	int g = in->p->nodes[n].gpus;

	if (spase_prof_init(&in->base[n], 2 * g + 4) < 0)
		return -1;
	return spase_prof_from_gpus(&in->base[n], in->gpu_free[n], g);
}

void spase_inst_destroy(spase_inst_t *in)
{
	if (!in)
		return;
	if (in->t)
		for (int i = 0; i < in->nt; i++)
			free(in->t[i].opt);
	spase_gpu_free_destroy(in->gpu_free, in->nn);
	if (in->base)
		for (int n = 0; n < in->nn; n++)
			spase_prof_free(&in->base[n]);
	free(in->t);
	free(in->gpus);
	free(in->klass);
	free(in->base);
	free(in);
}

spase_inst_t *spase_inst_create(const saturn_problem_t *p)
{
	spase_inst_t *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->p = p;
	in->max_nodes = 1;
	in->nt = p->ntasks;
	in->nn = p->nnodes;
	in->t = calloc((size_t)in->nt + 1, sizeof(*in->t));
	in->gpus = calloc((size_t)in->nn, sizeof(int));
	in->klass = calloc((size_t)in->nn, sizeof(int));
	/* per GPU id first (busy GPUs and running tasks on their ids) */
	in->gpu_free = spase_gpu_free_create(p);
	in->base = calloc((size_t)in->nn, sizeof(*in->base));
	if (!in->t || !in->gpus || !in->klass || !in->gpu_free || !in->base)
		goto fail;
	for (int n = 0; n < in->nn; n++) {
		in->gpus[n] = p->nodes[n].gpus;
		in->klass[n] = p->nodes[n].class_idx;
		in->total_gpus += in->gpus[n];
		if (in->gpus[n] > in->max_gpus)
			in->max_gpus = in->gpus[n];
	}
	for (int i = 0; i < in->nt; i++) {
		if (build_task(in, i) < 0)
			goto fail;
		for (int o = 0; o < in->t[i].nopt; o++)
			if (in->t[i].opt[o].nodes > in->max_nodes)
				in->max_nodes = in->t[i].opt[o].nodes;
		if (in->t[i].pinned) {
			if (in->t[i].opt[0].dur > in->pinned_end)
				in->pinned_end = in->t[i].opt[0].dur;
		} else {
			in->nfree++;
		}
	}
	for (int n = 0; n < in->nn; n++)
		if (build_node(in, n) < 0)
			goto fail;
	return in;
fail:
	spase_inst_destroy(in);
	errno = ENOMEM;
	return NULL;
}

spase_sol_t *spase_sol_create(const spase_inst_t *in)
{
	spase_sol_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opt = calloc((size_t)in->nt + 1, sizeof(int));
	s->order = calloc((size_t)in->nt + 1, sizeof(int));
	if (!s->opt || !s->order) {
		spase_sol_destroy(s);
		return NULL;
	}
	for (int i = 0; i < in->nt; i++)
		s->order[i] = i;
	return s;
}

void spase_sol_destroy(spase_sol_t *s)
{
	if (!s)
		return;
	free(s->opt);
	free(s->order);
	free(s);
}

void spase_sol_copy(const spase_inst_t *in, spase_sol_t *dst,
		    const spase_sol_t *src)
{
	memcpy(dst->opt, src->opt, sizeof(int) * (size_t)in->nt);
	memcpy(dst->order, src->order, sizeof(int) * (size_t)in->nt);
}
