#!/usr/bin/env python3
# gavel-extract.py - write gavel-throughputs.csv from Gavel's measured
# throughput table (stanford-futuredata/gavel, scheduler/
# simulation_throughputs.json; provenance in README.md).
#
# Keeps only the isolated throughput of each job (its "null" entry: no
# other job packed on its GPUs) for every worker type, job type and scale
# factor, unchanged (Python's shortest exact repr of each number): zero
# entries (the job did not run there) and the table's quirks (superlinear
# speed-ups, slower at more GPUs) included.
#
# Usage: gavel-extract.py simulation_throughputs.json > gavel-throughputs.csv
import ast
import json
import sys

table = json.load(open(sys.argv[1]))
print("worker_type,job_type,scale_factor,steps_per_s")
for worker in sorted(table):
    for key in sorted(table[worker], key=ast.literal_eval):
        job_type, scale = ast.literal_eval(key)
        print('%s,"%s",%d,%r' % (worker, job_type, scale,
                                 table[worker][key]["null"]))
