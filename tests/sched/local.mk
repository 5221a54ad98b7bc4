# tests/sched/local.mk - sched/saturn: the Slurm-free logic (unit) and the
# end-to-end tests on a one-machine cluster (tests/e2e/sched-*.sh).
if HAVE_CHECK
check_PROGRAMS += sched/test_sched
TESTS += sched/test_sched
sched_test_sched_SOURCES = sched/test_sched.c
sched_test_sched_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_sched_CFLAGS = $(UNIT_CFLAGS)
sched_test_sched_LDADD = $(UNIT_LDADD)

# Tasks on several nodes in the controller's half (sched_core.h).
check_PROGRAMS += sched/test_sched_multinode
TESTS += sched/test_sched_multinode
sched_test_sched_multinode_SOURCES = sched/test_sched_multinode.c
sched_test_sched_multinode_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_sched_multinode_CFLAGS = $(UNIT_CFLAGS)
sched_test_sched_multinode_LDADD = $(UNIT_LDADD)

# Hostile users, round two (doc/security.md, "Attacks tried").
check_PROGRAMS += sched/test_hostile
TESTS += sched/test_hostile
sched_test_hostile_SOURCES = sched/test_hostile.c
sched_test_hostile_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_hostile_CFLAGS = $(UNIT_CFLAGS)
sched_test_hostile_LDADD = $(UNIT_LDADD)

# Bounded resources (lib/sched/budget.c): profile cache budget, batches
# with tasks, companion jobs per user, names of the files kept per batch.
check_PROGRAMS += sched/test_budget
TESTS += sched/test_budget
sched_test_budget_SOURCES = sched/test_budget.c
sched_test_budget_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_budget_CFLAGS = $(UNIT_CFLAGS)
sched_test_budget_LDADD = $(UNIT_LDADD)

# PrivateData: the per-user views of the state (lib/sched/state_view.c).
check_PROGRAMS += sched/test_state_view
TESTS += sched/test_state_view
sched_test_state_view_SOURCES = sched/test_state_view.c
sched_test_state_view_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_state_view_CFLAGS = $(UNIT_CFLAGS)
sched_test_state_view_LDADD = $(UNIT_LDADD)
endif

# Runtime feedback (lib/sched/feedback.c) and how the build and the state use it.
if HAVE_CHECK
check_PROGRAMS += sched/test_feedback
TESTS += sched/test_feedback
sched_test_feedback_SOURCES = sched/test_feedback.c
sched_test_feedback_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_feedback_CFLAGS = $(UNIT_CFLAGS)
sched_test_feedback_LDADD = $(UNIT_LDADD)
endif

# The decisions about each batch's companion jobs (lib/batch_policy.c).
if HAVE_CHECK
check_PROGRAMS += sched/test_policy
TESTS += sched/test_policy
sched_test_policy_SOURCES = sched/test_policy.c
sched_test_policy_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_policy_CFLAGS = $(UNIT_CFLAGS)
sched_test_policy_LDADD = $(UNIT_LDADD)
endif

# The table of saturn_* keys (lib/sched/sched_settings.c) and sched_saturn(8).
if HAVE_CHECK
check_PROGRAMS += sched/test_settings
TESTS += sched/test_settings
sched_test_settings_SOURCES = sched/test_settings.c
sched_test_settings_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_settings_CFLAGS = $(UNIT_CFLAGS)
sched_test_settings_LDADD = $(UNIT_LDADD)
endif

# Reconfiguration of running tasks (lib/sched/reconfig.c).
if HAVE_CHECK
check_PROGRAMS += sched/test_reconfig
TESTS += sched/test_reconfig
sched_test_reconfig_SOURCES = sched/test_reconfig.c
sched_test_reconfig_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_reconfig_CFLAGS = $(UNIT_CFLAGS)
sched_test_reconfig_LDADD = $(UNIT_LDADD)
endif

# End-to-end on a one-machine cluster (root, Slurm and the built plugins;
# skipped with 77 otherwise). Each test uses its own port slot from 18000.
TESTS += \
	sched/plugin-deps.sh \
	sched/plugin-graph.sh \
	sched/replay-fixtures.sh \
	sched/status.sh \
	sched/status-speed.sh \
	e2e/sched-plan.sh \
	e2e/sched-fallback.sh \
	e2e/sched-fail.sh \
	e2e/sched-backfill.sh \
	e2e/sched-restart.sh \
	e2e/sched-profiler.sh \
	e2e/sched-measure.sh \
	e2e/sched-partitions.sh \
	e2e/hostile-names.sh \
	e2e/hostile-modify.sh \
	e2e/hostile-numbers.sh \
	e2e/hostile-node.sh \
	e2e/hostile-node-typed.sh \
	e2e/hostile-fs.sh \
	e2e/hostile-env.sh \
	e2e/sched-feedback.sh \
	e2e/sched-reconfig.sh \
	e2e/sched-pytorch-resize.sh \
	e2e/sched-fairness.sh \
	e2e/sched-off.sh \
	e2e/sched-classes.sh \
	e2e/sched-classes-profile.sh \
	e2e/sched-classes-measure.sh \
	e2e/sched-objective.sh \
	e2e/sched-noharm.sh \
	e2e/sched-multinode.sh \
	e2e/sched-multinode-ddp.sh
EXTRA_DIST += \
	sched/plugin-deps.sh \
	sched/plugin-graph.sh \
	sched/replay-fixtures.sh \
	sched/cycles \
	sched/status.sh \
	sched/status-speed.sh \
	e2e/sched-lib.sh \
	e2e/hostile-lib.sh \
	e2e/sched-plan.sh \
	e2e/sched-fallback.sh \
	e2e/sched-fail.sh \
	e2e/sched-backfill.sh \
	e2e/sched-restart.sh \
	e2e/sched-profiler.sh \
	e2e/sched-measure.sh \
	e2e/sched-partitions.sh \
	e2e/hostile-names.sh \
	e2e/hostile-modify.sh \
	e2e/hostile-numbers.sh \
	e2e/hostile-node.sh \
	e2e/hostile-node-typed.sh \
	e2e/hostile-fs.sh \
	e2e/hostile-env.sh \
	e2e/sched-feedback.sh \
	e2e/sched-reconfig.sh \
	e2e/sched-pytorch-resize.sh \
	e2e/sched-fairness.sh \
	e2e/sched-off.sh \
	e2e/sched-classes.sh \
	e2e/sched-classes-profile.sh \
	e2e/sched-classes-measure.sh \
	e2e/sched-objective.sh \
	e2e/sched-noharm.sh \
	e2e/sched-multinode.sh \
	e2e/sched-multinode-ddp.sh

# saturn_internode_bw through the profiler job (port slot 94).
TESTS += e2e/sched-internode.sh
EXTRA_DIST += e2e/sched-internode.sh

# Benchmark (prints figures; not run by make check): tests/bench/slurm-bench.sh
EXTRA_DIST += bench/slurm-bench.sh

# Sharing the cluster between users (lib/sched/fairness.c).
if HAVE_CHECK
check_PROGRAMS += sched/test_fairness
TESTS += sched/test_fairness
sched_test_fairness_SOURCES = sched/test_fairness.c
sched_test_fairness_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_fairness_CFLAGS = $(UNIT_CFLAGS)
sched_test_fairness_LDADD = $(UNIT_LDADD)
endif

# The plan record in AdminComment/Comment (lib/sched/planrec.c) and
# `saturn status --sacct` (against a stand-in sacct).
TESTS += sched/status-sacct.sh
EXTRA_DIST += sched/status-sacct.sh
if HAVE_CHECK
check_PROGRAMS += sched/test_planrec
TESTS += sched/test_planrec
sched_test_planrec_SOURCES = sched/test_planrec.c
sched_test_planrec_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_planrec_CFLAGS = $(UNIT_CFLAGS)
sched_test_planrec_LDADD = $(UNIT_LDADD)
endif

# Node classes of heterogeneous clusters, typed GRES, --constraint (lib/sched/node_class.c).
if HAVE_CHECK
check_PROGRAMS += sched/test_node_class
TESTS += sched/test_node_class
sched_test_node_class_SOURCES = sched/test_node_class.c
sched_test_node_class_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_node_class_CFLAGS = $(UNIT_CFLAGS)
sched_test_node_class_LDADD = $(UNIT_LDADD)
endif

# Many users' batches: objectives, priorities' weights, limits
# (lib/sched/multiuser.c).
if HAVE_CHECK
check_PROGRAMS += sched/test_multiuser
TESTS += sched/test_multiuser
sched_test_multiuser_SOURCES = sched/test_multiuser.c
sched_test_multiuser_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_multiuser_CFLAGS = $(UNIT_CFLAGS)
sched_test_multiuser_LDADD = $(UNIT_LDADD)
endif

# The fixture the lib/sched tests share.
EXTRA_DIST += sched/sched_fixture.h

# Hostile users, round two (doc/security.md, "Attacks tried"): text from a
# user's profile in root's records, ... (port slots 30-39).
TESTS += e2e/hostile-text.sh
EXTRA_DIST += e2e/hostile-text.sh
# tasks Slurm will never start (slot 10)
TESTS += e2e/hostile-never.sh
EXTRA_DIST += e2e/hostile-never.sh
# a running task that lies about its progress (slot 16)
TESTS += e2e/hostile-liar.sh
EXTRA_DIST += e2e/hostile-liar.sh
# a profile that understates its work under saturn_fairness=share (slot 17)
TESTS += e2e/hostile-share.sh
EXTRA_DIST += e2e/hostile-share.sh
# PrivateData: state.json and saturn status (slot 12)
TESTS += e2e/hostile-private.sh
EXTRA_DIST += e2e/hostile-private.sh
# a task that requeues itself (exit 75, scontrol requeue) (slot 86)
TESTS += e2e/hostile-requeue.sh
EXTRA_DIST += e2e/hostile-requeue.sh

# Batch-name floods: companion jobs per user, records and script copies
# pruned, the profile cache's budget and eviction, the progress sweep
# (issue #20, problems 4 and 8; slot 44).
TESTS += e2e/hostile-flood.sh
EXTRA_DIST += e2e/hostile-flood.sh
# The total profile budget between users: the heaviest gives way (slot 48).
TESTS += e2e/hostile-budget.sh
EXTRA_DIST += e2e/hostile-budget.sh

if HAVE_CHECK
# saturn_cycle_run: one cycle as one call (lib/sched/sched_cycle.h)
check_PROGRAMS += sched/test_cycle
TESTS += sched/test_cycle
sched_test_cycle_SOURCES = sched/test_cycle.c sched/sched_fixture.h
sched_test_cycle_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_cycle_CFLAGS = $(UNIT_CFLAGS)
sched_test_cycle_LDADD = $(UNIT_LDADD)
endif

# A scheduling cycle recorded as saturn-cycle/1 and read back
# (lib/sched/cycle_record.c), the profile set (lib/sched/profset.c).
if HAVE_CHECK
check_PROGRAMS += sched/test_cycle_record
TESTS += sched/test_cycle_record
sched_test_cycle_record_SOURCES = sched/test_cycle_record.c sched/cycle_fixture.h
sched_test_cycle_record_CPPFLAGS = $(UNIT_CPPFLAGS)
sched_test_cycle_record_CFLAGS = $(UNIT_CFLAGS)
sched_test_cycle_record_LDADD = $(UNIT_LDADD)
endif
