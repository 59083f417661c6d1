#!/usr/bin/env bash
# Property-based tests of `nodemaint serve` against its OpenAPI document
# (src/server/openapi.yaml) with schemathesis (PyPI, in a cached virtual
# environment): on each configured backend a database with a few nodes, an
# entry and a scheduled window, `serve --auth-strategy noauth`, then every
# documented operation sent generated requests (the document's examples,
# its coverage cases, and random ones, NUL bytes and odd times included).
# Fails on any 5xx (the database is up, so not even the documented 503),
# and on any status, content type or body the document does not allow.
#
#   bash tests/api/schemathesis.sh target/debug/nodemaint [max-examples]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$(realpath "${1:?usage: schemathesis.sh NODEMAINT_BINARY [MAX_EXAMPLES]}")
examples=${2:-40}
hash=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=${NODEMAINT_SCHEMATHESIS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nodemaint/schemathesis-$hash}
. "$here/../lib/venv.sh"
. "$here/../lib/serve.sh"
cached_venv schemathesis "$here/requirements.txt" "$venv"

work=$(mktemp -d)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

urls=("sqlite://$work/api.db")
if [ -n "${NODEMAINT_TEST_POSTGRES_URL:-}" ]; then
  name="nodemaint_schemathesis_$$"
  psql "${NODEMAINT_TEST_POSTGRES_URL}/postgres" -qc "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" >/dev/null
  urls+=("${NODEMAINT_TEST_POSTGRES_URL}/$name")
fi

for url in "${urls[@]}"; do
  nm() { "$bin" --database-url "$url" -q "$@"; }
  nm db upgrade
  nm node create --name n1 --owner p-owner --lessee p-lessee
  nm node create --name n2 --maintenance --reason "legacy reason"
  nm maintenance add n1 --type hardware_failure --reason "disk 3"
  nm maintenance add n1 --type operator_hold --reason "row C" --start +30d --end +31d
  start_serve "$bin" "$url" "$work/serve.log" --tick-interval 0
  base=$serve_addr
  echo "schemathesis: $(echo "$url" | sed 's|//[^@]*@|//|') at $base"
  # Run from the scratch directory: schemathesis keeps a cache in the working directory.
  (cd "$work" && "$venv/bin/schemathesis" run "$root/src/server/openapi.yaml" --url "$base" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing --max-examples "$examples" --seed 20261205 \
    --generation-database none --generation-allow-x00 true --no-color --workers 2)
  kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
done
if [ -n "${name:-}" ]; then
  psql "${NODEMAINT_TEST_POSTGRES_URL}/postgres" -qc "DROP DATABASE IF EXISTS $name" >/dev/null
fi
