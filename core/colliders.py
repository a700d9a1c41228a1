"""Collider shapes and the vectorised particle projection against them.

Shapes live in the collider's local space; the drive gives each collider's world matrix per frame
(scale included). Every shape is reduced to the same question, answered for all particles at
once: "what is the outward unit normal `n` and the signed distance `sd` of the particle centre
from the surface along `n`?" The push is then `x += n * max(radius - sd, 0)`.

For convex shapes `n` is the normal of a supporting plane through the projected surface point,
so the true distance to the shape is at least `sd`; after the push every particle is at least its
radius away from the surface (up to rounding).

Friction is position based (Macklin et al. 2014, "Unified particle physics"): on contact, the
tangential part of the substep displacement `x - x_prev` is removed, entirely when it is below
`friction * penetration` (static, Coulomb cone) and by `friction * penetration` otherwise.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .affine import inverse_affine
from .errors import SetupError
from .numpy_calls import einsum, where

_EPS = 1e-12
# The shortest tangential slide `apply_friction` divides by (its Python-float twin in
# strands.solver reads this one, so both clamp alike).
SLIDE_EPS = 1e-12


class ColliderKind(enum.IntEnum):
    ELLIPSOID = 0
    CAPSULE = 1
    BOX = 2
    PLANE = 3


@dataclass(frozen=True)
class ColliderSet:
    """K collider shapes (local space); see docs/internals.md."""

    kind: np.ndarray  # (K,) int
    size: np.ndarray  # (K,)
    radius_a: np.ndarray  # (K,)
    radius_b: np.ndarray  # (K,)
    friction: np.ndarray  # (K,)
    names: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.names)

    @classmethod
    def empty(cls) -> ColliderSet:
        zero = np.zeros(0)
        return cls(np.zeros(0, dtype=np.int64), zero, zero, zero, zero, ())

    @classmethod
    def create(
        cls,
        *,
        names: Sequence[str],
        kind: Sequence[int],
        size: Sequence[float],
        radius_a: Sequence[float] | None = None,
        radius_b: Sequence[float] | None = None,
        friction: Sequence[float] | None = None,
    ) -> ColliderSet:
        """Build and validate a set. `radius_a/b` only matter for capsules (default 0)."""
        names = tuple(str(n) for n in names)
        K = len(names)

        def column(values, default: float, field: str) -> np.ndarray:
            if values is None:
                return np.full(K, default, dtype=np.float64)
            array = np.asarray(values, dtype=np.float64).reshape(-1)
            if array.shape != (K,):
                raise SetupError(
                    f"collider field '{field}' has {array.size} values for {K} colliders"
                )
            return array.copy()

        kinds = np.asarray(kind).reshape(-1)
        if kinds.shape != (K,):
            raise SetupError(f"collider field 'kind' has {kinds.size} values for {K} colliders")
        valid = {int(k) for k in ColliderKind}
        for i, k in enumerate(kinds):
            if int(k) != k or int(k) not in valid:
                raise SetupError(f"collider '{names[i]}' has an unknown kind {k!r}")
        result = cls(
            kind=kinds.astype(np.int64),
            size=column(size, 0.0, "size"),
            radius_a=column(radius_a, 0.0, "radius_a"),
            radius_b=column(radius_b, 0.0, "radius_b"),
            friction=column(friction, 0.0, "friction"),
            names=names,
        )
        result.validate()
        return result

    def validate(self) -> None:
        """Raise `SetupError` naming the collider for a non-finite or non-positive size."""
        for i, name in enumerate(self.names):
            kind = ColliderKind(int(self.kind[i]))
            values = {
                "size": self.size[i],
                "radius_a": self.radius_a[i],
                "radius_b": self.radius_b[i],
                "friction": self.friction[i],
            }
            for field, value in values.items():
                if not np.isfinite(value):
                    raise SetupError(f"collider '{name}': {field} is {value!r}, must be finite")
            if self.friction[i] < 0:
                raise SetupError(f"collider '{name}': friction {self.friction[i]:g} is negative")
            if kind in (ColliderKind.ELLIPSOID, ColliderKind.BOX) and self.size[i] <= 0:
                raise SetupError(
                    f"collider '{name}' ({kind.name.lower()}) has size {self.size[i]:g}; "
                    "it must be positive"
                )
            if kind == ColliderKind.CAPSULE:
                if self.size[i] < 0:
                    raise SetupError(f"collider '{name}' (capsule) has negative half-length")
                if self.radius_a[i] <= 0 or self.radius_b[i] <= 0:
                    raise SetupError(
                        f"collider '{name}' (capsule) has radii {self.radius_a[i]:g}, "
                        f"{self.radius_b[i]:g}; both must be positive"
                    )


# --------------------------------------------------------------------------------------------
# Per-substep collider frames. The solver interpolates the matrices per substep (so a fast
# collider sweeps through the substeps of a frame instead of jumping) and hands each shape
# function the world matrix `M` (4x4) and its inverse.


# Relative tolerance of `is_similarity`. Blender hands over float32 matrices: a bone-parented
# sphere's rotation is orthonormal only to float32 rounding (its Gram matrix off by up to 8e-8
# of the scale² in the ponytail sample, a quarter of its frames), and a 1e-9 test sent those
# spheres down the general ellipsoid path (an inverse and a transform per substep, 20 % of that
# sample's solve) for a shape that differs from the sphere by 5e-7 of its radius at most.
SIMILARITY_TOLERANCE = 1e-6


def is_similarity(matrix: np.ndarray, *, tol: float = SIMILARITY_TOLERANCE) -> bool:
    """True when the 3x3 part is a uniform scale times a rotation (a sphere stays a sphere), up
    to `tol` of the scale² in its Gram matrix (float32 rounding)."""
    A = np.asarray(matrix, dtype=np.float64)[:3, :3]
    gram = A.T @ A
    scale2 = np.trace(gram) / 3.0
    return bool(np.max(np.abs(gram - scale2 * np.eye(3))) <= tol * max(scale2, _EPS))


def _safe_normalise(v: np.ndarray, length: np.ndarray) -> None:
    """Normalise `v` (..., 3) in place given its length; zero vectors become +Z."""
    degenerate = length < _EPS
    np.maximum(length, _EPS, out=length)
    v /= length[..., None]
    if degenerate.any():
        v[degenerate] = (0.0, 0.0, 1.0)


def sphere_normal(x: np.ndarray, center: np.ndarray, world_radius: float):
    """Uniformly scaled sphere: exact normal and signed distance."""
    n = x - center
    length = np.sqrt(einsum("...k,...k->...", n, n))
    sd = length - world_radius
    _safe_normalise(n, length)
    return n, sd


def ellipsoid_normal(x: np.ndarray, M: np.ndarray, Minv: np.ndarray, size: float):
    """Sphere of radius `size` under an arbitrary (non-uniformly scaled) world matrix.

    Radial projection in the local unit space gives a surface point `p`; the world normal there is
    `Minv^T s` (gradient of |Minv x|); `sd` is the distance to that tangent plane (seed 001).
    """
    u = x @ Minv[:3, :3].T + Minv[:3, 3]
    u /= size
    length = np.sqrt(einsum("...k,...k->...", u, u))
    _safe_normalise(u, length)  # u is now the unit-sphere point s
    p = (u * size) @ M[:3, :3].T + M[:3, 3]
    n = u @ Minv[:3, :3]  # (Minv^T s) as row vectors
    _safe_normalise(n, np.sqrt(einsum("...k,...k->...", n, n)))
    sd = einsum("...k,...k->...", x - p, n)
    return n, sd


def capsule_ends(M: np.ndarray, half_length: float, radius_a: float, radius_b: float):
    """World end centres A, B (3,), their radii ra, rb and the axis length L of a capsule with
    world matrix `M`: ends at local (0, 0, ∓half_length), radii scaled by the mean length of
    the local X and Y axes."""
    A = M[:3, :3] @ np.array([0.0, 0.0, -half_length]) + M[:3, 3]
    B = M[:3, :3] @ np.array([0.0, 0.0, half_length]) + M[:3, 3]
    radial_scale = 0.5 * (np.linalg.norm(M[:3, 0]) + np.linalg.norm(M[:3, 1]))
    return A, B, radius_a * radial_scale, radius_b * radial_scale, float(np.linalg.norm(B - A))


def capsule_normal(x: np.ndarray, M: np.ndarray, half_length: float, radius_a: float,
                   radius_b: float):
    """Tapered capsule (convex hull of two spheres), exact distance ("round cone").

    Ends at local (0, 0, -half_length) with radius_a and (0, 0, +half_length) with radius_b; world
    radii are scaled by the mean length of the local X and Y axes.
    """
    A, B, ra, rb, L = capsule_ends(M, half_length, radius_a, radius_b)
    axis = B - A
    if L < _EPS or abs(ra - rb) >= L:
        # One sphere contains the other (or no axis): the capsule is the bigger sphere.
        center, r = (A, ra) if ra >= rb else (B, rb)
        return sphere_normal(x, center, r)
    axis = axis / L
    rel = x - A
    y = rel @ axis  # axial coordinate
    radial = rel - y[..., None] * axis
    rho = np.sqrt(einsum("...k,...k->...", radial, radial))
    _safe_normalise_perp(radial, rho, axis)
    # 2D problem in (rho, y): sides tangent to both circles, sin(phi) = (ra - rb) / L.
    b = (ra - rb) / L
    a = np.sqrt(1.0 - b * b)
    k = a * y - b * rho  # coordinate along the side line
    n = np.empty_like(x)
    sd = np.empty(x.shape[:-1])
    side = (k >= 0.0) & (k <= a * L)
    # Cone side: normal (a * radial_dir + b * axis), distance rho*a + y*b - ra.
    n[...] = a * radial + b * axis
    sd[...] = a * rho + b * y - ra
    low = k < 0.0
    if np.any(low):
        na, sda = sphere_normal(x, A, ra)
        n[low], sd[low] = na[low], sda[low]
    high = k > a * L
    if np.any(high):
        nb, sdb = sphere_normal(x, B, rb)
        n[high], sd[high] = nb[high], sdb[high]
    del side
    return n, sd


def _safe_normalise_perp(radial: np.ndarray, rho: np.ndarray, axis: np.ndarray) -> None:
    """Normalise the radial direction; on the axis pick any direction perpendicular to it."""
    degenerate = rho < _EPS
    np.maximum(rho, _EPS, out=rho)
    radial /= rho[..., None]
    if np.any(degenerate):
        helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        perp = np.cross(axis, helper)
        radial[degenerate] = perp / np.linalg.norm(perp)
        rho[degenerate] = 0.0


def box_normal(x: np.ndarray, M: np.ndarray, Minv: np.ndarray, half_extent: float):
    """Box with half-extents `half_extent` along each local axis.

    Outside: closest point in local space mapped to world, normal from it to the particle.
    Inside: out through the face nearest in world units (face normal `Minv^T e`).
    Few NumPy calls, because a ragdoll meets its boxes tens of times per substep (a stumble
    over two steps into a wall spent a fifth of its bake here): no reduction along the short
    last axis, the inside branch only on the points inside, and NumPy's C functions past
    their Python wrappers (`numpy_calls`; `argmin`, `nonzero` as methods).
    """
    local = x @ Minv[:3, :3].T + Minv[:3, 3]
    absolute = np.abs(local)
    outside = absolute[..., 0] > half_extent
    outside |= absolute[..., 1] > half_extent
    outside |= absolute[..., 2] > half_extent
    surface_local = np.minimum(np.maximum(local, -half_extent), half_extent)  # clamped
    inside = (~outside).ravel().nonzero()[0]  # (np.flatnonzero's own steps)
    if inside.size:
        A, B = M[:3, :3], Minv[:3, :3]
        scale = np.sqrt(np.add.reduce(A * A, axis=0))  # world length of each local axis
        point = local.reshape(-1, 3)[inside]
        face_axis = ((half_extent - absolute.reshape(-1, 3)[inside]) * scale).argmin(axis=-1)
        rows = np.arange(inside.size)
        positive = point[rows, face_axis] >= 0
        point[rows, face_axis] = where(positive, half_extent, -half_extent)
        surface_local.reshape(-1, 3)[inside] = point
        face_normals = B / np.sqrt(np.add.reduce(B * B, axis=1))[:, None]  # rows
        facing = face_normals[face_axis]
        n_inside = where(positive[:, None], facing, -facing)
    offset = x - (surface_local @ M[:3, :3].T + M[:3, 3])
    n = offset.copy()
    _safe_normalise(n, np.sqrt(einsum("...k,...k->...", n, n)))
    if inside.size:
        n.reshape(-1, 3)[inside] = n_inside
    sd = einsum("...k,...k->...", offset, n)
    return n, sd


def plane_normal(x: np.ndarray, M: np.ndarray, Minv: np.ndarray):
    """Plane through the local origin; local +Z is outside. World normal is `Minv^T e_z`."""
    n = Minv[2, :3] / np.linalg.norm(Minv[2, :3])
    sd = x @ n - float(n @ M[:3, 3])
    return np.broadcast_to(n, x.shape), sd


def shape_normal(kind: int, x: np.ndarray, M: np.ndarray, Minv: np.ndarray, colliders: ColliderSet,
                 index: int, *, similarity: bool = False):
    """Dispatch to the shape function of collider `index` (`similarity`: sphere fast path)."""
    size = float(colliders.size[index])
    if kind == ColliderKind.ELLIPSOID:
        if similarity:
            radius = size * float(np.linalg.norm(M[:3, 0]))
            return sphere_normal(x, M[:3, 3], radius)
        return ellipsoid_normal(x, M, Minv, size)
    if kind == ColliderKind.CAPSULE:
        return capsule_normal(x, M, size, float(colliders.radius_a[index]),
                              float(colliders.radius_b[index]))
    if kind == ColliderKind.BOX:
        return box_normal(x, M, Minv, size)
    return plane_normal(x, M, Minv)


def push_out(x: np.ndarray, x_prev: np.ndarray, n: np.ndarray, sd: np.ndarray,
             radius: np.ndarray, friction: float, surface: np.ndarray | None = None) -> bool:
    """Move particles out to `radius` along `n` and apply position-based Coulomb friction;
    whether a particle was inside.

    `radius` is -inf for particles that must not move (kinematic, padding), which makes their
    penetration -inf and the correction zero. `surface`: see `apply_friction`.
    """
    penetration = radius - sd
    np.maximum(penetration, 0.0, out=penetration)
    if not penetration.max(initial=0.0) > 0.0:
        return False
    x += n * penetration[..., None]
    if friction > 0.0:
        apply_friction(x, x_prev, n, penetration, friction, surface)
    return True


def surface_motion(start: np.ndarray, end: np.ndarray, end_inverse: np.ndarray | None = None
                   ) -> np.ndarray | None:
    """The affine map (4, 4) taking a point of a collider at the end of a substep to where that
    point of the collider was at its start (start @ end⁻¹), None when it did not move.
    `end_inverse`: end⁻¹ when the caller has it."""
    # Python's float == is np.array_equal's (-0.0 equals 0.0, NaN equals nothing) at a quarter
    # of its cost, which a small rig paid twice a substep per collider.
    if start.tolist() == end.tolist():
        return None
    if end_inverse is None:
        end_inverse = inverse_affine(end[None])[0]
    return start @ end_inverse


def apply_friction(x: np.ndarray, x_prev: np.ndarray, n: np.ndarray, penetration: np.ndarray,
                   friction: float, surface: np.ndarray | None = None) -> None:
    """Remove the tangential substep displacement up to `friction * penetration` (static when
    it is smaller: the Coulomb cone in position form). `x`, `x_prev`, `n` are (..., 3).

    `surface` (`surface_motion`): the collider moved during the substep; the displacement is
    then taken relative to its surface (from the surface point's start position), so a moving
    collider drags what rests on it (Coulomb friction acts on the relative velocity).

    Written out without a matrix product or einsum (whose summation order is the library's),
    each sum in a fixed order, ((a + b) + c) + d: the small rigs' Python-float sphere pass
    (`strands.solver._push_out_of_sphere_scalar`) repeats it operation for operation."""
    if surface is None:
        moved = x
    else:
        R, t = surface[:3, :3], surface[:3, 3]
        moved = x[..., 0:1] * R[:, 0] + x[..., 1:2] * R[:, 1] + x[..., 2:3] * R[:, 2] + t
    disp = moved - x_prev
    along = disp * n
    normal = along[..., 0] + along[..., 1] + along[..., 2]
    tangential = disp - n * normal[..., None]
    square = tangential * tangential
    t_len = np.sqrt(square[..., 0] + square[..., 1] + square[..., 2])
    np.maximum(t_len, SLIDE_EPS, out=t_len)
    fraction = np.minimum(friction * penetration / t_len, 1.0)
    x -= tangential * fraction[..., None]


# A collider matrix whose 3×3 determinant is at or below this has no inside (mirrored or collapsed).
MIN_DETERMINANT = 1e-12


def check_collider_matrix(collider_matrix, frames: int, names) -> np.ndarray:
    """The colliders' (F, K, 4, 4) world matrices as float64, checked: shape, finite, and a
    positive scale (a mirrored or collapsed collider has no inside)."""
    K = len(names)
    colliders = np.asarray(collider_matrix, dtype=np.float64)
    if colliders.shape != (frames, K, 4, 4):
        raise SetupError(f"collider_matrix has shape {colliders.shape}, expected "
                         f"{(frames, K, 4, 4)}")
    if K:
        finite = np.all(np.isfinite(colliders), axis=(2, 3))
        if not np.all(finite):
            f, k = (int(i) for i in np.argwhere(~finite)[0])
            raise SetupError(f"collider '{names[k]}': matrix at frame index {f} is not finite")
        det = np.linalg.det(colliders[..., :3, :3])
        if np.any(det <= MIN_DETERMINANT):
            f, k = (int(i) for i in np.argwhere(det <= MIN_DETERMINANT)[0])
            raise SetupError(f"collider '{names[k]}' has a zero or negative "
                             f"scale at frame index {f} (determinant {det[f, k]:.3g})")
    return colliders
