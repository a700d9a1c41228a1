"""Seed 003 animation cuts and reset frames."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.cloth import bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest

from .conftest import still_drive

CUT = 30
FRAMES = 60


def cut_case(**params):
    """A swaying grid whose animation cuts at frame CUT to a pose 3 m away, turned 90 degrees
    about z (a camera cut / new shot): the reference jumps, the cloth must not."""
    rest = grid_rest(8, 6)
    model = build_cloth_model(cloths=[rest])
    t = np.arange(FRAMES) / 24.0
    ref = np.repeat(rest.rest_positions[None], FRAMES, axis=0)
    ref[:, :, 0] += 0.15 * np.sin(2 * np.pi * 1.3 * t)[:, None]
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    ref[CUT:] = ref[CUT:] @ turn.T + (3.0, 1.0, 0.0)
    drive = still_drive(model, FRAMES, reference=ref, wind_velocity=(0.0, 3.0, 0.0), drag=1.0,
                        **params)
    return model, ref, drive


def deformation_jumps(x, ref):
    d = x - ref
    return np.linalg.norm(np.diff(d, axis=0), axis=-1)  # (F-1, N): frame i-1 -> i at [i-1]


@pytest.mark.parametrize("blend", [0, 2, 5])
def test_cut_blends_the_old_deformation_away(blend):
    model, ref, drive = cut_case(cut_threshold=1.0, cut_blend_frames=blend)
    result = bake_cloth(model, drive)
    x = result.positions
    assert result.cuts[:, 0].tolist() == [i == CUT for i in range(FRAMES)]
    jumps = deformation_jumps(x, ref)
    window = np.zeros(FRAMES - 1, dtype=bool)
    window[CUT - 1: CUT + blend] = True  # transitions into frames CUT..CUT+blend
    ordinary = jumps[~window].max()
    gap = np.linalg.norm(x[CUT - 1] - ref[CUT - 1], axis=-1)  # old deformation per vertex
    assert gap.max() > 0.05
    # Each blended frame removes 1 / (blend + 1) of the old deformation, plus ordinary motion.
    allowed = gap / (blend + 1) + 2 * ordinary + 1e-9
    assert np.all(jumps[window] <= allowed[None])
    # The new shot starts from the new pose: the blend only fades the old deformation.
    np.testing.assert_allclose(x[CUT + blend], ref[CUT + blend], atol=2 * ordinary + 0.05)


def test_without_cut_detection_the_cloth_is_dragged_through_the_jump():
    """The same animation with detection off sweeps the cloth 3 m within one frame: the
    deformation jumps by far more than any blend allows (this is what the cut handling fixes)."""
    model, ref, drive = cut_case(cut_threshold=np.inf)
    x = bake_cloth(model, drive).positions
    assert deformation_jumps(x, ref)[CUT - 1].max() > 0.5


def test_reset_frames_restart_from_the_reference():
    # The jump at CUT is not a detected cut here, so reset it explicitly too.
    model, ref, drive = cut_case(cut_threshold=np.inf, reset_frames=(12, CUT, 40))
    x = bake_cloth(model, drive).positions
    for r in (12, CUT, 40):
        np.testing.assert_allclose(x[r], ref[r], atol=1e-12)
        assert np.abs(x[r + 6] - ref[r + 6]).max() > 0.01  # and simulates on from there
