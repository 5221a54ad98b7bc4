/* hw_cuda.c - the CUDA runtime / NCCL backend (built with HAVE_CUDA; the
 * collectives need HAVE_NCCL). Every CUDA and NCCL call goes through a
 * check macro that records file:line and the library's message. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

#include "hw.h"

#define CUDA_CHECK(call)                                                       \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			saturn_error_set(err, "%s:%d: %s: %s", __FILE__,       \
					 __LINE__, #call,                      \
					 cudaGetErrorString(e_));              \
			goto fail;                                             \
		}                                                              \
	} while (0)

#ifdef HAVE_NCCL
#define NCCL_CHECK(call)                                                       \
	do {                                                                   \
		ncclResult_t r_ = (call);                                      \
		if (r_ != ncclSuccess) {                                       \
			saturn_error_set(err, "%s:%d: %s: %s", __FILE__,       \
					 __LINE__, #call,                      \
					 ncclGetErrorString(r_));              \
			goto fail;                                             \
		}                                                              \
	} while (0)
#endif

struct cuda_ctx {
	int ngpus;
};

static int cuda_open(void **ctx, int ngpus, saturn_error_t *err)
{
	struct cuda_ctx *c;
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n < 1)
		return saturn_error_set(err, "no CUDA device (%s)",
					e != cudaSuccess ? cudaGetErrorString(e)
							 : "count 0");
	if (ngpus > n)
		return saturn_error_set(err, "%d GPUs requested, CUDA sees %d",
					ngpus, n);
	if (!(c = calloc(1, sizeof(*c))))
		return saturn_error_set(err, "out of memory");
	c->ngpus = ngpus;
	*ctx = c;
	return 0;
}

static int cuda_gpu_info(void *ctx, int i, char *model, size_t len,
			 double *mem_mb, saturn_error_t *err)
{
	struct cudaDeviceProp prop;

	CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
	snprintf(model, len, "%s", prop.name);
	*mem_mb = prop.totalGlobalMem / 1048576.0;
	return 0;
fail:
	return -1;
}

#ifdef HAVE_NCCL
static int cuda_collective(void *ctx, saturn_collective_t coll, int n,
			   size_t bytes, int warmup, int iters, double *sec,
			   int *correct, saturn_error_t *err)
{
	ncclComm_t comms[64];
	cudaStream_t streams[64];
	float *send[64] = {0}, *recv[64] = {0};
	int devs[64], ncomm = 0, nstream = 0;
	size_t count = bytes / sizeof(float), sendcount;
	cudaEvent_t t0 = NULL, t1 = NULL;
	float ms = 0, *host = NULL;
	int rc = -1;

	if (n < 2 || n > 64)
		return saturn_error_set(err, "cuda: collective over %d GPUs",
					n);
	/* all-gather: bytes is the gathered output, each rank sends 1/n */
	sendcount = coll == SATURN_ALLREDUCE ? count : count / n;
	count = coll == SATURN_ALLREDUCE ? count : sendcount * n;
	for (int i = 0; i < n; i++)
		devs[i] = i;
	NCCL_CHECK(ncclCommInitAll(comms, n, devs));
	ncomm = n;
	for (int i = 0; i < n; i++) {
		CUDA_CHECK(cudaSetDevice(i));
		CUDA_CHECK(cudaStreamCreate(&streams[i]));
		nstream++;
		CUDA_CHECK(
		    cudaMalloc((void **)&send[i], sendcount * sizeof(float)));
		CUDA_CHECK(
		    cudaMalloc((void **)&recv[i], count * sizeof(float)));
	}
	for (int it = 0; it < warmup + iters + 1; it++) {
		int check = it == warmup + iters;

		if (it == warmup) {
			CUDA_CHECK(cudaSetDevice(0));
			CUDA_CHECK(cudaEventCreate(&t0));
			CUDA_CHECK(cudaEventCreate(&t1));
			CUDA_CHECK(cudaEventRecord(t0, streams[0]));
		}
		if (check) {
			/* correctness pass: rank r sends r+1 everywhere */
			CUDA_CHECK(cudaSetDevice(0));
			CUDA_CHECK(cudaEventRecord(t1, streams[0]));
			CUDA_CHECK(cudaEventSynchronize(t1));
			CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
			if (!(host = malloc(sendcount * sizeof(float)))) {
				saturn_error_set(err, "out of memory");
				goto fail;
			}
			for (int r = 0; r < n; r++) {
				for (size_t k = 0; k < sendcount; k++)
					host[k] = (float)(r + 1);
				CUDA_CHECK(cudaSetDevice(r));
				CUDA_CHECK(cudaMemcpy(send[r], host,
						      sendcount * sizeof(float),
						      cudaMemcpyHostToDevice));
			}
		}
		NCCL_CHECK(ncclGroupStart());
		for (int i = 0; i < n; i++) {
			if (coll == SATURN_ALLREDUCE)
				NCCL_CHECK(ncclAllReduce(
				    send[i], recv[i], count, ncclFloat, ncclSum,
				    comms[i], streams[i]));
			else
				NCCL_CHECK(ncclAllGather(send[i], recv[i],
							 sendcount, ncclFloat,
							 comms[i], streams[i]));
		}
		NCCL_CHECK(ncclGroupEnd());
	}
	for (int i = 0; i < n; i++) {
		CUDA_CHECK(cudaSetDevice(i));
		CUDA_CHECK(cudaStreamSynchronize(streams[i]));
	}
	{
		float probe[2];
		size_t last = count - 1;

		CUDA_CHECK(cudaSetDevice(n - 1));
		CUDA_CHECK(cudaMemcpy(&probe[0], recv[n - 1], sizeof(float),
				      cudaMemcpyDeviceToHost));
		CUDA_CHECK(cudaMemcpy(&probe[1], recv[n - 1] + last,
				      sizeof(float), cudaMemcpyDeviceToHost));
		if (coll == SATURN_ALLREDUCE)
			*correct = probe[0] == (float)(n * (n + 1) / 2) &&
				   probe[1] == probe[0];
		else
			*correct = probe[0] == 1.0f && probe[1] == (float)n;
	}
	*sec = ms / 1000.0 / iters;
	rc = 0;
fail:
	free(host);
	for (int i = 0; i < n; i++) {
		cudaSetDevice(i);
		cudaFree(send[i]);
		cudaFree(recv[i]);
		if (i < nstream)
			cudaStreamDestroy(streams[i]);
	}
	if (t0)
		cudaEventDestroy(t0);
	if (t1)
		cudaEventDestroy(t1);
	for (int i = 0; i < ncomm; i++)
		ncclCommDestroy(comms[i]);
	return rc;
}
#else
static int cuda_collective(void *ctx, saturn_collective_t coll, int n,
			   size_t bytes, int warmup, int iters, double *sec,
			   int *correct, saturn_error_t *err)
{
	return saturn_error_set(
	    err, "cuda: built without NCCL: no collective bandwidth");
}
#endif

static void cuda_close(void *ctx)
{
	free(ctx);
}

const saturn_hw_ops_t saturn_hw_cuda = {
    "cuda", cuda_open, cuda_gpu_info, cuda_collective, cuda_close,
};
