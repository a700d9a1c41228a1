"""The extension zip as a user gets it: it validates, holds only the add-on, installs and enables.

Runs on bpy 5.0.1 and, in tools/test.sh's compat run, on bpy 4.2 LTS (with the same zip, so the
4.2 CLI and installer must accept what the 5.0 CLI built).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import build_extension

pytestmark = [pytest.mark.blender, pytest.mark.compat]

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = ("core", "addon", "operators")
OPERATORS = {"bake", "clear_bake", "add_collider", "assign_bones", "apply_preset"}

pytest.importorskip("bpy", reason="Blender's extension CLI and installer come with the bpy wheel")


def _zip_names(zip_path: Path) -> set[str]:
    import zipfile

    with zipfile.ZipFile(zip_path) as zf:
        return {name for name in zf.namelist() if not name.endswith("/")}


def test_zip_validates_with_this_blenders_cli(waft_zip: Path):
    cli = build_extension.find_extension_cli()
    output = build_extension.run_cli(cli, "validate", str(waft_zip))
    assert "Success" in output
    assert waft_zip.name == "waft-0.1.0.zip"


def test_zip_holds_exactly_the_extension(waft_zip: Path):
    expected = {"blender_manifest.toml", "LICENSE", "__init__.py"}
    for folder in PACKAGE_DIRS:
        for path in (REPO_ROOT / folder).rglob("*"):
            rel = path.relative_to(REPO_ROOT)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix != ".pyc":
                expected.add(rel.as_posix())
    names = _zip_names(waft_zip)
    assert {f"{folder}/__init__.py" for folder in PACKAGE_DIRS} <= names
    assert names == expected, (
        f"unexpected in zip: {sorted(names - expected)}; missing: {sorted(expected - names)}"
    )


_INSTALL_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[3])
import blender_env
blender_env.use_throwaway_user_dir(sys.argv[2])   # before bpy, so nothing touches ~/.config
import bpy
import addon_utils  # importable only once bpy has set up Blender's module paths

name, module = blender_env.install_extension(sys.argv[1], repo_module="packaging_test")

def state():
    return {
        "check": list(addon_utils.check(name)),
        "ops": sorted(dir(bpy.ops.waft)),
        "object_props": sorted(k for k in ("waft", "waft_collider")
                               if k in bpy.types.Object.bl_rna.properties.keys()),
    }

out = {"module": name, "module_file": module.__file__, "enabled": state()}
addon_utils.disable(name, default_set=True)
out["disabled"] = state()
addon_utils.enable(name, default_set=True)
out["reenabled"] = state()
print("WAFT_JSON " + json.dumps(out), flush=True)
if bpy.app.version < (4, 3, 0):
    import os
    os._exit(0)  # bpy 4.2 segfaults at interpreter exit after the add-on was registered
"""


@pytest.fixture(scope="module")
def install_report(waft_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Install, disable and re-enable in a fresh process with its own throwaway user dir."""
    user_dir = tmp_path_factory.mktemp("blender-user")
    env = dict(os.environ)
    env.pop("BLENDER_USER_RESOURCES", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _INSTALL_SCRIPT,
            str(waft_zip),
            str(user_dir),
            str(REPO_ROOT / "tools"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("WAFT_JSON ")]
    assert proc.returncode == 0 and lines, f"install script failed:\n{proc.stdout}\n{proc.stderr}"
    report = json.loads(lines[-1].removeprefix("WAFT_JSON "))
    report["user_dir"] = str(user_dir)
    return report


def test_installs_into_the_throwaway_user_dir(install_report: dict):
    assert install_report["module"] == "bl_ext.packaging_test.waft"
    module_file = Path(install_report["module_file"]).resolve()
    assert module_file.is_relative_to(Path(install_report["user_dir"]).resolve())
    assert module_file.name == "__init__.py"


def test_enabled_after_install_with_operators_and_properties(install_report: dict):
    enabled = install_report["enabled"]
    assert enabled["check"] == [True, True]
    assert set(enabled["ops"]) >= OPERATORS, enabled["ops"]
    assert enabled["object_props"] == ["waft", "waft_collider"]


def test_disable_removes_operators_and_properties(install_report: dict):
    disabled = install_report["disabled"]
    assert disabled["check"][1] is False
    assert not OPERATORS & set(disabled["ops"]), disabled["ops"]
    assert disabled["object_props"] == []


def test_reenable_restores_everything(install_report: dict):
    assert install_report["reenabled"] == install_report["enabled"]
