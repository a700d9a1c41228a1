#!/usr/bin/env bash
# The main job: set up, build and validate the extension, then build, bake, save and render
# every sample (out/<sample>.blend, out/<sample>.png) and print a summary table.
#
#   bash tools/main.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash tools/bootstrap.sh .venv "bpy==5.0.1"
PY=.venv/bin/python

ZIP="$("$PY" tools/build_extension.py --output-dir dist | tail -n 1)"
echo "main: extension zip $ZIP"

"$PY" samples/run_all.py --zip "$ZIP" --out out
