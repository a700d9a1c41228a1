"""core.bone_pose: matrix_basis recovered from world matrices through Blender's pose formula."""

import numpy as np

from waft.core.bone_pose import basis_from_world, split_basis
from waft.core.rotations import matrix_from_quat


def _random_transform(rng, n, *, scale=False):
    m = np.tile(np.eye(4), (n, 1, 1))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    m[:, :3, :3] = matrix_from_quat(q)
    if scale:
        m[:, :3, :3] *= rng.uniform(0.5, 2.0, size=(n, 1, 3))
    m[:, :3, 3] = rng.normal(size=(n, 3))
    return m


def test_basis_round_trips_blender_pose_formula():
    rng = np.random.default_rng(7)
    n = 50
    obj = _random_transform(rng, n, scale=True)
    parent_rest, rest = _random_transform(rng, n), _random_transform(rng, n)
    parent_pose, basis = _random_transform(rng, n), _random_transform(rng, n)
    # Blender: pose = pose_parent @ inverse(rest_parent) @ rest @ basis; world = object @ pose.
    world = obj @ parent_pose @ np.linalg.inv(parent_rest) @ rest @ basis
    got = basis_from_world(world=world, rest=rest, parent_world=obj @ parent_pose,
                           parent_rest=parent_rest)
    np.testing.assert_allclose(got, basis, atol=1e-9)


def test_root_bone_uses_object_matrix_and_identity_parent_rest():
    rng = np.random.default_rng(3)
    obj, rest, basis = (_random_transform(rng, 5) for _ in range(3))
    world = obj @ rest @ basis
    got = basis_from_world(world=world, rest=rest, parent_world=obj, parent_rest=np.eye(4))
    np.testing.assert_allclose(got, basis, atol=1e-9)


def test_split_basis_separates_scale_and_keeps_rotation_proper():
    rng = np.random.default_rng(5)
    m = _random_transform(rng, 20, scale=True)
    m[3, :3, 0] *= -1.0  # a mirrored bone
    location, rotation, scale = split_basis(m)
    np.testing.assert_allclose(location, m[:, :3, 3])
    np.testing.assert_allclose(np.linalg.det(rotation), 1.0, atol=1e-12)
    np.testing.assert_allclose(rotation * scale[:, None, :], m[:, :3, :3], atol=1e-12)
    assert scale[3, 0] < 0.0


def test_matrix_from_quat_inverts_quat_from_matrix():
    from waft.core.rotations import quat_from_matrix

    rng = np.random.default_rng(11)
    q = rng.normal(size=(100, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q *= np.sign(q[:, :1])  # quat_from_matrix returns w >= 0
    np.testing.assert_allclose(quat_from_matrix(matrix_from_quat(q)), q, atol=1e-12)


def test_sign_continuity_keeps_a_single_frame():
    from waft.core.rotations import make_sign_continuous

    q = np.array([[[0.0, 0.0, 0.0, -1.0]]])  # (F=1, B=1, 4)
    np.testing.assert_array_equal(make_sign_continuous(q, axis=0), q)
    flipped = np.array([[1.0, 0, 0, 0], [-1.0, 0, 0, 0]])
    np.testing.assert_array_equal(make_sign_continuous(flipped, axis=0), [[1, 0, 0, 0]] * 2)
