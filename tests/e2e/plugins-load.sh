#!/bin/sh
# plugins-load.sh - the cluster loads job_submit/saturn (slurmctld log) and
# spank_saturn (plugstack.conf), and sbatch, salloc and srun list
# --saturn-batch in their --help.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
e2e_setup 0

grep -q 'job_submit/saturn: loaded' "$CTLD_LOG" || fail "slurmctld did not load job_submit/saturn"
grep -q '^JobSubmitPlugins=saturn$' "$SLURM_CONF" || fail "JobSubmitPlugins=saturn missing from slurm.conf"
grep -q "^required .*/spank_saturn.so$" "$SATURN_CLUSTER_DIR/etc/plugstack.conf" ||
	fail "plugstack.conf does not load spank_saturn.so"
for cmd in sbatch salloc srun; do
	$cmd --help 2>&1 | grep -q -- '--saturn-batch=\[NAME\]' || fail "$cmd --help does not list --saturn-batch"
done
# as a plain user too (the plugin is loaded by the client, not by root only)
as_user sbatch --help 2>&1 | grep -q -- '--saturn-batch' || fail "sbatch --help as $E2E_USER lacks --saturn-batch"
note "job_submit/saturn loaded; --saturn-batch listed by sbatch, salloc, srun"
