#!/usr/bin/env python3
"""site-handover.py RUN_DIR... - from a site-load.sh run (its submit.log and
tasks.log), how long tasks waited for a node once it had room: for every
task start on node N by a task submitted before the last end on N, the
time from that end to the start. An approximation of "a GPU comes free ->
a waiting task starts on it": tasks.log names the node and the GPU count,
not the GPUs. Printed per kind (sat: Saturn tasks, job: ordinary jobs):
the count, p50 / p90 / p99 in seconds and the share within 1 s.
Used in doc/benchmarks-site.md."""
import bisect
import collections
import sys


def quantile(a, p):
    return a[min(len(a) - 1, int(p * len(a)))] if a else float("nan")


def run(d):
    submitted = {}
    with open(d + "/submit.log") as f:
        for line in f:
            w = line.split()
            if len(w) < 5:
                continue
            kind, key, n, ts = w[0], w[1], int(w[2]), float(w[4])
            for k in ([f"{key}_{i}" for i in range(n)] if n > 0 else [key]):
                submitted[k] = (kind, ts)
    starts, ends, node_of = [], collections.defaultdict(list), {}
    with open(d + "/tasks.log") as f:
        for line in f:
            w = line.split()
            if w[0] == "S" and len(w) >= 5:
                starts.append((float(w[3]), w[1], w[4]))
                node_of[w[1]] = w[4]
            elif w[0] == "E" and len(w) >= 4:
                ends[w[1]].append(float(w[3]))
    node_ends = collections.defaultdict(list)
    for k, es in ends.items():
        if k in node_of:
            node_ends[node_of[k]].extend(es)
    for es in node_ends.values():
        es.sort()
    lat = collections.defaultdict(list)
    for t, k, n in starts:
        if k not in submitted:
            continue
        kind, ts = submitted[k]
        es = node_ends[n]
        i = bisect.bisect_left(es, t)
        if i == 0 or ts > es[i - 1]:
            continue  # no end before it there, or not waiting then
        lat[kind].append(t - es[i - 1])
    for kind in sorted(lat):
        a = sorted(lat[kind])
        print(f"{d} {kind} n {len(a)} p50 {quantile(a, .5):.2f} p90 {quantile(a, .9):.2f} "
              f"p99 {quantile(a, .99):.2f} within_1s {sum(x <= 1 for x in a) / len(a):.2f}")


for arg in sys.argv[1:]:
    run(arg.rstrip("/"))
