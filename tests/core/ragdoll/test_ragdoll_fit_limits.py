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
    fitted_swing, fitted_twist = fit_limits(q_child=q_child, q_parent=q_parent,
                                            rest_relative=rest, swing_limit=swing,
                                            twist_limit=twist, margin=margin)
    assert np.all(fitted_swing >= swing) and np.all(fitted_twist[:, 0] <= twist[:, 0])
    assert np.all(fitted_twist[:, 1] >= twist[:, 1]) and fitted_swing[5, 0] == np.pi
    d = joint_rotation(q_child.reshape(-1, 4), q_parent.reshape(-1, 4), np.tile(rest, (F, 1)))
    s, t = swing_twist(d)
    # Inside: no correction at all, for every pose (the limits before fitting were violated).
    before = limit_correction(s, t, np.tile(swing, (F, 1)), np.tile(twist, (F, 1)))
    assert np.abs(before[0]).max() > 0.1 and np.abs(before[1]).max() > 0.1
    fix_s, fix_t = limit_correction(s, t, np.tile(fitted_swing, (F, 1)),
                                    np.tile(fitted_twist, (F, 1)))
    assert not fix_s.any() and not fix_t.any()
    # ... with the margin to spare: each swing component pushed out by the margin is inside.
    grown = np.abs(s) + margin
    grown[:, 1] = 0.0
    fix_s, _ = limit_correction(grown, t, np.tile(fitted_swing, (F, 1)),
                                np.tile(fitted_twist, (F, 1)))
    # (the widest pose pushed out by the margin lies on the limit itself: rounding only)
    assert np.abs(fix_s).max() <= 1e-12
    assert np.all(t.reshape(F, n).min(axis=0) - margin >= fitted_twist[:, 0] - 1e-12)
    assert np.all(t.reshape(F, n).max(axis=0) + margin <= fitted_twist[:, 1] + 1e-12)
