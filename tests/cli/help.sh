#!/bin/sh
# help.sh - saturn --help/--version, plan --help, and usage errors (exit 64).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/common.sh"

"$SATURN" --help >"$TMP/out" || fail "--help exit $?"
grep -q "plan" "$TMP/out" || fail "--help does not list plan"
"$SATURN" --version >"$TMP/out" || fail "--version exit $?"
grep -Eq "^saturn .*[0-9]+\.[0-9]+" "$TMP/out" || fail "--version: $(cat "$TMP/out")"
"$SATURN" plan --help >"$TMP/out" || fail "plan --help exit $?"
grep -q -- "--compare" "$TMP/out" || fail "plan --help lacks --compare"

expect_usage() {
	"$SATURN" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 64 ] || fail "saturn $*: exit $rc, expected 64"
	[ -s "$TMP/err" ] || fail "saturn $*: no message"
	[ ! -s "$TMP/out" ] || fail "saturn $*: printed on stdout"
}
expect_usage
expect_usage frobnicate
expect_usage plan
expect_usage plan --bogus "$SWEEPS/gpt2-sweep.json"
expect_usage plan --time-limit abc "$SWEEPS/gpt2-sweep.json"
expect_usage plan --time-limit -1 "$SWEEPS/gpt2-sweep.json"
expect_usage plan --seed x "$SWEEPS/gpt2-sweep.json"
expect_usage plan a.json b.json
expect_usage plan --time-limit
grep -q "needs a value" "$TMP/err" || fail "missing value message: $(cat "$TMP/err")"
exit 0
