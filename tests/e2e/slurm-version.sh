# slurm-version.sh - what the end-to-end tests need to know of the Slurm
# release a test cluster runs (22.05, 24.11 or 26.05; tests/run-slurm.sh).
# Sourced by lib.sh and sched-lib.sh, not run.

# A GRES string in the spelling of Slurm 22.05 ("gres:gpu:4"): Slurm 23.11
# and later write "gres/gpu:4" (plugin/common/slurm_compat.h), so tests
# compare the normalised form and grep for gres[:/]gpu.
gres_norm() {
	echo "$1" | sed 's|gres/|gres:|g'
}

# slurm_at_least MAJOR.MINOR: the cluster's Slurm (scontrol -V) is that
# release or a later one, for the few behaviours Slurm itself changed.
slurm_at_least() {
	scontrol -V | awk -v want="$1" '{ split($NF, v, "."); split(want, w, ".");
		exit !(v[1] + 0 > w[1] + 0 || (v[1] + 0 == w[1] + 0 && v[2] + 0 >= w[2] + 0)) }'
}
