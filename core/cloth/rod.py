"""Oriented-particle chains: position and orientation based Cosserat rods (seed 003).

Kugelstadt & Schömer 2016, "Position and orientation based Cosserat rods" (SCA), in XPBD form
(Macklin 2016) with small substeps: ribbons, ties and hoods that have no cloth neighbours, where a
bone needs a full orientation (twist included) and not only a direction. A hood pendulum (seed
001) is a rod of one segment.

State per rod: particles p_0..p_B (p_0 follows the reference: the bone head) and one unit
quaternion q_j per segment (the bone's world rotation, w x y z). Constraints per substep:

* stretch: bones do not stretch, so after the XPBD groups the particles are swept root to tip
  at exact segment length (Follow-The-Leader, Mueller 2012, leaving the velocity of a
  mass-weighted inelastic impulse, as the cloth's hard vertical constraints);
  `stretch_shear_compliance` softens the shear;
* stretch-shear: `C = p_{j+1} - p_j - l_j R(q_j) u_j` with `u_j` the rest segment direction in
  the segment frame (for a Blender bone u = +Y), denominator `w_j + w_{j+1} + 4 w_q l^2 + at`;
  the orientation correction `dq = 2 w_q l (0, g) q ū` (K&S eq. 37, PBD reference code);
* bend-twist: Darboux vector `Omega = conj(q_j) q_{j+1}` against its rest value (the sign of
  quaternions chosen by the smaller difference), vector part per local axis with compliance
  `bend_twist_compliance / bend_stiffness_axes[i]`: one bend setting, anisotropic multipliers
  (local x, y, z; for a bone y is twist); the first segment bends against its animated
  reference orientation, so a rod hangs as animated unless forces act on it.

Each group is solved in even/odd colours along the rods (no two updates share a particle or
quaternion), vectorised over all rods; rods are padded to the longest with weightless segments.
Orientations get inertia from quaternion Verlet `q + (q - q_prev) decay`, normalised, with the
inverse inertia of a thin rod of the segment's unit mass, `w_q = 1 / (4 I) = 3 / l^2`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import transcendental
from ..affine import lerp_affine
from ..colliders import ColliderKind, ColliderSet, apply_friction, is_similarity, shape_normal
from ..errors import DivergenceError, SetupError
from ..job import FrameJob, FrameStream, run_job
from ..rotations import quat_product
from ..timestep import SolverSettings, check_output, interpolate
from ..validation import out_of_range
from .constraints import mass_share
from .params import STANDARD_GRAVITY
from .solver import affine_inverse, frame_interval

EPS = 1e-12
_TIME_EPS = 1e-9
DIVERGENCE_MIN_BOUND = 10.0


@dataclass(frozen=True)
class RodRest:
    """One rod in its bind pose."""

    setup: str
    names: tuple[str, ...]  # (B,) bone names, one per segment
    rest_positions: np.ndarray  # (B + 1, 3) world metres (head of each bone, tail of the last)
    rest_orientation: np.ndarray  # (B, 4) world quaternions (w, x, y, z) of the segments


@dataclass(frozen=True)
class RodModel:
    setup_names: tuple[str, ...]  # (S,) one per rod
    names: tuple[tuple[str, ...], ...]
    count: np.ndarray  # (S,) segments per rod
    rest_positions: np.ndarray  # (S, P, 3), padded with the last particle
    rest_orientation: np.ndarray  # (S, B, 4)
    rest_length: np.ndarray  # (S, B), 0 on padding
    direction: np.ndarray  # (S, B, 3) rest segment direction in the segment frame
    rest_darboux: np.ndarray  # (S, B - 1, 4) conj(q_j) q_{j+1} at rest
    w: np.ndarray  # (S, P) particle inverse mass: 0 for the root and padding
    w_q: np.ndarray  # (S, B) quaternion inverse inertia, 0 on padding
    colliders: ColliderSet
    collider_mask: np.ndarray  # (K, S)

    @property
    def rods(self) -> int:
        return len(self.setup_names)

    @property
    def segments(self) -> int:
        return int(self.rest_orientation.shape[1])


def _unit(q: np.ndarray) -> np.ndarray:
    length = np.sqrt(np.sum(q * q, axis=-1, keepdims=True))
    return q / np.maximum(length, EPS)


def qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a ⊗ b (w, x, y, z), `rotations.quat_product`: three NumPy calls where
    the product written out component by component took 28, which the handful of segments per
    colour paid per call (a ribbon's substep makes 13 of them)."""
    return quat_product(a, b)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (..., 3) by unit quaternions q (..., 4)."""
    w = q[..., :1]
    u = q[..., 1:]
    t = 2.0 * _cross(u, v)
    return v + w * t + _cross(u, t)


def conjugate(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def build_rod_model(*, rods: Sequence[RodRest], colliders: ColliderSet | None = None,
                    collider_mask: np.ndarray | None = None) -> RodModel:
    """Validate and pad rods; `SetupError` names the setup and bone."""
    rods = list(rods)
    if not rods:
        raise SetupError("no rod to build")
    S = len(rods)
    B = max(len(r.names) for r in rods)
    if B < 1:
        raise SetupError(f"rod '{rods[0].setup}' has no segment")
    P = B + 1
    positions = np.zeros((S, P, 3))
    orientation = np.zeros((S, B, 4))
    orientation[..., 0] = 1.0
    count = np.zeros(S, dtype=np.int64)
    for s, rod in enumerate(rods):
        name = rod.setup
        n = len(rod.names)
        x = np.asarray(rod.rest_positions, dtype=np.float64)
        q = np.asarray(rod.rest_orientation, dtype=np.float64)
        if n < 1:
            raise SetupError(f"rod '{name}' has no segment")
        if x.shape != (n + 1, 3):
            raise SetupError(f"rod '{name}': rest_positions has shape {x.shape}, expected "
                             f"({n + 1}, 3) for {n} bones")
        if q.shape != (n, 4):
            raise SetupError(f"rod '{name}': rest_orientation has shape {q.shape}, expected "
                             f"({n}, 4)")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(q))):
            raise SetupError(f"rod '{name}': rest pose is not finite")
        qn = np.linalg.norm(q, axis=1)
        if np.any(qn < 1e-6):
            j = int(np.flatnonzero(qn < 1e-6)[0])
            raise SetupError(f"rod '{name}', bone '{rod.names[j]}': orientation is zero")
        length = np.linalg.norm(np.diff(x, axis=0), axis=1)
        if np.any(length < 1e-6):
            j = int(np.flatnonzero(length < 1e-6)[0])
            raise SetupError(f"rod '{name}', bone '{rod.names[j]}' has zero length")
        count[s] = n
        positions[s, : n + 1] = x
        positions[s, n + 1:] = x[-1]
        orientation[s, :n] = q / qn[:, None]
        orientation[s, n:] = orientation[s, n - 1]
    seg = np.diff(positions, axis=1)
    rest_length = np.linalg.norm(seg, axis=-1)
    active = np.arange(B)[None, :] < count[:, None]
    rest_length = np.where(active, rest_length, 0.0)
    direction = rotate(conjugate(orientation), seg / np.maximum(rest_length, EPS)[..., None])
    direction = np.where(active[..., None], direction, (0.0, 1.0, 0.0))
    darboux = qmul(conjugate(orientation[:, :-1]), orientation[:, 1:])
    w = np.zeros((S, P))
    w[:, 1:] = active
    # Inverse inertia in quaternion space: a change dq turns by 2 |dq|, so w_q = 1 / (4 I)
    # with I = m l^2 / 12, a thin rod of the segment's unit mass about its centre.
    w_q = np.where(active, 3.0 / np.maximum(rest_length, EPS) ** 2, 0.0)
    colliders = colliders if colliders is not None else ColliderSet.empty()
    K = colliders.count
    mask = (np.ones((K, S), dtype=bool) if collider_mask is None
            else np.asarray(collider_mask, dtype=bool))
    if mask.shape != (K, S):
        raise SetupError(f"collider_mask has shape {mask.shape}, expected {(K, S)}")
    return RodModel(setup_names=tuple(r.setup for r in rods),
                    names=tuple(tuple(r.names) for r in rods), count=count,
                    rest_positions=positions, rest_orientation=orientation,
                    rest_length=rest_length, direction=direction, rest_darboux=darboux, w=w,
                    w_q=w_q, colliders=colliders, collider_mask=mask)


# field -> (kind, allow_inf, minimum, maximum); kinds: "rod" (F, S), "vector" (F, S, 3)
_FIELDS = {
    "stretch_shear_compliance": ("rod", False, 0.0, None),
    "bend_twist_compliance": ("rod", True, 0.0, None),
    "bend_stiffness_axes": ("vector", False, 0.0, None),
    "damping": ("rod", False, 0.0, None),
    "gravity": ("vector", False, None, None),
    "world_motion_fraction": ("rod", False, 0.0, 1.0),
    "wind_velocity": ("vector", False, None, None),
    "drag": ("rod", False, 0.0, None),
    "radius": ("rod", False, 0.0, None),
}

_DEFAULTS = {
    "stretch_shear_compliance": 1e-7,
    "bend_twist_compliance": 1e-3,
    "bend_stiffness_axes": (1.0, 1.0, 1.0),
    "damping": 1.0,
    "gravity": STANDARD_GRAVITY,
    "world_motion_fraction": 0.2,
    "wind_velocity": (0.0, 0.0, 0.0),
    "drag": 0.5,
    "radius": 0.02,
}


@dataclass(frozen=True)
class RodParams:
    """Per-frame rod settings, broadcastable to (F, S) ((F, S, 3) for the vectors)."""

    stretch_shear_compliance: Any
    bend_twist_compliance: Any
    bend_stiffness_axes: Any  # per local axis (x, y, z) multiplier of the bend-twist stiffness
    damping: Any
    gravity: Any
    world_motion_fraction: Any
    wind_velocity: Any
    drag: Any = 0.5
    radius: Any = 0.02

    @classmethod
    def defaults(cls, rods: int, **overrides: Any) -> RodParams:
        unknown = set(overrides) - set(_FIELDS)
        if unknown:
            raise SetupError(f"unknown rod setting(s): {', '.join(sorted(unknown))}")
        values = {}
        for name, (kind, _, _, _) in _FIELDS.items():
            array = np.asarray(overrides.get(name, _DEFAULTS[name]), dtype=np.float64)
            shape = (1, rods, 3) if kind == "vector" else (1, rods)
            values[name] = np.broadcast_to(array, shape).copy() if array.ndim < len(shape) \
                else array
        return cls(**values)

    def replace(self, **changes: Any) -> RodParams:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class RodDrive:
    fps: float
    reference: np.ndarray  # (F, S, P, 3)
    reference_orientation: np.ndarray  # (F, S, B, 4)
    space: np.ndarray  # (F, S, 4, 4)
    collider_matrix: np.ndarray  # (F, K, 4, 4)
    params: RodParams
    # The result's frames (as for cloth and strands: the add-on samples on a grid in seconds
    # and asks for the scene's frames); None: the samples' rate / as many as fit.
    output_fps: float | None = None
    output_frames: int | None = None


@dataclass(frozen=True)
class RodResult:
    positions: np.ndarray  # (F, S, P, 3)
    orientation: np.ndarray  # (F, S, B, 4) unit, sign-continuous per segment over frames
    substeps: int


def _validate(model: RodModel, drive: RodDrive) -> tuple[float, dict[str, np.ndarray]]:
    S, P, B, K = model.rods, model.segments + 1, model.segments, model.colliders.count
    fps = float(drive.fps)
    if not np.isfinite(fps) or fps <= 0:
        raise SetupError(f"fps must be positive and finite, got {drive.fps!r}")
    ref = np.asarray(drive.reference)
    if ref.ndim != 4 or ref.shape[1:] != (S, P, 3) or ref.shape[0] < 1:
        raise SetupError(f"rod reference has shape {ref.shape}, expected (F, {S}, {P}, 3)")
    F = ref.shape[0]
    checks = [("reference_orientation", drive.reference_orientation, (F, S, B, 4)),
              ("space", drive.space, (F, S, 4, 4)),
              ("collider_matrix", drive.collider_matrix, (F, K, 4, 4))]
    for name, value, shape in checks:
        if np.shape(value) != shape:
            raise SetupError(f"rod {name} has shape {np.shape(value)}, expected {shape}")
    for name, value in [("reference", ref), ("reference_orientation",
                                              drive.reference_orientation)]:
        bad = ~np.all(np.isfinite(value), axis=-1)
        if bad.any():
            f, s, j = (int(i) for i in np.argwhere(bad)[0])
            raise SetupError(f"rod '{model.setup_names[s]}': {name} of element {j} at frame "
                             f"index {f} is not finite")
    params = {}
    for name, (kind, allow_inf, low, high) in _FIELDS.items():
        shape = (F, S, 3) if kind == "vector" else (F, S)
        try:
            array = np.broadcast_to(np.asarray(getattr(drive.params, name), dtype=np.float64),
                                    shape)
        except ValueError as exc:
            raise SetupError(f"rod setting '{name}' is not broadcastable to {shape}") from exc
        bad = out_of_range(array, allow_inf=allow_inf, low=low, high=high)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            raise SetupError(f"rod '{model.setup_names[index[1]]}': setting '{name}' is "
                             f"{array[index]!r} at frame index {index[0]}")
        params[name] = array
    return fps, params


class _RodBake:
    def __init__(self, model: RodModel, drive: RodDrive, settings: SolverSettings):
        self.model = model
        self.fps, self.params = _validate(model, drive)
        self.drive = drive
        self.settings = settings
        self.h = float(settings.substep)
        self.reference = np.asarray(drive.reference, dtype=np.float64)
        self.ref_q = _unit(np.asarray(drive.reference_orientation, dtype=np.float64))
        self.F = self.reference.shape[0]
        self.out_fps, self.F_out = check_output(samples=self.F, fps=self.fps,
                                                output_fps=drive.output_fps,
                                                output_frames=drive.output_frames)
        B = model.segments
        # Even/odd colours along the rods (segments j share particle j+1 with segment j+1).
        self.seg_colours = [np.arange(0, B, 2), np.arange(1, B, 2)]
        self.pair_colours = [np.arange(0, B - 1, 2), np.arange(1, B - 1, 2)]
        self.bound = np.maximum(100.0 * model.rest_length.sum(axis=1), DIVERGENCE_MIN_BOUND)
        self.lengths = model.rest_length
        # Each segment's parent share of its inverse mass (0 below the root), for the sweep's
        # velocity: with DFTL's 0.9 instead, a passive rod released level made 3.4-3.9 % of its
        # fall (bending energy counted) at 240-3840 Hz, now 0.01-0.7 %.
        self.share = mass_share(model.w[:, :-1], model.w[:, 1:])[..., None]  # (S, B, 1)
        self._coefficients: tuple[int, dict] = (-1, {})
        # Per sample and collider, once: whether it is a sphere (`_collide` reads the pair of
        # samples around each substep; testing every substep was a fifth of a ribbon's solve).
        cm = np.asarray(drive.collider_matrix, dtype=np.float64)
        self.collider_matrix = cm
        kinds = np.asarray(model.colliders.kind, dtype=np.int64)
        self.similar = np.array([[kinds[k] == ColliderKind.ELLIPSOID and is_similarity(cm[f, k])
                                  for k in range(cm.shape[1])] for f in range(cm.shape[0])],
                                dtype=bool).reshape(cm.shape[:2])
        # Colliders whose normals need the inverse matrix when not a sphere (capsules do not).
        self.inverted = kinds != ColliderKind.CAPSULE

    def coefficients(self, f: int) -> dict[str, np.ndarray]:
        """Per-substep factors of frame f's settings (cached for the frame's substeps)."""
        if self._coefficients[0] == f:
            return self._coefficients[1]
        c = self._coefficients_of(f)
        self._coefficients = (f, c)
        return c

    def _coefficients_of(self, f: int) -> dict[str, np.ndarray]:
        p, h, model = self.params, self.h, self.model
        decay = transcendental.exp(-(p["damping"][f] + p["drag"][f]) * h)  # (S,)
        accel = p["gravity"][f] + p["drag"][f][:, None] * p["wind_velocity"][f]
        axes = p["bend_stiffness_axes"][f]  # (S, 3)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # A tiny multiplier overflows to inf: that axis is free, as with 0.
            bend_at = np.where(axes > 0, p["bend_twist_compliance"][f][:, None] / axes, np.inf)
            bend_at = bend_at / (h * h)
        return {
            "decay_x": decay[:, None, None] * (model.w[..., None] > 0),
            "decay_q": decay[:, None, None],
            "accel_h2": accel[:, None, :] * h * h * (model.w[..., None] > 0),
            "stretch_at": p["stretch_shear_compliance"][f] / (h * h),  # (S,)
            "bend_at": bend_at,  # (S, 3), inf where an axis is free
            "carry": 1.0 - p["world_motion_fraction"][f],
            "radius": np.where(model.w > 0, p["radius"][f][:, None], -np.inf),
        }

    def step(self, x, x_prev, q, q_prev, t_start, t_end, c):
        fps, F = self.fps, self.F
        f, alpha = frame_interval(t_end, fps, F)
        g = min(f + 1, F - 1)
        # Local-space carry of the particles (seed 001 world-motion fraction).
        fs, a_s = frame_interval(t_start, fps, F)
        gs = min(fs + 1, F - 1)
        space = np.asarray(self.drive.space, dtype=np.float64)
        start = space[fs] + a_s * (space[gs] - space[fs])
        end = space[f] + alpha * (space[g] - space[f])
        if not np.array_equal(start, end) and np.any(c["carry"] > 0):
            motion = end @ affine_inverse(start)
            for buf in (x, x_prev):
                moved = np.einsum("sij,spj->spi", motion[:, :3, :3], buf) + motion[:, None, :3, 3]
                buf += c["carry"][:, None, None] * (moved - buf)
        # Verlet for particles and quaternions (per-second damping).
        v = (x - x_prev) * c["decay_x"]
        x_prev[...] = x
        x += v + c["accel_h2"]
        dq = (q - q_prev) * c["decay_q"]
        q_prev[...] = q
        q += dq
        q[...] = _unit(q)
        ref = self.reference[f] + alpha * (self.reference[g] - self.reference[f])
        x[:, 0] = ref[:, 0]
        qf = self.ref_q[f, :, 0]
        root_ref = _unit(qf + alpha * (_sign_align(self.ref_q[g, :, 0], qf) - qf))  # nlerp
        for _ in range(int(self.settings.iterations)):
            for idx in self.seg_colours:
                if idx.size:
                    self._stretch_shear(x, q, idx, c)
            self._bend_root(q, root_ref, c)
            for idx in self.pair_colours:
                if idx.size:
                    self._bend(q, idx, c)
        # Lengths last: bones do not stretch, so the particles are swept root to tip at exact
        # segment length (FTL with a mass-weighted velocity, as the cloth's hard vertical).
        self._follow_the_leader(x, x_prev)
        self._collide(x, x_prev, f, g, alpha, c)

    def _follow_the_leader(self, x, x_prev):
        lengths = self.lengths
        for j in range(self.model.segments):
            top = x[:, j]
            old = x[:, j + 1].copy()
            d = old - top
            length = np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), EPS)
            new = top + d * (lengths[:, j, None] / length)
            moving = self.model.w[:, j + 1, None] > 0
            x[:, j + 1] = np.where(moving, new, old)
            # The velocity of a mass-weighted inelastic impulse along the segment
            # (`core.cloth.constraints.sweep_levels`): both ends' x_prev move by share * move.
            shared = self.share[:, j] * np.where(moving, new - old, 0.0)
            x_prev[:, j] += shared
            x_prev[:, j + 1] += shared

    def _stretch_shear(self, x, q, j, c):
        model = self.model
        w0, w1, wq = model.w[:, j], model.w[:, j + 1], model.w_q[:, j]
        length = self.lengths[:, j]
        qj = q[:, j]
        u = model.direction[:, j]
        C = x[:, j + 1] - x[:, j] - length[..., None] * rotate(qj, u)
        den = w0 + w1 + 4.0 * wq * length ** 2 + c["stretch_at"][:, None] + EPS
        gamma = C / den[..., None]
        x[:, j] += w0[..., None] * gamma
        x[:, j + 1] -= w1[..., None] * gamma
        pure = np.concatenate([np.zeros(gamma.shape[:-1] + (1,)), gamma], axis=-1)
        u_bar = np.concatenate([np.zeros(u.shape[:-1] + (1,)), -u], axis=-1)
        corr = qmul(qmul(pure, qj), u_bar)
        q[:, j] = _unit(qj + (2.0 * wq * length)[..., None] * corr)

    def _darboux_step(self, qa, qb, rest, wa, wb, c):
        omega = qmul(conjugate(qa), qb)
        minus = omega - rest
        plus = omega + rest
        use_plus = np.sum(plus * plus, -1) < np.sum(minus * minus, -1)
        diff = np.where(use_plus[..., None], plus, minus)
        at = c["bend_at"][:, None, :]  # (S, 1, 3)
        # XPBD with lambda = 0 (one pass per substep): dl = -C / (w_a + w_b + at) per axis;
        # a free axis (at = inf) gets no correction.
        with np.errstate(invalid="ignore"):
            den = (wa + wb)[..., None] + at
            scale = np.where(np.isfinite(at), 1.0 / np.maximum(den, EPS), 0.0)
        omega_c = np.concatenate([np.zeros(diff.shape[:-1] + (1,)), diff[..., 1:] * scale],
                                 axis=-1)
        new_a = qa + wa[..., None] * qmul(qb, omega_c)
        new_b = qb - wb[..., None] * qmul(qa, omega_c)
        return _unit(new_a), _unit(new_b)

    def _bend_root(self, q, root_ref, c):
        model = self.model
        wa = np.zeros((model.rods, 1))
        wb = model.w_q[:, :1]
        rest = np.zeros((model.rods, 1, 4))
        rest[..., 0] = 1.0
        _, qb = self._darboux_step(root_ref[:, None], q[:, :1], rest, wa, wb, c)
        q[:, :1] = qb

    def _bend(self, q, j, c):
        model = self.model
        wa, wb = model.w_q[:, j], model.w_q[:, j + 1]
        qa, qb = self._darboux_step(q[:, j], q[:, j + 1], model.rest_darboux[:, j], wa, wb, c)
        q[:, j] = qa
        q[:, j + 1] = qb

    def _collide(self, x, x_prev, f, g, alpha, c):
        model = self.model
        colliders = model.colliders
        if not colliders.count:
            return
        cm = self.collider_matrix
        M_all = lerp_affine(cm[f], cm[g], alpha)  # every collider at once
        similar = self.similar[f] & self.similar[g]
        need = self.inverted & ~similar
        inverse = affine_inverse(M_all) if need.any() else None
        for k in range(colliders.count):
            rods = np.flatnonzero(model.collider_mask[k])
            if rods.size == 0:
                continue
            M = M_all[k]
            xs = x[rods]
            n, sd = shape_normal(int(colliders.kind[k]), xs, M,
                                 None if inverse is None else inverse[k], colliders, k,
                                 similarity=bool(similar[k]))
            pen = np.maximum(c["radius"][rods] - sd, 0.0)
            if not pen.any():
                continue
            xs += n * pen[..., None]
            if colliders.friction[k] > 0:
                apply_friction(xs, x_prev[rods], n, pen, float(colliders.friction[k]))
            x[rods] = xs

    def _start_outside(self, x, x_prev, c):
        """Put the start pose (at rest: `x_prev` equals `x`) out of the colliders as a pose,
        not as motion: the colliders, then the lengths swept root to tip, the colliders last,
        up to START_OUTSIDE_ROUNDS times, and `x_prev` = `x` (the cloth's and strands' start
        does the same, `solver._Bake._start_outside`). A rod drawn 3 cm into a ball was pushed
        out in its first substep as velocity and flew off at 12 m/s; now 1 m/s, its frames and
        bending springing back to the pushed segments. A start clear of the colliders is
        untouched (the same bits)."""
        if not self.model.colliders.count:
            return
        for r in range(START_OUTSIDE_ROUNDS + 1):
            np.copyto(x_prev, x)  # no tangential motion for the friction to hold back
            before = x.copy()
            self._collide(x, x_prev, 0, 0, 0.0, c)
            if r == START_OUTSIDE_ROUNDS or np.array_equal(x, before):
                break
            self._follow_the_leader(x, x_prev)
        np.copyto(x_prev, x)

    def run(self):
        model, h, F, fps = self.model, self.h, self.F, self.fps
        F_out = self.F_out
        x = self.reference[0].copy()
        x_prev = x.copy()
        q = self.ref_q[0].copy()
        q_prev = q.copy()
        c0 = self.coefficients(0)
        self._start_outside(x, x_prev, c0)
        x_prev += 0.5 * c0["accel_h2"]
        positions = self.positions = np.empty((F_out,) + x.shape)
        orientation = self.orientation = np.empty((F_out,) + q.shape)
        positions[0], orientation[0] = x, q
        yield 1, F_out
        n = 0
        substeps = 0
        # The state one substep before the last off-grid frame time crossed: it stays valid
        # while no substep runs (a Substep Rate under the frame rate), see `solver._Bake.run`.
        before = None
        for i in range(1, F_out):
            T = i / self.out_fps
            while n * h < T - _TIME_EPS:
                t0, t1 = n * h, (n + 1) * h
                if t1 > T + _TIME_EPS:
                    before = (x.copy(), q.copy())
                c = self.coefficients(frame_interval(t1, fps, F)[0])
                self.step(x, x_prev, q, q_prev, t0, t1, c)
                n += 1
                substeps += 1
            if before is not None and abs(n * h - T) > _TIME_EPS:
                w = (T - (n - 1) * h) / h
                positions[i] = before[0] + w * (x - before[0])
                orientation[i] = _unit(before[1] + w * (_sign_align(q, before[1]) - before[1]))
            else:
                positions[i], orientation[i] = x, q
            reference = interpolate(self.reference, *frame_interval(T, fps, F))
            positions[i, :, 0] = reference[:, 0]
            orientation[i] = _sign_align(orientation[i], orientation[i - 1])
            distance = np.linalg.norm(positions[i] - reference, axis=-1).max(axis=1)
            bad = ~(distance <= self.bound) | ~np.all(np.isfinite(orientation[i]), axis=(1, 2))
            if bad.any():
                s = int(np.flatnonzero(bad)[0])
                raise DivergenceError(model.setup_names[s], i, "rod left its reference")
            yield i + 1, F_out
        self.result = RodResult(positions=positions, orientation=orientation, substeps=substeps)


def _sign_align(q: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """q or -q, whichever is closer to `reference` (same rotation, continuous sign)."""
    return np.where(np.sum(q * reference, axis=-1, keepdims=True) < 0, -q, q)


class RodBakeJob(FrameJob):
    """Iterator over a rod bake: yields (frames_done, total); `result` once exhausted."""

    def __init__(self, model: RodModel, drive: RodDrive, settings: SolverSettings):
        bake = _RodBake(model, drive, settings)
        super().__init__(bake, bake.run(), bake.F_out)


class RodStream(FrameStream):
    """A rod bake one output frame at a time (the live preview): `step()` solves the next
    frame and returns its particles (S, B + 1, 3) and orientations (S, B, 4), the bake's frame
    bit for bit (the bake's own loop); `result()` once the last frame is solved."""

    def __init__(self, model: RodModel, drive: RodDrive, settings: SolverSettings | None = None):
        bake = _RodBake(model, drive, settings if settings is not None else SolverSettings())
        super().__init__(bake, bake.run(), bake.F_out)

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        i = self.advance()
        return self._runner.positions[i], self._runner.orientation[i]


# Rounds of colliders and lengths that put a start pose out of the colliders
# (`_RodBake._start_outside`), the colliders last.
START_OUTSIDE_ROUNDS = 8


def bake_rods_steps(model: RodModel, drive: RodDrive,
                    settings: SolverSettings | None = None) -> RodBakeJob:
    return RodBakeJob(model, drive, settings if settings is not None else SolverSettings())


def bake_rods(model: RodModel, drive: RodDrive,
              settings: SolverSettings | None = None) -> RodResult:
    return run_job(bake_rods_steps(model, drive, settings))
