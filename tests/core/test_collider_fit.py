"""Capsules fitted to skin vertices (core/collider_fit.py) against shapes with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.collider_fit import MIN_VERTICES, fit_capsule, owned_vertices, strongest_bone


def _cylinder(radius, y0, y1, *, centre=(0.0, 0.0), ellipse=1.0, n=4000, seed=3):
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0.0, 2.0 * np.pi, n)
    y = rng.uniform(y0, y1, n)
    return np.stack([centre[0] + radius * np.cos(angle), y,
                     centre[1] + ellipse * radius * np.sin(angle)], axis=1)


def test_a_round_limb_gives_its_radius_and_its_extent():
    capsule = fit_capsule(_cylinder(0.06, 0.0, 0.45, centre=(0.01, -0.02)))
    assert capsule.radius == pytest.approx(0.06, rel=0.03)  # axis through the centroid
    assert capsule.offset == pytest.approx((0.01, -0.02), abs=2e-3)
    assert capsule.centre == pytest.approx(0.225, abs=1e-3)
    # segment plus round caps = the vertices' extent
    assert capsule.half_length + capsule.radius == pytest.approx(0.225, abs=1e-3)


def test_a_flat_cross_section_sits_between_its_widths():
    """A torso-like ellipse (12 x 6 cm half-widths): the radius lies between them, nearer the
    large one (the 80th percentile)."""
    capsule = fit_capsule(_cylinder(0.12, 0.0, 0.3, ellipse=0.5))
    assert 0.06 < capsule.radius < 0.12
    assert capsule.radius > 0.09


def test_short_thick_parts_become_spheres_and_too_few_vertices_nothing():
    capsule = fit_capsule(_cylinder(0.1, 0.0, 0.1))
    assert capsule.half_length == 0.0 and capsule.radius == pytest.approx(0.1, rel=0.03)
    assert fit_capsule(_cylinder(0.1, 0.0, 0.1, n=MIN_VERTICES - 1)) is None


def test_a_vertex_belongs_to_the_bone_that_moves_it_most():
    weights = np.array([[1.0, 0.0], [0.6, 0.4], [0.4, 0.6], [0.3, 0.2], [0.5, 0.5]])
    vertex, bone = np.nonzero(weights)  # the skin's elements (vertex 0 has no bone-1 weight)
    owner, strongest = strongest_bone(vertex[::-1], bone[::-1], weights[vertex, bone][::-1], 6)
    assert owner[5] == -1 and strongest[5] == 0.0  # a vertex with no weight
    assert list(owned_vertices(owner, strongest, 0)) == [0, 1, 4]  # a tie goes to the first bone
    assert list(owned_vertices(owner, strongest, 1)) == [2]  # 0.3 and 0.2 are both below 0.5
