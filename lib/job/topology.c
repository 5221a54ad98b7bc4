/* topology.c - GPU links from hwloc or gres.conf (see topology.h).
 *
 * hwloc's "NVLinkBandwidth" matrix holds one value per GPU<->GPU and
 * GPU<->NVSwitch-port link. On NVSwitch machines the GPU-to-GPU figure is the
 * GPU's total bandwidth into the merged switch (hwloc_distances_transform
 * MERGE_SWITCH_PORTS, then TRANSITIVE_CLOSURE). On machines without
 * switches the closure would invent links through CPUs, so it is skipped
 * (the POWER8 recording in hwloc's tests shows why).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "topology.h"

void saturn_topology_destroy(saturn_topology_t *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->ngpus; i++)
		free(t->names ? t->names[i] : NULL);
	free(t->names);
	free(t->gpu_model);
	free(t->link_gbs);
	free(t);
}

static saturn_topology_t *topo_alloc(int n)
{
	saturn_topology_t *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ngpus = n;
	strcpy(t->interconnect, "unknown");
	if (n > 0) {
		t->names = calloc(n, sizeof(*t->names));
		t->link_gbs = calloc((size_t)n * n, sizeof(double));
		if (!t->names || !t->link_gbs) {
			saturn_topology_destroy(t);
			return NULL;
		}
	}
	return t;
}

static int has_prefix(const char *s, const char *p)
{
	return s && strncmp(s, p, strlen(p)) == 0;
}

/* 1 for an NVML GPU, 2 for a CUDA GPU, 0 otherwise */
static int gpu_family(hwloc_obj_t o)
{
	const char *b = hwloc_obj_get_info_by_name(o, "Backend");

	if (has_prefix(o->name, "nvml") || (b && strcmp(b, "NVML") == 0))
		return 1;
	if (has_prefix(o->name, "cuda") || (b && strcmp(b, "CUDA") == 0))
		return 2;
	return 0;
}

static hwloc_obj_t pci_parent(hwloc_obj_t o)
{
	while (o && o->type != HWLOC_OBJ_PCI_DEVICE)
		o = o->parent;
	return o;
}

static double pcie_gbs(hwloc_obj_t o)
{
	hwloc_obj_t p = pci_parent(o);

	if (p && p->attr && p->attr->pcidev.linkspeed > 0.5)
		return p->attr->pcidev.linkspeed;
	return SATURN_PCIE_DEFAULT_GBS;
}

/* The CUDA device sharing o's PCI device (for memory size), or NULL. */
static hwloc_obj_t cuda_sibling(hwloc_topology_t topo, hwloc_obj_t o)
{
	hwloc_obj_t p = pci_parent(o), c = NULL;

	while ((c = hwloc_get_next_osdev(topo, c)))
		if (gpu_family(c) == 2 && pci_parent(c) == p && p)
			return c;
	return NULL;
}

static int has_nvswitch(hwloc_topology_t topo)
{
	hwloc_obj_t o = NULL;

	while ((o = hwloc_get_next_pcidev(topo, o)))
		if (o->subtype && strcmp(o->subtype, "NVSwitch") == 0)
			return 1;
	return 0;
}

static saturn_topology_t *from_hwloc(hwloc_topology_t topo, saturn_error_t *err)
{
	hwloc_obj_t o = NULL, *gpus = NULL;
	int n = 0, fam = 0, counts[3] = {0, 0, 0};
	saturn_topology_t *t = NULL;
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1;
	int sw = has_nvswitch(topo);

	while ((o = hwloc_get_next_osdev(topo, o)))
		counts[gpu_family(o)]++;
	/* NVLink distances are recorded against NVML devices: prefer them */
	fam = counts[1] ? 1 : counts[2] ? 2 : 0;
	n = counts[fam];
	if (!fam)
		n = 0;
	if (!(t = topo_alloc(n)) || (n && !(gpus = calloc(n, sizeof(*gpus))))) {
		saturn_error_set(err, "out of memory");
		goto fail;
	}
	n = 0;
	while (fam && (o = hwloc_get_next_osdev(topo, o)))
		if (gpu_family(o) == fam) {
			gpus[n] = o;
			if (!(t->names[n] = strdup(o->name ? o->name : "gpu")))
				goto nomem;
			n++;
		}
	if (n == 0)
		goto done;
	{
		const char *model =
		    hwloc_obj_get_info_by_name(gpus[0], "GPUModel");
		hwloc_obj_t c =
		    fam == 2 ? gpus[0] : cuda_sibling(topo, gpus[0]);
		const char *mem =
		    c ? hwloc_obj_get_info_by_name(c, "CUDAGlobalMemorySize")
		      : NULL;

		if (model && !(t->gpu_model = strdup(model)))
			goto nomem;
		if (mem)
			t->gpu_mem_mb = strtod(mem, NULL) / 1024.0; /* KiB */
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double a = pcie_gbs(gpus[i]), b = pcie_gbs(gpus[j]);

			t->link_gbs[i * n + j] = i == j ? 0 : (a < b ? a : b);
		}
	strcpy(t->interconnect, "pcie");
	if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &d, 0) ==
		0 &&
	    nr >= 1) {
		if (sw) {
			if (hwloc_distances_transform(
				topo, d,
				HWLOC_DISTANCES_TRANSFORM_MERGE_SWITCH_PORTS,
				NULL, 0) < 0 ||
			    hwloc_distances_transform(
				topo, d,
				HWLOC_DISTANCES_TRANSFORM_TRANSITIVE_CLOSURE,
				NULL, 0) < 0) {
				saturn_error_set(err,
						 "NVLinkBandwidth: cannot "
						 "merge NVSwitch ports: %s",
						 strerror(errno));
				goto fail;
			}
		}
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				int a = -1, b = -1;

				if (i == j)
					continue;
				for (unsigned k = 0; k < d->nbobjs; k++) {
					if (d->objs[k] == gpus[i])
						a = (int)k;
					if (d->objs[k] == gpus[j])
						b = (int)k;
				}
				if (a < 0 || b < 0)
					continue;
				hwloc_uint64_t v = d->values[a * d->nbobjs + b];

				if (v > 0 && v < 100000000ULL) {
					t->link_gbs[i * n + j] = v / 1000.0;
					if (i < j)
						t->nvlink_pairs++;
				}
			}
		if (t->nvlink_pairs)
			strcpy(t->interconnect, sw ? "nvswitch" : "nvlink");
	}
done:
	if (d)
		hwloc_distances_release(topo, d);
	free(gpus);
	return t;
nomem:
	saturn_error_set(err, "out of memory");
fail:
	if (d)
		hwloc_distances_release(topo, d);
	free(gpus);
	saturn_topology_destroy(t);
	return NULL;
}

static saturn_topology_t *load(const char *xml, saturn_error_t *err)
{
	hwloc_topology_t topo;
	saturn_topology_t *t = NULL;

	if (hwloc_topology_init(&topo) < 0) {
		saturn_error_set(err, "hwloc: %s", strerror(errno));
		return NULL;
	}
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (xml && hwloc_topology_set_xml(topo, xml) < 0) {
		saturn_error_set(
		    err, "%s: not a hwloc XML topology this hwloc can read: %s",
		    xml, strerror(errno));
		goto out;
	}
	if (hwloc_topology_load(topo) < 0) {
		saturn_error_set(err, "%s: hwloc cannot load the topology: %s",
				 xml ? xml : "this machine", strerror(errno));
		goto out;
	}
	t = from_hwloc(topo, err);
	if (!t && xml)
		saturn_error_prefix(err, "%s", xml);
out:
	hwloc_topology_destroy(topo);
	return t;
}

saturn_topology_t *saturn_topology_load_xml(const char *path,
					    saturn_error_t *err)
{
	return load(path, err);
}

saturn_topology_t *saturn_topology_load_system(saturn_error_t *err)
{
	return load(NULL, err);
}

saturn_topology_t *saturn_topology_from_gres(const char *text,
					     double per_link_gbs,
					     double pcie_gbs,
					     saturn_error_t *err)
{
	int cap = 64, n = 0, lineno = 0;
	int *links = calloc((size_t)cap * cap, sizeof(int));
	int *have = calloc(cap, sizeof(int));
	const char *p = text;
	saturn_topology_t *t = NULL;

	if (!links || !have) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	while (*p) {
		size_t l = strcspn(p, "\n");
		char line[4096], *l2, *h;

		lineno++;
		if (l >= sizeof(line)) {
			saturn_error_set(err, "gres.conf line %d: too long",
					 lineno);
			goto out;
		}
		memcpy(line, p, l);
		line[l] = '\0';
		p += l + (p[l] == '\n');
		if ((h = strchr(line, '#')))
			*h = '\0';
		if (!strstr(line, "Name=gpu"))
			continue;
		if (n >= cap) {
			saturn_error_set(err,
					 "gres.conf line %d: more than %d GPUs",
					 lineno, cap);
			goto out;
		}
		l2 = strstr(line, "Links=");
		if (l2) {
			int k = 0;
			char *q = l2 + 6;

			have[n] = 1;
			while (*q && !isspace((unsigned char)*q)) {
				char *end;
				long v = strtol(q, &end, 10);

				if (end == q || v < -1 || v > 64 || k >= cap) {
					saturn_error_set(
					    err,
					    "gres.conf line %d: Links: want a "
					    "comma list of -1, 0 or link "
					    "counts",
					    lineno);
					goto out;
				}
				links[n * cap + k++] = (int)v;
				q = end;
				if (*q == ',')
					q++;
			}
			if (links[n * cap + n] != -1 && k > n) {
				saturn_error_set(
				    err,
				    "gres.conf line %d: Links: entry %d (this "
				    "GPU) must be -1",
				    lineno, n);
				goto out;
			}
		}
		n++;
	}
	if (!(t = topo_alloc(n))) {
		saturn_error_set(err, "out of memory");
		goto out;
	}
	strcpy(t->interconnect, n ? "pcie" : "unknown");
	for (int i = 0; i < n; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "gpu%d", i);
		if (!(t->names[i] = strdup(nm))) {
			saturn_topology_destroy(t);
			t = NULL;
			saturn_error_set(err, "out of memory");
			goto out;
		}
		for (int j = 0; j < n; j++) {
			int k = have[i] ? links[i * cap + j] : 0;

			if (i == j)
				continue;
			t->link_gbs[i * n + j] =
			    k > 0 ? k * per_link_gbs : pcie_gbs;
			if (k > 0 && i < j)
				t->nvlink_pairs++;
		}
	}
	if (t->nvlink_pairs)
		strcpy(t->interconnect, "nvlink");
out:
	free(links);
	free(have);
	return t;
}

double saturn_topology_ring_gbs(const saturn_topology_t *t, const int *ids,
				int n)
{
	double m = 0;

	if (n < 2)
		return 0;
	for (int k = 0; k < n; k++) {
		int a = ids[k], b = ids[(k + 1) % n];
		double v;

		if (a < 0 || b < 0 || a >= t->ngpus || b >= t->ngpus)
			return 0;
		v = t->link_gbs[a * t->ngpus + b];
		if (k == 0 || v < m)
			m = v;
	}
	return m;
}
