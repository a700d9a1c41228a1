"""A procedural humanoid ragdoll walking on a ground plane, for benchmarks and tests.

`make_humanoid_case(bodies=17, frames=250)` returns (model, drive, settings); R2's Bullet
comparison builds the same bodies from `humanoid_rest()`. Z up, the character walks along -Y.
"""

from __future__ import annotations

import numpy as np

from ..colliders import ColliderKind, ColliderSet
from .drive import RagdollDrive
from .model import RagdollModel, RagdollRest, build_ragdoll_model
from .params import RagdollParams, RagdollSettings

# name, parent, head, tail, radius, mass (kg)
HUMANOID = (
    ("pelvis", -1, (0.0, 0.0, 0.95), (0.0, 0.0, 1.10), 0.12, 10.0),
    ("spine", 0, (0.0, 0.0, 1.10), (0.0, 0.0, 1.30), 0.11, 8.0),
    ("chest", 1, (0.0, 0.0, 1.30), (0.0, 0.0, 1.50), 0.13, 10.0),
    ("neck", 2, (0.0, 0.0, 1.50), (0.0, 0.0, 1.60), 0.05, 1.5),
    ("head", 3, (0.0, 0.0, 1.60), (0.0, 0.0, 1.80), 0.09, 5.0),
    ("upper_arm.L", 2, (0.18, 0.0, 1.45), (0.45, 0.0, 1.45), 0.045, 2.0),
    ("forearm.L", 5, (0.45, 0.0, 1.45), (0.70, 0.0, 1.45), 0.04, 1.5),
    ("hand.L", 6, (0.70, 0.0, 1.45), (0.80, 0.0, 1.45), 0.035, 0.5),
    ("upper_arm.R", 2, (-0.18, 0.0, 1.45), (-0.45, 0.0, 1.45), 0.045, 2.0),
    ("forearm.R", 8, (-0.45, 0.0, 1.45), (-0.70, 0.0, 1.45), 0.04, 1.5),
    ("hand.R", 9, (-0.70, 0.0, 1.45), (-0.80, 0.0, 1.45), 0.035, 0.5),
    ("thigh.L", 0, (0.10, 0.0, 0.95), (0.10, 0.0, 0.50), 0.07, 7.0),
    ("shin.L", 11, (0.10, 0.0, 0.50), (0.10, 0.0, 0.10), 0.05, 3.5),
    ("foot.L", 12, (0.10, 0.0, 0.10), (0.10, -0.15, 0.05), 0.04, 1.0),
    ("thigh.R", 0, (-0.10, 0.0, 0.95), (-0.10, 0.0, 0.50), 0.07, 7.0),
    ("shin.R", 14, (-0.10, 0.0, 0.50), (-0.10, 0.0, 0.10), 0.05, 3.5),
    ("foot.R", 15, (-0.10, 0.0, 0.10), (-0.10, -0.15, 0.05), 0.04, 1.0),
)

# Walk cycle (1 Hz): amplitude (rad) and phase (cycles) of each bone's rotation about its local X.
_SWING = {"thigh.L": (0.45, 0.0), "thigh.R": (0.45, 0.5), "shin.L": (0.35, 0.25),
          "shin.R": (0.35, 0.75), "upper_arm.L": (0.35, 0.5), "upper_arm.R": (0.35, 0.0),
          "forearm.L": (0.25, 0.6), "forearm.R": (0.25, 0.1), "spine": (0.05, 0.0),
          "chest": (0.05, 0.5), "head": (0.08, 0.25)}


def bone_frame(head, tail) -> np.ndarray:
    """Body frame at `head` with +Y toward `tail` and a fixed roll (X ⟂ world Y where possible)."""
    head, tail = np.asarray(head, float), np.asarray(tail, float)
    y = (tail - head) / np.linalg.norm(tail - head)
    hint = np.array([0.0, -1.0, 0.0]) if abs(y[1]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x = np.cross(y, hint)
    x /= np.linalg.norm(x)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = x, y, np.cross(x, y), head
    return m


def humanoid_rest(bodies: int = 17, *, setup: str = "Humanoid", offset=(0.0, 0.0, 0.0)
                  ) -> RagdollRest:
    """The first `bodies` (1..17) bones of HUMANOID as a RagdollRest (parents come first)."""
    bones = HUMANOID[:bodies]
    rest = np.stack([bone_frame(h, t) for _, _, h, t, _, _ in bones])
    rest[:, :3, 3] += np.asarray(offset, float)
    swing = np.full((len(bones), 2), np.radians(60.0))
    twist = np.tile(np.radians([-30.0, 30.0]), (len(bones), 1))
    return RagdollRest(
        setup=setup, names=tuple(b[0] for b in bones),
        parent=np.array([b[1] for b in bones]), rest_matrix=rest,
        length=np.array([np.linalg.norm(np.subtract(b[3], b[2])) for b in bones]),
        radius=np.array([b[4] for b in bones]), mass=np.array([b[5] for b in bones]),
        swing_limit=swing, twist_limit=twist)


def rotation_x(angle: np.ndarray) -> np.ndarray:
    """(..., 4, 4) rotations about local X."""
    c, s = np.cos(angle), np.sin(angle)
    m = np.zeros(np.shape(angle) + (4, 4))
    m[..., 0, 0] = m[..., 3, 3] = 1.0
    m[..., 1, 1], m[..., 1, 2], m[..., 2, 1], m[..., 2, 2] = c, -s, s, c
    return m


def walk_targets(rest: RagdollRest, *, frames: int, fps: float, speed: float = 1.2,
                 scale: float = 1.0, swing: dict[str, tuple[float, float]] | None = None
                 ) -> np.ndarray:
    """(F, N, 4, 4) target body frames of a procedural walk (forward kinematics of local
    rotations about each bone's X, the root translating along -Y with a vertical bob).
    `swing`: bone -> (amplitude rad, phase cycles) of a 1 Hz swing, default `_SWING`."""
    swing = _SWING if swing is None else swing
    t = np.arange(frames) / fps
    N = len(rest.names)
    local = np.broadcast_to(np.eye(4), (frames, N, 4, 4)).copy()
    for i, name in enumerate(rest.names):
        if name in swing:
            amp, phase = swing[name]
            local[:, i] = rotation_x(scale * amp * np.sin(2 * np.pi * (t - phase)))
    world = np.empty((frames, N, 4, 4))
    root_move = np.broadcast_to(np.eye(4), (frames, 4, 4)).copy()
    root_move[:, 1, 3] = -speed * t
    root_move[:, 2, 3] = 0.02 * scale * np.sin(4 * np.pi * t)
    for i in range(N):  # setup-time forward kinematics over a tree of <= 17 bones
        p = int(rest.parent[i])
        if p < 0:
            world[:, i] = root_move @ rest.rest_matrix[i] @ local[:, i]
        else:
            offset = np.linalg.inv(rest.rest_matrix[p]) @ rest.rest_matrix[i]
            world[:, i] = world[:, p] @ offset @ local[:, i]
    return world


def ground(height: float = 0.0) -> tuple[ColliderSet, np.ndarray]:
    """A ground plane collider (local +Z outside) and its matrix."""
    cs = ColliderSet.create(names=("Ground",), kind=[ColliderKind.PLANE], size=[1.0])
    M = np.eye(4)
    M[2, 3] = height
    return cs, M


def make_humanoid_case(bodies: int = 17, frames: int = 250, *, fps: float = 30.0,
                       ragdolls: int = 1
                       ) -> tuple[RagdollModel, RagdollDrive, RagdollSettings]:
    """A driven humanoid (root locked, arms on a 40 % physics blend) walking on a ground plane,
    solved at 240 Hz with the default iterations. `ragdolls` > 1 puts that many copies side by
    side (1 m apart) into the same bake: one solve, vectorised over all their bodies."""
    rests = [humanoid_rest(bodies, setup=f"Humanoid.{r:03d}" if ragdolls > 1 else "Humanoid",
                           offset=(1.0 * r, 0.0, 0.0)) for r in range(ragdolls)]
    colliders, M = ground(-0.05)
    model = build_ragdoll_model(ragdolls=rests, colliders=colliders)
    target = np.concatenate([walk_targets(rest, frames=frames, fps=fps) for rest in rests],
                            axis=1)
    blend = np.array([[0.6 if "arm" in n or "hand" in n else 0.0 for n in model.names]])
    params = RagdollParams.defaults(model.n_bodies, ragdolls, motor_strength=0.8, blend=blend)
    drive = RagdollDrive(fps=fps, target=target,
                         collider_matrix=np.broadcast_to(M, (frames, 1, 4, 4)), params=params)
    return model, drive, RagdollSettings(substep=1.0 / 240.0, iterations=4)
