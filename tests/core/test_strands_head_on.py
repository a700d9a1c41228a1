"""Hair tips landing head-on on a collider keep their lengths at the end of every frame.

The hair benchmark's scene (1,000 guides x 32 on a turning head, the body as eight spheres,
voxel friction, 240 Hz substeps) over its first half second, while the guides drape: tips fall
onto the chest and back with their last segment nearly along the surface normal. The
positions-only passes alternate the lengths (FTL) and the push out along the normal;
alternating projections converge by about the squared cosine of the angle between the two
constraints a pass, so there they hardly converge at all, and segments ended substeps
4.7-11.3 % short (the benchmark's frames 8 and 10: 1.8 % and 8.4 %). The slide to length on
the collider's tangent plane (`strands.solver._slide_to_length`) reaches their common point in
one step: 0.17 % at the frames (0.45 % at the worst substep end).
Read at every substep end, the strict xfails of tests/core/test_slide_audit.py say what is
left."""

from __future__ import annotations

import numpy as np

from waft import core
from waft.core.strands._bench_cases import (
    BODY_SPHERES,
    hanging_from_roots,
    head_guides,
    head_turning,
)

HZ = 240.0


def test_guides_draping_onto_the_body_keep_their_lengths_at_every_frame():
    fps = 24.0  # the benchmark's frames
    guides, particles = 1000, 32
    rest = head_guides(guides, particles)
    frames = int(0.5 * fps) + 1  # half a second
    model, kinematic, M = hanging_from_roots(rest, BODY_SPHERES, setup="Guide", frames=frames)
    params = core.StrandParams.defaults(guides, particles, shape_stiffness=0.05, radius=0.005,
                                        voxel_friction=0.2, voxel_resolution=32)
    drive = core.Drive(fps=fps, reference=head_turning(rest, frames, fps),
                       kinematic=np.broadcast_to(kinematic, (guides, particles)).copy(),
                       space=np.broadcast_to(np.eye(4), (frames, guides, 4, 4)),
                       collider_matrix=M, params=params)
    x = core.bake(model, drive, core.SolverSettings(substep=1.0 / HZ)).positions
    rest_length = np.linalg.norm(np.diff(rest, axis=1), axis=-1)
    stretch = np.abs(np.linalg.norm(np.diff(x, axis=2), axis=-1) / rest_length - 1.0)
    assert stretch.max() <= 5e-3, (stretch.max(), np.unravel_index(stretch.argmax(),
                                                                   stretch.shape))
    # The colliders win too: no particle inside a sphere beyond its radius (rounding aside).
    for _, centre, r in BODY_SPHERES:
        depth = r + 0.005 - np.linalg.norm(x[:, :, 1:] - np.array(centre), axis=-1)
        assert depth.max() <= 1e-4, depth.max()
