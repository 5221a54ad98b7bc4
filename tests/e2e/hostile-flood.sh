#!/bin/sh
# hostile-flood.sh - batch-name floods are bounded (issue #20, problems 4
# and 8; doc/security.md, "Bounded resources").
#  1. Companion jobs: the attacker submits 6 batch names without profiles.
#     Before, each got a whole-node profiler job at once (6 jobs of 8
#     GPUs: both nodes taken for rounds), and the victim's 1-GPU task
#     waited for them. Now the attacker has at most saturn_companion_jobs
#     (here 1) profiler job at a time, the other batches wait with a reason
#     saying so, and the victim's task starts within a few cycles.
#  2. Records and script copies: once the attacker cancels everything, its
#     profiler-UID-NAME.job records and UID-NAME.profile.script copies
#     are removed within a few cycles (before: kept for ever).
#  3. Memory: the attacker writes 24 valid ~4 MiB profiles under 24 names
#     (64 signatures, each with a 62,000-character params text)
#     and holds one task per name. Now at most saturn_profile_cache_mb
#     (here 32) MiB of them are loaded at a time (each refusal logged, naming the
#     batch, which plans from its request), and once the tasks ended
#     slurmctld's RSS is back within 32 MiB of before. Before, all 24 were
#     kept in slurmctld for ever (~100 MiB more after the tasks ended).
#  4. A file of 8 MiB in the attacker's progress folder is removed by the
#     sweep (before: kept).
# FLOOD_CHECK (default "1 2 3 4") selects whose assertions are made; every
# part runs (e.g. FLOOD_CHECK=3 to see part 3 fail on an older plugin).
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
wrap="${TMPDIR:-/tmp}/saturn-e2e-floodwrap-$$"
cat >"$wrap" <<'EOW'
#!/bin/sh
# saturn-profile stand-in: 25 s of "profiling", then a one-option profile
ids= out= batch=
while [ $# -gt 0 ]; do
	case $1 in
	--task-ids) ids=$2; shift ;;
	--output) out=$2; shift ;;
	--batch) batch=$2; shift ;;
	esac
	shift
done
sleep 25
cat >"$out.tmp" <<EOP || exit 1
{ "format": "saturn-profile/1", "batch": "$batch", "created": 1,
  "tasks": [ { "signature": "m", "task_ids": "$ids", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 1, "sec_per_batch": 0.1, "status": "measured" } ] } ] }
EOP
mv "$out.tmp" "$out"
EOW
chmod 755 "$wrap"
# slurmctld's memory is what this test measures: no cycle recording
# (saturn_record_cycles holds a copy of every input, the large profiles
# here included, while it writes each cycle; a debugging aid, off by
# default)
SATURN_E2E_REPLAY=0
sched_setup 44 "saturn_profiler=$wrap,saturn_profile_time=2,saturn_companion_jobs=1,saturn_profile_cache_mb=32"
hostile_dirs
A=$HOSTILE_UID
V=$VICTIM_UID
CTLD_PID=$(cat "$SATURN_CLUSTER_DIR/run/slurmctld.pid")
checking() {
	case " ${FLOOD_CHECK:-1 2 3 4} " in *" $1 "*) return 0 ;; esac
	return 1
}
alive() {
	kill -0 "$CTLD_PID" 2>/dev/null || fail "slurmctld (pid $CTLD_PID) is gone"
}
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$CTLD_PID/status" 2>/dev/null
}
attacker_done() {
	[ -z "$(squeue -h -u "$HOSTILE_USER" -o %i)" ]
}
cleanup_flood() {
	rm -f "$wrap"
}
cat >"$SATURN_CLUSTER_DIR/task.sh" <<EOS
#!/bin/sh
echo "user=\$(id -u) batch=\${SATURN_BATCH:-} job=\$SLURM_JOB_ID start=\$(date +%s.%N)" >>$JOBLOG
sleep 1
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"
VP=$(profile_file v "$V") || fail "victim's profile folder"
cat >"$VP" <<'EOP'
{ "format": "saturn-profile/1", "batch": "v",
  "tasks": [ { "signature": "v", "task_ids": "0", "batches": 10,
    "options": [ { "technique": "ddp", "gpus": 1, "sec_per_batch": 0.1, "status": "measured" } ] } ] }
EOP
chown "$V" "$VP"

# --- 1. six batch names without profiles: one profiler job at a time
for i in 0 1 2 3 4 5; do
	as_attacker sbatch --parsable --saturn-batch="flood-$i" --gres=gpu:1 --time=2 -o /dev/null \
		"$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "attacker sbatch flood-$i"
done
# the attacker's first profiler job runs
wait_for 30 sh -c "squeue -h -u $HOSTILE_USER -t R -o %j | grep -q '^saturn-profile:'" ||
	fail "no profiler job of the attacker started"
t_sub=$(date +%s.%N)
as_victim sbatch --parsable --saturn-batch=v --gres=gpu:1 --time=2 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "victim sbatch"
most=0
waiting=
for k in $(seq 1 40); do
	n=$(squeue -h -u "$HOSTILE_USER" -o %j | grep -c '^saturn-profile:' || true)
	[ "$n" -gt "$most" ] && most=$n
	r=$(squeue -h -u "$HOSTILE_USER" -o '%j|%r' | grep -v '^saturn-' | grep -m1 'saturn: waiting: ' || true)
	[ -n "$r" ] && waiting=$r
	# until the victim ran and a waiting reason was seen (a state, not one sample)
	[ -n "$waiting" ] && grep -q "^user=$V " "$JOBLOG" && [ "$k" -ge 12 ] && break
	sleep 1
done
note "attacker's profiler jobs at once: at most $most; a waiting task: $waiting"
vstart=$(sed -n "s/^user=$V .* start=//p" "$JOBLOG" | head -1)
[ -n "$vstart" ] && note "victim's 1-GPU task started $(echo "$vstart $t_sub" | awk '{ printf "%.1f", $1 - $2 }')s after its submission"
alive
if checking 1; then
	[ "$most" -le 1 ] || fail "$most profiler jobs of the attacker at once (saturn_companion_jobs=1)"
	case $waiting in
	*"saturn: waiting: 1 profiler or measurement job(s) of this user already (saturn_companion_jobs=1)"*) ;;
	*) fail "no held task of the attacker says why it waits: '$waiting'" ;;
	esac
	grep -q "batch flood-.* of uid $A: no profiler job now: the user has 1 profiler or measurement job(s) pending or running" "$CTLD_LOG" ||
		fail "the wait is not logged naming the batch"
	[ -n "$vstart" ] || fail "the victim's task did not start while the attacker's batches were profiled"
	wait_s=$(echo "$vstart $t_sub" | awk '{ printf "%.1f", $1 - $2 }')
	awk -v w="$wait_s" 'BEGIN { exit !(w < 20) }' ||
		fail "the victim's task waited ${wait_s}s behind the attacker's profiler jobs"
fi
ls "$STATE_DIR"/profiler-"$A"-flood-*.job >/dev/null 2>&1 || fail "no profiler record was written"

# --- 2. cancel everything: records and script copies go
as_attacker scancel -u "$HOSTILE_USER" || fail "attacker scancel"
wait_for 60 attacker_done || fail "the attacker's jobs did not end"
left() {
	ls "$STATE_DIR"/profiler-"$A"-flood-*.job "$STATE_DIR"/scripts/"$A"-flood-*.script 2>/dev/null
}
none_left() {
	[ -z "$(left)" ]
}
wait_for 30 none_left
note "records and script copies of the cancelled batches left: $(left | wc -l)"
alive
if checking 2; then
	none_left || fail "records or script copies of cancelled batches are left: $(left | tr '\n' ' ')"
fi

# --- 3. 24 profiles of ~4 MiB: within the budget, gone once the tasks end
# 64 signatures, each with one option whose params hold 62,000 characters
# (a params text may have 64 KiB): ~4 MiB
pad="$SATURN_CLUSTER_DIR/pad"
head -c 62000 /dev/zero | tr '\0' 'a' >"$pad"
for i in $(seq 0 23); do
	f=$(profile_file "mem-$i" "$A") || fail "attacker's profile folder"
	{
		printf '{ "format": "saturn-profile/1", "batch": "mem-%s", "tasks": [' "$i"
		for t in $(seq 0 63); do
			[ "$t" = 0 ] || printf ','
			printf '{ "signature": "m%s", "task_ids": "%s", "batches": 10, "options": [ { "technique": "ddp", "gpus": 1, "sec_per_batch": 0.1, "status": "measured", "params": {"pad": "' "$t" "$t"
			cat "$pad"
			printf '"} } ] }'
		done
		printf '] }\n'
	} >"$f"
	chown "$A" "$f"
done
rm -f "$pad"
sleep 7 # a few cycles after the flood's tasks ended
rss0=$(rss_kb)
for i in $(seq 0 23); do
	as_attacker sbatch --parsable --saturn-batch="mem-$i" --gres=gpu:1 --time=2 -o /dev/null \
		"$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "attacker sbatch mem-$i"
done
all_judged() {
	[ "$(grep -c "batch mem-[0-9]* of uid $A: profile .* \(loaded\|refused\)" "$CTLD_LOG")" -ge 24 ]
}
wait_for 60 all_judged || fail "not every mem-* profile was loaded or refused"
rss1=$(rss_kb)
loaded=$(grep -c "batch mem-[0-9]* of uid $A: profile .* loaded" "$CTLD_LOG" || true)
refused=$(grep -c "batch mem-[0-9]* of uid $A: profile .* refused: .* > the per-user budget of 32 MiB (saturn_profile_cache_mb)" "$CTLD_LOG" || true)
wait_for 120 attacker_done || fail "the mem-* tasks did not end"
sleep 10 # a few cycles
rss2=$(rss_kb)
note "slurmctld VmRSS: ${rss0} kB before, ${rss1} kB with 24 batches held, ${rss2} kB after they ended; profiles loaded ${loaded}, refused for the budget ${refused}"
alive
if checking 3; then
	[ "$refused" -ge 1 ] || fail "no mem-* profile was refused for the per-user budget"
	# the most the attacker had cached at once, as each load logs it
	most_mib=$(sed -n "s/.*batch mem-[0-9]* of uid $A: profile .* loaded (.*; the user's profiles cached: \([0-9.]*\) MiB)/\1/p" "$CTLD_LOG" |
		sort -n | tail -1)
	note "the attacker's profiles cached at most: ${most_mib:-?} MiB"
	awk -v m="${most_mib:-999}" 'BEGIN { exit !(m <= 32) }' ||
		fail "the attacker had ${most_mib:-?} MiB of profiles cached (saturn_profile_cache_mb=32)"
	[ $((rss2 - rss0)) -lt 32768 ] ||
		fail "slurmctld keeps $(((rss2 - rss0) / 1024)) MiB more after the attacker's batches ended"
fi
# every task ran (from its profile or from its request)
[ "$(grep -c "^user=$A batch=mem-" "$JOBLOG")" = 24 ] || fail "not every mem-* task ran once"

# --- 4. a large file in the attacker's progress folder is swept
pdir="$STATE_DIR/progress/$A"
if [ -d "$pdir" ]; then
	as_attacker sh -c "head -c 8388608 /dev/zero >'$pdir/hoard.bin'" || fail "attacker cannot write its progress folder"
	as_attacker touch -d '5 minutes ago' "$pdir/hoard.bin"
	hoard_gone() {
		[ ! -e "$pdir/hoard.bin" ]
	}
	wait_for 90 hoard_gone
	note "8 MiB file in the progress folder after the sweep: $(ls "$pdir/hoard.bin" 2>/dev/null || echo gone)"
	if checking 4; then
		hoard_gone || fail "an 8 MiB file survived the progress sweep"
		grep -q "progress sweep: removed $pdir/hoard.bin (8388608 bytes, uid $A)" "$CTLD_LOG" ||
			fail "the removal is not logged"
	fi
else
	fail "no progress folder was made for the attacker"
fi
alive
cleanup_flood
note "ok"
