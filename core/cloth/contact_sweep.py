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
# Rounds of the bottom-up lift and the contact sweep again (`lift_parents`, `_Bake.step` step 9).
LIFT_ROUNDS = 8
LIFT_OVER_RELAXATION = 4.0


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


def on_limit(x: np.ndarray, sweep: Sweep, reference: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """The swept children (`sweep`'s, not pins) held on the rim of their max-distance balls: the
    only ones the contact sweep leaves inside a collider (it does not push a child its max
    distance holds, and the max distance wins), so the only ones `lift_parents` looks at."""
    child = np.flatnonzero(sweep.step_of_vertex >= 0)
    child = child[np.isfinite(limit[child])]
    d = np.square(x[child] - reference[child]).sum(axis=1)
    return child[d >= np.square(limit[child] * (1.0 - LIMIT_SLACK))]


def lift_parents(x: np.ndarray, sweep: Sweep, child: np.ndarray, normal: np.ndarray,
                 depth: np.ndarray, reference: np.ndarray, limit: np.ndarray,
                 fixed: np.ndarray, out: Callable[[np.ndarray], None]) -> np.ndarray:
    """Bottom up where the top-down contact sweep cannot hold a child: its parent left no point
    within a link of it both inside its max distance and out of the collider (a hem whose parent
    rests on a thin capsule beside the hem's reference), so the max distance won and left the
    child `depth` (n,) inside, against its unit `normal` (n, 3). As `sweep_levels` does for the
    max distance alone (alternating projections, its `_sweep_up`), the child goes to a point
    that holds both without its link (out of the contact's tangent plane by
    LIFT_OVER_RELAXATION times its depth, as `sweep_limits.pull_parent` over-relaxes: at 2 the
    drape was left 3 nm inside after 8 rounds, at 4 it is out after 4), its parent and their
    ancestors (not `fixed`: pins) up the chain to rest length from the vertex below and out of
    the colliders (`out`), so the next top-down contact sweep, started at the highest lifted
    level, turns each about its parent (out of the colliders and inside its max distance) and
    settles the child there. Returns the vertices moved: the children and the ancestors."""
    parent_of = np.full(x.shape[0], -1, dtype=np.int64)
    rest_of = np.zeros(x.shape[0])
    for level in sweep.levels:
        parent_of[level.child] = level.parent
        rest_of[level.child] = np.asarray(level.rest).reshape(-1)
    # The point nearest the child in its max-distance ball and out of the contact's tangent
    # plane (the collider is convex: the plane's outer side is outside it): the nearest point
    # of the disk the plane cuts from the ball to the child's projection on the plane. Pushed
    # out along the normal and clamped back into the ball in turn, the child crept along the
    # capsule (the sets meet at a shallow angle) and a drape stayed 2.2 mm inside.
    on_plane = x[child] + normal * (LIFT_OVER_RELAXATION * depth)[:, None]
    offset = reference[child] - on_plane
    height = np.einsum("ij,ij->i", offset, normal)  # the reference's height over the plane
    centre = reference[child] - normal * height[:, None]
    radius = np.sqrt(np.maximum(np.square(limit[child]) - np.square(height), 0.0))
    across = on_plane - centre
    distance = np.sqrt(np.square(across).sum(axis=1))
    point = centre + across * np.minimum(radius / np.maximum(distance, EPS), 1.0)[:, None]
    x[child] = point
    parent = parent_of[child]
    keep = (parent >= 0) & ~fixed[np.maximum(parent, 0)]
    parent, below = parent[keep], child[keep]
    lifted: list[np.ndarray] = []
    # Up the chain (FTL upward, Mueller et al. 2012, as `sweep_levels`' `_sweep_up`): each
    # ancestor not at rest from the vertex below goes to rest from it, then out of the
    # colliders (`out`): a parent lying on the collider slides round it, not into it, and its
    # own parent moves so that its rest-length sphere reaches it there (lifted only where the
    # link was too long, the parent was turned back to where it lay, each round left the child
    # 2 % nearer, and a link left short in the next sweep instead took a cape's link 8 % short).
    while parent.size:
        link = x[parent] - x[below]
        length = np.sqrt(np.square(link).sum(axis=1))
        far = np.abs(length - rest_of[below]) > MOVED
        parent, below, link, length = parent[far], below[far], link[far], length[far]
        if parent.size == 0:
            break
        x[parent] = x[below] + link * (rest_of[below] / length)[:, None]
        out(parent)
        lifted.append(parent)
        above = parent_of[parent]
        keep = (above >= 0) & ~fixed[np.maximum(above, 0)]
        parent, below = above[keep], parent[keep]
    return np.concatenate([child, *lifted])
