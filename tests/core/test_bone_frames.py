"""Particles → bone rotations, and the rotation conversions the writer relies on."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.rotations import (
    EULER_ORDERS,
    euler_to_matrix,
    make_sign_continuous,
    matrix_from_quat,
    quat_between,
    quat_from_matrix,
    quaternion_to_axis_angle,
    quaternion_to_euler,
    swing_matrix,
)
from waft.core.strands.bone_frames import chain_pose_rotations

RNG = np.random.default_rng(7)


def IDENTITY(frames: int) -> np.ndarray:  # noqa: N802 - reads as a constant
    return np.repeat(np.eye(4)[None], frames, 0)


def random_quats(n: int) -> np.ndarray:
    q = RNG.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def homogeneous(rot: np.ndarray, loc: np.ndarray) -> np.ndarray:
    m = np.zeros(rot.shape[:-2] + (4, 4))
    m[..., :3, :3], m[..., :3, 3], m[..., 3, 3] = rot, loc, 1.0
    return m


# --- rotations -------------------------------------------------------------------------------

def test_matrix_quaternion_round_trip_covers_every_pivot() -> None:
    q = np.concatenate((random_quats(500), np.eye(4)))  # eye rows hit each Shepperd branch
    back = quat_from_matrix(matrix_from_quat(q))
    same = np.minimum(np.abs(back - q).max(-1), np.abs(back + q).max(-1))
    assert same.max() < 1e-12
    assert np.allclose(np.linalg.det(matrix_from_quat(q)), 1.0)


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_round_trip_every_order(order: str) -> None:
    q = random_quats(300)
    euler = quaternion_to_euler(q[:, None], order)[:, 0]  # axis 0 is not frames here: no unwrap
    assert np.allclose(euler_to_matrix(euler, order), matrix_from_quat(q), atol=1e-10)


def test_euler_xyz_applies_x_first() -> None:
    """Blender's XYZ order: rotate about X, then Y, then Z (matrix Rz @ Ry @ Rx)."""
    m = euler_to_matrix(np.array([np.pi / 2, 0.0, np.pi / 2]), "XYZ")
    # X quarter turn takes +Y to +Z; the Z quarter turn then leaves +Z alone.
    assert np.allclose(m @ [0, 1, 0], [0, 0, 1], atol=1e-12)
    # +Z: X turn → −Y, Z turn → +X.
    assert np.allclose(m @ [0, 0, 1], [1, 0, 0], atol=1e-12)


def test_euler_is_unwrapped_over_frames() -> None:
    angles = np.linspace(0.0, 4 * np.pi, 200)  # two full turns about Z
    q = np.stack((np.cos(angles / 2), 0 * angles, 0 * angles, np.sin(angles / 2)), -1)
    euler = quaternion_to_euler(make_sign_continuous(q), "XYZ")
    assert np.allclose(euler[:, 2], angles, atol=1e-9)


def test_sign_continuity_removes_flips() -> None:
    q = np.repeat(random_quats(1), 10, axis=0)
    q[3::2] *= -1
    fixed = make_sign_continuous(q)
    assert np.all(np.sum(fixed[1:] * fixed[:-1], -1) > 0)
    assert np.allclose(np.abs(fixed), np.abs(q))


def test_quat_between_takes_a_to_b_including_opposites() -> None:
    a = RNG.normal(size=(200, 3))
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    b = RNG.normal(size=(200, 3))
    b /= np.linalg.norm(b, axis=-1, keepdims=True)
    b[:5] = -a[:5]
    rotated = np.einsum("nij,nj->ni", matrix_from_quat(quat_between(a, b)), a)
    assert np.allclose(rotated, b, atol=1e-9)


def test_swing_matrix_equals_quaternion_swing_including_opposites() -> None:
    a = RNG.normal(size=(300, 3))
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    b = RNG.normal(size=(300, 3))
    b /= np.linalg.norm(b, axis=-1, keepdims=True)
    b[:4] = -a[:4]
    r = swing_matrix(a, b)
    assert np.allclose(np.einsum("nij,nj->ni", r, a), b, atol=1e-9)
    assert np.allclose(r @ np.swapaxes(r, -1, -2), np.eye(3), atol=1e-9)
    assert np.allclose(r[4:], matrix_from_quat(quat_between(a[4:], b[4:])), atol=1e-9)


def test_axis_angle_matches_quaternion() -> None:
    q = random_quats(100)
    aa = quaternion_to_axis_angle(q)
    half = aa[:, :1] / 2
    rebuilt = np.concatenate((np.cos(half), np.sin(half) * aa[:, 1:]), -1)
    assert np.allclose(matrix_from_quat(rebuilt), matrix_from_quat(q), atol=1e-10)
    assert np.allclose(quaternion_to_axis_angle(np.array([1.0, 0, 0, 0])), [0, 0, 1, 0])


# --- bone frames -----------------------------------------------------------------------------

def make_chain(n_bones: int, frames: int):
    """A connected chain along +Y of armature space, posed with random basis rotations (FK)."""
    length = 0.2
    rest = np.stack([homogeneous(np.eye(3), [0.0, length * k, 1.0]) for k in range(n_bones)])
    parent_rest = homogeneous(np.eye(3), [0.0, -0.1, 1.0])
    parent_pose = np.stack([homogeneous(matrix_from_quat(q), [0.1, 0.0, 1.0])
                            for q in random_quats(frames)])
    basis_q = make_sign_continuous(random_quats(frames * n_bones).reshape(frames, n_bones, 4) * 0.2
                                   + np.array([1.0, 0, 0, 0]))
    basis_q /= np.linalg.norm(basis_q, axis=-1, keepdims=True)
    pose = np.empty((frames, n_bones, 4, 4))
    for f in range(frames):
        parent, parent_r = parent_pose[f], parent_rest
        for k in range(n_bones):
            pose[f, k] = parent @ np.linalg.inv(parent_r) @ rest[k] @ homogeneous(
                matrix_from_quat(basis_q[f, k]), np.zeros(3))
            parent, parent_r = pose[f, k], rest[k]
    heads = pose[..., :3, 3]
    tails = heads + pose[..., :3, 1] * length
    particles = np.concatenate((heads, tails[:, -1:]), axis=1)
    return rest, parent_rest, pose, parent_pose, basis_q, particles, length


def call(rest, parent_rest, pose, parent_pose, particles, object_matrix):
    frames = pose.shape[0]
    world = np.einsum("fij,fpj->fpi", object_matrix[:, :3, :3], particles)
    world += object_matrix[:, None, :3, 3]
    return chain_pose_rotations(
        rest_matrix=rest[None], parent_rest_matrix=parent_rest[None],
        reference_matrix=pose[:, None], parent_matrix=parent_pose[:, None],
        object_matrix=object_matrix[:, None], positions=world[:, None],
    ), frames


def test_unsimulated_particles_give_back_the_animation() -> None:
    rest, parent_rest, pose, parent_pose, basis_q, particles, _ = make_chain(5, 6)
    obj = np.stack([homogeneous(matrix_from_quat(q) * 2.0, [1.0, 2.0, 3.0])
                    for q in random_quats(6)])
    quats, _ = call(rest, parent_rest, pose, parent_pose, particles, obj)
    dots = np.abs(np.sum(quats[:, 0] * basis_q, axis=-1))
    assert np.allclose(dots, 1.0, atol=1e-9)


def test_bones_point_along_simulated_segments_and_keep_twist() -> None:
    rest, parent_rest, pose, parent_pose, _, particles, length = make_chain(4, 3)
    moved = particles.copy()
    # Bend the chain: rotate everything past the root about the root by 40° (inextensible).
    turn = matrix_from_quat(quat_between(np.array([0.0, 1.0, 0.0]), np.array([0.6, 0.8, 0.0])))
    moved[:, 1:] = np.einsum("ij,fpj->fpi", turn, moved[:, 1:] - moved[:, :1]) + moved[:, :1]
    quats, frames = call(rest, parent_rest, pose, parent_pose, moved, IDENTITY(3))
    # Forward kinematics with the written rotations must put every head and tail on a particle.
    for f in range(frames):
        parent, parent_r = parent_pose[f], parent_rest
        for k in range(4):
            m = parent @ np.linalg.inv(parent_r) @ rest[k] @ homogeneous(
                matrix_from_quat(quats[f, 0, k]), np.zeros(3))
            assert np.allclose(m[:3, 3], moved[f, k], atol=1e-9)
            assert np.allclose(m[:3, 3] + m[:3, 1] * length, moved[f, k + 1], atol=1e-9)
            # Twist kept: new = swing @ animated, with the swing axis perpendicular to the
            # animated bone axis (no rotation about the bone itself is added).
            swing = quat_from_matrix(m[:3, :3] @ pose[f, k, :3, :3].T)
            assert abs(np.dot(swing[1:], pose[f, k, :3, 1])) < 1e-9
            parent, parent_r = m, rest[k]


def test_wrong_particle_count_is_an_error() -> None:
    rest, parent_rest, pose, parent_pose, _, particles, _ = make_chain(3, 2)
    with pytest.raises(ValueError, match="3 bones need 4"):
        call(rest, parent_rest, pose, parent_pose, particles[:, :3], IDENTITY(2))
