#!/usr/bin/env python3
"""site-window.py RUN_DIR... - sched/saturn's cycle figures of a site-load.sh
run (its meta.env and the slurmctld.log site-bench.sh copies into the run
folder), for the load itself (T0 to T_LOAD: the events of the mix) and for
the rest (the drain, and with SL_END=cancel the cancellation of every job
left, which loads the host far more than the mix). site-load.sh's own
figures cover the whole run. Per window: cycles with Saturn tasks, the most
tasks in one, and p50 / p99 / max in ms of the snapshot under the read
locks (wall, and the thread's CPU time), the apply under the write locks
(wall, CPU), the plan (gather + saturn_cycle_run), the state (serialised
and handed to the state writer; in logs of a plugin without that thread,
written), the whole cycle and the state writer's writes; under either scheduler, the latency of sbatch, squeue
(root, all jobs) and a user's squeue in ms (lat.csv, calls that
succeeded). Used in doc/benchmarks-site.md."""
import datetime
import re
import sys

CYCLE = re.compile(
    r"\[(\S+)\] debug:  sched/saturn: cycle: (\d+) Saturn task\(s\), snapshot ([\d.]+) ms "
    r"under read locks \(waited ([\d.]+) ms\), plan ([\d.]+) ms, apply ([\d.]+) ms under "
    r"write locks, \d+ released; thread CPU under the locks: snapshot ([\d.]+) ms, apply "
    r"([\d.]+) ms; gather after the snapshot [\d.]+ ms, state.json \d+ bytes (?:written|serialised) in "
    r"([\d.]+) ms, cycle ([\d.]+) ms in all(?:, ([\d.]+) ms of it on the CPU)?")
# the state writer's thread (a plugin that wrote in the agent thread has
# none: its cycle lines' "state" field is the write)
WRITE = re.compile(r"\[(\S+)\] debug:  sched/saturn: state.json: \d+ bytes written in ([\d.]+) ms")
FIELDS = ["snapshot", "snapshot_cpu", "apply", "apply_cpu", "plan", "state", "cycle", "cycle_cpu"]


def quantile(a, p):
    return a[min(len(a) - 1, int(p * len(a)))] if a else float("nan")


def meta(d):
    m = {}
    with open(d + "/meta.env") as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            m[k] = v.strip("'")
    return m


def run(d):
    m = meta(d)
    t0, t_load = int(m["T0"]) / 1e6, int(m["T_LOAD"]) / 1e6
    win = {"load": [], "after": []}
    writes = {"load": [], "after": []}
    with open(d + "/slurmctld.log", errors="replace") as f:
        for line in f:
            c = CYCLE.match(line)
            wr = None if c else WRITE.match(line)
            if not c and not wr:
                continue
            t = datetime.datetime.strptime((c or wr).group(1), "%Y-%m-%dT%H:%M:%S.%f")
            t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
            if t < t0:
                continue
            if wr:
                writes["load" if t <= t_load else "after"].append(float(wr.group(2)))
                continue
            v = [float(c.group(i) or "nan") for i in (3, 7, 6, 8, 5, 9, 10, 11)]
            win["load" if t <= t_load else "after"].append((int(c.group(2)), v))
    lat = {"load": {}, "after": {}}
    with open(d + "/lat.csv") as f:
        for line in f:
            w = line.strip().split(",")
            if len(w) < 4 or w[3] != "0" or not w[1].isdigit():
                continue
            t = int(w[1])
            if t < t0:
                continue
            lat["load" if t <= t_load else "after"].setdefault(w[0], []).append(int(w[2]) / 1e3)
    for w in ("load", "after"):
        out = [f"{d} {w}: latency ms p50/p99/max (n)"]
        for op in ("sbatch", "squeue", "squeue_user"):
            a = sorted(lat[w].get(op, []))
            if a:
                out.append(f"{op} {quantile(a, .5):.1f}/{quantile(a, .99):.1f}/{a[-1]:.1f} ({len(a)})")
        if len(out) > 1:
            print("; ".join(out))
    for w, rows in win.items():
        if not rows:
            continue
        out = [f"{d} {w}: cycles {len(rows)}, tasks max {max(r[0] for r in rows)}"]
        for i, name in enumerate(FIELDS):
            a = sorted(r[1][i] for r in rows if r[1][i] == r[1][i])
            if not a:
                continue
            out.append(f"{name} {quantile(a, .5):.1f}/{quantile(a, .99):.1f}/{a[-1]:.1f}")
        over = sum(r[1][6] > float(m.get("INTERVAL", "10")) * 1000 for r in rows)
        out.append(f"cycles over saturn_interval {over}")
        a = sorted(writes[w])
        if a:
            out.append(f"state writer {quantile(a, .5):.1f}/{quantile(a, .99):.1f}/{a[-1]:.1f} ({len(a)})")
        print("; ".join(out))


for arg in sys.argv[1:]:
    run(arg.rstrip("/"))
