#!/bin/sh
# install-deps.sh - install the Debian 12 packages Saturn for Slurm builds,
# tests and runs with. Idempotent; needs root (or sudo) and Debian's archive.
#
#   scripts/install-deps.sh            everything (build, tests, one-machine cluster)
#   SATURN_DEPS_MINIMAL=1 ...          build only (no Slurm daemons, no fuzzing tools)
#
# slurmdbd, mariadb-server-core and mariadb-client-core are for accounting on
# the one-machine cluster (SATURN_ACCOUNTING=1 scripts/cluster.sh): the MariaDB
# server binaries only, no system service (the cluster runs its own instance).
set -eu

build_pkgs="autoconf automake libtool pkg-config make gcc libc6-dev
  liblpsolve55-dev libsuitesparse-dev libhwloc-dev hwloc libjson-c-dev check
  libslurm-dev python3"
run_pkgs="slurmctld slurmd slurm-client munge dpkg-dev clang libclang-rt-14-dev procps psmisc python3-torch
  ca-certificates slurmdbd mariadb-server-core mariadb-client-core"
# the Debian packages (dpkg-buildpackage -b, which requires build-essential;
# tests/pkg/deb.sh)
run_pkgs="$run_pkgs debhelper build-essential"

pkgs="$build_pkgs"
[ "${SATURN_DEPS_MINIMAL:-0}" = 1 ] || pkgs="$pkgs $run_pkgs"

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
