# common.sh - sourced by the CLI tests: finds the saturn program and the
# example sweeps, makes a temporary folder, and offers small assertions.
# Exit 77 = skipped (automake convention).
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
SATURN="$top_builddir/cli/saturn"
SWEEPS="$top_srcdir/contrib/sweeps"
if [ ! -x "$SATURN" ]; then
	echo "saturn not built at $SATURN" >&2
	exit 99
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/saturn-cli.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
