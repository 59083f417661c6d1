#!/usr/bin/env bash
# The Python binding's tests: installs the package as a user would
# (`pip install ./python`: maturin from PyPI, a release abi3 wheel) into a
# virtual environment, then runs pytest on every backend.
#
#   python/tests/run.sh [NODEMAINT_BINARY]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib/venv.sh
venv=$PWD/target/python-venv
cached_venv python-binding python/tests/requirements.txt "$venv"
echo "python: pip install ./python" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python
export NODEMAINT_BIN=$(realpath "${1:-target/debug/nodemaint}")
# From outside the source tree, so the installed package is what is imported.
cd python/tests
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider .
