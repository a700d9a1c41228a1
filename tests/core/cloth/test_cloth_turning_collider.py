"""Audit (session 47): cloth on a collider turning fast between two samples.

The collider matrices between two samples were the element-wise lerp of the samples: a chord,
which scales a collider turning theta between them by cos(theta / 2) across its plane of
rotation halfway (core/affine.py `lerp_affine`, found for the strands in
tests/core/test_chains_audit.py). The cloth's substeps hold vertices out of the blended collider,
so they ended substeps inside the real one.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from waft import core
from waft.core.cloth import bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest
from waft.core.colliders import ellipsoid_normal

from .conftest import still_drive


def test_cloth_pressed_on_a_fast_turning_collider_ends_every_substep_outside_it(
        turned_ellipsoid):
    """A 9 x 9 cage, 0.8 m square, laid flat and pinned along two opposite edges, drawn 3 cm
    (its 1 cm radius more) over an ellipsoid (10 cm across, 12 cm along X) that turns
    3,000 deg/s about X, sampled at 60 Hz, substeps and frames at 240 Hz: at every substep's end
    every vertex is outside the exactly turned collider, radius counted. With the chord the
    cage ended substeps 8.0 mm inside it (0.31 mm at 1,500 deg/s); with `lerp_affine` 1.7 mm
    clear of it (the links' contacts hold the vertices off the surface)."""
    rate, sub, omega = 60.0, 240.0, np.radians(3000.0)
    frames = 16
    rest = grid_rest(9, 9, width=0.8, height=0.8, origin=(-0.4, 0.0, 0.0))
    p = rest.rest_positions
    pinned = np.zeros(len(p), dtype=bool)
    pinned[:9] = pinned[-9:] = True
    rest = replace(rest, rest_positions=np.stack([p[:, 0], -p[:, 2], np.zeros(len(p))], axis=1),
                   pinned=pinned)
    centre = np.array([0.0, 0.4, 0.03 - 0.1])
    M = np.stack([turned_ellipsoid(omega * f / rate, centre) for f in range(frames)])[:, None]
    colliders = core.ColliderSet.create(names=["Ball"], kind=[core.ColliderKind.ELLIPSOID],
                                        size=[0.1], friction=[0.0])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    drive = replace(still_drive(model, frames, fps=rate, collider_matrix=M, radius=0.01),
                    output_fps=sub)
    x = bake_cloth(model, drive, core.SolverSettings(substep=1 / sub)).positions
    depth = []
    for i in range(len(x)):
        true = turned_ellipsoid(omega * i / sub, centre)
        _, sd = ellipsoid_normal(x[i], true, np.linalg.inv(true), 0.1)
        depth.append(0.01 - sd.min())
    assert max(depth) <= 0.0, max(depth)
