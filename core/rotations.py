"""Rotation conversions on stacked arrays: quaternions (w, x, y, z), 3×3 matrices, Euler angles.

Everything is vectorised over leading axes so the writer converts every bone of every frame in a
handful of NumPy calls. Conventions follow Blender: an Euler order ``"XYZ"`` applies X first, so
the matrix is ``Rz @ Ry @ Rx``; Euler values are returned in channel order (x, y, z) whatever the
order, because that is how ``PoseBone.rotation_euler`` stores them.
"""

from __future__ import annotations

import numpy as np

from . import transcendental

_AXES = {"X": 0, "Y": 1, "Z": 2}
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def normalize(
    v: np.ndarray, *, fallback: np.ndarray | None = None, eps: float = 1e-12
) -> np.ndarray:
    """Unit vectors along the last axis; where the length is below ``eps`` use ``fallback``."""
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    out = v / np.maximum(n, eps)
    if fallback is not None:
        out = np.where(n > eps, out, fallback)
    return out


def bilinear(terms, n_in: int, n_out: int) -> np.ndarray:
    """(n_in², n_out) matrix T with out = outer(a, b).reshape(n_in²) @ T for a bilinear map
    given as (j, k, i, sign) terms: out_i += sign a_j b_k. One outer product and one small
    matmul replace a dozen column operations (NumPy's per-call overhead dominates when a
    solver works on a few dozen bodies or segments at a time)."""
    T = np.zeros((n_in, n_in, n_out))
    for j, k, i, sign in terms:
        T[j, k, i] = sign
    return T.reshape(n_in * n_in, n_out)


# The Hamilton product's terms: (j, k, i, sign) for (a ⊗ b)_i += sign a_j b_k, (w, x, y, z).
HAMILTON = bilinear([(0, 0, 0, 1), (1, 1, 0, -1), (2, 2, 0, -1), (3, 3, 0, -1),
                     (0, 1, 1, 1), (1, 0, 1, 1), (2, 3, 1, 1), (3, 2, 1, -1),
                     (0, 2, 2, 1), (1, 3, 2, -1), (2, 0, 2, 1), (3, 1, 2, 1),
                     (0, 3, 3, 1), (1, 2, 3, 1), (2, 1, 3, -1), (3, 0, 3, 1)], 4, 4)


def quat_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products a ⊗ b of (..., 4) stacks (broadcast) in three NumPy calls, for the
    solvers' small per-substep stacks (`quat_multiply` is the writer's, column by column)."""
    products = a[..., :, None] * b[..., None, :]
    return products.reshape(products.shape[:-2] + (16,)) @ HAMILTON


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` (apply b first, then a), broadcast over leading axes."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        (
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ),
        axis=-1,
    )


def quat_from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternions from rotation matrices (..., 3, 3), w ≥ 0.

    Shepperd's method: of the four algebraically equal formulas, each element uses the one whose
    pivot (1 + trace or a diagonal term) is largest, so no division by a near-zero number happens.
    """
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    pivots = np.stack((1 + m00 + m11 + m22, 1 + m00 - m11 - m22,
                       1 - m00 + m11 - m22, 1 - m00 - m11 + m22), axis=-1)
    s = 2.0 * np.sqrt(np.maximum(pivots, 1e-30))
    m01, m02, m10 = m[..., 0, 1], m[..., 0, 2], m[..., 1, 0]
    m12, m20, m21 = m[..., 1, 2], m[..., 2, 0], m[..., 2, 1]
    d21, d02, d10 = m21 - m12, m02 - m20, m10 - m01
    s21, s02, s10 = m21 + m12, m02 + m20, m10 + m01
    candidates = np.stack(
        (
            np.stack((s[..., 0] / 4, d21 / s[..., 0], d02 / s[..., 0], d10 / s[..., 0]), -1),
            np.stack((d21 / s[..., 1], s[..., 1] / 4, s10 / s[..., 1], s02 / s[..., 1]), -1),
            np.stack((d02 / s[..., 2], s10 / s[..., 2], s[..., 2] / 4, s21 / s[..., 2]), -1),
            np.stack((d10 / s[..., 3], s02 / s[..., 3], s21 / s[..., 3], s[..., 3] / 4), -1),
        ),
        axis=-2,
    )
    best = np.argmax(pivots, axis=-1)[..., None, None]
    q = np.take_along_axis(candidates, best, axis=-2)[..., 0, :]
    q = normalize(q)
    return np.where(q[..., :1] < 0, -q, q)


def matrix_from_quat(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) from quaternions (normalised first)."""
    w, x, y, z = np.moveaxis(normalize(q), -1, 0)
    return np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)), -1),
            np.stack((2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)), -1),
            np.stack((2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)), -1),
        ),
        axis=-2,
    )


def quat_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc rotation taking unit vector ``a`` to unit vector ``b`` (a "swing").

    ``q = normalize(1 + a·b, a × b)``; for opposite vectors that vanishes, so a half turn about
    any axis perpendicular to ``a`` is used instead.
    """
    dot = np.sum(a * b, axis=-1, keepdims=True)
    q = np.concatenate((1.0 + dot, np.cross(a, b)), axis=-1)
    opposite = (1.0 + dot) < 1e-9
    if np.any(opposite):
        helper = np.where(np.abs(a[..., :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
        axis = normalize(np.cross(a, helper))
        half_turn = np.concatenate((np.zeros_like(dot), axis), axis=-1)
        q = np.where(opposite, half_turn, q)
    return normalize(q)


def swing_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc rotation matrices (..., 3, 3) taking unit vectors ``a`` onto ``b``.

    Rodrigues in closed form, ``R = c·I + [v]× + v vᵀ / (1 + c)`` with ``v = a × b``,
    ``c = a · b``, written per component: the bake swings every bone of every frame, and this is
    several times faster than building quaternions first. Near-opposite pairs fall back to
    ``quat_between``'s half turn.
    """
    ax, ay, az = a[..., 0], a[..., 1], a[..., 2]
    bx, by, bz = b[..., 0], b[..., 1], b[..., 2]
    vx, vy, vz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    c = ax * bx + ay * by + az * bz
    k = 1.0 / np.maximum(1.0 + c, 1e-12)
    r = np.empty(a.shape[:-1] + (3, 3))
    r[..., 0, 0] = c + vx * vx * k
    r[..., 1, 1] = c + vy * vy * k
    r[..., 2, 2] = c + vz * vz * k
    vxy, vxz, vyz = vx * vy * k, vx * vz * k, vy * vz * k
    r[..., 0, 1], r[..., 1, 0] = vxy - vz, vxy + vz
    r[..., 0, 2], r[..., 2, 0] = vxz + vy, vxz - vy
    r[..., 1, 2], r[..., 2, 1] = vyz - vx, vyz + vx
    opposite = c < -1.0 + 1e-9
    if np.any(opposite):
        r[opposite] = matrix_from_quat(quat_between(a[opposite], b[opposite]))
    return r


def make_sign_continuous(q: np.ndarray, *, axis: int = 0) -> np.ndarray:
    """Flip quaternions (q ≡ −q) so consecutive samples along ``axis`` have a positive dot.

    F-curves interpolate components linearly; a sign flip between keys would swing the bone
    through a full turn between two frames.
    """
    q = np.moveaxis(q, axis, 0)
    flips = np.sign(np.sum(q[1:] * q[:-1], axis=-1, keepdims=True))
    flips[flips == 0] = 1.0
    # The first sample keeps its sign (built from q itself so a single frame works too).
    signs = np.concatenate((np.ones_like(q[:1, ..., :1]), np.cumprod(flips, axis=0)), axis=0)
    return np.moveaxis(q * signs, 0, axis)


def quaternion_to_euler(q: np.ndarray, order: str) -> np.ndarray:
    """Euler angles (..., 3) in channel order (x, y, z) for a Blender rotation order.

    For order "ijk" the matrix is ``R_k(c) @ R_j(b) @ R_i(a)``. The middle angle comes from
    ``R[k, i]`` and the outer two from atan2 of the neighbouring terms, with a sign that depends on
    the parity of the permutation. Angles are unwrapped along axis 0 (frames) so a bone turning past
    ±180° does not snap back between keys.
    """
    if order not in EULER_ORDERS:
        raise ValueError(f"unknown Euler order {order!r}; expected one of {EULER_ORDERS}")
    i, j, k = (_AXES[c] for c in order)
    parity = 1.0 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1.0
    m = matrix_from_quat(q)
    b = transcendental.arcsin(np.clip(-parity * m[..., k, i], -1.0, 1.0))
    a = transcendental.arctan2(parity * m[..., k, j], m[..., k, k])
    c = transcendental.arctan2(parity * m[..., j, i], m[..., i, i])
    euler = np.empty(m.shape[:-2] + (3,))
    euler[..., i], euler[..., j], euler[..., k] = a, b, c
    if euler.ndim > 1 and euler.shape[0] > 1:
        euler = euler.copy()
        euler[1:] += np.cumsum(unwrap_steps(np.diff(euler, axis=0)), axis=0)
    return euler


def unwrap_steps(step: np.ndarray) -> np.ndarray:
    """The multiple of 2π to add to each change of angle `step` so no change exceeds π (the
    correction of ``np.unwrap``, whose running sum unwraps a series); one shared rule for the
    bake's keys and the live preview, which sums it one frame at a time."""
    wrapped = np.mod(step + np.pi, 2.0 * np.pi) - np.pi
    np.copyto(wrapped, np.pi, where=(wrapped == -np.pi) & (step > 0))
    correction = wrapped - step
    np.copyto(correction, 0.0, where=np.abs(step) < np.pi)
    return correction


def euler_to_matrix(euler: np.ndarray, order: str) -> np.ndarray:
    """Rotation matrices from Euler angles in channel order (x, y, z); inverse of the above."""
    def axis_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
        c, s = np.cos(angle), np.sin(angle)
        r = np.zeros(angle.shape + (3, 3))
        u, v = ((1, 2), (2, 0), (0, 1))[axis]  # cyclic, so each rotation is right-handed
        r[..., axis, axis] = 1.0
        r[..., u, u], r[..., v, v] = c, c
        r[..., v, u], r[..., u, v] = s, -s
        return r

    i, j, k = (_AXES[c] for c in order)
    r_i, r_j, r_k = (axis_rotation(n, euler[..., n]) for n in (i, j, k))
    return r_k @ r_j @ r_i


def quaternion_to_axis_angle(q: np.ndarray) -> np.ndarray:
    """(angle, x, y, z) as Blender's AXIS_ANGLE rotation mode stores it; axis +Y at zero angle."""
    q = normalize(q)
    q = np.where(q[..., :1] < 0, -q, q)
    vec = q[..., 1:]
    sin_half = np.linalg.norm(vec, axis=-1, keepdims=True)
    angle = 2.0 * transcendental.arctan2(sin_half[..., 0], q[..., 0])
    axis = normalize(vec, fallback=np.array([0.0, 1.0, 0.0]))
    return np.concatenate((angle[..., None], axis), axis=-1)
