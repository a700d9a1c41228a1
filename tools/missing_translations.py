"""List the UI texts Waft registers that have no Japanese or Chinese translation yet.

    .venv/bin/python tools/missing_translations.py [--zip dist/waft-0.1.0.zip]

Installs the zip in a throwaway Blender user directory, reads every label, tooltip and enum item
the add-on registered (tools/ui_strings.py) and prints, as Python ready to paste into
``addon/translation_table.py``, each one missing from ``MESSAGES``, then the entries of the table
nothing uses any more. Exit status 1 when anything is missing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tools"))

import blender_env

bpy = blender_env.import_bpy_isolated()

import build_extension
import ui_strings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", type=Path, help="the extension zip (default: build one)")
    args = parser.parse_args(argv)
    zip_path = args.zip or build_extension.build(REPO_ROOT, REPO_ROOT / "dist")
    module_name, _ = blender_env.install_extension(zip_path)
    table = importlib.import_module(f"{module_name}.addon.translation_table").MESSAGES
    used = ui_strings.all_texts(module_name)
    missing = sorted(used - set(table))
    for text in missing:
        print(f"    {text!r}: (\n        {'TODO ja_JP'!r},\n        {'TODO zh_HANS'!r}),")
    unused = sorted(set(table) - used)
    for text in unused:
        print(f"# no longer shown: {text!r}", file=sys.stderr)
    print(f"{len(missing)} missing, {len(unused)} unused, {len(used)} texts", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
