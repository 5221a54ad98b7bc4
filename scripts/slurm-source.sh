#!/bin/sh
# slurm-source.sh - fetch and configure (headers only) the Slurm source that
# matches the installed slurmctld, so that sched/saturn and job_submit/saturn
# can be compiled against slurmctld's internal headers.
#
# Steps (each skipped when already done; a second run is instant):
#   1. install Debian's Slurm packages when missing (needs root);
#   2. add a deb-src stanza (same URIs/Suites/Components/Signed-By as the
#      existing deb822 entries) in /etc/apt/sources.list.d/saturn-deb-src.sources
#      when apt has no source for slurm-wlm, then apt-get update;
#   3. apt-get source slurm-wlm=<exact installed Debian version> into the cache
#      folder ($SATURN_SLURM_CACHE, default /var/cache/saturn-slurm);
#   4. ./configure it in DIR/build (no make: plugins only need config.h and
#      slurm/slurm_version.h).
# The last line printed is the source folder, for
#   ./configure --with-slurm-source="$(scripts/slurm-source.sh | tail -n1)"
# Fails (exit 1, message on stderr) when the source's version differs from the
# installed daemon (`slurmctld -V`): plugins built against another version are
# refused by slurmctld (plugin_version must equal SLURM_VERSION_NUMBER).
set -eu
export DEBIAN_FRONTEND=noninteractive

CACHE=${SATURN_SLURM_CACHE:-/var/cache/saturn-slurm}
SRC_LIST=/etc/apt/sources.list.d/saturn-deb-src.sources
PKGS="slurmctld slurmd slurm-client munge libslurm-dev dpkg-dev"

die() {
	echo "slurm-source.sh: error: $*" >&2
	exit 1
}
note() {
	echo "slurm-source.sh: $*" >&2
}

is_root() {
	[ "$(id -u)" = 0 ]
}

# apt-get, waiting (bounded) while another apt process holds its locks.
apt_retry() {
	i=0
	aptlog=$(mktemp)
	while :; do
		if apt-get -o DPkg::Lock::Timeout=120 "$@" >"$aptlog" 2>&1; then
			cat "$aptlog" >&2
			rm -f "$aptlog"
			return 0
		fi
		if grep -q 'Could not get lock' "$aptlog" && [ $i -lt 60 ]; then
			i=$((i + 1))
			sleep 5
			continue
		fi
		cat "$aptlog" >&2
		rm -f "$aptlog"
		return 1
	done
}

# --- 1. packages -------------------------------------------------------------
missing=
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$st" in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done
if [ -n "$missing" ]; then
	is_root || die "packages missing:$missing (run as root, or: apt-get install$missing)"
	note "installing$missing"
	apt_retry install -y --no-install-recommends $missing ||
		die "apt-get install$missing failed"
fi

# Upstream version of the daemon that will load our plugins, e.g. 22.05.8.
daemon_ver=$(slurmctld -V 2>/dev/null | awk '{print $NF}')
[ -n "$daemon_ver" ] || die "cannot read the version of slurmctld (slurmctld -V)"
# Exact Debian version of the source package, e.g. 22.05.8-4+deb12u3.
deb_ver=$(dpkg-query -W -f='${Version}' slurmctld 2>/dev/null) ||
	die "cannot read slurmctld's Debian version"
upstream=${deb_ver#*:}
upstream=${upstream%-*}
[ "$upstream" = "$daemon_ver" ] ||
	die "slurmctld -V says $daemon_ver but the slurmctld package is $deb_ver"

SRC="$CACHE/slurm-wlm-$upstream"
BUILD="$SRC/build"
STAMP="$SRC/.saturn-configured"

# Version recorded in a Slurm source tree: META's Major.Minor.Micro.
source_version() {
	awk '$1 == "Major:" {ma=$2} $1 == "Minor:" {mi=$2} $1 == "Micro:" {mc=$2}
	     END { if (ma != "") printf "%s.%s.%s\n", ma, mi, mc }' "$1/META"
}

check_version() {
	[ -f "$SRC/META" ] || die "$SRC/META missing: not a Slurm source tree (remove $SRC and rerun)"
	sv=$(source_version "$SRC")
	[ "$sv" = "$daemon_ver" ] ||
		die "Slurm source in $SRC is version $sv but the installed slurmctld is $daemon_ver; remove $SRC and rerun"
}

# Fast path: already fetched and configured for this exact Debian version.
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$deb_ver" ] && [ -f "$BUILD/config.h" ] &&
	[ -f "$BUILD/slurm/slurm_version.h" ]; then
	check_version
	echo "$SRC"
	exit 0
fi

mkdir -p "$CACHE" || die "cannot create $CACHE (set SATURN_SLURM_CACHE to a writable folder)"
# One fetch at a time (other helpers' builds may run this concurrently).
exec 9>"$CACHE/.lock"
if command -v flock >/dev/null 2>&1; then
	flock 9
fi
# Another run may have finished while we waited.
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$deb_ver" ] && [ -f "$BUILD/config.h" ]; then
	check_version
	echo "$SRC"
	exit 0
fi

# --- 2. deb-src --------------------------------------------------------------
has_source() {
	apt-cache showsrc slurm-wlm 2>/dev/null | grep -q '^Version:'
}

# Print a deb-src copy of every enabled deb822 "Types: deb" stanza.
deb_src_stanzas() {
	awk '
	function flush() {
		if (isdeb && uris != "") {
			printf "Types: deb-src\nURIs: %s\nSuites: %s\n", uris, suites
			if (comps != "") printf "Components: %s\n", comps
			if (signed != "") printf "Signed-By: %s\n", signed
			if (enabled != "") printf "Enabled: %s\n", enabled
			printf "\n"
		}
		isdeb = 0; uris = suites = comps = signed = enabled = ""
	}
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	{
		key = $1; sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
		if (key == "Types") { n = split(val, t, /[ \t]+/); for (i = 1; i <= n; i++) if (t[i] == "deb") isdeb = 1 }
		else if (key == "URIs") uris = val
		else if (key == "Suites") suites = val
		else if (key == "Components") comps = val
		else if (key == "Signed-By") signed = val
		else if (key == "Enabled") enabled = val
	}
	END { flush() }' "$@"
}

# Is there an enabled deb-src entry anywhere (one-line or deb822 format)?
has_deb_src_entry() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		grep -Eq '^[[:space:]]*deb-src[[:space:]]|^Types:.*deb-src' "$f" && return 0
	done
	return 1
}

if ! has_source; then
	is_root || die "apt has no deb-src entry for slurm-wlm (run as root to add $SRC_LIST)"
	if ! has_deb_src_entry; then
		set --
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] && [ "$f" != "$SRC_LIST" ] && set -- "$@" "$f"
		done
		[ $# -gt 0 ] || die "no deb822 .sources file in /etc/apt/sources.list.d to copy a deb-src entry from"
		tmp="$SRC_LIST.tmp.$$"
		{
			echo "# Added by saturn-slurm scripts/slurm-source.sh: source packages"
			echo "# (same archives as $*) for apt-get source slurm-wlm."
			echo
			deb_src_stanzas "$@"
		} >"$tmp"
		grep -q '^Types: deb-src' "$tmp" || {
			rm -f "$tmp"
			die "found no 'Types: deb' stanza in $* to derive a deb-src entry from"
		}
		mv "$tmp" "$SRC_LIST"
		note "added $SRC_LIST"
	fi
	note "apt-get update"
	apt_retry update || die "apt-get update failed"
	has_source || die "still no source for slurm-wlm after adding $SRC_LIST"
fi

# --- 3. apt-get source -------------------------------------------------------
if [ ! -f "$SRC/META" ]; then
	work="$CACHE/.fetch.$$"
	rm -rf "$work"
	mkdir -p "$work"
	note "apt-get source slurm-wlm=$deb_ver"
	# _apt cannot write into root-owned folders; apt then downloads as root
	# with a notice, which is fine here.
	(cd "$work" && apt-get source -q --only-source "slurm-wlm=$deb_ver") >&2 || {
		rm -rf "$work"
		die "apt-get source slurm-wlm=$deb_ver failed (is that exact version in the deb-src archives?)"
	}
	[ -f "$work/slurm-wlm-$upstream/META" ] || {
		rm -rf "$work"
		die "apt-get source did not produce slurm-wlm-$upstream/META"
	}
	rm -rf "$SRC"
	mv "$work/slurm-wlm-$upstream" "$SRC"
	rm -rf "$work"
fi
check_version

# --- 4. configure (headers only) ---------------------------------------------
rm -f "$STAMP"
mkdir -p "$BUILD"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
note "configuring $SRC in $BUILD (log: $BUILD/saturn-configure.log)"
(cd "$BUILD" && ../configure --prefix=/usr --sysconfdir=/etc/slurm \
	--libdir="/usr/lib/$multiarch" --runstatedir=/run --localstatedir=/var \
	--enable-multiple-slurmd --without-rpath) >"$BUILD/saturn-configure.log" 2>&1 || {
	tail -n 20 "$BUILD/saturn-configure.log" >&2
	die "configure of the Slurm source failed (see $BUILD/saturn-configure.log)"
}
[ -f "$BUILD/config.h" ] && [ -f "$BUILD/slurm/slurm_version.h" ] ||
	die "configure did not produce config.h and slurm/slurm_version.h in $BUILD"
want_num=$(echo "$daemon_ver" | awk -F. '{ printf "0x%02x%02x%02x\n", $1 + 0, $2 + 0, $3 + 0 }')
grep -q "^#define SLURM_VERSION_NUMBER $want_num\$" "$BUILD/slurm/slurm_version.h" ||
	die "$BUILD/slurm/slurm_version.h does not define SLURM_VERSION_NUMBER $want_num ($daemon_ver)"
echo "$deb_ver" >"$STAMP"
echo "$SRC"
