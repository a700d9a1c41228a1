"""Audit (session 46): constraints at the frame end when a frame falls between two substeps.

At 25 and 50 fps the 240 Hz substeps do not land on the frames: the output blends the two
substep states around each frame and sweeps the hard vertical links back to length on the blend
(a chord of two exact-length states is short). That sweep ignored the max distance, so a cage
on a 5 g figure-eight ended frames 0.039 mm (25 fps) and 0.074 mm (50 fps) past its painted max
distance, while at 24, 30 and 60 fps (frames on the substep grid) it never did.
"""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.cloth import ClothParams, bake_cloth
from waft.core.timestep import frame_interval, interpolate

from .test_cloth_subframe import RATE, SECONDS, _drive, _model


@pytest.mark.parametrize("fps", [25, 50])
def test_frames_between_substeps_keep_the_max_distance(fps):
    """Every output frame within each vertex's max distance (edge vertices x their scale) of
    the reference the solver holds it to at that frame (the samples interpolated at the
    frame's time), and the vertical links at length, with the 5 g figure-eight, the collider
    and the max distance growing toward the hem of test_cloth_subframe."""
    model, rest = _model()
    frames = int(round(SECONDS * fps)) + 1
    samples = int(np.ceil((frames - 1) / fps * RATE - 1e-9)) + 1
    drive = _drive(model, rest, np.arange(samples) / RATE, 5.0, fps=RATE, output_fps=fps,
                   output_frames=frames)
    x = bake_cloth(model, drive).positions
    reference = np.stack([interpolate(drive.reference, *frame_interval(i / fps, RATE, samples))
                          for i in range(frames)])
    scale = float(ClothParams.defaults(1).edge_max_distance_scale.reshape(-1)[0])
    limit = rest.max_distance * np.where(model.edge_vertex, scale, 1.0)
    free = ~model.pinned
    distance = np.linalg.norm(x - reference, axis=-1)[:, free]
    assert np.abs(x - x[0]).max() > 0.1  # it really moves
    assert np.max(distance - limit[free]) <= 1e-9
    rows = np.arange(48).reshape(8, 6)
    vertical = np.linalg.norm(x[:, rows[1:]] - x[:, rows[:-1]], axis=-1)
    assert np.abs(vertical / (1.0 / 7.0) - 1.0).max() < 5e-3

