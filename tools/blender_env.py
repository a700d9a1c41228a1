"""Run the real Blender (the bpy wheel) with Waft installed from its zip, as a user would.

Used by the tests, the samples and the benchmarks::

    import blender_env                                  # tools/ must be on sys.path
    bpy = blender_env.import_bpy_isolated()             # throwaway user dir, THEN import bpy
    module_name, waft = blender_env.install_extension(zip_path)
    bake_api = blender_env.bake_api(module_name)

Order matters: Blender reads ``BLENDER_USER_RESOURCES`` once, when bpy is imported, and puts its
config, extension repos and user scripts there, so the variable must point to a fresh directory
before ``import bpy`` or the install would land in the real user's Blender configuration.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parent.parent
USER_RESOURCES_ENV = "BLENDER_USER_RESOURCES"
DEFAULT_REPO_MODULE = "waft_local"


class BlenderEnvError(RuntimeError):
    """Blender could not be isolated, or the extension did not install and enable."""


def use_throwaway_user_dir(path: str | os.PathLike | None = None) -> Path:
    """Point Blender's user resources at ``path`` (a new temp dir by default); before bpy."""
    if "bpy" in sys.modules:
        current = os.environ.get(USER_RESOURCES_ENV)
        if current and (path is None or Path(path).resolve() == Path(current).resolve()):
            return Path(current)
        raise BlenderEnvError(
            f"bpy was imported before {USER_RESOURCES_ENV} was set; Blender would use the real "
            "user configuration. Call use_throwaway_user_dir() before `import bpy`."
        )
    user_dir = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="waft-user-"))
    user_dir.mkdir(parents=True, exist_ok=True)
    os.environ[USER_RESOURCES_ENV] = str(user_dir)
    return user_dir


def import_bpy_isolated(path: str | os.PathLike | None = None) -> ModuleType:
    """Set a throwaway user dir, then import and return bpy (in that order)."""
    use_throwaway_user_dir(path)
    import bpy

    return bpy


def read_manifest(zip_path: str | os.PathLike) -> dict:
    with zipfile.ZipFile(zip_path) as zf:
        return tomllib.loads(zf.read("blender_manifest.toml").decode("utf-8"))


def ensure_user_repo(repo_module: str = DEFAULT_REPO_MODULE):
    """The local user extension repository ``repo_module`` inside the throwaway user dir."""
    import bpy

    user_dir = os.environ.get(USER_RESOURCES_ENV)
    if not user_dir:
        raise BlenderEnvError(f"{USER_RESOURCES_ENV} is not set; use import_bpy_isolated()")
    repos = bpy.context.preferences.extensions.repos
    for repo in repos:
        if repo.module == repo_module:
            return repo
    return repos.new(
        name=f"Waft {repo_module}",
        module=repo_module,
        custom_directory=str(Path(user_dir) / repo_module),
        source="USER",
    )


def install_extension(
    zip_path: str | os.PathLike, *, repo_module: str = DEFAULT_REPO_MODULE
) -> tuple[str, ModuleType]:
    """Install ``zip_path`` into a user repo and enable it, as Install from Disk does.

    Returns ``(module_name, module)`` with ``module_name == "bl_ext.<repo>.<id>"``.
    """
    import addon_utils
    import bpy

    zip_path = Path(zip_path).resolve()
    if not zip_path.is_file():
        raise BlenderEnvError(f"no extension zip at {zip_path}")
    ext_id = read_manifest(zip_path)["id"]
    ensure_user_repo(repo_module)
    result = bpy.ops.extensions.package_install_files(
        filepath=str(zip_path), repo=repo_module, enable_on_install=True
    )
    if result != {"FINISHED"}:
        raise BlenderEnvError(f"package_install_files({zip_path.name}) returned {result}")
    module_name = f"bl_ext.{repo_module}.{ext_id}"
    loaded, enabled = addon_utils.check(module_name)
    if not (loaded and enabled):
        raise BlenderEnvError(
            f"{module_name} after install: loaded={loaded} enabled={enabled} (see stderr)"
        )
    return module_name, sys.modules[module_name]


def is_enabled(module_name: str) -> bool:
    import addon_utils

    return all(addon_utils.check(module_name))


def bake_api(module_name: str) -> ModuleType:
    """The installed add-on's ``addon.bake_api`` module (internals.md: ``bake_scene``)."""
    return importlib.import_module(f"{module_name}.addon.bake_api")


def reset_to_empty_file() -> None:
    """Empty scene that keeps the add-on enabled.

    ``read_factory_settings`` would reset the preferences and disable the add-on
    (blender-api.md §8); ``read_homefile(use_empty=True)`` keeps them.
    """
    import bpy

    bpy.ops.wm.read_homefile(use_empty=True)


def set_pose_bone_selected(pose_bone, state: bool = True) -> None:
    """Select a pose bone: ``PoseBone.select`` on 5.0, ``Bone.select`` on 4.2-4.5."""
    if hasattr(pose_bone, "select"):
        pose_bone.select = state
    else:
        pose_bone.bone.select = state
