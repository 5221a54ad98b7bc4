#!/bin/sh
# install-deps.sh - install the Debian packages Saturn for Slurm builds,
# tests and runs with. Idempotent; needs root (or sudo) and Debian's archive.
# Debian 12 (bookworm, Slurm 22.05) and Debian 13 (trixie, Slurm 24.11: the
# roots of scripts/slurm-root.sh) are both known; names that differ between
# them are chosen by the release.
#
#   scripts/install-deps.sh            everything (build, tests, one-machine cluster)
#   SATURN_DEPS_MINIMAL=1 ...          build only (no Slurm daemons, no fuzzing tools)
#   SATURN_DEPS_CORE=1 ...             build, cluster, accounting and packages, but
#                                      neither PyTorch nor the fuzzing compiler
#                                      (the core end-to-end set of another Slurm)
#   SATURN_DEPS_NO_SLURM=1 ...         leave out Debian's Slurm packages (a root
#                                      whose Slurm is built from source)
#
# slurmdbd, mariadb-server-core and mariadb-client-core are for accounting on
# the one-machine cluster (SATURN_ACCOUNTING=1 scripts/cluster.sh): the MariaDB
# server binaries only, no system service (the cluster runs its own instance).
set -eu

codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
case "$codename" in
bookworm) clang_rt=libclang-rt-14-dev ;;
*) clang_rt=libclang-rt-dev ;; # trixie and later: the default clang's
esac

slurm_build="libslurm-dev"
slurm_run="slurmctld slurmd slurm-client slurmdbd"
if [ "${SATURN_DEPS_NO_SLURM:-0}" = 1 ]; then
	slurm_build=""
	slurm_run=""
fi
build_pkgs="autoconf automake libtool pkg-config make gcc libc6-dev
  liblpsolve55-dev libsuitesparse-dev libhwloc-dev libjson-c-dev check
  $slurm_build python3"
run_pkgs="$slurm_run munge dpkg-dev procps psmisc
  ca-certificates mariadb-server-core mariadb-client-core"
# the Debian packages (dpkg-buildpackage -b, which requires build-essential;
# tests/pkg/deb.sh)
run_pkgs="$run_pkgs debhelper build-essential"
# PyTorch (the real training tests) and clang with its sanitizer runtime
# (the fuzzers)
full_pkgs="clang $clang_rt python3-torch"

pkgs="$build_pkgs"
[ "${SATURN_DEPS_MINIMAL:-0}" = 1 ] || pkgs="$pkgs $run_pkgs"
[ "${SATURN_DEPS_MINIMAL:-0}" = 1 ] || [ "${SATURN_DEPS_CORE:-0}" = 1 ] || pkgs="$pkgs $full_pkgs"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
	exit 0
fi

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
