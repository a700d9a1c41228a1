"""Seed 003 Pose Track: a settled state captured at one frame restores the cloth at the start and
after animation cuts, so a cut shot does not watch the cloth fall into place again."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from waft.core import SetupError
from waft.core.cloth import (
    ClothRest,
    bake_cloth,
    build_cloth_model,
    capture_settled_offsets,
)
from waft.core.cloth._bench_cases import grid_rest

from .conftest import still_drive

FPS = 24
FRAMES = 96
CUT = 60
SETTLED = 55  # the frame whose state is saved: the panel has hung for over two seconds


def _turn(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _case(settled_offset=None, **params):
    """A panel modelled lying flat (pinned along one edge), so its skinned shape is not how it
    hangs; the character walks slowly and, at frame CUT, the shot cuts to it 3 m away, turned
    90 degrees about z."""
    rest = grid_rest(8, 6)
    flat = rest.rest_positions.copy()
    flat[:, 1], flat[:, 2] = -flat[:, 2], 1.5
    rest = ClothRest("Panel", flat, rest.quads, rest.pinned, rest.max_distance)
    model = build_cloth_model(cloths=[rest])
    space = np.repeat(np.eye(4)[None, None], FRAMES, axis=0)
    space[:, 0, 0, 3] = 0.3 * np.arange(FRAMES) / FPS
    space[CUT:, 0, :3, :3] = _turn(0.5 * np.pi)
    space[CUT:, 0, :3, 3] += (3.0, 1.0, 0.0)
    reference = flat @ space[:, 0, :3, :3].transpose(0, 2, 1) + space[:, 0, None, :3, 3]
    drive = still_drive(model, FRAMES, reference=reference, space=space, damping=1.5,
                        cut_threshold=1.0, cut_blend_frames=0, **params)
    if settled_offset is not None:
        drive = dataclasses.replace(drive, settled_offset=settled_offset)
    return model, drive, reference


def _speed(x: np.ndarray) -> np.ndarray:
    """(F - 1,) fastest vertex per frame, m/s."""
    return np.linalg.norm(np.diff(x, axis=0), axis=-1).max(axis=1) * FPS


def test_settled_pose_restores_the_cloth_after_a_cut_and_at_the_start():
    model, drive, reference = _case()
    plain = bake_cloth(model, drive).positions
    falls = _speed(plain)
    # Without a pose the panel falls from its flat skinned shape, at the start and after the cut.
    assert falls[:6].max() > 1.5 and falls[CUT:CUT + 6].max() > 1.5

    offset = capture_settled_offsets(model, drive, plain, SETTLED)
    model, drive, reference = _case(settled_offset=offset)
    x = bake_cloth(model, drive).positions
    speed = _speed(x)
    assert speed[:6].max() < 0.3 * falls[:6].max()
    assert speed[CUT:CUT + 6].max() < 0.3 * falls[CUT:CUT + 6].max()
    # The pose is restored in the character's new orientation: it hangs the same way relative
    # to the turned character as it did at the saved frame.
    turned = (plain[SETTLED] - reference[SETTLED]) @ _turn(0.5 * np.pi).T
    assert np.abs((x[CUT] - reference[CUT]) - turned).max() < 0.02
    # Pins stay exactly on the reference.
    np.testing.assert_array_equal(x[:, model.pinned], reference[:, model.pinned])


def test_settled_pose_is_validated_per_cloth():
    model, drive, _ = _case()
    offset = np.zeros((model.n_vertices, 3))
    with pytest.raises(SetupError, match="shape"):
        bake_cloth(*_case(settled_offset=offset[:-1])[:2])
    offset[7] = np.nan
    with pytest.raises(SetupError, match="Panel.*vertex 7"):
        bake_cloth(*_case(settled_offset=offset)[:2])
    # All NaN: the cloth has no pose and restarts from its reference, exactly as without one.
    plain = bake_cloth(model, drive).positions
    none = bake_cloth(*_case(settled_offset=np.full((model.n_vertices, 3), np.nan))[:2])
    np.testing.assert_array_equal(none.positions, plain)
