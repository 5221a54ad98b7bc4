/* internode.c - predicted multi-node options from an inter-node bandwidth
 * and the one-node scaling fit (internode.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internode.h"
#include "model.h"
#include "sweep.h"

#define NG (SATURN_SCALE_MAX_GPUS + 1)

static int same_class(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The NCCL bus bandwidths of the hardware entry of class klass into ar/ag
 * (0 = not measured). */
static void class_bw(const saturn_profile_t *pr, const char *klass,
		     double *ar, double *ag)
{
	memset(ar, 0, NG * sizeof(*ar));
	memset(ag, 0, NG * sizeof(*ag));
	for (int h = 0; h < pr->nhw; h++) {
		const saturn_profile_hw_t *hw = &pr->hw[h];

		if (!same_class(hw->klass, klass))
			continue;
		for (int i = 0; i < hw->nnccl; i++) {
			int g = hw->nccl[i].gpus;

			if (g >= 2 && g < NG) {
				ar[g] = hw->nccl[i].allreduce_busbw_gbs;
				ag[g] = hw->nccl[i].allgather_busbw_gbs;
			}
		}
		return;
	}
}

static int has_option(const saturn_profile_task_t *pt, int nold,
		      const saturn_profile_option_t *add, int nadd,
		      const char *tech, int g, int k)
{
	for (int i = 0; i < nold + nadd; i++) {
		const saturn_profile_option_t *o =
		    i < nold ? &pt->options[i] : &add[i - nold];

		if (o->gpus == g && saturn_profile_option_nodes(o) == k &&
		    !strcmp(o->technique, tech))
			return 1;
	}
	return 0;
}

static void free_options(saturn_profile_option_t *o, int n)
{
	for (int i = 0; i < n; i++) {
		free(o[i].technique);
		free(o[i].reason);
		free(o[i].params);
	}
	free(o);
}

/* The predictions of technique tech for task pt, appended to add[*nadd]
 * (room for `room` in all). 0, or -1 on ENOMEM. */
static int predict_technique(const saturn_profile_t *pr,
			     const saturn_profile_task_t *pt, const char *tech,
			     const saturn_internode_t *in,
			     saturn_profile_option_t *add, int *nadd, int room)
{
	saturn_scale_kind_t kind = saturn_scale_kind(tech);
	double ar[NG], ag[NG], t[NG], inter[NG];
	int g[NG], n = 0, gmax = 0;
	const saturn_profile_option_t *one[NG] = {0};
	saturn_bw_table_t bw = {NG - 1, ar, ag};
	saturn_scale_fit_t fit;
	char reason[256];
	const char *size = "the fit";
	int fit_size = 1;

	if (kind == SATURN_SCALE_PIPELINE)
		return 0;
	class_bw(pr, pt->klass, ar, ag);
	for (int i = 0; i < pt->noptions; i++) {
		const saturn_profile_option_t *o = &pt->options[i];

		if (saturn_profile_option_nodes(o) != 1 || o->gpus < 1 ||
		    o->gpus >= NG || strcmp(o->technique, tech) ||
		    !(o->sec_per_batch > 0) ||
		    (o->status != SATURN_OPT_MEASURED &&
		     o->status != SATURN_OPT_PREDICTED))
			continue;
		one[o->gpus] = o;
		if (o->gpus > gmax)
			gmax = o->gpus;
		if (o->status != SATURN_OPT_MEASURED)
			continue;
		/* without the bus bandwidth at g, c would not be in GB */
		if (o->gpus >= 2 &&
		    !((kind == SATURN_SCALE_SHARDED ? ag : ar)[o->gpus] > 0))
			return 0;
		g[n] = o->gpus;
		t[n++] = o->sec_per_batch;
	}
	if (n < 2 || gmax < 2 ||
	    saturn_scale_fit(kind, 0, n, g, t, &bw, &fit, NULL) < 0)
		return 0;
	/* With one bus bandwidth at every count, comm(g) is a constant
	 * minus a multiple of 1/g: the fit cannot tell it from a and b and
	 * leaves c at 0. Then the size comes from the peak memory of the
	 * largest count: 16 bytes of mixed-precision Adam state per
	 * parameter, 2 of them the 16-bit gradients (fsdp: the shards of
	 * all g GPUs), with nothing hidden behind compute (an upper
	 * bound). */
	if (!(fit.c > 0)) {
		const saturn_profile_option_t *o = one[gmax];

		if (!(o->peak_mem_mb > 0))
			return 0;
		fit.c = o->peak_mem_mb / 8.0 / 1000.0 *
			(kind == SATURN_SCALE_SHARDED ? gmax : 1);
		size = "the peak memory";
		fit_size = 0;
	}
	/* per node: the whole node's count and half of it */
	for (int half = 1; half >= 0; half--) {
		int q = half ? gmax / 2 : gmax;
		const saturn_profile_option_t *o = q >= 2 ? one[q] : NULL;
		double node_bw, f;

		if (!o)
			continue;
		node_bw = (kind == SATURN_SCALE_SHARDED ? ag : ar)[q];
		f = saturn_scale_predict(&fit, q, &bw);
		for (int k = 2; k <= in->max_nodes && k * q < NG; k++) {
			saturn_profile_option_t *p = &add[*nadd];
			int N = k * q;
			double b = node_bw > 0 && node_bw < in->gbs ? node_bw
								    : in->gbs;
			saturn_bw_table_t x = {NG - 1, inter, inter};
			double s;

			if (*nadd >= room)
				return 0;
			if (has_option(pt, pt->noptions, add, *nadd, tech, q, k))
				continue;
			for (int i = 0; i < NG; i++)
				inter[i] = b;
			s = saturn_scale_predict(&fit, N, &x);
			if (f > 0 && fit_size)
				s *= o->sec_per_batch / f;
			if (!(s > 0) || s >= o->sec_per_batch ||
			    s > SATURN_MAX_RUNTIME_S)
				continue;
			snprintf(reason, sizeof(reason),
				 "predicted from the inter-node bandwidth %.3g "
				 "GB/s (%s), the scaling fit of %d measured "
				 "GPU counts on one node and a communicated size "
				 "of %.3g GB from %s; re-measured before use",
				 in->gbs, in->source ? in->source : "set", n,
				 fit.c, size);
			p->technique = strdup(tech);
			p->reason = strdup(reason);
			p->params = o->params ? strdup(o->params) : NULL;
			if (!p->technique || !p->reason ||
			    (o->params && !p->params)) {
				free(p->technique);
				free(p->reason);
				free(p->params);
				memset(p, 0, sizeof(*p));
				return -1;
			}
			p->gpus = q;
			p->nodes = k;
			p->sec_per_batch = s;
			p->peak_mem_mb = kind == SATURN_SCALE_SHARDED
					     ? o->peak_mem_mb * q / N
					     : o->peak_mem_mb;
			p->status = SATURN_OPT_PREDICTED;
			(*nadd)++;
		}
	}
	return 0;
}

int saturn_profile_predict_nodes(saturn_profile_t *pr,
				 const saturn_internode_t *in,
				 saturn_error_t *err)
{
	saturn_profile_option_t **add = NULL;
	int *nadd = NULL, *room_of = NULL, total = 0;

	if (!pr || !in || !(in->gbs > 0) || in->gbs > 1e6)
		return saturn_error_set(
		    err, "inter-node bandwidth: %g GB/s is not in (0, 1e6]",
		    in ? in->gbs : 0.0);
	if (in->max_nodes < 2 || in->max_nodes > SATURN_MAX_TASK_NODES)
		return saturn_error_set(
		    err, "inter-node prediction: %d nodes is not in 2..%d",
		    in->max_nodes, SATURN_MAX_TASK_NODES);
	if (pr->ntasks < 1)
		return 0;
	if (!(add = calloc(pr->ntasks, sizeof(*add))) ||
	    !(nadd = calloc(pr->ntasks, sizeof(*nadd))) ||
	    !(room_of = calloc(pr->ntasks, sizeof(*room_of))))
		goto enomem;
	for (int ti = 0; ti < pr->ntasks; ti++) {
		saturn_profile_task_t *pt = &pr->tasks[ti];
		int room = SATURN_MAX_OPTIONS - pt->noptions, most = 0;

		/* at most 2 counts x (max_nodes - 1) node counts per technique */
		for (int i = 0; i < pt->noptions; i++) {
			int seen = 0;

			for (int j = 0; j < i && !seen; j++)
				seen = !strcmp(pt->options[j].technique,
					       pt->options[i].technique);
			most += seen ? 0 : 2 * (in->max_nodes - 1);
		}
		if (most < room)
			room = most;
		if (room <= 0)
			continue;
		if (!(add[ti] = calloc(room, sizeof(**add))))
			goto enomem;
		room_of[ti] = room;
		for (int i = 0; i < pt->noptions; i++) {
			const char *tech = pt->options[i].technique;
			int seen = 0;

			for (int j = 0; j < i && !seen; j++)
				seen = !strcmp(pt->options[j].technique, tech);
			if (!seen &&
			    predict_technique(pr, pt, tech, in, add[ti],
					      &nadd[ti], room_of[ti]) < 0)
				goto enomem;
		}
	}
	/* commit: nothing below fails but the reallocs, done first */
	for (int ti = 0; ti < pr->ntasks; ti++) {
		saturn_profile_task_t *pt = &pr->tasks[ti];
		saturn_profile_option_t *o;

		if (!nadd[ti])
			continue;
		o = realloc(pt->options,
			    (size_t)(pt->noptions + nadd[ti]) * sizeof(*o));
		if (!o)
			goto enomem;
		pt->options = o;
	}
	for (int ti = 0; ti < pr->ntasks; ti++) {
		saturn_profile_task_t *pt = &pr->tasks[ti];

		if (nadd[ti])
			memcpy(pt->options + pt->noptions, add[ti],
			       (size_t)nadd[ti] * sizeof(*add[ti]));
		pt->noptions += nadd[ti];
		total += nadd[ti];
		free(add[ti]);
	}
	free(add);
	free(nadd);
	free(room_of);
	return total;
enomem:
	for (int ti = 0; add && nadd && ti < pr->ntasks; ti++)
		free_options(add[ti], nadd[ti]);
	if (add && !nadd)
		for (int ti = 0; ti < pr->ntasks; ti++)
			free(add[ti]);
	free(add);
	free(nadd);
	free(room_of);
	return saturn_error_set(err, "inter-node prediction: %s",
				strerror(ENOMEM));
}
