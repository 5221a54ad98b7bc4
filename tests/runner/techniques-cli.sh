#!/bin/sh
# `saturn techniques`: built-ins, a configuration file, JSON output, errors.
. "$top_srcdir/tests/runner/common.sh"
PATH="$top_builddir/cli:$PATH"

out=$(saturn techniques) || fail "list"
for t in single ddp fsdp pipeline offload; do
	echo "$out" | grep -q "^$t " || fail "$t missing"
done
echo "$out" | grep -q "param:  stages int 2..gpus (default gpus)" || fail "pipeline params: $out"
printf '[technique zero3]\ngpus = 2-8\nlaunch = deepspeed --num_gpus={gpus} {command}\n' > "$tmp/t.conf"
SATURN_TECHNIQUES_CONF="$tmp/t.conf" saturn techniques | grep -q "from:   config $tmp/t.conf:1" || fail "config source"
saturn techniques --conf "$tmp/t.conf" --json > "$tmp/j" || fail "json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[-1]["name"]=="zero3" and d[-1]["max_gpus"]==8' "$tmp/j" \
	|| fail "json content: $(cat "$tmp/j")"
printf '[technique x]\nlaunch = y\n' > "$tmp/bad.conf"
saturn techniques --conf "$tmp/bad.conf" 2>"$tmp/err"; [ $? = 2 ] || fail "bad config status"
grep -q "bad.conf:1: technique x: missing gpus" "$tmp/err" || fail "bad config message: $(cat "$tmp/err")"
exit 0
