#!/bin/sh
# mutate.sh - a small mutation pass: can the unit tests fail where the code
# is wrong? Not part of `make check` (it rebuilds libsaturn once per
# mutant, a few minutes in all). Figures: doc/benchmarks.md, "Mutation
# testing".
#
#   tests/mutate.sh [--list] [BUILDDIR]     (BUILDDIR: default ./build)
#
# Run from anywhere, on a configured and built tree. For each target
# below (a source file, the functions to mutate, the Check programs that
# cover them) it makes every single-token mutant of those functions, one at
# a time: boundary flips (< <=, > >=), == !=, && ||, + 1 - 1, a negated
# if/while condition, a deleted `continue`. Each mutant is written over the
# source file, only libsaturn and the test programs are rebuilt, and the
# programs run; a mutant is "killed" when one of them fails (or crashes,
# or runs out of time), "survived" when all pass, "invalid" when it does
# not compile. The original file is
# put back on exit (also on ^C) and the tree rebuilt. Comments and
# strings are left alone; survivors are listed at the end: each is either a
# missing test or an equivalent mutant (no behaviour changes).
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
LIST=0
if [ "${1:-}" = --list ]; then
	LIST=1
	shift
fi
B=$(cd "${1:-$SRC/build}" 2>/dev/null && pwd) || {
	echo "mutate.sh: no build folder ${1:-$SRC/build} (configure and make first)" >&2
	exit 2
}

# file | functions (comma-separated) | Check programs under tests/
TARGETS='lib/sched/sched_decide.c|saturn_sched_decide|sched/test_sched
lib/sched/sched_plan.c|saturn_sched_should_switch,saturn_sched_carry,saturn_sched_fcfs|sched/test_sched
lib/model/validate.c|resolve_one,check_entry,sweep_node,saturn_plan_validate|unit/test_validate
lib/sched/sched_cycle.c|saturn_cycle_run,next_due,releases,keep_plan|sched/test_cycle
lib/sched/cycle_measure.c|saturn_cycle_measure_step,decide_batch,add_submission,carry_out,saturn_cycle_measure_submitted|sched/test_cycle
lib/sched/cycle_profiler.c|saturn_cycle_profiler_step,decide_batch,carry_out,saturn_cycle_profiler_notes,saturn_cycle_profiler_submitted|sched/test_cycle'

TMP=$(mktemp -d "${TMPDIR:-/tmp}/saturn-mutate.XXXXXX") || exit 2
CUR=

restore() {
	if [ -n "$CUR" ] && [ -f "$TMP/orig" ]; then
		cp "$TMP/orig" "$SRC/$CUR"
		CUR=
		make -C "$B/lib" libsaturn-ctl.la >/dev/null 2>&1
	fi
	rm -rf "$TMP"
}
trap restore EXIT
trap 'exit 130' INT TERM

# The mutants of FILE's functions FUNCS: one line each, "LINE<TAB>POS<TAB>
# LEN<TAB>REPLACEMENT<TAB>FUNCTION<TAB>WHAT" (POS 1-based in the line).
mutants() {
	awk -v funcs="$2" '
	BEGIN { n = split(funcs, f, ","); for (i = 1; i <= n; i++) want[f[i]] = 1; infn = "" }
	function emit(pos, len, rep, what) {
		printf "%d\t%d\t%d\t%s\t%s\t%s\n", NR, pos, len, rep, infn, what
	}
	# start of a function definition: a name at column 0 followed by (
	/^[A-Za-z_]/ && !/;[ \t]*$/ {
		for (k in want)
			if (match($0, "(^|[ *])" k "\\(")) { infn = k; depth = 0 }
	}
	infn == "" { next }
	/^}/ { infn = ""; next }
	{
		code = $0
		c = index(code, "/*"); if (c) code = substr(code, 1, c - 1)
		c = index(code, "//"); if (c) code = substr(code, 1, c - 1)
		if (code ~ /^[ \t]*\*/) next
		L = length(code); instr = 0
		for (i = 1; i <= L; i++) {
			ch = substr(code, i, 1); two = substr(code, i, 2)
			if (ch == "\"") { instr = !instr; continue }
			if (instr) { if (ch == "\\") i++; continue }
			if (ch == "\x27") { i += 2; continue }
			if (two == "<<" || two == ">>" || two == "->") { i++; continue }
			if (two == "<=") { emit(i, 2, "<", "`<=` -> `<`"); i++; continue }
			if (two == ">=") { emit(i, 2, ">", "`>=` -> `>`"); i++; continue }
			if (two == "==") { emit(i, 2, "!=", "`==` -> `!=`"); i++; continue }
			if (two == "!=") { emit(i, 2, "==", "`!=` -> `==`"); i++; continue }
			if (two == "&&") { emit(i, 2, "||", "`&&` -> `||`"); i++; continue }
			if (two == "||") { emit(i, 2, "&&", "`||` -> `&&`"); i++; continue }
			if (ch == "<") { emit(i, 1, "<=", "`<` -> `<=`"); continue }
			if (ch == ">") { emit(i, 1, ">=", "`>` -> `>=`"); continue }
			if ((substr(code, i, 4) == " + 1" || substr(code, i, 4) == " - 1") &&
			    substr(code, i + 4, 1) !~ /[0-9.eE]/) {
				emit(i, 4, substr(code, i, 4) == " + 1" ? " - 1" : " + 1",
				     "`" substr(code, i + 1, 3) "` -> `" (substr(code, i, 4) == " + 1" ? "- 1" : "+ 1") "`")
				continue
			}
		}
		c = index(code, "continue;")
		if (c) emit(c, 9, ";", "`continue` deleted")
		# a negated if/while condition, when its parentheses close on the line
		if (match(code, /(if|while) \(/)) {
			s = RSTART + RLENGTH - 1; d = 0
			for (i = s; i <= L; i++) {
				ch = substr(code, i, 1)
				if (ch == "(") d++
				else if (ch == ")" && --d == 0) break
			}
			if (i <= L)
				emit(s, i - s + 1, "(!" substr(code, s, i - s + 1) ")", "condition negated")
		}
	}' "$1"
}

# FILE with mutant LINE POS LEN REP applied, on stdout.
apply() {
	awk -v L="$2" -v P="$3" -v N="$4" -v R="$5" \
		'NR == L { $0 = substr($0, 1, P - 1) R substr($0, P + N) } { print }' "$1"
}

total=0
killed=0
survived=0
invalid=0
: >"$TMP/survivors"
printf '%s\n' "$TARGETS" >"$TMP/targets"
while IFS='|' read -r file funcs progs; do
	mutants "$SRC/$file" "$funcs" >"$TMP/list"
	if [ $LIST = 1 ]; then
		while IFS='	' read -r line pos len rep fn what; do
			echo "$file:$line $fn: $what"
		done <"$TMP/list"
		continue
	fi
	echo "# $file ($funcs): $(wc -l <"$TMP/list") mutants, checked by $progs"
	cp "$SRC/$file" "$TMP/orig"
	CUR=$file
	while IFS='	' read -r line pos len rep fn what; do
		total=$((total + 1))
		apply "$TMP/orig" "$line" "$pos" "$len" "$rep" >"$SRC/$file"
		# -w: a mutant is C, not style (-Werror would reject some)
		if ! make -C "$B/lib" SATURN_CFLAGS=-w libsaturn-ctl.la >"$TMP/build.log" 2>&1; then
			res=invalid
			invalid=$((invalid + 1))
		else
			res=survived
			for p in $progs; do
				if ! make -C "$B/tests" "$p" >>"$TMP/build.log" 2>&1; then
					res=invalid
					break
				fi
				# a mutant may loop: Check's per-test limits halved,
				# the whole program stopped at 120 s
				if ! (cd "$B/tests" && CK_TIMEOUT_MULTIPLIER=0.5 timeout 120 "./$p" \
					>"$TMP/run.log" 2>&1); then
					res=killed
					break
				fi
			done
			case $res in
			killed) killed=$((killed + 1)) ;;
			invalid) invalid=$((invalid + 1)) ;;
			*)
				survived=$((survived + 1))
				echo "$file:$line $fn: $what" >>"$TMP/survivors"
				;;
			esac
		fi
		printf '%-8s %s:%s %s: %s\n' "$res" "$file" "$line" "$fn" "$what"
	done <"$TMP/list"
	cp "$TMP/orig" "$SRC/$file"
	CUR=
	make -C "$B/lib" libsaturn-ctl.la >/dev/null 2>&1
done <"$TMP/targets"
[ $LIST = 1 ] && exit 0
echo "SUMMARY mutants $total killed $killed survived $survived invalid $invalid"
if [ -s "$TMP/survivors" ]; then
	echo "# survivors:"
	cat "$TMP/survivors"
fi
exit 0
