#!/bin/sh
# saturn-run's own rank launcher (saturn-run(1), LAUNCH OF RANKS), with
# shell programs for ranks: each rank's variables, the GPUs left as they
# are, MASTER_PORT (derived, moved off a taken port, or SATURN_MASTER_PORT),
# signals reaching every rank, a failed rank stopping the others with its
# status as saturn-run's, {nodes}, saturn-ranks in an admin's template, and
# ranks on several nodes as one srun step.
. "$top_srcdir/tests/runner/common.sh"
unset SATURN_MASTER_ADDR SATURN_MASTER_PORT SATURN_RANK_GRACE SLURM_STEP_ID SLURM_JOB_NUM_NODES SLURM_NNODES

# every rank's variables; CUDA_VISIBLE_DEVICES: the job's first 3 GPUs, the
# same for all ranks
out=$(SLURM_JOB_ID=11 SATURN_TECHNIQUE=ddp SATURN_GPUS=3 CUDA_VISIBLE_DEVICES=4,5,6,7 saturn-run -- \
	sh -c 'echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $CUDA_VISIBLE_DEVICES"' | sort)
port=$(echo "$out" | head -1 | cut -d' ' -f6)
case "$port" in [1-9][0-9]*) ;; *) fail "no MASTER_PORT: $out" ;; esac
want="0 0 3 3 127.0.0.1 $port 4,5,6
1 1 3 3 127.0.0.1 $port 4,5,6
2 2 3 3 127.0.0.1 $port 4,5,6"
[ "$out" = "$want" ] || fail "rank variables: $out"
# deterministic: the same job id gives the same port
out=$(SLURM_JOB_ID=11 SATURN_TECHNIQUE=fsdp SATURN_GPUS=2 saturn-run -- sh -c 'echo $MASTER_PORT' | sort -u)
[ "$out" = "$port" ] || fail "port of job 11 not stable: $port then $out"
# ... unless someone listens on it
python3 - "$port" "$tmp/listening" <<'P' &
import socket, sys, time
s = socket.socket()
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen()
open(sys.argv[2], "w").close()
time.sleep(30)
P
lp=$!
n=0; while [ ! -e "$tmp/listening" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
out=$(SLURM_JOB_ID=11 SATURN_TECHNIQUE=ddp SATURN_GPUS=2 saturn-run -- sh -c 'echo $MASTER_PORT' | sort -u)
kill $lp 2>/dev/null
[ -n "$out" ] && [ "$out" != "$port" ] || fail "taken port $port chosen again ($out)"
out=$(SATURN_MASTER_PORT=23456 SATURN_MASTER_ADDR=node7 SATURN_TECHNIQUE=ddp SATURN_GPUS=2 saturn-run -- \
	sh -c 'echo $MASTER_ADDR:$MASTER_PORT' | sort -u)
[ "$out" = node7:23456 ] || fail "SATURN_MASTER_ADDR/PORT: $out"
SATURN_MASTER_PORT=70000 SATURN_TECHNIQUE=ddp SATURN_GPUS=2 saturn-run -- true 2>"$tmp/err"
[ $? = 125 ] && grep -q 'SATURN_MASTER_PORT=70000' "$tmp/err" || fail "bad SATURN_MASTER_PORT: $(cat "$tmp/err")"
# one process, no rank variables, for single and for direct programs
out=$(SATURN_TECHNIQUE=single saturn-run -- sh -c 'echo "r${RANK:-none}"')
[ "$out" = rnone ] || fail "single: $out"

# a failed rank: saturn-run exits with its status and stops the others
# after SATURN_RANK_GRACE seconds
t0=$(date +%s)
SATURN_RANK_GRACE=1 SATURN_TECHNIQUE=ddp SATURN_GPUS=3 timeout 60 saturn-run -- \
	sh -c 'if [ $RANK = 1 ]; then sleep 0.3; exit 4; fi; trap "exit 9" TERM; while :; do sleep 0.1; done' 2>"$tmp/err"
rc=$?
[ $rc = 4 ] || fail "failed rank: status $rc, want 4 ($(cat "$tmp/err"))"
[ $(($(date +%s) - t0)) -lt 30 ] || fail "other ranks not stopped in time"
grep -q 'rank 1 (pid [0-9]*) exited with status 4' "$tmp/err" || fail "failed-rank message: $(cat "$tmp/err")"
grep -q '2 rank(s) still running 1 s after rank 1 failed: stopping them' "$tmp/err" || fail "stop message: $(cat "$tmp/err")"
# ranks that all end 0: 0
SATURN_TECHNIQUE=ddp SATURN_GPUS=4 saturn-run -- sh -c 'sleep 0.$RANK' || fail "4 ranks ending 0: status $?"

# SIGUSR1 (checkpoint) and SIGTERM reach every rank
cat >"$tmp/rank.sh" <<'P'
trap 'echo x > "$DIR/usr1.$RANK"; exit 0' USR1
trap 'echo x > "$DIR/term.$RANK"; exit 0' TERM
echo x > "$DIR/ready.$RANK"
while :; do sleep 0.1; done
P
for sig in USR1 TERM; do
	rm -f "$tmp"/ready.* "$tmp"/usr1.* "$tmp"/term.*
	DIR=$tmp SATURN_TECHNIQUE=ddp SATURN_GPUS=3 saturn-run --grace 20 -- sh "$tmp/rank.sh" 2>"$tmp/err" &
	pid=$!
	n=0; while [ "$(ls "$tmp" | grep -c '^ready\.')" -lt 3 ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
	kill -$sig $pid
	(n=0; while kill -0 $pid 2>/dev/null && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
	 kill -KILL $pid 2>/dev/null) &
	wait $pid
	rc=$?
	wait
	s=$(echo $sig | tr 'A-Z' 'a-z')
	[ "$(ls "$tmp" | grep -c "^$s\.")" = 3 ] || fail "SIG$sig reached $(ls "$tmp" | grep "^$s\." | tr '\n' ' ') ($(cat "$tmp/err"))"
	want=0
	[ $sig = USR1 ] && want=75
	[ $rc = $want ] || fail "SIG$sig: status $rc, want $want"
done

# {nodes}, and saturn-ranks in an admin's technique
cat >"$tmp/t.conf" <<'C'
[technique multi]
gpus = 1-8
launch = saturn-ranks env NODES={nodes} {command}
C
# ranks on several nodes: one srun step (a stand-in here, SATURN_SRUN,
# that starts the tasks locally with the step's task variables), node 0's
# ranks first, MASTER_ADDR the job's first node
cat >"$tmp/srun" <<'S'
#!/bin/sh
echo "$@" >"$DIR/srun.args"
nodes=1 per=1
while :; do
	case "$1" in
	--nodes=*) nodes=${1#--nodes=} ;;
	--ntasks-per-node=*) per=${1#--ntasks-per-node=} ;;
	--*) ;;
	*) break ;;
	esac
	shift
done
pids= n=0
while [ $n -lt $nodes ]; do
	i=0
	while [ $i -lt $per ]; do
		SLURM_PROCID=$((n * per + i)) SLURM_LOCALID=$i SLURM_NODEID=$n "$@" &
		pids="$pids $!"
		i=$((i + 1))
	done
	n=$((n + 1))
done
trap 'kill -TERM $pids' TERM
trap 'kill -USR1 $pids' USR1
rc=0
for p in $pids; do
	while :; do
		wait $p; s=$?
		kill -0 $p 2>/dev/null || break
	done
	[ $s = 0 ] || [ $rc != 0 ] || rc=$s
done
exit $rc
S
chmod +x "$tmp/srun"
out=$(DIR=$tmp SATURN_SRUN=$tmp/srun SLURM_JOB_ID=12 SLURM_JOB_NUM_NODES=3 SLURM_JOB_NODELIST='gpu[07-08],cpu1' \
	SATURN_PROGRESS_PIPE=x SATURN_TECHNIQUES_CONF="$tmp/t.conf" SATURN_TECHNIQUE=multi SATURN_GPUS=2 \
	saturn-run -- sh -c 'echo $NODES/$RANK/$LOCAL_RANK/$NODE_RANK/$WORLD_SIZE/$LOCAL_WORLD_SIZE/$MASTER_ADDR/${SATURN_PROGRESS_PIPE:+fifo}' | sort)
[ "$out" = "3/0/0/0/6/2/gpu07/fifo
3/1/1/0/6/2/gpu07/fifo
3/2/0/1/6/2/gpu07/
3/3/1/1/6/2/gpu07/
3/4/0/2/6/2/gpu07/
3/5/1/2/6/2/gpu07/" ] || fail "{nodes} with saturn-ranks on 3 nodes: $out"
grep -q -- '^--nodes=3 --ntasks=6 --ntasks-per-node=2 .*/bin/sh -c .* saturn-rank env NODES=3 sh -c' "$tmp/srun.args" ||
	fail "srun line: $(cat "$tmp/srun.args")"
# a failed rank on another node: the step's status is saturn-run's
DIR=$tmp SATURN_SRUN=$tmp/srun SLURM_JOB_NUM_NODES=2 SLURM_JOB_NODELIST=n1,n2 \
	SATURN_TECHNIQUES_CONF="$tmp/t.conf" SATURN_TECHNIQUE=multi SATURN_GPUS=2 \
	saturn-run -- sh -c '[ $RANK != 3 ] || exit 5' 2>"$tmp/err"
rc=$?
[ $rc = 5 ] || fail "failed rank on node 1: status $rc, want 5 ($(cat "$tmp/err"))"
# no node list: said, not guessed
SLURM_JOB_NUM_NODES=2 SATURN_SRUN=$tmp/srun SATURN_TECHNIQUES_CONF="$tmp/t.conf" SATURN_TECHNIQUE=multi \
	SATURN_GPUS=2 saturn-run -- true 2>"$tmp/err"
[ $? = 125 ] && grep -q 'no first node in SLURM_JOB_NODELIST' "$tmp/err" || fail "no node list: $(cat "$tmp/err")"
# SIGUSR1 reaches the ranks of every node through the step
rm -f "$tmp"/ready.* "$tmp"/usr1.*
DIR=$tmp SATURN_SRUN=$tmp/srun SLURM_JOB_NUM_NODES=2 SLURM_JOB_NODELIST='x[1-2]' \
	SATURN_TECHNIQUES_CONF="$tmp/t.conf" SATURN_TECHNIQUE=multi SATURN_GPUS=2 \
	saturn-run --grace 20 -- sh "$tmp/rank.sh" 2>"$tmp/err" &
pid=$!
n=0; while [ "$(ls "$tmp" | grep -c '^ready\.')" -lt 4 ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
kill -USR1 $pid
(n=0; while kill -0 $pid 2>/dev/null && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
 kill -KILL $pid 2>/dev/null) &
wait $pid
rc=$?
wait
[ "$(ls "$tmp" | grep -c '^usr1\.')" = 4 ] || fail "SIGUSR1 on 2 nodes reached $(ls "$tmp" | grep '^usr1\.' | tr '\n' ' ') ($(cat "$tmp/err"))"
[ $rc = 75 ] || fail "SIGUSR1 on 2 nodes: status $rc, want 75"
printf '[technique bare]\ngpus = 1-2\nlaunch = saturn-ranks\n' >"$tmp/t.conf"
SATURN_TECHNIQUES_CONF="$tmp/t.conf" SATURN_TECHNIQUE=bare saturn-run -- true 2>"$tmp/err"
[ $? = 125 ] || fail "saturn-ranks without a command accepted: $(cat "$tmp/err")"
exit 0
