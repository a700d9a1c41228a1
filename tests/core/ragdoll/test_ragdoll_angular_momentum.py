"""Angular momentum of a ragdoll alone in space (no gravity, contacts, lock or damping toward
the world): every force is internal (joints, limits, motors, joint damping), so the total
angular momentum about the centre of mass stays what it was, whatever the bodies do."""

from __future__ import annotations

import numpy as np
import pytest

import waft.core.ragdoll.level as level_module
from waft.core.ragdoll import (
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
)
from waft.core.ragdoll._bench_cases import humanoid_rest, walk_targets
from waft.core.ragdoll.bodies import rotate, rotate_inv


def angular_momentum(level) -> np.ndarray:
    """Σ m (x − c) × (v − v_c) + R I Rᵀ ω of the level's bodies, about their centre of mass."""
    s, n, m = level.state, level.n, level.mass
    x, v = s.x[:n], s.v[:n]
    c = m @ x / m.sum()
    vc = m @ v / m.sum()
    orbital = np.cross(x - c, v - vc) * m[:, None]
    spin = rotate(s.R[:n], level.inertia * rotate_inv(s.R[:n], s.w[:n]))
    return (orbital + spin).sum(axis=0)


def spinning(target: np.ndarray, *, fps: float = 30.0, rate: float = 3.0) -> np.ndarray:
    """The targets turned about a tilted axis through the pelvis at `rate` rad/s: the bodies
    start with that spin (no pre-roll), so the ragdoll tumbles."""
    axis = np.array([0.3, 1.0, 0.5]) / np.linalg.norm([0.3, 1.0, 0.5])
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    pivot = target[0, 0, :3, 3]
    out = target.copy()
    for f in range(len(target)):
        a = rate * f / fps
        R = np.eye(3) + np.sin(a) * K + (1.0 - np.cos(a)) * K @ K
        out[f, :, :3, :3] = R @ target[f, :, :3, :3]
        out[f, :, :3, 3] = (target[f, :, :3, 3] - pivot) @ R.T + pivot
    return out


def internal_kinetic_energy(level) -> float:
    """Kinetic energy of the motion relative to the centre of mass (uniform gravity does no
    work on it)."""
    s, n, m = level.state, level.n, level.mass
    v, wb = s.v[:n], rotate_inv(s.R[:n], s.w[:n])
    momentum = m @ v
    return 0.5 * float(m @ np.einsum("nk,nk->n", v, v) + np.sum(level.inertia * wb * wb)
                       - momentum @ momentum / m.sum())


@pytest.mark.parametrize(("motor_strength", "joint_damping", "gravity"),
                         [(0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.8, 1.0, 0.0), (0.8, 1.0, -9.81),
                          (0.0, 0.0, -9.81)])
def test_ragdoll_alone_in_the_air_keeps_its_momenta(monkeypatch, motor_strength, joint_damping,
                                                      gravity):
    """A humanoid thrown tumbling (a 3x walk spinning at 3 rad/s), limp or driven by its motors
    toward the walk, its limits hit over and over, with or without gravity and nothing to touch:
    over 5 s its angular momentum about the centre of mass stays (relative 1e-9; it drifted
    10 % limp and 99 % with motors), its linear momentum grows by exactly M g h a substep, and
    limp, its kinetic energy about the centre of mass never rises (it rose 2 %)."""
    frames = 150
    rest = humanoid_rest(17)
    model = build_ragdoll_model(ragdolls=[rest])
    drive = RagdollDrive(
        fps=30.0, target=spinning(walk_targets(rest, frames=frames, fps=30.0, scale=3.0)),
        collider_matrix=np.zeros((frames, 0, 4, 4)),
        params=RagdollParams.defaults(17, 1, root_lock=False, motor_strength=motor_strength,
                                      joint_damping=joint_damping, gravity=(0.0, 0.0, gravity)))
    angular, linear, energy = [], [], []
    original = level_module.Level.step

    def step(level, sub, k):
        original(level, sub, k)
        angular.append(angular_momentum(level))
        linear.append(level.mass @ level.state.v[:level.n])
        energy.append(internal_kinetic_energy(level))

    monkeypatch.setattr(level_module.Level, "step", step)
    settings = RagdollSettings()
    bake_ragdoll(model, drive, settings)
    L = np.array(angular)
    size = np.linalg.norm(L[0])
    assert size > 5.0  # kg m²/s: it really tumbles
    assert np.linalg.norm(L - L[0], axis=1).max() <= 1e-9 * size
    P = np.array(linear)
    expected = P[0] + np.outer(np.arange(len(P)), (0.0, 0.0, rest.mass.sum() * gravity
                                                   * settings.substep))
    assert np.abs(P - expected).max() <= 1e-9 * max(np.linalg.norm(P[0]),
                                                    np.linalg.norm(expected[-1]))
    if motor_strength == 0.0:
        E = np.array(energy)
        assert np.max(E - np.minimum.accumulate(E)) <= 1e-9 * E[0]
