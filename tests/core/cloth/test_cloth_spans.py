"""A strip pinned at both ends: the pin-to-pin spans the model finds and the catenary the solver
hangs (exact link lengths by SHAKE along each span; the top-down sweep alone left the link where
the two hanging chains meet 3-24 % long)."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.cloth import ClothRest, bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_positions, grid_quads, grid_rest

from .conftest import still_drive

G = 9.81


def _strip(rows: int, cols: int = 2, *, length: float = 1.0) -> ClothRest:
    """A vertical strip in the x-z plane, 5 cm wide, its top and bottom rows pinned."""
    positions = grid_positions(rows, cols, width=0.05, height=length, origin=(0.0, 0.0, 2.0))
    pinned = np.zeros(rows * cols, dtype=bool)
    pinned[:cols] = True
    pinned[-cols:] = True
    return ClothRest("Strip", positions, grid_quads(rows, cols), pinned,
                     np.full(rows * cols, np.inf))


def _catenary_sag(length: float, span: float) -> float:
    """Sag of a chain of `length` hung between supports `span` apart at one height:
    length = 2 a sinh(span / 2a), sag = a (cosh(span / 2a) - 1), solved by bisection."""
    lo, hi = 1e-3, 1e3
    for _ in range(200):
        a = 0.5 * (lo + hi)
        if 2.0 * a * np.sinh(span / (2.0 * a)) > length:
            lo = a
        else:
            hi = a
    return a * (np.cosh(span / (2.0 * a)) - 1.0)


def test_a_strip_pinned_at_both_ends_has_one_span_per_column():
    model = build_cloth_model(cloths=[_strip(21, cols=3)])
    assert len(model.spans) == 1
    paths = model.spans[0]
    assert paths.shape == (3, 21)
    for column, path in enumerate(paths):  # top pin to bottom pin down one column
        np.testing.assert_array_equal(path, np.arange(21) * 3 + column)


@pytest.mark.parametrize("rest", [grid_rest(8, 6), grid_rest(8, 6, pinned_rows=2)])
def test_cages_hanging_from_one_side_have_no_span(rest):
    assert build_cloth_model(cloths=[rest]).spans == ()


def test_a_cage_hanging_from_its_top_row_has_one_column_per_pin():
    """Every column of a cage, from its pinned top vertex down to its hem, is one hanging
    chain for SHAKE; a strip pinned at both ends has none (its spans hold every vertex)."""
    model = build_cloth_model(cloths=[grid_rest(8, 6)])
    (paths,) = model.columns
    assert paths.shape == (6, 8)
    for column, path in enumerate(paths):  # grid_rest numbers row by row, top row pinned
        np.testing.assert_array_equal(path, np.arange(8) * 6 + column)
    assert build_cloth_model(cloths=[_strip(21, cols=3)]).columns == ()


def test_a_cage_pinned_at_one_corner_hangs_its_branches_as_columns():
    """Pinned at one corner, vertices hang from neighbours several others hang from: each
    chain starts at such an anchor, and no free vertex is in two chains of one colour."""
    rest = grid_rest(6, 6)
    pinned = np.zeros(36, dtype=bool)
    pinned[0] = True
    rest = ClothRest(rest.setup, rest.rest_positions, rest.quads, pinned, rest.max_distance)
    model = build_cloth_model(cloths=[rest])
    covered = np.zeros(36, dtype=int)
    for colour in model.columns:
        for path in colour:
            free = np.unique(path[~model.pinned[path]])
            covered[free] += 1
            # each link of a path is a hanging link (child hangs from the vertex before it)
            for a, b in zip(path[:-1], path[1:], strict=True):
                assert a == b or model.parent[b] == a
        used = np.concatenate([np.unique(p[~model.pinned[p]]) for p in colour])
        assert len(used) == len(np.unique(used))
    assert np.all(covered[~model.pinned] >= 1)


def test_the_top_edge_between_two_pinned_corners_is_a_span():
    # Chains from the two top corners meet in the middle of the top edge, which hangs between
    # them like a rope; below it, every chain meets its neighbour at right angles: no span.
    rest = grid_rest(6, 6)
    pinned = np.zeros(36, dtype=bool)
    pinned[[0, 5]] = True
    rest = ClothRest(rest.setup, rest.rest_positions, rest.quads, pinned, rest.max_distance)
    (paths,) = build_cloth_model(cloths=[rest]).spans
    np.testing.assert_array_equal(paths, [np.arange(6)])


def _column_stretch(model, x: np.ndarray, cols: int = 2) -> np.ndarray:
    """(F, E) relative stretch of the links along the strip's columns (the meeting link too)."""
    along = model.stretch.a % cols == model.stretch.b % cols
    a, b = model.stretch.a[along], model.stretch.b[along]
    return np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[along] - 1.0


def _folded(model, rows: int, span: float, cols: int = 2) -> np.ndarray:
    """Rest positions with the strip folded into a V between supports `span` apart (every link
    at its length but the one across the fold), the bottom row beside the top one."""
    x = model.rest_positions.copy()
    s = np.linspace(0.0, 1.0, rows)  # arc length from the top pin
    depth = np.sqrt(0.25 - (0.5 * span) ** 2)
    x[:, 1] = np.repeat(s * span, cols)
    x[:, 2] = np.repeat(2.0 - depth * (1.0 - np.abs(1.0 - 2.0 * s)), cols)
    return x


@pytest.mark.parametrize("rows", [21, 20])  # chains meeting across a link / at a level
@pytest.mark.parametrize("span", [0.3, 0.6, 0.9])
def test_strip_between_two_pins_hangs_as_a_catenary_and_comes_to_rest(rows, span):
    fps, seconds, length = 24, 6, 1.0
    model = build_cloth_model(cloths=[_strip(rows, length=length)])
    cols = 2
    reference = np.repeat(_folded(model, rows, span)[None], fps * seconds, axis=0)
    drive = still_drive(model, fps * seconds, reference=reference, damping=2.0)
    x = bake_cloth(model, drive).positions

    lowest = 2.0 - x[-1, :, 2].min()
    if rows % 2 == 0:  # an odd number of links: the lowest point is between two rows
        middle = x[-1, (rows // 2 - 1) * cols : (rows // 2 + 1) * cols, 2]
        lowest = 2.0 - middle.mean()
    expected = _catenary_sag(length, span)
    assert abs(lowest - expected) <= 0.02 * expected
    assert np.abs(_column_stretch(model, x)[1:]).max() <= 0.005  # every link, every frame
    assert np.abs(np.diff(x[-fps:], axis=0)).max() * fps < 0.01  # at rest (m/s)


@pytest.mark.parametrize("rows", [21, 20])
@pytest.mark.parametrize("span", [0.3, 0.9])
def test_undamped_strip_between_two_pins_never_gains_energy(rows, span):
    # Output on the 240 Hz substep grid so central differences measure the solver's own
    # velocities; bending off so gravity and motion hold all the energy. Before the spans the
    # meeting link's XPBD and the sweep's one-sided hanging gained 0.4-42 J on a 2-12 J swing.
    fps = 240
    model = build_cloth_model(cloths=[_strip(rows)])
    reference = np.repeat(_folded(model, rows, span)[None], 4 * fps, axis=0)
    drive = still_drive(model, 4 * fps, fps=fps, reference=reference, damping=0.0,
                        bend_compliance=np.inf)
    x = bake_cloth(model, drive).positions
    velocity = (x[2:] - x[:-2]) * (0.5 * fps)
    energy = 0.5 * np.square(velocity).sum(axis=(1, 2)) + G * x[1:-1, :, 2].sum(axis=1)
    energy = energy[fps // 10 :]  # after the fold's first link has snapped to length
    later = np.maximum.accumulate(energy[::-1])[::-1]
    swing = energy[0] - energy.min()
    assert swing > 1.0
    assert (later[1:] - energy[:-1]).max() <= 1e-3 * swing
    assert np.abs(_column_stretch(model, x)[fps // 10 :]).max() <= 0.005
