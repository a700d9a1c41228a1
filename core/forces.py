"""External accelerations: gravity, air drag toward the wind, and seeded wind noise.

Drag is linear in the velocity relative to the air: `a = drag * (wind - v)`. In the position
(Verlet) form the `-drag * v` part folds into the velocity decay `exp(-(damping + drag) * h)`
and the `drag * wind` part is an acceleration, so wind and damping stay per-second quantities.

Wind = mean wind scaled by slow gusts (1D value noise in time per strand) plus turbulence
(3D value noise of position advected by the mean wind, "frozen turbulence", evolving slowly in
time). The noise is a pure function of integer lattice hashes (splitmix64 finaliser), the seed,
position and time: no global random state, same inputs give bit-identical output.

Strand hair (seed 002) adds three things so strands do not move as one sheet: the mean direction
wanders over time inside a cone (`wind_direction`), strands run the gust/direction noise with
their own phase (`strand_phase`), and each particle feels mainly the part of the wind
perpendicular to its strand tangent (`tangent_response`; the drag of a thin cylinder is mostly
normal to its axis, TressFX's `-(v x W) x v`).
"""

from __future__ import annotations

import numpy as np

from . import transcendental

TURBULENCE_SCALE = 0.5  # metres: size of a turbulent eddy
TURBULENCE_EVOLUTION = 1.5  # seconds: time over which the frozen pattern changes
GUST_PERIOD = 2.0  # seconds between independent gust values
DIRECTION_PERIOD = 3.0  # seconds between independent wind directions (seed 002: slow swings)
PHASE_SPAN = 4.0 * GUST_PERIOD  # seconds: per-strand phase offsets at strand variation 1

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
    """Smooth 1D value noise in [-1, 1]. Both ends of the interval are hashed in one
    `lattice_value` call (a windy rig evaluates three of these noises every substep)."""
    t = np.asarray(t, dtype=np.float64)
    seed = np.asarray(seed)
    i = np.floor(t)
    w = _smooth(t - i)
    i = np.broadcast_to(i, np.broadcast_shapes(seed.shape, i.shape))
    a, b = lattice_value(seed, np.stack([i, i + 1]))
    return a + (b - a) * w


# The eight lattice corners of a cell (8, 3), in the order `value_noise_3d` sums them, and
# how many points it hashes at once.
BATCHED_NOISE_POINTS = 4096
_CORNERS = np.array([(dx, dy, dz) for dx in (0, 1) for dy in (0, 1) for dz in (0, 1)],
                    dtype=np.float64)


def value_noise_3d(seed: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Smooth 3D value noise in [-1, 1]; `p` is (..., 3), `seed` broadcasts against p[..., 0].

    Up to BATCHED_NOISE_POINTS points the eight corners' hashes are one `lattice_value` call
    on a corner axis (eight calls of about 35 ufuncs each made the turbulence a sixth of a
    windy cape's solve); beyond, corner by corner (the batch's eight-fold temporaries were
    slower at 32,000 points). The trilinear weights are summed in the same order either way,
    so both give the same bits."""
    p = np.asarray(p, dtype=np.float64)
    i = np.floor(p)
    w = _smooth(p - i)
    wx, wy, wz = w[..., 0], w[..., 1], w[..., 2]
    if i[..., 0].size <= BATCHED_NOISE_POINTS:
        lattice = np.moveaxis(i, -1, 0)  # (3, ...): corner-major (8, ...) hashes below
        corners = lattice[:, None] + _CORNERS.T.reshape((3, 8) + (1,) * (i.ndim - 1))
        values = lattice_value(np.asarray(seed), corners[0], corners[1], corners[2])
    else:
        values = None
    result = 0.0
    for c, (dx, dy, dz) in enumerate(_CORNERS.tolist()):
        fx = wx if dx else 1.0 - wx
        fy = wy if dy else 1.0 - wy
        fz = wz if dz else 1.0 - wz
        value = values[c] if values is not None else lattice_value(
            seed, i[..., 0] + dx, i[..., 1] + dy, i[..., 2] + dz)
        result = result + fx * fy * fz * value
    return result


def gust_factor(*, seed: np.ndarray, gust: np.ndarray, t) -> np.ndarray:
    """Per-strand multiplier of the mean wind, `1 + gust * noise(t)`, never negative.

    `t` is a time or per-strand times (strands with a phase offset)."""
    t = np.broadcast_to(np.asarray(t, dtype=np.float64), np.shape(seed))
    noise = value_noise_1d(np.asarray(seed) * 7 + 3, t / GUST_PERIOD)
    return np.maximum(1.0 + np.asarray(gust) * noise, 0.0)


def strand_phase(*, seed: np.ndarray, variation: np.ndarray) -> np.ndarray:
    """Per-strand time offsets (S,) in seconds: `variation * PHASE_SPAN * u_s`, `u_s` in [0, 1)
    hashed from the seed and the strand index, so strands of one setup gust and turn out of step
    (seed 002: "strands must not move as one sheet")."""
    seed = np.asarray(seed)
    index = np.arange(seed.shape[-1])
    u = 0.5 * (lattice_value(seed * 11 + 5, index) + 1.0)
    return np.asarray(variation, dtype=np.float64) * PHASE_SPAN * u


def wind_direction(*, wind_velocity: np.ndarray, variation: np.ndarray, seed: np.ndarray,
                   t) -> np.ndarray:
    """The mean wind (S, 3) with its direction wandering inside a cone of half-angle `variation`
    (radians, per strand) over time: the direction is tilted toward two axes perpendicular to it
    by smooth noise (TressFX blends four wind vectors on a 40 degree cone; seed 002 rotates the
    wind between random directions). The speed is kept."""
    speed = np.linalg.norm(wind_velocity, axis=-1, keepdims=True)
    d = wind_velocity / np.maximum(speed, 1e-12)
    helper = np.where(np.abs(d[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    u = np.cross(d, helper)
    u /= np.maximum(np.linalg.norm(u, axis=-1, keepdims=True), 1e-12)
    w = np.cross(d, u)
    t = np.broadcast_to(np.asarray(t, dtype=np.float64), np.shape(seed)) / DIRECTION_PERIOD
    seed = np.asarray(seed)
    tilt = transcendental.tan(np.minimum(np.asarray(variation, dtype=np.float64), 1.5))[:, None]
    a = value_noise_1d(seed * 13 + 1, t)[:, None]
    b = value_noise_1d(seed * 17 + 2, t)[:, None]
    # Noise in [-1, 1]^2 clipped to the unit disc: the tilt never exceeds the cone.
    r = np.maximum(np.sqrt(a * a + b * b), 1.0)
    tilted = d + tilt * (a * u + b * w) / r
    tilted /= np.maximum(np.linalg.norm(tilted, axis=-1, keepdims=True), 1e-12)
    return tilted * speed


def wind_at(*, x: np.ndarray, t: float, wind_velocity: np.ndarray, turbulence: np.ndarray,
            gust: np.ndarray, seed: np.ndarray, direction_variation: np.ndarray | None = None,
            phase: np.ndarray | None = None) -> np.ndarray:
    """Wind velocity (S, P, 3) at particle positions `x` (S, P, 3) and time `t`.

    `wind_velocity` (S, 3), `turbulence`, `gust`, `seed` (S,); optional `direction_variation`
    (S,) cone half-angle in radians and `phase` (S,) per-strand time offsets (`strand_phase`).
    """
    t_strand = t if phase is None else t + phase
    base = wind_velocity
    if direction_variation is not None and np.any(direction_variation > 0):
        base = wind_direction(wind_velocity=wind_velocity, variation=direction_variation,
                              seed=seed, t=t_strand)
    mean = base * gust_factor(seed=seed, gust=gust, t=t_strand)[:, None]
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


def tangent_response(wind: np.ndarray, x: np.ndarray, response: np.ndarray) -> np.ndarray:
    """Remove `response` (S,) of the wind's component along each particle's strand tangent.

    `wind`, `x` (S, P, 3); the tangent of particle i is its incoming segment `x_i - x_{i-1}`
    (particle 0 uses segment 0). `w - r (w . t) t`: at r = 1 only the perpendicular part acts, so
    the force depends on how each strand lies in the wind.
    """
    seg = np.diff(x, axis=1)
    tangent = np.concatenate([seg[:, :1], seg], axis=1)
    tangent = tangent / np.maximum(np.linalg.norm(tangent, axis=-1, keepdims=True), 1e-12)
    along = np.sum(wind * tangent, axis=-1, keepdims=True)
    return wind - np.asarray(response, dtype=np.float64)[:, None, None] * along * tangent
