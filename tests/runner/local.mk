# tests/runner/local.mk - the job side: technique library, plugins, sweep and
# fit, emulator model, progress protocol, topology; shell tests of
# saturn-run, saturn-emulate and saturn-profile.
if HAVE_CHECK
check_PROGRAMS += runner/test_technique
TESTS += runner/test_technique
runner_test_technique_SOURCES = runner/test_technique.c
runner_test_technique_CPPFLAGS = $(UNIT_CPPFLAGS)
runner_test_technique_CFLAGS = $(UNIT_CFLAGS)
runner_test_technique_LDADD = $(UNIT_JOB_LDADD)
endif

# the test technique plugin: a shared object, never installed
check_LTLIBRARIES += runner/test_plugin.la
runner_test_plugin_la_SOURCES = runner/test_plugin.c
runner_test_plugin_la_CPPFLAGS = -I$(top_srcdir)/lib/model -I$(top_srcdir)/lib/planner -I$(top_srcdir)/lib/sched -I$(top_srcdir)/lib/job
runner_test_plugin_la_CFLAGS = $(SATURN_CFLAGS)
runner_test_plugin_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

TESTS += runner/saturn-run.sh runner/saturn-run-ranks.sh runner/saturn-emulate.sh runner/saturn-profile.sh \
	runner/topology-shared.sh runner/cuda-probe.sh runner/pytorch-train.sh runner/techniques-cli.sh runner/cluster-job.sh runner/fuzz-jobside.sh \
	runner/profile-cache.sh runner/profile-measure.sh runner/profile-measure-nodes.sh runner/bad-numbers.sh runner/profile-internode.sh
EXTRA_DIST += runner/fuzz_jobside.c runner/common.sh runner/saturn-run.sh runner/saturn-run-ranks.sh runner/saturn-emulate.sh runner/saturn-profile.sh \
	runner/topology-shared.sh runner/cuda-probe.sh runner/pytorch-train.sh runner/techniques-cli.sh runner/cluster-job.sh runner/fuzz-jobside.sh \
	runner/profile-cache.sh runner/profile-measure.sh runner/profile-measure-nodes.sh runner/bad-numbers.sh runner/profile-internode.sh

# the GEMM probe and contrib/gpu/gpu-check.sh --dry-run (CPU stand-in)
TESTS += runner/gemm-probe.sh runner/gpu-check.sh
EXTRA_DIST += runner/gemm-probe.sh runner/gpu-check.sh

# benchmark (built by make, not run by make check): tests/bench/profile-bench
noinst_PROGRAMS += bench/profile-bench
bench_profile_bench_SOURCES = bench/profile-bench.c bench/profile_truth.h
bench_profile_bench_CPPFLAGS = -I$(top_srcdir)/lib/model -I$(top_srcdir)/lib/planner -I$(top_srcdir)/lib/sched -I$(top_srcdir)/lib/job
bench_profile_bench_CFLAGS = $(SATURN_CFLAGS)
bench_profile_bench_LDADD = $(top_builddir)/lib/libsaturn-job.la -lm
# benchmark script (not run by make check): cold versus warm profile cache
EXTRA_DIST += bench/profile-cache-bench.sh
