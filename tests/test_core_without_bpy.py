"""``waft.core`` works where Blender does not exist (a studio pipeline with only NumPy)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CORE = REPO_ROOT / "core"
BLENDER_MODULES = {"bpy", "mathutils", "bmesh", "bpy_extras", "addon_utils", "gpu", "bl_math"}

# Setting sys.modules[name] = None makes `import name` raise ImportError, as if not installed.
BLOCK_BLENDER = textwrap.dedent(
    f"""
    import sys
    for _name in {sorted(BLENDER_MODULES)!r}:
        sys.modules[_name] = None
    """
)

LOAD_CHECKOUT_AS_WAFT = textwrap.dedent(
    """
    import importlib.util, sys
    _spec = importlib.util.spec_from_file_location(
        "waft", sys.argv[1] + "/__init__.py", submodule_search_locations=[sys.argv[1]])
    _waft = importlib.util.module_from_spec(_spec)
    sys.modules["waft"] = _waft
    _spec.loader.exec_module(_waft)
    """
)

# Physical checks on the README example's variables: the chain fell under gravity, kept its
# segment lengths, and its root stayed exactly on the reference.
CHECK_EXAMPLE = textwrap.dedent(
    """
    import numpy as np
    x = result.positions
    assert x.shape == (48, 1, 5, 3), x.shape
    assert np.all(np.isfinite(x))
    seg = np.linalg.norm(np.diff(x[:, 0], axis=1), axis=-1)
    # Swinging from horizontal with one XPBD pass per 1/240 s substep stretches ~1 %; a chain
    # without working distance constraints would free-fall by metres.
    assert np.all(np.abs(seg / 0.1 - 1.0) < 0.02), seg.max()
    assert np.array_equal(x[:, 0, 0], np.broadcast_to(rest[0], (48, 3)))
    # Hanging straight down the tip would be at 1.0 - 0.4 m; it must swing well below its start
    # and never below the fully stretched length.
    assert tip_height.min() < 0.75, tip_height.min()
    assert tip_height.min() > 0.6 - 0.005, tip_height.min()
    assert "bpy" not in [m for m, v in sys.modules.items() if v is not None]
    print("CORE_OK")
    """
)


def readme_core_example() -> str:
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- core-example.*?-->\s*```python\n(.*?)```", text, re.S)
    assert match, "README.md lost its core example block (marked <!-- core-example -->)"
    return match.group(1)


def run_python(code: str, *args: str, cwd: Path | None = None, env=None):
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        check=False,
    )


def test_readme_example_bakes_a_chain_with_bpy_and_mathutils_blocked():
    code = BLOCK_BLENDER + LOAD_CHECKOUT_AS_WAFT + readme_core_example() + CHECK_EXAMPLE
    proc = run_python(code, str(REPO_ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "CORE_OK" in proc.stdout
    assert "lowest tip height" in proc.stdout


def test_blocking_works():
    """The blocker itself must make `import bpy` fail, or the test above proves nothing."""
    proc = run_python(BLOCK_BLENDER + "import bpy")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr or "ModuleNotFoundError" in proc.stderr


def _blender_imports(path: Path, core_root: Path = CORE) -> list[str]:
    """Blender modules imported by ``path``, and relative imports that leave ``core/``."""
    rel_parts = path.relative_to(core_root).parts
    depth = len(rel_parts) - 1  # packages below core/ that contain this file
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in BLENDER_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").split(".")[0] in BLENDER_MODULES:
                found.append(node.module)
            elif node.level > depth + 1:
                found.append("." * node.level + (node.module or "") + " (outside core/)")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module",
                                                                               "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).split(".")[0] in BLENDER_MODULES
        ):
            found.append(f"dynamic import of {node.args[0].value}")
    return found


def test_no_core_module_imports_blender():
    files = sorted(CORE.rglob("*.py"))
    assert len(files) >= 5, "core/ should hold the solver modules"
    offenders = {str(p.relative_to(REPO_ROOT)): _blender_imports(p) for p in files}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_import_checker_catches_offenders(tmp_path):
    """Guard against a checker that can never fail."""
    fake = tmp_path / "core"
    (fake / "constraints").mkdir(parents=True)
    probe = fake / "constraints" / "probe.py"
    probe.write_text(
        "import bpy\nfrom mathutils import Vector\nfrom ...addon import x\nfrom ..errors import e\n"
    )
    found = _blender_imports(probe, core_root=fake)
    assert found == ["bpy", "mathutils", "...addon (outside core/)"]


def test_module_paths_from_before_the_strands_package_still_import():
    """Scripts written before bone chains moved into ``core.strands`` keep working: the old
    module paths give the same objects as the new ones."""
    code = BLOCK_BLENDER + LOAD_CHECKOUT_AS_WAFT + (
        "import waft.core as c\n"
        "from waft.core.solver import SolverSettings, bake\n"
        "from waft.core.drive import Drive\n"
        "from waft.core.model import ChainRest, build_strand_model\n"
        "from waft.core.params import StrandParams\n"
        "from waft.core.bone_frames import chain_pose_rotations\n"
        "from waft.core.constraints.distance import project_pair\n"
        "import waft.core.strands.bone_frames as bf, waft.core.strands.constraints.distance as d\n"
        "assert (SolverSettings, bake, Drive, ChainRest, build_strand_model, StrandParams) == ("
        "c.SolverSettings, c.bake, c.Drive, c.ChainRest, c.build_strand_model, c.StrandParams)\n"
        "assert chain_pose_rotations is bf.chain_pose_rotations\n"
        "assert project_pair is d.project_pair\n"
        "print('OLD_PATHS_OK')\n"
    )
    proc = run_python(code, str(REPO_ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "OLD_PATHS_OK" in proc.stdout


def test_pyproject_lists_every_core_and_batch_package():
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    on_disk = {"waft"} | {
        ".".join(("waft", *p.parent.relative_to(REPO_ROOT).parts))
        for folder in (CORE, REPO_ROOT / "batch") for p in folder.rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert listed == on_disk


@pytest.mark.slow
def test_pip_install_gives_waft_core_without_bpy(tmp_path):
    """`pip install .` (from a copy, so the checkout stays clean) gives an importable waft.core."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "__init__.py"):
        shutil.copy2(REPO_ROOT / name, src / name)
    for folder in ("core", "batch"):
        shutil.copytree(REPO_ROOT / folder, src / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
         str(target), str(src)],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert pip.returncode == 0, pip.stderr
    assert not (target / "waft" / "addon").exists()  # bpy-only folders are not installed
    env = dict(os.environ, PYTHONPATH=str(target))
    code = BLOCK_BLENDER + readme_core_example() + CHECK_EXAMPLE + (
        "import waft; print('WAFT_FILE', waft.__file__)"
    )
    proc = run_python(code, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "CORE_OK" in proc.stdout
    assert f"WAFT_FILE {target}" in proc.stdout
    # The batch command comes with it, and answers --help without Blender or Dask loaded.
    batch = subprocess.run([sys.executable, "-m", "waft.batch", "bake", "--help"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=120, check=False)
    assert batch.returncode == 0 and "--scheduler ADDRESS" in batch.stdout, batch.stderr
