"""Random settings never give NaN or an explosion (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from waft.core.colliders import ColliderKind, ColliderSet
from waft.core.ragdoll import (
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
)
from waft.core.ragdoll._bench_cases import humanoid_rest, walk_targets

N = 8
FRAMES = 8

unit = st.floats(0.0, 1.0)
per_body = st.lists(unit, min_size=N, max_size=N)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.lists(st.integers(0, 2), min_size=N, max_size=N),
    strength=per_body,
    motor_damping=st.floats(0.0, 5.0),
    velocity_drive=per_body,
    blend=unit,
    distance_limit=st.one_of(st.just(np.inf), st.floats(0.0, 0.5)),
    distance_limit_speed=st.one_of(st.just(np.inf), st.floats(0.0, 5.0)),
    joint_damping=st.floats(0.0, 100.0),
    linear_damping=st.floats(0.0, 50.0),
    friction=st.floats(0.0, 2.0),
    gravity=st.floats(-30.0, 30.0),
    root_lock=st.booleans(),
    fall_threshold=st.one_of(st.just(np.inf), st.floats(0.0, 1.0)),
    swing=st.floats(0.0, 3.0),
    twist=st.floats(0.0, 3.0),
    speed=st.floats(0.0, 3.0),
    animation=st.floats(0.0, 4.0),
    iterations=st.integers(1, 6),
    substep=st.sampled_from([1 / 120, 1 / 240, 1 / 480]),
    fps=st.sampled_from([24.0, 25.0, 30.0, 60.0]),
    ground_height=st.floats(-0.2, 0.6),
)
def test_random_settings_stay_finite(mode, strength, motor_damping, velocity_drive, blend,
                                     distance_limit, distance_limit_speed, joint_damping,
                                     linear_damping, friction, gravity, root_lock,
                                     fall_threshold, swing, twist, speed, animation, iterations,
                                     substep, fps, ground_height):
    rest = humanoid_rest(N)
    rest = type(rest)(**{**rest.__dict__, "swing_limit": np.full((N, 2), swing),
                         "twist_limit": np.tile([-twist, twist], (N, 1))})
    colliders = ColliderSet.create(names=("Ground", "Ball"),
                                   kind=[ColliderKind.PLANE, ColliderKind.ELLIPSOID],
                                   size=[1.0, 0.2])
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    target = walk_targets(rest, frames=FRAMES, fps=fps, speed=speed, scale=animation)
    ground = np.eye(4)
    ground[2, 3] = ground_height
    ball = np.eye(4)
    ball[:3, 3] = (0.3, -0.2, 1.3)
    params = RagdollParams.defaults(
        N, 1, mode=np.array([mode]), motor_strength=np.array([strength]),
        motor_damping=motor_damping, velocity_drive=np.array([velocity_drive]), blend=blend,
        distance_limit=distance_limit, distance_limit_speed=distance_limit_speed,
        joint_damping=joint_damping, linear_damping=linear_damping, friction=friction,
        gravity=np.array([0.0, 0.0, gravity]), root_lock=root_lock,
        fall_threshold=fall_threshold)
    drive = RagdollDrive(fps=fps, target=target,
                         collider_matrix=np.broadcast_to(np.stack([ground, ball]),
                                                         (FRAMES, 2, 4, 4)),
                         params=params)
    result = bake_ragdoll(model, drive, RagdollSettings(substep=substep, iterations=iterations))
    for m in (result.body_matrix, result.physics_matrix):
        assert np.all(np.isfinite(m))
        # Rigid frames, and nothing flew away (8 frames at most 1/3 s).
        R = m[..., :3, :3]
        assert np.allclose(R @ np.swapaxes(R, -1, -2), np.eye(3), atol=1e-6)
        assert np.abs(m[..., :3, 3] - target[..., :3, 3]).max() < 5.0
