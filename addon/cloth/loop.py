"""Loop-clean bakes of cloth-bones (``Scene.waft.use_loop``), as for bone chains
(``addon/strands/loop.py``): the cage is simulated from *Loop Cycles* whole cycles before the
baked one (one cycle of a cyclic animation), and the last cycle is blended toward the cycle
before it in the driven armature's space,

    out(t) = x(t) + w(t) · (x(t − C) − x(t)),   w(t) = (t − start) / C,

so the skirt's or cape's last frame flows into its first; the bone keys are made from the
blended cage as from any bake.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.affine import inverse_affine
from ...core.errors import SetupError
from .reading import ClothRead

# Blender units: a skinned cage vertex that differs from one cycle earlier by more than this
# (in its armature's space) means the animation is not cyclic.
CYCLE_TOLERANCE = 1e-4


def extended(read: ClothRead, cycles: int) -> ClothRead:
    """The read with its range starting ``cycles`` whole cycles earlier."""
    length = read.frame_end - read.frame_start + 1
    return replace(read, frame_start=read.frame_start - int(cycles) * length)


def _to_armature(world: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(F, N, 3) points into the (F, 4, 4) armature spaces."""
    inverse = inverse_affine(world)
    return np.einsum("fij,fnj->fni", inverse[:, :3, :3], points) + inverse[:, None, :3, 3]


def _check_cyclic(read: ClothRead, run, length: int) -> None:
    """Each cage's skinned reference repeats every cycle in its armature's space, or a
    SetupError names the cage and frame."""
    for s, setup in enumerate(read.setups):
        local = _to_armature(run.samples.armature_world[s], run.reference[s] / read.unit_scale)
        gap = np.abs(local[length:] - local[:-length]).max(axis=(-2, -1))
        if gap.max() <= CYCLE_TOLERANCE:
            continue
        f = int(np.argwhere(gap > CYCLE_TOLERANCE)[-1, 0])
        frame = read.frame_end - (len(gap) - 1 - f)
        raise SetupError(
            f"Cloth cage '{setup.name}': Loop needs an animation that repeats every {length} "
            f"frames (the frame range), also before the range, but frame {frame} differs from "
            f"frame {frame - length}; make it cyclic (a Cycles modifier on its F-curves, or a "
            "repeated NLA strip)")


def loop_clip(read: ClothRead, run, length: int):
    """The last cycle of a ``simulate`` run over the extended range, blended into the cycle
    before it; returns the run cut to the clip."""
    _check_cyclic(read, run, length)
    offsets = run.inputs.model.vertex_offset
    positions = run.result.positions.copy()  # (F, N, 3) world metres
    weight = (np.arange(length, dtype=np.float64) / length)[:, None, None]
    for s in range(len(read.setups)):
        part = slice(offsets[s], offsets[s + 1])
        world = run.samples.armature_world[s]
        local = _to_armature(world, positions[:, part] / read.unit_scale)
        clip, before = local[-length:], local[-2 * length:-length]
        blended = clip + weight * (before - clip)
        end = world[-length:]
        positions[-length:, part] = (np.einsum("fij,fnj->fni", end[:, :3, :3], blended)
                                     + end[:, None, :3, 3]) * read.unit_scale
    take = np.arange(len(positions) - length, len(positions))
    result = replace(run.result, positions=positions[take], contact=run.result.contact[take],
                     cuts=run.result.cuts[take])
    return replace(run, samples=run.samples.take(take),
                   reference=[r[take] for r in run.reference], result=result)
