/* emulate.c - analytic model of data/model-parallel training time and memory
 * (doc/emulator.md). Deliberately simple: first-order terms everybody uses
 * to reason about these techniques (Kaplan et al. 6·P·T FLOPs, mixed
 * precision Adam at 16 bytes per parameter, Korthikanti et al. ~34·h bytes of
 * activations per token per layer, ring collectives at the nccl-tests bus
 * bandwidth, GPipe's (m+s-1)/m bubble).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobenv.h"
#include "emulate.h"
#include "numparse.h"
#include "technique.h"

static const saturn_emu_model_t models[] = {
    /* name, parameters, layers, hidden, sequence length (public configs) */
    {"gpt2", 124e6, 12, 768, 1024},
    {"gpt2-medium", 355e6, 24, 1024, 1024},
    {"gpt2-large", 774e6, 36, 1280, 1024},
    {"gpt2-xl", 1558e6, 48, 1600, 1024},
    {"bert-large", 340e6, 24, 1024, 512},
    {"vit-h-14", 632e6, 32, 1280, 257},
    {"gpt-neo-2.7b", 2.7e9, 32, 2560, 2048},
    {"gpt-j-6b", 6.05e9, 28, 4096, 2048},
    {"llama-7b", 6.74e9, 32, 4096, 2048},
    {"llama-13b", 13.0e9, 40, 5120, 2048},
};

#define NMODELS ((int)(sizeof(models) / sizeof(models[0])))

int saturn_emu_model_count(void)
{
	return NMODELS;
}

const saturn_emu_model_t *saturn_emu_model_get(int i)
{
	return i >= 0 && i < NMODELS ? &models[i] : NULL;
}

const saturn_emu_model_t *saturn_emu_model_find(const char *name)
{
	for (int i = 0; i < NMODELS; i++)
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	return NULL;
}

void saturn_emu_hw_default(saturn_emu_hw_t *hw, int nvlink)
{
	hw->gpu_mem_gb = 80;
	hw->tflops = 312;     /* A100 dense bf16 */
	hw->efficiency = 0.4; /* typical MFU of a fine-tuning run */
	hw->nvlink = nvlink;
	hw->link_gbs =
	    nvlink ? 240 : 20; /* NVSwitch A100 vs PCIe 4.0 x16 peer */
	hw->host_gbs = 24;
	hw->hbm_gbs = 2000;
	hw->cpu_gbs = 100;
}

/* NAME as a number > lo; unset or empty: *v unchanged. */
static int env_num(const char *name, double lo, double *v, saturn_error_t *err)
{
	return saturn_env_double(name, lo, INFINITY, SATURN_NUM_LO_OPEN, v, NULL, err);
}

int saturn_emu_hw_from_env(saturn_emu_hw_t *hw, saturn_error_t *err)
{
	const char *link = getenv(SATURN_EMU_LINK_ENV);
	int nvlink = 1;

	if (link && *link) {
		if (strcmp(link, "nvlink") == 0 ||
		    strcmp(link, "nvswitch") == 0)
			nvlink = 1;
		else if (strcmp(link, "pcie") == 0)
			nvlink = 0;
		else
			return saturn_error_set(
			    err, SATURN_EMU_LINK_ENV "=%s: want nvlink or pcie",
			    link);
	}
	saturn_emu_hw_default(hw, nvlink);
	if (env_num(SATURN_EMU_LINK_GBS_ENV, 0, &hw->link_gbs, err) < 0 ||
	    env_num(SATURN_EMU_GPU_MEM_GB_ENV, 0, &hw->gpu_mem_gb, err) < 0 ||
	    env_num(SATURN_EMU_TFLOPS_ENV, 0, &hw->tflops, err) < 0)
		return -1;
	return 0;
}

double saturn_emu_busbw(const saturn_emu_hw_t *hw, int gpus,
			saturn_collective_t c)
{
	double eff;

	if (gpus < 2)
		return 0;
	if (hw->nvlink) {
		/* NVSwitch: flat, a little protocol overhead */
		eff = c == SATURN_ALLREDUCE ? 0.85 : 0.88;
	} else {
		/* PCIe: peers behind one switch share it; past 4 GPUs the ring
		 * crosses the CPU interconnect */
		eff = gpus <= 2 ? 0.85 : gpus <= 4 ? 0.7 : 0.45;
		if (c == SATURN_ALLGATHER)
			eff *= 1.05;
	}
	return hw->link_gbs * eff;
}

/* Activation bytes of `tokens` tokens: ~34·h bytes per token per layer
 * (bf16, no sequence parallelism); with checkpointing only each layer's
 * input (2·h) is kept plus one layer recomputed at a time. */
static double act_bytes(const saturn_emu_model_t *m, double tokens, int ckpt)
{
	if (ckpt)
		return tokens *
		       (m->layers * 2.0 * m->hidden + 34.0 * m->hidden);
	return tokens * m->layers * 34.0 * m->hidden;
}

int saturn_emu_eval(const saturn_emu_model_t *m, int batch_size,
		    const char *technique, int gpus, const char *params,
		    const saturn_emu_hw_t *hw, saturn_emu_result_t *r,
		    saturn_error_t *err)
{
	const double P = m->params, T = (double)batch_size * m->seq_len;
	const double flops = hw->tflops * 1e12 * hw->efficiency;
	const double fixed = 0.003; /* data loading, kernel launches */
	const double overlap =
	    0.5; /* share of communication hidden by compute */
	const double ctx = 1.5 * 1073741824.0; /* CUDA context, workspaces */
	double g = gpus, mem, C;
	int ckpt = 0;

	memset(r, 0, sizeof(*r));
	if (gpus < 1)
		return saturn_error_set(err, "gpus: must be >= 1");
	if (batch_size < 1)
		return saturn_error_set(err, "batch size: must be >= 1");
	if (strcmp(technique, "fsdp") == 0)
		ckpt = saturn_technique_param(
			   params, "activation_checkpointing", 0) != 0;
	/* forward 2PT, backward 4PT, recompute another 2PT */
	C = (ckpt ? 8.0 : 6.0) * P * T / flops;

	if (strcmp(technique, "single") == 0 ||
	    strcmp(technique, "offload") == 0) {
		if (gpus != 1)
			return saturn_error_set(err, "%s runs on exactly 1 GPU",
						technique);
		r->compute_s = C;
		if (technique[0] == 's') {
			r->other_s = fixed + 32.0 * P / (hw->hbm_gbs * 1e9);
			mem = 16.0 * P + act_bytes(m, T, 0);
		} else {
			/* bf16 gradients to the host, updated bf16 weights
			 * back, Adam on the CPU over fp32 master, m, v (28
			 * bytes/param of traffic) */
			r->other_s = fixed + 4.0 * P / (hw->host_gbs * 1e9) +
				     28.0 * P / (hw->cpu_gbs * 1e9);
			mem =
			    2.0 * P + 4.0 * P / m->layers + act_bytes(m, T, 0);
		}
	} else if (strcmp(technique, "pipeline") == 0) {
		double s = saturn_technique_param(params, "stages", gpus);
		double mb = saturn_technique_param(params, "micro_batches", 8);
		double bw = saturn_emu_busbw(hw, gpus, SATURN_ALLREDUCE);

		if (gpus < 2 || s < 2 || s > g)
			return saturn_error_set(
			    err, "pipeline needs 2..gpus stages on >= 2 GPUs");
		if (s > m->layers)
			return saturn_error_set(
			    err, "pipeline: %g stages for %d layers", s,
			    m->layers);
		if (mb > batch_size)
			mb = batch_size;
		/* GPipe: each stage does C/s per batch, idle for s-1 of the
		 * m+s-1 micro-batch slots; activations cross s-1 boundaries
		 * forward and back, one micro-batch at a time */
		r->compute_s = C / s * (mb + s - 1) / mb;
		r->comm_s = (mb + s - 1) * 2.0 * (T / mb) * m->hidden * 2.0 /
			    (bw * 1e9);
		r->other_s = fixed + 32.0 * P / s / (hw->hbm_gbs * 1e9);
		mem = (16.0 * P + act_bytes(m, T, 0)) / s;
	} else if (strcmp(technique, "fsdp") == 0) {
		int off = saturn_technique_param(params, "cpu_offload", 0) != 0;
		double bw = saturn_emu_busbw(hw, gpus, SATURN_ALLGATHER);

		r->compute_s = C / g;
		/* all-gather parameters for forward and backward,
		 * reduce-scatter gradients: 3 x 2P bytes x (g-1)/g */
		if (gpus > 1)
			r->comm_s = (1 - overlap) * 3.0 * 2.0 * P * (g - 1) /
				    g / (bw * 1e9);
		r->other_s = fixed + 32.0 * P / g / (hw->hbm_gbs * 1e9);
		if (off) {
			r->other_s += 4.0 * P / g / (hw->host_gbs * 1e9) +
				      28.0 * P / (hw->cpu_gbs * 1e9);
			mem = 2.0 * 2.0 * P / m->layers +
			      act_bytes(m, T / g, ckpt);
		} else {
			mem = 16.0 * P / g + 2.0 * 2.0 * P / m->layers +
			      act_bytes(m, T / g, ckpt);
		}
	} else {
		/* ddp and unknown techniques: replica per GPU, bf16 gradient
		 * all-reduce (2P bytes x 2(g-1)/g) half hidden by backward */
		double bw = saturn_emu_busbw(hw, gpus, SATURN_ALLREDUCE);

		r->compute_s = C / g;
		if (gpus > 1)
			r->comm_s = (1 - overlap) * 2.0 * P * 2.0 * (g - 1) /
				    g / (bw * 1e9);
		r->other_s = fixed + 32.0 * P / (hw->hbm_gbs * 1e9);
		mem = 16.0 * P + (gpus > 1 ? 2.0 * P : 0) +
		      act_bytes(m, T / g, 0);
	}
	mem += ctx;
	r->mem_mb = mem / 1048576.0;
	r->oom = mem > hw->gpu_mem_gb * 1073741824.0;
	r->sec_per_batch = r->compute_s + r->comm_s + r->other_s;
	return 0;
}
