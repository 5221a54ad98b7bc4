/* hw.c - the measurement discipline shared by all backends (nccl-tests):
 * untimed warm-up, timed iterations, a correctness pass, bus bandwidth. */
#include "config.h"

#include "hw.h"

#define BW_BYTES (64u << 20) /* large enough to be bandwidth-bound */
#define BW_WARMUP 5
#define BW_ITERS 20

int saturn_hw_busbw(const saturn_hw_ops_t *ops, void *ctx,
		    saturn_collective_t c, int n, double *busbw,
		    saturn_error_t *err)
{
	double sec = 0, algbw;
	int correct = 0;

	*busbw = 0;
	if (n < 2)
		return 0;
	if (ops->collective(ctx, c, n, BW_BYTES, BW_WARMUP, BW_ITERS, &sec,
			    &correct, err) < 0)
		return -1;
	if (!correct)
		return saturn_error_set(
		    err, "%s: %s over %d GPUs returned wrong values", ops->name,
		    c == SATURN_ALLREDUCE ? "all-reduce" : "all-gather", n);
	if (!(sec > 0))
		return saturn_error_set(err, "%s: collective took no time",
					ops->name);
	algbw = BW_BYTES / sec / 1e9;
	if (c == SATURN_ALLREDUCE)
		*busbw = algbw * 2.0 * (n - 1) /
			 n; /* ring: 2(n-1)/n of the data per link */
	else
		*busbw = algbw * (n - 1) /
			 n; /* each rank receives (n-1)/n of the output */
	return 0;
}
