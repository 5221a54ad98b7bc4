/* probe.c - saturn-profile's node probe: GPUs and memory through the
 * hardware backend (hw.h), NCCL bus bandwidth for each GPU count, links from
 * hwloc (or a recorded topology, or gres.conf), falling back to the CPU
 * stand-in's model. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats.h"
#include "hw.h"
#include "probe.h"
#include "topology.h"

int probe_hw(const struct opts *o, int ngpus, saturn_profile_hw_t *hw,
	     double *ar, double *ag)
{
	const saturn_hw_ops_t *ops = &saturn_hw_cpu;
	saturn_topology_t *topo = NULL;
	saturn_error_t err = {{0}};
	void *ctx = NULL;
	char model[256], host[256] = "localhost";
	double mem = 0;

	if (strcmp(o->backend, "cuda") == 0 ||
	    strcmp(o->backend, "auto") == 0) {
#ifdef HAVE_CUDA
		ops = &saturn_hw_cuda;
		if (ops->open(&ctx, ngpus, &err) < 0) {
			if (strcmp(o->backend, "cuda") == 0) {
				fprintf(stderr, "%s: cuda backend: %s\n", prog,
					err.text);
				return strstr(err.text, "no CUDA device") ? 77
									  : -1;
			}
			ops = &saturn_hw_cpu;
			ctx = NULL;
		}
#else
		if (strcmp(o->backend, "cuda") == 0) {
			fprintf(stderr, "%s: built without CUDA\n", prog);
			return 77;
		}
#endif
	} else if (strcmp(o->backend, "cpu") != 0) {
		fprintf(stderr, "%s: --backend: want auto, cpu or cuda\n",
			prog);
		return -1;
	}
	if (!ctx && ops->open(&ctx, ngpus, &err) < 0) {
		fprintf(stderr, "%s: %s backend: %s\n", prog, ops->name,
			err.text);
		return -1;
	}
	if (ops->gpu_info(ctx, 0, model, sizeof(model), &mem, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		ops->close(ctx);
		return -1;
	}
	gethostname(host, sizeof(host) - 1);
	hw->klass = o->klass ? xstrdup(o->klass) : NULL;
	hw->node = xstrdup(host);
	hw->gpu_model = xstrdup(model);
	hw->gpus = ngpus;
	hw->gpu_mem_mb = mem;
	hw->nccl = calloc(ngpus, sizeof(*hw->nccl));
	for (int n = 2; n <= ngpus; n++) {
		saturn_nccl_bw_t *b = &hw->nccl[hw->nnccl];

		b->gpus = n;
		if (saturn_hw_busbw(ops, ctx, SATURN_ALLREDUCE, n,
				    &b->allreduce_busbw_gbs, &err) < 0 ||
		    saturn_hw_busbw(ops, ctx, SATURN_ALLGATHER, n,
				    &b->allgather_busbw_gbs, &err) < 0) {
			fprintf(stderr,
				"%s: bandwidth over %d GPUs: %s (predictions "
				"use volume only)\n",
				prog, n, err.text);
			continue;
		}
		ar[n] = b->allreduce_busbw_gbs;
		ag[n] = b->allgather_busbw_gbs;
		hw->nnccl++;
	}
	ops->close(ctx);

	/* links: a recorded/real hwloc topology, or gres.conf, or the stand-in
	 */
	if (o->topology)
		topo = saturn_topology_load_xml(o->topology, &err);
	else if (o->gres_conf) {
		size_t len;
		char *txt = saturn_read_file(o->gres_conf, 1 << 20, &len, &err);

		topo = txt ? saturn_topology_from_gres(
				 txt, 25.0, SATURN_PCIE_DEFAULT_GBS, &err)
			   : NULL;
		free(txt);
	} else if (ops != &saturn_hw_cpu) {
		topo = saturn_topology_load_system(&err);
	}
	if ((o->topology || o->gres_conf) && !topo) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		return -1;
	}
	hw->link_gbs = calloc((size_t)ngpus * ngpus, sizeof(double));
	if (topo && topo->ngpus >= ngpus) {
		for (int i = 0; i < ngpus; i++)
			for (int j = 0; j < ngpus; j++)
				hw->link_gbs[i * ngpus + j] =
				    topo->link_gbs[i * topo->ngpus + j];
		hw->interconnect = xstrdup(topo->interconnect);
		if (ops == &saturn_hw_cpu && topo->gpu_mem_mb > 0)
			hw->gpu_mem_mb = hw->gpu_mem_mb; /* the stand-in's model
							    rules trials */
	} else {
		saturn_emu_hw_t eh;

		if (saturn_emu_hw_from_env(&eh, &err) < 0)
			saturn_emu_hw_default(&eh, 1);
		for (int i = 0; i < ngpus; i++)
			for (int j = 0; j < ngpus; j++)
				hw->link_gbs[i * ngpus + j] =
				    i == j ? 0 : eh.link_gbs;
		hw->interconnect = xstrdup(
		    ops == &saturn_hw_cpu ? (eh.nvlink ? "nvswitch" : "pcie")
					  : "unknown");
	}
	saturn_topology_destroy(topo);
	return 0;
}

/* --show-topology: print what --topology / --gres-conf (or this machine)
 * says, one line, for scripts and tests. */
int show_topology(const struct opts *o)
{
	saturn_error_t err = {{0}};
	saturn_topology_t *t;

	if (o->gres_conf) {
		size_t len;
		char *txt = saturn_read_file(o->gres_conf, 1 << 20, &len, &err);

		t = txt ? saturn_topology_from_gres(
			      txt, 25.0, SATURN_PCIE_DEFAULT_GBS, &err)
			: NULL;
		free(txt);
	} else {
		t = o->topology ? saturn_topology_load_xml(o->topology, &err)
				: saturn_topology_load_system(&err);
	}
	if (!t) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		return 1;
	}
	printf("gpus=%d interconnect=%s nvlink_pairs=%d gpu_mem_mb=%.0f "
	       "model=%s\n",
	       t->ngpus, t->interconnect, t->nvlink_pairs, t->gpu_mem_mb,
	       t->gpu_model ? t->gpu_model : "unknown");
	for (int i = 0; i < t->ngpus; i++) {
		printf("%s", t->names[i]);
		for (int j = 0; j < t->ngpus; j++)
			printf(" %.1f", t->link_gbs[i * t->ngpus + j]);
		putchar('\n');
	}
	saturn_topology_destroy(t);
	return 0;
}
