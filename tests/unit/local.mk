# tests/unit/local.mk - Check unit tests of libsaturn, one program per module.
if HAVE_CHECK
check_PROGRAMS += unit/test_model
TESTS += unit/test_model
unit_test_model_SOURCES = unit/test_model.c
unit_test_model_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_model_CFLAGS = $(UNIT_CFLAGS)
unit_test_model_LDADD = $(UNIT_LDADD)
endif

# Rules shared by the SPANK and job_submit plugins (plain C, no Slurm).
if HAVE_CHECK
check_PROGRAMS += unit/test_submit_rules
TESTS += unit/test_submit_rules
unit_test_submit_rules_SOURCES = unit/test_submit_rules.c
unit_test_submit_rules_CPPFLAGS = -I$(top_srcdir)/plugin/common -iquote $(top_srcdir)/lib/model
unit_test_submit_rules_CFLAGS = $(SATURN_CFLAGS) $(CHECK_CFLAGS)
unit_test_submit_rules_LDADD = $(top_builddir)/plugin/libsubmit_rules.la $(CHECK_LIBS)
# With the Slurm source: also the reading of a real job_desc_msg_t (only its
# public slurm/slurm.h, no Slurm symbol is linked).
if HAVE_SLURM_SOURCE
unit_test_submit_rules_SOURCES += ../plugin/common/modify_fields.c
unit_test_submit_rules_CPPFLAGS += -DHAVE_MODIFY_FIELDS -I$(SLURM_BUILD_DIR) -I$(SLURM_SOURCE_DIR)
# and Slurm's own slurm_init_job_desc_msg() to compare the unset values with
if HAVE_LIBSLURM
unit_test_submit_rules_LDADD += $(SLURM_LIBS)
endif
endif
endif

if HAVE_CHECK
check_PROGRAMS += unit/test_validate
TESTS += unit/test_validate
unit_test_validate_SOURCES = unit/test_validate.c
unit_test_validate_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_validate_CFLAGS = $(UNIT_CFLAGS)
unit_test_validate_LDADD = $(UNIT_LDADD)
endif

if HAVE_CHECK
check_PROGRAMS += unit/test_formats
TESTS += unit/test_formats
unit_test_formats_SOURCES = unit/test_formats.c
unit_test_formats_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_formats_CFLAGS = $(UNIT_CFLAGS)
unit_test_formats_LDADD = $(UNIT_LDADD)
endif

# The character sets of text from users' files (lib/model/safetext.c).
if HAVE_CHECK
check_PROGRAMS += unit/test_safetext
TESTS += unit/test_safetext
unit_test_safetext_SOURCES = unit/test_safetext.c
unit_test_safetext_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_safetext_CFLAGS = $(UNIT_CFLAGS)
unit_test_safetext_LDADD = $(UNIT_LDADD)
endif

if HAVE_CHECK
check_PROGRAMS += unit/test_profile
TESTS += unit/test_profile
unit_test_profile_SOURCES = unit/test_profile.c
unit_test_profile_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_profile_CFLAGS = $(UNIT_CFLAGS)
unit_test_profile_LDADD = $(UNIT_LDADD)
endif

if HAVE_CHECK
check_PROGRAMS += unit/test_planner unit/test_bounds
TESTS += unit/test_planner unit/test_bounds
unit_test_planner_SOURCES = unit/test_planner.c unit/planner_fixtures.h
unit_test_planner_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_planner_CFLAGS = $(UNIT_CFLAGS) $(AX_PTHREAD_CFLAGS)
unit_test_planner_LDADD = $(UNIT_LDADD) $(AX_PTHREAD_CFLAGS)
unit_test_bounds_SOURCES = unit/test_bounds.c unit/planner_fixtures.h
unit_test_bounds_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_bounds_CFLAGS = $(UNIT_CFLAGS)
unit_test_bounds_LDADD = $(UNIT_LDADD)
endif

# The class-aware LP bound, and every bound against exhaustive search on
# tiny instances with classes, releases, gangs, running and busy GPUs.
if HAVE_CHECK
check_PROGRAMS += unit/test_lpbound
TESTS += unit/test_lpbound
unit_test_lpbound_SOURCES = unit/test_lpbound.c unit/planner_fixtures.h
unit_test_lpbound_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_lpbound_CFLAGS = $(UNIT_CFLAGS)
unit_test_lpbound_LDADD = $(UNIT_LDADD)
endif

# The planner's time budget at a site's scale (issue 22): thousands of
# tasks in three node classes (bench/site_problem.h).
if HAVE_CHECK
check_PROGRAMS += unit/test_plan_scale
TESTS += unit/test_plan_scale
unit_test_plan_scale_SOURCES = unit/test_plan_scale.c bench/site_problem.h
unit_test_plan_scale_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_plan_scale_CFLAGS = $(UNIT_CFLAGS)
unit_test_plan_scale_LDADD = $(UNIT_LDADD)
endif

# Plan construction: the GPU model and the list scheduler every plan is
# built with (lib/planner/listsched.c).
if HAVE_CHECK
check_PROGRAMS += unit/test_listsched
TESTS += unit/test_listsched
unit_test_listsched_SOURCES = unit/test_listsched.c unit/planner_fixtures.h
unit_test_listsched_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_listsched_CFLAGS = $(UNIT_CFLAGS)
unit_test_listsched_LDADD = $(UNIT_LDADD)
endif

# Checked number parsing for option values (lib/model/numparse.c).
if HAVE_CHECK
check_PROGRAMS += unit/test_numparse
TESTS += unit/test_numparse
unit_test_numparse_SOURCES = unit/test_numparse.c
unit_test_numparse_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_numparse_CFLAGS = $(UNIT_CFLAGS)
unit_test_numparse_LDADD = $(UNIT_LDADD)
endif

# Batch names, TRES request strings and "NAME=value" arrays (lib/model/jobreq.c,
# lib/model/envarray.c), shared by the plugins and the programs.
if HAVE_CHECK
check_PROGRAMS += unit/test_jobreq
TESTS += unit/test_jobreq
unit_test_jobreq_SOURCES = unit/test_jobreq.c
unit_test_jobreq_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_jobreq_CFLAGS = $(UNIT_CFLAGS)
unit_test_jobreq_LDADD = $(UNIT_LDADD)
endif

# Id lists like 0-15,17,20-30:2 (lib/model/idset.c).
if HAVE_CHECK
check_PROGRAMS += unit/test_idset
TESTS += unit/test_idset
unit_test_idset_SOURCES = unit/test_idset.c
unit_test_idset_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_idset_CFLAGS = $(UNIT_CFLAGS)
unit_test_idset_LDADD = $(UNIT_LDADD)
endif

# Descriptor-based file access (lib/model/safefile.c).
if HAVE_CHECK
check_PROGRAMS += unit/test_safefile
TESTS += unit/test_safefile
unit_test_safefile_SOURCES = unit/test_safefile.c
unit_test_safefile_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_safefile_CFLAGS = $(UNIT_CFLAGS)
unit_test_safefile_LDADD = $(UNIT_LDADD)
endif

# multi-node tasks: formats v2, validator, gang placement, bounds
if HAVE_CHECK
check_PROGRAMS += unit/test_multinode
TESTS += unit/test_multinode
unit_test_multinode_SOURCES = unit/test_multinode.c unit/planner_fixtures.h
unit_test_multinode_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_multinode_CFLAGS = $(UNIT_CFLAGS)
unit_test_multinode_LDADD = $(UNIT_LDADD)
endif

# Predicted multi-node options from an inter-node bandwidth (job side).
if HAVE_CHECK
check_PROGRAMS += unit/test_internode
TESTS += unit/test_internode
unit_test_internode_SOURCES = unit/test_internode.c
unit_test_internode_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_internode_CFLAGS = $(UNIT_CFLAGS)
unit_test_internode_LDADD = $(UNIT_JOB_LDADD)
endif
