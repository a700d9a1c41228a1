"""The cloth-bone system behind the one Bake button (protocol: ``addon/systems.py``).

prepare (read + validate, no change to the file) → run_steps (sample, solve, turn the cage into
bone keys; yields Progress; nothing written) → commit() (writes every armature's ``Waft Cloth``
action and the optional cage meshes) → clear (removes them, gives the user's action back).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...core.cloth.solver import bake_cloth_steps
from ...core.errors import DivergenceError
from .. import preview
from ..looping import simulate_for_bake
from ..progress import solve_steps
from ..report import ArmatureReport, SystemReport, timings
from ..sampling import sample_times
from . import assemble, loop, pose, reading, sampling, writing

NAME = "cloth"
# Frames sampled between two progress reports.
SAMPLE_CHUNK = 10


@dataclass(kw_only=True)
class ClothSetupReport(ArmatureReport):  # ``name`` is the cage's
    armature: str
    bones: int
    particles: int


@dataclass
class ClothReport(SystemReport):
    name: str = NAME
    # Per setup (F, N, 3), world, Blender units (for tests and callers): the simulated cage and
    # the reference it follows (skinned cage; pinned vertices as driven).
    positions: dict = field(default_factory=dict)
    reference: dict = field(default_factory=dict)
    from_preview: bool = False  # the live preview had solved this exact input: not solved again

    def summary(self) -> str:
        names = ", ".join(s.name for s in self.setups)
        reused = "; the preview's simulation, not solved again" if self.from_preview else ""
        return (f"Waft cloth baked {names}: {self.bones} bones from {self.particles} cage "
                f"vertices, {self.frames} frames ({timings(self)}){reused}")


def claims(ob) -> bool:
    return reading.claims(ob)


def prepare(scene, *, objects, frame_start, frame_end) -> reading.ClothRead | None:
    return reading.read_cloth(scene, objects, frame_start, frame_end)


@dataclass(frozen=True)
class Simulation:
    """A solved cloth bake before anything is written (``simulate``)."""

    inputs: object  # assemble.ClothInput: the core model and drive
    samples: object  # sampling.ClothSamples at the scene frames
    reference: list  # per setup (F, N, 3) metres at the scene frames
    result: object  # core ClothResult (the scene frames)
    sample_s: float
    solve_s: float
    from_preview: bool = False  # the result is the live preview's (``preview.solved_cloth``)


def simulate(read: reading.ClothRead, scene, *, settings, sample_chunk: int = SAMPLE_CHUNK):
    """Generator (yields Progress): sample the scene, solve, return a ``Simulation``. The bake
    and Capture Settled Pose both run it."""
    t0 = time.perf_counter()
    rate = float(scene.waft.sample_rate)
    times, on_grid, at_frames = sample_times(read.frame_start, read.frame_end, read.fps, rate)
    samples = yield from sampling.sample_cloth(scene, read, times=times, chunk=sample_chunk,
                                               system=NAME)
    sub_frame = rate > read.fps  # else the samples are the scene frames
    if sub_frame:  # the scene frames, for the solver's output reference and the bone keys
        inputs = assemble.cloth_input(read, samples.take(on_grid), rate=rate,
                                      frames=samples.take(at_frames))
        samples = samples.take(at_frames)
    else:
        inputs = assemble.cloth_input(read, samples)
    t1 = time.perf_counter()
    # The live preview played this very input through: its result is the bake's, bit for bit.
    result = preview.solved_cloth(scene, inputs.model, inputs.drive, settings)
    from_preview = result is not None
    if result is None:
        result = yield from solve_steps(
            lambda: bake_cloth_steps(inputs.model, inputs.drive, settings), read.frame_start,
            system=NAME)
    t2 = time.perf_counter()
    reference = assemble.references(read, samples) if sub_frame else inputs.reference
    return Simulation(inputs=inputs, samples=samples, reference=reference, result=result,
                      sample_s=t1 - t0, solve_s=t2 - t1, from_preview=from_preview)


def run_steps(prepared: reading.ClothRead, scene, *, settings, sample_chunk: int = SAMPLE_CHUNK):
    read = prepared
    static = {}  # per armature: unanimated channels of its cloth bones, before sampling
    for setup in read.setups:
        static.setdefault(setup.armature.name, []).extend(
            writing.static_channels(setup.armature, setup.bone_names))
    run = yield from simulate_for_bake(simulate, loop, read, scene, settings=settings,
                                       sample_chunk=sample_chunk)
    inputs, samples, result, reference = run.inputs, run.samples, run.result, run.reference
    frames = samples.frames.astype(np.float64)
    offsets = inputs.model.vertex_offset
    report = ClothReport(frames=len(frames), sample_s=run.sample_s, solve_s=run.solve_s,
                         from_preview=run.from_preview)
    per_armature: dict[str, tuple] = {}
    cages = []
    for s, setup in enumerate(read.setups):
        positions = result.positions[:, offsets[s]:offsets[s + 1]] / read.unit_scale
        keys = pose.bone_keys(setup, positions, samples.pose[s], samples.armature_world[s])
        if not (np.isfinite(keys.location).all() and np.isfinite(keys.rotation).all()):
            raise DivergenceError(setup.name, read.frame_start, "bone keys are not finite")
        armature, bones = per_armature.setdefault(setup.armature.name, (setup.armature, {}))
        for b, name in enumerate(setup.bone_names):
            bones[name] = (keys.location[:, b], keys.rotation[:, b])
        report.setups.append(ClothSetupReport(name=setup.name, armature=armature.name,
                                              bones=len(setup.bone_names),
                                              particles=setup.n_vertices))
        report.positions[setup.name] = positions
        report.reference[setup.name] = reference[s] / read.unit_scale
        if setup.object.waft_cloth.use_cage_output:
            cages.append((setup.object, positions))
    report.bones = sum(r.bones for r in report.setups)
    report.particles = sum(r.particles for r in report.setups)

    def commit() -> ClothReport:
        t3 = time.perf_counter()
        written = {}
        for armature, bones in per_armature.values():
            action, count = writing.write_armature(armature, frames, bones,
                                                   static[armature.name])
            written[armature.name] = (action.name, count)
        for r in report.setups:
            r.action, count = written[r.armature]
            r.fcurves = count
        for cage, positions in cages:
            writing.write_cage_output(cage, frames, positions)
        report.write_s = time.perf_counter() - t3
        return report

    return commit


def clear(scene, *, objects=None) -> list[str]:
    """Remove the cloth result of ``objects`` (cages; all cloth cages when None)."""
    every = [ob for ob in scene.objects if ob.type == 'MESH' and
             (ob.waft_cloth.enabled or ob.waft_cloth.cage_output is not None)]
    if objects is None:
        cages = every
    else:
        cages = [ob for ob in objects if ob.type == 'MESH']
        armatures = [ob for ob in objects if ob.type == 'ARMATURE']
        cages += [c for c in every if c.waft_cloth.armature in armatures and c not in cages]
    cleared = []
    done = set()
    for cage in cages:
        if writing.remove_cage_output(cage):
            cleared.append(cage.name)
        armature = cage.waft_cloth.armature
        if armature is not None and armature.name not in done:
            done.add(armature.name)
            if writing.clear_armature(armature):
                cleared.append(cage.name)
    return sorted(set(cleared))
