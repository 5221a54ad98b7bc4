/* probe.c - saturn-profile's node probe: GPUs and memory through the
 * hardware backend (hw.h), GPU 0's GEMM throughput, NCCL bus bandwidth for
 * each GPU count, links from
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

static const char *gemm_precision(const saturn_hw_ops_t *ops)
{
	return ops == &saturn_hw_cpu ? "fp32 on the host CPU, not a GPU"
				     : "bf16 in, fp32 accumulate";
}

/* The backend --backend names ("auto": cuda when it opens, else cpu),
 * opened on ngpus GPUs. 0, 77 (cuda asked for, no device), -1 (printed). */
static int open_backend(const struct opts *o, int ngpus,
			const saturn_hw_ops_t **opsp, void **ctxp)
{
	const saturn_hw_ops_t *ops = &saturn_hw_cpu;
	saturn_error_t err = {{0}};
	void *ctx = NULL;

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
			/* auto: say so, or a node without a usable GPU would
			 * hand in the stand-in's numbers as its own */
			fprintf(stderr,
				"%s: --backend auto: cuda backend: %s; using the "
				"CPU stand-in\n",
				prog, err.text);
			ops = &saturn_hw_cpu;
			ctx = NULL;
		}
#else
		if (strcmp(o->backend, "cuda") == 0) {
			fprintf(stderr, "%s: built without CUDA\n", prog);
			return 77;
		}
		fprintf(stderr,
			"%s: --backend auto: built without CUDA; using the CPU "
			"stand-in\n",
			prog);
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
	*opsp = ops;
	*ctxp = ctx;
	return 0;
}

int probe_hw(const struct opts *o, int ngpus, saturn_profile_hw_t *hw,
	     double *ar, double *ag)
{
	const saturn_hw_ops_t *ops = &saturn_hw_cpu;
	saturn_topology_t *topo = NULL;
	saturn_error_t err = {{0}};
	void *ctx = NULL;
	char model[256], host[256] = "localhost";
	double mem = 0;

	{
		int r = open_backend(o, ngpus, &ops, &ctx);

		if (r != 0)
			return r;
	}
	if (ops->gpu_info(ctx, 0, model, sizeof(model), &mem, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		ops->close(ctx);
		return -1;
	}
	/* GEMM throughput of GPU 0, one run; a failure only leaves it 0 */
	{
		int gn = ops == &saturn_hw_cpu ? SATURN_GEMM_N_CPU
					       : SATURN_GEMM_N_GPU;

		if (saturn_hw_gemm_tflops(ops, ctx, 0, gn, &hw->gemm_tflops,
					  &err) < 0)
			fprintf(stderr,
				"%s: GEMM on GPU 0: %s (gemm_tflops not "
				"recorded)\n",
				prog, err.text);
		else if (!o->quiet)
			fprintf(stderr,
				"%s: GEMM on GPU 0 (%s, n=%d): %.4g TFLOP/s\n",
				prog, gemm_precision(ops), gn,
				hw->gemm_tflops);
	}
	gethostname(host, sizeof(host) - 1);
	hw->klass = o->klass ? xstrdup(o->klass) : NULL;
	hw->node = xstrdup(host);
	hw->gpu_model = xstrdup(model);
	hw->gpus = ngpus;
	hw->gpu_mem_mb = mem;
	hw->nccl = calloc(ngpus, sizeof(*hw->nccl));
	if (!hw->nccl) {
		fprintf(stderr, "%s: out of memory\n", prog);
		ops->close(ctx);
		return -1;
	}
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
	if (!hw->link_gbs) {
		fprintf(stderr, "%s: out of memory\n", prog);
		saturn_topology_destroy(topo);
		return -1;
	}
	/* GPU memory stays the backend's, not the topology's (for the CPU
	 * stand-in: the emulator's model, which rules its trials). */
	if (topo && topo->ngpus >= ngpus) {
		for (int i = 0; i < ngpus; i++)
			for (int j = 0; j < ngpus; j++)
				hw->link_gbs[i * ngpus + j] =
				    topo->link_gbs[i * topo->ngpus + j];
		/* gpu_mem_mb stays the backend's, not the topology's:
		 * with the stand-in its model rules the trials */
		hw->interconnect = xstrdup(topo->interconnect);
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

/* --show-topology with --backend cpu|cuda: one more line for GPU 0 of that
 * backend (memory, GEMM throughput; model last, it may hold spaces):
 * "device backend=cuda gpu_mem_mb=143771 gemm_tflops=612.3 gemm_n=8192
 * model=NVIDIA H200". gemm_tflops=0 (with the reason on stderr) when the
 * GEMM could not be measured. 0, 77 (no device), 1. */
static int show_device(const struct opts *o)
{
	const saturn_hw_ops_t *ops;
	saturn_error_t err = {{0}};
	void *ctx = NULL;
	char model[256];
	double mem = 0, tf = 0;
	int r = open_backend(o, 1, &ops, &ctx), gn;

	if (r != 0)
		return r == 77 ? 77 : 1;
	if (ops->gpu_info(ctx, 0, model, sizeof(model), &mem, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.text);
		ops->close(ctx);
		return 1;
	}
	gn = ops == &saturn_hw_cpu ? SATURN_GEMM_N_CPU : SATURN_GEMM_N_GPU;
	if (saturn_hw_gemm_tflops(ops, ctx, 0, gn, &tf, &err) < 0)
		fprintf(stderr, "%s: GEMM on GPU 0: %s\n", prog, err.text);
	ops->close(ctx);
	printf("device backend=%s gpu_mem_mb=%.0f gemm_tflops=%.4g gemm_n=%d "
	       "gemm_precision=%s model=%s\n",
	       ops->name, mem, tf, gn,
	       ops == &saturn_hw_cpu ? "fp32-host-cpu" : "bf16-fp32acc", model);
	return 0;
}

/* --show-topology: print what --topology / --gres-conf (or this machine)
 * says, one line, for scripts and tests; with --backend cpu|cuda, then the
 * device line of show_device. */
int show_topology(const struct opts *o)
{
	saturn_error_t err = {{0}};
	saturn_topology_t *t;
	int dev = strcmp(o->backend, "auto") != 0, rc = 0;

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
		rc = 1;
	} else {
		printf("gpus=%d interconnect=%s nvlink_pairs=%d gpu_mem_mb=%.0f "
		       "model=%s\n",
		       t->ngpus, t->interconnect, t->nvlink_pairs,
		       t->gpu_mem_mb, t->gpu_model ? t->gpu_model : "unknown");
		for (int i = 0; i < t->ngpus; i++) {
			printf("%s", t->names[i]);
			for (int j = 0; j < t->ngpus; j++)
				printf(" %.1f", t->link_gbs[i * t->ngpus + j]);
			putchar('\n');
		}
		saturn_topology_destroy(t);
	}
	if (dev) {
		int r;

		fflush(stdout);
		r = show_device(o);
		if (r != 0 && rc == 0)
			rc = r;
	}
	return rc;
}
