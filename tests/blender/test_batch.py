"""Batch baking on a local Dask cluster of 2 workers, against baking each shot alone.

Six samples are built and saved unbaked (with their pre-roll on the scene, so the file alone
bakes as the sample does); ``waft.batch.bake_many`` bakes them in Blender child processes of the
Dask workers. Checked: every result is bitwise equal (keys, handles, played-back render strands;
tools/bake_digest.py) to baking the same file in this process; inputs are never modified; a
broken shot fails with its own message while the others succeed; a killed worker's shot and a
killed Blender's shot are retried; a shot past its timeout is stopped; a second run skips
unchanged shots and re-bakes a changed one; ``--in-place`` saves over the inputs, atomically.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="batch baking runs on Dask (tools/bootstrap.sh)")

import bake_digest  # noqa: E402  (tools/)
import bpy  # noqa: E402

import blender_env  # noqa: E402
from waft.batch import BakeSettings, BatchError, bake_many, cluster, read_jsonl  # noqa: E402
from waft.batch.ledger import file_sha256  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "samples"))
import run_all  # noqa: E402  (samples/: load_sample)

# The samples built from nothing (no ../shared/assets), shortened where a full range only
# costs time: the frame range is part of the shot list, as a TD would give it.
SHOTS = {"ponytail": (1, 40), "hair_underwater": (1, 24), "hair_curly_wind": (1, 24),
         "hair_head_turn": (1, 6), "ragdoll_fall": (1, 30), "ragdoll_rigify": (1, 16)}


def _digest(module_name: str, scene) -> tuple:
    compat = importlib.import_module(module_name + ".addon.compat")
    return bake_digest.keys_digest(compat.action_fcurves), bake_digest.curves_digest(scene)


@pytest.fixture(scope="module")
def shot_dir(tmp_path_factory, waft_module_name):
    folder = tmp_path_factory.mktemp("shots")
    entries = []
    for name, frames in SHOTS.items():
        module = run_all.load_sample(name)
        blender_env.reset_to_empty_file()
        scene = module.build_scene()
        scene.waft.preroll = getattr(module, "PREROLL", 0)
        bpy.ops.wm.save_as_mainfile(filepath=str(folder / f"{name}.blend"))
        entries.append({"blend": f"{name}.blend", "frames": list(frames)})
    (folder / "shots.json").write_text(json.dumps(entries))
    blender_env.reset_to_empty_file()
    return folder


@pytest.fixture(scope="module")
def first_run(shot_dir, tmp_path_factory, waft_zip):
    out = tmp_path_factory.mktemp("baked")
    before = {p.name: file_sha256(p) for p in shot_dir.glob("*.blend")}
    environ = dict(os.environ)
    results = bake_many([shot_dir / "shots.json"], out, workers=2, zip_path=waft_zip,
                        progress=False)
    return out, results, before, environ


def test_six_shots_bake_on_two_workers_bitwise_as_each_alone(first_run, shot_dir,
                                                             waft_module_name, bake_api):
    out, results, before, environ = first_run
    # The local cluster's nannies set MALLOC_TRIM_THRESHOLD_ (2.6x slower NumPy) and one BLAS
    # thread in this process's environment; the batch puts them back.
    names = cluster.nanny_environ_names()
    assert {"MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS"} <= set(names)
    assert {n: os.environ.get(n) for n in names} == {n: environ.get(n) for n in names}
    assert [r.shot for r in results] == list(SHOTS)
    assert all(r.status == "ok" for r in results), [(r.shot, r.error) for r in results]
    assert {p.name: file_sha256(p) for p in shot_dir.glob("*.blend")} == before  # inputs kept
    assert read_jsonl(out / "waft-batch-report.jsonl") == results
    assert not list(out.glob(".*.part")) and not list((out / ".waft-batch/running").iterdir())
    for result in results:
        start, end = SHOTS[result.shot]
        assert result.frames == end - start + 1 and result.bones > 0 and result.setups
        bpy.ops.wm.open_mainfile(filepath=str(shot_dir / f"{result.shot}.blend"))
        bake_api.bake_scene(bpy.context.scene, frame_start=start, frame_end=end)
        alone = _digest(waft_module_name, bpy.context.scene)
        bpy.ops.wm.open_mainfile(filepath=result.output)
        batch = _digest(waft_module_name, bpy.context.scene)
        assert batch == alone, f"{result.shot}: the batch's bake differs from baking it alone"
        assert batch[0][1] > 0  # it wrote keys
    blender_env.reset_to_empty_file()


def test_a_second_run_skips_unchanged_shots_and_bakes_a_changed_one(first_run, shot_dir,
                                                                    waft_zip):
    out, results, _, _ = first_run
    written = {r.shot: os.stat(r.output).st_mtime_ns for r in results}
    again = bake_many([shot_dir / "shots.json"], out, workers=2, zip_path=waft_zip,
                      progress=False)
    assert [r.status for r in again] == ["skipped"] * len(SHOTS)
    assert [(r.bones, r.frames) for r in again] == [(r.bones, r.frames) for r in results]
    assert {r.shot: os.stat(r.output).st_mtime_ns for r in again} == written
    # The animator changes one shot: only that one bakes again.
    bpy.ops.wm.open_mainfile(filepath=str(shot_dir / "ponytail.blend"))
    bpy.context.scene.waft.iterations += 1
    bpy.ops.wm.save_mainfile()
    blender_env.reset_to_empty_file()
    third = bake_many([shot_dir / "shots.json"], out, workers=2, zip_path=waft_zip,
                      progress=False)
    assert {r.shot: r.status for r in third} == {n: "ok" if n == "ponytail" else "skipped"
                                                for n in SHOTS}


def test_a_broken_shot_fails_with_its_message_and_the_others_bake(shot_dir, tmp_path, waft_zip):
    blender_env.reset_to_empty_file()
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "empty.blend"))  # no Waft setup
    (tmp_path / "garbage.blend").write_bytes(b"not a blend file")
    shots = [shot_dir / "ponytail.blend", tmp_path / "empty.blend", tmp_path / "garbage.blend"]
    out = tmp_path / "out"
    results = bake_many(shots, out, workers=2, zip_path=waft_zip, frames=(1, 10),
                        progress=False)
    status = {r.shot: r for r in results}
    assert status["ponytail"].status == "ok" and status["ponytail"].frames == 10
    assert status["empty"].status == "failed" and status["empty"].attempts == 1  # not retried
    assert "Scene 'Scene' has no Waft setup" in status["empty"].error
    assert status["garbage"].status == "failed" and "garbage.blend" in status["garbage"].error
    assert sorted(p.name for p in out.glob("*.blend")) == ["ponytail.blend"]


def _kill_when_running(state: Path, shot: str, which: str, killed: list) -> None:
    marker = state / "running" / f"{shot}.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if marker.exists():
            try:
                running = json.loads(marker.read_text())
            except json.JSONDecodeError:  # being written
                continue
            time.sleep(0.5)  # Blender is importing or baking
            os.kill(running[which], signal.SIGKILL)
            killed.append(running)
            return
        time.sleep(0.02)


def _process_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")  # dead, waiting for its (new) parent to reap it


@pytest.mark.parametrize(("which", "workers"), [("worker_pid", 2), ("worker_pid", 1),
                                               ("blender_pid", 2)])
def test_a_killed_worker_or_blender_is_retried(shot_dir, tmp_path, waft_zip, which, workers):
    """Also with a single worker: its replacement must still get everything the shot needs."""
    out = tmp_path / "out"
    killed: list = []
    killer = threading.Thread(target=_kill_when_running,
                              args=(out / ".waft-batch", "ragdoll_fall", which, killed))
    killer.start()
    results = bake_many([shot_dir / "ragdoll_fall.blend", shot_dir / "ponytail.blend"], out,
                        workers=workers, zip_path=waft_zip, frames=(1, 30), progress=False)
    killer.join()
    assert killed, "the shot never started"
    fall = results[0]
    assert fall.status == "ok" and fall.attempts == 2, fall
    # (a shot waiting on the dead worker is resubmitted too: on one worker, attempts 2)
    assert results[1].status == "ok" and results[1].attempts <= (1 if workers > 1 else 2)
    if which == "worker_pid":  # its Blender died with it (no orphan racing the retry)
        deadline = time.monotonic() + 10
        while not _process_gone(killed[0]["blender_pid"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _process_gone(killed[0]["blender_pid"])


def test_no_retries_reports_the_crash_and_a_timeout_stops_the_shot(shot_dir, tmp_path,
                                                                   waft_zip):
    out = tmp_path / "out"
    killed: list = []
    killer = threading.Thread(target=_kill_when_running,
                              args=(out / ".waft-batch", "ragdoll_fall", "blender_pid", killed))
    killer.start()
    results = bake_many([shot_dir / "ragdoll_fall.blend"], out, workers=1, zip_path=waft_zip,
                        retries=0, progress=False)
    killer.join()
    assert results[0].status == "crashed" and results[0].attempts == 1
    assert "signal 9" in results[0].error
    slow = bake_many([shot_dir / "ragdoll_fall.blend"], tmp_path / "slow", workers=1,
                     zip_path=waft_zip, retries=0, timeout=0.5, progress=False)
    assert slow[0].status == "timeout" and "0.5 s" in slow[0].error
    assert not (tmp_path / "slow" / "ragdoll_fall.blend").exists()
    assert not list((tmp_path / "slow").glob(".*.part"))


def test_in_place_saves_over_the_inputs_and_then_skips_them(shot_dir, tmp_path, waft_zip):
    work = tmp_path / "shots"
    work.mkdir()
    for name in ("ponytail", "ragdoll_fall"):
        (work / f"{name}.blend").write_bytes((shot_dir / f"{name}.blend").read_bytes())
    before = {p.name: file_sha256(p) for p in work.glob("*.blend")}
    state = tmp_path / "state"
    shots = sorted(work.glob("*.blend"))
    first = bake_many(shots, state, in_place=True, workers=2, zip_path=waft_zip,
                      frames=(1, 12), progress=False)
    assert [r.status for r in first] == ["ok", "ok"]
    after = {p.name: file_sha256(p) for p in work.glob("*.blend")}
    assert all(after[n] != before[n] for n in before)  # baked into the inputs
    assert sorted(p.name for p in work.iterdir()) == ["ponytail.blend", "ragdoll_fall.blend"]
    second = bake_many(shots, state, in_place=True, workers=2, zip_path=waft_zip,
                       frames=(1, 12), progress=False)
    assert [r.status for r in second] == ["skipped", "skipped"]


def test_outputs_never_overwrite_an_input(shot_dir, waft_zip):
    with pytest.raises(BatchError, match="would be written over the input"):
        bake_many([shot_dir / "ponytail.blend"], shot_dir, zip_path=waft_zip, progress=False)


def test_the_command_line(shot_dir, tmp_path, waft_zip):
    """``python -m waft.batch`` as installed (the checkout linked as package ``waft``)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "waft").symlink_to(REPO_ROOT, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("BLENDER_USER_RESOURCES", None)
    run = subprocess.run(
        [sys.executable, "-m", "waft.batch", "bake", str(shot_dir / "ponytail.blend"),
         str(tmp_path / "missing.blend"), "--out", str(tmp_path / "out"), "--zip",
         str(waft_zip)], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert run.returncode == 2 and "missing.blend does not exist" in run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "waft.batch", "bake", str(shot_dir / "ponytail.blend"),
         "--out", str(tmp_path / "out"), "--zip", str(waft_zip), "--frames", "1", "8",
         "--workers", "1", "--substep-rate", "480"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "1/1 done, 0 running, 0 failed" in run.stderr
    assert "1 shots in" in run.stderr and "1 ok" in run.stderr
    (line,) = read_jsonl(tmp_path / "out" / "waft-batch-report.jsonl")
    assert line.status == "ok" and line.frames == 8


def test_bake_settings_reach_the_bake(shot_dir, tmp_path, waft_zip, waft_module_name, bake_api):
    settings = BakeSettings(substep_rate=480.0, preroll=0, iterations=2)
    (result,) = bake_many([shot_dir / "ponytail.blend"], tmp_path, settings=settings,
                          frames=(1, 8), workers=1, zip_path=waft_zip, progress=False)
    assert result.status == "ok"
    bpy.ops.wm.open_mainfile(filepath=str(shot_dir / "ponytail.blend"))
    bake_api.bake_scene(bpy.context.scene, frame_start=1, frame_end=8, substep_rate=480.0,
                        preroll=0, iterations=2)
    alone = _digest(waft_module_name, bpy.context.scene)
    bpy.ops.wm.open_mainfile(filepath=result.output)
    assert _digest(waft_module_name, bpy.context.scene) == alone
    blender_env.reset_to_empty_file()
