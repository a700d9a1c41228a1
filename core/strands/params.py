"""Per-frame user settings of the strands (`StrandParams`) and their validation.

Every field is an array broadcastable to `(F, S, P)` (per particle), `(F, S)` (per strand) or
`(F, S, 3)` (per-strand vectors). A setting that is not animated has a leading axis of 1.
Per-bone settings land on the bone's tail particle, so a segment or bend constraint reads the
value of its outer particle.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import transcendental
from ..errors import SetupError
from ..validation import out_of_range

# field -> (kind, allow_inf, minimum, maximum). kind: "particle" (F,S,P), "strand" (F,S),
# "vector" (F,S,3), "flag" (F,S) bool, "seed" (F,S) int, "count" (F,S) int within [min, max].
_FIELDS: dict[str, tuple[str, bool, float | None, float | None]] = {
    "damping": ("particle", False, 0.0, None),
    "shape_stiffness": ("particle", False, 0.0, 1.0),
    "shape_decay": ("strand", False, 0.0, None),
    "stretch_compliance": ("particle", True, 0.0, None),
    "bend_compliance": ("particle", True, 0.0, None),
    "use_tether": ("flag", False, None, None),
    "max_distance": ("particle", True, 0.0, None),
    "radius": ("particle", False, 0.0, None),
    "gravity": ("vector", False, None, None),
    "world_motion_fraction": ("strand", False, 0.0, 1.0),
    "wind_velocity": ("vector", False, None, None),
    "wind_turbulence": ("strand", False, 0.0, 1.0),
    "wind_gust": ("strand", False, 0.0, 1.0),
    "wind_seed": ("seed", False, None, None),
    "drag": ("particle", False, 0.0, None),
    "ftl_damping": ("strand", False, 0.0, 1.0),
    # Strand-hair settings (TressFX / seed 002), all optional (None = the default below).
    "local_stiffness": ("particle", False, 0.0, 1.0),
    "shape_range": ("strand", False, 0.0, 1.0),
    "shock_propagation": ("strand", False, 0.0, 1.0),
    "wind_direction_variation": ("strand", False, 0.0, np.pi),
    "wind_tangent_response": ("strand", False, 0.0, 1.0),
    "wind_strand_variation": ("strand", False, 0.0, 1.0),
    "voxel_friction": ("strand", False, 0.0, 1.0),
    "voxel_resolution": ("count", False, 1.0, 256.0),
}

# Default DFTL velocity correction (Mueller, Kim, Chentanez 2012; Unity Hair uses 0.8, demos 0.9).
DEFAULT_FTL_DAMPING = 0.9
# Bending (midpoint offsets, constraints/bending.py), m/N per joint: a 1 m chain of eight 1 kg
# segments held out level droops about 0.6 m at this value, 0.03 m at 0 (rigid), 0.18 m at 1e-5,
# 0.75 m at 1e-4 and 0.87 m (as with no bending) from 1e-3 up.
DEFAULT_BEND_COMPLIANCE = 5e-5
# Seed 002: a 32^3 voxel velocity grid around the hair.
DEFAULT_VOXEL_RESOLUTION = 32

# Values the optional fields take when None (so positional callers and older code keep working).
OPTIONAL_DEFAULTS: dict[str, float] = {
    "ftl_damping": DEFAULT_FTL_DAMPING,
    "local_stiffness": 0.0,
    "shape_range": 1.0,
    "shock_propagation": 0.0,
    "wind_direction_variation": 0.0,
    "wind_tangent_response": 0.0,
    "wind_strand_variation": 0.0,
    "voxel_friction": 0.0,
    "voxel_resolution": DEFAULT_VOXEL_RESOLUTION,
}

STANDARD_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class StrandParams:
    """Every user setting, per frame (see docs/internals.md for units and ranges)."""

    damping: Any
    shape_stiffness: Any
    shape_decay: Any
    stretch_compliance: Any
    bend_compliance: Any
    use_tether: Any
    max_distance: Any
    radius: Any
    gravity: Any
    world_motion_fraction: Any
    wind_velocity: Any
    wind_turbulence: Any
    wind_gust: Any
    wind_seed: Any
    drag: Any
    # Optional (added after the first release, so positional callers keep working): the DFTL
    # velocity correction s_damping of rigid (stretch_compliance 0) chains, 0...1 per strand;
    # None means DEFAULT_FTL_DAMPING.
    ftl_damping: Any = None
    # Strand hair (all optional, None = OPTIONAL_DEFAULTS; see docs/hair.md):
    # local shape stiffness, fraction per 1/60 s of each segment's pull toward its rest direction
    # in its parent segment's frame (TressFX local shape), per particle 0...1;
    local_stiffness: Any = None
    # fraction of the strand length (from the root) on which global shape acts (TressFX
    # globalConstraintsRange), per strand 0...1;
    shape_range: Any = None
    # velocity shock propagation: fraction per 1/60 s of the root segment's rigid motion carried
    # down the whole strand (TressFX VSP), per strand 0...1;
    shock_propagation: Any = None
    # wind: cone half-angle (radians) the wind direction wanders in over time, the fraction of
    # the wind along the strand tangent that is ignored (1 = only the perpendicular part acts),
    # and the per-strand phase spread of the gust/direction noise (0 = all strands in step);
    wind_direction_variation: Any = None
    wind_tangent_response: Any = None
    wind_strand_variation: Any = None
    # inter-hair friction: fraction per 1/60 s of each particle's velocity blended toward its
    # voxel cell's mean velocity (seed 002), and the grid resolution per axis (per strand int;
    # the first strand of each setup decides that setup's grid).
    voxel_friction: Any = None
    voxel_resolution: Any = None

    @classmethod
    def defaults(cls, strands: int, particles: int, **overrides: Any) -> StrandParams:
        """Settings matching the add-on's defaults, not animated, for `strands` x `particles`.

        Keyword overrides replace whole fields; scalars and short arrays are broadcast.
        """
        S, P = int(strands), int(particles)

        def particle(value: float) -> np.ndarray:
            return np.full((1, S, P), value, dtype=np.float64)

        def strand(value: float) -> np.ndarray:
            return np.full((1, S), value, dtype=np.float64)

        values: dict[str, Any] = {
            "damping": particle(1.0),
            "shape_stiffness": particle(0.1),
            "shape_decay": strand(1.0),
            "stretch_compliance": particle(0.0),
            "bend_compliance": particle(DEFAULT_BEND_COMPLIANCE),
            "use_tether": np.ones((1, S), dtype=bool),
            "max_distance": particle(np.inf),
            "radius": particle(0.01),
            "gravity": np.broadcast_to(np.asarray(STANDARD_GRAVITY), (1, S, 3)).copy(),
            "world_motion_fraction": strand(1.0),
            "wind_velocity": np.zeros((1, S, 3)),
            "wind_turbulence": strand(0.3),
            "wind_gust": strand(0.3),
            "wind_seed": np.zeros((1, S), dtype=np.int64),
            "drag": particle(0.5),
            "ftl_damping": strand(DEFAULT_FTL_DAMPING),
            "local_stiffness": particle(0.0),
            "shape_range": strand(1.0),
            "shock_propagation": strand(0.0),
            "wind_direction_variation": strand(0.0),
            "wind_tangent_response": strand(0.0),
            "wind_strand_variation": strand(0.0),
            "voxel_friction": strand(0.0),
            "voxel_resolution": np.full((1, S), DEFAULT_VOXEL_RESOLUTION, dtype=np.int64),
        }
        for name, value in overrides.items():
            if name not in values:
                raise TypeError(f"StrandParams has no field {name!r}")
            kind = _FIELDS[name][0]
            target = values[name].shape
            array = np.asarray(value)
            if kind == "vector" and array.ndim == 1:
                array = array.reshape(1, 1, 3)
            values[name] = np.broadcast_to(array, np.broadcast_shapes(array.shape, target))
        return cls(**values)

    def replace(self, **changes: Any) -> StrandParams:
        return dataclasses.replace(self, **changes)


def _target_shape(kind: str, F: int, S: int, P: int) -> tuple[int, ...]:
    if kind == "particle":
        return (F, S, P)
    if kind == "vector":
        return (F, S, 3)
    return (F, S)


def validate_params(
    params: StrandParams,
    *,
    frames: int,
    strands: int,
    particles: int,
    active: np.ndarray | None = None,
    strand_setup: np.ndarray | None = None,
    setup_names: Sequence[str] = (),
) -> dict[str, np.ndarray]:
    """Check every field and return them broadcast (read-only views) to their full shapes.

    Raises `SetupError` naming the field (and the setup when `strand_setup` is given) for a
    wrong shape, NaN, an infinity where none is allowed, or a value outside its range. Only
    active (non-padding) particles are checked.
    """
    F, S, P = int(frames), int(strands), int(particles)
    out: dict[str, np.ndarray] = {}
    for name, (kind, allow_inf, lo, hi) in _FIELDS.items():
        raw = getattr(params, name)
        if raw is None and name in OPTIONAL_DEFAULTS:
            raw = OPTIONAL_DEFAULTS[name]
        try:
            array = np.asarray(raw)
        except (TypeError, ValueError) as exc:
            raise SetupError(f"setting '{name}' is not numeric: {exc}") from exc
        target = _target_shape(kind, F, S, P)
        try:
            full = np.broadcast_to(array, target)
        except ValueError as exc:
            raise SetupError(
                f"setting '{name}' has shape {array.shape}, not broadcastable to {target}"
            ) from exc
        if kind == "flag":
            out[name] = full.astype(bool, copy=False)
            continue
        if kind in ("seed", "count"):
            if not np.issubdtype(array.dtype, np.integer) and (
                not np.all(np.isfinite(array)) or np.any(array != np.round(array))
            ):
                raise SetupError(f"setting '{name}' must be an integer")
            if kind == "count" and (np.any(array < lo) or np.any(array > hi)):
                raise SetupError(f"setting '{name}' must be an integer in [{lo:g}, {hi:g}], got "
                                 f"{array.min()!r}...{array.max()!r}")
            out[name] = full.astype(np.int64, copy=False)
            continue
        if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)
                or array.dtype == bool):
            raise SetupError(f"setting '{name}' is not numeric (dtype {array.dtype})")
        full = full.astype(np.float64, copy=False)
        values = full
        if kind == "particle" and active is not None:
            mask = np.broadcast_to(np.asarray(active, dtype=bool)[None], target)
        else:
            mask = np.ones(target, dtype=bool)
        bad = out_of_range(values, allow_inf=allow_inf, low=lo, high=hi)
        bad &= mask
        if np.any(bad):
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            value = values[index]
            where = _describe(index, kind, strand_setup, setup_names)
            limits = []
            if lo is not None:
                limits.append(f">= {lo:g}")
            if hi is not None:
                limits.append(f"<= {hi:g}")
            if not allow_inf:
                limits.append("finite")
            raise SetupError(
                f"setting '{name}' is {value!r}{where}; it must be {' and '.join(limits)}"
            )
        out[name] = full
    return out


def _describe(index: tuple[int, ...], kind: str, strand_setup, setup_names) -> str:
    frame = index[0]
    strand = index[1] if len(index) > 1 else 0
    text = f" at frame index {frame}"
    if strand_setup is not None and len(setup_names):
        text = f" in setup '{setup_names[int(strand_setup[strand])]}'" + text
    if kind == "particle" and len(index) > 2:
        text += f", strand {strand}, particle {index[2]}"
    elif kind != "particle":
        text += f", strand {strand}"
    return text


def shape_strength(shape_stiffness: np.ndarray, shape_decay: np.ndarray) -> np.ndarray:
    """Per-particle global-shape strength, decaying from root to tip (seeds 000/002).

    Particle i >= 1 gets `shape_stiffness ** (1 + shape_decay * (i - 1))`; particle 0 (the
    kinematic root) keeps `shape_stiffness`. `shape_stiffness` is (..., P), `shape_decay` (...).
    """
    stiffness = np.asarray(shape_stiffness, dtype=np.float64)
    decay = np.asarray(shape_decay, dtype=np.float64)
    P = stiffness.shape[-1]
    index = np.maximum(np.arange(P, dtype=np.float64) - 1.0, 0.0)
    exponent = 1.0 + decay[..., None] * index
    exponent[..., 0] = 1.0
    return transcendental.power(stiffness, exponent)


def rate_normalised(strength: np.ndarray, h: float, *, reference_rate: float = 60.0) -> np.ndarray:
    """Fraction of the gap closed per substep so that `strength` is the fraction per 1/60 s.

    `1 - (1 - s) ** (h * 60)` (KawaiiPhysics / Jolt form): independent of the substep size.
    """
    s = np.clip(np.asarray(strength, dtype=np.float64), 0.0, 1.0)
    return 1.0 - transcendental.power(1.0 - s, h * reference_rate)
