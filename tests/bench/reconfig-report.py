#!/usr/bin/env python3
"""reconfig-report.py - the report of reconfig-bench.sh.

  reconfig-report.py WORK_DIR RUNS

Reads, for each run R and variant V (keep: without --saturn-reconfigure,
rc: with it), WORK_DIR/R.V.meta (t0, the other job's id, the array's id),
R.V.log (the tasks' start and end lines) and R.V.ctld (slurmctld's log
during the run), and prints per run: both makespans, whether the first
plans are identical, each restart's expected and realised gain, the
latency from the GPUs' release to the resumed start, and the decisions
that restarted nothing though the restart would have shortened the plan.
Ends with the means over the runs. Times are seconds from the submission
of the batch.
"""
import datetime
import re
import statistics
import sys

TS = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\] (.*)$")


def ts(s):
    return datetime.datetime.fromisoformat(s).timestamp()


def read_meta(path):
    out = {}
    with open(path) as f:
        for w in f.read().split():
            k, v = w.split("=", 1)
            out[k] = v
    out["t0"] = float(out["t0"])
    return out


def read_tasks(path):
    starts, ends = [], []
    with open(path) as f:
        for line in f:
            kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            kv["at"] = float(kv["at"])
            kv["task"] = int(kv["task"])
            kv["restarts"] = int(kv["restarts"])
            (starts if line.startswith("start ") else ends).append(kv)
    return starts, ends


def read_ctld(path, meta):
    """The events of one run from slurmctld's log."""
    ev = {"plans": [], "released": [], "restarts": [], "exit75": [], "requeued": [],
          "reheld": [], "rejected": [], "freed": None, "realised": 0, "unrequeued": 0}
    blk = meta["blocker"]
    with open(path, errors="replace") as f:
        for line in f:
            m = TS.match(line.rstrip("\n"))
            if not m:
                continue
            t, msg = ts(m.group(1)), m.group(2)
            if "sched/saturn: plan p" in msg:
                p = re.search(r"plan (p\S+): (.*)$", msg)
                ev["plans"].append((t, p.group(1), p.group(2)))
            elif "sched/saturn: released JobId=" in msg:
                p = re.search(r"released JobId=\d+_(\d+)\(\d+\) .*?: (\d+) GPU\(s\) on (\S+), "
                              r"technique (\S+), plan (\S+),", msg)
                if p:
                    ev["released"].append((t, int(p.group(1)), int(p.group(2)), p.group(3),
                                           p.group(4), p.group(5)))
            elif "sched/saturn: reconfiguring JobId=" in msg:
                p = re.search(r"JobId=(\d+) \(task (\d+) of batch \S+, restart (\d+)\): (.*) from "
                              r"~(-?\d+)s; task ends ~(-?\d+)s -> ~(-?\d+)s; makespan (-?\d+)s -> "
                              r"(-?\d+)s: expected gain (-?\d+)s", msg)
                if p:
                    ev["restarts"].append({
                        "at": t, "job": int(p.group(1)), "task": int(p.group(2)),
                        "n": int(p.group(3)), "what": p.group(4), "start": float(p.group(5)),
                        "old_end": float(p.group(6)), "new_end": float(p.group(7)),
                        "old_ms": float(p.group(8)), "new_ms": float(p.group(9)),
                        "gain": float(p.group(10))})
            elif "WEXITSTATUS 75" in msg:
                p = re.search(r"JobId=\d+_(\d+)\(", msg)
                if p:
                    ev["exit75"].append((t, int(p.group(1))))
            elif msg.startswith("Requeuing JobId="):
                p = re.search(r"JobId=\d+_(\d+)\(", msg)
                if p:
                    ev["requeued"].append((t, int(p.group(1))))
            elif "sched/saturn: re-held JobId=" in msg:
                p = re.search(r"JobId=\d+_(\d+)\(", msg)
                if p:
                    ev["reheld"].append((t, int(p.group(1))))
            elif "sched/saturn: reconfigured JobId=" in msg:
                ev["realised"] += 1
            elif "ended without a requeue after the reconfiguration signal" in msg:
                ev["unrequeued"] += 1
            elif "no reconfiguration (" in msg:
                p = re.search(r"no reconfiguration \((\d+) candidate\(s\)\): (.*)$", msg)
                if p:
                    ev["rejected"].append((t, int(p.group(1)), p.group(2)))
            elif re.search(r"_job_complete: JobId=%s done" % re.escape(blk), msg):
                ev["freed"] = ev["freed"] or t
    return ev


def first_plan(ev):
    """(plan line, {task: (technique, gpus, node)}) of the first plan."""
    if not ev["plans"]:
        return None, {}
    _, pid, text = ev["plans"][0]
    text = re.sub(r", solve [0-9.]+s", "", text)  # the solve time is the machine's
    tasks = {}
    for _, task, gpus, node, tech, plan in ev["released"]:
        if plan == pid and task not in tasks:
            tasks[task] = (tech, gpus, node)
    return text, tasks


def rejected_gain(why):
    """The makespan a rejected decision would have saved (s), or None."""
    m = re.search(r"bound (\d+)s with \d+ task\(s\) restarted, (\d+)s now", why)
    if m:
        return float(m.group(2)) - float(m.group(1)), "at most (bound)"
    m = re.search(r"makespan (\d+)s with \d+ task\(s\) restarted, (\d+)s now", why)
    if m:
        return float(m.group(2)) - float(m.group(1)), "planned"
    m = re.search(r"gain (-?\d+)s below saturn_reconfigure_margin", why)
    if m:
        return float(m.group(1)), "planned"
    return None, ""


def fmt(x):
    return "-" if x is None else "%.1f" % x


def main():
    work, runs = sys.argv[1], int(sys.argv[2])
    summary = {"keep": [], "rc": [], "same": 0, "restarts": 0, "exp": [], "real": [],
               "exp_ms": [], "lat_signal": [], "lat_start": [], "again": 0}
    print("== reconfiguration alone: the same batch from the same first plan, without "
          "(keep) and with (rc) --saturn-reconfigure; seconds from the submission")
    for r in range(1, runs + 1):
        d = {}
        for v in ("keep", "rc"):
            meta = read_meta("%s/%d.%s.meta" % (work, r, v))
            starts, ends = read_tasks("%s/%d.%s.log" % (work, r, v))
            ev = read_ctld("%s/%d.%s.ctld" % (work, r, v), meta)
            t0 = meta["t0"]
            end = {e["task"]: e["at"] - t0 for e in ends}
            d[v] = {"meta": meta, "starts": starts, "ends": ends, "ev": ev, "t0": t0,
                    "end": end, "ms": max(end.values()) if end else None,
                    "plan": first_plan(ev)}
            summary[v].append(d[v]["ms"])
        k, c = d["keep"], d["rc"]
        print("\nrun %d (load %s / %s): makespan keep %s s, rc %s s: reconfiguration saved %s s"
              % (r, k["meta"]["load"], c["meta"]["load"], fmt(k["ms"]), fmt(c["ms"]),
                 fmt(k["ms"] - c["ms"] if k["ms"] and c["ms"] else None)))
        (kl, kt), (cl, ct) = k["plan"], c["plan"]
        same_line = kl == cl
        same_opt = all(kt.get(i, (None,))[:2] == ct.get(i, (None,))[:2] for i in range(4))
        same_node = kt == ct
        if same_line and same_opt and len(kt) == 4:
            summary["same"] += 1
        print("  first plan keep: %s" % kl)
        print("  first plan rc:   %s" % cl)
        print("  per task (technique, GPUs, node) keep %s" % sorted(kt.items()))
        print("  per task (technique, GPUs, node) rc   %s" % sorted(ct.items()))
        print("  first plans identical: %s" % (
            "yes" if same_line and same_node and len(kt) == 4 else
            "yes up to which of the two identical nodes a task went to" if same_line and same_opt
            and len(kt) == 4 else "NO: the comparison below is not of the reconfiguration alone"))
        ev = c["ev"]
        rs = ev["restarts"]
        summary["restarts"] += len(rs)
        print("  restarts: %d; the plugin's end lines: %d with a realised gain, %d \"ended "
              "without a requeue\"" % (len(rs), ev["realised"], ev["unrequeued"]))
        for x in rs:
            t = x["task"]
            dec = x["at"] - c["t0"]
            keep_end = k["end"].get(t)
            rc_end = c["end"].get(t)
            exp = x["old_end"] - x["new_end"]
            real = keep_end - rc_end if keep_end is not None and rc_end is not None else None
            if x["n"] == 1:
                summary["exp"].append(exp)
                if real is not None:
                    summary["real"].append(real)
            else:
                summary["again"] += 1
            print("   task %d at %.1f s (its restart %d): %s" % (t, dec, x["n"], x["what"]))
            print("     task's end: expected %.1f -> %.1f (gain %.1f); realised: %s without, "
                  "%s with (gain %s); makespan expected %.0f -> %.0f (gain %.0f)"
                  % (dec + x["old_end"], dec + x["new_end"], exp, fmt(keep_end), fmt(rc_end),
                     fmt(real), dec + x["old_ms"], dec + x["new_ms"], x["gain"]))
            resumed = [s["at"] - c["t0"] for s in c["starts"]
                       if s["task"] == t and s["restarts"] >= x["n"]]
            rel = [a - c["t0"] for a, task, *_ in ev["released"] if task == t and a >= x["at"]]

            def after(name):
                got = [a - c["t0"] for a, task in ev[name] if task == t and a >= x["at"]]
                return got[0] if got else None
            chain = [("GPUs freed", ev["freed"] - c["t0"] if ev["freed"] and x["n"] == 1
                      else None),
                     ("signal", dec), ("exit 75", after("exit75")),
                     ("requeued", after("requeued")), ("re-held", after("reheld")),
                     ("released", rel[0] if rel else None),
                     ("resumed start", resumed[0] if resumed else None)]
            print("     latency: " + ", ".join("%s %s" % (n, fmt(v)) for n, v in chain))
            if ev["freed"] and x["n"] == 1:
                summary["lat_signal"].append(dec - (ev["freed"] - c["t0"]))
                if resumed:
                    summary["lat_start"].append(resumed[0] - (ev["freed"] - c["t0"]))
        if rs:
            summary["exp_ms"].append(rs[0]["gain"])
        # decisions that restarted nothing: distinct reasons, those with a gain first
        seen = {}
        for t, n, why in ev["rejected"]:
            key = re.sub(r"-?\d+(\.\d+)?", "N", why)
            g, kind = rejected_gain(why)
            e = seen.setdefault(key, {"n": 0, "first": t - c["t0"], "best": None, "why": why,
                                      "kind": kind})
            e["n"] += 1
            if g is not None and (e["best"] is None or g > e["best"]):
                e["best"], e["why"] = g, why
        pays = [e for e in seen.values() if e["best"] is not None and e["best"] > 0]
        print("  decisions without a restart: %d (%d kind(s)); that would have shortened the "
              "plan: %d kind(s)" % (len(ev["rejected"]), len(seen), len(pays)))
        for e in sorted(seen.values(), key=lambda e: e["first"]):
            print("   x%d from %.1f s%s: %s" % (
                e["n"], e["first"], "" if e["best"] is None else
                " (gain %s %.0f s)" % (e["kind"], e["best"]), e["why"]))
    print("\n== over %d run(s)" % runs)
    for v in ("keep", "rc"):
        ms = [x for x in summary[v] if x is not None]
        print("  makespan %s: %s s (mean %.1f)" % (v, " ".join("%.1f" % x for x in ms),
                                                 statistics.mean(ms) if ms else 0))
    gains = [a - b for a, b in zip(summary["keep"], summary["rc"]) if a and b]
    print("  saved by the reconfiguration: %s s (mean %.1f); expected (makespan, at the decision):"
          " %s" % (" ".join("%.1f" % g for g in gains), statistics.mean(gains) if gains else 0,
                   " ".join("%.0f" % g for g in summary["exp_ms"])))
    print("  first plans identical in %d of %d run(s); restarts %d (of a task restarted "
          "before: %d)" % (summary["same"], runs, summary["restarts"], summary["again"]))
    if summary["exp"]:
        print("  per first restart: expected task gain mean %.1f s, realised mean %s s"
              % (statistics.mean(summary["exp"]),
                 "%.1f" % statistics.mean(summary["real"]) if summary["real"] else "-"))
    if summary["lat_signal"]:
        print("  GPUs freed -> signal: median %.2f s (max %.2f); -> resumed start: median %.2f s"
              % (statistics.median(summary["lat_signal"]), max(summary["lat_signal"]),
                 statistics.median(summary["lat_start"]) if summary["lat_start"] else -1))


if __name__ == "__main__":
    main()
