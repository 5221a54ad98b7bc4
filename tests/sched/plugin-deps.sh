#!/bin/sh
# plugin-deps.sh - what slurmctld maps when it loads our plugins.
# sched_saturn.so and job_submit_saturn.so run inside slurmctld as root: they
# must link only the controller side of libsaturn (libsaturn-ctl.la), never
# the job side (libsaturn-job.la: hwloc and, through it, udev; the technique
# plugin loader that dlopen()s shared objects; templates, sweeps, emulator).
# For each plugin: print its DT_NEEDED entries, the libraries the loader
# resolves and the functions that call dlopen(); fail on any library outside
# the list below, on hwloc/udev anywhere in the closure, on an hwloc_* or
# udev_* import, and on any job-side symbol or on the name the technique
# loader looks up. Skipped (77) when the plugins are not built (configure
# without --with-slurm-source) or binutils is missing.
set -u
B="${top_builddir:-.}/plugin"
for t in objdump nm; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
done

# Shared objects a controller plugin may name in DT_NEEDED (libc's parts,
# json-c, lp_solve's colamd; the sanitizer runtimes with --enable-sanitizers).
ALLOWED='^(libc|libm|libdl|libpthread|librt|ld-linux[-a-z0-9_.]*|libjson-c|libcolamd|libasan|libubsan|libgcc_s)\.so'
# Libraries that must not be in the loader's closure either.
DENIED='libhwloc|libudev|libpciaccess|libxml2|libcudart|libnccl'
# Symbols defined only by the job side (lib/job/technique.c, template.c, sweep.c,
# topology.c, emulate.c), and the symbol the technique loader asks dlsym for.
JOBSIDE='^(saturn_techniques?_|saturn_template_|saturn_argv_free$|saturn_sweep_|saturn_scale_|saturn_topology_|saturn_emu_)'
LOADER_NAME=saturn_technique_plugin_v1

plugin_path() {
	for p in "$B/.libs/$1.so" "$B/slurm/$1.so"; do
		[ -f "$p" ] && { echo "$p"; return 0; }
	done
	return 1
}

fail=0
checked=0
for name in sched_saturn job_submit_saturn; do
	so=$(plugin_path "$name") || { echo "$name.so: not built"; continue; }
	checked=$((checked + 1))
	echo "== $so"
	needed=$(objdump -p "$so" | awk '$1 == "NEEDED" { print $2 }')
	echo "DT_NEEDED: $(echo $needed)"
	for n in $needed; do
		echo "$n" | grep -Eq "$ALLOWED" ||
			{ echo "FAIL: $name.so needs $n (not a controller-side library)"; fail=1; }
	done
	if command -v ldd >/dev/null 2>&1 && closure=$(ldd "$so" 2>&1); then
		echo "resolved by the loader: $(echo "$closure" | awk '{ print $1 }' | sort | tr '\n' ' ')"
		bad=$(echo "$closure" | grep -E "$DENIED")
		[ -z "$bad" ] || { echo "FAIL: $name.so maps $(echo "$bad" | awk '{ print $1 }' | tr '\n' ' ')"; fail=1; }
	else
		echo "(ldd unavailable: closure not checked)"
	fi
	imports=$(nm -D --undefined-only "$so" | awk '{ print $NF }' | sed 's/@.*//')
	bad=$(echo "$imports" | grep -E '^(hwloc_|udev_)')
	[ -z "$bad" ] || { echo "FAIL: $name.so imports $(echo $bad)"; fail=1; }
	echo "dl imports: $(echo "$imports" | grep -E '^dl' | tr '\n' ' ')"
	# .symtab (not only the exported symbols, which the version script cuts
	# to init/fini/plugin_*): a stripped plugin has none, so the loader's
	# dlsym name is also searched in the raw bytes.
	syms=$(nm --defined-only "$so" 2>/dev/null | awk '{ print $NF }')
	if [ -n "$syms" ]; then
		bad=$(echo "$syms" | grep -E "$JOBSIDE")
		[ -z "$bad" ] || { echo "FAIL: $name.so carries job-side code: $(echo $bad)"; fail=1; }
		callers=$(objdump -d --no-show-raw-insn "$so" | awk '
			/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn) }
			/call.*<dlopen@plt>/ { print fn }' | sort -u | tr '\n' ' ')
		echo "dlopen called by: ${callers:-(none)}"
	else
		echo "(no symbol table: job-side symbols not checked)"
	fi
	if grep -q "$LOADER_NAME" "$so"; then
		echo "FAIL: $name.so contains the technique loader ($LOADER_NAME)"
		fail=1
	fi
done
[ "$checked" -gt 0 ] || { echo "SKIP: plugins not built (configure --with-slurm-source)"; exit 77; }
[ "$fail" = 0 ] && echo "OK: $checked plugin(s) link the controller side only"
exit "$fail"
