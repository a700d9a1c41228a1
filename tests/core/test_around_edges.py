"""`core/strands/around_edges.py`: a child the sweep put inside a collider, turned about its
parent around the collider's edge until it clears it (the positions-only passes' fixed point
at a box's edge, tests/core/test_chains_audit.py)."""

from __future__ import annotations

import numpy as np

from waft.core.colliders import box_normal, sphere_normal
from waft.core.strands.around_edges import turn_until_clear

RADIUS, REST = 0.005, 0.05


def _box_depth(points):
    M = np.eye(4)
    return RADIUS - box_normal(points.T, M, M, 0.05)[1]


def test_a_child_under_a_box_goes_around_the_bottom_edge_at_length():
    """Parent on the +X face 2.4 mm below the centre, more than a segment above the bottom
    face's offset plane; child under the bottom face (the sweep's point is inside): the child
    ends at length, clear of the box, at the edge (not up at the parent's outward normal), and
    a child whose swept point is clear takes the plain FTL step."""
    parent = np.array([[0.055, 0.055], [0.0, 0.0], [-0.0024, -0.0024]])
    child = np.array([[0.0372, 0.09], [0.0, 0.0], [-0.055, -0.03]])
    outward = np.array([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    placed, moved = turn_until_clear(parent, child, np.full(2, REST), _box_depth, outward)
    assert moved.all()
    assert np.allclose(np.linalg.norm(placed - parent, axis=0), REST, rtol=0, atol=1e-12)
    assert (_box_depth(placed) <= 0.0).all()
    # Around the edge (0.05, -0.05): within a particle radius and a micrometre of it.
    assert np.linalg.norm(placed[[0, 2], 0] - [0.05, -0.05]) <= RADIUS + 1e-6
    d = child[:, 1] - parent[:, 1]
    assert np.allclose(placed[:, 1], parent[:, 1] + REST * d / np.linalg.norm(d), atol=1e-15)


def test_a_child_past_a_small_sphere_comes_back_around_it():
    """A 3 cm sphere, 5 cm segments, the child on the far side from its parent: it ends at
    length on the sphere's offset surface (within a micrometre), outside."""
    centre, radius = np.zeros(3), 0.03

    def depth(points):
        return RADIUS - sphere_normal(points.T, centre, radius)[1]

    parent = np.array([[0.0329], [0.0], [-0.0122]])
    child = np.array([[-0.0269], [0.0], [-0.0226]])
    outward = parent / np.linalg.norm(parent)
    placed, moved = turn_until_clear(parent, child, np.full(1, REST), depth, outward)
    assert moved.all()
    assert abs(np.linalg.norm(placed - parent) - REST) <= 1e-12
    assert -1e-6 <= depth(placed)[0] <= 0.0
