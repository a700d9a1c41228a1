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
from .bodies import einsum, nlerp


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


def lift_above_planes(*, shown: np.ndarray, physics: np.ndarray, target: np.ndarray,
                      length: np.ndarray, radius: np.ndarray, mask: np.ndarray,
                      planes: tuple[np.ndarray, np.ndarray], bodies: slice,
                      mixed: np.ndarray) -> None:
    """Translate the shown pose of the ragdoll `bodies` out of the still planes it collides
    with, in place, by the depth that neither of its sources has: the blend of a simulation
    lying on the ground and a standing animation swings limbs through the ground (a recovery
    from 3.8 m away put a leg 44 cm under it, where neither pose was), while what the animation
    itself puts below (a foot 2 cm in the floor) stays as animated. The lift is continuous in
    the blend weight and zero at both ends (the shown pose is then one of the sources); per
    frame, so the preview shows each frame as the bake does.

    shown, physics, target: (F, N, 4, 4) world body frames at the heads (+Y along the bone);
    length, radius (N,); mask (N, K) which colliders each body touches; planes: (collider
    indices (P,), their still world matrices (P, 4, 4)), local +Z outside; mixed (F,) bool:
    the frames that blend (the others are one source exactly and are left as they are)."""
    index, matrices = planes
    if not len(index):
        return
    use = mask[bodies][:, index].any(axis=0)
    if not use.any():
        return
    index, matrices = index[use], matrices[use]
    sel = [physics[:, bodies], target[:, bodies], shown[:, bodies]]
    rad, ln = radius[bodies], length[bodies]
    lift = np.zeros((len(shown), 3))
    for k, M in zip(index, matrices, strict=True):
        touches = mask[bodies, k]
        normal = np.linalg.inv(M)[2, :3]
        normal = normal / np.linalg.norm(normal)
        offset = float(normal @ M[:3, 3])
        depth = []
        for pose in sel:
            head = pose[..., :3, 3]
            tail = head + pose[..., :3, 1] * ln[None, :, None]
            clear = np.minimum(_dot(head, normal), _dot(tail, normal)) - offset - rad[None]
            clear = np.where(touches[None], clear, np.inf)
            depth.append(np.maximum(-clear.min(axis=1), 0.0))  # (F,) deepest below
        extra = np.maximum(depth[2] - _dot(lift, normal) - np.maximum(depth[0], depth[1]), 0.0)
        extra = np.where(mixed, extra, 0.0)
        lift += extra[:, None] * normal
    shown[:, bodies, :3, 3] += lift[:, None, :]


def _dot(v: np.ndarray, n: np.ndarray) -> np.ndarray:
    """v · n over the last axis, element by element: a matrix product's rounding depends on how
    many frames are solved at once (BLAS kernels), and a streamed frame must be the bake's."""
    return v[..., 0] * n[0] + v[..., 1] * n[1] + v[..., 2] * n[2]


def _rigid_inverse(m: np.ndarray) -> np.ndarray:
    inv = np.zeros_like(m)
    rt = np.swapaxes(m[..., :3, :3], -1, -2)
    inv[..., :3, :3] = rt
    inv[..., :3, 3] = -einsum("...ij,...j->...i", rt, m[..., :3, 3])
    inv[..., 3, 3] = 1.0
    return inv
