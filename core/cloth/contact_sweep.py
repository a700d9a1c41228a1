"""The hard vertical sweep with the colliders inside it: the last projection of a substep that
touched a collider (`solver._Bake.step`, step 9; body meshes push through `mesh_sweep`).

The plain sweep (`constraints.sweep_levels`) puts every vertical link at its rest length and
knows no collider; the colliders, run after it, push vertices and links out and leave the links
at a pushed vertex stretched. Run in turn they fight: a grid dropped over a thin tapered capsule
(radius 6-8 cm against 9 cm spacing) ended substeps 4 % (120 Hz) / 1.7 % (240 Hz) long after
one round, and alternating 16 rounds still left 2 % / 0.5 %: the sets meet at a shallow angle.

Top-down, a child's parent is final when its level comes, so each level is solved here with its
parents held (the Follow-The-Leader sweep of Mueller et al. 2012 with the contact projections of
PBD, Mueller et al. 2007, inside it): the child goes along the line from its parent to rest from
it and inside its max distance, then `push` moves it out of the colliders (a vertex to the
nearest point of its rest-length sphere about its parent outside the contact's tangent plane,
`constraints.turn_vertices_out`; a link crossing a collider between its ends turned about its
parent until its contact point is out), and it is settled again. A settle moves the child along
its link's own line, so a link's contact stays out. Between pushes the settle puts the link at
exactly rest, as the plain sweep does (a link crossing a collider turns its child on the
rest-length sphere, `constraints.turn_about`); only after the last push is a link left shorter
than rest (settled at rest after it, a child whose link points into the collider went back
inside by up to 31 um; the pushes now put the child at rest outside the plane, so that is left
to a body mesh's curvature). Kept short after every push (a link pointing into a box, or
crossing its edge at a slant and moved straight along the normal), the links ended substeps up
to 12.5 % short, and the next substep's sweep, which puts every link at rest with a
mass-weighted impulse, turned the shortfall into velocity: an 8 x 8 cage falling onto a box
gained 66 % of its fall in 1 s (a cape on a moving capsule body 6.8 % short; 2.2 % with a link
pointing into the body left short by its push, 1e-14 since the push places the child at rest).
Levels above the first touched one are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..sweep_limits import clamp_in_sweep
from .constraints import EPS, Sweep

# Rounds of collider push and rest-length placement per level: the second takes a vertex
# pushed off its rest-length sphere back there after the first placement moved it inward.
CONTACT_ROUNDS = 2
# A child within this fraction of its max distance counts as held there (rounding of the clamp).
LIMIT_SLACK = 1e-9
MOVED = 1e-9  # metres: a vertex the sweep moved less than this stays where the colliders left it


def first_step(sweep: Sweep, touched: np.ndarray) -> int | None:
    """Index of the first sweep step whose children include a vertex of `touched` (N,) bool, or
    None when none does (a touched vertex is a child of exactly one step, or a pin)."""
    step = sweep.step_of_vertex[touched]
    step = step[step >= 0]
    return int(step.min()) if step.size else None


def _settle(child: np.ndarray, parent: np.ndarray, rest: np.ndarray,
            reference: np.ndarray | None, limit: np.ndarray | None, *,
            shorter: bool = False) -> np.ndarray:
    """Children (3, n) moved along the line from their parents to rest from them (Follow The
    Leader, as `constraints._sweep_down`; `shorter`: no further than rest, a link a push left
    short stays so), then, with a `reference` and `limit` (max
    distance), to the nearest point of the sphere at that length inside their max-distance
    balls (`core.sweep_limits.clamp_in_sweep`)."""
    d = child - parent
    square = np.square(d)
    length = square[0] + square[1]
    length += square[2]
    np.sqrt(length, out=length)
    np.maximum(length, EPS, out=length)
    scale = np.minimum(rest / length, 1.0) if shorter else rest / length
    d *= scale
    d += parent
    if reference is None:
        return d
    return clamp_in_sweep(d, parent, reference, limit, length * scale)


def _inside(point: np.ndarray, reference: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Which points (3, n) are inside their max-distance balls, not held at the rim."""
    e = np.square(point - reference)
    return e[0] + e[1] + e[2] < np.square(limit * (1.0 - LIMIT_SLACK))


def sweep_with_contacts(x: np.ndarray, sweep: Sweep, start: int,
                        push: Callable[[np.ndarray, np.ndarray, np.ndarray], bool], *,
                        reference: np.ndarray | None = None,
                        limit: np.ndarray | None = None) -> None:
    """Steps `start..` of the top-down sweep on `x` (N, 3, C-contiguous), positions only, with
    `push(parents, children, rest)` (one level's links: vertex indices and rest lengths) moving
    the children out of the colliders with their parents held and returning whether it moved
    any. With `reference` (N, 3) and `limit` (N,) the max distances hold as in `sweep_levels`,
    and win over the colliders as everywhere in the substep (steps 8 and 9 clamp after them): a
    child its max distance holds is not pushed, and a pushed one is clamped again."""
    flat = x.reshape(-1)
    ref_flat = None if reference is None else np.ascontiguousarray(reference).reshape(-1)
    # Vertices this sweep moved. A child whose parent and itself stayed is where the colliders
    # left it (out) and is not tested: a skirt's four leg capsules tested at every child of
    # every level made its bake 1.9x slower.
    shifted = np.zeros(sweep.size // 3, dtype=bool)
    for _rows, parent_flat, child_flat, rest in sweep.steps[start:]:
        top = flat.take(parent_flat)
        child_ref = child_limit = None
        if ref_flat is not None:
            child_limit = limit[child_flat[0] // 3]
            if np.isfinite(child_limit).any():
                child_ref = ref_flat.take(child_flat)
            else:
                child_limit = None
        old = flat.take(child_flat)
        d = _settle(old, top, rest, child_ref, child_limit)
        flat[child_flat] = d
        e = np.square(d - old)
        parent, child = parent_flat[0] // 3, child_flat[0] // 3
        chosen = (e[0] + e[1] + e[2] > MOVED * MOVED) | shifted[parent]
        shifted[child] = chosen
        if child_ref is not None:
            chosen &= _inside(d, child_ref, child_limit)
        if not chosen.any():
            continue
        if not chosen.all():
            parent_flat, child_flat = parent_flat[:, chosen], child_flat[:, chosen]
            top, rest = top[:, chosen], rest[chosen]
            if child_ref is not None:
                child_ref, child_limit = child_ref[:, chosen], child_limit[chosen]
            parent, child = parent[chosen], child[chosen]
        for round_ in range(CONTACT_ROUNDS):
            if not push(parent, child, rest):
                break
            if round_ < CONTACT_ROUNDS - 1:
                flat[child_flat] = _settle(flat.take(child_flat), top, rest, child_ref,
                                           child_limit)
            else:
                # The last push stays: settled at rest after it, a child whose link points
                # into the collider went back inside by up to 31 um (2 cm particle radius,
                # tests/core/cloth/test_cloth_physics.py); what is left to push after the first
                # round's settle is small, and so is what it takes off the link's length.
                flat[child_flat] = _settle(flat.take(child_flat), top, rest, child_ref,
                                           child_limit, shorter=True)
