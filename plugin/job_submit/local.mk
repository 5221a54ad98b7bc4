# plugin/job_submit/local.mk - job_submit_saturn.so: validate and hold Saturn
# jobs (needs the Slurm source: --with-slurm-source). Slurm's internal headers
# include "config.h" and expect Slurm's own (first in SLURM_SRC_CFLAGS).
if HAVE_SLURM_SOURCE
slurmplugin_LTLIBRARIES += job_submit_saturn.la
job_submit_saturn_la_SOURCES = \
	job_submit/job_submit_saturn.c \
	common/modify_fields.c common/modify_fields.h
job_submit_saturn_la_CPPFLAGS = $(SLURM_SRC_CFLAGS) -I$(srcdir)/common -iquote $(top_srcdir)/lib/model
job_submit_saturn_la_CFLAGS = $(SATURN_CFLAGS) $(AX_PTHREAD_CFLAGS)
job_submit_saturn_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-export-symbols-regex '^(init|fini|job_submit|job_modify|plugin_(name|type|version))$$'
job_submit_saturn_la_LIBADD = libsubmit_rules.la
endif
