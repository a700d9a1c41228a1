"""Capsules fitted to a body from its skin weights, so an artist gets colliders in one click.

For one bone: the skin vertices that bone moves most (its weight is the vertex's largest, and at
least MIN_WEIGHT) given in the bone's frame (y along the bone). The capsule runs along the bone
axis through the centroid of their cross-sections; its radius is a high percentile of their
distance from that axis (a limb's cross-section is not round: the percentile keeps the capsule
on the skin where it bulges least and slightly inside where it bulges most, which is where
hair and cloth rest), and its segment spans the vertices' extent along the bone minus the
radius at both ends (the round caps cover the rest).

NumPy only; the add-on gathers the vertices (operators/fit_colliders.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_WEIGHT = 0.5  # a vertex belongs to the bone that moves it most, if it moves it this much
RADIUS_PERCENTILE = 80.0  # of the vertices' distances from the capsule axis
MIN_VERTICES = 8  # fewer than this cannot describe a limb's cross-section


@dataclass(frozen=True)
class FittedCapsule:
    """A capsule in the bone's frame: its axis along y through (x, z) = `offset`, its centre at
    y = `centre`, half its segment `half_length` (0: a sphere), its `radius`; `vertices` used."""

    offset: tuple[float, float]
    centre: float
    half_length: float
    radius: float
    vertices: int


def strongest_bone(vertex: np.ndarray, bone: np.ndarray, weight: np.ndarray, count: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per vertex of `count`, from a skin's weight elements (vertex, bone, weight), all (E,):
    the bone with the largest weight (a tie goes to the lower bone index) and that weight;
    -1 and 0 for a vertex with no element."""
    vertex, bone = np.asarray(vertex, dtype=np.int64), np.asarray(bone, dtype=np.int64)
    weight = np.asarray(weight, dtype=np.float64)
    order = np.lexsort((bone, -weight, vertex))  # by vertex, heaviest first, then lowest bone
    v = vertex[order]
    first = np.ones(v.size, dtype=bool)
    first[1:] = v[1:] != v[:-1]
    owner = np.full(count, -1, dtype=np.int64)
    strongest = np.zeros(count)
    owner[v[first]] = bone[order][first]
    strongest[v[first]] = weight[order][first]
    return owner, strongest


def owned_vertices(owner: np.ndarray, strongest: np.ndarray, bone: int, *,
                   min_weight: float = MIN_WEIGHT) -> np.ndarray:
    """Indices of the vertices bone `bone` moves most (`strongest_bone`), with at least
    `min_weight`."""
    return np.flatnonzero((owner == bone) & (strongest >= min_weight))


def fit_capsule(points: np.ndarray, *, percentile: float = RADIUS_PERCENTILE
                ) -> FittedCapsule | None:
    """The capsule of `points` (V, 3) in the bone's frame (module doc); None when too few."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) < MIN_VERTICES:
        return None
    offset = points[:, [0, 2]].mean(axis=0)
    radial = np.linalg.norm(points[:, [0, 2]] - offset, axis=1)
    radius = float(np.percentile(radial, percentile))
    low, high = float(points[:, 1].min()), float(points[:, 1].max())
    half_length = max(0.0, 0.5 * (high - low) - radius)
    return FittedCapsule(offset=(float(offset[0]), float(offset[1])), centre=0.5 * (low + high),
                         half_length=half_length, radius=radius, vertices=len(points))
