#!/bin/sh
# contrib/pytorch/train.py under saturn-run on CPU (gloo), ranks started by
# saturn-run itself (no torchrun): single, ddp and fsdp on 2 ranks with the
# progress reaching the progress file; then a resize: ddp on 2 ranks is
# asked for a checkpoint (SIGUSR1, exit 75) and the same task resumes on 4
# ranks -- every global batch must appear exactly once in the batch log,
# the world size must change from 2 to 4 at the checkpoint, the loss must
# keep falling, and each batch's loss must be the one of an uninterrupted
# run in one process. Skipped (77) without PyTorch in /usr/bin/python3
# (Debian's python3-torch; the python3 first on PATH may lack it).
. "$top_srcdir/tests/runner/common.sh"

py=/usr/bin/python3
$py -c 'import torch' 2>/dev/null || { echo "no PyTorch in $py: skipped"; exit 77; }
train="$top_srcdir/contrib/pytorch/train.py"
small="--hidden 32 --layers 2 --batch-size 16"
OMP_NUM_THREADS=1
export OMP_NUM_THREADS
# a run still going after a failed check must not keep the test's output
# open (that would stall the harness): saturn-run passes SIGTERM on to its
# ranks
bg=
trap 'if [ -n "$bg" ]; then kill -TERM $bg; sleep 2; pkill -KILL -P $bg; kill -KILL $bg; fi 2>/dev/null; rm -rf "$tmp"' EXIT

# lines of the batch log FILE with world=W
worlds() { grep -c " world=$2 " "$1"; }

for tech in single ddp fsdp; do
	g=2
	[ $tech = single ] && g=1
	rm -f "$tmp/p.json" "$tmp/b.log"
	SLURM_JOB_ID=7 SATURN_PROGRESS_FILE="$tmp/p.json" SATURN_TECHNIQUE=$tech SATURN_GPUS=$g \
		timeout 120 saturn-run --batches 20 -- $py "$train" $small --batch-log "$tmp/b.log" \
		>"$tmp/log" 2>&1
	rc=$?
	if [ $tech = fsdp ] && [ $rc != 0 ] && grep -q 'fsdp: FullyShardedDataParallel unusable' "$tmp/log"; then
		# Debian 12's PyTorch 1.13 cannot import FSDP on Python 3.11
		echo "fsdp not tested: $(grep -m1 'unusable' "$tmp/log")"
		continue
	fi
	[ $rc = 0 ] || { cat "$tmp/log"; fail "$tech run: exit $rc"; }
	grep -q '"batches_done":20' "$tmp/p.json" || fail "$tech progress: $(cat "$tmp/p.json")"
	[ "$(worlds "$tmp/b.log" $g)" = 20 ] || { cat "$tmp/b.log"; fail "$tech: want 20 batches at world=$g"; }
done

# resize: 2 ranks, checkpoint mid-run, resume on 4 ranks
n=60
ck="--checkpoint $tmp/ck.pt --batch-log $tmp/r.log --batch-sleep 0.1 --lr 0.003"
SLURM_JOB_ID=9 SATURN_PROGRESS_FILE="$tmp/r.json" SATURN_TECHNIQUE=ddp SATURN_GPUS=2 \
	saturn-run --batches $n -- $py "$train" $small $ck >"$tmp/log1" 2>&1 &
bg=$!
i=0
while [ "$(cat "$tmp/r.log" 2>/dev/null | wc -l)" -lt 8 ]; do
	kill -0 $bg 2>/dev/null || { cat "$tmp/log1"; fail "2-rank run ended before batch 8"; }
	sleep 0.2
	i=$((i + 1))
	[ $i -gt 600 ] && { cat "$tmp/log1"; fail "2-rank run: no 8 batches in 120 s"; }
done
kill -USR1 $bg
wait $bg
rc=$?
bg=
[ $rc = 75 ] || { cat "$tmp/log1"; fail "checkpoint: exit $rc, want 75"; }
k=$(sed -n 's/.*checkpointed at batch \([0-9]*\);.*/\1/p' "$tmp/log1")
[ -n "$k" ] && [ "$k" -gt 0 ] && [ "$k" -lt $n ] || { cat "$tmp/log1"; fail "no checkpoint mid-run (batch '$k')"; }
[ -s "$tmp/ck.pt" ] || fail "no checkpoint file"
ls -a "$tmp" | grep -q '^\.ckpt-' && fail "temporary checkpoint file left behind"
grep -q "\"batches_done\":$k," "$tmp/r.json" || fail "progress file after the checkpoint: $(cat "$tmp/r.json")"
# the same task, requeued on 4 GPUs: saturn-run resumes from its progress
# file, train.py from the checkpoint
SLURM_JOB_ID=9 SATURN_PROGRESS_FILE="$tmp/r.json" SATURN_TECHNIQUE=ddp SATURN_GPUS=4 \
	timeout 120 saturn-run --batches $n -- $py "$train" $small $ck >"$tmp/log2" 2>&1 ||
	{ cat "$tmp/log2"; fail "4-rank resume: exit $?"; }
grep -q "\"batches_done\":$n," "$tmp/r.json" || fail "progress file after the resume: $(cat "$tmp/r.json")"
# the reference: the same training in one process, never interrupted
SATURN_TECHNIQUE=single timeout 120 saturn-run --batches $n -- $py "$train" $small --lr 0.003 \
	--batch-log "$tmp/ref.log" >"$tmp/log3" 2>&1 || { cat "$tmp/log3"; fail "reference run: exit $?"; }
$py - "$tmp/r.log" $n $k "$tmp/ref.log" <<'P' || { cat "$tmp/r.log"; fail "batch log of the resize"; }
import sys
path, n, k, ref = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = [dict(f.split("=") for f in l.split()) for l in open(path)]
batches = [int(r["batch"]) for r in rows]
assert sorted(batches) == list(range(n)), "batches lost or repeated: %s" % batches
world = {int(r["batch"]): int(r["world"]) for r in rows}
assert all(world[b] == 2 for b in range(k)), "world before batch %d is not 2" % k
assert all(world[b] == 4 for b in range(k, n)), "world from batch %d on is not 4" % k
loss = [float(r["loss"]) for r in sorted(rows, key=lambda r: int(r["batch"]))]
t = max(1, n // 10)
first, last = sum(loss[:t]) / t, sum(loss[-t:]) / t
assert last < first, "loss did not fall: first tenth %.4f, last tenth %.4f" % (first, last)
# model, optimizer and data position all carried over: the same losses as
# without the interruption, up to the order of float sums
want = [float(l.split()[2].split("=")[1]) for l in open(ref)]
assert len(want) == n, "reference run: %d batches" % len(want)
worst = max(abs(a - b) / b for a, b in zip(loss, want))
assert worst < 1e-3, "losses differ from the uninterrupted run by up to %.2g" % worst
print("resize at batch %d: %d batches once each, loss %.4f -> %.4f" % (k, n, first, last))
P
exit 0
