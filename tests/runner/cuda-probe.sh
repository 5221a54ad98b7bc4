#!/bin/sh
# The CUDA/NCCL backend on a real device; skipped (77) without CUDA or a GPU.
. "$top_srcdir/tests/runner/common.sh"

printf '#!/bin/sh\nexit 0\n' > "$tmp/s.sbatch"
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} saturn-profile --backend cuda --batch b --script "$tmp/s.sbatch" \
	--task-ids 0 --output "$tmp/p.json" 2>"$tmp/err"
rc=$?
[ $rc = 77 ] && { cat "$tmp/err"; exit 77; }
# a device exists: the hardware part must have worked (no signature -> exit 1)
grep -q "GPUs (" "$tmp/err" || fail "cuda probe: $(cat "$tmp/err")"
exit 0
