#!/bin/sh
# run-all.sh - the project's test command: install what is needed, build
# everything (with the Slurm plugins), run every test, print one summary line;
# then the core end-to-end set on the other Slurm releases the plugins
# support (tests/run-slurm.sh: Slurm 24.11 in a Debian 13 root by default).
#
#   tests/run-all.sh           (as root on Debian 12; see README.md)
#
# Steps: scripts/install-deps.sh (Debian packages), scripts/slurm-source.sh
# (the Slurm source matching the installed daemons, configured headers-only),
# autoreconf + configure --enable-werror in ./build, make, make check;
# then tests/run-slurm.sh VERSION for each of SATURN_OTHER_SLURM.
# The last line reads "N passed, N failed, N skipped", counting each Check
# test case and each shell test, of every release together (each release's
# own line is printed before it).
# Environment: SATURN_BUILD_DIR (default ./build), SATURN_CONFIGURE_FLAGS
# (extra configure flags, e.g. --enable-sanitizers), FUZZ_SECONDS,
# SATURN_TESTS (run only these tests, e.g. "e2e/sched-plan.sh unit/test_model"),
# SATURN_SLURM_SOURCE (a Slurm source tree of one's own: slurm-source.sh --from),
# SATURN_OTHER_SLURM (releases to run the core set on afterwards, default
# "24.11"; "" for none; "24.11 26.05" with SATURN_SLURM_TREE for 26.05).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${SATURN_BUILD_DIR:-$top/build}
jobs=$(nproc 2>/dev/null || echo 2)

"$top/scripts/install-deps.sh"

slurm_flags=""
if [ -x "$top/scripts/slurm-source.sh" ]; then
	if [ -n "${SATURN_SLURM_SOURCE:-}" ]; then
		src=$("$top/scripts/slurm-source.sh" --from "$SATURN_SLURM_SOURCE" | tail -n 1)
	else
		src=$("$top/scripts/slurm-source.sh" | tail -n 1)
	fi
	slurm_flags="--with-slurm-source=$src"
fi

cd "$top"
# one autoreconf at a time in this tree (tests/run-slurm.sh builds the same
# tree for another release, maybe at the same time)
exec 8>"$top/.autoreconf.lock"
command -v flock >/dev/null 2>&1 && flock 8
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
exec 8>&-
mkdir -p "$build"
cd "$build"
# shellcheck disable=SC2086
"$top/configure" --enable-werror $slurm_flags ${SATURN_CONFIGURE_FLAGS:-} >configure.out 2>&1 ||
	{ tail -n 40 configure.out; exit 1; }
tail -n 12 configure.out
make -j"$jobs" >make.out 2>&1 || { tail -n 60 make.out; exit 1; }

status=0
# results of an earlier run must not be counted as this run's
find tests -name '*.trs' -exec rm -f {} + 2>/dev/null || true
if [ -n "${SATURN_TESTS:-}" ]; then
	make -j"$jobs" check TESTS="$SATURN_TESTS" >check.out 2>&1 || status=$?
else
	make -j"$jobs" check >check.out 2>&1 || status=$?
fi
grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' check.out || true

# Count: a Check program contributes its test cases; other tests count once.
passed=0 failed=0 skipped=0
for trs in $(find tests -name '*.trs' | sort); do
	log=${trs%.trs}.log
	res=$(sed -n 's/^:test-result: //p' "$trs" | head -n 1)
	checks=$(grep -Eo 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" 2>/dev/null | tail -n 1 || true)
	if [ -n "$checks" ] && [ "$res" != SKIP ]; then
		n=$(echo "$checks" | sed 's/Checks: \([0-9]*\).*/\1/')
		f=$(echo "$checks" | sed 's/.*Failures: \([0-9]*\).*/\1/')
		e=$(echo "$checks" | sed 's/.*Errors: \([0-9]*\).*/\1/')
		passed=$((passed + n - f - e))
		failed=$((failed + f + e))
		# a crash after the summary still fails the program
		[ "$res" = PASS ] || { [ $((f + e)) -gt 0 ] || failed=$((failed + 1)); }
		continue
	fi
	case $res in
	PASS | XFAIL) passed=$((passed + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
done

if [ "$status" -ne 0 ]; then
	echo "--- logs of failed tests ---"
	for trs in $(grep -l -E '^:test-result: (FAIL|ERROR|XPASS)' $(find tests -name '*.trs') 2>/dev/null); do
		echo "=== ${trs%.trs}.log"
		tail -n 60 "${trs%.trs}.log"
	done
	[ "$failed" -gt 0 ] || failed=1
fi
slurm_ver=$( (slurmctld -V || /usr/sbin/slurmctld -V) 2>/dev/null | awk '{print $NF}' || true)
others=${SATURN_OTHER_SLURM-24.11}
[ -z "$others" ] || echo "Slurm ${slurm_ver:-?}: $passed passed, $failed failed, $skipped skipped"

# The other releases: each in its own root, its own build folder.
# (its output is copied here, not through tee /dev/stderr: reopening
# /dev/stderr would truncate a log file this script writes to)
vlog=$(mktemp "${TMPDIR:-/tmp}/run-all-slurm.XXXXXX")
for v in $others; do
	"$top/tests/run-slurm.sh" "$v" >"$vlog" 2>&1 || true
	cat "$vlog"
	line=$(tail -n 1 "$vlog")
	case "$line" in
	"Slurm $v: "*" passed, "*" failed, "*" skipped")
		set -- $(echo "${line#Slurm $v: }" | tr -d ',')
		passed=$((passed + $1))
		failed=$((failed + $3))
		skipped=$((skipped + $5))
		;;
	*)
		echo "--- Slurm $v: no result (see above)"
		failed=$((failed + 1))
		;;
	esac
done
rm -f "$vlog"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
