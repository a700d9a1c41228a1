"""Seed 004's target constraints: velocity drive, root lock with the free-fall switch, distance
limit (shrinking with target speed), and the local-space blend."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.colliders import ColliderKind, ColliderSet
from waft.core.ragdoll import (
    BodyMode,
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
)
from waft.core.ragdoll.drives import effective_limit

from .conftest import angle_between, chain_rest, local_rotations, static_drive, walking_humanoid


def _single_body(**params):
    rest = chain_rest([(0, 0, 1.0)], [(0, 0, 1.3)])
    model = build_ragdoll_model(ragdolls=[rest])
    drive = static_drive(model, rest.rest_matrix, 16, root_lock=False, motor_strength=0.0,
                         **params)
    return rest, bake_ragdoll(model, drive, RagdollSettings())


def test_velocity_drive_fraction_holds_a_body_against_gravity():
    sag = {}
    for T in (0.0, 0.5, 1.0):
        rest, result = _single_body(velocity_drive=T)
        sag[T] = rest.rest_matrix[0, 2, 3] - result.physics_matrix[-1, 0, 2, 3]
    assert sag[0.0] == pytest.approx(0.5 * 9.81 * (15 / 30) ** 2, rel=0.02)  # free fall
    # Full drive: the gap closed every 1/30 s leaves the steady sag g h H (1.4 mm).
    assert 0.0 < sag[1.0] < 0.003
    assert sag[1.0] < sag[0.5] < 0.1 * sag[0.0]


def test_velocity_drive_acts_on_simulated_bodies_only():
    rest, free = _single_body(velocity_drive=1.0, mode=BodyMode.FREE)
    assert rest.rest_matrix[0, 2, 3] - free.physics_matrix[-1, 0, 2, 3] < 0.003
    rest, kinematic = _single_body(velocity_drive=1.0, mode=BodyMode.KINEMATIC)
    assert np.array_equal(kinematic.physics_matrix[:, 0], np.broadcast_to(rest.rest_matrix[0],
                                                                          (16, 4, 4)))


def _wall(y: float) -> tuple[ColliderSet, np.ndarray]:
    """An infinite wall through y whose outside faces +Y (local +Z of a plane)."""
    cs = ColliderSet.create(names=("Wall",), kind=[ColliderKind.PLANE], size=[1.0])
    M = np.eye(4)
    M[:3, 0], M[:3, 1], M[:3, 2], M[:3, 3] = (1, 0, 0), (0, 0, -1), (0, 1, 0), (0, y, 0)
    return cs, M


def runner_input(wall: bool, threshold: float = 0.3, **params):
    """(model, drive): a hips body (root locked) with two legs, its animation running at 2 m/s
    along -Y (into a wall at y = -0.5 with ``wall``)."""
    frames, fps = 30, 30.0
    rest = chain_rest([(0, 0, 1.0), (0, 0, 0.9), (0, 0, 0.5)],
                      [(0, 0, 1.2), (0, 0, 0.5), (0, 0, 0.1)], radius=0.08, mass=(10, 5, 3),
                      parent=[-1, 0, 1])
    colliders, M = _wall(-0.5) if wall else (None, None)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    target = np.repeat(rest.rest_matrix[None], frames, axis=0)
    target[:, :, 1, 3] -= 2.0 * np.arange(frames)[:, None] / fps
    K = model.colliders.count
    drive = RagdollDrive(
        fps=fps, target=target,
        collider_matrix=np.broadcast_to(M, (frames, K, 4, 4)) if K else np.zeros((frames, 0,
                                                                                 4, 4)),
        params=RagdollParams.defaults(3, 1, root_lock=True, fall_threshold=threshold,
                                      motor_strength=0.8, blend=0.3, **params))
    return model, drive


def _runner(wall: bool, threshold: float = 0.3, **params):
    model, drive = runner_input(wall, threshold, **params)
    return drive.target, bake_ragdoll(model, drive, RagdollSettings())


def test_root_lock_follows_the_target_and_never_falls_in_the_open():
    target, result = _runner(wall=False)
    assert list(result.fell_at) == [-1]
    gap = np.linalg.norm(result.physics_matrix[:, 0, :3, 3] - target[:, 0, :3, 3], axis=-1)
    assert gap.max() < 0.01
    turn = angle_between(result.physics_matrix[:, 0, :3, :3], target[:, 0, :3, :3])
    assert np.degrees(turn).max() < 1.0


def test_free_fall_switch_fires_when_the_root_is_blocked_by_a_wall():
    target, result = _runner(wall=True)
    fell = int(result.fell_at[0])
    # The hips reach the wall (0.08 m radius at y = -0.5) after ~0.21 s and lag 0.3 m behind
    # the target another 0.15 s later.
    assert 8 <= fell <= 14
    hips = result.physics_matrix[:, 0, :3, 3]
    assert np.all(hips[:, 1] > -0.5 + 0.08 - 1e-3)  # never through the wall
    # After the switch the ragdoll drops (no lock, no motors) and is shown unblended.
    assert hips[-1, 2] < hips[fell, 2] - 0.3
    assert np.allclose(result.body_matrix[fell + 1:], result.physics_matrix[fell + 1:],
                       atol=1e-9)


def test_distance_limit_is_never_exceeded():
    limits = np.array([[np.inf] * 5 + [0.05, 0.05, 0.05] + [np.inf] * 3])
    common = dict(bodies=11, frames=30, motor_strength=0.4, joint_damping=0.5)
    rest, model, drive = walking_humanoid(**common)
    free = bake_ragdoll(model, drive, RagdollSettings())
    rest, model, drive = walking_humanoid(**common, distance_limit=limits)
    held = bake_ragdoll(model, drive, RagdollSettings())

    def gap(result):
        return np.linalg.norm(result.physics_matrix[:, 5:8, :3, 3]
                              - drive.target[:, 5:8, :3, 3], axis=-1)

    assert gap(free).max() > 0.1  # the left arm would stray without the limit
    assert gap(held).max() <= 0.05 + 1e-9
    # ...while the right arm, unlimited, strays as before.
    right = np.linalg.norm(held.physics_matrix[:, 9, :3, 3] - drive.target[:, 9, :3, 3], -1)
    assert right.max() > 0.1


def test_distance_limit_shrinks_with_target_speed_and_locks():
    d = effective_limit(np.array([0.2, 0.2, 0.2, 0.2, np.inf]),
                        np.array([1.0, 1.0, 1.0, np.inf, 1.0]),
                        np.array([0.0, 0.5, 2.0, 5.0, 2.0]))
    assert list(d) == [0.2, 0.1, 0.0, 0.2, 0.0]
    # A free body whose target runs at 2 m/s with limit 0.3 m that vanishes at 1 m/s: locked.
    rest = chain_rest([(0, 0, 1.0)], [(0, 0, 1.3)])
    model = build_ragdoll_model(ragdolls=[rest])
    frames = 20
    for speed, bound in ((2.0, 1e-9), (0.5, 0.15 + 1e-9)):
        target = np.repeat(rest.rest_matrix[None], frames, axis=0)
        target[:, 0, 0, 3] += speed * np.arange(frames) / 30.0
        drive = RagdollDrive(fps=30.0, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                             params=RagdollParams.defaults(1, 1, root_lock=False,
                                                           mode=BodyMode.FREE,
                                                           motor_strength=0.0,
                                                           distance_limit=0.3,
                                                           distance_limit_speed=1.0))
        result = bake_ragdoll(model, drive, RagdollSettings())
        gap = np.linalg.norm(result.physics_matrix[:, 0, :3, 3] - target[:, 0, :3, 3], axis=-1)
        assert gap.max() <= bound
        assert gap[-1] > 0.1 or speed > 1.0  # slow: the body does sag within its limit


def test_local_space_blend():
    common = dict(bodies=8, frames=20, motor_strength=0.3)
    results = {}
    for b in (0.0, 0.5, 1.0):
        rest, model, drive = walking_humanoid(**common, blend=b)
        results[b] = bake_ragdoll(model, drive, RagdollSettings())
    physics = results[0.0].physics_matrix
    # The physics does not depend on the blend; the output does. (To 1e-9 m, not bitwise:
    # repeated ragdoll bakes in one process part by an ulp at some frame, an open determinism
    # bug documented in docs/ragdoll-solver.md, ~2e-13 m by frame 20 here.)
    assert np.allclose(results[1.0].physics_matrix, physics, rtol=0.0, atol=1e-9)
    assert np.allclose(results[0.0].body_matrix, physics, atol=1e-9)
    assert np.allclose(results[1.0].body_matrix, drive.target, atol=1e-9)
    sim = local_rotations(physics, model.parent)
    anim = local_rotations(drive.target, model.parent)
    half = local_rotations(results[0.5].body_matrix, model.parent)
    full = angle_between(sim, anim)
    assert full.max() > 0.05
    assert np.allclose(angle_between(half, anim), 0.5 * full, atol=0.01 * full.max() + 1e-6)
    assert np.allclose(angle_between(half, sim), 0.5 * full, atol=0.01 * full.max() + 1e-6)


def test_switching_from_kinematic_to_free_keeps_the_animation_velocity():
    # Released at frame 10, a body thrown by its animation flies on at the same velocity.
    rest = chain_rest([(0, 0, 1.0)], [(0, 0, 1.3)])
    model = build_ragdoll_model(ragdolls=[rest])
    frames = 20
    target = np.repeat(rest.rest_matrix[None], frames, axis=0)
    target[:, 0, 0, 3] += 2.0 * np.arange(frames) / 30.0
    mode = np.where(np.arange(frames) < 10, BodyMode.KINEMATIC, BodyMode.FREE)[:, None]
    drive = RagdollDrive(fps=30.0, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=RagdollParams.defaults(1, 1, mode=mode, root_lock=False,
                                                       gravity=np.zeros(3)))
    result = bake_ragdoll(model, drive, RagdollSettings())
    x = result.physics_matrix[:, 0, 0, 3]
    assert np.array_equal(result.physics_matrix[:10, 0], target[:10, 0])
    assert np.allclose(np.diff(x[10:]) * 30.0, 2.0, rtol=1e-6)


def test_a_distance_limit_keeps_the_joints_together():
    """A companion-like chain (kinematic base, free torso and head, no motors) carried at up to
    3 m/s with the head's limit shrinking to zero (locked) at 3 m/s: the limit holds and the
    neck stays shut. Solved only as a projection after the iterations, the limit pulled the head
    off the sagging torso (16 cm gap at the neck)."""
    frames, fps = 90, 30.0
    rest = chain_rest([(0, 0, 1.0), (0, 0, 1.06), (0, 0, 1.22)],
                      [(0, 0, 1.06), (0, 0.02, 1.22), (0, 0.04, 1.32)], mass=(1, 1, 0.5),
                      swing=np.pi, twist=(-np.pi, np.pi))
    model = build_ragdoll_model(ragdolls=[rest])
    t = np.arange(frames) / fps
    target = np.repeat(rest.rest_matrix[None], frames, axis=0).copy()
    speed = 1.5 + 1.5 * np.clip(t - 1.0, 0.0, 1.0)
    target[:, :, 1, 3] -= np.cumsum(speed / fps)[:, None]
    target[:, :, 2, 3] += 0.03 * np.sin(4 * np.pi * t)[:, None]
    target[:, :, 0, 3] += 0.02 * np.sin(2 * np.pi * t)[:, None]
    drive = RagdollDrive(
        fps=fps, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
        params=RagdollParams.defaults(
            3, 1, mode=np.array([[BodyMode.KINEMATIC, BodyMode.FREE, BodyMode.FREE]]),
            root_lock=True, motor_strength=0.0, joint_damping=3.0,
            distance_limit=np.array([[np.inf, np.inf, 0.12]]),
            distance_limit_speed=np.array([[np.inf, np.inf, 3.0]])))
    m = bake_ragdoll(model, drive, RagdollSettings()).physics_matrix
    limit = effective_limit(np.array(0.12), np.array(3.0), np.array(speed))
    reach = np.linalg.norm(m[:, 2, :3, 3] - target[:, 2, :3, 3], axis=-1)
    assert np.all(reach <= limit + 1e-9)
    neck = np.linalg.inv(rest.rest_matrix[1]) @ rest.rest_matrix[2][:, 3]
    gap = np.linalg.norm(m[:, 2, :3, 3] - np.einsum("fij,j->fi", m[:, 1], neck)[:, :3], axis=-1)
    assert gap.max() < 0.005  # JOINT_TOLERANCE


def test_recovery_blends_back_to_the_animation_without_a_jump():
    """After the fall, wait 0.2 s, then blend back over 0.3 s: from then on the shown pose is
    the animation's, and no frame jumps further than the simulation or the animation do."""
    target, result = _runner(wall=True, recovery_delay=0.2, recovery_time=0.3)
    fell = int(result.fell_at[0])
    assert 8 <= fell <= 14
    done = fell + int(np.ceil((0.2 + 0.3) * 30))
    assert np.allclose(result.body_matrix[done:], target[done:], atol=1e-9)
    assert np.allclose(result.body_matrix[fell + 1:fell + 6],
                       result.physics_matrix[fell + 1:fell + 6], atol=1e-9)  # still falling

    def steps(m):
        return np.linalg.norm(np.diff(m[:, :, :3, 3], axis=0), axis=-1)  # (F - 1, N)

    # A blend x = p + w (a - p) moves by at most |Δp| + |Δa| + |a - p| |Δw| per frame; the
    # smoothstep's steepest frame is |Δw| = 1.5 / (0.3 s · 30 fps) (a snap would be 1).
    gap = np.linalg.norm(target[:, :, :3, 3] - result.physics_matrix[:, :, :3, 3], axis=-1)
    bound = (steps(result.physics_matrix) + steps(target)
             + np.maximum(gap[1:], gap[:-1]) * 1.5 / (0.3 * 30))
    assert np.all(steps(result.body_matrix) <= bound + 1e-9)
    dw = np.diff(result.body_matrix[:, 0, 2, 3])  # the hips' vertical speed has no kink...
    assert np.abs(np.diff(dw)).max() < 0.1  # m/frame²: 90 m/s² at 30 fps
