#!/usr/bin/env bash
# A real Ironic 39.0.0 (from PyPI, in a virtual environment cached by
# requirements.txt) on loopback, for the wire differential test: one
# all-in-one process (`ironic`: API and conductor, noauth, no message bus,
# fake hardware) configured from ../shared/fixtures/ironic-all-in-one.conf,
# on an SQLite database whose schema `ironic-dbsync create_schema` makes.
#
#   NODEMAINT_IRONIC_DIR=/tmp/ir NODEMAINT_IRONIC_PORT=6391 bash tests/ironic/ironic.sh start
#       makes $NODEMAINT_IRONIC_DIR/ironic.sqlite and prints the API's URL
#   NODEMAINT_IRONIC_DIR=/tmp/ir bash tests/ironic/ironic.sh stop
#       (NODEMAINT_IRONIC_CONF_APPEND=FILE: FILE's settings appended to its ironic.conf)
#   bash tests/ironic/ironic.sh install    # only the virtual environment
#   bash tests/ironic/ironic.sh python     # that, then prints its python (oslo.messaging, kombu)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hash=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=${NODEMAINT_IRONIC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nodemaint/ironic-$hash}
fixtures=${NODEMAINT_IRONIC_SCHEMA_DIR:-$here/../../../shared/fixtures}

. "$here/../lib/venv.sh"
. "$here/../lib/serve.sh"

install() {
  cached_venv ironic "$here/requirements.txt" "$venv"
}

start() {
  local dir=${NODEMAINT_IRONIC_DIR:?set NODEMAINT_IRONIC_DIR}
  local port=${NODEMAINT_IRONIC_PORT:-6391}
  local url="http://127.0.0.1:$port"
  install
  mkdir -p "$dir/locks"
  # The deployer's file, with the database line and this run's port and paths.
  sed -e "s|^\[database\]$|[database]\nconnection = sqlite:///$dir/ironic.sqlite|" \
      -e "s|^port = .*|port = $port|" \
      -e "s|^lock_path = .*|lock_path = $dir/locks|" \
      "$fixtures/ironic-all-in-one.conf" >"$dir/ironic.conf"
  printf '\n[DEFAULT]\nlog_file = %s/ironic.log\n' "$dir" >>"$dir/ironic.conf"
  # A test's own settings (notifications, say), after the deployer's.
  if [ -n "${NODEMAINT_IRONIC_CONF_APPEND:-}" ]; then cat "$NODEMAINT_IRONIC_CONF_APPEND" >>"$dir/ironic.conf"; fi
  if [ ! -f "$dir/ironic.sqlite" ]; then
    "$venv/bin/ironic-dbsync" --config-file "$dir/ironic.conf" create_schema >>"$dir/setup.log" 2>&1 \
      || { echo "ironic: create_schema failed:" >&2; tail -n 30 "$dir/setup.log" >&2; exit 1; }
  fi
  setsid "$venv/bin/ironic" --config-file "$dir/ironic.conf" </dev/null >>"$dir/ironic.out" 2>&1 &
  echo $! >"$dir/ironic.pid"
  for _ in $(seq 1 240); do
    if python3 -c "import urllib.request; urllib.request.urlopen('$url/v1', timeout=1)" 2>/dev/null; then
      echo "$url"
      return 0
    fi
    kill -0 "$(cat "$dir/ironic.pid")" 2>/dev/null || break
    sleep 0.5
  done
  echo "ironic: not answering at $url:" >&2
  tail -n 30 "$dir/ironic.out" "$dir/ironic.log" >&2 || true
  exit 1
}

stop() {
  stop_pidfile ironic "${NODEMAINT_IRONIC_DIR:?set NODEMAINT_IRONIC_DIR}/ironic.pid"
}

case "${1:-}" in
  install) install ;;
  python) install >&2; echo "$venv/bin/python" ;;
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 install|python|start|stop" >&2; exit 2 ;;
esac
