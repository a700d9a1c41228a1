"""Per-frame ragdoll settings (`RagdollParams`) and their validation.

Per-body fields broadcast to (F, N), per-ragdoll fields to (F, R), gravity to (F, R, 3). A setting
that is not animated has a leading axis of 1. Units and meanings: docs/ragdoll-solver.md.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SetupError
from ..validation import out_of_range
from .model import BodyMode

STANDARD_GRAVITY = (0.0, 0.0, -9.81)

# field -> (kind, allow_inf, minimum, maximum). kind: "body" (F, N) float, "mode" (F, N) int,
# "ragdoll" (F, R) float, "flag" (F, R) bool, "vector" (F, R, 3).
_FIELDS: dict[str, tuple[str, bool, float | None, float | None]] = {
    "mode": ("mode", False, None, None),
    "motor_strength": ("body", False, 0.0, 1.0),
    "motor_damping": ("body", False, 0.0, None),
    "velocity_drive": ("body", False, 0.0, 1.0),
    "blend": ("body", False, 0.0, 1.0),
    "distance_limit": ("body", True, 0.0, None),
    "distance_limit_speed": ("body", True, 0.0, None),
    "joint_damping": ("body", False, 0.0, None),
    "linear_damping": ("body", False, 0.0, None),
    "friction": ("body", False, 0.0, None),
    "restitution": ("body", False, 0.0, 1.0),
    "gravity": ("vector", False, None, None),
    "root_lock": ("flag", False, None, None),
    "fall_threshold": ("ragdoll", True, 0.0, None),
    "recovery_delay": ("ragdoll", True, 0.0, None),
    "recovery_time": ("ragdoll", False, 0.0, None),
}

DEFAULTS: dict[str, Any] = {
    "mode": int(BodyMode.DRIVEN),
    "motor_strength": 0.5,
    "motor_damping": 0.5,
    "velocity_drive": 0.0,
    "blend": 0.0,
    "distance_limit": np.inf,
    "distance_limit_speed": np.inf,
    "joint_damping": 1.0,
    "linear_damping": 0.0,
    "friction": 0.5,
    "restitution": 0.0,
    "gravity": STANDARD_GRAVITY,
    "root_lock": True,
    "fall_threshold": np.inf,
    "recovery_delay": np.inf,
    "recovery_time": 1.0,
}


@dataclass(frozen=True)
class RagdollParams:
    """Every per-frame setting (see the module docstring for shapes, the docs for meanings).

    mode: BodyMode per body. motor_strength 0..1: 1 reproduces the animation's local rotation
    exactly, below 1 a spring whose natural frequency is MOTOR_FREQUENCY * s / (1 - s) Hz
    (MOTOR_FREQUENCY = 2 Hz).
    motor_damping: damping ratio of that spring (1 = critical). velocity_drive 0..1: fraction
    per 1/30 s of the linear velocity blended toward the one reaching the target. blend 0..1:
    local-space blend of the output toward the animation. distance_limit (m, inf = off) and
    distance_limit_speed (m/s, inf = never shrinks). joint_damping and linear_damping (1/s).
    friction (Coulomb coefficient) against colliders. restitution 0..1: normal speed kept
    when a body hits a collider (0 = no bounce, 1 = elastic). gravity (m/s²) per ragdoll.
    root_lock: the root's 6 DOF locked to its target. fall_threshold (m): root deviation that
    releases the lock for good (free fall). recovery_delay (s, inf = never) and
    recovery_time (s): after a fall, wait recovery_delay, then blend the shown pose back to the
    animation over recovery_time (smoothstep, read at the frame of the fall).
    """

    mode: Any
    motor_strength: Any
    motor_damping: Any
    velocity_drive: Any
    blend: Any
    distance_limit: Any
    distance_limit_speed: Any
    joint_damping: Any
    linear_damping: Any
    friction: Any
    restitution: Any
    gravity: Any
    root_lock: Any
    fall_threshold: Any
    recovery_delay: Any
    recovery_time: Any

    @classmethod
    def defaults(cls, n_bodies: int, n_ragdolls: int, **overrides: Any) -> RagdollParams:
        """`DEFAULTS`, not animated; keyword overrides replace fields (broadcast). These are
        the core's defaults: the add-on's properties start at motor strength 0.8 and a 0.3 m
        fall threshold."""
        N, R = int(n_bodies), int(n_ragdolls)
        values: dict[str, Any] = {}
        for name, (kind, _, _, _) in _FIELDS.items():
            shape = _shape(kind, 1, N, R)
            dtype = {"mode": np.int64, "flag": bool}.get(kind, np.float64)
            values[name] = np.broadcast_to(np.asarray(DEFAULTS[name], dtype=dtype), shape).copy()
        for name, value in overrides.items():
            if name not in values:
                raise TypeError(f"RagdollParams has no field {name!r}")
            kind = _FIELDS[name][0]
            array = np.asarray(value)
            if kind == "vector" and array.ndim == 1:
                array = array.reshape(1, 1, 3)
            target = values[name].shape
            values[name] = np.broadcast_to(array, np.broadcast_shapes(array.shape, target))
        return cls(**values)

    def replace(self, **changes: Any) -> RagdollParams:
        return dataclasses.replace(self, **changes)


def _shape(kind: str, F: int, N: int, R: int) -> tuple[int, ...]:
    if kind in ("body", "mode"):
        return (F, N)
    if kind == "vector":
        return (F, R, 3)
    return (F, R)


def validate_params(params: RagdollParams, *, frames: int, n_bodies: int, n_ragdolls: int,
                    body_names: Sequence[str] = (), setup_names: Sequence[str] = ()
                    ) -> dict[str, np.ndarray]:
    """Broadcast every field to its full shape (read-only views); SetupError naming the field,
    and the bone or setup, for a wrong shape, NaN, forbidden infinity or out-of-range value."""
    F, N, R = int(frames), int(n_bodies), int(n_ragdolls)
    out: dict[str, np.ndarray] = {}
    for name, (kind, allow_inf, lo, hi) in _FIELDS.items():
        raw = getattr(params, name)
        if raw is None:
            raw = DEFAULTS[name]
        array = np.asarray(raw)
        if kind == "vector" and array.ndim == 1:
            array = array.reshape(1, 1, 3)
        shape = _shape(kind, F, N, R)
        try:
            full = np.broadcast_to(array, shape)
        except ValueError:
            raise SetupError(f"ragdoll setting '{name}' has shape {array.shape}, which does not "
                             f"broadcast to {shape}") from None
        if kind == "flag":
            out[name] = full.astype(bool, copy=False)
            continue
        if kind == "mode":
            valid = np.isin(full, [int(m) for m in BodyMode])
            if not np.all(valid):
                f, b = (int(v) for v in np.argwhere(~valid)[0])
                raise SetupError(f"ragdoll setting 'mode' of {_who(b, body_names)} at frame {f} "
                                 f"is {full[f, b]!r}, not a BodyMode")
            out[name] = full.astype(np.int64, copy=False)
            continue
        full = full.astype(np.float64, copy=False)
        bad = out_of_range(full, allow_inf=allow_inf, low=lo, high=hi)
        if np.any(bad):
            index = tuple(int(v) for v in np.argwhere(bad)[0])
            names = body_names if kind == "body" else setup_names
            who = _who(index[1], names, "ragdoll" if kind != "body" else "body")
            limits = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
            raise SetupError(f"ragdoll setting '{name}' of {who} at frame {index[0]} is "
                             f"{full[index]!r}; it must be finite and within {limits}"
                             + (" (inf allowed)" if allow_inf else ""))
        out[name] = full
    return out


def _who(i: int, names: Sequence[str], what: str = "body") -> str:
    return f"{what} '{names[i]}'" if i < len(names) else f"{what} {i}"


@dataclass(frozen=True)
class RagdollSettings:
    """substep (s, fixed), position iterations per substep, pre-roll frames settled on frame 0,
    and whether bodies of one ragdoll collide with each other (capsule-capsule, pairs that are
    not joint neighbours and do not overlap at bind pose)."""

    substep: float = 1.0 / 240.0
    iterations: int = 4
    preroll_frames: int = 0
    self_collision: bool = True

    def validate(self) -> None:
        if not (math.isfinite(self.substep) and 0.0 < self.substep <= 0.1):
            raise SetupError(f"ragdoll substep {self.substep!r} s must be in (0, 0.1]")
        if int(self.iterations) != self.iterations or not 1 <= self.iterations <= 256:
            raise SetupError(f"ragdoll iterations {self.iterations!r} must be an integer 1..256")
        if int(self.preroll_frames) != self.preroll_frames or self.preroll_frames < 0:
            raise SetupError(f"ragdoll preroll_frames {self.preroll_frames!r} must be >= 0")
