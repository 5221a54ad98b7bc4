#!/bin/sh
# flood-rss.sh - slurmctld's memory under a batch-name flood (issue #20,
# problem 4; doc/security.md, "Bounded resources"). Not part of `make
# check`: figures for doc/security.md.
#
# An unprivileged user ($SATURN_HOSTILE_USER, saturnuser) writes NAMES
# valid profiles of about MB MiB each (16 x MB signatures, each with one
# option whose params hold 65,000 characters of padding) in its own profile folder, submits one 1-GPU task per name,
# waits until sched/saturn has judged every profile (loaded or refused),
# then cancels everything and waits a few cycles. Prints slurmctld's
# VmRSS (/proc/PID/status) before, with the tasks held, and after, and how
# many profiles were loaded and refused:
#   flood-rss: names=N mb=M before_kb=.. loaded_kb=.. after_kb=.. loaded=.. refused=..
#
# usage (root, from the build folder): sh SRCDIR/tests/bench/flood-rss.sh [PLUGIN_DIR]
#   PLUGIN_DIR: the sched_saturn.so to measure (default: this build's), e.g.
#   a build of main for the "before" figure.
# Environment: FLOOD_NAMES (200), FLOOD_MB (5), FLOOD_PARAMS (more
#   SchedulerParameters, e.g. saturn_profile_cache_mb=0 for no cap),
#   SATURN_SCHED_E2E_PORT_BASE (the cluster's ports: slot 46 of it).
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$(pwd)}"
[ -n "${1:-}" ] && export SATURN_PLUGIN_DIR="$1"
NAMES=${FLOOD_NAMES:-200}
MB=${FLOOD_MB:-5}
. "$top_srcdir/tests/e2e/sched-lib.sh"
. "$top_srcdir/tests/e2e/hostile-lib.sh"
hostile_users
sched_setup 46 "${FLOOD_PARAMS:-saturn_profiler=none}"
hostile_dirs
A=$HOSTILE_UID
CTLD_PID=$(cat "$SATURN_CLUSTER_DIR/run/slurmctld.pid")
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$CTLD_PID/status"
}
cat >"$SATURN_CLUSTER_DIR/task.sh" <<'EOS'
#!/bin/sh
sleep 600
EOS
chmod 755 "$SATURN_CLUSTER_DIR/task.sh"
note "writing $NAMES profiles of ~$MB MiB"
# one profile: 16 x MB signatures, each with one option whose params hold
# 65,000 characters (a params text may have 64 KiB), written once and
# copied under each name with its batch name changed
pad="$SATURN_CLUSTER_DIR/pad"
one="$SATURN_CLUSTER_DIR/one.json"
head -c 65000 /dev/zero | tr '\0' 'a' >"$pad"
{
	printf '{ "format": "saturn-profile/1", "batch": "NAME", "tasks": ['
	for t in $(seq 0 $((16 * MB - 1))); do
		[ "$t" = 0 ] || printf ','
		printf '{ "signature": "m%s", "task_ids": "%s", "batches": 10, "options": [ { "technique": "ddp", "gpus": 8, "sec_per_batch": 0.1, "status": "measured", "params": {"pad": "' "$t" "$t"
		cat "$pad"
		printf '"} } ] }'
	done
	printf '] }\n'
} >"$one"
for i in $(seq 1 "$NAMES"); do
	f=$(profile_file "f$i" "$A") || fail "profile folder"
	sed "1s/\"batch\": \"NAME\"/\"batch\": \"f$i\"/" "$one" >"$f"
	chown "$A" "$f"
done
rm -f "$pad" "$one"
sleep 7
rss0=$(rss_kb)
t0=$(date +%s)
# held 8-GPU tasks that run for 10 minutes: two run, the others stay held
for i in $(seq 1 "$NAMES"); do
	as_attacker sbatch --parsable --saturn-batch="f$i" --gres=gpu:8 --time=20 -o /dev/null \
		"$SATURN_CLUSTER_DIR/task.sh" >/dev/null || fail "sbatch f$i"
done
judged() {
	[ "$(grep -c "batch f[0-9]* of uid $A: profile .* \(loaded\|refused\)" "$CTLD_LOG")" -ge "$NAMES" ]
}
wait_for 600 judged || fail "not every profile was judged"
sleep 7
rss1=$(rss_kb)
loaded=$(grep -c "batch f[0-9]* of uid $A: profile .* loaded" "$CTLD_LOG")
refused=$(grep -c "batch f[0-9]* of uid $A: profile .* refused" "$CTLD_LOG")
as_attacker scancel -u "$HOSTILE_USER"
attacker_done() {
	[ -z "$(squeue -h -u "$HOSTILE_USER" -o %i)" ]
}
wait_for 120 attacker_done || fail "the attacker's jobs did not end"
sleep 15 # five cycles
rss2=$(rss_kb)
note "plugin $(sched_plugin_dir)/sched_saturn.so, $(($(date +%s) - t0)) s"
echo "flood-rss: names=$NAMES mb=$MB before_kb=$rss0 loaded_kb=$rss1 after_kb=$rss2 loaded=$loaded refused=$refused"
