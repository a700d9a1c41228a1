"""Test set-up shared by every folder.

- The checkout is importable as the package ``waft`` (so ``waft.core`` is the solver under
  test), loaded from the repository's own ``__init__.py``, which imports bpy only inside
  ``register()``.
- Blender is isolated: ``BLENDER_USER_RESOURCES`` points to a throwaway directory before any
  test module can ``import bpy`` (conftest files are imported before test modules).
- ``waft_zip``: the extension zip under test (``$WAFT_ZIP`` from tools/test.sh, or built once).
- ``WAFT_REQUIRE_BPY=1`` (set by tools/test.sh) turns a missing bpy into an error instead of
  a skipped folder, so CI cannot pass without running the Blender tests.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import types
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOLS_DIR = REPO_ROOT / "tools"
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

import blender_env  # noqa: E402  (needs tools/ on sys.path)
import build_extension  # noqa: E402


def _checkout_package() -> types.ModuleType:
    """Register the repository root as package ``waft`` (idempotent)."""
    existing = sys.modules.get("waft")
    if existing is not None:
        if REPO_ROOT in [Path(p).resolve() for p in getattr(existing, "__path__", [])]:
            return existing  # e.g. a folder conftest already did it
        # Another copy (a `pip install .` in the venv) must not shadow the code under test.
        for name in [m for m in sys.modules if m == "waft" or m.startswith("waft.")]:
            del sys.modules[name]
    init = REPO_ROOT / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(
            "waft", init, submodule_search_locations=[str(REPO_ROOT)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["waft"] = module
        spec.loader.exec_module(module)
    else:  # the root module is not written yet: a bare namespace still gives waft.core
        module = types.ModuleType("waft")
        module.__path__ = [str(REPO_ROOT)]
        sys.modules["waft"] = module
    return module


_checkout_package()

BPY_AVAILABLE = importlib.util.find_spec("bpy") is not None
_OWN_USER_DIR: Path | None = None
if "bpy" not in sys.modules:
    _OWN_USER_DIR = blender_env.use_throwaway_user_dir()


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("WAFT_REQUIRE_BPY") == "1" and not BPY_AVAILABLE:
        raise pytest.UsageError(
            "WAFT_REQUIRE_BPY=1 but bpy is not installed in this Python; run tools/bootstrap.sh"
        )


def pytest_report_header(config: pytest.Config) -> str:
    if not BPY_AVAILABLE:
        return "waft: bpy not importable; Blender tests are skipped"
    return f"waft: Blender user resources in {os.environ.get(blender_env.USER_RESOURCES_ENV)}"


_EXIT_STATUS: int | None = None


# Files that run for minutes, longest first: started first, so that in pytest-xdist workers
# (tools/test.sh, with --no-loadscope-reorder) the others fill the other cores meanwhile and
# the run ends on short files. Ordered by their number of tests (xdist's default), the one-test
# determinism file came last and the run waited five minutes for its bakes alone. CPU seconds
# per file, session 44 (tests/core/ragdoll and tests/core/cloth come after tests/blender in
# collection order, so these would otherwise start in the second half of the run):
SLOW_FIRST = (
    "tests/blender/test_determinism.py",  # ~270 (two Blender processes side by side)
    "tests/core/ragdoll/test_ragdoll_conservation.py",  # ~225
    "tests/core/test_mesh_slide.py",  # ~100 wall (s46: measured under load)
    "tests/blender/ragdoll/test_ragdoll_rigify.py",  # ~87 (its Rigify rig generated once, s45)
    "tests/core/cloth/test_cloth_energy.py",  # ~86
    "tests/blender/ragdoll/test_ragdoll_rigify_audit.py",  # ~70 wall (a Rigify horse, s46)
    "tests/blender/ragdoll/test_ragdoll_physics.py",  # ~53
    "tests/blender/hair_render/test_hair_preview.py",  # ~44
    "tests/blender/ragdoll/test_ragdoll_preview.py",  # ~40
    "tests/core/cloth/test_cloth_presets_fuzz.py",  # ~35
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {(REPO_ROOT / name).resolve(): i for i, name in enumerate(SLOW_FIRST)}
    first = [item for item in items if Path(item.path).resolve() in rank]
    if first:
        chosen = {id(item) for item in first}
        first.sort(key=lambda item: rank[Path(item.path).resolve()])  # stable: file order kept
        items[:] = first + [item for item in items if id(item) not in chosen]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    global _EXIT_STATUS
    _EXIT_STATUS = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if _OWN_USER_DIR is not None:
        shutil.rmtree(_OWN_USER_DIR, ignore_errors=True)
    bpy = sys.modules.get("bpy")
    if bpy is not None and _EXIT_STATUS is not None and bpy.app.version < (4, 3, 0):
        # bpy 4.2 wheels segfault during interpreter shutdown once the installed Waft add-on
        # has registered classes (exit 139 after every test passed; seen with 4.2.23, not 5.0).
        # Everything is reported by now, so leave with pytest's own status instead.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT_STATUS)


@pytest.fixture(scope="session")
def waft_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension zip: ``$WAFT_ZIP`` when given (tools/test.sh builds dist/ first)."""
    given = os.environ.get("WAFT_ZIP")
    if given:
        path = Path(given).resolve()
        if not path.is_file():
            pytest.fail(f"WAFT_ZIP={given} does not exist")
        return path
    if not BPY_AVAILABLE:
        pytest.skip("bpy not installed: Blender's extension CLI ships in the bpy wheel")
    return build_extension.build(REPO_ROOT, tmp_path_factory.mktemp("dist"))
