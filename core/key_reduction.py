"""Fewer rotation keys with a world-space error bound (key reduction for baked bone chains).

A baked chain has a LINEAR key on every frame of every rotation channel. Most of them lie on
the straight line between their neighbours. ``kept_frames`` keeps, per bone, the fewest keys
(Ramer–Douglas–Peucker on the rotation curve) such that the rotation Blender interpolates
between the kept keys (channels interpolated linearly, in the bone's rotation mode, exactly as
F-curves play them) is within an angle of the baked rotation at *every* frame.

The bound the user gives is in the world: millimetres at every bone tail and degrees. A bone's
rotation error turns everything below it in its chain, so bone ``b`` gets the angle
``min(degrees, millimetres / (n · reach_b))``, with ``reach_b`` the longest distance from its
head to a tail below it and ``n`` the bones of the chain: the error at any tail is at most the
sum of its ancestors' angle × distance (chord ≤ angle × radius), hence at most the millimetres.
"""

from __future__ import annotations

import numpy as np

from .rotations import euler_to_matrix, matrix_from_quat, normalize


def channel_rotations(values: np.ndarray, mode: str) -> np.ndarray:
    """Rotation matrices (…, 3, 3) of rotation channels (…, C) in Blender's ``rotation_mode``:
    quaternion (w, x, y, z; normalised as Blender does), axis-angle (angle, x, y, z) or an
    Euler order."""
    if mode == "QUATERNION":
        return matrix_from_quat(normalize(values))
    if mode == "AXIS_ANGLE":
        half = 0.5 * values[..., 0]
        axis = normalize(values[..., 1:], fallback=np.array([0.0, 1.0, 0.0]))
        quat = np.concatenate((np.cos(half)[..., None], axis * np.sin(half)[..., None]), axis=-1)
        return matrix_from_quat(quat)
    return euler_to_matrix(values, mode)


def kept_frames(values: np.ndarray, mode: str, *, max_angle: float) -> np.ndarray:
    """(F,) bool: the keys to keep of one bone's rotation channels ``values`` (F, C) so that
    linear interpolation between them stays within ``max_angle`` radians at every frame. The
    first and last keys are always kept."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    keep = np.zeros(n, dtype=bool)
    keep[[0, n - 1]] = True
    if n <= 2:
        return keep
    reference = channel_rotations(values, mode)
    # trace(AᵀB) = 1 + 2 cos(angle): the angle test needs no inverse cosine.
    min_trace = 1.0 + 2.0 * float(np.cos(max(max_angle, 0.0))) - 1e-12
    stack = [(0, n - 1)]
    while stack:
        a, b = stack.pop()
        if b - a < 2:
            continue
        t = (np.arange(a + 1, b, dtype=np.float64) - a) / (b - a)
        interpolated = values[a] + t[:, None] * (values[b] - values[a])
        trace = np.einsum("fij,fij->f", reference[a + 1:b],
                          channel_rotations(interpolated, mode))
        if trace.min() >= min_trace:
            continue
        split = a + 1 + int(np.argmin(trace))  # where the interpolation is worst
        keep[split] = True
        stack.extend(((a, split), (split, b)))
    return keep


def chain_reach(heads: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Per bone of one chain (root first): the longest distance from its head to its own tail
    or a tail below it in the chain (rest pose, (B, 3) points)."""
    distance = np.linalg.norm(tails[None, :, :] - heads[:, None, :], axis=-1)  # (head, tail)
    below = np.triu(np.ones((len(heads), len(tails)), dtype=bool))
    return np.where(below, distance, 0.0).max(axis=1)


def chain_angles(*, reach: np.ndarray, max_distance: float, max_angle: float) -> np.ndarray:
    """Per bone of one chain: the rotation error allowed so that no tail of the chain moves
    more than ``max_distance`` (the units of ``reach``) and no bone turns more than
    ``max_angle`` radians."""
    reach = np.asarray(reach, dtype=np.float64)
    by_distance = max_distance / (len(reach) * np.maximum(reach, 1e-12))
    return np.minimum(by_distance, max_angle)
