# tests/fuzz/local.mk - libFuzzer harnesses of the JSON parsers and of the
# build path of sched/saturn (fuzz_build.c), built by
# run-fuzz.sh with clang and run for FUZZ_SECONDS (default 20) each; the
# test is skipped (77) where clang has no libFuzzer runtime.
TESTS += fuzz/run-fuzz.sh
EXTRA_DIST += \
	fuzz/run-fuzz.sh \
	fuzz/json.dict \
	fuzz/fuzz_problem.c \
	fuzz/fuzz_plan.c \
	fuzz/fuzz_profile.c \
	fuzz/fuzz_validate.c \
	fuzz/fuzz_build.c \
	fuzz/fuzz_text.c \
	fuzz/fuzz_cycle.c \
	fuzz/corpus
