#!/bin/sh
# slurm-source.sh - scripts/slurm-source.sh: a second run (source already
# fetched and configured) is instant and prints the source folder last; a
# cached source of another version than slurmctld is refused with a clear
# message. (The first, networked run is done by tests/run-all.sh.)
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
S="$top_srcdir/scripts/slurm-source.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	exit 1
}

ver=$( (slurmctld -V || /usr/sbin/slurmctld -V) 2>/dev/null | awk '{print $NF}')
[ -n "$ver" ] || skip "slurmctld not installed"
cache=${SATURN_SLURM_CACHE:-/var/cache/saturn-slurm}
[ -f "$cache/slurm-wlm-$ver/.saturn-configured" ] || skip "Slurm source not fetched yet (run scripts/slurm-source.sh)"

start=$(date +%s)
out=$(sh "$S" 2>"${TMPDIR:-/tmp}/slurm-source.$$.err") || {
	cat "${TMPDIR:-/tmp}/slurm-source.$$.err"
	rm -f "${TMPDIR:-/tmp}/slurm-source.$$.err"
	fail "second run failed"
}
rm -f "${TMPDIR:-/tmp}/slurm-source.$$.err"
dir=$(echo "$out" | tail -n 1)
[ "$dir" = "$cache/slurm-wlm-$ver" ] || fail "last line '$dir', want $cache/slurm-wlm-$ver"
[ -f "$dir/build/config.h" ] && [ -f "$dir/build/slurm/slurm_version.h" ] && [ -f "$dir/src/slurmctld/slurmctld.h" ] ||
	fail "$dir is not a configured Slurm source"
[ $(($(date +%s) - start)) -le 5 ] || fail "second run took more than 5 s"

# A cached tree of another version is refused.
fake=$(mktemp -d "${TMPDIR:-/tmp}/saturn-fake-cache.XXXXXX")
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/slurm-wlm-$ver/build/slurm"
printf '  Major:\t99\n  Minor:\t01\n  Micro:\t0\n' >"$fake/slurm-wlm-$ver/META"
dpkg-query -W -f='${Version}' slurmctld >"$fake/slurm-wlm-$ver/.saturn-configured"
: >"$fake/slurm-wlm-$ver/build/config.h"
: >"$fake/slurm-wlm-$ver/build/slurm/slurm_version.h"
if SATURN_SLURM_CACHE="$fake" sh "$S" >"$fake/out" 2>&1; then
	fail "a 99.01.0 source was accepted for slurmctld $ver"
fi
grep -q "is version 99.01.0 but the installed slurmctld is $ver" "$fake/out" ||
	fail "mismatch message: $(cat "$fake/out")"
echo "# second run instant; version mismatch refused"
