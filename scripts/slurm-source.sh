#!/bin/sh
# slurm-source.sh - fetch and configure (headers only) the Slurm source that
# matches the installed slurmctld, so that sched/saturn and job_submit/saturn
# can be compiled against slurmctld's internal headers. Works for the
# releases the plugins support: 22.05 (Debian 12), 24.11 (Debian 13) and
# 26.05 (a source tree of one's own: --from).
#
#   scripts/slurm-source.sh               Debian's slurmctld: its own source
#   scripts/slurm-source.sh --from DIR    a Slurm source tree (e.g. SchedMD's
#                                         tag slurm-26-05-3-1) for the
#                                         slurmctld installed from it
#
# Steps for Debian's slurmctld (each skipped when already done; a second run
# is instant):
#   1. install Debian's Slurm packages when missing (needs root);
#   2. add a deb-src entry (a copy of every enabled deb822 "Types: deb"
#      stanza, or of every one-line "deb" entry) in
#      /etc/apt/sources.list.d/saturn-deb-src.{sources,list} when apt has
#      no source for slurm-wlm, then apt-get update;
#   3. apt-get source slurm-wlm=<exact installed Debian version> into the cache
#      folder ($SATURN_SLURM_CACHE, default /var/cache/saturn-slurm); when the
#      archive serves only the upstream tarball of that version (Debian 13's
#      24.11.5: its .dsc and Debian tarball are not served here), that
#      tarball, downloaded by apt's own helper and checked against the
#      SHA256 of the Sources index (Debian's patches do not touch the
#      structures the plugins read);
#   4. ./configure it in DIR/build (no make: plugins only need config.h and
#      slurm/slurm_version.h; --without-munge when munge's headers are
#      missing, which changes no structure either).
# With --from DIR the tree is used where it is: configured in DIR/build
# unless DIR/build/config.h or DIR/config.h (an in-tree build) exists.
# The last line printed is the source folder, for
#   ./configure --with-slurm-source="$(scripts/slurm-source.sh | tail -n1)"
# Fails (exit 1, message on stderr) when the source's version differs from the
# installed daemon (`slurmctld -V`): plugins built against another version are
# refused by slurmctld (plugin_version must equal SLURM_VERSION_NUMBER).
set -eu
export DEBIAN_FRONTEND=noninteractive

CACHE=${SATURN_SLURM_CACHE:-/var/cache/saturn-slurm}
SRC_LIST=/etc/apt/sources.list.d/saturn-deb-src.sources
SRC_LIST1=/etc/apt/sources.list.d/saturn-deb-src.list
FROM=
while [ $# -gt 0 ]; do
	case "$1" in
	--from)
		[ $# -ge 2 ] || { echo "slurm-source.sh: error: --from needs a folder" >&2; exit 1; }
		FROM=$2
		shift 2
		;;
	--from=*)
		FROM=${1#--from=}
		shift
		;;
	-h | --help)
		sed -n '2,/^set -eu/p' "$0" | sed -n 's/^# \{0,1\}//p'
		exit 0
		;;
	*)
		echo "slurm-source.sh: error: unknown argument '$1' (see --help)" >&2
		exit 1
		;;
	esac
done
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

# Version recorded in a Slurm source tree: META's Major.Minor.Micro.
source_version() {
	awk '$1 == "Major:" {ma=$2} $1 == "Minor:" {mi=$2} $1 == "Micro:" {mc=$2}
	     END { if (ma != "") printf "%s.%s.%s\n", ma, mi, mc }' "$1/META"
}

# The releases the plugins are written for (plugin/common/slurm_compat.h).
check_series() {
	case "$1" in
	22.05.* | 24.11.* | 26.05.*) ;;
	*) die "Slurm $1 is not supported: the plugins build for Slurm 22.05, 24.11 and 26.05 (doc/slurm-versions.md)" ;;
	esac
}

# configure_headers SRC BUILD: Slurm's configure in BUILD, headers only.
configure_headers() {
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
	munge=
	[ -f /usr/include/munge.h ] || munge=--without-munge
	mkdir -p "$2"
	note "configuring $1 in $2 (log: $2/saturn-configure.log)"
	# shellcheck disable=SC2086
	(cd "$2" && "$1/configure" --prefix=/usr --sysconfdir=/etc/slurm \
		--libdir="/usr/lib/$multiarch" --runstatedir=/run --localstatedir=/var \
		--enable-multiple-slurmd --without-rpath $munge) >"$2/saturn-configure.log" 2>&1 || {
		tail -n 20 "$2/saturn-configure.log" >&2
		die "configure of the Slurm source failed (see $2/saturn-configure.log)"
	}
	[ -f "$2/config.h" ] && [ -f "$2/slurm/slurm_version.h" ] ||
		die "configure did not produce config.h and slurm/slurm_version.h in $2"
}

# check_version_h BUILD VERSION: slurm_version.h defines that version.
check_version_h() {
	want_num=$(echo "$2" | awk -F. '{ printf "0x%02x%02x%02x\n", $1 + 0, $2 + 0, $3 + 0 }')
	grep -q "^#define SLURM_VERSION_NUMBER $want_num\$" "$1/slurm/slurm_version.h" ||
		die "$1/slurm/slurm_version.h does not define SLURM_VERSION_NUMBER $want_num ($2)"
}

# --- a source tree of one's own (--from DIR) --------------------------------
if [ -n "$FROM" ]; then
	[ -d "$FROM" ] || die "--from $FROM: no such folder"
	FROM=$(cd "$FROM" && pwd)
	[ -f "$FROM/META" ] && [ -f "$FROM/src/slurmctld/slurmctld.h" ] ||
		die "--from $FROM: not a Slurm source tree (no META or src/slurmctld/slurmctld.h)"
	sv=$(source_version "$FROM")
	check_series "$sv"
	daemon_ver=$( (slurmctld -V || /usr/sbin/slurmctld -V) 2>/dev/null | awk '{print $NF}')
	if [ -n "$daemon_ver" ] && [ "$sv" != "$daemon_ver" ]; then
		die "Slurm source in $FROM is version $sv but the installed slurmctld is $daemon_ver"
	fi
	[ -n "$daemon_ver" ] || note "no slurmctld installed: cannot check that $FROM ($sv) matches the daemon"
	if [ -f "$FROM/build/config.h" ] && [ -f "$FROM/build/slurm/slurm_version.h" ]; then
		BUILD="$FROM/build"
	elif [ -f "$FROM/config.h" ] && [ -f "$FROM/slurm/slurm_version.h" ]; then
		BUILD="$FROM" # configured in the tree itself
	else
		BUILD="$FROM/build"
		configure_headers "$FROM" "$BUILD"
	fi
	check_version_h "$BUILD" "$sv"
	echo "$FROM"
	exit 0
fi

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
check_series "$daemon_ver"
# Exact Debian version of the source package, e.g. 22.05.8-4+deb12u3.
deb_ver=$(dpkg-query -W -f='${Version}' slurmctld 2>/dev/null) ||
	die "cannot read slurmctld's Debian version"
upstream=${deb_ver#*:}
upstream=${upstream%-*}
[ "$upstream" = "$daemon_ver" ] ||
	die "slurmctld -V says $daemon_ver but the slurmctld package is $deb_ver (a slurmctld not from Debian's package: give its source with --from DIR)"

SRC="$CACHE/slurm-wlm-$upstream"
BUILD="$SRC/build"
STAMP="$SRC/.saturn-configured"

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
		if [ $# -gt 0 ]; then
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
		else
			# one-line entries only (what debootstrap writes)
			tmp="$SRC_LIST1.tmp.$$"
			{
				echo "# Added by saturn-slurm scripts/slurm-source.sh: source packages"
				echo "# (same archives as the deb lines) for apt-get source slurm-wlm."
				cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
					sed -n 's/^[[:space:]]*deb\([[:space:]]\)/deb-src\1/p'
			} >"$tmp"
			grep -q '^deb-src' "$tmp" || {
				rm -f "$tmp"
				die "found no deb entry (deb822 .sources or one-line) to derive a deb-src entry from"
			}
			mv "$tmp" "$SRC_LIST1"
			note "added $SRC_LIST1"
		fi
	fi
	note "apt-get update"
	apt_retry update || die "apt-get update failed"
	has_source || die "still no source for slurm-wlm after adding a deb-src entry"
fi

# --- 3. apt-get source (or the upstream tarball alone) ----------------------
# fetch_orig WORK: the upstream tarball of slurm-wlm=$deb_ver as the Sources
# index names it, checked against its SHA256, unpacked as
# WORK/slurm-wlm-$upstream. For an archive that serves the tarball but not
# the .dsc and Debian tarball of that version.
fetch_orig() {
	uris=$(cd "$1" && apt-get source -q --print-uris --only-source "slurm-wlm=$deb_ver" 2>/dev/null) ||
		return 1
	line=$(echo "$uris" | grep "_$upstream\.orig\.tar\.[a-z0-9]*' " | head -n 1)
	[ -n "$line" ] || return 1
	uri=$(echo "$line" | awk '{ gsub(/\047/, "", $1); print $1 }')
	file=$(echo "$line" | awk '{ print $2 }')
	hash=$(echo "$line" | awk '{ for (i = 3; i <= NF; i++) if ($i ~ /^SHA256:/) print $i }')
	[ -n "$hash" ] || { note "no SHA256 for $file in the Sources index"; return 1; }
	note "downloading $uri (the upstream tarball alone)"
	/usr/lib/apt/apt-helper download-file "$uri" "$1/$file" "$hash" >&2 || return 1
	mkdir -p "$1/x"
	tar -xf "$1/$file" -C "$1/x" || return 1
	top=$(ls "$1/x")
	[ "$(echo "$top" | wc -l)" = 1 ] && [ -f "$1/x/$top/META" ] || return 1
	mv "$1/x/$top" "$1/slurm-wlm-$upstream"
}

if [ ! -f "$SRC/META" ]; then
	work="$CACHE/.fetch.$$"
	rm -rf "$work"
	mkdir -p "$work"
	note "apt-get source slurm-wlm=$deb_ver"
	# _apt cannot write into root-owned folders; apt then downloads as root
	# with a notice, which is fine here.
	if ! (cd "$work" && apt-get source -q --only-source "slurm-wlm=$deb_ver") >&2; then
		rm -rf "$work"
		mkdir -p "$work"
		note "apt-get source failed: trying the upstream tarball of $deb_ver alone"
		fetch_orig "$work" || {
			rm -rf "$work"
			die "apt-get source slurm-wlm=$deb_ver failed, and so did its upstream tarball (is that exact version in the deb-src archives?)"
		}
	fi
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
configure_headers "$SRC" "$BUILD"
check_version_h "$BUILD" "$daemon_ver"
echo "$deb_ver" >"$STAMP"
echo "$SRC"
