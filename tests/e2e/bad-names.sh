#!/bin/sh
# bad-names.sh - --saturn-batch values outside [A-Za-z0-9._-]{1,64} (or
# starting with '-' or '.') are refused by sbatch with our message and no
# job is created; valid edge cases are accepted.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"
e2e_setup 1

long=x1234567890123456789012345678901234567890123456789012345678901234
for bad in 'has space' '.hidden' 'a/b' 'semi;colon' "$long" 'tab	x'; do
	if as_user sbatch --saturn-batch="$bad" --gres=gpu:1 --wrap true >"$OUT/err" 2>&1; then
		fail "name '$bad' accepted"
	fi
	grep -q "saturn: bad --saturn-batch name" "$OUT/err" || {
		cat "$OUT/err"
		fail "no explanation for name '$bad'"
	}
	grep -q "Invalid --saturn-batch argument" "$OUT/err" || fail "sbatch did not refuse '$bad'"
done
# an empty value with '=' means "default name", like the bare option
queue_empty || fail "a rejected submission left a job"
for good in 'a' 'lr-sweep_2.v1' "${long%4}"; do
	job=$(e2e_sbatch_user --saturn-batch="$good" --gres=gpu:1 --wrap true) || fail "name '$good' refused"
	wait_for 5 job_reason_is "$job" "saturn: waiting for plan (batch $good)" ||
		fail "job $job: reason '$(job_reason "$job")', want batch $good"
done
# #SBATCH lines work too, and are checked the same way
printf '#!/bin/sh\n#SBATCH --saturn-batch=bad*name\n#SBATCH --gres=gpu:1\ntrue\n' >"$OUT/bad.sbatch"
chmod 644 "$OUT/bad.sbatch"
as_user sbatch bad.sbatch >"$OUT/err" 2>&1 && fail "#SBATCH --saturn-batch=bad*name accepted"
grep -q "character '\*' not allowed" "$OUT/err" || fail "no explanation for the #SBATCH name"
note "bad names refused with the reason; good names accepted"
