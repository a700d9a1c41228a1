"""The output blend lifted out of the ground by the depth neither of its poses has."""

from __future__ import annotations

import numpy as np

from waft.core.ragdoll.blend import lift_above_planes

from .conftest import bone_frame


def _ground(height: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    M = np.eye(4)
    M[2, 3] = height
    return np.array([0]), M[None]


def _lowest(frames: np.ndarray, length: float, radius: float) -> np.ndarray:
    head = frames[..., :3, 3]
    tail = head + frames[..., :3, 1] * length
    return (np.minimum(head[..., 2], tail[..., 2]) - radius).min(axis=-1)


def test_a_blend_swung_through_the_ground_is_lifted_to_the_depth_its_poses_have():
    """One capsule 1 m long (radius 5 cm): simulated lying on the ground, animated lying 2 cm
    into it (its own depth), shown on the frames between them pointing down into the ground
    (as a local blend of a body turning from lying to standing can): those frames are lifted
    to the animation's 2 cm and no further; frames that show one pose exactly are untouched,
    and nothing turns."""
    length, radius = 1.0, 0.05
    lying = bone_frame((0.0, 0.0, radius), (1.0, 0.0, radius))
    animated = bone_frame((0.0, 0.0, radius - 0.02), (-1.0, 0.0, radius - 0.02))
    down = bone_frame((0.0, 0.0, 0.2), (0.3, 0.0, 0.2 - 0.95))
    F = 4
    physics = np.repeat(lying[None, None], F, axis=0)
    target = np.repeat(animated[None, None], F, axis=0)
    shown = np.stack([lying, down, down, animated])[:, None]
    mixed = np.array([False, True, True, False])
    kept = shown.copy()
    assert _lowest(shown, length, radius)[1] < -0.6
    lift_above_planes(shown=shown, physics=physics, target=target, length=np.array([length]),
                      radius=np.array([radius]), mask=np.ones((1, 1), dtype=bool),
                      planes=_ground(), bodies=slice(0, 1), mixed=mixed)
    after = _lowest(shown, length, radius)
    np.testing.assert_allclose(after[mixed], -0.02, atol=1e-12)  # the animation's own depth
    np.testing.assert_array_equal(shown[~mixed], kept[~mixed])
    np.testing.assert_array_equal(shown[..., :3, :3], kept[..., :3, :3])  # only translated
    # a body that does not collide with the ground is not lifted
    shown = kept.copy()
    lift_above_planes(shown=shown, physics=physics, target=target, length=np.array([length]),
                      radius=np.array([radius]), mask=np.zeros((1, 1), dtype=bool),
                      planes=_ground(), bodies=slice(0, 1), mixed=mixed)
    np.testing.assert_array_equal(shown, kept)
