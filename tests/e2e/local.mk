# tests/e2e/local.mk - end-to-end tests on a private one-machine Slurm
# cluster (scripts/cluster.sh), one cluster per test, each on its own port
# slot so they run in parallel. Need root and the built plugins (configure
# --with-slurm-source); skipped (77) otherwise. Helpers: e2e/lib.sh.
TESTS += \
	e2e/slurm-source.sh \
	e2e/plugins-load.sh \
	e2e/bad-names.sh \
	e2e/held-array.sh \
	e2e/other-jobs.sh \
	e2e/raw-tag.sh \
	e2e/cluster-stop.sh
EXTRA_DIST += \
	e2e/spank_rawtag.c \
	e2e/lib.sh \
	e2e/slurm-version.sh \
	e2e/slurm-source.sh \
	e2e/plugins-load.sh \
	e2e/bad-names.sh \
	e2e/held-array.sh \
	e2e/other-jobs.sh \
	e2e/raw-tag.sh \
	e2e/cluster-stop.sh

# A test-only SPANK plugin that sets SATURN_BATCH unchecked (raw-tag.sh).
if HAVE_SPANK
check_LTLIBRARIES += e2e/spank_rawtag.la
e2e_spank_rawtag_la_SOURCES = e2e/spank_rawtag.c
e2e_spank_rawtag_la_CFLAGS = $(SATURN_CFLAGS)
e2e_spank_rawtag_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere -Wl,-z,now
endif

# Accounting on the one-machine cluster (cluster.sh SATURN_ACCOUNTING=1:
# slurmdbd and MariaDB): the plan record of every task in sacct; the sweep
# example of contrib/sweeps/ as a Saturn batch; a user's association
# limits (GrpTRES=gres/gpu, MaxJobs) in every plan; fair share in the
# order of the users' batches.
TESTS += \
	e2e/sched-accounting.sh \
	e2e/sched-limits.sh \
	e2e/sched-fairshare.sh \
	e2e/sweep-example.sh
EXTRA_DIST += \
	e2e/sched-accounting.sh \
	e2e/sched-limits.sh \
	e2e/sched-fairshare.sh \
	e2e/sweep-example.sh

# What the multi-user sched/saturn tests share.
EXTRA_DIST += e2e/mu-lib.sh

# A predicted multi-node option measured on its nodes before a task runs
# on it (saturn_measure_predicted, #12).
TESTS += e2e/sched-measure-nodes.sh
EXTRA_DIST += e2e/sched-measure-nodes.sh

# Site load at a small scale (tests/bench/site-load.sh on 8 nodes, ~100
# Saturn tasks beside ordinary jobs, cancellations, node events and a
# slurmctld restart): nothing lost or run twice, cycles and lock holds in
# bounds (issue 22; the full benchmark is tests/bench/site-bench.sh).
TESTS += e2e/site-load-small.sh
EXTRA_DIST += e2e/site-load-small.sh
