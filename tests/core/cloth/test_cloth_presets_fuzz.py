"""Fabric presets read as the fabric, and random settings never produce NaN or blow up."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from waft.core.cloth import bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest
from waft.core.cloth.params import FIELDS
from waft.core.cloth.presets import DESCRIPTIONS, FABRICS

from .conftest import still_drive

MODEL = build_cloth_model(cloths=[grid_rest(6, 5)])


@functools.cache
def windy(fabric: str, frames: int = 48):
    """The same gusty wind and a swaying character for every fabric (cached, read-only)."""
    t = np.arange(frames) / 24.0
    ref = np.repeat(MODEL.rest_positions[None], frames, axis=0)
    ref[:, :, 0] += 0.15 * np.sin(2 * np.pi * t)[:, None]
    values = dict(FABRICS[fabric])
    values.update(wind_velocity=(0.0, 5.0, 0.0), wind_turbulence=0.3)
    return bake_cloth(MODEL, still_drive(MODEL, frames, reference=ref, **values)).positions


def test_every_preset_is_complete_and_valid():
    assert set(FABRICS) == {"TWEED", "SILK", "LEATHER", "RUBBER", "DOWN_JACKET", "VEIL"}
    assert set(DESCRIPTIONS) == set(FABRICS)
    for name, values in FABRICS.items():
        assert set(values) <= set(FIELDS), name
        assert np.all(np.isfinite(windy(name)))


def test_presets_read_as_their_fabric():
    """Under the same wind a veil and silk billow far more than leather; rubber stretches
    vertically, woven fabrics (hard vertical links) do not."""
    lift = {name: windy(name)[24:, ~MODEL.pinned, 1].mean() for name in FABRICS}
    assert lift["VEIL"] > lift["TWEED"] > lift["LEATHER"]
    assert lift["SILK"] > 2 * lift["LEATHER"]
    v = MODEL.vertical
    a, b = MODEL.stretch.a[v], MODEL.stretch.b[v]

    def stretch(name):
        x = windy(name)
        return (np.linalg.norm(x[:, b] - x[:, a], axis=-1) / MODEL.stretch.rest[v]).max()

    assert stretch("RUBBER") > 1.01
    assert stretch("TWEED") <= 1.0 + 1e-9


compliance = st.one_of(st.just(0.0), st.just(np.inf), st.floats(1e-9, 10.0))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stretch=compliance, shear=compliance, bend=compliance, horizontal=compliance,
    hard=st.booleans(), damping=st.floats(0.0, 50.0), drag=st.floats(0.0, 20.0),
    fraction=st.floats(0.0, 1.0), wind=st.floats(-20.0, 20.0), turbulence=st.floats(0.0, 1.0),
    contact=st.floats(0.0, 100.0), edge=st.floats(0.0, 5.0), backstop=st.one_of(
        st.just(np.inf), st.floats(0.0, 0.5)), max_scale=st.floats(0.0, 3.0),
    speed=st.floats(0.0, 10.0), iterations=st.integers(1, 3),
)
def test_random_settings_never_nan_or_explode(stretch, shear, bend, horizontal, hard, damping,
                                              drag, fraction, wind, turbulence, contact, edge,
                                              backstop, max_scale, speed, iterations):
    from waft.core import ColliderKind, ColliderSet, SolverSettings

    rest = grid_rest(5, 4, max_distance=0.3)
    colliders = ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.15])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames = 24
    t = np.arange(frames) / 24.0
    offset = np.zeros((frames, 3))
    offset[:, 0] = speed * np.minimum(t, 0.5)  # run, then stop dead
    ref = rest.rest_positions[None] + offset[:, None]
    space = np.repeat(np.eye(4)[None, None], frames, axis=0)
    space[:, 0, :3, 3] = offset
    M = np.repeat(np.eye(4)[None, None], frames, axis=0)
    M[:, 0, :3, 3] = offset + (0.5, 0.1, -0.5)
    drive = still_drive(model, frames, reference=ref, space=space, collider_matrix=M,
                        stretch_compliance=stretch, shear_compliance=shear,
                        bend_compliance=bend, horizontal_compliance=horizontal,
                        use_hard_vertical=hard, damping=damping, drag=drag,
                        world_motion_fraction=fraction, wind_velocity=(wind, wind / 2, 0.0),
                        wind_turbulence=turbulence, contact_damping=contact,
                        edge_damping_scale=edge, edge_wind_scale=edge,
                        edge_world_motion_scale=edge, edge_max_distance_scale=edge,
                        backstop_distance=backstop, max_distance_scale=max_scale)
    x = bake_cloth(model, drive, SolverSettings(iterations=iterations)).positions
    assert np.all(np.isfinite(x))
    # Max distance bounds every vertex (0.3 m times the scales), whatever else happens.
    limit = 0.3 * max_scale * np.where(model.edge_vertex, edge, 1.0)
    assert np.all(np.linalg.norm(x - ref, axis=-1) <= limit + 1e-9)


@pytest.mark.parametrize("name", sorted(FABRICS))
def test_preset_values_are_plain_python(name):
    """The add-on copies values onto Blender properties: floats, bools and 3-tuples only."""
    for key, value in FABRICS[name].items():
        assert isinstance(value, (float, bool, tuple)), (key, value)
