#!/usr/bin/env bash
# A real Keystone (30.0.0 from PyPI, in a virtual environment cached by
# requirements.txt) on loopback, for `serve --auth-strategy keystone`'s
# tests: an SQLite database, fernet tokens, `keystone-manage db_sync`,
# `fernet_setup`, `credential_setup` and `bootstrap` (user admin, password
# $NODEMAINT_KEYSTONE_PASSWORD, default "secret"), served by uwsgi.
#
#   NODEMAINT_KEYSTONE_DIR=/tmp/ks NODEMAINT_KEYSTONE_PORT=5001 bash tests/keystone/keystone.sh start
#       prints the identity endpoint (http://127.0.0.1:5001/v3)
#       with NODEMAINT_KEYSTONE_TLS=DIR (holding server.crt, server.key and the
#       ca.crt that signed them, for the name localhost): served over HTTPS,
#       printing https://localhost:5001/v3
#   NODEMAINT_KEYSTONE_DIR=/tmp/ks bash tests/keystone/keystone.sh stop
#   bash tests/keystone/keystone.sh install    # only the virtual environment
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
hash=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=${NODEMAINT_KEYSTONE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nodemaint/keystone-$hash}

. "$here/../lib/venv.sh"
. "$here/../lib/serve.sh"

install() {
  cached_venv keystone "$here/requirements.txt" "$venv"
}

start() {
  local dir=${NODEMAINT_KEYSTONE_DIR:?set NODEMAINT_KEYSTONE_DIR}
  local port=${NODEMAINT_KEYSTONE_PORT:-5001}
  local password=${NODEMAINT_KEYSTONE_PASSWORD:-secret}
  local tls=${NODEMAINT_KEYSTONE_TLS:-}
  local url="http://127.0.0.1:$port/v3" socket=(--http11-socket "127.0.0.1:$port") cafile=None
  if [ -n "$tls" ]; then
    url="https://localhost:$port/v3"
    socket=(--https-socket "127.0.0.1:$port,$tls/server.crt,$tls/server.key")
    cafile="'$tls/ca.crt'"
  fi
  install
  mkdir -p "$dir/fernet-keys" "$dir/credential-keys"
  cat >"$dir/keystone.conf" <<CONF
[DEFAULT]
log_file = $dir/keystone.log
[database]
connection = sqlite:///$dir/keystone.db
[token]
provider = fernet
expiration = 3600
[fernet_tokens]
key_repository = $dir/fernet-keys
[credential]
key_repository = $dir/credential-keys
[cache]
enabled = false
CONF
  local manage=("$venv/bin/keystone-manage" --config-file "$dir/keystone.conf")
  local owner=(--keystone-user "$(id -un)" --keystone-group "$(id -gn)")
  {
    "${manage[@]}" db_sync
    "${manage[@]}" fernet_setup "${owner[@]}"
    "${manage[@]}" credential_setup "${owner[@]}"
    "${manage[@]}" bootstrap --bootstrap-password "$password" --bootstrap-admin-url "$url" \
      --bootstrap-public-url "$url" --bootstrap-internal-url "$url" --bootstrap-region-id RegionOne
  } >>"$dir/setup.log" 2>&1 || { echo "keystone: set-up failed:" >&2; tail -n 30 "$dir/setup.log" >&2; exit 1; }
  OS_KEYSTONE_CONFIG_FILES="$dir/keystone.conf" setsid "$venv/bin/uwsgi" "${socket[@]}" \
    --module keystone.wsgi.api:application --master --processes 2 --threads 2 --need-app \
    --die-on-term --pidfile "$dir/uwsgi.pid" </dev/null >>"$dir/uwsgi.log" 2>&1 &
  for _ in $(seq 1 120); do
    if python3 -c "import ssl, urllib.request; urllib.request.urlopen('$url', timeout=1, context=ssl.create_default_context(cafile=$cafile))" 2>/dev/null; then
      echo "$url"
      return 0
    fi
    sleep 0.5
  done
  echo "keystone: not answering at $url after 60 s:" >&2
  tail -n 30 "$dir/uwsgi.log" "$dir/keystone.log" >&2 || true
  exit 1
}

stop() {
  stop_pidfile keystone "${NODEMAINT_KEYSTONE_DIR:?set NODEMAINT_KEYSTONE_DIR}/uwsgi.pid"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
