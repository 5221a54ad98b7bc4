/* internode.h - predicted multi-node options of a profile from an
 * inter-node bandwidth (doc/saturn-profile.1, INTER-NODE BANDWIDTH).
 *
 * A data-parallel (ddp) or sharded (fsdp) technique measured on one node
 * at several GPU counts has a scaling fit (sweep.h):
 *   t(g) = a/g + b + c·comm(g),  comm(g) = V(g)/busbw(g)
 * with V(g) = 2(g-1)/g (all-reduce of the gradients) or 3(g-1)/g (FSDP).
 * With busbw in GB/s, c is the communicated size in GB (the gradients, or
 * the parameters, as far as communication is not hidden behind compute).
 * On K nodes of g GPUs the ring spans N = K·g GPUs and crosses the nodes'
 * links, so the collective runs at the slower of the inter-node bus
 * bandwidth and the node's own:
 *   t(K, g) = (a/N + b + c·V(N)/min(B_inter, busbw(g))) · t_meas(g)/t_fit(g)
 * (the last factor anchors the prediction to the one-node measurement).
 * With one bus bandwidth at every count the fit cannot tell c from a and b
 * (comm(g) is then a constant minus a multiple of 1/g); c is then taken
 * from the peak memory at the largest count: 16 bytes of state per
 * parameter, 2 of them the 16-bit gradients, none hidden (an upper bound),
 * and no anchoring factor.
 * Memory per GPU: ddp keeps the one-node peak; fsdp's shards shrink by
 * g/N. Slurm-free; job side (the fit lives in sweep.c).
 */
#ifndef SATURN_INTERNODE_H
#define SATURN_INTERNODE_H

#include "error.h"
#include "profile.h"

typedef struct saturn_internode {
	double gbs;         /* bus bandwidth of a collective across nodes,
			     * GB/s; > 0 */
	int max_nodes;      /* predict K = 2 .. max_nodes (at most
			     * SATURN_MAX_TASK_NODES) */
	const char *source; /* where gbs came from, named in each reason
			     * (e.g. "--internode-bw"); NULL: "set" */
} saturn_internode_t;

/* Add predicted K-node options (status "predicted", "nodes": K, a reason
 * naming the bandwidth and its source) to every task of pr, for each
 * technique of the data-parallel or sharded kind that has measured
 * one-node options at two or more GPU counts and measured NCCL
 * bandwidths (pr's hardware entry of the task's class) at those counts,
 * with a communication term from the fit or the peak memory. Per node g: the technique's
 * largest usable one-node count and half of it (when usable); K·g at most
 * SATURN_SCALE_MAX_GPUS. An option the task already has (technique, g, K)
 * is kept as it is; a prediction no faster than the one-node option at g
 * is left out (more GPUs for nothing); at most SATURN_MAX_OPTIONS options
 * per task.
 * Returns the number of options added (>= 0), or -1 with err (bad
 * arguments, ENOMEM); after failure pr is unchanged. */
int saturn_profile_predict_nodes(saturn_profile_t *pr,
				 const saturn_internode_t *in,
				 saturn_error_t *err);

#endif /* SATURN_INTERNODE_H */
