# common.sh - sourced by the runner shell tests: PATH to the built programs,
# a scratch folder removed on exit, and fail().
: "${top_builddir:?}" "${top_srcdir:?}"
PATH="$top_builddir/runner:$top_builddir/profiler:$PATH"
export PATH
unset SATURN_TECHNIQUE SATURN_GPUS SATURN_TECHNIQUE_PARAMS SATURN_MODE SATURN_PROGRESS_FILE \
	SATURN_BATCHES SATURN_RESUME_BATCH SATURN_REPORT_FILE SLURM_JOB_ID SLURM_PROCID \
	CUDA_VISIBLE_DEVICES SATURN_TECHNIQUES_CONF SATURN_EMU_LINK SATURN_EMU_LINK_GBS SATURN_VISIBLE_DEVICES
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# saturn-profile's default profile cache: private to each test
XDG_CACHE_HOME="$tmp/xdg-cache"
export XDG_CACHE_HOME
fail() { echo "FAIL: $*" >&2; exit 1; }
