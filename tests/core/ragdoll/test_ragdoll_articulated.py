"""The experimental articulated solve (``articulated.py``, ``level.ARTICULATED_MOTORS`` and
``ARTICULATED_JOINTS``): motors toward a target that does not move are springs, so a chain on
them, alone in zero gravity and undamped, keeps its energy (kinetic + the motors' ½ ω² I θ²);
the default subtree motors gain 25 % of it at 960 Hz (``test_the_subtree_motors_make_energy``
records that, so the day they stop, the docs' figure is updated). A limp body shaken at 5 g
does not amplify a difference of its input, with either solver."""

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
from waft.core.ragdoll._bench_cases import humanoid_rest, walk_targets
from waft.core.ragdoll.bodies import qmul, quat_conj, quat_log, rotate_inv
from waft.core.ragdoll.motors import motor_omega

from .conftest import chain_rest

STRENGTH = 0.5
BENT_FROM = 2  # the target bends at this frame and stays


def _energy_rise(monkeypatch, hz: float) -> tuple[float, float]:
    """(largest rise of kinetic + spring energy over its lowest value before, energy when the
    target bent) of a 3-body chain in zero gravity, motors undamped."""
    n, frames = 3, 60
    rest = chain_rest([(0.4 * i, 0, 1.0) for i in range(n)],
                      [(0.4 * (i + 1), 0, 1.0) for i in range(n)], radius=0.05,
                      mass=[10.0, 3.0, 3.0])
    model = build_ragdoll_model(ragdolls=[rest])
    target = np.repeat(rest.rest_matrix[None], frames, axis=0).copy()
    c, s = np.cos(1.0), np.sin(1.0)
    bend = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    target[BENT_FROM:, 1:, :3, :3] = bend @ rest.rest_matrix[1:, :3, :3]
    drive = RagdollDrive(fps=30.0, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=RagdollParams.defaults(n, 1, root_lock=False,
                                                       motor_strength=STRENGTH,
                                                       motor_damping=0.0, joint_damping=0.0,
                                                       gravity=(0.0, 0.0, 0.0)))
    energy = []
    original = level_module.Level.step

    def step(level, sub, k):
        original(level, sub, k)
        st, m = level.state, level.n
        v = st.v[:m]
        wb = rotate_inv(st.R[:m], st.w[:m])
        kinetic = 0.5 * (level.mass @ np.einsum("nk,nk->n", v, v)
                         + np.sum(level.inertia * wb * wb))
        child = np.flatnonzero(~level.is_root)
        parent = level.parent[child]
        desired = qmul(st.q[parent], level.local_target[sub.f][child])
        theta = quat_log(qmul(desired, quat_conj(st.q[child])))
        k_spring = float(motor_omega(np.array(STRENGTH))) ** 2 * level.joint_inertia[child]
        spring = 0.5 * np.sum(k_spring * np.einsum("nk,nk->n", theta, theta))
        if sub.f >= BENT_FROM:
            energy.append(kinetic + spring)

    monkeypatch.setattr(level_module.Level, "step", step)
    bake_ragdoll(model, drive, RagdollSettings(substep=1.0 / hz, self_collision=False))
    E = np.array(energy)
    return float(np.max(E - np.minimum.accumulate(E))), float(E[0])


@pytest.mark.parametrize("hz", [240.0, 960.0])
def test_articulated_motors_make_no_energy(monkeypatch, hz):
    monkeypatch.setattr(level_module, "ARTICULATED_MOTORS", True)
    rise, start = _energy_rise(monkeypatch, hz)
    assert start > 10.0  # J: the springs are loaded
    assert rise <= 0.005 * start


def test_the_subtree_motors_make_energy(monkeypatch):
    monkeypatch.setattr(level_module, "ARTICULATED_MOTORS", False)
    rise, start = _energy_rise(monkeypatch, 960.0)
    assert rise > 0.1 * start


def _shaken_limp(nudge: float) -> np.ndarray:
    """Bone heads (F, N, 3) of a limp humanoid (motors off, limits on) whose kinematic hips
    swing a 1.5 Hz figure-eight peaking at 5 g, sampled at 120 Hz for 0.4 s; ``nudge`` (m)
    moves the spine's animated offset, which places the chest's joint, a little."""
    rest = humanoid_rest(17)
    frames, fps = 49, 120.0
    target = walk_targets(rest, frames=frames, fps=fps, speed=0.0, scale=0.0)
    omega = 2.0 * np.pi * 1.5
    amplitude = 5.0 * 9.81 / omega ** 2
    t = np.arange(frames) / fps
    target[:, :, 0, 3] += amplitude * np.sin(omega * t)[:, None]
    target[:, :, 1, 3] += 0.25 * amplitude * np.sin(2.0 * omega * t)[:, None]
    target[:, 1, 0, 3] += nudge * np.sin(np.arange(frames))
    mode = np.full((1, 17), BodyMode.DRIVEN)
    mode[0, 0] = BodyMode.KINEMATIC
    drive = RagdollDrive(fps=fps, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=RagdollParams.defaults(17, 1, mode=mode, root_lock=False,
                                                       motor_strength=0.0))
    result = bake_ragdoll(build_ragdoll_model(ragdolls=[rest]), drive,
                          RagdollSettings(self_collision=False))
    return result.physics_matrix[:, :, :3, 3]


@pytest.mark.parametrize("articulated", [False, True])
def test_a_limp_shaken_body_does_not_amplify_a_difference_of_its_input(monkeypatch,
                                                                        articulated):
    """Limbs slamming into their limits at 5 g: 1e-9 m in, under 1e-7 m out after 0.4 s.
    Solving every limit of the tree as one system through the articulated response made it
    5 mm (and 24 and 30 fps bakes of a shake 0.3 m apart): that solve would fail here."""
    monkeypatch.setattr(level_module, "ARTICULATED_MOTORS", articulated)
    monkeypatch.setattr(level_module, "ARTICULATED_JOINTS", articulated)
    apart = np.linalg.norm(_shaken_limp(1e-9) - _shaken_limp(0.0), axis=-1).max()
    assert apart < 1e-7
