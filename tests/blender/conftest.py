"""Fixtures for tests that run the real Blender (the bpy wheel) with Waft installed from its zip.

- ``waft`` (session): the installed add-on module (``bl_ext.<repo>.waft``), installed once from
  the zip into the throwaway user dir the root conftest set up before bpy was imported.
- ``waft_module_name`` (session): that module's name, for ``addon_utils`` checks.
- ``bake_api`` (session): ``waft.addon.bake_api`` of the installed add-on.
- ``scene`` (function): a fresh empty file's scene, with the add-on checked to be still enabled.
- ``rigify_human`` (function): a freshly generated Rigify human (``real_rigs.rigify_human``) in
  an otherwise empty file; the rig is generated once per session (``rigify_human_file``, about
  10 CPU-s each time) and every test opens its own copy of the saved file.

Every test in this folder is marked ``blender``. Without bpy the folder is skipped as a whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

bpy = pytest.importorskip("bpy", reason="the Blender tests need the bpy wheel")

import blender_env  # noqa: E402  (tools/ is put on sys.path by tests/conftest.py)

HERE = Path(__file__).resolve().parent
# Whole systems that also run on bpy 4.2 LTS in tools/test.sh (`-m compat`), beside the tests
# marked one by one: cloth-bones, ragdolls, the strand-hair guide tests and the user-animation
# contracts (legacy actions on 4.2, slotted on 5.x; about 15 s there).
COMPAT_ON_42 = ("cloth", "ragdoll", "test_hair_guides.py", "test_user_animation_contract.py",
                "test_user_nla_contract.py")
# Not on 4.2: the files that import a glTF. Blender 4.2's own glTF importer segfaults in its
# `mode_set(mode="EDIT")` (create_bones) once a long process has run other tests first (seen
# in CI and in one sequential 4.2 run; each file alone passes), and the crash took the whole
# compat run with it. What they test of Waft (Create Ragdoll on a glTF rig) runs on 5.0.
NOT_ON_42 = ("ragdoll/test_ragdoll_gltf_humanoid.py", "ragdoll/test_ragdoll_ground_radius.py")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: the marker must be there before `-m` selection runs.
    for item in items:
        path = Path(item.path).resolve()
        if path.is_relative_to(HERE):
            item.add_marker(pytest.mark.blender)
            if (any(path.is_relative_to(HERE / part) for part in COMPAT_ON_42)
                    and not any(path == HERE / part for part in NOT_ON_42)):
                item.add_marker(pytest.mark.compat)


@pytest.fixture(scope="session")
def _installed(waft_zip: Path):
    return blender_env.install_extension(waft_zip)


@pytest.fixture(scope="session")
def waft_module_name(_installed) -> str:
    return _installed[0]


@pytest.fixture(scope="session")
def waft(_installed):
    return _installed[1]


@pytest.fixture(scope="session")
def bake_api(waft_module_name: str):
    return blender_env.bake_api(waft_module_name)


@pytest.fixture
def scene(waft_module_name: str):
    blender_env.reset_to_empty_file()
    assert blender_env.is_enabled(waft_module_name), "resetting the file disabled the add-on"
    return bpy.context.scene


@pytest.fixture(scope="session")
def rigify_human_file(waft_module_name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import real_rigs

    return real_rigs.save_rigify_human(tmp_path_factory.mktemp("rigify") / "rigify_human.blend")


@pytest.fixture
def rigify_human(waft_module_name: str, rigify_human_file: Path):
    import real_rigs

    rig = real_rigs.open_rigify_human(rigify_human_file)
    assert blender_env.is_enabled(waft_module_name), "opening the file disabled the add-on"
    return rig
