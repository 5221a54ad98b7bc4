#!/bin/bash
# site-timed.sh - run one Slurm client command and time it (for
# site-load.sh): site-timed.sh LOG OP CMD [ARGS...] runs CMD (as whoever
# calls it: site-load.sh calls it through runuser, so the user switch is not
# timed), prints its output, and appends "OP,EPOCH_S,MICROSECONDS,RC" to
# LOG. Returns CMD's exit status. Needs bash (EPOCHREALTIME).
log=$1
op=$2
shift 2
t0=${EPOCHREALTIME/./}
"$@"
rc=$?
t1=${EPOCHREALTIME/./}
echo "$op,$((t0 / 1000000)),$((t1 - t0)),$rc" >>"$log"
exit $rc
