"""A fixed substep: 30 and 60 fps bakes agree; a ragdoll carried by another one's body is
solved after its carrier, on the carrier's simulated pose, within the same frame."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from waft.core.errors import SetupError
from waft.core.ragdoll import (
    BodyMode,
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
)
from waft.core.ragdoll._bench_cases import ground, humanoid_rest, walk_targets

from .conftest import angle_between, chain_rest
from .test_ragdoll_targets import _wall


def _walk(fps: float, seconds: float = 1.0):
    rest = humanoid_rest(11)
    cs, M = ground(-0.2)
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    frames = int(round(seconds * fps)) + 1
    target = walk_targets(rest, frames=frames, fps=fps)
    drive = RagdollDrive(fps=fps, target=target, collider_matrix=np.broadcast_to(
        M, (frames, 1, 4, 4)), params=RagdollParams.defaults(
            11, 1, motor_strength=0.6, motor_damping=0.3, velocity_drive=0.2, blend=0.3))
    return bake_ragdoll(model, drive, RagdollSettings())


def test_30_and_60_fps_bakes_agree():
    a, b = _walk(30.0), _walk(60.0)
    same = b.body_matrix[::2]
    assert same.shape == a.body_matrix.shape
    gap = np.linalg.norm(a.body_matrix[..., :3, 3] - same[..., :3, 3], axis=-1)
    turn = np.degrees(angle_between(a.body_matrix[..., :3, :3], same[..., :3, :3]))
    # Only the linear interpolation of the 30 fps animation between its frames differs.
    assert gap.max() < 0.003, gap.max()
    assert turn.max() < 0.5, turn.max()


def _shaken(fps: float, *, rate: float | None, seconds: float = 2.0):
    """An 11-body humanoid whose locked root is shaken 0.3 m at 2 Hz (4.8 g), motors 0.6,
    baked at `fps`: read at `rate` samples per second from frame 0 with the scene's frames as
    output frames, or (`rate` None) at whole multiples of `fps` of at least 120 per second, one
    output per frame (how the add-on read ragdolls before)."""
    rest = humanoid_rest(11)
    cs, M = ground(-0.3)
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    frames = int(round(seconds * fps)) + 1
    per = 1 if rate is not None else int(np.ceil(120.0 / fps - 1e-9))
    rate = fps * per if rate is None else rate
    samples = int(np.ceil((frames - 1) / fps * rate - 1e-9)) + 1

    def targets(t):
        w = 2.0 * np.pi * 2.0
        target = np.repeat(rest.rest_matrix[None], len(t), axis=0)
        target[:, :, :3, 3] += np.stack([0.3 * np.sin(w * t), 0.09 * np.sin(2 * w * t + 0.5),
                                         0 * t], axis=-1)[:, None]
        return target

    output = {} if per > 1 else {"output_fps": fps,
                                 "output_target": targets(np.arange(frames) / fps)}
    drive = RagdollDrive(fps=rate, target=targets(np.arange(samples) / rate),
                         collider_matrix=np.broadcast_to(M, (samples, 1, 4, 4)),
                         params=RagdollParams.defaults(11, 1, motor_strength=0.6,
                                                       motor_damping=0.3), **output)
    return bake_ragdoll(model, drive, RagdollSettings()).body_matrix[::per]


def test_fast_motion_agrees_at_every_frame_rate_on_a_shared_sample_grid():
    """Frame rate law at several g: the animation read on one grid in seconds (the add-on's
    120 Hz) and the scene's frames asked for as output frames, 24, 25, 30, 50 and 60 fps bakes
    agree at the times they share. Read at multiples of each frame rate (120 Hz at 24, 30 and
    60 fps, but 125 at 25 and 150 at 50) they parted by up to 14 mm and 3.8 degrees."""
    rates = (24.0, 25.0, 30.0, 50.0, 60.0)
    shared = {fps: _shaken(fps, rate=120.0) for fps in rates}
    apart = {fps: _shaken(fps, rate=None) for fps in (24.0, 25.0, 50.0)}
    for a in rates:
        for b in rates:
            # whole seconds are frames at every rate
            ia, ib = np.arange(3) * int(a), np.arange(3) * int(b)
            gap = np.abs(shared[a][ia] - shared[b][ib]).max()
            assert gap <= 1e-9, (a, b, gap)
    gap = max(np.linalg.norm(apart[f][np.arange(3) * int(f), :, :3, 3]
                             - apart[24.0][np.arange(3) * 24, :, :3, 3], axis=-1).max()
              for f in (25.0, 50.0))
    assert gap > 1e-3  # the test's motion is fast enough to tell the two apart


def _run_into_a_wall(fps: float):
    """Three bodies, locked hips run at 2 m/s into a wall 0.5 m away (fall threshold 5 cm),
    read at 120 Hz, the scene's frames at `fps` returned: (seconds of the release, the body
    frames at 0, 1 and 2 s)."""
    rest = chain_rest([(0, 0, 1.0), (0, 0, 0.9), (0, 0, 0.5)],
                      [(0, 0, 1.2), (0, 0, 0.5), (0, 0, 0.1)], radius=0.08, mass=(10, 5, 3),
                      parent=[-1, 0, 1])
    colliders, M = _wall(-0.5)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)

    def targets(t):
        target = np.repeat(rest.rest_matrix[None], len(t), axis=0)
        target[:, :, 1, 3] -= 2.0 * t[:, None]
        return target

    frames, rate = int(2 * fps) + 1, 120.0
    drive = RagdollDrive(fps=rate, target=targets(np.arange(241) / rate),
                         collider_matrix=np.broadcast_to(M, (241, 1, 4, 4)),
                         params=RagdollParams.defaults(3, 1, root_lock=True, motor_strength=0.8,
                                                       fall_threshold=0.05),
                         output_fps=fps, output_target=targets(np.arange(frames) / fps))
    result = bake_ragdoll(model, drive, RagdollSettings())
    return result.fell_at[0] / fps, result.physics_matrix[[0, int(fps), 2 * int(fps)]]


def test_the_root_lock_lets_go_at_the_same_instant_at_every_frame_rate():
    """The fall test runs at the samples' times, not at the output frames', so a release, and
    everything after it, is the same at every frame rate (checked at the frames, a 60 fps bake
    would let go up to a 24 fps frame earlier)."""
    fell, poses = zip(*(_run_into_a_wall(fps) for fps in (24.0, 25.0, 60.0)), strict=True)
    assert 0.0 < fell[0] < 2.0  # the wall stops the hips: the lock lets go
    for f, p in zip(fell[1:], poses[1:], strict=True):
        assert abs(f - fell[0]) <= 1.0 / 24.0  # reported at the first frame after it
        assert np.abs(p - poses[0]).max() <= 1e-9


def test_output_frames_need_their_targets():
    rest = humanoid_rest(5)
    model = build_ragdoll_model(ragdolls=[rest])
    target = np.repeat(rest.rest_matrix[None], 13, axis=0)
    params = RagdollParams.defaults(5, 1)
    with pytest.raises(SetupError, match="output_fps and output_target"):
        bake_ragdoll(model, RagdollDrive(fps=120.0, target=target, params=params,
                                         collider_matrix=np.zeros((13, 0, 4, 4)),
                                         output_fps=24.0))
    with pytest.raises(SetupError, match="output_frames"):  # 0.1 s of samples: 3 frames at 24
        bake_ragdoll(model, RagdollDrive(fps=120.0, target=target, params=params,
                                         collider_matrix=np.zeros((13, 0, 4, 4)),
                                         output_fps=24.0, output_target=target[:4]))
    result = bake_ragdoll(model, RagdollDrive(fps=120.0, target=target, params=params,
                                              collider_matrix=np.zeros((13, 0, 4, 4)),
                                              output_fps=24.0, output_target=target[:3]))
    assert result.body_matrix.shape == (3, 5, 4, 4)


def _carried(weak_carrier: bool):
    frames, fps = 30, 30.0
    hero = humanoid_rest(5, setup="Hero")
    chest = 2
    # A three-body "backpack robot" hanging behind the chest; its base is kinematic (seed 004:
    # BD-1's feet), the rest free, its root riding on the hero's chest.
    behind = hero.rest_matrix[chest, :3, 3] + np.array([0.0, 0.15, 0.1])
    robot = chain_rest([behind, behind - (0, 0, 0.1), behind - (0, 0, 0.3)],
                       [behind - (0, 0, 0.1), behind - (0, 0, 0.3), behind - (0, 0, 0.45)],
                       radius=0.04, mass=(0.5, 0.5, 0.3), setup="Robot", carrier=(0, chest))
    model = build_ragdoll_model(ragdolls=[hero, robot])
    hero_target = walk_targets(hero, frames=frames, fps=fps, scale=3.0)
    # The robot's animation rides rigidly on the chest's animation.
    offset = np.linalg.inv(hero.rest_matrix[chest]) @ robot.rest_matrix
    robot_target = hero_target[:, chest, None] @ offset[None]
    target = np.concatenate([hero_target, robot_target], axis=1)
    mode = np.array([[BodyMode.DRIVEN] * 5 + [BodyMode.KINEMATIC, BodyMode.FREE, BodyMode.FREE]])
    params = RagdollParams.defaults(8, 2, mode=mode,
                                    motor_strength=0.3 if weak_carrier else 1.0)
    drive = RagdollDrive(fps=fps, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=params)
    return model, drive, bake_ragdoll(model, drive, RagdollSettings())


def test_a_companion_hangs_on_its_carriers_simulated_body():
    model, drive, result = _carried(weak_carrier=True)
    P, target = result.physics_matrix, drive.target
    chest = 2
    # The carrier's chest lags its animation (weak motors) ...
    assert np.linalg.norm(P[:, chest, :3, 3] - target[:, chest, :3, 3], axis=-1).max() > 0.01
    # ... and the robot's kinematic base rides on the SIMULATED chest, same frame, exactly.
    rides = P[:, chest] @ np.linalg.inv(target[:, chest]) @ target[:, 5]
    assert np.allclose(P[:, 5], rides, atol=1e-9)
    assert np.linalg.norm(P[:, 5, :3, 3] - target[:, 5, :3, 3], axis=-1).max() > 0.01
    # The free bodies swing and stay attached to the base.
    tail = P[:, 5, :3, 3] + P[:, 5, :3, 1] * model.length[5]
    assert np.linalg.norm(tail - P[:, 6, :3, 3], axis=-1).max() < 0.006
    swing = np.degrees(angle_between(P[:, 6, :3, :3], P[:, 5, :3, :3]))
    assert swing.max() > 5.0
    # Output: with no blend the shown pose is the simulated one.
    assert np.allclose(result.body_matrix, P, atol=1e-9)


def test_carried_output_follows_the_blended_carrier():
    model, drive, result = _carried(weak_carrier=True)
    blend = np.zeros((1, 8))
    blend[0, :5] = 0.5
    blended = bake_ragdoll(model, dataclasses.replace(
        drive, params=drive.params.replace(blend=blend)), RagdollSettings())
    chest = 2
    shown, physics = blended.body_matrix, blended.physics_matrix
    rel_physics = np.linalg.inv(physics[:, chest, None]) @ physics[:, 5:]
    rel_shown = np.linalg.inv(shown[:, chest, None]) @ shown[:, 5:]
    assert np.allclose(rel_shown, rel_physics, atol=1e-9)
    assert np.abs(shown[:, chest] - blended.physics_matrix[:, chest]).max() > 1e-3
