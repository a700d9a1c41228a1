"""External accelerations: gravity, air drag toward the wind, and seeded wind noise.

Drag is linear in the velocity relative to the air: `a = drag * (wind - v)`. In the position
(Verlet) form the `-drag * v` part folds into the velocity decay `exp(-(damping + drag) * h)`
and the `drag * wind` part is an acceleration, so wind and damping stay per-second quantities.

Wind = mean wind scaled by slow gusts (1D value noise in time per strand) plus turbulence
(3D value noise of position advected by the mean wind, "frozen turbulence", evolving slowly in
time). The noise is a pure function of integer lattice hashes (splitmix64 finaliser), the seed,
position and time: no global random state, same inputs give bit-identical output.
"""

from __future__ import annotations

import numpy as np

TURBULENCE_SCALE = 0.5  # metres: size of a turbulent eddy
TURBULENCE_EVOLUTION = 1.5  # seconds: time over which the frozen pattern changes
GUST_PERIOD = 2.0  # seconds between independent gust values

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_PRIMES = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F),
           np.uint64(0x165667B19E3779F9), np.uint64(0x27D4EB2F165667C5))


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a well-mixed 64-bit hash of `h` (wrapping uint64 arithmetic)."""
    h = h ^ (h >> np.uint64(30))
    h = h * _M1
    h = h ^ (h >> np.uint64(27))
    h = h * _M2
    return h ^ (h >> np.uint64(31))


def lattice_value(seed: np.ndarray, *coords: np.ndarray) -> np.ndarray:
    """Deterministic value in [-1, 1) for integer lattice coordinates and a seed."""
    with np.errstate(over="ignore"):
        h = _mix(np.asarray(seed).astype(np.int64).view(np.uint64) + _PRIMES[3])
        for prime, c in zip(_PRIMES, coords, strict=False):
            h = _mix(h ^ (np.asarray(c).astype(np.int64).view(np.uint64) * prime))
    return (h >> np.uint64(11)).astype(np.float64) * (2.0 / 2.0**53) - 1.0


def _smooth(t: np.ndarray) -> np.ndarray:
    return t * t * (3.0 - 2.0 * t)


def value_noise_1d(seed: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Smooth 1D value noise in [-1, 1]."""
    t = np.asarray(t, dtype=np.float64)
    i = np.floor(t)
    w = _smooth(t - i)
    a = lattice_value(seed, i)
    b = lattice_value(seed, i + 1)
    return a + (b - a) * w


def value_noise_3d(seed: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Smooth 3D value noise in [-1, 1]; `p` is (..., 3), `seed` broadcasts against p[..., 0]."""
    p = np.asarray(p, dtype=np.float64)
    i = np.floor(p)
    w = _smooth(p - i)
    ix, iy, iz = i[..., 0], i[..., 1], i[..., 2]
    wx, wy, wz = w[..., 0], w[..., 1], w[..., 2]
    result = 0.0
    for dx in (0, 1):
        fx = wx if dx else 1.0 - wx
        for dy in (0, 1):
            fy = wy if dy else 1.0 - wy
            for dz in (0, 1):
                fz = wz if dz else 1.0 - wz
                result = result + fx * fy * fz * lattice_value(seed, ix + dx, iy + dy, iz + dz)
    return result


def gust_factor(*, seed: np.ndarray, gust: np.ndarray, t: float) -> np.ndarray:
    """Per-strand multiplier of the mean wind, `1 + gust * noise(t)`, never negative."""
    noise = value_noise_1d(np.asarray(seed) * 7 + 3, np.full(np.shape(seed), t / GUST_PERIOD))
    return np.maximum(1.0 + np.asarray(gust) * noise, 0.0)


def wind_at(*, x: np.ndarray, t: float, wind_velocity: np.ndarray, turbulence: np.ndarray,
            gust: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Wind velocity (S, P, 3) at particle positions `x` (S, P, 3) and time `t`.

    `wind_velocity` (S, 3), `turbulence`, `gust`, `seed` (S,).
    """
    mean = wind_velocity * gust_factor(seed=seed, gust=gust, t=t)[:, None]
    speed = np.linalg.norm(wind_velocity, axis=-1)
    amplitude = speed * turbulence  # (S,)
    if not np.any(amplitude > 0):
        return np.broadcast_to(mean[:, None, :], x.shape)
    # Frozen turbulence advected by the mean wind (Taylor), drifting slowly in time.
    q = (x - wind_velocity[:, None, :] * t) / TURBULENCE_SCALE
    q = q + np.array([0.0, 0.0, t / TURBULENCE_EVOLUTION])
    seed_p = np.broadcast_to(np.asarray(seed)[:, None], x.shape[:-1]).astype(np.int64) * 3
    noise = np.stack([value_noise_3d(seed_p + c, q) for c in range(3)], axis=-1)
    return mean[:, None, :] + amplitude[:, None, None] * noise
