"""Drive handling: several cloths in one model, animated settings, pre-roll, off-grid frame
rates, validation of the drive."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core import SetupError, SolverSettings
from waft.core.cloth import ClothDrive, ClothParams, bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest

from .conftest import still_drive


def swaying_reference(rest_positions, frames, amplitude=0.3):
    t = np.arange(frames) / 24.0
    ref = np.repeat(rest_positions[None], frames, axis=0)
    ref[:, :, 0] += amplitude * np.sin(2 * np.pi * t)[:, None]
    return ref


def test_cloths_baked_together_equal_cloths_baked_alone():
    """All cloths share every vectorised expression, yet each moves exactly as if alone
    (per-cloth settings stay per cloth, colours never mix cloths)."""
    a = grid_rest(6, 5, setup="A")
    b = grid_rest(4, 7, setup="B", origin=(2.0, 0.0, 0.0))
    frames = 36
    both = build_cloth_model(cloths=[a, b])
    ref = swaying_reference(both.rest_positions, frames)
    settings = dict(damping=[0.5, 3.0], bend_compliance=[1e-3, 0.5],
                    wind_velocity=[(0.0, 2.0, 0.0), (1.0, 0.0, 0.0)], wind_turbulence=[0.5, 0.0],
                    use_hard_vertical=[True, False])
    together = bake_cloth(both, still_drive(both, frames, reference=ref, **settings)).positions
    for c, rest in enumerate((a, b)):
        alone_model = build_cloth_model(cloths=[rest])
        lo, hi = both.vertex_offset[c], both.vertex_offset[c + 1]
        one = {k: [v[c]] for k, v in settings.items()}
        alone = bake_cloth(alone_model, still_drive(alone_model, frames,
                                                    reference=ref[:, lo:hi], **one)).positions
        np.testing.assert_allclose(together[:, lo:hi], alone, atol=1e-12)


def test_animated_max_distance_scale_pulls_the_cloth_onto_its_reference():
    rest = grid_rest(6, 5, max_distance=0.5)
    model = build_cloth_model(cloths=[rest])
    frames = 48
    ref = swaying_reference(model.rest_positions, frames)
    scale = np.clip(1.0 - np.arange(frames) / 24.0, 0.0, 1.0)[:, None]  # keyed 1 -> 0 in 1 s
    x = bake_cloth(model, still_drive(model, frames, reference=ref,
                                      max_distance_scale=scale)).positions
    distance = np.linalg.norm(x - ref, axis=-1)
    allowed = 0.5 * scale * np.where(model.edge_vertex, 1.5, 1.0)[None]
    assert np.all(distance <= allowed + 1e-9)
    assert distance[:12].max() > 0.05
    assert distance[24:].max() < 1e-9


def test_preroll_settles_the_cloth_before_frame_zero():
    model = build_cloth_model(cloths=[grid_rest(6, 5)])
    drive = still_drive(model, 12, wind_velocity=(0.0, 5.0, 0.0), drag=2.0)
    cold = bake_cloth(model, drive).positions
    warm = bake_cloth(model, drive, SolverSettings(preroll_frames=48)).positions
    assert np.abs(cold[0] - model.rest_positions).max() == 0.0
    assert warm[0, ~model.pinned, 1].mean() > 0.1  # already blown back at frame 0
    np.testing.assert_array_equal(warm[0, model.pinned], model.rest_positions[model.pinned])


def test_off_grid_frame_rate_keeps_vertical_links_exact():
    """At 25 fps frames fall between 1/240 s substeps: the blend of the two states is
    re-swept, so hard vertical links stay at rest length on every output frame."""
    model = build_cloth_model(cloths=[grid_rest(8, 6)])
    frames = 50
    t = np.arange(frames) / 25.0
    ref = np.repeat(model.rest_positions[None], frames, axis=0)
    ref[:, :, 0] += 0.4 * np.sin(2 * np.pi * 1.3 * t)[:, None]
    x = bake_cloth(model, still_drive(model, frames, fps=25.0, reference=ref)).positions
    v = model.vertical
    a, b = model.stretch.a[v], model.stretch.b[v]
    ratio = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[v]
    np.testing.assert_allclose(ratio, 1.0, atol=1e-9)


@pytest.mark.parametrize("change, message", [
    (dict(fps=0.0), "fps"),
    (dict(reference=np.full((4, 30, 3), np.nan)), "reference position of vertex 0"),
    (dict(reference=np.zeros((4, 29, 3))), "reference has shape"),
    (dict(space=np.zeros((4, 1, 4, 4))), "zero or negative scale"),
    (dict(reset_frames=(7,)), "reset frame 7"),
])
def test_bad_drive_is_rejected(change, message):
    model = build_cloth_model(cloths=[grid_rest(6, 5, setup="Cape")])
    fields = dict(fps=24.0, reference=np.repeat(model.rest_positions[None], 4, axis=0),
                  space=np.broadcast_to(np.eye(4), (4, 1, 4, 4)),
                  collider_matrix=np.zeros((4, 0, 4, 4)), params=ClothParams.defaults(1))
    fields.update(change)
    with pytest.raises(SetupError, match=message):
        bake_cloth(model, ClothDrive(**fields))
