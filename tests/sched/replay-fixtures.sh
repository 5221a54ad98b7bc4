#!/bin/sh
# replay-fixtures.sh - the recorded cycles kept in tests/sched/cycles/
# (saturn-cycle/1, recorded by sched/saturn in end-to-end runs: see
# tests/sched/cycles/README) run again through saturn_cycle_run with
# `saturn replay` and give the outputs they recorded. Then a copy of one
# with a decision changed must be reported as different (exit 1, naming
# the decision), so this check can fail; and a FIFO, a symlink and a hard
# link named like records are refused at once, never waited on or
# followed. Skipped (77) without the CLI.
set -u
SRC="${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}"
CLI="${top_builddir:-.}/cli/saturn"
[ -x "$CLI" ] || { echo "SKIP: $CLI not built"; exit 77; }
fail=0
n=0
for d in "$SRC"/tests/sched/cycles/*/; do
	[ -d "$d" ] || continue
	files=$(ls "$d" | grep -c '^cycle-.*\.json$')
	out=$("$CLI" replay "$d" 2>&1)
	rc=$?
	same=$(printf '%s\n' "$out" | grep -c ': same$')
	if [ "$rc" -ne 0 ] || [ "$same" -ne "$files" ]; then
		echo "FAIL: $d: exit $rc, $same of $files cycle(s) the same:"
		printf '%s\n' "$out" | grep -v ': same$' | head -5
		fail=1
	else
		echo "ok: $(basename "$d"): $files cycle(s) the same"
	fi
	n=$((n + files))
done
[ "$n" -gt 0 ] || { echo "FAIL: no recorded cycle in $SRC/tests/sched/cycles"; exit 1; }

# the check itself: one release turned into a hold in the recorded outputs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f=$(grep -l '"release": 1' "$SRC"/tests/sched/cycles/*/cycle-*.json | head -n1)
sed '0,/"release": 1/s//"release": 0/' "$f" >"$tmp/cycle-0000000000.json"
out=$("$CLI" replay "$tmp" 2>&1)
rc=$?
case "$rc:$out" in
1:*decisions*release*) echo "ok: a changed decision is reported: $out" ;;
*) echo "FAIL: a changed decision gave exit $rc: $out"; fail=1 ;;
esac

# a folder others may have written: a FIFO, a symlink and a hard link
# named like records are refused at once (exit 2, naming the file), never
# waited on or followed
for kind in fifo link hard; do
	h="$tmp/$kind"
	mkdir "$h"
	case $kind in
	fifo) mkfifo "$h/cycle-0000000000.json" ;;
	link) ln -s "$f" "$h/cycle-0000000000.json" ;;
	hard) cp "$f" "$tmp/orig.json" && ln "$tmp/orig.json" "$h/cycle-0000000000.json" ;;
	esac
	out=$(timeout 20 "$CLI" replay "$h" 2>&1)
	rc=$?
	case "$rc:$out" in
	2:*cycle-0000000000.json*) echo "ok: $kind refused: $out" ;;
	*) echo "FAIL: $kind: exit $rc: $out"; fail=1 ;;
	esac
done
exit $fail
