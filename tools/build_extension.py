"""Build and validate the Waft extension zip with Blender's own extension CLI.

    python tools/build_extension.py [--source-dir .] [--output-dir dist]

The CLI (``blender_ext.py``) ships inside the bpy wheel at
``bpy/<version>/scripts/addons_core/bl_pkg/cli/blender_ext.py``; it is a standard-library script,
so it is located through the package spec without importing bpy (which would start Blender) and
run in a subprocess. The last line printed is the path of the validated zip.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


class BuildError(RuntimeError):
    """The extension CLI is missing or rejected the manifest, the source tree or the zip."""


def find_extension_cli() -> Path:
    """Path of ``blender_ext.py`` in the installed bpy wheel, found without importing bpy."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("bpy is not installed in this Python; run tools/bootstrap.sh first")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
        if found:
            return found[-1]
    raise BuildError(f"no extension CLI (blender_ext.py) under {spec.submodule_search_locations}")


def manifest_id_version(source_dir: Path) -> tuple[str, str]:
    with open(source_dir / "blender_manifest.toml", "rb") as f:
        manifest = tomllib.load(f)
    return manifest["id"], manifest["version"]


def run_cli(cli: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(cli), *args], capture_output=True, text=True, check=False
    )
    output = proc.stdout + proc.stderr
    # The CLI reports some problems as FATAL_ERROR lines; treat them as failures whatever the rc.
    if proc.returncode != 0 or "FATAL_ERROR" in output:
        command = " ".join(args)
        raise BuildError(f"blender_ext.py {command} failed (rc {proc.returncode}):\n{output}")
    return output


def build(source_dir: Path = REPO_ROOT, output_dir: Path | None = None) -> Path:
    """Validate the source tree, build ``<output_dir>/<id>-<version>.zip``, validate the zip."""
    source_dir = Path(source_dir).resolve()
    output_dir = Path(output_dir or source_dir / "dist").resolve()
    if not (source_dir / "__init__.py").is_file():
        raise BuildError(f"{source_dir} has no __init__.py: it is not an add-on package yet")
    cli = find_extension_cli()
    ext_id, version = manifest_id_version(source_dir)
    zip_path = output_dir / f"{ext_id}-{version}.zip"
    output_dir.mkdir(parents=True, exist_ok=True)
    # A stale zip must never be mistaken for this build's output.
    zip_path.unlink(missing_ok=True)
    run_cli(cli, "validate", str(source_dir))
    run_cli(cli, "build", "--source-dir", str(source_dir), "--output-dir", str(output_dir))
    if not zip_path.is_file():
        raise BuildError(f"the build reported success but {zip_path} does not exist")
    run_cli(cli, "validate", str(zip_path))
    return zip_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=Path, default=REPO_ROOT)
    parser.add_argument("--output-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        zip_path = build(args.source_dir, args.output_dir)
    except BuildError as exc:
        print(f"build_extension: {exc}", file=sys.stderr)
        return 1
    print(f"build_extension: validated {zip_path.name} with {find_extension_cli()}")
    print(zip_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
