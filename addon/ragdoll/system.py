"""The ragdoll system behind the one Bake button (protocol: addon/systems.py).

prepare (read + validate every ragdoll, build the core model: nothing sampled or written) →
run_steps (sample the scene once, several times per frame for its Sample Rate, solve with
core.ragdoll, convert to pose keys; yields Progress) → the returned ``commit()`` writes every
ragdoll's action and NLA track. A failure or a closed generator before ``commit()`` leaves the
file as it was.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ...core.errors import SetupError
from .. import preview
from .. import reading as shared_reading
from ..progress import solve_steps
from ..report import ArmatureReport, SystemReport, timings
from ..sampling import is_result_track, sample_steps, sample_times, tracks_muted
from . import assemble, reading, sampling, targets, writing

NAME = "ragdoll"
SAMPLE_CHUNK = 10


def core_api() -> SimpleNamespace:
    """core.ragdoll, imported when a bake needs it (keeps this module importable alone)."""
    base = __package__.rsplit(".", 2)[0] + ".core.ragdoll"
    model = importlib.import_module(base + ".model")
    params = importlib.import_module(base + ".params")
    drive = importlib.import_module(base + ".drive")
    solver = importlib.import_module(base + ".solver")
    return SimpleNamespace(
        RagdollRest=model.RagdollRest, build_ragdoll_model=model.build_ragdoll_model,
        RagdollParams=params.RagdollParams, RagdollDrive=drive.RagdollDrive,
        RagdollSettings=solver.RagdollSettings, bake_ragdoll_steps=solver.bake_ragdoll_steps,
        RagdollStream=solver.RagdollStream)


@dataclass(kw_only=True)
class RagdollSetupReport(ArmatureReport):
    bodies: int  # the bones that are bodies, welded ones included
    welded: int = 0  # bodies welded to the body they hang from (one solver body with it)
    fell_at: int | None = None  # scene frame where the root lock released, None if never


@dataclass
class RagdollReport(SystemReport):
    """``bones`` and ``particles`` both count the bodies."""

    name: str = NAME
    # Solved world frames of every body bone per armature (F, N, 4, 4; ``body_bones`` order,
    # welded bones carried by their body), metres, for checks and samples.
    body_matrix: dict = field(default_factory=dict)
    from_preview: bool = False  # the live preview had solved this exact input: not solved again

    def summary(self) -> str:
        names = ", ".join(s.name for s in self.setups)
        fell = [f"{s.name} fell at frame {s.fell_at}" for s in self.setups
                if s.fell_at is not None]
        welded = sum(getattr(s, "welded", 0) for s in self.setups)
        bodies = f"{self.bones} bodies" + (f" ({welded} welded)" if welded else "")
        text = f"Waft ragdoll {names}: {bodies}, {self.frames} frames ({timings(self)})"
        if self.from_preview:
            text += "; the preview's simulation, not solved again"
        return text + (f"; {', '.join(fell)}" if fell else "")


@dataclass(frozen=True)
class Prepared:
    reads: list
    colliders: list  # collider empties (bpy objects), sorted by name
    collider_input: assemble.ColliderInput
    model: object
    frame_start: int
    frame_end: int
    fps: float
    unit: float


def written(prepared: Prepared) -> list:
    """(armature, its result track names) of every ragdoll the bake writes (``staging``)."""
    return [(r.object, (writing.TRACK, writing.REST_TRACK)) for r in prepared.reads]


def claims(ob) -> bool:
    return ob.type == 'ARMATURE' and ob.waft_ragdoll.enabled


def prepare(scene, *, objects=None, frame_start=None, frame_end=None) -> Prepared | None:
    obs = reading.find_ragdolls(scene, objects)
    if not obs:
        return None
    start, end = shared_reading.frame_range(scene, frame_start, frame_end)
    unit = shared_reading.unit_scale(scene)
    fps = shared_reading.scene_fps(scene)
    reads = [reading.read_ragdoll(scene, ob, unit) for ob in obs]
    carriers = reading.carrier_indices(reads, scene)
    collider_obs = sorted({c.name: c for r in reads for c in r.colliders}.values(),
                          key=lambda c: c.name)
    colliders = assemble.collider_input(reads, [shared_reading.read_collider(c)
                                                for c in collider_obs])
    core = core_api()
    rests = [core.RagdollRest(
        setup=r.name, names=r.names, parent=r.parent, rest_matrix=r.rest_matrix,
        length=r.length, radius=r.radius, mass=r.mass, swing_limit=r.swing_limit,
        twist_limit=r.twist_limit, swing_center=r.swing_center, carrier=carriers[i],
        collide_with_others=r.collide_with_others) for i, r in enumerate(reads)]
    model = core.build_ragdoll_model(ragdolls=rests, colliders=colliders.colliders,
                                     collider_mask=colliders.mask)
    return Prepared(reads=reads, colliders=collider_obs, collider_input=colliders, model=model,
                    frame_start=start, frame_end=end, fps=fps, unit=unit)


def samples_per_frame(rate: float, fps: float) -> int:
    """About how many samples a scene frame holds (``Scene.waft.sample_rate`` per second, 0 =
    once per frame): the sampling's chunk size."""
    if rate <= 0.0:
        return 1
    return max(1, int(np.ceil(rate / fps - 1e-9)))


def ragdoll_settings(prepared: Prepared, settings, core):
    """Scene settings, raised by any ragdoll's own substep rate / iterations (the pre-roll in
    scene frames: the solver's output frames)."""
    rate = max([1.0 / settings.substep] + [r.substep_rate for r in prepared.reads])
    iterations = max([settings.iterations] + [r.iterations for r in prepared.reads])
    return core.RagdollSettings(substep=1.0 / rate, iterations=int(iterations),
                                preroll_frames=int(settings.preroll_frames),
                                self_collision=any(r.self_collision for r in prepared.reads))


def solver_drive(prepared: Prepared, samples, core, *, on_grid: np.ndarray,
                 at_frames: np.ndarray, rate: float):
    """The solver's input from ``samples`` read at ``addon.sampling.sample_times``: the grid
    samples drive it (every ``1 / rate`` s from the first frame, the same instants at every
    frame rate), and it returns the scene's frames, whose own samples are the animation it
    shows there. Read once per frame at the sample rate of each frame rate (120 Hz at 24, 30
    and 60 fps, 125 at 25, 150 at 50), a 4.8 g shake baked at 25 and 50 fps parted from the
    24 fps bake by 5-14 mm and 1-4 degrees; on the shared grid they agree."""
    unit = prepared.unit

    def targets(part):
        return np.concatenate([
            assemble.targets(r, part.pose[i], part.object_matrix[:, i], unit)
            for i, r in enumerate(prepared.reads)], axis=1)

    grid = samples.take(on_grid)
    fields = assemble.params_fields(prepared.reads, grid, unit)
    params = core.RagdollParams.defaults(prepared.model.n_bodies, len(prepared.reads), **fields)
    collider_matrix = assemble.collider_matrices(prepared.collider_input,
                                                 grid.collider_matrix, unit)
    shown = samples.take(at_frames)
    return core.RagdollDrive(fps=rate if rate > 0.0 else prepared.fps, target=targets(grid),
                             collider_matrix=collider_matrix, params=params,
                             output_fps=prepared.fps, output_target=targets(shown))


def bone_keys(prepared: Prepared, samples, body_matrix: np.ndarray, frames: dict | None = None
              ) -> list:
    """Per ragdoll ``PoseKeys`` of its keyed bones (``RagdollRead.keyed``), carriers before the
    ragdolls they carry. ``frames``: when given, filled with each ragdoll's keyed bones' world
    frames (``assemble.keyed_frames``) by its name."""
    reads, unit = prepared.reads, prepared.unit
    offsets = np.cumsum([0] + [len(r.names) for r in reads])
    worlds, sampled, keys = {}, {}, [None] * len(reads)
    level = np.asarray(getattr(prepared.model, "level", np.zeros(len(reads), dtype=int)))
    for i in sorted(range(len(reads)), key=lambda i: int(level[i])):
        read = reads[i]
        pose = samples.pose[i]
        object_matrix = samples.object_matrix[:, i]
        sampled[i] = assemble.sampled_world(pose[:, read.keyed.bone_index], object_matrix)
        bodies = body_matrix[:, offsets[i]:offsets[i + 1]]
        own = sampled[i][:, np.flatnonzero(~read.keyed.welded)]
        worlds[i] = assemble.keyed_world(read, assemble.new_world(read, bodies, own, unit),
                                         sampled[i])
        if frames is not None:
            frames[read.name] = assemble.keyed_frames(read, bodies, worlds[i], unit)
        playback = _playback_object_matrix(prepared, i, object_matrix, worlds, sampled)
        keys[i] = assemble.pose_keys(read, worlds[i], pose, playback)
    return keys


def _playback_object_matrix(prepared, i, object_matrix, worlds, sampled):
    """An armature parented to a bone of a baked ragdoll moves with that bone's NEW motion."""
    ob = prepared.reads[i].object
    parent = ob.parent
    if parent is None or ob.parent_type != 'BONE':
        return object_matrix
    for j, read in enumerate(prepared.reads):
        if read.object is parent and ob.parent_bone in read.keyed.names and j in worlds:
            b = read.keyed.names.index(ob.parent_bone)
            return assemble.carried_object_matrix(object_matrix, worlds[j][:, b],
                                                  sampled[j][:, b])
    return object_matrix


def run_steps(prepared: Prepared, scene, *, settings, sample_chunk: int = SAMPLE_CHUNK):
    core = core_api()
    report = RagdollReport()
    reads = prepared.reads
    frames = np.arange(prepared.frame_start, prepared.frame_end + 1)
    located = [r.keyed.located_names for r in reads]
    static = [writing.static_channels(r.object, r.keyed.names, located[i])
              for i, r in enumerate(reads)]
    rate = float(scene.waft.sample_rate)
    times, on_grid, at_frames = sample_times(prepared.frame_start, prepared.frame_end,
                                             prepared.fps, rate)
    t0 = time.perf_counter()
    samples = yield from sample_steps(
        scene, sampling.RagdollSampler(scene, reads, prepared.colliders, times),
        chunk=sample_chunk * samples_per_frame(rate, prepared.fps),
        muted=tracks_muted((r.object for r in reads), is_result_track), system=NAME)
    drive = solver_drive(prepared, samples, core, on_grid=on_grid, at_frames=at_frames,
                         rate=rate)
    samples = samples.take(at_frames)
    t1 = time.perf_counter()
    solver = ragdoll_settings(prepared, settings, core)
    result = preview.solved_ragdoll(scene, prepared.model, drive, solver)
    report.from_preview = result is not None
    if result is None:
        result = yield from solve_steps(
            lambda: core.bake_ragdoll_steps(prepared.model, drive, solver),
            prepared.frame_start, system=NAME)
    t2 = time.perf_counter()
    body_matrix = np.asarray(result.body_matrix)
    bone_frames = {}
    keys = bone_keys(prepared, samples, body_matrix, bone_frames)
    report.sample_s, report.solve_s = t1 - t0, t2 - t1
    report.frames = len(frames)
    fell_at = np.asarray(getattr(result, "fell_at", np.full(len(reads), -1)))
    for i, read in enumerate(reads):
        fell = int(fell_at[i])  # an output frame: a scene frame from the first
        report.setups.append(RagdollSetupReport(
            name=read.name, bodies=len(read.keyed.names), welded=int(read.keyed.welded.sum()),
            fell_at=prepared.frame_start + fell if fell >= 0 else None))
        report.body_matrix[read.name] = bone_frames[read.name]
    report.bones = report.particles = sum(s.bodies for s in report.setups)

    def commit() -> RagdollReport:
        t3 = time.perf_counter()
        for i, read in enumerate(reads):
            action, count = writing.write_ragdoll(
                read.object, frames.astype(np.float64), read.keyed.names, keys[i].rotation,
                located[i], keys[i].location, static[i])
            report.setups[i].fcurves = count
            report.setups[i].action = action.name
        remember_targets(prepared, drive.output_target)
        report.write_s = time.perf_counter() - t3
        return report

    return commit


def remember_targets(prepared: Prepared, target: np.ndarray) -> None:
    """Keep every ragdoll's animation target (F, N, 4, 4) at the scene frames for the viewport
    (``targets.py``: the red bodies beside the simulation)."""
    offsets = np.cumsum([0] + [len(r.names) for r in prepared.reads])
    for i, read in enumerate(prepared.reads):
        targets.remember(read.name, frame_start=prepared.frame_start,
                         matrix=target[:, offsets[i]:offsets[i + 1]], length=read.length,
                         radius=read.radius, unit=prepared.unit)


def clear(scene, *, objects=None) -> list[str]:
    if objects is None:
        obs = [ob for ob in scene.objects if ob.type == 'ARMATURE']
    else:
        obs = list(objects)
    cleared = []
    for ob in obs:
        if ob.type == 'ARMATURE' and writing.clear_ragdoll(ob):
            cleared.append(ob.name)
            targets.forget(ob.name)
    if objects is not None and not obs:
        raise SetupError("No objects given to clear")
    return cleared
