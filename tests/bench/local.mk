# tests/bench/local.mk - planner benchmark (not part of `make check`).
# Run: tests/bench/run-bench.sh (from the build folder) or
#      tests/bench/saturn-bench --help. See bench/README.md.
noinst_PROGRAMS += bench/saturn-bench
bench_saturn_bench_SOURCES = bench/saturn-bench.c
bench_saturn_bench_CPPFLAGS = $(UNIT_CPPFLAGS)
bench_saturn_bench_CFLAGS = $(SATURN_CFLAGS)
bench_saturn_bench_LDADD = $(top_builddir)/lib/libsaturn.la
EXTRA_DIST += bench/README.md bench/run-bench.sh
