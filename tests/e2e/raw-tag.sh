#!/bin/sh
# raw-tag.sh - job_submit/saturn does not trust the client: a SATURN_BATCH
# set by another SPANK plugin (a user can bring their own plugstack.conf via
# SLURM_CONF) is checked again on the controller. A bad name is refused with
# the reason; an empty one gets the default name (the job's).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
RAW="$top_builddir/tests/e2e/.libs/spank_rawtag.so"
[ -f "$RAW" ] || skip "test plugin spank_rawtag.so not built"
e2e_setup 5

# The user's own configuration: same cluster, only our test plugin in plugstack.
cp "$RAW" "$OUT/spank_rawtag.so"
printf 'required %s\n' "$OUT/spank_rawtag.so" >"$OUT/plugstack.conf"
sed "s,^PlugStackConfig=.*,PlugStackConfig=$OUT/plugstack.conf," "$SLURM_CONF" >"$OUT/slurm.conf"
chmod 644 "$OUT"/plugstack.conf "$OUT"/slurm.conf "$OUT/spank_rawtag.so"
# gres.conf is read beside slurm.conf
cp "$SATURN_CLUSTER_DIR/etc/gres.conf" "$OUT/gres.conf"
chmod 644 "$OUT/gres.conf"

raw_sbatch() {
	tag=$1
	shift
	runuser -u "$E2E_USER" -- env SLURM_CONF="$OUT/slurm.conf" SATURN_RAW_TAG="$tag" \
		sh -c 'cd "$0" && exec sbatch "$@"' "$OUT" "$@"
}

for bad in 'bad name' '.dot' 'x/y' '-dash'; do
	raw_sbatch "$bad" --gres=gpu:1 --wrap true >"$OUT/err" 2>&1 && fail "raw tag '$bad' accepted"
	grep -q "saturn: bad batch name '$bad'" "$OUT/err" || fail "raw tag '$bad': $(cat "$OUT/err")"
done
queue_empty || fail "a refused raw tag left a job"

job=$(raw_sbatch '' --parsable -J 'raw job' --gres=gpu:1 --wrap true) || fail "empty raw tag refused"
wait_for 5 job_reason_is "$job" "saturn: waiting for plan (batch raw_job)" ||
	fail "job $job reason '$(job_reason "$job")', want batch raw_job"
job=$(raw_sbatch 'ok.1' --parsable --gres=gpu:1 --wrap true) || fail "valid raw tag refused"
wait_for 5 job_reason_is "$job" "saturn: waiting for plan (batch ok.1)" ||
	fail "job $job reason '$(job_reason "$job")'"
note "names re-checked by job_submit/saturn; default name filled in"
