# tests/pkg/local.mk - the Debian packages (debian/): built with
# dpkg-buildpackage, checked, unpacked into a private root (never installed
# on the host) and run as a one-machine cluster. Needs root, debhelper and
# the Slurm source; skipped (77) otherwise.
TESTS += pkg/deb.sh
EXTRA_DIST += pkg/deb.sh
