#!/usr/bin/env python3
"""site-handover.py RUN_DIR... - from a site-load.sh run (its submit.log and
tasks.log), how long tasks waited for a node once it had room: for every
task start on node N by a task submitted before the last end on N, the
time from that end to the start. An approximation of "a GPU comes free ->
a waiting task starts on it": tasks.log names the node and the GPU count,
not the GPUs. Printed per kind (sat: Saturn tasks, job: ordinary jobs):
the count, p50 / p90 / p99 in seconds and the share within 1 s.

Under sched/saturn (the run folder's slurmctld.log has its "released
JobId=" lines), the Saturn hand-overs are split by how the task was
released: after that end (sat-released-after: the end -> release part is
sched/saturn's reaction), or before it (released ahead of its room, within
saturn_release_slack), and then whether an older released task of the
same array was still pending at the end (sat-ahead-sibling-pending) or not
(sat-ahead-alone). Slurm's main and backfill schedulers skip the rest of
an array in a pass once one of its tasks could not start, so a task
released ahead of its room holds back its released siblings until it
starts. Only hand-overs within the load and the drain count (an end
from T0 to T_LOAD of the run's meta.env, when it has one, and a start
before T_CANCEL, or T_LOAD + 60 s in runs that did not record it): with
SL_END=cancel the cancellation of the queue afterwards loads the host far
more than the mix (as in site-window.py). Hand-overs cut off that way are
counted apart (censored). Used in doc/benchmarks-site.md."""
import bisect
import collections
import datetime
import os
import re
import sys


def quantile(a, p):
    return a[min(len(a) - 1, int(p * len(a)))] if a else float("nan")


def releases(d):
    """First release per task key from slurmctld.log: key -> (epoch, job id)."""
    rel = {}
    path = d + "/slurmctld.log"
    if not os.path.exists(path):
        return rel
    pat = re.compile(r"\[(\S+)\] sched/saturn: released JobId=(\S+?)\((\d+)\)")
    with open(path, errors="replace") as f:
        for line in f:
            m = pat.match(line)
            if m and m.group(2) not in rel:
                t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
                t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
                rel[m.group(2)] = (t, int(m.group(3)))
    return rel


def load_window(d):
    """(T0, T_LOAD, T_CANCEL) in seconds from the run's meta.env; (-inf,
    inf, inf) without."""
    m = {}
    try:
        with open(d + "/meta.env") as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                m[k] = v.strip("'")
        t_load = int(m["T_LOAD"]) / 1e6
        t_cancel = int(m["T_CANCEL"]) / 1e6 if m.get("T_CANCEL") else t_load + 60
        return int(m["T0"]) / 1e6, t_load, t_cancel
    except (OSError, KeyError, ValueError):
        return float("-inf"), float("inf"), float("inf")


def run(d):
    t0, t_load, t_cancel = load_window(d)
    censored = 0
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
    rel = releases(d)
    by_array = collections.defaultdict(list)
    for k in rel:
        by_array[k.split("_")[0]].append(k)
    first_start = {}
    for t, k, n in starts:
        first_start[k] = min(t, first_start.get(k, t))
    split, react = collections.defaultdict(list), []
    lat = collections.defaultdict(list)
    for t, k, n in starts:
        if k not in submitted:
            continue
        kind, ts = submitted[k]
        es = node_ends[n]
        i = bisect.bisect_left(es, t)
        if i == 0 or ts > es[i - 1] or not t0 <= es[i - 1] <= t_load:
            continue  # no end before it there, not waiting then, or not in the load
        if t > t_cancel:
            censored += 1  # started only once the queue was being cancelled
            continue
        lat[kind].append(t - es[i - 1])
        if kind == "sat" and k in rel:
            e = es[i - 1]
            r, jid = rel[k]
            if r > e:
                split["sat-released-after"].append(t - e)
                react.append(r - e)
            elif any(o != k and rel[o][1] < jid and rel[o][0] <= e and
                     first_start.get(o, float("inf")) > e + 0.05
                     for o in by_array[k.split("_")[0]]):
                split["sat-ahead-sibling-pending"].append(t - e)
            else:
                split["sat-ahead-alone"].append(t - e)
    lat.update(split)
    if react:
        lat["sat-released-after(end->release)"] = react
    if censored:
        print(f"{d} censored (room freed in the load, start after the cancellation began) n {censored}")
    for kind in sorted(lat):
        a = sorted(lat[kind])
        print(f"{d} {kind} n {len(a)} p50 {quantile(a, .5):.2f} p90 {quantile(a, .9):.2f} "
              f"p99 {quantile(a, .99):.2f} within_1s {sum(x <= 1 for x in a) / len(a):.2f}")


for arg in sys.argv[1:]:
    run(arg.rstrip("/"))
