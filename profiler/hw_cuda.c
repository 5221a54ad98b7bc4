/* hw_cuda.c - the CUDA runtime / NCCL / cuBLAS backend (built with
 * HAVE_CUDA; the collectives need HAVE_NCCL, the matrix multiply
 * HAVE_CUBLAS). Every CUDA, NCCL and cuBLAS call goes through a check macro
 * that records file:line and the library's message. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif
#ifdef HAVE_CUBLAS
#include <cublas_v2.h>
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

#ifdef HAVE_CUBLAS
#define CUBLAS_CHECK(call)                                                     \
	do {                                                                   \
		cublasStatus_t s_ = (call);                                    \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                             \
			saturn_error_set(err, "%s:%d: %s: %s", __FILE__,       \
					 __LINE__, #call,                      \
					 cublasGetStatusString(s_));           \
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

	if (n < 1 || n > 64) /* 1 rank: a local copy; busbw is 0 by formula */
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

#ifdef HAVE_CUBLAS
#define GEMM_CHECK_N 64

/* FP32 -> BF16 by truncation (the top 16 bits); exact for the small
 * integers of the correctness pass. */
static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint16_t)(u >> 16);
}

static int check_a(int i, int k)
{
	return (i + 2 * k) % 5 - 2;
}

static int check_b(int k, int j)
{
	return (3 * k + j) % 7 - 3;
}

/* C = A B through cublasGemmEx: BF16 inputs, FP32 accumulation and output
 * (CUBLAS_COMPUTE_32F; cuBLAS picks tensor cores), column-major, timed with
 * CUDA events on the handle's (default) stream. */
static int cuda_gemm(void *ctx, int gpu, int n, int warmup, int iters,
		     double *sec, int *correct, saturn_error_t *err)
{
	struct cuda_ctx *c = ctx;
	cublasHandle_t h = NULL;
	cudaEvent_t t0 = NULL, t1 = NULL;
	uint16_t *host = NULL;
	float *hc = NULL, ms = 0;
	void *da = NULL, *db = NULL, *dc = NULL;
	const float one = 1.0f, zero = 0.0f;
	size_t nn = (size_t)n * n, cn = GEMM_CHECK_N * GEMM_CHECK_N;
	int rc = -1, cur = 0;

	if (gpu < 0 || gpu >= c->ngpus)
		return saturn_error_set(err, "cuda: no GPU %d", gpu);
	if (n < 1 || n > 65536 || iters < 1 || warmup < 0)
		return saturn_error_set(err, "cuda: GEMM n=%d iters=%d", n,
					iters);
	if (nn < cn)
		nn = cn;
	if (cudaGetDevice(&cur) != cudaSuccess)
		cur = 0;
	CUDA_CHECK(cudaSetDevice(gpu));
	CUBLAS_CHECK(cublasCreate(&h));
	CUDA_CHECK(cudaMalloc(&da, nn * sizeof(uint16_t)));
	CUDA_CHECK(cudaMalloc(&db, nn * sizeof(uint16_t)));
	CUDA_CHECK(cudaMalloc(&dc, nn * sizeof(float)));
	if (!(host = malloc(nn * sizeof(uint16_t))) ||
	    !(hc = malloc(cn * sizeof(float)))) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	/* timed data: non-zero and not all equal (zeros run faster) */
	for (size_t k = 0; k < (size_t)n * n; k++)
		host[k] = to_bf16((float)((k * 7 + 3) % 13) * 0.125f - 0.75f);
	CUDA_CHECK(cudaMemcpy(da, host, (size_t)n * n * sizeof(uint16_t),
			      cudaMemcpyHostToDevice));
	for (size_t k = 0; k < (size_t)n * n; k++)
		host[k] = to_bf16((float)((k * 5 + 1) % 11) * 0.25f - 1.25f);
	CUDA_CHECK(cudaMemcpy(db, host, (size_t)n * n * sizeof(uint16_t),
			      cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaEventCreate(&t0));
	CUDA_CHECK(cudaEventCreate(&t1));
	for (int it = 0; it < warmup + iters; it++) {
		if (it == warmup)
			CUDA_CHECK(cudaEventRecord(t0, 0));
		CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
					  &one, da, CUDA_R_16BF, n, db,
					  CUDA_R_16BF, n, &zero, dc, CUDA_R_32F,
					  n, CUBLAS_COMPUTE_32F,
					  CUBLAS_GEMM_DEFAULT));
	}
	CUDA_CHECK(cudaEventRecord(t1, 0));
	CUDA_CHECK(cudaEventSynchronize(t1));
	CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
	*sec = ms / 1000.0 / iters;

	/* correctness pass: small integers, exact in BF16 and FP32 */
	for (int i = 0; i < GEMM_CHECK_N; i++)
		for (int k = 0; k < GEMM_CHECK_N; k++)
			host[i + (size_t)k * GEMM_CHECK_N] =
			    to_bf16((float)check_a(i, k));
	CUDA_CHECK(cudaMemcpy(da, host, cn * sizeof(uint16_t),
			      cudaMemcpyHostToDevice));
	for (int k = 0; k < GEMM_CHECK_N; k++)
		for (int j = 0; j < GEMM_CHECK_N; j++)
			host[k + (size_t)j * GEMM_CHECK_N] =
			    to_bf16((float)check_b(k, j));
	CUDA_CHECK(cudaMemcpy(db, host, cn * sizeof(uint16_t),
			      cudaMemcpyHostToDevice));
	CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, GEMM_CHECK_N,
				  GEMM_CHECK_N, GEMM_CHECK_N, &one, da,
				  CUDA_R_16BF, GEMM_CHECK_N, db, CUDA_R_16BF,
				  GEMM_CHECK_N, &zero, dc, CUDA_R_32F,
				  GEMM_CHECK_N, CUBLAS_COMPUTE_32F,
				  CUBLAS_GEMM_DEFAULT));
	CUDA_CHECK(cudaMemcpy(hc, dc, cn * sizeof(float),
			      cudaMemcpyDeviceToHost));
	*correct = 1;
	for (int i = 0; i < GEMM_CHECK_N; i++)
		for (int j = 0; j < GEMM_CHECK_N; j++) {
			int want = 0;

			for (int k = 0; k < GEMM_CHECK_N; k++)
				want += check_a(i, k) * check_b(k, j);
			if (hc[i + (size_t)j * GEMM_CHECK_N] != (float)want)
				*correct = 0;
		}
	rc = 0;
fail:
	if (t0)
		cudaEventDestroy(t0);
	if (t1)
		cudaEventDestroy(t1);
	cudaFree(da);
	cudaFree(db);
	cudaFree(dc);
	if (h)
		cublasDestroy(h);
	free(host);
	free(hc);
	cudaSetDevice(cur);
	return rc;
}
#else
static int cuda_gemm(void *ctx, int gpu, int n, int warmup, int iters,
		     double *sec, int *correct, saturn_error_t *err)
{
	return saturn_error_set(err,
				"cuda: built without cuBLAS: no GEMM figure");
}
#endif

static void cuda_close(void *ctx)
{
	free(ctx);
}

const saturn_hw_ops_t saturn_hw_cuda = {
    "cuda", cuda_open, cuda_gpu_info, cuda_collective, cuda_gemm, cuda_close,
};
