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
unit_test_submit_rules_CPPFLAGS = -I$(top_srcdir)/plugin/common
unit_test_submit_rules_CFLAGS = $(SATURN_CFLAGS) $(CHECK_CFLAGS)
unit_test_submit_rules_LDADD = $(top_builddir)/plugin/libsubmit_rules.la $(CHECK_LIBS)
endif
