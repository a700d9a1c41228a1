"""Motors are torque-limited (``level.MOTOR_MAX_ACCELERATION``) whichever solver turns them:
the default subtree motors, the two-body motors (``level.SUBTREE_MOTORS = False``) and the
experimental articulated ones (``level.ARTICULATED_MOTORS``). The limit belongs to the motor:
a near-rigid motor asked to turn a limb 2 rad at once may not give it more than the maximum
angular acceleration about its joint, so from rest it turns at most ½ A t (t + h) in time t
(the positional integrator's Σ k A h² over t / h substeps)."""

from __future__ import annotations

import numpy as np
import pytest

import waft.core.ragdoll.level as level_module
from waft.core.ragdoll import (
    BodyMode,
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
)

from .conftest import chain_rest

FPS = 120.0
BENT_FROM = 4  # the target bends by BEND at this frame and stays
BEND = 2.0  # rad
SUBSTEP = 1.0 / 240.0


def _turned(monkeypatch, solver: str, acceleration: float) -> np.ndarray:
    """The child's angle from rest (rad) per frame: a kinematic root holds a 0.4 m capsule
    on a motor of strength 0.99 (a 198 Hz spring) in zero gravity."""
    monkeypatch.setattr(level_module, "MOTOR_MAX_ACCELERATION", acceleration)
    monkeypatch.setattr(level_module, "SUBTREE_MOTORS", solver == "subtree")
    monkeypatch.setattr(level_module, "ARTICULATED_MOTORS", solver == "articulated")
    frames = 12
    rest = chain_rest([(0.0, 0.0, 1.0), (0.2, 0.0, 1.0)], [(0.2, 0.0, 1.0), (0.6, 0.0, 1.0)],
                      radius=0.04, mass=[5.0, 2.0])
    target = np.repeat(rest.rest_matrix[None], frames, axis=0).copy()
    c, s = np.cos(BEND), np.sin(BEND)
    bend = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    target[BENT_FROM:, 1, :3, :3] = bend @ rest.rest_matrix[1, :3, :3]
    mode = np.full((1, 2), BodyMode.DRIVEN)
    mode[0, 0] = BodyMode.KINEMATIC
    drive = RagdollDrive(fps=FPS, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=RagdollParams.defaults(2, 1, mode=mode, root_lock=False,
                                                       motor_strength=0.99, motor_damping=0.0,
                                                       joint_damping=0.0,
                                                       gravity=(0.0, 0.0, 0.0)))
    result = bake_ragdoll(build_ragdoll_model(ragdolls=[rest]), drive,
                          RagdollSettings(substep=SUBSTEP, self_collision=False))
    R = result.physics_matrix[:, 1, :3, :3] @ rest.rest_matrix[1, :3, :3].T
    return np.arccos(np.clip((np.einsum("fii->f", R) - 1.0) / 2.0, -1.0, 1.0))


@pytest.mark.parametrize("solver", ["subtree", "two-body", "articulated"])
def test_a_near_rigid_motor_turns_no_faster_than_its_torque_limit(monkeypatch, solver):
    limit = 3000.0  # rad/s²
    angle = _turned(monkeypatch, solver, limit)
    assert np.all(angle[:BENT_FROM - 1] < 1e-9)
    # the earliest substep that can see the bent target is one frame before it (targets are
    # interpolated between frames)
    t = np.maximum(np.arange(len(angle)) - (BENT_FROM - 1), 0) / FPS
    bound = 0.5 * limit * t * (t + SUBSTEP)
    assert np.all(angle <= bound * 1.02 + 1e-9), (angle, bound)
    assert angle[-1] > 0.5 * BEND  # it still gets there
    # without the limit the same motor turns the limb far faster: the bound above can fail
    free = _turned(monkeypatch, solver, np.inf)
    assert np.any(free > bound * 1.5)
