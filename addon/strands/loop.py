"""Loop-clean bakes of bone chains (``Scene.waft.use_loop``).

The baked range is one cycle of ``C`` frames of a cyclic animation. The chains are simulated
from ``N`` whole cycles before it (Blender evaluates them: Cycles modifiers, NLA repeats), so
the motion settles into the cycle, and the clip is then blended toward the cycle before it,

    out(t) = x(t) + w(t) · (x(t − C) − x(t)),   w(t) = (t − start) / C,

so that out(start) = x(start) and out(end) ≈ x(start − 1), whose successor is x(start): the last
frame flows into the first, and what is left of the seam is (x(end) − x(end − C)) / C, the
motion's unsettled remainder spread over the cycle. The blend is in each chain's armature space,
so a character carried through the world by its object blends its pose, not its travel.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.affine import inverse_affine
from ...core.errors import SetupError
from ...core.strands.solver import BakeResult
from .reading import SceneRead

# Armature units / matrix components: a pose that differs from the one a cycle earlier by more
# than this is not cyclic.
CYCLE_TOLERANCE = 1e-4


def extended(read: SceneRead, cycles: int) -> SceneRead:
    """The read with its range starting ``cycles`` whole cycles earlier."""
    length = read.frame_end - read.frame_start + 1
    return replace(read, frame_start=read.frame_start - int(cycles) * length)


def _check_cyclic(read: SceneRead, frames, length: int) -> None:
    """The animation the chains follow (their bones and parents, armature space) repeats every
    cycle over the last two cycles, or a SetupError names the bone and frame."""
    pose = np.concatenate((frames.reference_matrix, frames.parent_matrix[:, :, None]),
                          axis=2).astype(np.float64)  # (float32 as Blender gives them, or not)
    later, earlier = pose[length:], pose[:-length]
    gap = np.abs(later - earlier).max(axis=(-2, -1))  # (F - C, S, B + 1)
    if gap.max() <= CYCLE_TOLERANCE:
        return
    f, s, b = (int(i) for i in np.argwhere(gap > CYCLE_TOLERANCE)[-1])
    chain = read.chains[s]
    setup = read.setups[chain.setup_index]
    if b < len(chain.bone_names):
        bone = chain.bone_names[b]
    else:  # the chain's parent (the extra column above)
        bone = (setup.object.pose.bones[chain.parent_index].name if chain.parent_index >= 0
                else chain.bone_names[0])
    frame = read.frame_end - (len(later) - 1 - f)
    raise SetupError(
        f"Armature '{setup.name}', bone '{bone}': Loop needs an animation that repeats every "
        f"{length} frames (the frame range), also before the range, but frame {frame} differs "
        f"from frame {frame - length}; make it cyclic (a Cycles modifier on its F-curves, or "
        "a repeated NLA strip)")


def loop_clip(read: SceneRead, run, length: int):
    """The last cycle of a ``simulate`` run over the extended range, blended into the cycle
    before it; returns the run with positions and frames of the clip only."""
    frames = run.frames
    _check_cyclic(read, frames, length)
    positions = run.result.positions  # (F, S, P, 3) world
    to_armature = inverse_affine(frames.object_matrix)  # (F, S, 4, 4)
    local = np.einsum("fsij,fspj->fspi", to_armature[..., :3, :3], positions) \
        + to_armature[:, :, None, :3, 3]
    clip, before = local[-length:], local[-2 * length:-length]
    weight = (np.arange(length, dtype=np.float64) / length)[:, None, None, None]
    blended = clip + weight * (before - clip)
    obj = frames.object_matrix[-length:]
    world = np.einsum("fsij,fspj->fspi", obj[..., :3, :3], blended) + obj[:, :, None, :3, 3]
    clip_frames = type(frames)(
        rest_matrix=frames.rest_matrix, parent_rest_matrix=frames.parent_rest_matrix,
        reference_matrix=frames.reference_matrix[-length:],
        parent_matrix=frames.parent_matrix[-length:], object_matrix=obj)
    # VRM chains' own twist is not blended; their keys come from the blended positions.
    return replace(run, frames=clip_frames, vrm=None,
                   result=BakeResult(positions=world, substeps=run.result.substeps))
