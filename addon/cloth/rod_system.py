"""The rod system behind the one Bake button (protocol: ``addon/systems.py``), NAME = "rod".

Ties, ribbons and hoods: bone chains listed in ``Object.waft_rod.chains`` are simulated as
Cosserat rods (``core.cloth.rod``, StrayCloth) and keyed (location + rotation) into a new action
``Waft Rod|<armature>`` on the armature's own ``Waft Rod`` NLA track, with the user's action
stashed exactly as for cloth (``writing.ROD``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...core.cloth.rod import bake_rods_steps, build_rod_model
from ...core.errors import DivergenceError
from .. import preview
from ..progress import solve_steps
from ..reading import collider_set
from ..report import SystemReport, timings
from ..sampling import sample_times
from . import rods, writing

NAME = "rod"
SAMPLE_CHUNK = 10


@dataclass
class RodChainReport:
    name: str  # "<armature>: <root bone>"
    armature: str
    bones: int
    particles: int


@dataclass
class RodReport(SystemReport):
    name: str = NAME
    positions: dict = field(default_factory=dict)  # chain → (F, B + 1, 3) world, Blender units
    from_preview: bool = False  # the live preview had solved this exact input: not solved again

    def summary(self) -> str:
        reused = "; the preview's simulation, not solved again" if self.from_preview else ""
        return (f"Waft rods baked {len(self.setups)} chain(s), {self.bones} bones, "
                f"{self.frames} frames ({timings(self)}){reused}")


def claims(ob) -> bool:
    return rods.claims(ob)


def prepare(scene, *, objects, frame_start, frame_end) -> rods.RodRead | None:
    return rods.read_rods(scene, objects, frame_start, frame_end)


def run_steps(prepared: rods.RodRead, scene, *, settings, sample_chunk: int = SAMPLE_CHUNK):
    read = prepared
    t0 = time.perf_counter()
    static = {a.name: writing.static_channels(
        a.object, [n for c in read.chains if c.armature == i for n in c.bone_names],
        writing.ROD) for i, a in enumerate(read.armatures)}
    rate = float(scene.waft.sample_rate)
    times, on_grid, at_frames = sample_times(read.frame_start, read.frame_end, read.fps, rate)
    samples = yield from rods.sample_rods(scene, read, times=times, chunk=sample_chunk,
                                          system=NAME)
    model = build_rod_model(rods=rods.rod_rests(read), colliders=collider_set(read.colliders),
                            collider_mask=read.collider_mask)
    sub_frame = rate > read.fps  # else the samples are the scene frames
    drive = rods.rod_drive(read, samples.take(on_grid) if sub_frame else samples,
                           rate=rate if sub_frame else None)
    if sub_frame:  # the scene frames, for the bone keys
        samples = samples.take(at_frames)
    t1 = time.perf_counter()
    result = preview.solved_rods(scene, model, drive, settings)
    from_preview = result is not None
    if result is None:
        result = yield from solve_steps(lambda: bake_rods_steps(model, drive, settings),
                                        read.frame_start, system=NAME)
    t2 = time.perf_counter()
    report = RodReport(frames=len(samples.frames), sample_s=t1 - t0, solve_s=t2 - t1,
                       from_preview=from_preview)
    per_armature: dict[str, dict] = {a.name: {} for a in read.armatures}
    for s, chain in enumerate(read.chains):
        n = len(chain.bone_names)
        location, quats = rods.chain_keys(read, samples, chain, result.positions[:, s],
                                          result.orientation[:, s])
        if not (np.isfinite(location).all() and np.isfinite(quats).all()):
            raise DivergenceError(chain.name, read.frame_start, "bone keys are not finite")
        armature = read.armatures[chain.armature]
        for b, name in enumerate(chain.bone_names):
            per_armature[armature.name][name] = (location[:, b], quats[:, b])
        report.setups.append(RodChainReport(name=chain.name, armature=armature.name, bones=n,
                                            particles=n + 1))
        report.positions[chain.name] = result.positions[:, s, :n + 1] / read.unit_scale
    report.bones = sum(r.bones for r in report.setups)
    report.particles = sum(r.particles for r in report.setups)
    frames = samples.frames.astype(np.float64)

    def commit() -> RodReport:
        t3 = time.perf_counter()
        for armature in read.armatures:
            writing.write_armature(armature.object, frames, per_armature[armature.name],
                                   static[armature.name], writing.ROD)
        report.write_s = time.perf_counter() - t3
        return report

    return commit


def clear(scene, *, objects=None) -> list[str]:
    targets = [ob for ob in (scene.objects if objects is None else objects)
               if ob.type == 'ARMATURE']
    return [ob.name for ob in targets if writing.clear_armature(ob, writing.ROD)]
