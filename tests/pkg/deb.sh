#!/bin/sh
# deb.sh - the Debian packages (debian/): build them with
# `dpkg-buildpackage -b -us -uc` from a copy of the source, check what they
# hold and depend on, then run a one-machine cluster (scripts/cluster.sh)
# from the *packaged* plugins and programs and a small batch to completion.
#
# The packages are unpacked into a private root under $TMPDIR (dpkg -x),
# never installed on the host: nothing lands in Debian's plugin folder, so
# no other test (nor a cluster started later) can load a stale installed
# plugin, and an interrupted run leaves the host as it was. Whether the
# host could install them (dependencies, including the exact slurmctld) is
# checked with `apt-get install --simulate`, which changes nothing, and a
# copy rebuilt for another slurmctld version must be refused.
#
# Skips (77) without root, the Slurm daemons, the build tools (debhelper,
# dpkg-dev: scripts/install-deps.sh installs them) or the Slurm source the
# build was configured with (the plugins need it).
. "$(dirname "$0")/../e2e/sched-lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (slurmd, fake GPU devices)"
for t in dpkg-buildpackage dh dpkg-architecture apt-get; do
	command -v "$t" >/dev/null 2>&1 || skip "$t not installed (scripts/install-deps.sh installs debhelper and dpkg-dev)"
done
slurm_version=$(dpkg-query -W -f='${Version}' slurmctld 2>/dev/null || true)
[ -n "$slurm_version" ] || skip "slurmctld is not installed"
# the Slurm source this build was configured with
slurm_src=$(sed -n 's/^SLURM_SOURCE_DIR = //p' "$top_builddir/Makefile" 2>/dev/null || true)
[ -n "$slurm_src" ] && [ "$slurm_src" != no ] && [ -f "$slurm_src/src/slurmctld/slurmctld.h" ] ||
	skip "no Slurm source configured (scripts/slurm-source.sh): the plugins cannot be built"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugindir=/usr/lib/$multiarch/slurm-wlm
[ -f "$plugindir/sched_backfill.so" ] || skip "Debian's Slurm plugins are not in $plugindir"

W=$(mktemp -d "${TMPDIR:-/tmp}/saturn-pkg.XXXXXX") || fail "mktemp"
chmod 755 "$W"
cleanup_w() {
	[ -n "${SATURN_KEEP:-}" ] || rm -rf "$W"
}
trap 'rc=$?; cleanup_w; exit $rc' EXIT INT TERM

# --- build ---------------------------------------------------------------
# A copy of the source without any build folder: dpkg-buildpackage builds
# in place and writes the packages next to the source folder.
mkdir -p "$W/src/saturn-slurm"
if [ "$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)" = "$top_srcdir" ]; then
	(cd "$top_srcdir" && git ls-files -z -co --exclude-standard |
		tar --null --ignore-failed-read -cf - -T - 2>/dev/null) | tar -xf - -C "$W/src/saturn-slurm"
else
	tar -C "$top_srcdir" --exclude=./.git --exclude='./build*' --exclude='./_build' \
		--exclude="./$(basename "$top_builddir")" -cf - . | tar -xf - -C "$W/src/saturn-slurm"
fi
[ -x "$W/src/saturn-slurm/debian/rules" ] || fail "no debian/rules in the source copy"
t0=$(date +%s)
(cd "$W/src/saturn-slurm" &&
	DEB_BUILD_OPTIONS="nocheck noddebs parallel=$(nproc 2>/dev/null || echo 2)" \
		SATURN_SLURM_SOURCE="$slurm_src" dpkg-buildpackage -b -us -uc) >"$W/build.log" 2>&1 || {
	tail -n 40 "$W/build.log"
	fail "dpkg-buildpackage -b -us -uc failed"
}
note "dpkg-buildpackage -b: $(($(date +%s) - t0)) s"
ver=$(dpkg-parsechangelog -l "$top_srcdir/debian/changelog" -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
PLUGINS_DEB="$W/src/saturn-slurm-plugins_${ver}_$arch.deb"
TOOLS_DEB="$W/src/saturn-slurm_${ver}_$arch.deb"
[ -f "$PLUGINS_DEB" ] && [ -f "$TOOLS_DEB" ] || {
	ls "$W/src"
	fail "packages missing after the build"
}

# --- contents and dependencies --------------------------------------------
deps=$(dpkg-deb -f "$PLUGINS_DEB" Depends)
echo "$deps" | grep -q "slurmctld (= $slurm_version)" ||
	fail "saturn-slurm-plugins must depend on slurmctld (= $slurm_version), not: $deps"
note "saturn-slurm-plugins Depends: $deps"
has() {
	dpkg-deb -c "$1" | awk '{ print $6 }' | grep -qx "./$2" || fail "$(basename "$1") lacks /$2"
}
echo "$deps" | grep -q "saturn-slurm (= $ver)" || fail "saturn-slurm-plugins must depend on saturn-slurm (= $ver): $deps"
tdeps=$(dpkg-deb -f "$TOOLS_DEB" Depends)
majmin=$(echo "$slurm_version" | cut -d. -f1-2)
echo "$tdeps" | grep -q "slurm-wlm-basic-plugins (>= $majmin), slurm-wlm-basic-plugins (<< $majmin.99)" ||
	fail "saturn-slurm (SPANK plugin) must depend on Slurm $majmin: $tdeps"
note "saturn-slurm Depends: $tdeps"
for so in sched_saturn.so job_submit_saturn.so; do
	has "$PLUGINS_DEB" "${plugindir#/}/$so"
done
has "$TOOLS_DEB" "${plugindir#/}/spank_saturn.so"
has "$PLUGINS_DEB" usr/share/man/man8/sched_saturn.8.gz
has "$TOOLS_DEB" usr/share/man/man8/saturn-slurm.8.gz
for p in saturn saturn-run saturn-profile saturn-emulate; do
	has "$TOOLS_DEB" "usr/bin/$p"
done
for m in saturn saturn-run saturn-profile; do
	has "$TOOLS_DEB" "usr/share/man/man1/$m.1.gz"
done
has "$TOOLS_DEB" usr/share/doc/saturn-slurm/examples/slurm/slurm.conf.saturn
has "$TOOLS_DEB" usr/share/doc/saturn-slurm/examples/sweeps/gpt2-sweep.json
has "$TOOLS_DEB" usr/share/doc/saturn-slurm/examples/demo/sweep.sbatch
for d in "$PLUGINS_DEB" "$TOOLS_DEB"; do
	if dpkg-deb -c "$d" | awk '{ print $6 }' | grep -q '\.la$'; then
		fail "libtool .la files in $(basename "$d")"
	fi
done

# The host could install both (apt resolves every dependency); the same
# plugins package for another slurmctld version is refused.
apt-get install --simulate --no-install-recommends "$PLUGINS_DEB" "$TOOLS_DEB" >"$W/apt.log" 2>&1 || {
	cat "$W/apt.log"
	fail "apt-get would not install the packages"
}
mkdir "$W/other"
dpkg-deb -R "$PLUGINS_DEB" "$W/other/pkg"
sed -i 's/slurmctld (= [^)]*)/slurmctld (= 0.0.1-1)/' "$W/other/pkg/DEBIAN/control"
dpkg-deb -b "$W/other/pkg" "$W/other/other.deb" >/dev/null || fail "dpkg-deb -b"
if apt-get install --simulate --no-install-recommends "$W/other/other.deb" "$TOOLS_DEB" >"$W/apt-other.log" 2>&1; then
	fail "apt-get would install plugins built for slurmctld 0.0.1-1"
fi
grep -q 'slurmctld (= 0.0.1-1)' "$W/apt-other.log" || fail "no clear refusal: $(tail -n 3 "$W/apt-other.log")"

# --- a cluster from the packaged files -------------------------------------
R="$W/root"
dpkg -x "$PLUGINS_DEB" "$R"
dpkg -x "$TOOLS_DEB" "$R"
chmod -R go+rX "$R"
if ldd "$R/usr/bin/saturn" "$R/usr/bin/saturn-run" "$R/usr/bin/saturn-profile" | grep -q 'not found'; then
	fail "a packaged program misses a library: $(ldd "$R/usr/bin/saturn" | grep 'not found')"
fi
"$R/usr/bin/saturn" --version >/dev/null || fail "packaged saturn does not run"

export SATURN_PLUGIN_DIR="$R$plugindir"
export JOB_BIN="$R/usr/bin"
sched_setup 43
trap 'rc=$?; cleanup_w; (exit $rc); sched_teardown' EXIT INT TERM
pd=$(sed -n 's/^PluginDir=//p' "$SLURM_CONF")
note "PluginDir=$pd"
case ":$pd:" in
*"$top_builddir"*) fail "the build folder is in PluginDir ($pd)" ;;
esac
# cluster.sh stages the plugins it is given (a copy in the instance folder,
# readable by every user): they must be the packaged files, byte for byte
for so in sched_saturn.so job_submit_saturn.so spank_saturn.so; do
	cmp -s "$SATURN_CLUSTER_DIR/plugins/$so" "$R$plugindir/$so" || fail "$so in PluginDir is not the packaged one"
done
scontrol show config | grep -q 'SchedulerType *= sched/saturn' || fail "SchedulerType is not sched/saturn"
grep -q "sched/saturn: plugin loaded\|sched: sched/saturn: plugin loaded" "$CTLD_LOG" || fail "sched/saturn not loaded"

write_emulate_task "$SATURN_CLUSTER_DIR/task.sh"
job=$(sbatch --parsable --saturn-batch=e2e-pkg --array=0-3 --gres=gpu:2 --time=2 -o /dev/null "$SATURN_CLUSTER_DIR/task.sh") ||
	fail "sbatch --saturn-batch (packaged SPANK plugin)"
wait_for 120 queue_empty || fail "the batch did not finish"
assert_each_once 4
grep -q "sched/saturn: released JobId=${job}_" "$CTLD_LOG" || fail "the packaged sched/saturn released nothing"
plan=$(grep '^task=' "$JOBLOG" | grep -c 'plan=p' || true)
[ "$plan" = 4 ] || fail "$plan of 4 tasks ran with a plan id (SATURN_PLAN_ID)"
"$R/usr/bin/saturn" status -d "$STATE_DIR" >"$W/status.out" 2>&1
rc=$?
[ "$rc" -le 1 ] || fail "packaged saturn status: exit $rc: $(cat "$W/status.out")"
note "ok"
