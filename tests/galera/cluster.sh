#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on loopback, from Debian's packages
# (mariadb-server, galera-4, rsync), for nodemaint's Galera tests.
#
#   bash tests/galera/cluster.sh start    # prints the three URLs
#   bash tests/galera/cluster.sh stop
#   bash tests/galera/cluster.sh status
#   bash tests/galera/cluster.sh kill N   # SIGKILL node N (1-3)
#   bash tests/galera/cluster.sh restart N
#
# Each node has its own data directory under $NODEMAINT_GALERA_DIR
# (default /tmp/nodemaint-galera), SQL port 3311-3313, group port
# 4571-4573, IST port 4581-4583 and SST port 4591-4593 (base port
# $NODEMAINT_GALERA_PORT, default 3310, moves all of them). The servers run
# as the `mysql` user: the rsync state transfer that brings a joiner up
# cannot set file ownership as root. Root connects over TCP without a
# password, as on the default server: mysql://root@127.0.0.1:3311.
set -euo pipefail

dir=${NODEMAINT_GALERA_DIR:-/tmp/nodemaint-galera}
base=${NODEMAINT_GALERA_PORT:-3310}
provider=/usr/lib/galera/libgalera_smm.so

sql_port() { echo $((base + $1)); }
group_port() { echo $((base + 1260 + $1)); }
ist_port() { echo $((base + 1270 + $1)); }
sst_port() { echo $((base + 1280 + $1)); }

need() {
  for tool in mariadbd mariadb-install-db mariadb rsync; do
    command -v "$tool" >/dev/null || { echo "galera: $tool not found; install mariadb-server, galera-4 and rsync" >&2; exit 1; }
  done
  [ -f "$provider" ] || { echo "galera: $provider not found; install galera-4" >&2; exit 1; }
  id mysql >/dev/null 2>&1 || { echo "galera: no mysql user; install mariadb-server" >&2; exit 1; }
}

conf() { # node
  local n=$1 peers="" p
  for p in 1 2 3; do peers+="${peers:+,}127.0.0.1:$(group_port "$p")"; done
  cat >"$dir/n$n/my.cnf" <<EOF
[mysqld]
user=mysql
datadir=$dir/n$n/data
socket=$dir/n$n/mysqld.sock
pid-file=$dir/n$n/mysqld.pid
log-error=$dir/n$n/error.log
port=$(sql_port "$n")
bind-address=127.0.0.1
skip-name-resolve
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
innodb_buffer_pool_size=128M
innodb_flush_log_at_trx_commit=2
max_connections=500
wsrep_on=ON
wsrep_provider=$provider
wsrep_cluster_name=nodemaint_test
wsrep_cluster_address=gcomm://$peers
wsrep_node_name=n$n
wsrep_node_address=127.0.0.1:$(group_port "$n")
wsrep_node_incoming_address=127.0.0.1:$(sql_port "$n")
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(group_port "$n");ist.recv_addr=127.0.0.1:$(ist_port "$n");gcache.size=64M"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$(sst_port "$n")
wsrep_slave_threads=2
EOF
}

client() { # node, sql…
  local n=$1; shift
  mariadb --no-defaults -h 127.0.0.1 -P "$(sql_port "$n")" -u root --skip-ssl -N -B -e "$*"
}

state() { # node: the wsrep state comment, or nothing when it does not answer
  client "$1" "SHOW STATUS LIKE 'wsrep_local_state_comment'" 2>/dev/null | cut -f2
}

wait_synced() { # node
  local n=$1
  for _ in $(seq 1 120); do
    if [ "$(state "$n")" = Synced ]; then return 0; fi
    if ! kill -0 "$(cat "$dir/n$n/mysqld.pid" 2>/dev/null || echo 0)" 2>/dev/null && [ -f "$dir/n$n/started" ] \
       && [ "$(( $(date +%s) - $(cat "$dir/n$n/started") ))" -gt 10 ]; then
      echo "galera: node $n exited; its log:" >&2; tail -n 30 "$dir/n$n/error.log" >&2; return 1
    fi
    sleep 0.5
  done
  echo "galera: node $n not Synced after 60 s; its log:" >&2
  tail -n 30 "$dir/n$n/error.log" >&2
  return 1
}

launch() { # node, extra args…
  local n=$1; shift
  rm -f "$dir/n$n/mysqld.pid"
  date +%s >"$dir/n$n/started"
  # setsid: the server outlives this script and the test that ran it. 9>&-:
  # it must not inherit the start lock, or it would hold it for its whole
  # life and every later `start` would wait on it forever.
  setsid /usr/sbin/mariadbd --defaults-file="$dir/n$n/my.cnf" "$@" </dev/null >>"$dir/n$n/stdout.log" 2>&1 9>&- &
}

start() {
  need
  # One start at a time: test processes start the cluster as they need it.
  exec 9>"$dir.lock"
  flock -w 600 9 || { echo "galera: another start has held $dir.lock for 10 minutes; giving up" >&2; exit 1; }
  if [ "$(state 1)" = Synced ] && [ "$(state 2)" = Synced ] && [ "$(state 3)" = Synced ]; then
    urls; return 0
  fi
  stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  mkdir -p "$dir"
  chmod 755 "$dir"
  for n in 1 2 3; do
    mkdir -p "$dir/n$n/data"
    conf "$n"
  done
  chown -R mysql:mysql "$dir"
  mariadb-install-db --no-defaults --user=mysql --datadir="$dir/n1/data" --skip-test-db \
    --auth-root-authentication-method=normal >"$dir/n1/install.log" 2>&1 \
    || { echo "galera: mariadb-install-db failed:" >&2; tail -n 20 "$dir/n1/install.log" >&2; exit 1; }
  launch 1 --wsrep-new-cluster
  wait_synced 1
  # Root over TCP from loopback without a password (skip-name-resolve
  # matches 127.0.0.1, not localhost); replicated to the joiners.
  mariadb --no-defaults -S "$dir/n1/mysqld.sock" -u root -e \
    "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;"
  for n in 2 3; do
    launch "$n"
    wait_synced "$n"
  done
  local size
  size=$(client 1 "SHOW STATUS LIKE 'wsrep_cluster_size'" | cut -f2)
  [ "$size" = 3 ] || { echo "galera: cluster size is $size, not 3" >&2; exit 1; }
  urls
}

urls() {
  for n in 1 2 3; do echo "mysql://root@127.0.0.1:$(sql_port "$n")"; done
}

stop() {
  local n pid
  for n in 3 2 1; do
    pid=$(cat "$dir/n$n/mysqld.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

status() {
  for n in 1 2 3; do
    echo "node $n ($(sql_port "$n")): $(state "$n" || true)"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  kill) kill -KILL "$(cat "$dir/n$2/mysqld.pid")" ;;
  restart) launch "$2"; wait_synced "$2" ;;
  *) echo "usage: $0 start|stop|status|kill N|restart N" >&2; exit 2 ;;
esac
