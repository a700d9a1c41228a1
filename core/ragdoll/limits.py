"""Swing (elliptical cone) and twist limits of the ball joints (Müller 2020 §3.4.2, Alg. 3).

The joint rotation is the child's orientation in its parent's frame relative to bind,
d = rest⁻¹ ⊗ parent⁻¹ ⊗ child, split as d = swing ⊗ twist with the twist about the bone axis
(local +Y) and the swing about an axis in the local XZ plane. The twist angle is clamped to
[min, max]; the swing rotation vector (sx, sz) to the ellipse (sx/ax)² + (sz/az)² <= 1 by radial
scaling (the same swing direction, a smaller angle). Both corrections are rotations of the
child relative to its parent, solved as one hard angular constraint.
"""

from __future__ import annotations

import numpy as np

from .bodies import Bodies, angular, q2m, qmul, quat_conj, quat_log, rotate
from .joints import JointColour

_TINY_LIMIT = 1e-6


def joint_rotation(s: Bodies, col: JointColour) -> np.ndarray:
    """d = rest⁻¹ ⊗ parent⁻¹ ⊗ child with w >= 0, (n_c, 4)."""
    p = col.pairs
    d = qmul(quat_conj(col.rest_relative),
                      qmul(quat_conj(s.q[p.b]), s.q[p.a]))
    return d * np.where(d[:, :1] < 0, -1.0, 1.0)


def swing_twist(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(swing rotation vector (n, 3) with y = 0, twist angle (n,)) of joint rotations d."""
    twist = 2.0 * np.arctan2(d[:, 2], d[:, 0])
    twist = (twist + np.pi) % (2.0 * np.pi) - np.pi
    tq = np.zeros_like(d)
    tq[:, 0], tq[:, 2] = d[:, 0], d[:, 2]
    norm = np.linalg.norm(tq, axis=1)
    tq = np.where(norm[:, None] > 1e-12, tq / np.maximum(norm, 1e-12)[:, None],
                  [1.0, 0.0, 0.0, 0.0])
    swing = quat_log(qmul(d, quat_conj(tq)))
    swing[:, 1] = 0.0
    return swing, twist


def limit_correction(swing: np.ndarray, twist: np.ndarray, swing_limit: np.ndarray,
                     twist_limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(swing correction in the joint frame (n, 3), twist correction angle (n,))."""
    ax = np.maximum(swing_limit[:, 0], _TINY_LIMIT)
    az = np.maximum(swing_limit[:, 1], _TINY_LIMIT)
    e = (swing[:, 0] / ax) ** 2 + (swing[:, 2] / az) ** 2
    over = e > 1.0
    scale = np.where(over, 1.0 / np.sqrt(np.maximum(e, 1.0)), 1.0)
    swing_fix = swing * (scale - 1.0)[:, None]
    twist_fix = np.clip(twist, twist_limit[:, 0], twist_limit[:, 1]) - twist
    return swing_fix, twist_fix


def solve_limits(s: Bodies, col: JointColour) -> None:
    """Project violated swing / twist limits (hard)."""
    if not col.has_limit.any():
        return
    p = col.pairs
    swing, twist = swing_twist(joint_rotation(s, col))
    swing_fix, twist_fix = limit_correction(swing, twist, col.swing_limit, col.twist_limit)
    # The swing acts in the joint frame J = parent ⊗ rest; the twist about the child's own Y.
    joint_frame = qmul(s.q[p.b], col.rest_relative)
    dtheta = rotate(q2m(joint_frame), swing_fix) + s.R[p.a, :, 1] * twist_fix[:, None]
    angular(s, p, dtheta, active=col.has_limit)
