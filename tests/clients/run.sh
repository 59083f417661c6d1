#!/usr/bin/env bash
# The real OpenStack clients against `nodemaint serve`, on SQLite and, when
# NODEMAINT_TEST_POSTGRES_URL / NODEMAINT_TEST_MYSQL_URL are set, PostgreSQL
# and MariaDB (under CI both must be set). Installs python-ironicclient,
# python-openstackclient and openstacksdk from PyPI into a virtual
# environment cached by requirements, and this repository's client package
# (client/) into it afresh on every run: check.py drives the clients' own
# commands, plugin.py the package's.
#
#   bash tests/clients/run.sh [path/to/nodemaint]
#   bash tests/clients/run.sh --venv     # install only; print the venv's path
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=""
[ "${1:-}" = --venv ] || bin=$(realpath "${1:-target/debug/nodemaint}")
here=tests/clients
hash=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=${NODEMAINT_CLIENT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nodemaint/clients-$hash}
. tests/lib/venv.sh
. tests/lib/serve.sh
cached_venv clients "$here/requirements.txt" "$venv"

# Under the venv's lock: tests may ask for the venv at the same time.
flock "$venv.lock" "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall ./client

# `run.sh --venv`: only make sure the clients are installed, and say where
# (the keystone and Ironic tests run the real client from there).
if [ "${1:-}" = --venv ]; then echo "$venv"; exit 0; fi

work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill -TERM "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

backends=(sqlite)
for var in NODEMAINT_TEST_POSTGRES_URL NODEMAINT_TEST_MYSQL_URL; do
  if [ -n "${!var:-}" ]; then backends+=("$var"); elif [ -n "${CI:-}" ]; then
    echo "clients: $var is not set: CI must run every backend" >&2; exit 1; fi
done

for backend in "${backends[@]}"; do
  name="nodemaint_clients_$(date +%s)_$$"
  case $backend in
    sqlite) url="sqlite://$work/$name.db"; drop=(true) ;;
    NODEMAINT_TEST_POSTGRES_URL)
      server_url=${NODEMAINT_TEST_POSTGRES_URL%/}; url="$server_url/$name"
      psql "$server_url/postgres" -qc "CREATE DATABASE $name"
      drop=(psql "$server_url/postgres" -qc "DROP DATABASE $name WITH (FORCE)") ;;
    NODEMAINT_TEST_MYSQL_URL)
      server_url=${NODEMAINT_TEST_MYSQL_URL%/}; url="$server_url/$name"
      hostport=${server_url#mysql://*@}; user=${server_url#mysql://}; user=${user%@*}
      mariadb -h "${hostport%:*}" -P "${hostport#*:}" -u "$user" -e "CREATE DATABASE $name"
      drop=(mariadb -h "${hostport%:*}" -P "${hostport#*:}" -u "$user" -e "DROP DATABASE $name") ;;
  esac
  label=$backend; label=${label#NODEMAINT_TEST_}; label=${label%_URL}
  echo "clients: ${label,,}"
  "$bin" --database-url "$url" -q db upgrade
  "$bin" --database-url "$url" -q node create --name myNode >/dev/null
  log="$work/serve-$name.log"
  start_serve "$bin" "$url" "$log" --tick-interval 1
  server=$serve_pid addr=$serve_addr
  status=0
  "$venv/bin/python" "$here/check.py" "$addr" "$bin" "$url" || status=$?
  [ "$status" != 0 ] || "$venv/bin/python" "$here/plugin.py" "$addr" "$bin" "$url" || status=$?
  kill -TERM "$server"; wait "$server" || { echo "clients: serve did not stop cleanly" >&2; status=1; }
  server=""
  "${drop[@]}"
  if [ "$status" != 0 ]; then echo "clients: FAILED on ${label,,}; server log:" >&2; tail -n 30 "$log" >&2; exit "$status"; fi
done
echo "clients: python-ironicclient, openstacksdk and nodemaint-client passed on ${#backends[@]} backends"
