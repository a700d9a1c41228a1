"""One shot's bake inside a fresh Blender process (the bpy wheel): the only code that imports bpy.

    python child.py JOB.json

Run by ``batch/task.py`` in a child process of a Dask worker, never imported by the batch driver:
bpy must own its process's main thread, and Dask runs tasks in worker threads. A fresh process
per shot also gives what a bake of that file alone gives (no state from an earlier shot), and
lets the task kill a shot that runs past its timeout or crashes Blender without losing the worker.

Standard library and bpy only, no package imports: the task writes this file's text next to the
job on whichever machine runs it, so farm workers need the bpy wheel, not Waft itself.

The job (JSON) names the input .blend, the output path, the extension zip and the bake settings.
The extension is installed from the zip into a throwaway Blender user directory, exactly as
*Install from Disk* does; the shot is opened, baked through ``addon.bake_api.bake_scene`` (the one
bake path of the operator, the CLI and the samples), saved to a temporary file beside the output
and renamed over it (atomic on one file system: a crash never leaves half a .blend). The result
(JSON) is written to ``job["result"]``; an exit without that file is a crash.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import sys
import time
import tomllib
import traceback
import zipfile

REPO_MODULE = "waft_batch"


def _write_result(path: str, result: dict) -> None:
    with open(path + ".part", "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(path + ".part", path)


def _install(bpy, zip_path: str, user_dir: str):
    """Install and enable the extension zip in the user repo ``waft_batch``; its bake_api."""
    import addon_utils

    with zipfile.ZipFile(zip_path) as zf:
        ext_id = tomllib.loads(zf.read("blender_manifest.toml").decode("utf-8"))["id"]
    repos = bpy.context.preferences.extensions.repos
    if not any(repo.module == REPO_MODULE for repo in repos):
        repos.new(name="Waft batch", module=REPO_MODULE, source="USER",
                  custom_directory=os.path.join(user_dir, REPO_MODULE))
    result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo=REPO_MODULE,
                                                      enable_on_install=True)
    module = f"bl_ext.{REPO_MODULE}.{ext_id}"
    if result != {"FINISHED"} or not all(addon_utils.check(module)):
        raise RuntimeError(f"the Waft extension {os.path.basename(zip_path)} did not install "
                           f"and enable in Blender {bpy.app.version_string} ({result})")
    return (importlib.import_module(f"{module}.addon.bake_api"),
            importlib.import_module(f"{module}.core.errors").WaftError)


def _scene(bpy, name: str | None):
    if not name:
        return bpy.context.scene
    scene = bpy.data.scenes.get(name)
    if scene is None:
        raise LookupError(f"no scene '{name}' in {bpy.data.filepath} "
                          f"(scenes: {', '.join(s.name for s in bpy.data.scenes)})")
    return scene


def _bake(job: dict) -> dict:
    # Blender reads BLENDER_USER_RESOURCES once, when bpy is imported: the throwaway user
    # directory must be set first or the install would land in the user's own configuration.
    os.environ["BLENDER_USER_RESOURCES"] = job["user_dir"]
    import bpy

    result = {"blender": bpy.app.version_string}
    bake_api, waft_error = _install(bpy, job["zip"], job["user_dir"])
    bpy.ops.wm.open_mainfile(filepath=job["blend"], load_ui=False)
    scene = _scene(bpy, job.get("scene"))
    frames = job.get("frames") or (None, None)
    start = time.perf_counter()
    try:
        report = bake_api.bake_scene(scene, objects=job.get("objects"), frame_start=frames[0],
                                     frame_end=frames[1], substep_rate=job.get("substep_rate"),
                                     preroll=job.get("preroll"), iterations=job.get("iterations"))
    except waft_error as error:  # a setup the bake refuses: the shot's own message
        result.update(status="failed", error=str(error))
        return result
    result.update(bake_s=time.perf_counter() - start, frames=report.frames, bones=report.bones,
                  particles=report.particles, summary=report.summary(),
                  warnings=list(report.warnings),
                  setups=sorted({s.name for r in report.systems.values() for s in r.setups}))
    # save_as_mainfile(copy=True) writes the temporary file without making it the open file;
    # relative paths (textures, linked libraries) are remapped to the output's folder.
    bpy.ops.wm.save_as_mainfile(filepath=job["temporary"], copy=True, relative_remap=True)
    os.replace(job["temporary"], job["output"])
    result["status"] = "ok"
    return result


def _die_with_parent(parent_pid: int | None) -> None:
    """Linux: SIGKILL this Blender when the worker that started it dies (a killed Dask worker's
    shot is retried elsewhere; an orphan would go on baking and race the retry's rename)."""
    if parent_pid is None or not sys.platform.startswith("linux"):
        return
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the worker died before the line above
        os._exit(1)


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as f:
        job = json.load(f)
    _die_with_parent(job.get("parent_pid"))
    try:
        result = _bake(job)
    except Exception as error:  # any failure is this shot's: report it, the batch goes on
        result = {"status": "failed", "error": f"{type(error).__name__}: {error}",
                  "traceback": traceback.format_exc()}
    finally:
        if os.path.exists(job["temporary"]):
            os.remove(job["temporary"])
    _write_result(job["result"], result)
    sys.stdout.flush()
    # Leave without Python's interpreter shutdown: bpy 4.2 wheels can segfault there once an
    # add-on has registered classes, which would turn a finished shot into a crash.
    os._exit(0 if result["status"] == "ok" else 1)


if __name__ == "__main__":
    main(sys.argv)
