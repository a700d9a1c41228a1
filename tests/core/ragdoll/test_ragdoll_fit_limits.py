"""fit_limits: limits widened to an animation's range of motion, with a margin, never shrunk."""

from __future__ import annotations

import numpy as np

from waft.core.ragdoll.bodies import quat_exp
from waft.core.ragdoll.limits import fit_limits, joint_rotation, limit_correction, swing_twist


def _poses(rng, frames, n, scale):
    q = quat_exp(rng.normal(0.0, scale, (frames * n, 3))).reshape(frames, n, 4)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def test_every_sampled_pose_ends_inside_with_the_margin_and_nothing_shrinks():
    rng = np.random.default_rng(3)
    F, n = 200, 6
    q_parent, q_child = _poses(rng, F, n, 0.2), _poses(rng, F, n, 0.5)
    rest = _poses(rng, 1, n, 0.2)[0]
    swing = np.full((n, 2), np.radians(30.0))
    swing[5] = np.pi  # a free swing stays free
    twist = np.tile(np.radians([-10.0, 10.0]), (n, 1))
    margin = np.radians(10.0)
    fitted_swing, fitted_twist, center = fit_limits(q_child=q_child, q_parent=q_parent,
                                                    rest_relative=rest, swing_limit=swing,
                                                    twist_limit=twist, margin=margin)
    # nothing shrinks: the old range [-a, a] lies inside the new [c - a', c + a'] on each axis
    assert np.all(center - fitted_swing <= -swing + 1e-12)
    assert np.all(center + fitted_swing >= swing - 1e-12)
    assert np.all(fitted_twist[:, 0] <= twist[:, 0]) and center[5, 0] == 0.0
    assert np.all(fitted_twist[:, 1] >= twist[:, 1]) and fitted_swing[5, 0] == np.pi
    d = joint_rotation(q_child.reshape(-1, 4), q_parent.reshape(-1, 4), np.tile(rest, (F, 1)))
    s, t = swing_twist(d)
    # Inside: no correction at all, for every pose (the limits before fitting were violated).
    before = limit_correction(s, t, np.tile(swing, (F, 1)), np.tile(twist, (F, 1)))
    assert np.abs(before[0]).max() > 0.1 and np.abs(before[1]).max() > 0.1
    tiled = np.tile(fitted_swing, (F, 1)), np.tile(fitted_twist, (F, 1)), np.tile(center, (F, 1))
    fix_s, fix_t = limit_correction(s, t, *tiled)
    assert not fix_s.any() and not fix_t.any()
    # ... with the margin to spare: inside the ellipse whose half-axes are the margin shorter
    fix_s, _ = limit_correction(s, t, tiled[0] - margin, tiled[1], tiled[2])
    # (the widest pose pushed out by the margin lies on the limit itself: rounding only)
    assert np.abs(fix_s).max() <= 1e-12
    assert np.all(t.reshape(F, n).min(axis=0) - margin >= fitted_twist[:, 0] - 1e-12)
    assert np.all(t.reshape(F, n).max(axis=0) + margin <= fitted_twist[:, 1] + 1e-12)


def test_a_one_sided_hinge_grows_only_on_the_side_the_animation_uses():
    """A knee limited to [-10°, 145°] about X (centre 67.5°) and an animation that flexes it
    to 150°: the range grows to 160° on the flexion side and stays 10° past straight."""
    F = 40
    angle = np.radians(np.linspace(0.0, 150.0, F))
    d = quat_exp(np.stack((angle, np.zeros(F), np.zeros(F)), axis=1))[:, None]
    identity = np.tile([1.0, 0.0, 0.0, 0.0], (F, 1, 1))
    half, mid = np.radians(77.5), np.radians(67.5)
    swing, twist, center = fit_limits(
        q_child=d, q_parent=identity, rest_relative=np.array([[1.0, 0.0, 0.0, 0.0]]),
        swing_limit=np.array([[half, np.radians(10.0)]]),
        twist_limit=np.radians([[-10.0, 10.0]]), margin=np.radians(10.0),
        swing_center=np.array([[mid, 0.0]]))
    low, high = np.degrees(center[0, 0] - swing[0, 0]), np.degrees(center[0, 0] + swing[0, 0])
    assert abs(low - -10.0) < 1e-9 and abs(high - 160.0) < 1e-9
    assert swing[0, 1] == np.radians(10.0) and center[0, 1] == 0.0
