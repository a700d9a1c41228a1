"""Ragdoll rest data (`RagdollRest`, one per armature) and the solver model built from it.

A body is a capsule in the bone's frame at its head (scale removed): local +Y runs along the
bone, the segment is (0, 0, 0)...(0, length, 0) with `radius`. The solver keeps every body at its
centre of mass (the middle of the segment) with its principal inertia in the body frame
(Müller et al. 2020 evaluate inertia, offsets and corrections in the body rest frame), so the
model stores the capsule's inertia about its centre and the joint anchors relative to centres.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from ..colliders import ColliderSet
from ..errors import SetupError


class BodyMode(IntEnum):
    KINEMATIC = 0  # follows the animation exactly (seed 004: hands on a ledge)
    DRIVEN = 1  # simulated, orientation motors toward the animation's local rotation
    FREE = 2  # simulated, no motors or target constraints (a plain ragdoll)


@dataclass(frozen=True)
class RagdollRest:
    """One ragdoll (an armature's chosen bones) at bind pose; see the module docstring."""

    setup: str
    names: tuple[str, ...]
    parent: np.ndarray  # (N,) int; -1 for the root
    rest_matrix: np.ndarray  # (N, 4, 4) world body frames at bind, metres, no scale
    length: np.ndarray  # (N,) m
    radius: np.ndarray  # (N,) m
    mass: np.ndarray  # (N,) kg
    swing_limit: np.ndarray  # (N, 2) rad about local X and Z; inf = free
    twist_limit: np.ndarray  # (N, 2) rad (min, max) about local Y
    carrier: tuple[int, int] | None = None  # (ragdoll index, body index) the root hangs on
    # Its bodies collide with those of the other ragdolls that say so too (in one bake).
    collide_with_others: bool = False
    # (N, 2) rad: centre of each swing ellipse (a one-sided hinge, limits.py); None = zero
    swing_center: np.ndarray | None = None


def capsule_inertia(mass: np.ndarray, length: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """Principal moments (N, 3) about the centre of a solid capsule along local Y.

    Uniform density: a cylinder (height `length`) plus two hemispheres. About the axis:
    m_c r²/2 + m_s 2r²/5; across it: m_c (L²/12 + r²/4) + m_s (2r²/5 + L²/4 + 3 L r / 8), where
    m_c, m_s are the cylinder's and the two hemispheres' shares of the mass by volume.
    """
    m, L, r = (np.asarray(a, dtype=np.float64) for a in (mass, length, radius))
    v_cyl = np.pi * r * r * L
    v_sph = 4.0 / 3.0 * np.pi * r**3
    total = np.maximum(v_cyl + v_sph, 1e-300)
    m_c, m_s = m * v_cyl / total, m * v_sph / total
    axial = m_c * r * r / 2.0 + m_s * 2.0 * r * r / 5.0
    across = m_c * (L * L / 12.0 + r * r / 4.0) + m_s * (2.0 * r * r / 5.0 + L * L / 4.0
                                                        + 3.0 * L * r / 8.0)
    return np.stack((across, axial, across), axis=-1)


def subtree_inertia(*, parent: np.ndarray, rest_matrix: np.ndarray, length: np.ndarray,
                    mass: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """Moment of inertia (N,) of each body's subtree about its joint (the head) for a swing.

    Σ over the subtree of (max principal moment of body i + m_i |c_i - head|²): the parallel-axis
    moment about an axis through the joint perpendicular to the lever, the one gravity and
    swings act about (an isotropic average would make swings softer than the nominal frequency
    by a third, enough to let an upright head fall over). Motors normalise their stiffness by it
    so that a strength means the same joint frequency for a hand and for a shoulder carrying the
    whole arm; twists, about the bone axis, come out stiffer.
    """
    N = len(parent)
    centre = rest_matrix[:, :3, 3] + rest_matrix[:, :3, 1] * (0.5 * length)[:, None]
    head = rest_matrix[:, :3, 3]
    inside = np.zeros((N, N), dtype=bool)  # inside[j, i]: body i is in the subtree of j
    current = np.arange(N)
    alive = np.ones(N, dtype=bool)
    while alive.any():  # loop over tree depth
        inside[current[alive], np.flatnonzero(alive)] = True
        nxt = np.where(alive, parent[current], -1)
        alive = nxt >= 0
        current = np.maximum(nxt, 0)
    d2 = np.sum((centre[None, :, :] - head[:, None, :]) ** 2, axis=-1)  # (j, i)
    own = inertia.max(axis=1)
    return np.sum(inside * (own[None, :] + mass[None, :] * d2), axis=1)


@dataclass(frozen=True)
class RagdollModel:
    """All ragdolls' bodies concatenated (ragdoll r owns bodies body_offset[r]:body_offset[r+1])."""

    n_bodies: int
    n_ragdolls: int
    names: tuple[str, ...]  # bone name per body
    setup_names: tuple[str, ...]  # per ragdoll
    ragdoll_of_body: np.ndarray  # (N,) int
    body_offset: np.ndarray  # (R + 1,) int
    parent: np.ndarray  # (N,) global body index of the parent, -1 for roots
    root: np.ndarray  # (R,) global index of each ragdoll's root body
    depth: np.ndarray  # (N,) 0 for roots
    rest_matrix: np.ndarray  # (N, 4, 4)
    length: np.ndarray  # (N,)
    radius: np.ndarray  # (N,)
    mass: np.ndarray  # (N,)
    inertia: np.ndarray  # (N, 3) principal moments about the centre (body frame)
    joint_inertia: np.ndarray  # (N,) kg m²: the subtree below each joint about the joint (rest)
    swing_limit: np.ndarray  # (N, 2)
    twist_limit: np.ndarray  # (N, 2)
    swing_center: np.ndarray  # (N, 2)
    carrier: np.ndarray  # (R, 2) int: (ragdoll, global body) carrying each ragdoll, -1 = none
    level: np.ndarray  # (R,) int: solve order (carriers first), 0 = not carried
    colliders: ColliderSet
    collider_mask: np.ndarray  # (N, K) bool: body collides with collider
    neighbours: np.ndarray  # (P, 2) int: body pairs joined by a joint (never collide)
    collide_with_others: np.ndarray  # (R,) bool: collides with the other ragdolls that do

    @property
    def n_levels(self) -> int:
        return int(self.level.max()) + 1 if self.n_ragdolls else 0

    def where(self, body: int) -> str:
        """'setup' bone 'name' of a global body index, for error messages."""
        r = int(self.ragdoll_of_body[body])
        return f"ragdoll '{self.setup_names[r]}' bone '{self.names[body]}'"


def _center(rest: RagdollRest) -> np.ndarray:
    """(N, 2) swing-ellipse centres: zero when not given, and on free (infinite) axes."""
    n = len(rest.names)
    if rest.swing_center is None:
        return np.zeros((n, 2))
    center = np.asarray(rest.swing_center, dtype=np.float64)
    if center.shape != (n, 2):
        return center  # _check_rest names the wrong shape
    return np.where(np.isfinite(np.asarray(rest.swing_limit, float)), center, 0.0)


def _check_rest(rest: RagdollRest) -> None:
    n = len(rest.names)
    where = f"ragdoll '{rest.setup}'"
    if n == 0:
        raise SetupError(f"{where} has no bodies")
    shapes = {
        "parent": ((n,), rest.parent), "rest_matrix": ((n, 4, 4), rest.rest_matrix),
        "length": ((n,), rest.length), "radius": ((n,), rest.radius), "mass": ((n,), rest.mass),
        "swing_limit": ((n, 2), rest.swing_limit), "twist_limit": ((n, 2), rest.twist_limit),
        "swing_center": ((n, 2), _center(rest)),
    }
    for field, (shape, value) in shapes.items():
        if np.shape(value) != shape:
            raise SetupError(f"{where}: '{field}' has shape {np.shape(value)}, expected {shape}")
    for field in ("rest_matrix", "length", "radius", "mass"):
        if not np.all(np.isfinite(getattr(rest, field))):
            raise SetupError(f"{where}: '{field}' is not finite")
    if not np.all(np.isfinite(_center(rest))):
        raise SetupError(f"{where}: 'swing_center' is not finite")
    # Every check vectorised over the bodies; the message names the first offending bone.
    parent = np.asarray(rest.parent)
    index = np.arange(n)
    twist, swing = np.asarray(rest.twist_limit, float), np.asarray(rest.swing_limit, float)
    checks = (
        ((parent >= index) | (parent < -1),
         lambda i: f"its parent (index {parent[i]}) is not a body listed before it (choose the "
                   "parent bone too, or make this the root)"),
        ((parent == -1) & (index != 0),
         lambda i: "has no parent body; only the first body may be the root"),
        (~(rest.length > 0), lambda i: f"has zero length ({rest.length[i]:g} m)"),
        (~(rest.radius > 0), lambda i: f"has radius {rest.radius[i]:g} m; it must be positive"),
        (~(rest.mass > 0),
         lambda i: f"has mass {rest.mass[i]:g} kg; it must be positive (check its density)"),
        (np.isnan(twist).any(axis=1) | (twist[:, 0] > twist[:, 1]),
         lambda i: f"twist limit min {twist[i, 0]:g} > max {twist[i, 1]:g}"),
        (np.isnan(swing).any(axis=1) | (swing < 0).any(axis=1),
         lambda i: f"swing limits {tuple(swing[i])} must be >= 0"),
    )
    for bad, message in checks:
        if np.any(bad):
            i = int(np.argmax(bad))
            raise SetupError(f"{where} bone '{rest.names[i]}': {message(i)}")
    if int(rest.parent[0]) != -1:
        raise SetupError(f"{where}: the first body '{rest.names[0]}' must be the root (parent -1)")


def _levels(ragdolls: Sequence[RagdollRest]) -> np.ndarray:
    """Carrier depth of every ragdoll; SetupError for unknown carriers and cycles."""
    R = len(ragdolls)
    level = np.full(R, -1, dtype=np.int64)
    for r in range(R):
        seen = [r]
        current = r
        while True:
            carrier = ragdolls[current].carrier
            if carrier is None:
                break
            c, b = int(carrier[0]), int(carrier[1])
            if not 0 <= c < R or not 0 <= b < len(ragdolls[c].names):
                raise SetupError(f"ragdoll '{ragdolls[current].setup}': carrier {carrier} "
                                 "does not exist")
            if c in seen:
                names = " -> ".join(ragdolls[s].setup for s in seen + [c])
                raise SetupError(f"ragdoll carriers form a cycle: {names}")
            seen.append(c)
            current = c
        level[r] = len(seen) - 1
    return level


def build_ragdoll_model(*, ragdolls: Sequence[RagdollRest], colliders: ColliderSet | None = None,
                        collider_mask: np.ndarray | None = None) -> RagdollModel:
    """Validate and concatenate ragdolls; inertia from the capsules; joint neighbour pairs."""
    ragdolls = tuple(ragdolls)
    for rest in ragdolls:
        _check_rest(rest)
    colliders = colliders if colliders is not None else ColliderSet.empty()
    colliders.validate()
    level = _levels(ragdolls)
    counts = np.array([len(r.names) for r in ragdolls], dtype=np.int64)
    offset = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    N = int(offset[-1])
    R = len(ragdolls)
    parent = np.full(N, -1, dtype=np.int64)
    depth = np.zeros(N, dtype=np.int64)
    for r, rest in enumerate(ragdolls):
        local = np.asarray(rest.parent, dtype=np.int64)
        parent[offset[r]:offset[r + 1]] = np.where(local >= 0, local + offset[r], -1)
    up = parent.copy()
    while np.any(up >= 0):  # loop over tree depth: count the ancestors of every body
        depth += up >= 0
        up = np.where(up >= 0, parent[np.maximum(up, 0)], -1)

    def cat(field: str) -> np.ndarray:
        if not R:
            return np.zeros((0,))
        return np.concatenate([np.asarray(getattr(r, field), dtype=np.float64)
                               for r in ragdolls])

    mass, length, radius = cat("mass"), cat("length"), cat("radius")
    carrier = np.full((R, 2), -1, dtype=np.int64)
    for r, rest in enumerate(ragdolls):
        if rest.carrier is not None:
            c, b = int(rest.carrier[0]), int(rest.carrier[1])
            carrier[r] = (c, offset[c] + b)
    K = colliders.count
    if collider_mask is None:
        mask = np.ones((N, K), dtype=bool)
    else:
        mask = np.asarray(collider_mask, dtype=bool)
        if mask.shape != (N, K):
            raise SetupError(f"collider_mask has shape {mask.shape}, expected {(N, K)}")
    children = np.flatnonzero(parent >= 0)
    rest_matrix = cat("rest_matrix").reshape(N, 4, 4) if R else np.zeros((0, 4, 4))
    inertia = capsule_inertia(mass, length, radius)
    return RagdollModel(
        n_bodies=N, n_ragdolls=R,
        names=tuple(n for r in ragdolls for n in r.names),
        setup_names=tuple(r.setup for r in ragdolls),
        ragdoll_of_body=np.repeat(np.arange(R), counts),
        body_offset=offset, parent=parent, root=offset[:-1].copy(), depth=depth,
        rest_matrix=rest_matrix, length=length, radius=radius, mass=mass, inertia=inertia,
        joint_inertia=subtree_inertia(parent=parent, rest_matrix=rest_matrix, length=length,
                                      mass=mass, inertia=inertia),
        swing_limit=cat("swing_limit").reshape(N, 2) if R else np.zeros((0, 2)),
        twist_limit=cat("twist_limit").reshape(N, 2) if R else np.zeros((0, 2)),
        swing_center=(np.concatenate([_center(r) for r in ragdolls]).reshape(N, 2) if R
                      else np.zeros((0, 2))),
        carrier=carrier, level=level, colliders=colliders, collider_mask=mask,
        neighbours=np.stack((children, parent[children]), axis=-1),
        collide_with_others=np.array([bool(r.collide_with_others) for r in ragdolls],
                                     dtype=bool),
    )
