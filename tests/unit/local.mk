# tests/unit/local.mk - Check unit tests of libsaturn, one program per module.
if HAVE_CHECK
check_PROGRAMS += unit/test_model
TESTS += unit/test_model
unit_test_model_SOURCES = unit/test_model.c
unit_test_model_CPPFLAGS = $(UNIT_CPPFLAGS)
unit_test_model_CFLAGS = $(UNIT_CFLAGS)
unit_test_model_LDADD = $(UNIT_LDADD)
endif
