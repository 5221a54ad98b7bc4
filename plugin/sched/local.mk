# plugin/sched/local.mk - sched/saturn (needs the Slurm source: --with-slurm-source).
# Slurm's internal headers include "config.h" and expect Slurm's own, so the
# Slurm build folder comes first and our top_builddir is left out
# (AUTOMAKE_OPTIONS = nostdinc in plugin/Makefile.am).
if HAVE_SLURM_SOURCE
slurmplugin_LTLIBRARIES += sched_saturn.la
sched_saturn_la_SOURCES = \
	sched/sched_saturn.c \
	sched/saturn_agent.c \
	sched/saturn_agent.h \
	sched/saturn_gather.c \
	sched/saturn_gather.h \
	sched/saturn_cyclerec.c \
	sched/saturn_cyclerec.h \
	sched/saturn_apply.c \
	sched/saturn_apply.h \
	sched/saturn_jobrec.c \
	sched/saturn_jobrec.h \
	sched/saturn_rehold.c \
	sched/saturn_rehold.h \
	sched/saturn_backfill.c \
	sched/saturn_backfill.h \
	sched/saturn_snapshot.c \
	sched/saturn_snapshot.h \
	sched/saturn_priority.c \
	sched/saturn_priority.h \
	sched/saturn_files.c \
	sched/saturn_files.h \
	sched/saturn_views.c \
	sched/saturn_views.h \
	sched/saturn_statewr.c \
	sched/saturn_statewr.h \
	sched/saturn_profcache.c \
	sched/saturn_profcache.h \
	sched/saturn_profiles.c \
	sched/saturn_profiles.h \
	sched/saturn_companion.c \
	sched/saturn_companion.h \
	sched/saturn_prune.c \
	sched/saturn_prune.h \
	sched/saturn_measure.c \
	sched/saturn_measure.h \
	sched/saturn_reconfig.c \
	sched/saturn_reconfig.h \
	sched/saturn_planrec.c \
	sched/saturn_planrec.h \
	sched/saturn_ctx.h \
	sched/saturn_clock.h
sched_saturn_la_CPPFLAGS = $(SLURM_SRC_CFLAGS) -I$(top_srcdir)/plugin/common -I$(top_srcdir)/lib/model -I$(top_srcdir)/lib/planner -I$(top_srcdir)/lib/sched
sched_saturn_la_CFLAGS = $(SATURN_CFLAGS) $(AX_PTHREAD_CFLAGS) $(JSONC_CFLAGS)
sched_saturn_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-export-symbols-regex '^(init|fini|sched_p_reconfig|plugin_(name|type|version))$$'
sched_saturn_la_LIBADD = $(top_builddir)/lib/libsaturn-ctl.la -ldl
endif
