#!/bin/sh
# saturn-run: user mode, technique launch lines, progress file, signature and
# trial modes, resume, checkpoint-before-requeue, exit status.
. "$top_srcdir/tests/runner/common.sh"

# no assignment: the command runs as given, its status is ours
saturn-run -- sh -c 'exit 7'; [ $? = 7 ] || fail "exit status not passed through"
out=$(saturn-run -- sh -c 'echo "$SATURN_TECHNIQUE $SATURN_RESUME_BATCH"')
[ "$out" = "user 0" ] || fail "user mode env: $out"

# an admin technique from the configuration file: the launch template
cat > "$tmp/t.conf" <<'C'
[technique echoer]
gpus = 1-4
launch = sh -c 'echo "L:$0:$1:$ECHOER_G:$SATURN_PARAM_LEVEL:$CUDA_VISIBLE_DEVICES"' {command}
env = ECHOER_G=g{gpus}
param = level int 1 9 3
C
out=$(SATURN_TECHNIQUES_CONF="$tmp/t.conf" SATURN_TECHNIQUE=echoer SATURN_GPUS=2 \
	SATURN_TECHNIQUE_PARAMS='{"level":5}' CUDA_VISIBLE_DEVICES=3,5,7 saturn-run -- prog arg1)
[ "$out" = "L:prog:arg1:g2:5:3,5" ] || fail "launch line: $out"
SATURN_TECHNIQUES_CONF="$tmp/t.conf" SATURN_TECHNIQUE=echoer SATURN_GPUS=2 \
	SATURN_TECHNIQUE_PARAMS='{"level":50}' saturn-run -- true 2>"$tmp/err"
[ $? = 125 ] || fail "bad parameter not refused"
grep -q "params.level" "$tmp/err" || fail "bad parameter message: $(cat "$tmp/err")"
SATURN_TECHNIQUE=nosuch saturn-run -- true 2>"$tmp/err"; [ $? = 125 ] || fail "unknown technique"
SATURN_TECHNIQUE=single SATURN_GPUS=2 saturn-run -- true 2>/dev/null; [ $? = 125 ] || fail "gpu range"

# progress file from the emulator's protocol lines
SLURM_JOB_ID=42 SATURN_PROGRESS_FILE="$tmp/42.json" SATURN_TECHNIQUE=ddp SATURN_GPUS=2 \
	saturn-run --batches 30 -- saturn-emulate --model gpt2 --batch-size 8 --time-scale 0.01 \
	|| fail "ddp run"
grep -q '"format":"saturn-progress/1","job_id":42,"batches_done":30,"batches_total":30' "$tmp/42.json" \
	|| fail "progress file: $(cat "$tmp/42.json")"

# resume: a requeued job continues from its own progress file
out=$(SLURM_JOB_ID=42 SATURN_PROGRESS_FILE="$tmp/42.json" saturn-run -- sh -c 'echo $SATURN_RESUME_BATCH')
[ "$out" = 30 ] || fail "resume from progress file: $out"
out=$(SATURN_RESUME_BATCH=12 saturn-run -- sh -c 'echo $SATURN_RESUME_BATCH')
[ "$out" = 12 ] || fail "resume from env: $out"

# signature mode: nothing runs, the learning rate is not part of it
SATURN_MODE=signature SATURN_REPORT_FILE="$tmp/sig.json" saturn-run --batches 400 -- \
	/usr/local/bin/trainer --model m1 --lr 3e-4 --batch-size 8 --seed=3 >"$tmp/out" || fail "signature"
[ -s "$tmp/out" ] && fail "signature mode printed something"
grep -q '{"signature":"trainer --model m1 --batch-size 8","batches":400}' "$tmp/sig.json" \
	|| fail "signature report: $(cat "$tmp/sig.json")"

# trial mode: measured, oom, failed, timeout
trial() {
	rm -f "$tmp/tr.json"
	SATURN_MODE=trial SATURN_REPORT_FILE="$tmp/tr.json" SATURN_TRIAL_BATCHES=3 "$@" || fail "trial exit"
}
trial env SATURN_TECHNIQUE=fsdp SATURN_GPUS=2 saturn-run -- saturn-emulate --model gpt2-xl --batch-size 16 --time-scale 0.02
grep -q '"status":"measured"' "$tmp/tr.json" || fail "measured: $(cat "$tmp/tr.json")"
spb=$(sed 's/.*"sec_per_batch":\([0-9.e-]*\).*/\1/' "$tmp/tr.json")
# model: 0.640 s x 0.02 = 0.0128 s
awk -v s="$spb" 'BEGIN { exit !(s > 0.011 && s < 0.015) }' || fail "trial time $spb"
trial env SATURN_TECHNIQUE=single saturn-run -- saturn-emulate --model llama-7b --batch-size 8 --time-scale 0.01
grep -q '"status":"oom"' "$tmp/tr.json" || fail "oom: $(cat "$tmp/tr.json")"
trial env SATURN_TECHNIQUE=single saturn-run -- sh -c 'exit 9'
grep -q '"status":"failed".*exit status 9' "$tmp/tr.json" || fail "failed: $(cat "$tmp/tr.json")"
trial env SATURN_TRIAL_TIMEOUT=1 SATURN_TECHNIQUE=single saturn-run -- sleep 30
grep -q '"status":"timeout"' "$tmp/tr.json" || fail "timeout: $(cat "$tmp/tr.json")"

# checkpoint before requeue: SIGUSR1 -> program checkpoints -> exit 75
SLURM_JOB_ID=43 SATURN_PROGRESS_FILE="$tmp/43.json" saturn-run --grace 10 -- \
	saturn-emulate --model gpt2 --batch-size 8 --batches 100000 --time-scale 0.05 &
pid=$!
sleep 1
kill -USR1 $pid
wait $pid; rc=$?
[ $rc = 75 ] || fail "checkpoint exit status $rc"
grep -q '"job_id":43' "$tmp/43.json" || fail "progress after checkpoint"

# Slurm signals every process of the step, the program before saturn-run:
# the program may checkpoint and exit 0 before saturn-run's own SIGUSR1
# arrives. Here only the program gets it: still exit 75, or the job would
# end with its work undone.
rm -f "$tmp/prog.pid"
SLURM_JOB_ID=44 SATURN_PROGRESS_FILE="$tmp/44.json" saturn-run --grace 10 -- \
	sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec saturn-emulate --model gpt2 --batch-size 8 --batches 100000 --time-scale 0.05' \
	"$tmp/prog.pid" 2>"$tmp/err" &
pid=$!
n=0; while [ ! -s "$tmp/prog.pid" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
sleep 0.5
kill -USR1 "$(cat "$tmp/prog.pid")"
wait $pid; rc=$?
[ $rc = 75 ] || fail "checkpoint asked of the program only: status $rc ($(cat "$tmp/err"))"
grep -q "a checkpoint request that reached it first" "$tmp/err" || fail "no message: $(cat "$tmp/err")"
# ... but a program that checkpoints after its last batch and exits 0 is done
printf '%s\n' 'echo "SATURN_PROGRESS batches_done=10 batches_total=10" > "$SATURN_PROGRESS_PIPE"' \
	'echo "SATURN_CHECKPOINTED batch=10" > "$SATURN_PROGRESS_PIPE"' >"$tmp/ckpt-end.sh"
saturn-run --batches 10 -- sh "$tmp/ckpt-end.sh"; rc=$?
[ $rc = 0 ] || fail "a program that finished and checkpointed: status $rc, not 0"

# a program that checkpoints but does not exit is stopped after --grace
# (SIGTERM) and saturn-run still exits 75 so the job is requeued
cat > "$tmp/ckpt-stays.sh" <<'P'
trap 'echo "SATURN_CHECKPOINTED batch=5" > "$SATURN_PROGRESS_PIPE"' USR1
trap 'exit 0' TERM
echo $$ > "$READY.tmp" && mv "$READY.tmp" "$READY"
while :; do sleep 0.1; done
P
READY="$tmp/ready" saturn-run --grace 1 -- sh "$tmp/ckpt-stays.sh" 2>"$tmp/err" &
pid=$!
n=0; while [ ! -s "$tmp/ready" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
kill -USR1 $pid
# watchdog: saturn-run must be done well within 20 s
(n=0; while kill -0 $pid 2>/dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
 kill -KILL $pid 2>/dev/null) &
wait $pid; rc=$?
wait
[ -s "$tmp/ready" ] && kill -KILL "-$(cat "$tmp/ready")" 2>/dev/null
[ $rc = 75 ] || fail "checkpointed program left running: status $rc ($(cat "$tmp/err"))"
grep -q "checkpointed at batch 5" "$tmp/err" || fail "checkpoint message: $(cat "$tmp/err")"

# SIGTERM is forwarded to the program's process group
saturn-run -- sh -c 'trap "exit 3" TERM; while :; do sleep 0.1; done' &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid; rc=$?
[ $rc = 3 ] || fail "SIGTERM forwarding: status $rc"
exit 0
