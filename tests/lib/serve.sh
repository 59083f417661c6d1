# Sourced by the test scripts that drive a running `nodemaint serve`.
#
#   start_serve BINARY DATABASE_URL LOG [EXTRA SERVE ARGS…]
#       starts `serve --auth-strategy noauth` on a free loopback port, logging
#       to LOG; sets serve_pid and serve_addr (http://127.0.0.1:PORT), or
#       prints the log and fails when it does not start within 10 s
#   stop_pidfile NAME PIDFILE
#       stops the process group whose leader's pid is in PIDFILE (TERM, then
#       KILL after 10 s)
start_serve() {
  local bin=$1 url=$2 log=$3
  shift 3
  RUST_LOG=info "$bin" --database-url "$url" serve --auth-strategy noauth --bind 127.0.0.1:0 "$@" 2>"$log" &
  serve_pid=$!
  serve_addr=""
  for _ in $(seq 1 100); do
    serve_addr=$(grep -o 'listening on http://[0-9.:]*' "$log" | head -n1 | sed 's/listening on //') || true
    [ -n "$serve_addr" ] && return 0
    sleep 0.1
  done
  echo "nodemaint serve did not start:" >&2
  cat "$log" >&2
  return 1
}

stop_pidfile() {
  local pid
  pid=$(cat "$2" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.25; done
    echo "$1: still running after 10 s; killing it" >&2
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
}
