#!/usr/bin/env python3
"""profile2problem.py - a saturn-profile/1 file as a saturn-problem/1 for
`saturn plan` on a cluster of NODES x GPUS, to replay a sweep offline.

  profile2problem.py PROFILE [--nodes N] [--gpus G] [--scale SIG=F ...]
  profile2problem.py PROFILE --feasible [--gpus G]

Every task of the profile becomes one task (id "task_ID") with the
profile's batches and its options that ran (status other than "oom" and
with a sec_per_batch); --scale multiplies a signature's sec_per_batch by F
(the true speed of a benchmark's tasks, for the clairvoyant plan).
--feasible prints instead the uniform GPU requests (1, 2, 4, 8 up to G)
every task can run with: each task has an option at exactly that count.
"""
import argparse
import json
import sys


def task_ids(spec):
    ids = []
    for part in str(spec).split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            ids.extend(range(int(a), int(b) + 1))
        elif part.strip():
            ids.append(int(part))
    return ids


def usable(opt):
    return opt.get("status") != "oom" and opt.get("sec_per_batch") is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--scale", action="append", default=[])
    ap.add_argument("--feasible", action="store_true")
    a = ap.parse_args()
    with open(a.profile) as f:
        prof = json.load(f)
    if a.feasible:
        counts = [n for n in (1, 2, 4, 8) if n <= a.gpus and all(
            any(usable(o) and o["gpus"] == n for o in t["options"]) for t in prof["tasks"])]
        print(" ".join(str(n) for n in counts))
        return 0
    scale = {}
    for s in a.scale:
        sig, f = s.rsplit("=", 1)
        scale[sig] = float(f)
    tasks = []
    for t in prof["tasks"]:
        f = scale.get(t["signature"], 1.0)
        opts = [{"technique": o["technique"], "gpus": o["gpus"],
                 "sec_per_batch": round(o["sec_per_batch"] * f, 6)}
                for o in t["options"] if usable(o) and o["gpus"] <= a.gpus]
        for i in task_ids(t["task_ids"]):
            tasks.append({"id": "task_%d" % i, "comment": t["signature"],
                          "batches": t["batches"], "options": opts})
    tasks.sort(key=lambda x: int(x["id"][5:]))
    json.dump({"format": "saturn-problem/1",
               "nodes": [{"name": "n%d" % (n + 1), "gpus": a.gpus} for n in range(a.nodes)],
               "tasks": tasks}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
