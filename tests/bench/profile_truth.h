/* profile_truth.h - a second ground truth for profile-bench: an analytic
 * model of DDP, FSDP and GPipe written from published scaling behaviour, not
 * from the emulator (lib/job/emulate.c) whose terms are the profiler fit's
 * basis. What it has that the fit does not:
 *  - compute efficiency falls as the per-GPU (or per-micro-batch) batch
 *    shrinks: MFU u(b) = u_max · x^1.5 / (x^1.5 + 1), x = tokens / 512
 *    (kernels fill the GPU from a few thousand tokens on; Narayanan et al.
 *    2021, "Efficient large-scale language model training on GPU clusters",
 *    fig. 7-8: throughput per GPU falls steeply at micro-batch 1-2);
 *  - communication overlapped with backward (DDP gradient buckets, Li et
 *    al. 2020 "PyTorch Distributed") or with forward/backward by prefetch
 *    (FSDP, Zhao et al. 2023): mostly hidden while compute is long (small
 *    g), exposed when it is not (large g), never less than one bucket or
 *    layer;
 *  - collectives as ring steps with a per-step latency (nccl-tests'
 *    alpha-beta model), on a bus bandwidth that departs from the probed
 *    table by up to +-7 % per GPU count (truth_bwdev);
 *  - GPipe with m(g) = min(B, 4·g) micro-batches (Huang et al. 2019: m >= 4
 *    stages hides the bubble), per-hop latency, and a constant per-batch
 *    cost (pipeline flush, tied-embedding gradient exchange between first
 *    and last stage);
 *  - the optimizer step: replicated for DDP, sharded for FSDP and by stage
 *    for pipelines.
 * Memory (which counts OOM) is the emulator's: this truth is about time.
 */
#ifndef SATURN_BENCH_PROFILE_TRUTH_H
#define SATURN_BENCH_PROFILE_TRUTH_H

#include <math.h>
#include <string.h>

#include "emulate.h"

/* Micro-batches the truth's pipeline runs on g GPUs for batch B (what the
 * profiler would pass as the resolved micro_batches parameter). */
static int truth_micro(int B, int g)
{
	int m = 4 * g;

	return m < B ? m : B;
}

static double truth_mfu(double tokens, const saturn_emu_hw_t *hw)
{
	double x = pow(tokens / 512.0, 1.5);

	return (hw->efficiency + 0.1) * x / (x + 1);
}

/* How far the bus bandwidth a training run achieves is from the probed
 * table (saturn_emu_busbw, what saturn-hwbench measures with its own
 * message sizes): up to +-truth_bwdev, in a pattern over g that no scale
 * factor removes. profile-bench's bwdev argument sets it. */
static double truth_bwdev = 0.07;

/* Achieved ring bus bandwidth (GB/s) of g GPUs. */
static double truth_busbw(const saturn_emu_hw_t *hw, int g, int allreduce)
{
	static const double shape[9] = {0, 0, 1, -0.5, -1, 0.6, 0.2, -0.4, -1};

	return saturn_emu_busbw(hw, g, allreduce ? SATURN_ALLREDUCE : SATURN_ALLGATHER) *
	       (1 + truth_bwdev * shape[g < 9 ? g : 8]);
}

/* One ring collective over g GPUs of `bytes` in `chunks` pieces: 2(g-1)
 * steps for an all-reduce (factor 2), g-1 for all-gather/reduce-scatter. */
static double truth_coll(const saturn_emu_hw_t *hw, int g, double bytes, double chunks,
			 int allreduce)
{
	double alpha = hw->nvlink ? 10e-6 : 25e-6, f = allreduce ? 2 : 1;

	if (g < 2)
		return 0;
	return chunks * f * (g - 1) * alpha +
	       f * bytes * (g - 1) / g / (truth_busbw(hw, g, allreduce) * 1e9);
}

/* What of `comm` seconds of communication stays exposed behind `comp`
 * seconds of compute it overlaps with: little while comm << comp, comm -
 * comp once comm >> comp, and a smooth passage between (gradients arrive
 * in buckets, and overlapped kernels slow each other: Li et al. 2020 fig.
 * 7 shows no sharp knee). */
static double hide(double comm, double comp)
{
	return comm * comm / (comm + comp);
}

/* Seconds per batch of technique on g GPUs; 0 when impossible. */
static double truth_eval(const saturn_emu_model_t *m, int B, const char *tech, int g,
			 const saturn_emu_hw_t *hw)
{
	const double P = m->params, S = m->seq_len, L = m->layers;
	const double peak = hw->tflops * 1e12, fixed = 0.004;
	const double opt = 32.0 * P / (hw->hbm_gbs * 1e9); /* Adam, bf16+fp32 */
	double comp, t_f, t_b;

	if (strcmp(tech, "single") == 0 || strcmp(tech, "offload") == 0) {
		if (g != 1)
			return 0;
		comp = 6 * P * S * B / (peak * truth_mfu(S * B, hw));
		if (tech[0] == 's')
			return comp + opt + fixed;
		return comp + fixed + 4.0 * P / (hw->host_gbs * 1e9) +
		       28.0 * P / (hw->cpu_gbs * 1e9) + 2.0 * P / m->layers / (hw->host_gbs * 1e9);
	}
	if (strcmp(tech, "pipeline") == 0) {
		int mb = truth_micro(B, g), s = g;
		double per = (double)B / mb, stage, hop, c0;

		if (g < 2 || s > m->layers)
			return 0;
		/* one stage, one micro-batch; stages taken as balanced
		 * (ceil(L/s) layers on the slowest would add a staircase
		 * over g that no smooth model follows) */
		stage = 6 * P * S * per / s / (peak * truth_mfu(S * per, hw));
		/* activations of one micro-batch to the next stage, bf16 */
		hop = (hw->nvlink ? 15e-6 : 40e-6) +
		      per * S * m->hidden * 2.0 / (truth_busbw(hw, 2, 1) * 1e9);
		/* flush and tied embeddings (vocab 50k x hidden, bf16) between
		 * first and last stage: the same for every g */
		c0 = 0.006 + 50257.0 * m->hidden * 2.0 / (truth_busbw(hw, 2, 1) * 1e9);
		return (mb + s - 1) * stage + 2.0 * (mb + s - 2) * hop + c0 + opt / s + fixed;
	}
	if (strcmp(tech, "fsdp") == 0) {
		double per = (double)B / g, ag, rs, exp_f, exp_b;

		comp = 6 * P * S * per / (peak * truth_mfu(S * per, hw));
		t_f = comp / 3;
		t_b = comp - t_f;
		ag = truth_coll(hw, g, 2 * P, L, 0);
		rs = truth_coll(hw, g, 2 * P, L, 0);
		/* prefetch hides most of it; the first layer's gather never */
		exp_f = fmax(hide(ag, t_f), ag / L);
		exp_b = fmax(hide(ag + rs, t_b), (ag + rs) / L);
		if (g < 2)
			exp_f = exp_b = 0;
		return comp + exp_f + exp_b + opt / g + fixed;
	}
	/* ddp: gradients all-reduced in 25 MB buckets during backward; the
	 * last bucket is exposed */
	{
		double per = (double)B / g, nb = ceil(2 * P / 25e6), ar, exp_c;

		comp = 6 * P * S * per / (peak * truth_mfu(S * per, hw));
		t_b = comp * 2 / 3;
		ar = truth_coll(hw, g, 2 * P, nb, 1);
		exp_c = g < 2 ? 0 : fmax(hide(ar, t_b), ar / nb);
		return comp + exp_c + opt + fixed;
	}
}

#endif /* SATURN_BENCH_PROFILE_TRUTH_H */
