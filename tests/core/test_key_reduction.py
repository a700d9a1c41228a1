"""Key reduction: the kept keys reproduce every frame within the angle, and the chain angles
bound the world-space error at every tail."""

from __future__ import annotations

import math

import numpy as np

from waft.core.key_reduction import chain_angles, chain_reach, channel_rotations, kept_frames
from waft.core.rotations import euler_to_matrix, quat_from_matrix


def _swing(frames: int) -> np.ndarray:
    """A damped swing about X with a slow turn about Z: rotations (F, 3, 3)."""
    t = np.arange(frames) / 24.0
    x = 0.6 * np.exp(-0.8 * t) * np.sin(2 * math.pi * 1.2 * t)
    z = 0.3 * t
    return euler_to_matrix(np.stack((x, np.zeros_like(t), z), axis=-1), "XYZ")


def _angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    trace = np.einsum("fij,fij->f", a, b)
    return np.arccos(np.clip((trace - 1.0) / 2.0, -1.0, 1.0))


def _interpolate(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    frames = np.arange(len(values))
    return np.stack([np.interp(frames, frames[keep], values[keep, c])
                     for c in range(values.shape[1])], axis=-1)


def test_every_frame_stays_within_the_angle_in_each_rotation_mode():
    rotations = _swing(240)
    quats = quat_from_matrix(rotations)
    for mode, values in (("QUATERNION", quats),
                         ("XYZ", np.stack((0.6 * np.exp(-0.8 * np.arange(240) / 24) * np.sin(
                             2 * math.pi * 1.2 * np.arange(240) / 24), np.zeros(240),
                             0.3 * np.arange(240) / 24), axis=-1))):
        for degrees in (0.1, 0.5, 2.0):
            keep = kept_frames(values, mode, max_angle=math.radians(degrees))
            played = channel_rotations(_interpolate(values, keep), mode)
            error = _angles(channel_rotations(values, mode), played)
            assert error.max() <= math.radians(degrees) + 1e-9, (mode, degrees)
            assert keep[0] and keep[-1]
            assert keep.sum() < 240 * 0.6, (mode, degrees, keep.sum())


def test_a_tighter_bound_keeps_more_keys_and_a_straight_line_keeps_two():
    quats = quat_from_matrix(_swing(240))
    counts = [kept_frames(quats, "QUATERNION", max_angle=math.radians(d)).sum()
              for d in (2.0, 0.5, 0.1)]
    assert counts[0] < counts[1] < counts[2]
    line = np.stack((np.linspace(0.0, 1.0, 50), np.zeros(50), np.zeros(50)), axis=-1)
    assert kept_frames(line, "XYZ", max_angle=1e-6).sum() == 2


def test_chain_angles_bound_the_world_error_at_every_tail():
    # A bent 4-bone chain; each bone rotated by exactly its allowed angle about the worst axis
    # (perpendicular to the lever): no tail moves more than the distance bound.
    heads = np.array([[0, 0, 0], [0, 0, -0.3], [0.1, 0, -0.55], [0.25, 0, -0.7]], float)
    tails = np.array([[0, 0, -0.3], [0.1, 0, -0.55], [0.25, 0, -0.7], [0.3, 0, -1.0]], float)
    reach = chain_reach(heads, tails)
    angles = chain_angles(reach=reach, max_distance=0.001, max_angle=math.radians(0.5))
    moved = tails.copy()
    for b in range(4):  # rotate bone b and everything below it about Y through its head
        c, s = math.cos(angles[b]), math.sin(angles[b])
        rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
        moved[b:] = (moved[b:] - heads[b]) @ rot.T + heads[b]
        heads[b + 1:] = (heads[b + 1:] - heads[b]) @ rot.T + heads[b]
    assert np.linalg.norm(moved - tails, axis=-1).max() <= 0.001 + 1e-12
    assert np.all(angles <= math.radians(0.5))
