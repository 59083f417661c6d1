#!/usr/bin/env bash
# A RabbitMQ of a test's own (Debian's rabbitmq-server), on its own port
# and node name, with no plugins, for tests that stop and start the
# broker: never the shared one on 5672.
#
#   bash tests/lib/rabbitmq.sh start DIR PORT   # returns once it accepts AMQP connections
#   bash tests/lib/rabbitmq.sh start DIR PORT TLS_PORT CERT KEY CA   # also AMQPS on TLS_PORT
#   bash tests/lib/rabbitmq.sh stop DIR         # stops it (its data stays in DIR)
#   bash tests/lib/rabbitmq.sh clean DIR        # stops it and removes DIR
set -euo pipefail
cmd=${1:?start|stop|clean}; dir=${2:?DIR}

env_for() { # port
  local port=$1
  export RABBITMQ_NODE_PORT=$port RABBITMQ_DIST_PORT=$((port + 20000))
  export RABBITMQ_NODENAME="nmtest$port@localhost"
  export RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
  export RABBITMQ_MNESIA_BASE="$dir/mnesia" RABBITMQ_LOG_BASE="$dir/log"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" RABBITMQ_FEATURE_FLAGS_FILE="$dir/feature_flags"
  export ERL_EPMD_ADDRESS=127.0.0.1
}

# Whether the broker on `port` answers an AMQP 0-9-1 protocol header with
# its Connection.Start (a method frame, type 1): it then takes logins.
amqp_answers() {
  python3 - "$1" <<'PY' 2>/dev/null
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)
s.settimeout(2)
s.sendall(b"AMQP\x00\x00\x09\x01")
sys.exit(0 if s.recv(1) == b"\x01" else 1)
PY
}

start() {
  local port=${3:?PORT}
  mkdir -p "$dir/mnesia" "$dir/log"
  echo "$port" >"$dir/port"
  echo "[]." >"$dir/enabled_plugins"
  echo "listeners.tcp.local = 127.0.0.1:$port" >"$dir/rabbitmq.conf"
  if [ -n "${4:-}" ]; then
    cat >>"$dir/rabbitmq.conf" <<EOF
listeners.ssl.default = $4
ssl_options.certfile = ${5:?CERT}
ssl_options.keyfile = ${6:?KEY}
ssl_options.cacertfile = ${7:?CA}
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
EOF
  fi
  : >"$dir/rabbitmq-env.conf"
  # rabbitmq-server runs as the rabbitmq user.
  if id rabbitmq >/dev/null 2>&1; then chown -R rabbitmq "$dir"; fi
  env_for "$port"
  setsid rabbitmq-server >>"$dir/server.out" 2>&1 </dev/null &
  for _ in $(seq 1 240); do
    if amqp_answers "$port"; then return 0; fi
    sleep 0.5
  done
  echo "rabbitmq: not up on port $port:" >&2
  tail -n 20 "$dir/server.out" >&2 || true
  exit 1
}

stop() {
  [ -f "$dir/port" ] || return 0
  env_for "$(cat "$dir/port")"
  local port; port=$(cat "$dir/port")
  # The broker (beam.smp, run as the rabbitmq user in a session of its
  # own) is the process listening on the port.
  local pid; pid=$(ss -Hltnp "sport = :$port" | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2)
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
  for _ in $(seq 1 60); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null || return 0
    sleep 0.5
  done
}

case "$cmd" in
  start) start "$@" ;;
  stop) stop ;;
  clean) stop; rm -rf "$dir" ;;
  *) echo "usage: $0 start DIR PORT | stop DIR | clean DIR" >&2; exit 2 ;;
esac
