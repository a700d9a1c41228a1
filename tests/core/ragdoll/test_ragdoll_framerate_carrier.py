"""A fixed substep: 30 and 60 fps bakes agree; a ragdoll carried by another one's body is
solved after its carrier, on the carrier's simulated pose, within the same frame."""

from __future__ import annotations

import dataclasses

import numpy as np

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
