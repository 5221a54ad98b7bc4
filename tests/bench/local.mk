# tests/bench/local.mk - planner benchmark (not part of `make check`).
# Run from the build folder: $(srcdir)/bench/run-bench.sh, or
# tests/bench/saturn-bench --family NAME --runs N. See bench/README.md.
noinst_PROGRAMS += bench/saturn-bench
bench_saturn_bench_SOURCES = bench/saturn-bench.c bench/bench_model.h bench/bench_real.h
# the real-data families' tables (bench/data/README.md)
bench_saturn_bench_CPPFLAGS = $(UNIT_CPPFLAGS) -DBENCH_DATA_DIR='"$(abs_srcdir)/bench/data"'
bench_saturn_bench_CFLAGS = $(SATURN_CFLAGS)
bench_saturn_bench_LDADD = $(top_builddir)/lib/libsaturn-ctl.la
# the gap on real speeds, exactly: small batches drawn from a real-data
# instance, optimum by enumeration vs the bound and the plan (doc/benchmarks.md)
# tests/bench/gavel-small-bench FILE [rounds] [gpus] [tasks] [release_s] [evals]
noinst_PROGRAMS += bench/gavel-small-bench
bench_gavel_small_bench_SOURCES = bench/gavel-small-bench.c
bench_gavel_small_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_gavel_small_bench_CFLAGS = $(SATURN_CFLAGS)
bench_gavel_small_bench_LDADD = $(top_builddir)/lib/libsaturn-ctl.la -lm
EXTRA_DIST += bench/README.md bench/run-bench.sh mutate.sh bench/fair-cluster.sh bench/multi-cluster.sh
EXTRA_DIST += bench/class-cluster.sh
EXTRA_DIST += bench/data/README.md bench/data/gavel-throughputs.csv bench/data/gavel-extract.py \
	bench/data/gavel-msr-11cb48.tsv bench/data/gavel-msr-6214e9.tsv

# formats and validator timing at the size limit (doc/benchmarks.md)
noinst_PROGRAMS += bench/bench-formats
bench_bench_formats_SOURCES = bench/bench-formats.c
bench_bench_formats_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_bench_formats_CFLAGS = $(SATURN_CFLAGS)
bench_bench_formats_LDADD = $(top_builddir)/lib/libsaturn-ctl.la

# what re-measuring predicted options buys (doc/benchmarks.md, "Profiler"):
# tests/bench/measure-bench [noise] [runs] [budget_s] [bias] [seed]
noinst_PROGRAMS += bench/measure-bench
bench_measure_bench_SOURCES = bench/measure-bench.c
bench_measure_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_measure_bench_CFLAGS = $(SATURN_CFLAGS)
bench_measure_bench_LDADD = $(top_builddir)/lib/libsaturn-job.la -lm

# whether runtime feedback pays (doc/benchmarks.md, "Runtime feedback"):
# tests/bench/feedback-bench [seeds] [budget_s] [first_seed] [lo] [hi] [per_model]
# tests/bench/feedback-bench mixed|scaling [budget_s] [seeds]   (slurm-bench.sh's sweeps)
noinst_PROGRAMS += bench/feedback-bench
bench_feedback_bench_SOURCES = bench/feedback-bench.c
bench_feedback_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_feedback_bench_CFLAGS = $(SATURN_CFLAGS)
bench_feedback_bench_LDADD = $(top_builddir)/lib/libsaturn-ctl.la -lm

# how two users' batches share the cluster (doc/benchmarks.md, "Sharing
# the cluster between users"):
# tests/bench/fair-bench [seeds] [time_limit_s] [t_B_s] [a_tasks] [b_tasks] [first_seed]
noinst_PROGRAMS += bench/fair-bench
bench_fair_bench_SOURCES = bench/fair-bench.c bench/bench_model.h
bench_fair_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_fair_bench_CFLAGS = $(SATURN_CFLAGS)
bench_fair_bench_LDADD = $(top_builddir)/lib/libsaturn-ctl.la -lm

# execution fidelity on the one-machine cluster (doc/benchmarks.md,
# "Execution fidelity"; root): $(srcdir)/bench/fidelity-bench.sh BUILD
EXTRA_DIST += bench/fidelity-bench.sh

# slurmctld's memory under a batch-name flood (doc/security.md, "Bounded
# resources"; root): sh $(srcdir)/bench/flood-rss.sh [PLUGIN_DIR]
EXTRA_DIST += bench/flood-rss.sh

# the restart's own gain: the same batch from one forced first plan with and
# without --saturn-reconfigure (doc/benchmarks.md, "Reconfiguration: the
# restart's own gain"; root): $(srcdir)/bench/reconfig-bench.sh BUILD
EXTRA_DIST += bench/reconfig-bench.sh bench/reconfig-report.py

# two-class sweep: per-class plans against uniform requests (doc/benchmarks.md)
noinst_PROGRAMS += bench/class-bench
bench_class_bench_SOURCES = bench/class-bench.c bench/bench_model.h
bench_class_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_class_bench_CFLAGS = $(SATURN_CFLAGS)
bench_class_bench_LDADD = $(top_builddir)/lib/libsaturn-ctl.la

# tests/bench/multi-bench [seeds] [time_limit_s] [first_seed] [w1 w2 w3]
noinst_PROGRAMS += bench/multi-bench
bench_multi_bench_SOURCES = bench/multi-bench.c bench/bench_model.h
bench_multi_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_multi_bench_CFLAGS = $(SATURN_CFLAGS)
bench_multi_bench_LDADD = $(top_builddir)/lib/libsaturn-ctl.la -lm

# tests/bench/internode-bench: multi-node options predicted from an
# inter-node bandwidth against their measured truth (doc/benchmarks.md).
noinst_PROGRAMS += bench/internode-bench
bench_internode_bench_SOURCES = bench/internode-bench.c bench/bench_model.h
bench_internode_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_internode_bench_CFLAGS = $(SATURN_CFLAGS)
bench_internode_bench_LDADD = $(top_builddir)/lib/libsaturn-job.la -lm

# site scale on the one-machine cluster (doc/benchmarks-site.md; root):
# $(srcdir)/bench/site-bench.sh BUILD, or site-load.sh against a running cluster
EXTRA_DIST += bench/site-load.sh bench/site-lib.sh bench/site-timed.sh bench/site-bench.sh \
	bench/site-plot.sh bench/site-handover.py

# a GPU cluster beyond one machine, by simulation: a Philly-derived trace
# with Gavel's measured speeds through EASY backfill and through the
# planner (doc/benchmarks-site.md, "Simulation beyond one machine"):
# tests/bench/saturn-sim [--jobs N] [--gpus N] [--compress X] ..., --mixed
noinst_PROGRAMS += bench/saturn-sim
bench_saturn_sim_SOURCES = bench/saturn-sim.c bench/sim-sched.c bench/sim-report.c \
	bench/sim.h bench/sim_report.h
bench_saturn_sim_CPPFLAGS = $(UNIT_CPPFLAGS) -DBENCH_DATA_DIR='"$(abs_srcdir)/bench/data"'
bench_saturn_sim_CFLAGS = $(SATURN_CFLAGS)
bench_saturn_sim_LDADD = $(top_builddir)/lib/libsaturn-ctl.la -lm
# saturn-sim's smoke test (a few seconds): both schedulers on 50 jobs, the
# simulator's own checks, and the planner below backfill on one-GPU requests of jobs that scale
TESTS += bench/sim-smoke.sh
EXTRA_DIST += bench/sim-smoke.sh

# the planner at a site's scale (issue 22; doc/benchmarks-site.md):
# tests/bench/site-plan-bench NTASKS [NODES [BUDGET_S [SEED [CLASSES]]]] [--write FILE]
noinst_PROGRAMS += bench/site-plan-bench
bench_site_plan_bench_SOURCES = bench/site-plan-bench.c bench/site_problem.h
bench_site_plan_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_site_plan_bench_CFLAGS = $(SATURN_CFLAGS)
bench_site_plan_bench_LDADD = $(top_builddir)/lib/libsaturn-ctl.la -lm
