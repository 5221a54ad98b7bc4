#!/bin/sh
# slurm-root.sh - another Slurm release on this Debian 12 machine, for the
# project's own builds and tests: a Debian root (debootstrap --variant=
# minbase) holding that release's slurmctld, slurmd, slurmdbd, munge and
# MariaDB, the project's build dependencies and the matching Slurm source,
# entered with chroot in a private mount namespace (this source tree
# bind-mounted at the same path, /proc, /dev and /sys of the host).
#
# usage: slurm-root.sh VERSION create         make the root (idempotent)
#        slurm-root.sh VERSION run CMD [ARG..] run CMD inside it, in this tree
#        slurm-root.sh VERSION path           print the root's folder
#        slurm-root.sh VERSION remove         delete it
#
# VERSION:
#   22.05  Debian 12 (bookworm) with its Slurm 22.05.8 packages: the host's
#          own release, as a root (for checking this script)
#   24.11  Debian 13 (trixie) with its Slurm 24.11.5 packages; the source is
#          the upstream tarball the archive serves (scripts/slurm-source.sh)
#   26.05  Debian 13 with a Slurm built here from a source tree of one's own
#          (SATURN_SLURM_TREE=DIR, e.g. an export of SchedMD's tag
#          slurm-26-05-3-1; Debian's 26.05 source is not served by the
#          archive reachable here, and 26.05.x releases differ in the layout
#          of slurmctld's structures, so plugins must be built against the
#          exact release that runs them), installed under /usr
#
# Environment:
#   SATURN_ROOTS          where the roots live [/var/cache/saturn-slurm/roots]
#   SATURN_DEBIAN_MIRROR  the Debian archive [http://deb.debian.org/debian]
#   SATURN_SLURM_TREE     26.05: the Slurm source tree to build and install
#
# The root runs with the host's kernel, network and users' ids; cgroups
# are not used by the test clusters (CgroupPlugin is not needed with
# ProctrackType=proctrack/linuxproc). Processes still running in the root
# when CMD ends (a test's daemons) are killed. Needs root, debootstrap and
# unshare (util-linux).
set -eu

ME=slurm-root.sh
die() {
	echo "$ME: error: $*" >&2
	exit 1
}
note() {
	echo "$ME: $*" >&2
}

[ $# -ge 2 ] || die "usage: $ME VERSION create|run CMD...|path|remove (see the top of this file)"
VERSION=$1
ACTION=$2
shift 2

TOP=$(cd "$(dirname "$0")/.." && pwd)
ROOTS=${SATURN_ROOTS:-/var/cache/saturn-slurm/roots}
MIRROR=${SATURN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
case "$VERSION" in
22.05) SUITE=bookworm ;;
24.11) SUITE=trixie ;;
26.05) SUITE=trixie ;;
*) die "VERSION must be 22.05, 24.11 or 26.05 (the releases the plugins build for), not '$VERSION'" ;;
esac
R="$ROOTS/slurm-$VERSION"
STAMP="$R/.saturn-root"

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"

# Kill what is left of one run in the root (a test's daemons after a
# failure): the processes of its mount namespace ($1, as readlink
# /proc/PID/ns/mnt prints it), or with no argument every process whose root
# is this root (remove). Other runs in the same root are left alone.
kill_inside() {
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] || continue
		[ $# -eq 0 ] || [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$1" ] || continue
		kill -9 "${p#/proc/}" 2>/dev/null || true
	done
}

# run_in CMD...: CMD inside the root, in this tree, with a clean environment
# (but the SATURN_* and a few build variables of the caller).
run_in() {
	[ -f "$STAMP" ] || [ -x "$R/bin/sh" ] || die "no root at $R (run: $ME $VERSION create)"
	cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
	mkdir -p "$R/tmp" && chmod 1777 "$R/tmp"
	# the variables for CMD, in a file only root can reach: never a fixed
	# name in the root's /tmp, which every user of the test clusters can
	# write to (a planted link or file there would be sourced as root)
	mkdir -p "$R/root" && chmod 700 "$R/root"
	envf=$(mktemp "$R/root/.saturn-env.XXXXXX") || die "mktemp in $R/root failed"
	envf=${envf#"$R"}
	env | grep -E '^(SATURN_[A-Z0-9_]*|FUZZ_SECONDS|TERM|CI|DEB_BUILD_OPTIONS)=' |
		sed "s/'/'\\\\''/g; s/^\([^=]*\)=\(.*\)\$/export \1='\2'/" >"$R$envf"
	shared=
	[ -d "$TOP/../shared" ] && shared=$(cd "$TOP/../shared" && pwd)
	rc=0
	# shellcheck disable=SC2016
	unshare --mount --propagation private sh -c '
		set -e
		R=$1 TOP=$2 SHARED=$3 ENVF=$4
		shift 4
		readlink /proc/self/ns/mnt >"$R$ENVF.ns"
		mount -t proc proc "$R/proc"
		mount --rbind /dev "$R/dev"
		mount --make-rslave "$R/dev"
		mount --rbind /sys "$R/sys"
		mount --make-rslave "$R/sys"
		mkdir -p "$R$TOP"
		mount --bind "$TOP" "$R$TOP"
		if [ -n "$SHARED" ]; then
			mkdir -p "$R$SHARED"
			mount --bind "$SHARED" "$R$SHARED"
		fi
		exec chroot "$R" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			/bin/sh -c ". \"\$1\"; rm -f \"\$1\"; cd \"\$2\" && shift 2 && exec \"\$@\"" \
			sh "$ENVF" "$TOP" "$@"
	' sh "$R" "$TOP" "$shared" "$envf" "$@" || rc=$?
	if [ -f "$R$envf.ns" ]; then
		kill_inside "$(cat "$R$envf.ns")"
		rm -f "$R$envf.ns"
	fi
	rm -f "$R$envf"
	return $rc
}

create() {
	if [ -f "$STAMP" ]; then
		note "root $R exists ($(cat "$STAMP"))"
		return 0
	fi
	command -v debootstrap >/dev/null 2>&1 || {
		note "installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2 ||
			die "apt-get install debootstrap failed"
	}
	command -v unshare >/dev/null 2>&1 || die "unshare (util-linux) not found"
	mkdir -p "$ROOTS"
	exec 9>"$ROOTS/.lock-$VERSION"
	command -v flock >/dev/null 2>&1 && flock 9
	[ -f "$STAMP" ] && return 0
	rm -rf "$R"
	t0=$(date +%s)
	include=ca-certificates
	[ "$VERSION" = 26.05 ] || include="$include,slurmctld,slurmd,slurm-client,munge,libslurm-dev"
	note "debootstrap --variant=minbase $SUITE $R ($MIRROR)"
	debootstrap --variant=minbase --include="$include" "$SUITE" "$R" "$MIRROR" >"$ROOTS/debootstrap-$VERSION.log" 2>&1 || {
		tail -n 20 "$ROOTS/debootstrap-$VERSION.log" >&2
		die "debootstrap failed (see $ROOTS/debootstrap-$VERSION.log)"
	}
	# no daemon starts inside (policy-rc.d), the tests start their own
	printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
	chmod 755 "$R/usr/sbin/policy-rc.d"
	note "debootstrap: $(($(date +%s) - t0)) s"
	case "$VERSION" in
	26.05)
		run_in env SATURN_DEPS_CORE=1 SATURN_DEPS_NO_SLURM=1 scripts/install-deps.sh >&2
		build_slurm
		;;
	*)
		run_in env SATURN_DEPS_CORE=1 scripts/install-deps.sh >&2
		run_in scripts/slurm-source.sh >&2
		;;
	esac
	echo "Slurm $VERSION $(run_in sh -c 'slurmctld -V') on Debian $SUITE, made $(date -u +%Y-%m-%dT%H:%MZ) in $(($(date +%s) - t0)) s" >"$STAMP"
	note "root ready: $(cat "$STAMP")"
}

# 26.05: build and install Slurm from SATURN_SLURM_TREE inside the root
# (prefix /usr, plugins in /usr/lib/MULTIARCH/slurm), configured as Debian
# configures its own, and keep the configured tree as the source the plugins
# build against (/var/cache/saturn-slurm/slurm-VERSION).
build_slurm() {
	tree=${SATURN_SLURM_TREE:-}
	[ -n "$tree" ] && [ -f "$tree/META" ] ||
		die "26.05 needs SATURN_SLURM_TREE=DIR, a Slurm 26.05.x source tree (e.g. git archive of SchedMD's tag slurm-26-05-3-1)"
	ver=$(awk '$1 == "Major:" {ma=$2} $1 == "Minor:" {mi=$2} $1 == "Micro:" {mc=$2}
		END { printf "%s.%s.%s", ma, mi, mc }' "$tree/META")
	case "$ver" in 26.05.*) ;; *) die "SATURN_SLURM_TREE is Slurm $ver, not 26.05.x" ;; esac
	DEBIAN_FRONTEND=noninteractive run_in apt-get install -y -qq --no-install-recommends \
		libmunge-dev default-libmysqlclient-dev libjson-c-dev libhwloc-dev libyaml-dev \
		libpam0g-dev python3 bzip2 file >&2 || die "apt-get install of Slurm's build dependencies failed"
	src=/var/cache/saturn-slurm/slurm-$ver
	mkdir -p "$R$src"
	note "copying $tree to $R$src"
	(cd "$tree" && tar --exclude=./.git -cf - .) | tar -xf - -C "$R$src"
	t1=$(date +%s)
	note "building Slurm $ver in the root (log: $R$src/build/saturn-build.log)"
	run_in sh -c "mkdir -p $src/build && cd $src/build &&
		../configure --prefix=/usr --sysconfdir=/etc/slurm --libdir=/usr/lib/\$(gcc -print-multiarch) \\
		  --runstatedir=/run --localstatedir=/var --enable-multiple-slurmd --without-rpath \\
		  --with-munge >saturn-build.log 2>&1 &&
		make -j\$(nproc) >>saturn-build.log 2>&1 && make install >>saturn-build.log 2>&1 && ldconfig" || {
		tail -n 30 "$R$src/build/saturn-build.log" >&2
		die "building Slurm $ver failed"
	}
	note "Slurm $ver built and installed: $(($(date +%s) - t1)) s"
}

case "$ACTION" in
create) create ;;
run)
	[ $# -ge 1 ] || die "run: give a command"
	run_in "$@"
	;;
path) echo "$R" ;;
remove)
	kill_inside
	rm -rf "$R"
	;;
*) die "unknown action '$ACTION' (create, run, path, remove)" ;;
esac
