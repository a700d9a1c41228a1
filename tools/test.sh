#!/usr/bin/env bash
# The tests (also what CI runs):
#   1. bpy 5.0.1 in .venv: build + validate the zip, then every test (pytest, tests/).
#   2. bpy 4.2 LTS in .venv42: the same zip, the tests marked `compat` (install + a full bake).
# Blender tests are never skipped here: WAFT_REQUIRE_BPY=1 makes a missing bpy an error, and a
# pytest run that collects no test (exit 5) fails the script.
#
#   bash tools/test.sh [extra pytest args for the main run]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export WAFT_REQUIRE_BPY=1
export PYTHONDONTWRITEBYTECODE=1  # keep __pycache__ out of the source tree the zip is built from

bash tools/bootstrap.sh .venv "bpy==5.0.1"
ZIP="$(.venv/bin/python tools/build_extension.py --output-dir dist | tail -n 1)"
export WAFT_ZIP="$ZIP"
echo "test: extension zip $WAFT_ZIP"

status=0
.venv/bin/python -m pytest "$@" || status=$?
if [[ $status -ne 0 ]]; then
  echo "test: pytest (bpy 5.0.1) failed with exit code $status" >&2
  exit "$status"
fi

if [[ "${WAFT_SKIP_COMPAT:-0}" == "1" ]]; then
  echo "test: WAFT_SKIP_COMPAT=1, the bpy 4.2 compat run was skipped" >&2
  exit 0
fi

bash tools/bootstrap.sh .venv42 "bpy==4.2.*"
status=0
.venv42/bin/python -m pytest -m compat tests || status=$?
if [[ $status -ne 0 ]]; then
  echo "test: pytest -m compat (bpy 4.2) failed with exit code $status" >&2
  exit "$status"
fi
echo "test: all passed (bpy 5.0.1 full run, bpy 4.2 compat run)"
