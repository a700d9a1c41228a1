"""Audit (session 40): violations of the product's laws found with parameters the suite did not
use (repro scripts and figures in /work/tmp/s40/audit: rd_joints.py, rd_joint_frames.py,
rd_pair.py), fixed in the same session: the legs bend at the knee under a kinematic pelvis, and
ragdolls that touch only each other share one momentum projection."""

from __future__ import annotations

import dataclasses

import numpy as np

import waft.core.ragdoll.level as level_module
from waft.core.ragdoll import (
    BodyMode,
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
)
from waft.core.ragdoll._bench_cases import ground, humanoid_rest
from waft.core.ragdoll.level import JOINT_TOLERANCE

from .conftest import chain_rest, record_gaps_and_depths
from .test_ragdoll_angular_momentum import angular_momentum


def test_legs_on_motors_keep_their_joints_when_fast_hips_press_them_into_the_ground(
        monkeypatch):
    """A 17-body humanoid, its pelvis kinematic on a 1.5 Hz figure-eight peaking at 5 g (the
    frame-rate tests' motion; their humanoid has no legs), the rest on motors 0.8 (damping
    1), a ground 15 cm below its feet, read at the add-on's 120 Hz. Every joint must stay within
    its tolerance at the end of every substep, with the contacts held."""
    rest = humanoid_rest(17)
    colliders, M = ground(-0.15)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    rate, seconds, w = 120.0, 1.0, 2.0 * np.pi * 1.5
    t = np.arange(int(seconds * rate) + 1) / rate
    amplitude = 5.0 * 9.81 / w**2
    target = np.repeat(rest.rest_matrix[None], len(t), axis=0)
    target[:, :, :3, 3] += np.stack([amplitude * np.sin(w * t), 0 * t,
                                     0.5 * amplitude * np.sin(2 * w * t)], -1)[:, None]
    mode = np.full((1, 17), int(BodyMode.DRIVEN))
    mode[0, 0] = int(BodyMode.KINEMATIC)
    drive = RagdollDrive(fps=rate, target=target,
                         collider_matrix=np.broadcast_to(M, (len(t), 1, 4, 4)),
                         params=RagdollParams.defaults(17, 1, mode=mode, root_lock=False,
                                                       motor_strength=0.8, motor_damping=1.0))
    gaps, depths = record_gaps_and_depths(monkeypatch)
    bake_ragdoll(model, drive, RagdollSettings())
    assert max(depths) < 0.01
    assert max(gaps) < JOINT_TOLERANCE + 1e-6, max(gaps)


def test_two_ragdolls_colliding_in_zero_gravity_keep_their_angular_momentum(monkeypatch):
    """Two free capsules that collide with each other (collide_with_others), thrown at each
    other at 3 m/s, off centre, no gravity, nothing else: the contact between them is an
    internal force of the pair, so the pair's angular momentum about its centre of mass stays
    (relative 1e-9, as for one ragdoll alone)."""
    a = dataclasses.replace(chain_rest([(-0.5, 0, 0)], [(-0.2, 0, 0)], radius=0.06, mass=2.0,
                                       setup="A"), collide_with_others=True)
    b = dataclasses.replace(chain_rest([(0.2, 0.03, 0.02)], [(0.2, 0.33, 0.02)], radius=0.06,
                                       mass=5.0, setup="B"), collide_with_others=True)
    model = build_ragdoll_model(ragdolls=[a, b])
    frames, fps = 30, 30.0
    target = np.repeat(np.concatenate([a.rest_matrix, b.rest_matrix])[None], frames, axis=0)
    target[:, 0, 0, 3] += 3.0 * np.arange(frames) / fps
    target[:, 1, 0, 3] -= 3.0 * np.arange(frames) / fps
    drive = RagdollDrive(fps=fps, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=RagdollParams.defaults(2, 2, mode=int(BodyMode.FREE),
                                                       root_lock=False, motor_strength=0.0,
                                                       gravity=(0.0, 0.0, 0.0)))
    angular, linear, speed_a = [], [], []
    original = level_module.Level.step

    def step(level, sub, k):
        original(level, sub, k)
        angular.append(angular_momentum(level))
        linear.append(level.mass @ level.state.v[:level.n])
        speed_a.append(level.state.v[0, 0])

    monkeypatch.setattr(level_module.Level, "step", step)
    bake_ragdoll(model, drive, RagdollSettings())
    P, L = np.array(linear), np.array(angular)
    assert speed_a[-1] < 0.9 * speed_a[0]  # the pair met: A was slowed down
    assert np.abs(P - P[0]).max() <= 1e-9 * np.abs(P).max()
    assert np.linalg.norm(L - L[0], axis=1).max() <= 1e-9 * np.linalg.norm(L[0])
