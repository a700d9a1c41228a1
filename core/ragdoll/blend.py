"""Local-space blend of the simulated pose toward the animation (seed 004 kept 40-50 %
physics, i.e. a blend of 0.5-0.6).

Each body's transform relative to its parent body is blended (rotation by nlerp, offset by lerp)
between the simulation and the animation, then the world pose is rebuilt from the roots down one
depth level at a time (vectorised over all bodies of that level and all frames). Blending local
transforms, not world ones, is what makes a 50 % arm follow a 50 % body instead of drifting
(seed 004). Kinematic bodies are reset to their target exactly before their children use them.
"""

from __future__ import annotations

import numpy as np

from ..rotations import matrix_from_quat, quat_from_matrix
from .bodies import nlerp


def local_blend(*, physics: np.ndarray, target: np.ndarray, blend: np.ndarray,
                parent: np.ndarray, depth: np.ndarray, kinematic: np.ndarray) -> np.ndarray:
    """World body frames (F, N, 4, 4) after blending local transforms by `blend` (F, N).

    physics, target: (F, N, 4, 4) rigid frames; parent (N,) with -1 for roots; kinematic (F, N).
    """
    # A frame with nothing blended and nothing kinematic is the simulation exactly (decided per
    # frame, so a frame's output never depends on the other frames given: a live preview shows
    # each frame as it is solved, bit for bit the bake's).
    plain = ~np.any(blend > 0.0, axis=1) & ~np.any(kinematic, axis=1)
    if plain.all():
        return physics.copy()
    has_parent = parent >= 0
    p = np.where(has_parent, parent, 0)

    def local(world: np.ndarray) -> np.ndarray:
        inv = _rigid_inverse(world[:, p])
        rel = inv @ world
        return np.where(has_parent[None, :, None, None], rel, world)

    lp, la = local(physics), local(target)
    qp, qa = quat_from_matrix(lp[..., :3, :3]), quat_from_matrix(la[..., :3, :3])
    q = nlerp(qp, qa, blend)
    blended = np.zeros_like(physics)
    blended[..., :3, :3] = matrix_from_quat(q)
    blended[..., :3, 3] = lp[..., :3, 3] + blend[..., None] * (la[..., :3, 3] - lp[..., :3, 3])
    blended[..., 3, 3] = 1.0
    out = np.empty_like(physics)
    for d in range(int(depth.max()) + 1 if len(depth) else 0):
        idx = np.flatnonzero(depth == d)
        if d == 0:
            out[:, idx] = blended[:, idx]
        else:
            out[:, idx] = out[:, parent[idx]] @ blended[:, idx]
        kin = kinematic[:, idx]
        out[:, idx] = np.where(kin[..., None, None], target[:, idx], out[:, idx])
    out[plain] = physics[plain]
    return out


def _rigid_inverse(m: np.ndarray) -> np.ndarray:
    inv = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    inv[..., :3, :3] = rt
    inv[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, m[..., :3, 3])
    inv[..., 3, 3] = 1.0
    return inv
