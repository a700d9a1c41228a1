"""Per-frame user settings of cloth-bone setups (`ClothParams`) and their validation.

Every field is per cloth and per frame: an array broadcastable to `(F, C)` (vectors `(F, C, 3)`).
A setting that is not animated has a leading axis of 1. Units are SI and rates are per second,
so the same settings give the same motion at any frame rate and substep.

Particles have unit mass, so an XPBD compliance alpha (m/N) is the inverse of a spring stiffness
per kilogram of particle: alpha = 0 is rigid, 1e-6 stiff fabric, 1e-2 and above floppy; inf
switches a constraint group off.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SetupError
from ..validation import out_of_range

STANDARD_GRAVITY = (0.0, 0.0, -9.81)

# field -> (kind, allow_inf, minimum, maximum); kind: "cloth" (F, C) float, "vector" (F, C, 3),
# "flag" (F, C) bool, "int" (F, C) integer.
FIELDS: dict[str, tuple[str, bool, float | None, float | None]] = {
    "stretch_compliance": ("cloth", True, 0.0, None),
    "shear_compliance": ("cloth", True, 0.0, None),
    "bend_compliance": ("cloth", True, 0.0, None),
    "horizontal_compliance": ("cloth", True, 0.0, None),
    "use_hard_vertical": ("flag", False, None, None),
    "damping": ("cloth", False, 0.0, None),
    "gravity": ("vector", False, None, None),
    "world_motion_fraction": ("cloth", False, 0.0, 1.0),
    "wind_velocity": ("vector", False, None, None),
    "wind_turbulence": ("cloth", False, 0.0, 1.0),
    "wind_seed": ("int", False, None, None),
    "drag": ("cloth", False, 0.0, None),
    "radius": ("cloth", False, 0.0, None),
    "max_distance_scale": ("cloth", False, 0.0, None),
    "backstop_distance": ("cloth", True, 0.0, None),
    "contact_damping": ("cloth", False, 0.0, None),
    "edge_damping_scale": ("cloth", False, 0.0, None),
    "edge_wind_scale": ("cloth", False, 0.0, None),
    "edge_world_motion_scale": ("cloth", False, 0.0, None),
    "edge_max_distance_scale": ("cloth", False, 0.0, None),
    "cut_threshold": ("cloth", True, 0.0, None),
    "cut_blend_frames": ("int", False, 0.0, None),
    "layer_thickness": ("cloth", False, 0.0, None),
}

# Add-on defaults: a medium-weight woven fabric (seed 001's tweed jacket, see presets.py).
DEFAULTS: dict[str, Any] = {
    "stretch_compliance": 1e-6,
    "shear_compliance": 1e-3,
    "bend_compliance": 1e-2,
    # Horizontal links between neighbouring chains are softer than the vertical ones (Magica
    # Cloth 2 uses 0.5 of the vertical stiffness): skirts may widen a little but never gap.
    "horizontal_compliance": 1e-5,
    "use_hard_vertical": True,
    "damping": 1.0,
    "gravity": STANDARD_GRAVITY,
    # Seed 001: "100 % of the local skeleton motion and 10-30 % of the world motion".
    "world_motion_fraction": 0.2,
    "wind_velocity": (0.0, 0.0, 0.0),
    "wind_turbulence": 0.0,
    "wind_seed": 0,
    "drag": 0.5,
    "radius": 0.02,  # Magica Cloth 2 default particle radius
    "max_distance_scale": 1.0,
    "backstop_distance": np.inf,
    "contact_damping": 8.0,
    # Seed 001 edge vertices: lower damping, more wind, more world motion, larger max distance.
    "edge_damping_scale": 0.5,
    "edge_wind_scale": 2.0,
    "edge_world_motion_scale": 1.5,
    "edge_max_distance_scale": 1.5,
    # A reference vertex jumping further than this between two frames is a cut (Magica Cloth 2
    # teleport distance 0.5 m; a sprinting character moves 0.33 m per frame at 24 fps).
    "cut_threshold": 1.0,
    "cut_blend_frames": 4,
    "layer_thickness": 0.01,
}


@dataclass(frozen=True)
class ClothParams:
    """Every cloth setting, per frame and cloth (see docs/cloth-solver.md for each)."""

    stretch_compliance: Any
    shear_compliance: Any
    bend_compliance: Any
    horizontal_compliance: Any
    use_hard_vertical: Any
    damping: Any
    gravity: Any
    world_motion_fraction: Any
    wind_velocity: Any
    wind_turbulence: Any
    wind_seed: Any
    drag: Any
    radius: Any
    max_distance_scale: Any
    backstop_distance: Any
    contact_damping: Any
    edge_damping_scale: Any
    edge_wind_scale: Any
    edge_world_motion_scale: Any
    edge_max_distance_scale: Any
    cut_threshold: Any
    cut_blend_frames: Any
    layer_thickness: Any

    @classmethod
    def defaults(cls, n_cloths: int, **overrides: Any) -> ClothParams:
        """The add-on's defaults for `n_cloths`, not animated (leading axis 1).

        Overrides replace whole fields (scalars, per-cloth (C,) or full (F, C) arrays).
        """
        unknown = set(overrides) - set(FIELDS)
        if unknown:
            raise SetupError(f"unknown cloth setting(s): {', '.join(sorted(unknown))}")
        C = int(n_cloths)
        values = {}
        for name, (kind, _, _, _) in FIELDS.items():
            value = overrides.get(name, DEFAULTS[name])
            if kind == "vector":
                array = np.asarray(value, dtype=np.float64)
                values[name] = np.broadcast_to(array, (1, C, 3)).copy() if array.ndim < 3 \
                    else array
            else:
                dtype = {"flag": bool, "int": np.int64}.get(kind, np.float64)
                array = np.asarray(value, dtype=dtype)
                values[name] = np.broadcast_to(array, (1, C)).copy() if array.ndim < 2 \
                    else array
        return cls(**values)

    def replace(self, **changes: Any) -> ClothParams:
        return dataclasses.replace(self, **changes)


def validate_params(params: ClothParams, *, frames: int,
                    setup_names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Broadcast each field to (F, C) / (F, C, 3) and check it; `SetupError` names setup and
    field (and the frame index when animated)."""
    F, C = int(frames), len(setup_names)
    out: dict[str, np.ndarray] = {}
    for name, (kind, allow_inf, low, high) in FIELDS.items():
        value = getattr(params, name)
        shape = (F, C, 3) if kind == "vector" else (F, C)
        try:
            array = np.asarray(value)
            if kind == "flag":
                array = array.astype(bool)
            elif kind == "int":
                if not np.issubdtype(array.dtype, np.integer):
                    as_float = array.astype(np.float64)
                    if not np.all(np.isfinite(as_float)) or np.any(as_float != np.round(as_float)):
                        raise SetupError(f"cloth setting '{name}' must be whole numbers")
                array = array.astype(np.int64)
            else:
                array = array.astype(np.float64)
            array = np.broadcast_to(array, shape)
        except (ValueError, TypeError) as exc:
            if isinstance(exc, SetupError):
                raise
            raise SetupError(f"cloth setting '{name}' has shape {np.shape(value)}, not "
                             f"broadcastable to {shape} (frames, cloths)") from exc
        if kind in ("cloth", "vector"):
            bad = out_of_range(array, allow_inf=allow_inf and kind != "vector", low=low,
                               high=high)
            if bad.any():
                index = tuple(int(i) for i in np.argwhere(bad)[0])
                f, c = index[0], index[1]
                lo = "-inf" if low is None else f"{low:g}"
                hi = "inf" if high is None else f"{high:g}"
                limits = f"[{lo}, {hi}]"
                raise SetupError(f"cloth '{setup_names[c]}': setting '{name}' is "
                                 f"{array[index]!r} at frame index {f}; allowed {limits}"
                                 + ("" if allow_inf else ", finite"))
        elif kind == "int" and low is not None and np.any(array < low):
            f, c = (int(i) for i in np.argwhere(array < low)[0])
            raise SetupError(f"cloth '{setup_names[c]}': setting '{name}' is {array[f, c]} at "
                             f"frame index {f}; it must be >= {low:g}")
        out[name] = array
    return out
