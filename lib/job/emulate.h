/* emulate.h - the analytic training-time and memory model behind
 * saturn-emulate, the profiler's CPU stand-in and the profiler benchmark.
 *
 * Time per batch of a transformer with P parameters on T tokens per batch,
 * per technique and GPU count g, from compute (6·P·T FLOPs), communication
 * (gradient all-reduce, FSDP all-gather/reduce-scatter, pipeline bubble and
 * point-to-point, host transfers for offload) and the optimizer step;
 * memory per GPU from weights, gradients, optimizer state and activations.
 * The model and where its constants come from: doc/emulator.md.
 */
#ifndef SATURN_EMULATE_H
#define SATURN_EMULATE_H

#include "error.h"

typedef struct saturn_emu_model {
	const char *name;
	double params; /* parameter count */
	int layers;
	int hidden;
	int seq_len; /* tokens per sample */
} saturn_emu_model_t;

/* Built-in model catalog. */
int saturn_emu_model_count(void);
const saturn_emu_model_t *saturn_emu_model_get(int i);
const saturn_emu_model_t *saturn_emu_model_find(const char *name);

typedef struct saturn_emu_hw {
	double gpu_mem_gb; /* memory per GPU (GiB) */
	double tflops;	   /* peak dense bf16 TFLOP/s per GPU */
	double
	    efficiency; /* fraction of peak reached (model FLOPs utilisation) */
	double link_gbs; /* GPU-to-GPU link bandwidth (GB/s, one direction) */
	int nvlink;	 /* 1: NVLink/NVSwitch, 0: PCIe */
	double host_gbs; /* GPU-to-host PCIe bandwidth (GB/s) */
	double hbm_gbs;	 /* GPU memory bandwidth (GB/s) */
	double cpu_gbs;	 /* host memory bandwidth for CPU optimizer steps */
} saturn_emu_hw_t;

/* Defaults of an A100-80GB-class node: NVLink (nvlink=1) or PCIe. */
void saturn_emu_hw_default(saturn_emu_hw_t *hw, int nvlink);

/* Defaults overridden by SATURN_EMU_LINK (nvlink|pcie), SATURN_EMU_LINK_GBS,
 * SATURN_EMU_GPU_MEM_GB, SATURN_EMU_TFLOPS. 0, or -1 with err naming the
 * variable. */
int saturn_emu_hw_from_env(saturn_emu_hw_t *hw, saturn_error_t *err);

typedef enum saturn_collective {
	SATURN_ALLREDUCE = 0,
	SATURN_ALLGATHER,
} saturn_collective_t;

/* Modelled NCCL bus bandwidth (GB/s, nccl-tests definition) of a collective
 * over gpus GPUs; 0 for gpus < 2. */
double saturn_emu_busbw(const saturn_emu_hw_t *hw, int gpus,
			saturn_collective_t c);

typedef struct saturn_emu_result {
	double sec_per_batch; /* modelled time per batch */
	double compute_s;     /* forward + backward (+ recompute) */
	double comm_s;	      /* exposed communication */
	double other_s;	      /* optimizer step, host transfers, fixed cost */
	double mem_mb;	      /* peak memory per GPU (MiB) */
	int oom;	      /* mem_mb > GPU memory */
} saturn_emu_result_t;

/* Evaluate model m at batch_size samples per batch under technique (single,
 * ddp, fsdp, pipeline, offload; anything else is modelled like ddp) on gpus
 * GPUs with resolved technique parameters params (JSON text or NULL =
 * defaults). 0, or -1 with err for an impossible request (gpus < 1, single
 * on 2 GPUs, pipeline on 1, more stages than layers). */
int saturn_emu_eval(const saturn_emu_model_t *m, int batch_size,
		    const char *technique, int gpus, const char *params,
		    const saturn_emu_hw_t *hw, saturn_emu_result_t *r,
		    saturn_error_t *err);

#endif /* SATURN_EMULATE_H */
