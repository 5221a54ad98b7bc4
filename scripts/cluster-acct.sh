#!/bin/sh
# cluster-acct.sh - accounting for scripts/cluster.sh (sourced by it, not
# run): a private MariaDB and slurmdbd per instance.
#
# ACCOUNTING (SATURN_ACCOUNTING=1; packages mariadb-server-core,
# mariadb-client-core and slurmdbd from Debian, see scripts/install-deps.sh):
# `start` runs a MariaDB server of the instance's own (datadir $D/db/data,
# socket $D/db/mysqld.sock, TCP on 127.0.0.1:SATURN_DB_PORT only, running as
# root; no system service is started or touched), then slurmdbd on
# SATURN_DBD_PORT (StorageType=accounting_storage/mysql, database
# slurm_acct_db, a database user of its own with a random password in the
# 0600 $D/etc/slurmdbd.conf), adds cluster "saturn", account "saturn" and
# SATURN_ACCOUNTING_USERS with sacctmgr, and only then slurmctld with
# AccountingStorageType=accounting_storage/slurmdbd and
# AccountingStoreFlags=job_comment. The database is emptied at each start
# (like the rest of the instance) but its files are kept, so later starts skip
# mariadb-install-db. `stop` stops slurmdbd after slurmctld (which flushes
# its job records first) and MariaDB last but munged. Ports default inside
# the instance's block of 10 (slurmctld PORT, slurmd PORT+1..PORT+NODES), so
# parallel clusters 10 ports apart never collide. MariaDB runs small (32 MB
# buffer pool, 16 MB log): slurmdbd.log says "Database settings not
# recommended values", harmless at this size. Without SATURN_ACCOUNTING
# nothing of this runs (AccountingStorageType=accounting_storage/none).

# ---- accounting (SATURN_ACCOUNTING=1): private MariaDB + slurmdbd ----------

DB="$D/db"
DB_SOCK="$DB/mysqld.sock"

# Check the accounting settings and set DBD_PORT, DB_PORT; nothing when
# accounting is off.
acct_settings() {
	case "$ACCT" in
	0 | '') ACCT=0 ;;
	1) ;;
	*) die "SATURN_ACCOUNTING must be 0 or 1, not '$ACCT'" ;;
	esac
	[ "$ACCT" = 1 ] || return 0
	DBD_PORT=${SATURN_DBD_PORT:-$((PORT + 8))}
	DB_PORT=${SATURN_DB_PORT:-$((PORT + 9))}
	is_int "$DBD_PORT" && is_int "$DB_PORT" && is_int "$DB_TIMEOUT" ||
		die "SATURN_DBD_PORT, SATURN_DB_PORT and SATURN_DB_TIMEOUT must be integers"
	for p in "$DBD_PORT" "$DB_PORT"; do
		if [ "$p" -ge "$PORT" ] && [ "$p" -le $((PORT + NODES)) ]; then
			die "port $p (slurmdbd or MariaDB) is one of slurmctld's and slurmd's ports $PORT-$((PORT + NODES)); set SATURN_DBD_PORT and SATURN_DB_PORT"
		fi
	done
	[ "$DBD_PORT" != "$DB_PORT" ] || die "SATURN_DBD_PORT and SATURN_DB_PORT are both $DB_PORT"
	case "${SATURN_ACCOUNTING_ENFORCE:-}" in
	*[!a-z,]*) die "SATURN_ACCOUNTING_ENFORCE must be a comma-separated list such as associations,limits,qos" ;;
	esac
	for b in "$SBIN/slurmdbd" "$(command -v mariadbd || echo /usr/sbin/mariadbd)"; do
		[ -x "$b" ] || die "SATURN_ACCOUNTING=1 but $b is not installed (apt-get install slurmdbd mariadb-server-core mariadb-client-core)"
	done
	for b in mariadb-install-db mariadb sacctmgr; do
		command -v "$b" >/dev/null 2>&1 ||
			die "SATURN_ACCOUNTING=1 but $b is not installed (apt-get install slurmdbd mariadb-server-core mariadb-client-core slurm-client)"
	done
}

# slurm.conf lines for accounting.
acct_conf() {
	if [ "$ACCT" = 1 ]; then
		echo "AccountingStorageType=accounting_storage/slurmdbd"
		echo "AccountingStorageHost=127.0.0.1"
		echo "AccountingStoragePort=$DBD_PORT"
		# Clients and slurmctld find this instance's munged for
		# slurmdbd through AccountingStoragePass, not AuthInfo.
		[ "$AUTH" = munge ] && echo "AccountingStoragePass=socket=$D/munge/munge.socket.2"
		echo "AccountingStorageTRES=gres/gpu"
		echo "AccountingStoreFlags=job_comment"
		[ -z "${SATURN_ACCOUNTING_ENFORCE:-}" ] ||
			echo "AccountingStorageEnforce=$SATURN_ACCOUNTING_ENFORCE"
	else
		echo "AccountingStorageType=accounting_storage/none"
	fi
}

# The instance's MariaDB options: its own files, TCP on 127.0.0.1 only,
# small (a test cluster's accounting fits in a few MB).
db_opts() {
	echo "--no-defaults --datadir=$DB/data --socket=$DB_SOCK --port=$DB_PORT"
	echo "--bind-address=127.0.0.1 --skip-name-resolve --user=root"
	echo "--innodb-buffer-pool-size=32M --innodb-log-file-size=16M"
	echo "--innodb-lock-wait-timeout=900 --skip-log-bin --performance-schema=OFF"
}

db_sql() {
	mariadb --no-defaults --socket="$DB_SOCK" -u root --batch "$@"
}

start_db() {
	mkdir -p "$DB"
	chmod 700 "$DB"
	if [ ! -d "$DB/data/mysql" ]; then
		rm -rf "$DB/data"
		# shellcheck disable=SC2046
		timeout "$DB_TIMEOUT" mariadb-install-db $(db_opts) --auth-root-authentication-method=socket \
			--skip-test-db >"$D/log/mariadb-install.log" 2>&1 ||
			die "mariadb-install-db failed (see $D/log/mariadb-install.log)"
	fi
	rm -f "$DB_SOCK" "$D/run/mariadbd.pid"
	# shellcheck disable=SC2046
	setsid mariadbd $(db_opts) --pid-file="$D/run/mariadbd.pid" \
		--log-error="$D/log/mariadbd.log" >"$D/log/mariadbd.out" 2>&1 </dev/null &
	echo $! >"$D/run/mariadbd.started.pid"
	n=0
	until db_sql -e 'SELECT 1' >/dev/null 2>&1; do
		alive "$(pid_of "$D/run/mariadbd.started.pid")" || {
			tail -n 20 "$D/log/mariadbd.log" >&2 2>/dev/null || true
			die "mariadbd exited at startup (see $D/log/mariadbd.log; port $DB_PORT taken?)"
		}
		[ $n -lt $((DB_TIMEOUT * 5)) ] || die "MariaDB does not answer after ${DB_TIMEOUT}s (see $D/log/mariadbd.log)"
		sleep 0.2
		n=$((n + 1))
	done
	# A fresh database each start (job ids start again at 1), and a
	# password of its own for slurmdbd's user.
	pass=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	db_sql <<EOF || die "cannot prepare the accounting database (see $D/log/mariadbd.log)"
DROP DATABASE IF EXISTS slurm_acct_db;
CREATE DATABASE slurm_acct_db;
CREATE OR REPLACE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
EOF
	umask_old=$(umask)
	umask 077
	cat >"$D/etc/slurmdbd.conf" <<EOF
# Generated by saturn-slurm scripts/cluster.sh for instance $D
AuthType=auth/$AUTH
$([ "$AUTH" = munge ] && echo "AuthInfo=socket=$D/munge/munge.socket.2")
DbdAddr=127.0.0.1
DbdHost=$(hostname -s)
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=$DEBUG
LogFile=$D/log/slurmdbd.log
PidFile=$D/run/slurmdbd.pid
PluginDir=$DEBIAN_PLUGIN_DIR
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
EOF
	umask "$umask_old"
	chmod 600 "$D/etc/slurmdbd.conf"
}

# slurmdbd, then the cluster, account and users (before slurmctld starts, so
# it registers at once).
start_dbd() {
	setsid "$SBIN/slurmdbd" -D >"$D/log/slurmdbd.out" 2>&1 </dev/null &
	echo $! >"$D/run/slurmdbd.started.pid"
	# slurmdbd creates its tables first: tens of seconds on a loaded
	# machine. A deadline on the clock: each sacctmgr try may take seconds.
	end=$(($(date +%s) + DB_TIMEOUT))
	until sq sacctmgr -i add cluster saturn >"$D/log/sacctmgr.out" 2>&1; do
		alive "$(pid_of "$D/run/slurmdbd.started.pid")" || {
			tail -n 20 "$D/log/slurmdbd.log" "$D/log/slurmdbd.out" >&2 2>/dev/null || true
			die "slurmdbd exited at startup (see $D/log/slurmdbd.log)"
		}
		[ "$(date +%s)" -lt "$end" ] || {
			tail -n 5 "$D/log/sacctmgr.out" >&2 2>/dev/null || true
			die "slurmdbd does not answer after ${DB_TIMEOUT}s (see $D/log/slurmdbd.log, $D/log/sacctmgr.out)"
		}
		sleep 1
	done
	sq sacctmgr -i add account saturn Description=saturn Organization=saturn \
		>>"$D/log/sacctmgr.out" 2>&1 || die "sacctmgr add account failed (see $D/log/sacctmgr.out)"
	users=
	for u in ${SATURN_ACCOUNTING_USERS-root saturnuser}; do
		id "$u" >/dev/null 2>&1 && users="$users${users:+,}$u"
	done
	if [ -n "$users" ]; then
		sq sacctmgr -i add user "$users" Account=saturn >>"$D/log/sacctmgr.out" 2>&1 ||
			die "sacctmgr add user $users failed (see $D/log/sacctmgr.out)"
	fi
}

