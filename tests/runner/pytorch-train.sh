#!/bin/sh
# contrib/pytorch/train.py under saturn-run on CPU (gloo): single, ddp and
# fsdp on 2 ranks via torchrun, progress reaching the progress file, resume
# from a checkpoint. Skipped (77) without PyTorch or torchrun.
. "$top_srcdir/tests/runner/common.sh"

py=
for p in python3 /usr/bin/python3; do
	if $p -c 'import torch' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] && command -v torchrun >/dev/null || { echo "no PyTorch/torchrun: skipped"; exit 77; }
train="$top_srcdir/contrib/pytorch/train.py"
techs=single
# Debian 12's torchrun (PyTorch 1.13 on Python 3.11) fails before starting
# workers ('NoneType' object has no attribute 'get'): test ddp/fsdp only
# where torchrun works.
if timeout 60 torchrun --standalone --nproc_per_node=1 --no_python true >/dev/null 2>&1; then
	techs="single ddp fsdp"
else
	echo "torchrun does not work here: ddp/fsdp not tested"
fi
for tech in $techs; do
	g=2; [ $tech = single ] && g=1
	rm -f "$tmp/p.json"
	SLURM_JOB_ID=7 SATURN_PROGRESS_FILE="$tmp/p.json" SATURN_TECHNIQUE=$tech SATURN_GPUS=$g \
		OMP_NUM_THREADS=1 timeout 300 saturn-run --batches 20 -- $py "$train" --hidden 64 >"$tmp/log" 2>&1 \
		|| { cat "$tmp/log"; fail "$tech run"; }
	grep -q '"batches_done":20' "$tmp/p.json" || fail "$tech progress: $(cat "$tmp/p.json")"
done
# checkpoint + resume
# (bounded: a run left behind by a failed check must not keep the test's
# output open, which would stall the test harness)
SATURN_PROGRESS_FILE="$tmp/c.json" SLURM_JOB_ID=8 OMP_NUM_THREADS=1 \
	saturn-run --batches 100000 -- $py "$train" --checkpoint "$tmp/ck.pt" >"$tmp/log" 2>&1 &
pid=$!
trap 'pkill -KILL -P $pid 2>/dev/null; kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT
i=0; while [ ! -s "$tmp/c.json" ] || ! grep -q '"batches_done":[1-9]' "$tmp/c.json"; do
	kill -0 $pid 2>/dev/null || { cat "$tmp/log"; fail "training ended before any progress"; }
	sleep 0.5; i=$((i+1)); [ $i -gt 240 ] && fail "no progress before checkpoint"; done
kill -USR1 $pid; wait $pid; rc=$?
[ $rc = 75 ] || { cat "$tmp/log"; fail "checkpoint exit $rc"; }
[ -s "$tmp/ck.pt" ] || fail "no checkpoint file"
exit 0
