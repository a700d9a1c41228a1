"""Scenes shared by the strand benchmark (tests/benchmarks/bench_hair.py) and the tests that
measure the same situation: strands hanging from a head over sphere colliders."""

from __future__ import annotations

import numpy as np

from ..colliders import ColliderKind, ColliderSet
from .model import ChainRest, build_strand_model


def hanging_from_roots(rest: np.ndarray, spheres, *, setup: str, frames: int,
                       friction: float = 0.3):
    """A strand model of chains `rest` (S, P, 3) pinned at their first particle, colliding
    with `spheres` ((name, centre, radius), ...), and the spheres' (frames, K, 4, 4) still
    world matrices. Returns (model, kinematic (P,), matrices)."""
    P = rest.shape[1]
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    chains = [ChainRest(setup=setup, name=f"{setup}.{s}", rest_positions=rest[s],
                        kinematic=kinematic) for s in range(len(rest))]
    colliders = ColliderSet.create(
        names=[n for n, _, _ in spheres], kind=[ColliderKind.ELLIPSOID] * len(spheres),
        size=[r for _, _, r in spheres], friction=[friction] * len(spheres))
    model = build_strand_model(chains=chains, colliders=colliders)
    M = np.tile(np.eye(4), (frames, len(spheres), 1, 1))
    for k, (_, centre, _) in enumerate(spheres):
        M[:, k, :3, 3] = centre
    return model, kinematic, M
