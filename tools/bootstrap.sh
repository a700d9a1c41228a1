#!/usr/bin/env bash
# Create (or reuse) a Python 3.11 virtual environment with the Blender wheel and test tools.
#
#   bash tools/bootstrap.sh [VENV] [BPY_SPEC]     defaults: .venv  bpy==5.0.1
#
# Idempotent: a stamp file inside the venv records what was installed; when it matches and
# bpy imports, nothing is downloaded and the script returns in well under a second.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${1:-.venv}"
BPY_SPEC="${2:-bpy==5.0.1}"
case "$VENV" in /*) ;; *) VENV="$REPO_ROOT/$VENV" ;; esac

PYTHON="${WAFT_PYTHON:-python3.11}"
# numpy<2: the 4.5/5.0 wheels pin numpy<2 and the solver supports numpy 1.26 (blender-api.md §8).
# dask[distributed] + bokeh: batch baking (`python -m waft.batch`) and its dashboard; pillow:
# the main job's animated previews; pytest-xdist: tools/test.sh runs the tests in one worker
# per core; pytest-timeout: a test that hangs (a Blender crash left a worker waiting) fails with
# every thread's stack instead of running into CI's limit.
PACKAGES=("$BPY_SPEC" "numpy<2" "pytest" "pytest-xdist" "pytest-timeout" "hypothesis" "ruff"
          "dask[distributed]>=2024.12" "bokeh>=3.1" "pillow")
STAMP="$VENV/.waft-bootstrap"
WANT="${PACKAGES[*]}"

if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  # Importing bpy's package spec is enough to prove the wheel is there, without loading Blender.
  if "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('bpy') is None)"; then
    echo "bootstrap: $VENV is ready ($WANT)"
    exit 0
  fi
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "bootstrap: $PYTHON not found; the bpy wheels need Python 3.11 (apt install python3.11 python3.11-venv)" >&2
  exit 1
fi

echo "bootstrap: creating $VENV with $PYTHON and installing: $WANT"
if [[ ! -x "$VENV/bin/python" ]]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "${PACKAGES[@]}"
"$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('bpy') is None)" || {
  echo "bootstrap: bpy is not importable in $VENV after install" >&2
  exit 1
}
printf '%s' "$WANT" > "$STAMP"
echo "bootstrap: $VENV ready"
