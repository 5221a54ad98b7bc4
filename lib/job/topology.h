/* topology.h - GPUs of a node and the links between them.
 *
 * From hwloc (the live machine or a recorded XML topology): GPU OS devices
 * found by name or backend (nvml*, cuda*; never by OS-device type, which
 * differs between hwloc versions), their model and memory, and a GPU-to-GPU
 * bandwidth matrix: NVLink from the "NVLinkBandwidth" distances (switch
 * ports merged and transitive closure applied only when NVSwitch objects
 * exist), otherwise the slower PCIe link of the two GPUs. From Slurm's
 * gres.conf `Links=` lists when hwloc has no NVLink information.
 * No hwloc type appears here.
 */
#ifndef SATURN_TOPOLOGY_H
#define SATURN_TOPOLOGY_H

#include "error.h"

#define SATURN_PCIE_DEFAULT_GBS                                                \
	15.75 /* PCIe 3.0 x16, when hwloc has no speed */

typedef struct saturn_topology {
	int ngpus;
	char **names;	   /* OS device names, e.g. "nvml0" or "cuda0" */
	char *gpu_model;   /* model of GPU 0, or NULL */
	double gpu_mem_mb; /* memory of GPU 0 (MiB), 0 = unknown */
	double *link_gbs;  /* ngpus x ngpus, GB/s one direction, diagonal 0 */
	int nvlink_pairs;  /* pairs connected by NVLink */
	char interconnect[16]; /* "nvswitch", "nvlink", "pcie", "unknown" */
} saturn_topology_t;

/* Load a recorded hwloc XML file. NULL with err ("FILE: ..."). */
saturn_topology_t *saturn_topology_load_xml(const char *path,
					    saturn_error_t *err);

/* Discover this machine (honours HWLOC_XMLFILE like every hwloc program).
 * NULL with err. */
saturn_topology_t *saturn_topology_load_system(saturn_error_t *err);

/* From gres.conf text: each `Name=gpu` line with `Links=a,b,c,...` gives
 * one GPU, in order; -1 = itself, 0 = no direct link (PCIe, pcie_gbs),
 * k > 0 = k NVLinks of per_link_gbs each. Lines without Links= are PCIe.
 * NULL with err ("gres.conf line 3: Links: ..."). */
saturn_topology_t *saturn_topology_from_gres(const char *text,
					     double per_link_gbs,
					     double pcie_gbs,
					     saturn_error_t *err);

void saturn_topology_destroy(saturn_topology_t *t);

/* Bandwidth of a ring over GPUs ids[0..n-1] (indexes into the topology):
 * the slowest link of the ring, 0 when n < 2 or an index is bad. */
double saturn_topology_ring_gbs(const saturn_topology_t *t, const int *ids,
				int n);

#endif /* SATURN_TOPOLOGY_H */
