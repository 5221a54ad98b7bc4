#!/bin/sh
# hostile-budget.sh - the total profile budget: the user holding the most
# gives way (issue #20, problem 4; doc/security.md, "Bounded resources").
# With saturn_profile_cache_mb=32 and saturn_profile_cache_total_mb=32 the
# attacker fills the whole cache with ~4 MiB profiles of 8 batches it keeps
# pending (two 8-GPU tasks run for a minute, the others wait). The victim
# then submits a batch with a ~4 MiB profile of its own: the total is
# full, but the attacker holds more than the victim would, so at the start
# of the next cycle the attacker's largest profile leaves the cache (logged,
# naming the batch that needs room) and the victim's is loaded; the
# attacker does not take the room back (no profile of the victim's is
# evicted again, the victim's is loaded once), and slurmctld is alive.
# Before this change there was no budget at all (the attacker's profiles
# were all kept, part 3 of hostile-flood.sh); this test covers the rule
# between users.
. "$(dirname "$0")/sched-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_users
sched_setup 48 "saturn_profile_cache_mb=32,saturn_profile_cache_total_mb=32"
hostile_dirs
A=$HOSTILE_UID
V=$VICTIM_UID
CTLD_PID=$(cat "$SATURN_CLUSTER_DIR/run/slurmctld.pid")
cat >"$SATURN_CLUSTER_DIR/task.sh" <<'EOS'
#!/bin/sh
sleep ${TASK_SLEEP:-60}
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"

# big_profile UID NAME: a ~4 MiB profile (64 signatures, each with a
# 62,000-character params text) of batch NAME in UID's folder
pad="$SATURN_CLUSTER_DIR/pad"
head -c 62000 /dev/zero | tr '\0' 'a' >"$pad"
big_profile() {
	f=$(profile_file "$2" "$1") || fail "profile folder of $1"
	{
		printf '{ "format": "saturn-profile/1", "batch": "%s", "tasks": [' "$2"
		for t in $(seq 0 63); do
			[ "$t" = 0 ] || printf ','
			printf '{ "signature": "m%s", "task_ids": "%s", "batches": 10, "options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured", "params": {"pad": "' "$t" "$t"
			cat "$pad"
			printf '"} } ] }'
		done
		printf '] }\n'
	} >"$f"
	chown "$1" "$f"
}
for i in 0 1 2 3 4 5 6 7; do
	big_profile "$A" "mem-$i"
done
big_profile "$V" v

for i in 0 1 2 3 4 5 6 7; do
	as_attacker sbatch --parsable --saturn-batch="mem-$i" --gres=gpu:8 --time=3 -o /dev/null \
		"$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "attacker sbatch mem-$i"
done
judged() {
	[ "$(grep -c "batch mem-[0-9] of uid $A: profile .* \(loaded\|refused\)" "$CTLD_LOG")" -ge 8 ]
}
wait_for 60 judged || fail "the attacker's profiles were not all judged"
sleep 4
as_victim env TASK_SLEEP=1 sbatch --parsable --saturn-batch=v --gres=gpu:8 --time=3 -o /dev/null \
	"$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "victim sbatch"
victim_loaded() {
	grep -q "batch v of uid $V: profile .* loaded" "$CTLD_LOG"
}
wait_for 30 victim_loaded || fail "the victim's profile was not loaded while the attacker filled the total budget"
sleep 10 # three more cycles: nobody takes the room back
kill -0 "$CTLD_PID" 2>/dev/null || fail "slurmctld is gone"
grep -a "leaves the cache\|batch v of uid $V: profile\|refused: the total budget" "$CTLD_LOG" | sed 's/^/# /' | head -12
grep -q "batch mem-[0-9] of uid $A: profile (.* MiB) leaves the cache: the total budget of 32 MiB (saturn_profile_cache_total_mb) is full and uid $A holds the most; batch v of uid $V needs room" "$CTLD_LOG" ||
	fail "no profile of the attacker's left the cache for the victim's"
[ "$(grep -c "batch v of uid $V: profile .* loaded" "$CTLD_LOG")" = 1 ] ||
	fail "the victim's profile was loaded more than once (the room was taken back)"
grep -q "batch v of uid $V: .*leaves the cache" "$CTLD_LOG" && fail "the victim's profile was evicted"
[ "$(grep -c "of uid $A: profile (.* MiB) leaves the cache: the total budget" "$CTLD_LOG")" -le 2 ] ||
	fail "the attacker's profiles were evicted again and again"
rm -f "$pad"
scancel -u "$HOSTILE_USER"
scancel -u "$VICTIM_USER"
note "ok"
