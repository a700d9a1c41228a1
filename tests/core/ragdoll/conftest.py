"""Small ragdoll rigs for the core tests (imported by the test modules)."""

from __future__ import annotations

import dataclasses

import numpy as np

from waft.core.colliders import ColliderSet
from waft.core.ragdoll import (
    RagdollDrive,
    RagdollParams,
    RagdollRest,
    build_ragdoll_model,
)
from waft.core.ragdoll._bench_cases import (
    bone_frame,
    ground,
    humanoid_rest,
    rotation_x,
    walk_targets,
)

FREE_SWING = np.inf
FREE_TWIST = (-np.inf, np.inf)


def record_gaps_and_depths(monkeypatch) -> tuple[list, list]:
    """Two lists that fill, after every substep of every bake the test runs, with the widest
    joint gap (m, parent anchor to child anchor) and the deepest body in a collider (m): the
    state at the end of the substep, every constraint and collider active together."""
    from waft.core.ragdoll import level as level_module
    from waft.core.ragdoll.bodies import rotate

    gaps, depths = [], []
    original = level_module.Level.step

    def step(level, sub, k):
        original(level, sub, k)
        s, child = level.state, np.flatnonzero(~level.is_root)
        par = level.parent[child]
        gap = (s.x[par] + rotate(s.R[par], level.anchor[0][child])
               - s.x[child] - rotate(s.R[child], level.anchor_a[child]))
        gaps.append(np.sqrt(np.einsum("nk,nk->n", gap, gap)).max())
        depths.append(level.contacts.depths(s, level.run.colliders_at(sub),
                                            np.arange(level.n)).max())

    monkeypatch.setattr(level_module.Level, "step", step)
    return gaps, depths


def chain_rest(heads, tails, *, radius=0.05, mass=1.0, setup="Rig", swing=np.inf,
               twist=(-np.inf, np.inf), parent=None, carrier=None) -> RagdollRest:
    """A chain (or tree with `parent`) of capsules from head/tail points."""
    n = len(heads)
    parent = np.arange(-1, n - 1) if parent is None else np.asarray(parent)
    return RagdollRest(
        setup=setup, names=tuple(f"b{i}" for i in range(n)), parent=parent,
        rest_matrix=np.stack([bone_frame(h, t) for h, t in zip(heads, tails, strict=True)]),
        length=np.array([np.linalg.norm(np.subtract(t, h)) for h, t in zip(heads, tails,
                                                                         strict=True)]),
        radius=np.broadcast_to(np.asarray(radius, float), (n,)).copy(),
        mass=np.broadcast_to(np.asarray(mass, float), (n,)).copy(),
        swing_limit=np.broadcast_to(np.asarray(swing, float), (n, 2)).copy(),
        twist_limit=np.broadcast_to(np.asarray(twist, float), (n, 2)).copy(),
        carrier=carrier)


def static_drive(model, rest_matrices, frames, fps=30.0, colliders=None, collider_matrix=None,
                 **params):
    """Drive holding every target at `rest_matrices` (N, 4, 4)."""
    target = np.broadcast_to(rest_matrices, (frames,) + rest_matrices.shape)
    K = model.colliders.count
    cm = (np.zeros((frames, K, 4, 4)) if collider_matrix is None
          else np.broadcast_to(collider_matrix, (frames, K, 4, 4)))
    return RagdollDrive(fps=fps, target=target, collider_matrix=cm,
                        params=RagdollParams.defaults(model.n_bodies, model.n_ragdolls, **params))


def walking_humanoid(bodies=11, frames=30, fps=30.0, colliders: ColliderSet | None = None,
                     collider_matrix=None, scale=1.0, **params):
    rest = humanoid_rest(bodies)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    target = walk_targets(rest, frames=frames, fps=fps, scale=scale)
    K = model.colliders.count
    cm = (np.zeros((frames, K, 4, 4)) if collider_matrix is None
          else np.broadcast_to(collider_matrix, (frames, K, 4, 4)))
    drive = RagdollDrive(fps=fps, target=target, collider_matrix=cm,
                         params=RagdollParams.defaults(model.n_bodies, 1, **params))
    return rest, model, drive


def angle_between(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Rotation angle (rad) between stacks of rotation matrices (..., 3, 3)."""
    c = (np.trace(np.swapaxes(A, -1, -2) @ B, axis1=-2, axis2=-1) - 1.0) / 2.0
    return np.arccos(np.clip(c, -1.0, 1.0))


def local_rotations(world: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """(F, N, 3, 3) rotations relative to the parent body (roots: world)."""
    R = world[..., :3, :3]
    p = np.maximum(parent, 0)
    local = np.swapaxes(R[:, p], -1, -2) @ R
    return np.where((parent >= 0)[None, :, None, None], local, R)


def folding_humanoid(bodies: int = 17):
    """The humanoid with knees that fold to 145° (twist ±10°) and stiff ankles (25°, twist
    ±10°): a limp body landing on its feet kneels and folds instead of standing on its table
    limits."""
    rest = humanoid_rest(bodies)
    swing, twist = rest.swing_limit.copy(), rest.twist_limit.copy()
    knee = [rest.names.index(n) for n in ("shin.L", "shin.R")]
    swing[knee], twist[knee] = np.radians([145.0, 10.0]), np.radians([-10.0, 10.0])
    ankle = [rest.names.index(n) for n in ("foot.L", "foot.R")]
    swing[ankle], twist[ankle] = np.radians([25.0, 10.0]), np.radians([-10.0, 10.0])
    return dataclasses.replace(rest, swing_limit=swing, twist_limit=twist)


def limp_drop(rest: RagdollRest, *, frames: int, tilt_deg: float = 0.0, lift: float = 0.0,
              fps: float = 30.0):
    """(model, drive) of ``rest`` limp (no motors, no root lock, friction 0.5) over a ground at
    height 0: tipped ``tilt_deg`` about the x axis through its feet (0, -0.15, 0), lifted
    ``lift`` metres and let go."""
    colliders, M = ground(0.0)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    pivot = np.eye(4)
    pivot[:3, 3] = (0.0, -0.15, 0.0)
    start = pivot @ rotation_x(np.radians(tilt_deg)) @ np.linalg.inv(pivot) @ rest.rest_matrix
    start[:, 2, 3] += lift
    drive = RagdollDrive(fps=fps, target=np.repeat(start[None], frames, axis=0),
                         collider_matrix=np.broadcast_to(M, (frames, 1, 4, 4)),
                         params=RagdollParams.defaults(len(rest.names), 1, root_lock=False,
                                                       motor_strength=0.0, friction=0.5))
    return model, drive
