"""Cloth-bone frames stay well defined while the cage folds (row frame with a 1-ring
shape-matching fallback, `core.cloth.bone_frames.grid_frames(..., rest=, quads=)`).

The seed frame takes its roll from (right - left) made perpendicular to the column; when a fold
or shear turns the row into the column that remainder is tiny and the bone rolled 140-170° in
one frame (audit r8: a cage pressed round a collider ball)."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.cloth import bake_cloth, bone_world, grid_frames, rest_offsets
from waft.core.cloth._bench_cases import grid_positions, grid_quads
from waft.core.cloth.bone_frames import ROW_WELL_CONDITIONED

ROWS = COLS = 5
SPACING = 0.25  # grid_positions' default 1 m x 1 m over 4 cells


def _bones(rows: int = ROWS, cols: int = COLS):
    """Every vertex but the last row: (vertex, below, left, right)."""
    vertex = np.arange((rows - 1) * cols)
    col = vertex % cols
    return (vertex, vertex + cols, np.where(col > 0, vertex - 1, -1),
            np.where(col < cols - 1, vertex + 1, -1))


def _step_degrees(frames: np.ndarray) -> np.ndarray:
    """(F - 1, B) rotation angle of each bone's frame from one frame to the next."""
    r = frames[..., :3, :3]
    rel = np.swapaxes(r[:-1], -1, -2) @ r[1:]
    cos = (np.trace(rel, axis1=-2, axis2=-1) - 1.0) / 2.0
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def _row_swept_past_the_column(frames: int = 61, sweep_deg: float = 110.0,
                               off_plane_deg: float = 1.0) -> np.ndarray:
    """(F, N, 3): the centre vertex's row neighbours are dragged round it (a collider shearing
    the cage) from along the row, past the column (missing it by `off_plane_deg` out of the
    cloth's plane) to `sweep_deg`, and back, smoothly; the rest of the cage stays."""
    rest = grid_positions(ROWS, COLS)
    centre = (ROWS // 2) * COLS + COLS // 2
    t = np.radians(sweep_deg) * 0.5 * (1.0 - np.cos(2.0 * np.pi * np.arange(frames) / (frames - 1)))
    delta = np.radians(off_plane_deg)
    along = np.array([1.0, 0.0, 0.0])  # the row, x to the right
    towards = np.cos(delta) * np.array([0.0, 0.0, -1.0]) + np.sin(delta) * np.array([0, 1.0, 0])
    row = np.cos(t)[:, None] * along + np.sin(t)[:, None] * towards  # (F, 3) unit
    x = np.repeat(rest[None], frames, axis=0)
    x[:, centre + 1] = rest[centre] + SPACING * row
    x[:, centre - 1] = rest[centre] - SPACING * row
    return x


def _ring_move(x: np.ndarray, vertex: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(F - 1, B) largest move over a frame of the bone's vertex and its quads' corners,
    relative to the vertex (a rigid translation does not turn the frame), in grid spacings."""
    out = np.zeros((len(x) - 1, len(vertex)))
    for b, v in enumerate(vertex):
        ring = np.unique(quads[(quads == v).any(axis=1)])
        rel = x[:, ring] - x[:, v:v + 1]
        out[:, b] = np.linalg.norm(np.diff(rel, axis=0), axis=-1).max(axis=1) / SPACING
    return out


def test_row_swept_past_the_column_rolls_smoothly():
    x = _row_swept_past_the_column()
    rest, quads = grid_positions(ROWS, COLS), grid_quads(ROWS, COLS)
    vertex, below, left, right = _bones()
    frames = grid_frames(x, vertex=vertex, below=below, left=left, right=right,
                         rest=rest, quads=quads)
    step = _step_degrees(frames)
    # No roll over: the row neighbours turn 3.6° a frame at most.
    assert step.max() < 30.0, step.max()
    # No single-frame spike: each step within 3x the larger of the two steps either side.
    padded = np.pad(step, ((1, 1), (0, 0)))
    beside = np.maximum(padded[:-2], padded[2:])
    assert np.all(step <= 3.0 * beside + 1.0), (step - 3.0 * beside).max()
    # Bones whose column stays put only roll, and no faster than their 1-ring moves (radians
    # per grid spacing moved); the seed turns the centre bone 30x faster. (The two dragged
    # vertices' bones and those above them swing their column: covered by the spike test.)
    dragged = np.flatnonzero(np.ptp(x, axis=0).max(axis=1) > 0)
    still = ~np.isin(vertex, dragged) & ~np.isin(below, dragged)
    move = _ring_move(x, vertex, quads)[:, still]
    rate = np.radians(step[:, still]) / np.maximum(move, 1e-12)
    assert rate.max() < 1.0, rate.max()
    # Still an orthonormal right-handed frame aimed at the vertex below.
    r = frames[..., :3, :3]
    np.testing.assert_allclose(np.swapaxes(r, -1, -2) @ r, np.broadcast_to(np.eye(3), r.shape),
                               atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, atol=1e-12)
    down = x[:, below] - x[:, vertex]
    np.testing.assert_allclose(r[..., :, 0], down / np.linalg.norm(down, axis=-1)[..., None],
                               atol=1e-12)


def test_the_seed_frame_rolls_over_on_that_sweep():
    """The same motion without the 1-ring (the seed's construction) flips the centre bone:
    the case the fallback is for."""
    x = _row_swept_past_the_column()
    vertex, below, left, right = _bones()
    step = _step_degrees(grid_frames(x, vertex=vertex, below=below, left=left, right=right))
    assert step.max() > 120.0


def _sheared_rest():
    """A rest cage whose rows run 80° off the columns' perpendicular (s < ROW_WELL_CONDITIONED),
    so even the rest frame takes the 1-ring fit's branch."""
    rest = grid_positions(ROWS, COLS)
    rest[:, 2] += np.tan(np.radians(80.0)) * (rest[:, 0] - rest[:, 0].min())
    return rest


@pytest.mark.parametrize("shape", ["square", "sheared"])
def test_cage_at_rest_gives_the_bone_rest_pose(shape):
    rest = grid_positions(ROWS, COLS) if shape == "square" else _sheared_rest()
    quads = grid_quads(ROWS, COLS)
    vertex, below, left, right = _bones()
    kw = dict(vertex=vertex, below=below, left=left, right=right, rest=rest, quads=quads)
    grid_rest = grid_frames(rest, **kw)
    rng = np.random.default_rng(7)
    bone = np.repeat(np.eye(4)[None], vertex.size, axis=0)
    q, _ = np.linalg.qr(rng.normal(size=(vertex.size, 3, 3)))
    bone[:, :3, :3] = q * np.sign(np.linalg.det(q))[:, None, None]
    bone[:, :3, 3] = rest[vertex] + 0.01
    offsets = rest_offsets(grid_rest=grid_rest, bone_rest_world=bone)
    # Frames of a cage that stays at rest, computed with the animation's (F, N, 3) call.
    frames = grid_frames(np.repeat(rest[None], 4, axis=0), **kw)
    np.testing.assert_allclose(bone_world(frames, offsets), np.broadcast_to(bone, frames.shape),
                               atol=1e-12)
    np.testing.assert_allclose(frames, np.broadcast_to(grid_rest, frames.shape), atol=1e-12)
    if shape == "sheared":  # the fit is the identity at rest: the seed's rest frame
        seed = grid_frames(rest, vertex=vertex, below=below, left=left, right=right)
        np.testing.assert_allclose(grid_rest, seed, atol=1e-12)


def test_swaying_cage_keeps_the_seed_frames_exactly():
    from .test_cloth_physics import swinging_grid

    model, drive = swinging_grid(rows=6, cols=5)
    x = bake_cloth(model, drive).positions
    vertex, below, left, right = _bones(6, 5)
    seed = grid_frames(x, vertex=vertex, below=below, left=left, right=right)
    new = grid_frames(x, vertex=vertex, below=below, left=left, right=right,
                      rest=model.rest_positions, quads=grid_quads(6, 5))
    # Where the row stands well off the column (most frames of most bones) the frames are the
    # seed's, bit for bit; this flailing cage also crushes some rings, where they may differ.
    y = x[:, np.where(right < 0, vertex, right)] - x[:, np.where(left < 0, vertex, left)]
    xa = seed[..., :3, 0]
    across = y - np.sum(y * xa, axis=-1, keepdims=True) * xa
    s = np.linalg.norm(across, axis=-1) / np.linalg.norm(y[0], axis=-1)
    well = s >= ROW_WELL_CONDITIONED
    assert well.mean() > 0.9
    np.testing.assert_array_equal(new[well], seed[well])
    r = new[..., :3, :3]
    np.testing.assert_allclose(np.swapaxes(r, -1, -2) @ r, np.broadcast_to(np.eye(3), r.shape),
                               atol=1e-12)
    np.testing.assert_array_equal(new[..., :3, 0], seed[..., :3, 0])


def test_rest_and_quads_go_together():
    vertex, below, left, right = _bones()
    with pytest.raises(TypeError, match="both"):
        grid_frames(grid_positions(ROWS, COLS), vertex=vertex, below=below, left=left,
                    right=right, rest=grid_positions(ROWS, COLS))
