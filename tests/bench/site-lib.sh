#!/bin/bash
# site-lib.sh - the events, the sampler and the analysis of site-load.sh
# (sourced by it after its settings; runs in its output folder $OUT). Not run
# on its own.
# shellcheck disable=SC2046 # set -- $(stats ...): split on purpose

# submit USER ARGS...: sbatch --parsable as USER; prints the job id. Retried
# (1 s apart, 60 tries) only while slurmctld cannot be reached (its restart);
# other refusals are logged to sbatch.err and submit.fail.
submit() {
	su_u=$1
	shift
	su_k=0
	while :; do
		su_out=$(as "$su_u" sbatch sbatch --parsable "$@" 2>sbatch.last) && {
			echo "${su_out%%;*}"
			return 0
		}
		cat sbatch.last >>sbatch.err
		su_k=$((su_k + 1))
		if ! grep -qi 'unable to contact\|connection refused\|timed out\|connect failure\|Zero Bytes' sbatch.last ||
			[ $su_k -ge 60 ]; then
			echo "$su_u $*: $(head -n 1 sbatch.last)" >>submit.fail
			return 1
		fi
		sleep 1
	done
}

# write_profile USER BATCH NTASKS WORK: the batch's profile (saturn-profile/1)
# in the user's folder: WORK seconds on one GPU in 40 batches, and the
# speed-ups task.sh runs with (ddp on 2, 4, 8 GPUs).
write_profile() {
	wp_uid=$(id -u "$1")
	wp_pd="$D/state/saturn/profiles/$wp_uid"
	[ -d "$D/state/saturn/profiles" ] || return 0
	[ -d "$wp_pd" ] || { mkdir -m 700 "$wp_pd" && chown "$wp_uid" "$wp_pd"; } || return 0
	wp_opts=
	for gf in 1:1000:single 2:560:ddp 4:340:ddp 8:300:ddp; do
		g=${gf%%:*}
		f=${gf#*:}
		t=${f#*:}
		f=${f%%:*}
		v=$(($4 * f / 40))
		wp_opts="$wp_opts${wp_opts:+, }{ \"technique\": \"$t\", \"gpus\": $g, \"sec_per_batch\": $((v / 1000)).$(printf '%03d' $((v % 1000))), \"status\": \"measured\" }"
	done
	printf '{ "format": "saturn-profile/1", "batch": "%s", "created": 1, "tasks": [ { "signature": "m", "task_ids": "0-%d", "batches": 40, "options": [ %s ] } ] }\n' \
		"$2" $(($3 - 1)) "$wp_opts" >"$wp_pd/$2.json"
	chown "$wp_uid" "$wp_pd/$2.json"
	chmod 600 "$wp_pd/$2.json"
}

# ev_sat USER# BATCH# NTASKS GPUS WORK PARTITION PROFILE: a Saturn batch
# (an array; under sched/backfill the same array without --saturn-batch)
ev_sat() {
	u=$UP$1
	name=sat-b$2
	sat=
	if [ "$SCHED" = sched/saturn ]; then
		sat=--saturn-batch=$name
		[ "$7" = 1 ] && write_profile "$u" "$name" "$3" "$5"
	fi
	ts=$EPOCHREALTIME
	# shellcheck disable=SC2086
	id=$(submit "$u" -J "$name" -p "$6" $sat --array=0-$(($3 - 1)) --gres=gpu:"$4" \
		--time=$((($5 + 59) / 60 + 1)) -o /dev/null "$OUT/task.sh" "$5") &&
		echo "sat $id $3 $u $ts $name $4 $6" >>submit.log
}

# ev_job USER# JOB# ARRAY GPUS WORK PARTITION NICE: an ordinary job (CPU-only
# when GPUS is 0; an array of ARRAY tasks when ARRAY > 0)
ev_job() {
	u=$UP$1
	arr=
	[ "$3" -gt 0 ] && arr=--array=0-$(($3 - 1))
	gr=
	[ "$4" -gt 0 ] && gr=--gres=gpu:$4
	ts=$EPOCHREALTIME
	# shellcheck disable=SC2086
	id=$(submit "$u" -J "job-$2" -p "$6" $arr $gr -c 1 --nice="$7" \
		--time=$((($5 + 59) / 60 + 1)) -o /dev/null "$OUT/task.sh" "$5") &&
		echo "job $id $3 $u $ts job-$2 $4 $6" >>submit.log
}

# ev_cancel PENDING|RUNNING: its user cancels one Saturn task in that state
# (a held one: a random task of a random batch, up to 5 picks)
ev_cancel() {
	if [ "$1" = PENDING ]; then
		mapfile -t ec_b < <(awk '$1 == "sat" { print $2, $3, $4 }' submit.log)
		[ ${#ec_b[@]} -gt 0 ] || return 0
		for _ in 1 2 3 4 5; do
			# shellcheck disable=SC2086
			set -- ${ec_b[RANDOM % ${#ec_b[@]}]}
			key=$1_$((RANDOM % $2))
			if [ "$(squeue -h -j "$key" -o %T 2>/dev/null | head -n 1)" = PENDING ]; then
				as "$3" scancel scancel "$key" >/dev/null 2>&1 && echo "$key PENDING" >>cancel.log
				return 0
			fi
		done
		return 0
	fi
	mapfile -t ec_r < <(squeue -h -t R -o '%i %j %u' 2>/dev/null | awk '$2 ~ /^sat-/ { print $1, $3 }')
	[ ${#ec_r[@]} -gt 0 ] || return 0
	# shellcheck disable=SC2086
	set -- ${ec_r[RANDOM % ${#ec_r[@]}]}
	as "$2" scancel scancel "$1" >/dev/null 2>&1 && echo "$1 RUNNING" >>cancel.log
}

# ev_upd_user USER#: the user lowers the priority of a pending job of theirs
ev_upd_user() {
	u=$UP$1
	mapfile -t eu < <(squeue -h -t PD -u "$u" -o '%A' 2>/dev/null | sort -u)
	[ ${#eu[@]} -gt 0 ] || return 0
	as "$u" scontrol scontrol update JobId="${eu[RANDOM % ${#eu[@]}]}" Nice=100 >/dev/null 2>&1 ||
		echo "user $u: scontrol update Nice failed" >>update.fail
}

# ev_upd_op PRIORITY: the operator sets the priority of a pending ordinary job
ev_upd_op() {
	mapfile -t eo < <(squeue -h -t PD -o '%A %j' 2>/dev/null | awk '$2 ~ /^job-/ { print $1 }' | sort -u)
	[ ${#eo[@]} -gt 0 ] || return 0
	as_root scontrol scontrol update JobId="${eo[RANDOM % ${#eo[@]}]}" Priority="$1" >/dev/null 2>&1 ||
		echo "operator: scontrol update Priority failed" >>update.fail
}

# ev_node NODE SETTINGS...: the operator updates a node (node-events.log:
# the node's state before, the command and its answer)
ev_node() {
	en_n=$1
	shift
	{
		echo "$(date +%s) $en_n was $(sinfo -h -n "$en_n" -o %T 2>&1): $*"
		as_root scontrol scontrol update NodeName="$en_n" "$@" 2>&1
	} >>node-events.log
}

# ev_restart: sdiag so far, then restart slurmctld (its state kept)
ev_restart() {
	sdiag >sdiag-1.txt 2>&1
	er_t=${EPOCHREALTIME/./}
	SATURN_TIMEOUT=600 sh "$ROOT/scripts/cluster.sh" restart-ctld >restart.log 2>&1 ||
		say "restart-ctld failed (see $OUT/restart.log)"
	echo "$(((${EPOCHREALTIME/./} - er_t) / 1000))" >restart_ms
}

# Memory of every process of the instance (its SLURM_CONF in the
# environment: daemons, slurmstepd, tasks): "PSS_KB NSTEPD RSS_KB", PSS
# (shared pages split between their users: what the instance costs) and the
# sum of RSS (shared pages counted in every process), and the number of
# slurmstepd
inst_rss() {
	ir_p=$(grep -slzxF "SLURM_CONF=$SLURM_CONF" /proc/[0-9]*/environ 2>/dev/null |
		sed 's|/proc/||; s|/environ||')
	[ -n "$ir_p" ] || {
		echo "0 0 0"
		return 0
	}
	ir_pss=$(for p in $ir_p; do cat "/proc/$p/smaps_rollup" 2>/dev/null; done | awk '$1 == "Pss:" { s += $2 } END { print s + 0 }')
	ps -o rss=,comm= -p "$(echo $ir_p | tr ' ' ',')" 2>/dev/null |
		awk -v pss="$ir_pss" '{ s += $1; if ($2 == "slurmstepd") n++ } END { print pss, n + 0, s + 0 }'
}

# Every SAMPLE s until .stop: squeue (all, as root; and a user's own) timed,
# slurmctld's and the instance's RSS, slurmstepd count, state sizes, load.
sampler() {
	sm_k=0
	while [ ! -e "$OUT/.stop" ]; do
		sm_t=$(((${EPOCHREALTIME/./} - T0) / 1000000))
		as_root squeue squeue -h -o '%T' >sq.tmp 2>/dev/null
		sm_run=$(grep -c '^RUNNING' sq.tmp)
		sm_pd=$(grep -c '^PENDING' sq.tmp)
		sm_u=$UP$((RANDOM % NU))
		as "$sm_u" squeue_user squeue -h -u "$sm_u" -o '%i %T %r' >/dev/null 2>&1
		sm_cp=$(cat "$D/run/slurmctld.pid" 2>/dev/null)
		sm_cr=$(awk '/^VmRSS/ { print $2 }' "/proc/${sm_cp:-0}/status" 2>/dev/null)
		# the whole instance every third sample (reads every /proc/*/environ)
		[ $((sm_k % 3)) = 0 ] && set -- $(inst_rss)
		sm_k=$((sm_k + 1))
		echo "$sm_t,${sm_cr:-0},$1,$2,$3,$sm_run,$sm_pd,$(stat -c %s "$D/state/saturn/state.json" 2>/dev/null || echo 0),$(stat -c %s "$D/state/job_state" 2>/dev/null || echo 0),$(cut -d' ' -f1 /proc/loadavg)" >>rss.csv
		sleep "$SAMPLE"
	done
}

# stats: numbers on stdin -> "N P50 P99 MAX MEAN" (nearest rank; "-" when none)
stats() {
	sort -g | awk '{ a[NR] = $1; s += $1 }
		END { if (!NR) { print "0 - - - -"; exit }
		      i = int(0.5 * NR + 0.999999); j = int(0.99 * NR + 0.999999)
		      printf "%d %.3f %.3f %.3f %.3f\n", NR, a[i], a[j], a[NR], s / NR }'
}

# sdiag_vals FILE: main_cycles main_max_us main_mean_us bf_cycles bf_max_us
# bf_mean_us, then one "RPC NAME COUNT TOTAL_US" line per message type
sdiag_vals() {
	awk '/^Main schedule statistics/ { s = "m" } /^Backfilling stats/ { s = "b" }
		/^Latency for/ { s = "" } /^Remote Procedure Call statistics by message type/ { s = "r" }
		/^Remote Procedure Call statistics by user/ { s = "" }
		s == "m" && $1 == "Total" && $2 == "cycles:" { mc = $3 }
		s == "m" && $1 == "Max" && $2 == "cycle:" { mx = $3 }
		s == "m" && $1 == "Mean" && $2 == "cycle:" { mm = $3 }
		s == "b" && $1 == "Total" && $2 == "cycles:" { bc = $3 }
		s == "b" && $1 == "Max" && $2 == "cycle:" { bx = $3 }
		s == "b" && $1 == "Mean" && $2 == "cycle:" { bm = $3 }
		s == "r" && /count:/ { c = t = 0; for (i = 2; i <= NF; i++) {
			if ($i ~ /^count:/) c = substr($i, 7); if ($i ~ /^total_time:/) t = substr($i, 12) }
			rpc[$1] = c " " t }
		END { printf "%d %d %d %d %d %d\n", mc, mx, mm, bc, bx, bm
		      for (r in rpc) print "RPC", r, rpc[r] }' "$1"
}

# analyse: figures.csv (metric,value) and figures.txt from the run's files
analyse() {
	F=figures.csv
	: >"$F"
	put() { echo "$1,$2" >>"$F"; }
	put sched "${SCHED#sched/}"
	put nodes "$NODES"
	put gpus "$GPUS"
	put duration_s "$DUR"
	put saturn_tasks "$NT"
	put saturn_batches "$(grep -c '^sat ' submit.log)"
	put ordinary_submissions "$(grep -c '^job ' submit.log)"
	put ordinary_tasks "$(awk '$1 == "job" { n += ($3 > 0 ? $3 : 1) } END { print n + 0 }' submit.log)"
	put submit_failures "$(cat submit.fail 2>/dev/null | wc -l)"
	put drain_s "$(((T_END - T_LOAD) / 1000000))"
	# jobs still queued when the drain ended (SL_DRAIN_MAX): their tasks
	# count as lost, or (SL_END=cancel) as left: tasks_left_cancelled
	put queue_left_at_end "$(cat left.txt 2>/dev/null | wc -l)"
	put restart_ms "$(cat restart_ms 2>/dev/null || echo -)"
	put load1_mean "$(awk -F, 'NR > 1 { s += $10; n++ } END { printf "%.2f", n ? s / n : 0 }' rss.csv)"
	put load1_max "$(awk -F, 'NR > 1 && $10 > m { m = $10 } END { printf "%.2f", m }' rss.csv)"
	for op in sbatch squeue squeue_user scancel scontrol; do
		set -- $(awk -F, -v op="$op" '$1 == op && $4 == 0 { print $3 / 1000 }' lat.csv | stats)
		put "${op}_n" "$1"
		put "${op}_p50_ms" "$2"
		put "${op}_p99_ms" "$3"
		put "${op}_max_ms" "$4"
		put "${op}_failed" "$(awk -F, -v op="$op" '$1 == op && $4 != 0 { n++ } END { print n + 0 }' lat.csv)"
	done
	put ctld_rss_first_mb "$(awk -F, 'NR == 2 { printf "%.1f", $2 / 1024 }' rss.csv)"
	put ctld_rss_max_mb "$(awk -F, 'NR > 1 && $2 > m { m = $2 } END { printf "%.1f", m / 1024 }' rss.csv)"
	put ctld_rss_last_mb "$(awk -F, 'NR > 1 { l = $2 } END { printf "%.1f", l / 1024 }' rss.csv)"
	put inst_pss_max_mb "$(awk -F, 'NR > 1 && $3 > m { m = $3 } END { printf "%.1f", m / 1024 }' rss.csv)"
	put inst_rss_sum_max_mb "$(awk -F, 'NR > 1 && $5 > m { m = $5 } END { printf "%.1f", m / 1024 }' rss.csv)"
	put slurmstepd_max "$(awk -F, 'NR > 1 && $4 > m { m = $4 } END { print m + 0 }' rss.csv)"
	put running_max "$(awk -F, 'NR > 1 && $6 > m { m = $6 } END { print m + 0 }' rss.csv)"
	put state_json_max_kb "$(awk -F, 'NR > 1 && $8 > m { m = $8 } END { printf "%.1f", m / 1024 }' rss.csv)"
	put job_state_max_kb "$(awk -F, 'NR > 1 && $9 > m { m = $9 } END { printf "%.1f", m / 1024 }' rss.csv)"

	# sdiag: before the restart + the end of the load
	{
		[ -f sdiag-1.txt ] && sdiag_vals sdiag-1.txt
		sdiag_vals sdiag-2.txt
	} | awk '$1 != "RPC" { mc += $1; if ($2 > mx) mx = $2; ms += $1 * $3; bc += $4; if ($5 > bx) bx = $5; bs += $4 * $6 }
		$1 == "RPC" { c[$2] += $3; t[$2] += $4 }
		END { printf "main_cycles,%d\nmain_max_ms,%.1f\nmain_mean_ms,%.2f\n", mc, mx / 1000, mc ? ms / mc / 1000 : 0
		      printf "bf_cycles,%d\nbf_max_ms,%.1f\nbf_mean_ms,%.2f\n", bc, bx / 1000, bc ? bs / bc / 1000 : 0
		      n = split("REQUEST_SUBMIT_BATCH_JOB REQUEST_JOB_INFO REQUEST_CANCEL_JOB_STEP REQUEST_KILL_JOB REQUEST_UPDATE_JOB REQUEST_COMPLETE_BATCH_SCRIPT MESSAGE_EPILOG_COMPLETE REQUEST_NODE_INFO REQUEST_PARTITION_INFO", k, " ")
		      for (i = 1; i <= n; i++) printf "rpc_%s_n,%d\nrpc_%s_ave_ms,%.2f\n", k[i], c[k[i]], k[i], c[k[i]] ? t[k[i]] / c[k[i]] / 1000 : 0 }' >>"$F"

	# sched/saturn's own lines (SlurmctldDebug=debug for the cycle ones)
	L="$D/log/slurmctld.log"
	[ -f "$L" ] || L=slurmctld.log
	sed -n 's/.*sched\/saturn: cycle: \([0-9]*\) Saturn task(s), snapshot \([0-9.]*\) ms under read locks (waited \([0-9.]*\) ms), plan \([0-9.]*\) ms, apply \([0-9.]*\) ms.*/\1 \2 \3 \4 \5/p' "$L" >sat-cycles.txt
	sed -n 's/.*sched\/saturn: cycle: no Saturn jobs (snapshot \([0-9.]*\) ms under read locks[,)].*/\1/p' "$L" >sat-idle.txt
	# the same lines' end: the gather after the snapshot, state.json's
	# size and write time (0 bytes: not written that cycle), the whole cycle
	sed -n 's/.*sched\/saturn: cycle: .*gather after the snapshot \([0-9.]*\) ms, state.json \([0-9]*\) bytes [a-z]* in \([0-9.]*\) ms, cycle \([0-9.]*\) ms in all\(, [0-9.]* ms of it on the CPU\)*.*/\1 \2 \3 \4 \5/p' "$L" | sed 's/, \([0-9.]*\) ms of it on the CPU/\1/' >sat-whole.txt
	# the state writer's thread: bytes and time of each write (none in
	# logs of a plugin that wrote in the agent thread: "bytes written" in
	# the cycle line then)
	sed -n 's/.*sched\/saturn: state.json: \([0-9]*\) bytes written in \([0-9.]*\) ms.*/\1 \2/p' "$L" >sat-writes.txt
	{
		awk '{ print $2 }' sat-cycles.txt
		cat sat-idle.txt
	} >lock-read.txt
	{
		awk '{ print $5 }' sat-cycles.txt
		sed -n 's/.*sched\/saturn: [0-9]* task(s) re-held, \([0-9.]*\) ms under write locks.*/\1/p' "$L"
		sed -n 's/.*sched\/saturn: [0-9]* plan record(s) updated, \([0-9.]*\) ms under write lock.*/\1/p' "$L"
	} >lock-write.txt
	sed -n 's/.*sched\/saturn: plan .*gap \([0-9.]*\)%.*solve \([0-9.]*\)s,.*/\1 \2/p' "$L" >sat-plans.txt
	put saturn_interval_s "$INTERVAL"
	# re-holds Slurm refused: each try, the first logged as an error
	# ("re-hold failed"), the later ones (30 s apart) at debug level;
	# "not held after update" alone: logs of the plugin before that
	put sat_rehold_errors "$(grep -c 'sched/saturn: .*\(re-hold failed\|re-hold refused again\|not held after update\)' "$L")"
	put ctld_errors "$(grep -c '\] error: ' "$L")"
	set -- $(awk '{ print $2 + $3 + $4 + $5 }' sat-cycles.txt | stats)
	put sat_cycles "$1"
	put sat_cycle_p50_ms "$2"
	put sat_cycle_p99_ms "$3"
	put sat_cycle_max_ms "$4"
	put sat_cycle_overruns "$(awk -v i="$INTERVAL" '$2 + $3 + $4 + $5 > i * 1000 { n++ } END { print n + 0 }' sat-cycles.txt)"
	put sat_tasks_max "$(awk '$1 > m { m = $1 } END { print m + 0 }' sat-cycles.txt)"
	set -- $(awk '{ print $4 }' sat-whole.txt | stats)
	put sat_whole_cycle_p50_ms "$2"
	put sat_whole_cycle_p99_ms "$3"
	put sat_whole_cycle_max_ms "$4"
	put sat_whole_cycle_overruns "$(awk -v i="$INTERVAL" '$4 > i * 1000 { n++ } END { print n + 0 }' sat-whole.txt)"
	# the agent thread's CPU time of each cycle (logs that have it): what
	# a cycle costs with a core of its own
	set -- $(awk 'NF >= 5 { print $5 }' sat-whole.txt | stats)
	put sat_whole_cycle_cpu_p50_ms "$2"
	put sat_whole_cycle_cpu_p99_ms "$3"
	put sat_whole_cycle_cpu_max_ms "$4"
	set -- $(awk '{ print $1 }' sat-whole.txt | stats)
	put sat_gather_p50_ms "$2"
	put sat_gather_max_ms "$4"
	if [ -s sat-writes.txt ]; then
		set -- $(awk '$2 > 0 { print $3 }' sat-whole.txt | stats)
		put sat_state_serialise_p50_ms "$2"
		put sat_state_serialise_p99_ms "$3"
		put sat_state_serialise_max_ms "$4"
		awk '{ print $2, $1, $2 }' sat-writes.txt >sat-whole-w.txt
	else
		cp sat-whole.txt sat-whole-w.txt
	fi
	set -- $(awk '$2 > 0 { print $3 }' sat-whole-w.txt | stats)
	put sat_state_writes "$1"
	put sat_state_write_p50_ms "$2"
	put sat_state_write_p99_ms "$3"
	put sat_state_write_max_ms "$4"
	put sat_state_bytes_max "$(awk '$2 > m { m = $2 } END { print m + 0 }' sat-whole.txt)"
	set -- $(awk '{ print $4 }' sat-cycles.txt | stats)
	put sat_plan_p50_ms "$2"
	put sat_plan_max_ms "$4"
	set -- $(awk '{ print $1 }' sat-plans.txt | stats)
	put sat_new_plans "$1"
	put sat_gap_p50_pct "$2"
	put sat_gap_max_pct "$4"
	set -- $(awk '{ print $2 }' sat-plans.txt | stats)
	put sat_solve_max_s "$4"
	for rw in read write; do
		set -- $(stats <lock-$rw.txt)
		put "lock_${rw}_n" "$1"
		put "lock_${rw}_p50_ms" "$2"
		put "lock_${rw}_p99_ms" "$3"
		put "lock_${rw}_max_ms" "$4"
	done

	# every task exactly once; waits; the Saturn makespan
	awk '
		FILENAME == "submit.log" { n = $3 + 0
			if (n > 0) for (i = 0; i < n; i++) { k = $2 "_" i; ex[k] = $1; st[k] = $5; gp[k] = $7 }
			else { ex[$2] = $1; st[$2] = $5; gp[$2] = $7 }
			if ($1 == "sat" && (s0 == "" || $5 < s0)) s0 = $5; next }
		FILENAME == "cancel.log" { can[$1] = $2; next }
		FILENAME == "left.txt" { left[$1] = 1; next }
		$1 == "S" { s[$2]++; if (!($2 in fs) || $4 < fs[$2]) fs[$2] = $4; next }
		$1 == "E" { e[$2]++; if (($2 in ex) && ex[$2] == "sat" && $4 > se) se = $4; next }
		END {
			for (k in s) if (!(k in ex)) unexp++
			for (k in ex) {
				tot++
				if (e[k] >= 2) twice++
				if (s[k] >= 2) requeued++
				if (k in can) { nc++; continue }
				if (!e[k] && (k in left)) nleft++
				else if (!e[k]) { lost++; if (lost <= 20) print "lost " k > "lost.txt" }
				if (ex[k] == "job" && (k in fs)) {
					w = fs[k] - st[k]; print w > "wait-job.txt"
					print w > (gp[k] > 0 ? "wait-job-gpu.txt" : "wait-job-cpu.txt")
				}
				if (ex[k] == "sat" && (k in fs)) print fs[k] - st[k] > "wait-sat.txt"
			}
			printf "tasks_expected,%d\ntasks_cancelled,%d\ntasks_lost,%d\ntasks_twice,%d\n", tot, nc, lost, twice
			printf "tasks_requeued,%d\ntasks_unexpected,%d\n", requeued, unexp
			printf "tasks_left_cancelled,%d\n", nleft
			printf "sat_makespan_s,%.1f\n", (se && s0 != "") ? se - s0 : 0
		}' submit.log cancel.log $([ "${END:-drain}" = cancel ] && echo left.txt) tasks.log >>"$F"
	for w in job job-gpu job-cpu sat; do
		touch "wait-$w.txt"
		set -- $(stats <"wait-$w.txt")
		put "wait_${w}_n" "$1"
		put "wait_${w}_p50_s" "$2"
		put "wait_${w}_mean_s" "$5"
		put "wait_${w}_p99_s" "$3"
	done
	column -t -s, "$F" >figures.txt 2>/dev/null || cp "$F" figures.txt
	cat figures.txt
	bad=$(awk -F, '($1 == "tasks_lost" || $1 == "tasks_twice" || $1 == "tasks_unexpected") && $2 != 0' "$F")
	if [ -n "$bad" ]; then
		say "FAILED exactly once: $(echo "$bad" | tr '\n' ' ')"
		return 1
	fi
	return 0
}
