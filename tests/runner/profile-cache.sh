#!/bin/sh
# saturn-profile's profile cache on the CPU stand-in (no Slurm): a second
# batch with the same commands reuses every result (0 trials, same options);
# another class or fewer GPUs misses; a stale, corrupt or symlinked entry
# and a cache folder of another user are ignored with a note; a technique
# the entry lacks is swept; the default folder is under XDG_CACHE_HOME.
. "$top_srcdir/tests/runner/common.sh"

cat > "$tmp/b.sbatch" <<'S'
#!/bin/sh
case "$SLURM_ARRAY_TASK_ID" in 0) model=gpt2-xl ;; *) model=gpt2-medium ;; esac
exec saturn-run --batches 400 -- saturn-emulate --model $model --batch-size 8 --lr 0.0$SLURM_ARRAY_TASK_ID --time-scale 0.005
S
chmod +x "$tmp/b.sbatch"
C="$tmp/cache"
prof() { # prof NAME OUT [args]: CUDA_VISIBLE_DEVICES from $devs
	n=$1 out=$2
	shift 2
	CUDA_VISIBLE_DEVICES=${devs:-0,1,2,3} saturn-profile --batch "$n" --script "$tmp/b.sbatch" --task-ids 0-1 \
		--output "$tmp/$out.json" --backend cpu --cache "$C" "$@" 2>"$tmp/$out.err" ||
		{ cat "$tmp/$out.err"; fail "profile $out"; }
}
trials() { sed -n 's/.*: \([0-9]*\) trials in .*/\1/p' "$tmp/$1.err"; }
same() { # same A B: identical options and statuses
	python3 - "$tmp/$1.json" "$tmp/$2.json" <<'P'
import json, sys
def opts(f):
    return {t["signature"]: sorted((o["technique"], o["gpus"], o["status"], round(o["sec_per_batch"], 9),
                                   json.dumps(o.get("params"), sort_keys=True)) for o in t["options"])
            for t in json.load(open(f))["tasks"]}
a, b = opts(sys.argv[1]), opts(sys.argv[2])
assert a == b, (a, b)
P
}

prof b1 cold --techniques single,ddp
[ "$(trials cold)" -gt 0 ] || fail "cold run ran no trials"
[ -d "$C" ] && [ "$(stat -c %a "$C")" = 700 ] || fail "cache folder not created 0700"
[ "$(ls "$C" | wc -l)" = 2 ] || fail "want one entry per signature: $(ls "$C")"

# warm: another batch name, same commands -> every result from the cache
prof b2 warm --techniques single,ddp
[ "$(trials warm)" = 0 ] || fail "warm run ran $(trials warm) trials"
grep -q "2 of 2 techniques from the cache (entry created" "$tmp/warm.err" || fail "no cache line"
same cold warm || fail "cached options differ"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["batch"] == "b2"' "$tmp/warm.json" || fail "batch name"

# a technique the entry lacks is swept, the others reused; the entry grows
prof b3 more --techniques single,ddp,fsdp
grep -q "2 of 3 techniques from the cache" "$tmp/more.err" || fail "partial reuse"
[ "$(trials more)" -gt 0 ] || fail "new technique not swept"
grep -q "trial .* fsdp" "$tmp/more.err" || fail "fsdp not trialled"
grep -q "trial .* ddp" "$tmp/more.err" && fail "ddp trialled again"
prof b4 more2 --techniques single,ddp,fsdp
[ "$(trials more2)" = 0 ] || fail "refreshed entry not used"

# offload not measured where single fits (status skipped): reused as such
C="$tmp/off" prof f1 offc --techniques single,offload
grep -q "trial .* offload" "$tmp/offc.err" && fail "offload trialled where single fits"
python3 -c 'import json,sys; assert all(o["status"] == "skipped" for t in json.load(open(sys.argv[1]))["tasks"] for o in t["options"] if o["technique"] == "offload")' \
	"$tmp/offc.json" || fail "offload not skipped"
C="$tmp/off" prof f2 offw --techniques single,offload
[ "$(trials offw)" = 0 ] || fail "skipped offload not reused"
same offc offw || fail "reused skipped option differs"

# another class, fewer GPUs: misses
prof b5 klass --techniques single,ddp --class big
[ "$(trials klass)" -gt 0 ] || fail "another class hit the cache"
devs=0,1 prof b6 fewer --techniques single,ddp
[ "$(trials fewer)" -gt 0 ] || fail "fewer GPUs hit the cache"

# --exhaustive measures anew; --no-cache neither reads nor writes
prof b7 exh --techniques single --exhaustive
[ "$(trials exh)" -gt 0 ] || fail "--exhaustive read the cache"
rm -rf "$tmp/nc"
CUDA_VISIBLE_DEVICES=0,1 saturn-profile --batch n --script "$tmp/b.sbatch" --task-ids 0 --output "$tmp/nc.json" \
	--backend cpu --no-cache --techniques single 2>"$tmp/nc.err" || fail "--no-cache run"
[ -e "$tmp/xdg-cache" ] && fail "--no-cache created the default cache"

# stale, corrupt and symlinked entries are ignored with a note, and replaced
e1=$(ls -t $(grep -l gpt2-xl "$C"/*.json) | head -1)
python3 - "$e1" <<'P'
import json, sys, time
p = json.load(open(sys.argv[1])); p["created"] = time.time() - 40 * 86400
json.dump(p, open(sys.argv[1], "w"))
P
prof s1 stale --techniques single,ddp
grep -q "ignored: older than --cache-max-age" "$tmp/stale.err" || fail "stale entry not noted"
grep -q "gpt2-xl.*techniques from the cache" "$tmp/stale.err" && fail "stale entry used"
grep -q "gpt2-medium.*2 of 2 techniques from the cache" "$tmp/stale.err" || fail "fresh entry not used"
[ -s "$tmp/stale.json" ] || fail "no profile with a stale entry"
python3 -c 'import json,sys,time; assert json.load(open(sys.argv[1]))["created"] > time.time() - 600' "$e1" ||
	fail "stale entry not refreshed"
sleep 1
prof s2 stale2 --techniques single,ddp --cache-max-age 0.00001
[ "$(trials stale2)" -gt 0 ] || fail "--cache-max-age not honoured"
echo '{"format": "saturn-profile/1", "batch": ' > "$e1"
prof s3 corrupt --techniques single,ddp
grep -q "note: cache entry ignored: .*$e1" "$tmp/corrupt.err" || fail "corrupt entry not noted"
[ -s "$tmp/corrupt.json" ] || fail "no profile with a corrupt entry"
mv "$e1" "$tmp/real.json"
ln -s "$tmp/real.json" "$e1"
prof s4 link --techniques single,ddp
grep -q "note: cache entry ignored: .*$e1" "$tmp/link.err" || fail "symlinked entry not noted"
[ -L "$e1" ] && fail "symlinked entry not replaced"
[ -s "$tmp/link.json" ] || fail "no profile with a symlinked entry"

# a cache folder owned by someone else, or a symlink: refused, profile written
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -m 700 "$tmp/other" && chown nobody "$tmp/other"
	C="$tmp/other" prof o1 other --techniques single
	grep -q "warning: profile cache .*not owned by the invoking user" "$tmp/other.err" || fail "foreign folder used"
	[ "$(trials other)" -gt 0 ] && [ -s "$tmp/other.json" ] || fail "no profile with a foreign cache"
	[ -z "$(ls "$tmp/other")" ] || fail "wrote into a foreign cache"
fi
ln -s "$C" "$tmp/clink"
C="$tmp/clink" prof l1 clink --techniques single
grep -q "warning: profile cache .*symbolic link" "$tmp/clink.err" || fail "symlinked folder used"

# the last component is created in a sticky world-writable folder (1733)
mkdir -m 1733 "$tmp/spool"
C="$tmp/spool/$(id -u)" prof p1 spool --techniques single
[ "$(stat -c %a "$tmp/spool/$(id -u)")" = 700 ] && [ -n "$(ls "$tmp/spool/$(id -u)")" ] || fail "spool/UID"

# default folder: $XDG_CACHE_HOME/saturn/profiles
CUDA_VISIBLE_DEVICES=0 saturn-profile --batch d --script "$tmp/b.sbatch" --task-ids 0 --output "$tmp/d.json" \
	--backend cpu --techniques single 2>/dev/null || fail "default cache run"
[ -n "$(ls "$tmp/xdg-cache/saturn/profiles")" ] || fail "no entry in the default cache"
exit 0
