"""Coulomb friction of the cloth's collider passes, measured from where each vertex started the
substep (step 7, `constraints.collide`).

The shared position-based friction (`core.colliders.apply_friction`) removes the tangential
part of `x - x_prev` up to `friction x penetration`: in a solver whose only position fixes are
the contacts', `x_prev` is where the vertex started. Here the hard vertical sweep before the
colliders (step 6, `constraints.sweep_levels`) moves a child's `x_prev` by its share of its
move (a position fix; the parent's share is velocity), so `x_prev` is a velocity reference and
not a place the vertex has been. Friction pulling a vertex back to it dragged resting cloth:
a 6 x 6 cage draped on the ground had its touching rows pulled 88 um a substep toward the pins
by the sweep (the gravity step stretches the touch-down link), its `x_prev` 44 um, friction
took it there, and step 9 put back 37 um: 8 um a substep, and more friction dragged more
(TWEED on the ground 0.001 / 1.8 / 4.2 mm/s at friction 0.1 / 0.3 / 0.6, DOWN_JACKET 0.44 /
4.8 / 10.8).

Mueller et al. 2020 ("Detailed Rigid Body Simulation with Extended Position Based Dynamics",
§3.5) measure static friction on the contact's motion over the substep from its positions at
the substep's start, p-bar: here `start`, the vertex after the local-space carry. So the cone
holds the substep's whole tangential motion, position fixes included: within
`friction x penetration` the vertex goes back to its start in the tangent plane, beyond it
that motion shrinks by the cone (Macklin et al. 2014, "Unified Particle Physics for Real-Time
Applications" §6.1, the same position form). Friction only takes motion away: the tangential
velocity it leaves (`x - x_prev`) never points against the one before it nor exceeds it; where
the position's correction would do either, `x_prev` moves with the vertex (the move back toward
the start is then a position fix). A vertex with no position fix (`x_prev` at its start: a
plain slide) gets the shared friction's result, in another order of operations.
"""

from __future__ import annotations

import numpy as np

from ..colliders import SLIDE_EPS


def _row_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row dot products of (n, 3) arrays, summed x + y + z in this fixed order (not
    `constraints.dot3`'s product with ones, whose summation order is BLAS's)."""
    c = a * b
    return c[:, 0] + c[:, 1] + c[:, 2]


def friction_from_start(xs: np.ndarray, start: np.ndarray, prev: np.ndarray, n: np.ndarray,
                        penetration: np.ndarray, friction: float,
                        surface: np.ndarray | None = None) -> None:
    """Coulomb friction on vertices now at `xs` (n, 3), pushed by `penetration` (n,) along the
    unit normals `n` (n, 3), that started the substep at `start` (n, 3) and have the velocity
    reference `prev` (n, 3, their `x_prev`); `xs` and `prev` move in place. `surface`
    (`core.colliders.surface_motion`): the collider's motion over the substep, end to start;
    the motions are then relative to its surface (it drags what rests on it)."""
    if surface is None:
        moved = xs
    else:
        R, t = surface[:3, :3], surface[:3, 3]
        moved = xs[:, 0:1] * R[:, 0] + xs[:, 1:2] * R[:, 1] + xs[:, 2:3] * R[:, 2] + t
    slide = moved - start
    slide -= _row_dot(slide, n)[:, None] * n
    length = np.maximum(np.sqrt(_row_dot(slide, slide)), SLIDE_EPS)
    slide *= np.minimum(friction * penetration / length, 1.0)[:, None]
    velocity = moved - prev
    velocity -= _row_dot(velocity, n)[:, None] * n
    xs -= slide
    after = velocity - slide
    # Friction only takes motion away: a tangential velocity turned against the one before,
    # or grown, is the position's correction running past the velocity reference.
    speed2 = _row_dot(velocity, velocity)
    along = _row_dot(after, velocity)
    scale = np.where(along <= 0.0, 0.0,
                     np.minimum(1.0, np.sqrt(speed2 / np.maximum(_row_dot(after, after), 1e-300))))
    kept = after * scale[:, None]
    prev += after - kept
