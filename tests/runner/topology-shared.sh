#!/bin/sh
# Topology probes against hwloc's recorded machines in the shared folder
# (skipped when absent) and the project's own fixtures.
. "$top_srcdir/tests/runner/common.sh"

fx="$top_srcdir/contrib/topologies"
saturn-profile --show-topology --topology "$fx/nvlink-8gpu.xml" | head -1 | \
	grep -q "gpus=8 interconnect=nvswitch nvlink_pairs=28 gpu_mem_mb=81920" || fail "nvlink fixture"
saturn-profile --show-topology --topology "$fx/pcie-8gpu.xml" | head -1 | \
	grep -q "gpus=8 interconnect=pcie nvlink_pairs=0" || fail "pcie fixture"
d="${SATURN_SHARED_DIR:-}/topologies"
[ -f "$d/nvidia-dgx2-nvswitch.xml" ] || { echo "no shared topologies: skipped"; exit 77; }
out=$(saturn-profile --show-topology --topology "$d/nvidia-dgx2-nvswitch.xml")
echo "$out" | head -1 | grep -q "gpus=16 interconnect=nvswitch nvlink_pairs=120" || fail "dgx2: $out"
echo "$out" | grep -q "^nvml0 0.0 150.0 150.0" || fail "dgx2 links: $(echo "$out" | sed -n 2p)"
out=$(saturn-profile --show-topology --topology "$d/power8-4xp100-nvlink.xml")
echo "$out" | head -1 | grep -q "gpus=4 interconnect=nvlink nvlink_pairs=2" || fail "power8: $out"
echo "$out" | grep -q "^nvml0 0.0 40.0 15.8 15.8" || fail "power8 links (no closure): $out"
out=$(saturn-profile --show-topology --topology "$d/x86-1xk40-pcie.xml")
echo "$out" | head -1 | grep -q "gpus=1 interconnect=pcie.*model=Tesla K40m" || fail "k40: $out"
exit 0
