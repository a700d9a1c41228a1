"""Live preview cost in real Blender: milliseconds per played frame with *Preview* on, against
the frame time at 24 fps and against playing the same frames with the preview off (Blender's
own evaluation of the animation: the floor any handler-driven preview pays).

Rigs: the benchmark rig of bench_chains.py (chains × bones hanging from a keyed ``Root``, one
sphere collider) at 1 × 4 (a tail), 4 × 8 (ears and a ponytail) and 64 × 8 bones, 100 frames,
the scene's default sample rate (120 Hz: five scene evaluations per 24 fps frame) and with
*Sample Rate* 0 (one per frame); cloth cages of 5 × 6, 12 × 12 and 24 × 24 vertices; and a
17-body ragdoll humanoid (its first frame, which reads the whole shot, apart). Also
*Bake* right after the preview has played the range (it writes the preview's result when the
input is bit-identical) against a bake that solves. Prints one JSON line per case.

Then every sample (samples/*.py, its pre-roll on): milliseconds per previewed frame against its
own frame time and 24 fps, and its first frame apart.

    .venv/bin/python tests/benchmarks/bench_preview.py [--repeat N] [--zip ZIP]
        [--only rigs|samples] [--sample NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_chains  # noqa: E402  (imports bpy in a throwaway user dir)
from bench_chains import blender_env, build_extension  # noqa: E402

FRAMES = 100
CASES = ((1, 4), (4, 8), (64, 8))
SAMPLES_DIR = Path(__file__).resolve().parents[2] / "samples"
sys.path.insert(0, str(SAMPLES_DIR))
SAMPLES = tuple(sorted(p.stem for p in SAMPLES_DIR.glob("*.py")
                       if not p.stem.startswith("_") and p.stem != "run_all"))


def _play(scene, start: int | None = None) -> float:
    """Seconds to play the range once, forward (from ``start``, default its first frame)."""
    t0 = time.perf_counter()
    for frame in range(scene.frame_start if start is None else start, scene.frame_end + 1):
        scene.frame_set(frame)
    return time.perf_counter() - t0


def _plain_then_preview_on(scene) -> tuple[float, float]:
    """Seconds to play the range with the preview off, then to turn it on at the first frame
    (which shows that frame: a ragdoll reads its whole shot there)."""
    scene.frame_set(scene.frame_start)
    plain = _play(scene)
    scene.frame_set(scene.frame_start)
    t0 = time.perf_counter()
    scene.waft.use_preview = True
    return plain, time.perf_counter() - t0


def _timed_run(module: str, scene, system: str) -> dict:
    """Play the range with the preview off, then on; bake right after (the preview's result
    reused), then bake again solving. Seconds of each, and the first frame's with the preview
    on (a ragdoll reads its whole shot there)."""
    bake_api = sys.modules[f"{module}.addon.bake_api"]
    plain, first = _plain_then_preview_on(scene)
    preview = _play(scene)
    state = sys.modules[f"{module}.addon.preview"].state(scene)
    assert state is not None and len(state.cache) == FRAMES, state and state.status()
    t0 = time.perf_counter()
    report = bake_api.bake_scene(scene)
    reused = time.perf_counter() - t0
    assert report.systems[system].from_preview
    scene.waft.use_preview = False
    bake_api.clear_bake(scene)
    t0 = time.perf_counter()
    report = bake_api.bake_scene(scene)
    solved = time.perf_counter() - t0
    assert not report.systems[system].from_preview
    return {"plain": plain, "preview": preview, "first": first, "reused": reused,
            "bake": solved, "bones": report.systems[system].bones}


def _summary(runs: list[dict]) -> dict:
    best = {key: min(run[key] for run in runs) for key in runs[0]}
    preview_ms = 1000.0 * best["preview"] / FRAMES
    return {"preview_ms_per_frame": round(preview_ms, 3),
            "playback_ms_per_frame_preview_off": round(1000.0 * best["plain"] / FRAMES, 3),
            "frame_time_ms_24fps": round(1000.0 / 24.0, 3),
            "ratio_preview_over_frame_time": round(preview_ms / (1000.0 / 24.0), 3),
            "bake_s": round(best["bake"], 4), "bake_after_preview_s": round(best["reused"], 4),
            "ratio_bake_after_preview": round(best["reused"] / best["bake"], 3)}


def measure(module: str, chains: int, bones: int, sample_rate: float, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        blender_env.reset_to_empty_file()
        scene, rig, names = bench_chains.build_rig(chains, bones, FRAMES)
        for name in names:
            rig.pose.bones[name].waft.simulate = True
        rig.waft.enabled = True
        scene.objects["Collider"].waft_collider.enabled = True
        scene.waft.sample_rate = sample_rate
        runs.append(_timed_run(module, scene, "strands"))
    return {"bench": "preview", "chains": chains, "bones": chains * bones,
            "sample_rate_hz": sample_rate, **_summary(runs)}


CLOTH_CASES = ((5, 6), (12, 12), (24, 24))  # cage rows × columns (bones on every other column)


def measure_cloth(module: str, rows: int, columns: int, repeat: int) -> dict:
    """A cloth cage (tests/blender/cloth/cloth_rigs.py: a hanging grid skinned to a keyed Root,
    bones on every other column) swaying 0.3 m at 1 Hz, 100 frames, sample rate 120 Hz."""
    import bpy

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blender" / "cloth"))
    import cloth_rigs

    runs = []
    for _ in range(repeat):
        blender_env.reset_to_empty_file()
        scene = bpy.context.scene
        rig, cage = cloth_rigs.cloth_rig(scene, rows=rows, columns=columns,
                                         spacing=1.0 / max(rows, columns))
        scene.frame_start, scene.frame_end = 1, FRAMES
        cloth_rigs.key_root(rig, list(range(1, FRAMES + 1, 6)),
                            lambda f: (0.3 * math.sin(2.0 * math.pi * (f - 1) / 24.0), 0.0, 0.0),
                            interpolation="BEZIER")
        runs.append(_timed_run(module, scene, "cloth"))
    return {"bench": "preview_cloth", "cage": f"{rows}x{columns}", "bones": runs[0]["bones"],
            "sample_rate_hz": 120.0, **_summary(runs)}


def measure_ragdoll(module: str, repeat: int) -> dict:
    """The 17-body humanoid of tests/blender/ragdoll/ragdoll_rigs.py on its default settings
    (driven bodies, the ground), its arms, legs and spine waving and its hips travelling
    1 m/s, 100 frames, sample rate 120 Hz. The first frame reads the whole shot."""
    import bpy

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blender" / "ragdoll"))
    import ragdoll_rigs

    runs = []
    for _ in range(repeat):
        blender_env.reset_to_empty_file()
        scene = bpy.context.scene
        ob = ragdoll_rigs.humanoid(scene)
        scene.frame_start, scene.frame_end = 1, FRAMES
        ragdoll_rigs.animate_wave(ob, range(1, FRAMES + 1), travel=(0.0, -1.0 / 24.0, 0.0))
        runs.append(_timed_run(module, scene, "ragdoll"))
    return {"bench": "preview_ragdoll", "bodies": runs[0]["bones"], "sample_rate_hz": 120.0,
            "first_frame_ms": round(1000.0 * min(run["first"] for run in runs), 1),
            **_summary(runs)}


def measure_sample(module: str, name: str, repeat: int) -> dict:
    """A sample scene (samples/<name>.py) as its script builds it, its pre-roll set on the
    scene so the preview plays what the sample's bake does: the range played with the preview
    off, then on (the first frame apart: ragdolls read the whole shot there), against the
    sample's own frame time and 24 fps."""
    import run_all

    sample = run_all.load_sample(name)
    missing = getattr(sample, "missing_assets", lambda: None)()
    if missing:
        return {"bench": "preview_sample", "sample": name, "status": f"skipped: {missing}"}
    preview = sys.modules[f"{module}.addon.preview"]
    runs = []
    for _ in range(repeat):
        blender_env.reset_to_empty_file()
        scene = sample.build_scene()
        scene.waft.preroll = getattr(sample, "PREROLL", 0)
        frames = scene.frame_end - scene.frame_start + 1
        plain, first = _plain_then_preview_on(scene)
        rest = _play(scene, scene.frame_start + 1)
        state = preview.state(scene)
        status = "ok" if state.message == "" and len(state.cache) == frames else state.status()
        runs.append({"plain": plain, "first": first, "rest": rest, "status": status})
        scene.waft.use_preview = False
    fps = scene.render.fps / scene.render.fps_base
    best = {key: min(run[key] for run in runs) for key in ("plain", "first", "rest")}
    preview_ms = 1000.0 * best["rest"] / max(frames - 1, 1)
    return {"bench": "preview_sample", "sample": name, "frames": frames, "fps": round(fps, 3),
            "preroll": scene.waft.preroll, "status": runs[-1]["status"],
            "first_frame_ms": round(1000.0 * best["first"], 1),
            "preview_ms_per_frame": round(preview_ms, 2),
            "playback_ms_per_frame_preview_off": round(1000.0 * best["plain"] / frames, 2),
            "ratio_preview_over_frame_time": round(preview_ms * fps / 1000.0, 3),
            "ratio_preview_over_24fps_frame": round(preview_ms * 24.0 / 1000.0, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--zip", type=Path)
    parser.add_argument("--only", choices=("rigs", "samples"),
                        help="only the benchmark rigs, or only the samples")
    parser.add_argument("--sample", action="append", choices=SAMPLES,
                        help="this sample only (repeatable)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        zip_path = args.zip or build_extension.build(bench_chains.REPO_ROOT, Path(folder))
        module, _ = blender_env.install_extension(zip_path)
        if args.only != "rigs":
            for name in args.sample or SAMPLES:
                print(json.dumps(measure_sample(module, name, max(1, args.repeat - 1))),
                      flush=True)
        if args.only == "samples":
            return 0
        for chains, bones in CASES:
            for rate in (120.0, 0.0):
                print(json.dumps(measure(module, chains, bones, rate, args.repeat)), flush=True)
        for rows, columns in CLOTH_CASES:
            print(json.dumps(measure_cloth(module, rows, columns, args.repeat)), flush=True)
        print(json.dumps(measure_ragdoll(module, args.repeat)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
