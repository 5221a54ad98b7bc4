#!/bin/sh
# plugin-graph.sh - the files of sched/saturn (plugin/sched/*.c) share no
# state and call each other in one direction only (issue #21: no extern
# state between plugin files, a context passed in, each file with its own
# header). From the built objects (nm on each file's object) and from the
# sources, it builds the file graph "A uses a symbol B defines" and fails
#   (a) when a data symbol (nm B/D/C/G/S/R/V: a global variable or table)
#       defined by one plugin file is used by another, or a plugin header
#       says `extern`;
#   (b) when the calls among plugin files form a cycle (the cycle is
#       printed);
#   (c) when a plugin .c includes the header of a file it uses nothing of,
#       uses a file's symbol without including that file's header (X.h for
#       X.c), uses a symbol that header does not declare, or the plugin
#       headers include each other in a cycle. Headers without a .c of
#       their own (saturn_ctx.h: the context type; saturn_clock.h: a static
#       inline) may be included anywhere; they define nothing.
# `plugin-graph.sh --self-test` runs the checks on small made-up graphs,
# each with one planted violation, and fails unless every one is caught
# (and a clean one passes); a normal run does the same first, so the check
# is known to be able to fail. Skipped (77) when the plugin is not built
# (configure without --with-slurm-source) or nm is missing.
set -u
SRC="${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/plugin/sched"
B="${top_builddir:-.}/plugin/sched"

# Facts, one a line, read by check_graph:
#   FILE X            X.c is a plugin file
#   OWNED X           X.h is X.c's header
#   DEF X TYPE SYM    X.c's object defines global SYM (nm type)
#   USE X SYM         X.c's object uses SYM (undefined there)
#   INC FROM H        FROM (X.c, or a header) includes plugin header H
#   DECL H SYM        header H declares or names SYM (comments left out)
#   EXTERN H          header H says extern
check_graph() {
	awk '
	function dfs(n,   k, m, i, path) {
		color[n] = 1
		stack[++depth] = n
		for (k = 1; k <= nout[n]; k++) {
			m = out[n, k]
			if (color[m] == 1) {
				path = m
				for (i = depth; i >= 1 && stack[i] != m; i--)
					path = stack[i] " -> " path
				path = m " -> " path
				print "FAIL: " what " cycle: " path
				bad = 1
			} else if (!color[m])
				dfs(m)
		}
		depth--
		color[n] = 2
	}
	function cycles(kind,   n) {
		what = kind
		split("", color)
		depth = 0
		for (n in node)
			if (!color[n])
				dfs(n)
	}
	$1 == "FILE" { file[$2] = 1 }
	$1 == "OWNED" { owned[$2] = 1 }
	$1 == "DEF" { def[$4] = $2; dtype[$4] = $3 }
	$1 == "USE" { nuse++; ufile[nuse] = $2; usym[nuse] = $3 }
	$1 == "INC" { ninc++; ifrom[ninc] = $2; ito[ninc] = $3 }
	$1 == "DECL" { decl[$2, $3] = 1 }
	$1 == "EXTERN" { print "FAIL: " $2 " declares extern state"; bad = 1 }
	END {
		for (i = 1; i <= nuse; i++) {
			f = ufile[i]; s = usym[i]
			if (!(s in def) || def[s] == f)
				continue
			o = def[s]
			if (dtype[s] ~ /^[BDCGSRV]$/) {
				print "FAIL: " f ".c uses data symbol " s " of " o ".c (nm type " dtype[s] ")"
				bad = 1
			}
			if (!((f, o) in edge)) {
				edge[f, o] = 1
				node[f] = node[o] = 1
				out[f, ++nout[f]] = o
				firstsym[f, o] = s
			}
			if (!decl[o ".h", s]) {
				print "FAIL: " f ".c uses " s " of " o ".c, which " o ".h does not declare"
				bad = 1
			}
		}
		for (i = 1; i <= ninc; i++) {
			fr = ifrom[i]; h = ito[i]; o = h
			sub(/\.h$/, "", o)
			if (fr ~ /\.h$/) {
				hnode[fr] = hnode[h] = 1
				hout[fr, ++nhout[fr]] = h
				continue
			}
			f = fr
			sub(/\.c$/, "", f)
			inc[f, o] = 1
			if (o in owned && o != f && !((f, o) in edge)) {
				print "FAIL: " fr " includes " h " but uses nothing " o ".c defines"
				bad = 1
			}
		}
		for (k in edge) {
			split(k, p, SUBSEP)
			if (!((p[1], p[2]) in inc)) {
				print "FAIL: " p[1] ".c uses " firstsym[p[1], p[2]] " of " p[2] ".c without including " p[2] ".h"
				bad = 1
			}
		}
		cycles("call")
		split("", out); split("", nout); split("", node)
		for (n in hnode) {
			node[n] = 1
			for (k = 1; k <= nhout[n]; k++)
				out[n, k] = hout[n, k]
			nout[n] = nhout[n]
		}
		cycles("include")
		if (!bad) {
			ne = 0
			for (k in edge)
				ne++
			print "OK: " length(file) " plugin files, " ne " call edges among them, no shared data, no cycle, includes match the calls"
		}
		exit bad
	}'
}

# Identifiers of a header outside comments and string literals, as DECL lines.
header_facts() {
	h=$(basename "$1")
	awk -v h="$h" '
	{
		line = $0
		out = ""
		while (line != "") {
			if (incomment) {
				i = index(line, "*/")
				if (!i) { line = ""; break }
				line = substr(line, i + 2)
				incomment = 0
				continue
			}
			i = index(line, "/*")
			if (!i) { out = out line; line = "" ; break }
			out = out substr(line, 1, i - 1) " "
			line = substr(line, i + 2)
			incomment = 1
		}
		gsub(/"[^"]*"/, " ", out)
		if (out ~ /(^|[^A-Za-z0-9_])extern([^A-Za-z0-9_]|$)/)
			print "EXTERN " h
		if (out ~ /^[ \t]*#[ \t]*include[ \t]*"/)
			next
		n = split(out, w, /[^A-Za-z0-9_]+/)
		for (k = 1; k <= n; k++)
			if (w[k] != "")
				print "DECL " h " " w[k]
	}' "$1"
	includes "$1" "$h"
}

# INC lines for the plugin headers FILE (named NAME) includes.
includes() {
	sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$1" | while read -r inc; do
		[ -f "$SRC/$inc" ] && echo "INC $2 $inc"
	done
}

# The object of X.c in the build tree: libtool's PIC one first.
object_of() {
	for d in "$B/.libs" "$B"; do
		for o in "$d"/*-"$1".o "$d/$1.o"; do
			[ -f "$o" ] && { echo "$o"; return 0; }
		done
	done
	return 1
}

facts() {
	for c in "$SRC"/*.c; do
		x=$(basename "$c" .c)
		echo "FILE $x"
		[ -f "$SRC/$x.h" ] && echo "OWNED $x"
		o=$(object_of "$x") || { echo "MISSING $x"; continue; }
		nm "$o" | awk -v x="$x" '
			NF == 3 && $2 ~ /^[A-Z]$/ && $2 != "U" { print "DEF " x " " $2 " " $3 }
			NF == 2 && $1 == "U" { print "USE " x " " $2 }'
		includes "$c" "$x.c"
	done
	for h in "$SRC"/*.h; do
		header_facts "$h"
	done
}

# --- self-test: one planted violation per case, each must be caught ---
self_test() {
	ok=1
	# a.c -> b.c -> c.c, headers in order: must pass
	clean='FILE a
FILE b
FILE c
OWNED a
OWNED b
OWNED c
DEF a T a_run
DEF b T b_step
DEF c T c_leaf
USE a b_step
USE b c_leaf
INC a.c a.h
INC a.c b.h
INC b.c b.h
INC b.c c.h
INC c.c c.h
INC c.c ctx.h
INC b.h ctx.h
DECL a.h a_run
DECL b.h b_step
DECL c.h c_leaf'
	run_case() { # NAME EXPECT(0|1) PATTERN FACTS
		got=$(printf '%s\n' "$4" | check_graph)
		rc=$?
		if [ "$rc" != "$2" ] || ! printf '%s\n' "$got" | grep -q "$3"; then
			echo "self-test $1: expected exit $2 and \"$3\", got exit $rc:"
			printf '%s\n' "$got" | sed 's/^/    /'
			ok=0
		else
			echo "self-test $1: ok ($(printf '%s\n' "$got" | head -n1))"
		fi
	}
	run_case clean 0 '^OK:' "$clean"
	run_case call-cycle 1 'call cycle: .*c -> .*a' "$clean
DEF a T a_back
DECL a.h a_back
USE c a_back
INC c.c a.h"
	run_case shared-data 1 'uses data symbol c_state of c.c' "$clean
DEF c B c_state
DECL c.h c_state
USE b c_state"
	run_case extern 1 'declares extern state' "$clean
EXTERN c.h"
	run_case missing-include 1 'a.c uses c_leaf of c.c without including c.h' "$clean
USE a c_leaf"
	run_case extra-include 1 'a.c includes c.h but uses nothing' "$clean
INC a.c c.h"
	run_case undeclared 1 'uses b_hidden of b.c, which b.h does not declare' "$clean
DEF b T b_hidden
USE a b_hidden"
	run_case include-cycle 1 'include cycle' "$clean
INC c.h b.h
INC b.h c.h"
	[ "$ok" = 1 ]
}

self_test || { echo "FAIL: the check does not catch what it must"; exit 1; }
[ "${1:-}" = "--self-test" ] && exit 0

command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
[ -d "$SRC" ] || { echo "SKIP: no $SRC"; exit 77; }
all=$(facts)
missing=$(printf '%s\n' "$all" | awk '$1 == "MISSING" { print $2 ".c" }')
if [ -n "$missing" ]; then
	if [ -z "$(printf '%s\n' "$all" | awk '$1 == "DEF"')" ]; then
		echo "SKIP: sched/saturn not built (configure --with-slurm-source)"
		exit 77
	fi
	echo "FAIL: no object in $B for $(echo $missing) (a plugin file not in the build?)"
	exit 1
fi
printf '%s\n' "$all" | check_graph
