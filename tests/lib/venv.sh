# Sourced by the test scripts that need Python tools from PyPI: builds a
# virtual environment for a requirements file once and reuses it.
#
#   cached_venv NAME REQUIREMENTS VENV
#
# A venv's scripts name their interpreter by path, so it is built in place
# (VENV); a marker says the install finished, and a lock beside it keeps two
# test processes from building it at once (released before anything long
# runs, so no server started later holds it).
cached_venv() {
  local name=$1 requirements=$2 venv=$3
  mkdir -p "$(dirname "$venv")"
  exec 8>"$venv.lock"
  flock 8
  if [ ! -f "$venv/.installed" ]; then
    echo "$name: installing $(grep -v '^#' "$requirements" | xargs) into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
    touch "$venv/.installed"
  fi
  flock -u 8
  exec 8>&-
}
