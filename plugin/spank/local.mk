# plugin/spank/local.mk - spank_saturn.so: --saturn-batch for sbatch/salloc/srun.
# Needs only libslurm-dev's public <slurm/spank.h>; uses our config.h.
if HAVE_SPANK
slurmplugin_LTLIBRARIES += spank_saturn.la
spank_saturn_la_SOURCES = \
	spank/spank_saturn.c
spank_saturn_la_CPPFLAGS = -I$(top_builddir) -I$(srcdir)/common -iquote $(top_srcdir)/lib/model
spank_saturn_la_CFLAGS = $(SATURN_CFLAGS) $(AX_PTHREAD_CFLAGS)
spank_saturn_la_LDFLAGS = $(PLUGIN_LDFLAGS) \
	-export-symbols-regex '^(slurm_spank_.*|plugin_(name|type|version)|spank_plugin_.*)$$'
spank_saturn_la_LIBADD = libsubmit_rules.la
endif
