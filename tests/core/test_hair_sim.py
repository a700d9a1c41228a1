"""Strand-hair physics of the guide solver: inextensibility in a fast head turn, local shape,
shock propagation, wind decorrelation, voxel friction, shape range, validation and fuzzing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from waft import core
from waft.core.strands.constraints.local_shape import curl_shape_error
from waft.core.strands.constraints.voxel import VoxelCoefficients, solve_voxel_friction

FPS = 24


def scalp_strands(count: int, particles: int, *, length: float = 0.3, radius: float = 0.1,
                  seed: int = 0) -> np.ndarray:
    """Straight strands (count, particles, 3) growing outward-and-down from a head at z = 1.6."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.0, 2.0 * np.pi, count)
    phi = rng.uniform(0.3, 1.3, count)
    normal = np.stack([np.sin(phi) * np.cos(theta), np.sin(phi) * np.sin(theta), np.cos(phi)], -1)
    roots = np.array([0.0, 0.0, 1.6]) + radius * normal
    direction = normal * 0.4 + np.array([0.0, 0.0, -1.0])
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    steps = length / (particles - 1) * np.arange(particles)
    return roots[:, None, :] + direction[:, None, :] * steps[None, :, None]


def turning_reference(rest: np.ndarray, frames: int, degrees_per_second: float) -> np.ndarray:
    """Rest strands rotated about the vertical head axis, (F, S, P, 3)."""
    angle = np.radians(degrees_per_second) * np.arange(frames) / FPS
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros((frames, 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
    centre = np.array([0.0, 0.0, 1.6])
    return np.einsum("fij,spj->fspi", R, rest - centre) + centre


def build(rig, rest: np.ndarray, frames: int, **params):
    reference = params.pop("reference", None)
    return rig.build(list(rest), frames=frames, fps=FPS, reference=reference, **params)


def segment_lengths(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(np.diff(x, axis=-2), axis=-1)


@pytest.mark.parametrize("shock", [0.0, 0.8])
def test_head_turn_720_deg_per_second_keeps_lengths_within_0_1_percent(rig, shock):
    rest = scalp_strands(40, 16)
    frames = 24
    # Turn at 720 deg/s from rest: a sudden start is the hardest case for the lengths.
    reference = turning_reference(rest, frames, 720.0)
    model, drive = build(rig, rest, frames, reference=reference, damping=1.0, drag=0.5,
                         shape_stiffness=0.05, bend_compliance=0.01, shock_propagation=shock)
    x = core.bake(model, drive).positions
    rest_length = segment_lengths(rest)
    stretch = np.abs(segment_lengths(x) / rest_length[None] - 1.0)
    assert stretch.max() < 1e-3
    # The turn really moved the strands (the tips travel over a metre).
    assert np.linalg.norm(x[-1, :, -1] - x[0, :, -1], axis=-1).min() > 0.05


def helix(particles: int = 25) -> np.ndarray:
    i = np.arange(particles)
    angle = i * 2.0 * np.pi / 6.0
    return np.stack([0.02 * np.cos(angle) - 0.02, 0.02 * np.sin(angle), 1.0 - 0.005 * i], -1)


@pytest.mark.parametrize("motion", [None, "swing"])
def test_curl_keeps_its_shape_under_gravity_with_local_shape_only(rig, motion):
    """A helix hanging from its root: without local shape it pulls straight (every skip-3
    distance grows by ~45 %); with it the shape error stays a few percent."""
    root_motion = None
    if motion == "swing":
        root_motion = lambda t: np.stack([0.3 * np.sin(6 * t), 0 * t, 0 * t], -1)  # noqa: E731
    errors = {}
    for stiffness in (0.0, 0.9):
        model, drive = rig.build([helix()], frames=96, fps=FPS, damping=1.0,
                                 local_stiffness=stiffness, root_motion=root_motion)
        x = core.bake(model, drive).positions
        errors[stiffness] = curl_shape_error(x, drive.reference, model.active)[48:, 0].max()
    assert errors[0.0] > 0.35
    assert errors[0.9] < (0.05 if motion is None else 0.2)
    assert errors[0.9] < errors[0.0] / 2.5


def test_local_shape_leaves_a_curl_at_rest_exactly_where_it_is(rig):
    rest = helix()
    model, drive = rig.build([rest], frames=24, fps=FPS, gravity=(0.0, 0.0, 0.0),
                             local_stiffness=1.0)
    x = core.bake(model, drive).positions
    assert np.abs(x - drive.reference).max() < 1e-9


def test_shock_propagation_carries_a_sudden_turn_down_the_strand(rig):
    rest = scalp_strands(10, 16, length=0.4)
    frames = 12
    reference = turning_reference(rest, frames, 720.0)
    lag = {}
    for shock in (0.0, 1.0):
        model, drive = build(rig, rest, frames, reference=reference, damping=1.0,
                             shock_propagation=shock, gravity=(0.0, 0.0, 0.0))
        x = core.bake(model, drive).positions
        lag[shock] = np.linalg.norm(x[:, :, -1] - reference[:, :, -1], axis=-1).max()
    assert lag[1.0] < 1e-3  # carried rigidly with the head
    assert lag[0.0] > 0.1


def tip_paths(rig, **wind):
    rest = np.stack([rig.vertical_chain(bones=8, length=0.04, top=(0.05 * s, 0.0, 1.0))
                     for s in range(12)])
    model, drive = rig.build(list(rest), frames=96, fps=FPS, damping=1.0, drag=2.0,
                             shape_stiffness=0.02, bend_compliance=0.01,
                             wind_velocity=(4.0, 0.0, 0.0), wind_seed=5, **wind)
    return core.bake(model, drive).positions[24:, :, -1]


def mean_pairwise_correlation(paths: np.ndarray) -> float:
    v = np.diff(paths, axis=0).reshape(paths.shape[0] - 1, paths.shape[1], 3)
    series = np.concatenate([v[:, :, 0], v[:, :, 1]], axis=0).T  # (S, 2(F-1))
    c = np.corrcoef(series)
    return float(c[np.triu_indices_from(c, 1)].mean())


def test_wind_decorrelates_strands_with_phase_tangent_and_direction(rig):
    """Twelve identical strands side by side: a gusty wind moves them as one sheet; with
    per-strand phase, wandering direction and tangent response they move out of step."""
    sheet = tip_paths(rig, wind_gust=0.6, wind_turbulence=0.0)
    varied = tip_paths(rig, wind_gust=0.6, wind_turbulence=0.0, wind_strand_variation=1.0,
                       wind_tangent_response=1.0, wind_direction_variation=0.5)
    assert mean_pairwise_correlation(sheet) > 0.9
    assert mean_pairwise_correlation(varied) < 0.6
    # Still a wind: the tips are blown downwind on average.
    assert varied[..., 0].mean() > 0.02


def test_tangent_response_removes_the_wind_along_the_strand():
    from waft.core.forces import tangent_response
    x = np.array([[[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0]]])
    wind = np.broadcast_to(np.array([3.0, 4.0, 0.0]), (1, 3, 3))
    out = tangent_response(wind, x, np.array([1.0]))
    assert np.allclose(out, [[0.0, 4.0, 0.0]] * 3)
    assert np.allclose(tangent_response(wind, x, np.array([0.0])), wind)


def test_wind_direction_stays_inside_its_cone():
    from waft.core.forces import wind_direction
    base = np.tile([[5.0, 0.0, 0.0]], (50, 1))
    angles = []
    for t in np.linspace(0, 30, 60):
        w = wind_direction(wind_velocity=base, variation=np.full(50, 0.4),
                           seed=np.arange(50), t=t)
        assert np.allclose(np.linalg.norm(w, axis=1), 5.0)
        angles.append(np.arccos(np.clip(w[:, 0] / 5.0, -1, 1)))
    angles = np.array(angles)
    assert angles.max() <= 0.4 + 1e-9
    assert angles.max() > 0.2  # it does wander


def test_voxel_friction_reduces_relative_velocity_and_keeps_momentum():
    rng = np.random.default_rng(3)
    S, P = 200, 8
    x = rng.uniform(-0.1, 0.1, (3, S, P))
    v = rng.normal(0.0, 1.0, (3, S, P)) * 1e-3 + np.array([2e-3, 0.0, -1e-3])[:, None, None]
    x_prev = x - v
    inv_mass = rng.uniform(0.5, 2.0, (S, P))
    movable = np.ones((S, P), dtype=bool)
    movable[:, 0] = False
    c = VoxelCoefficients(movable=movable, inv_mass=inv_mass, factor=np.full((S, P), 0.5),
                          strand_group=np.zeros(S, dtype=int), resolution=np.full(S, 4))
    before = x - x_prev
    solve_voxel_friction(x, x_prev, c)
    after = x - x_prev
    mass = np.where(movable, 1.0 / inv_mass, 0.0)
    p_before = (before * mass).sum(axis=(1, 2))
    p_after = (after * mass).sum(axis=(1, 2))
    assert np.allclose(p_before, p_after, rtol=0, atol=1e-15 * S * P)
    mean = p_before / mass.sum()
    spread_before = np.sqrt((((before - mean[:, None, None]) ** 2).sum(0) * mass).sum())
    spread_after = np.sqrt((((after - mean[:, None, None]) ** 2).sum(0) * mass).sum())
    assert spread_after < 0.8 * spread_before
    assert np.array_equal(after[:, :, 0], before[:, :, 0])  # roots untouched


def test_voxel_friction_in_a_bake_makes_neighbours_move_together(rig):
    rest = scalp_strands(30, 10, length=0.25)
    spread = {}
    for friction in (0.0, 0.8):
        model, drive = build(rig, rest, 48, damping=0.5, drag=1.0, wind_velocity=(3.0, 0, 0),
                             wind_turbulence=1.0, wind_seed=2, voxel_friction=friction,
                             voxel_resolution=4)
        x = core.bake(model, drive).positions
        v = np.diff(x[12:, :, -1], axis=0)
        spread[friction] = np.std(v - v.mean(axis=1, keepdims=True))
    assert spread[0.8] < 0.8 * spread[0.0]


def test_shape_range_keeps_only_the_scalp_part_of_the_shape(rig):
    rest = rig.vertical_chain(bones=10, length=0.03)
    rest[:, 0] += np.linspace(0, 0.2, 11)  # slanted, so gravity moves what is not held
    model, drive = rig.build([rest], frames=48, fps=FPS, damping=2.0, shape_stiffness=1.0,
                             shape_range=0.3, gravity=(0.0, 0.0, 9.81))  # buoyancy: up
    x = core.bake(model, drive).positions[-1, 0]
    moved = np.linalg.norm(x - rest, axis=-1)
    assert moved[1:4].max() < 1e-6  # within 30 % of the length: held exactly
    assert moved[-1] > 0.05  # the free part floats up
    assert x[-1, 2] > rest[-1, 2]


@pytest.mark.parametrize("field, value", [
    ("local_stiffness", 1.5), ("shock_propagation", -0.1), ("voxel_friction", np.nan),
    ("voxel_resolution", 0), ("voxel_resolution", 2.5), ("wind_tangent_response", 2.0),
    ("shape_range", 1.2), ("wind_direction_variation", 4.0),
])
def test_bad_hair_settings_name_the_field(rig, field, value):
    model, drive = rig.build([rig.vertical_chain(bones=3, length=0.1)], frames=4,
                             **{field: value})
    with pytest.raises(core.SetupError, match=field):
        core.bake(model, drive)


def test_defaults_keep_older_positional_params_working(rig):
    params = core.StrandParams.defaults(1, 4)
    fields = {f: getattr(params, f) for f in ("damping", "shape_stiffness", "shape_decay",
              "stretch_compliance", "bend_compliance", "use_tether", "max_distance", "radius",
              "gravity", "world_motion_fraction", "wind_velocity", "wind_turbulence",
              "wind_gust", "wind_seed", "drag")}
    old_style = core.StrandParams(*fields.values())
    assert old_style.local_stiffness is None and old_style.voxel_resolution is None
    model, drive = rig.build([rig.vertical_chain(bones=3, length=0.1)], frames=4)
    drive = core.Drive(fps=drive.fps, reference=drive.reference, kinematic=drive.kinematic,
                       space=drive.space, collider_matrix=drive.collider_matrix,
                       params=old_style)
    assert np.all(np.isfinite(core.bake(model, drive).positions))


finite = dict(allow_nan=False, allow_infinity=False)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    local=st.floats(0.0, 1.0, **finite), shock=st.floats(0.0, 1.0, **finite),
    friction=st.floats(0.0, 1.0, **finite), resolution=st.integers(1, 40),
    variation=st.floats(0.0, 3.0, **finite), response=st.floats(0.0, 1.0, **finite),
    spread=st.floats(0.0, 1.0, **finite), shape_range=st.floats(0.0, 1.0, **finite),
    stiffness=st.floats(0.0, 1.0, **finite), turn=st.floats(-1500.0, 1500.0, **finite),
    gravity=st.floats(-20.0, 20.0, **finite), drag=st.floats(0.0, 20.0, **finite),
)
def test_random_hair_settings_stay_finite_and_bounded(rig, local, shock, friction, resolution,
                                                      variation, response, spread, shape_range,
                                                      stiffness, turn, gravity, drag):
    rest = scalp_strands(6, 8, length=0.2, seed=1)
    reference = turning_reference(rest, 12, turn)
    model, drive = build(rig, rest, 12, reference=reference, local_stiffness=local,
                         shock_propagation=shock, voxel_friction=friction,
                         voxel_resolution=resolution, wind_direction_variation=variation,
                         wind_tangent_response=response, wind_strand_variation=spread,
                         shape_range=shape_range, shape_stiffness=stiffness,
                         gravity=(0.0, 0.0, gravity), drag=drag, wind_velocity=(5.0, 1.0, 0.0),
                         wind_gust=0.5, damping=1.0)
    x = core.bake(model, drive).positions
    assert np.all(np.isfinite(x))
    assert np.all(np.linalg.norm(x - drive.reference, axis=-1) < 1.0)


@pytest.mark.parametrize("points", [1, 56, 4096, 5000])
def test_turbulence_noise_hashes_its_corners_at_once_with_the_same_bits(points):
    """`forces.value_noise_3d` hashes a cell's eight corners in one call for small point sets
    and corner by corner for large ones: both are the trilinear sum of the corner values in
    corner order, bit for bit (here against that sum written out)."""
    from waft.core.forces import lattice_value, value_noise_3d

    rng = np.random.default_rng(points)
    p = rng.normal(scale=3.0, size=(points, 3))
    seed = rng.integers(0, 1000, size=points)
    i = np.floor(p)
    w = p - i
    w = w * w * (3.0 - 2.0 * w)
    expected = 0.0
    for dx in (0, 1):
        fx = w[:, 0] if dx else 1.0 - w[:, 0]
        for dy in (0, 1):
            fy = w[:, 1] if dy else 1.0 - w[:, 1]
            for dz in (0, 1):
                fz = w[:, 2] if dz else 1.0 - w[:, 2]
                expected = expected + fx * fy * fz * lattice_value(
                    seed, i[:, 0] + dx, i[:, 1] + dy, i[:, 2] + dz)
    np.testing.assert_array_equal(value_noise_3d(seed, p), expected)
    assert np.all(np.abs(expected) <= 1.0)


@pytest.mark.parametrize("t", [2.7, np.linspace(-3.0, 9.0, 12)])
def test_gust_noise_hashes_both_ends_at_once_with_the_same_bits(t):
    """`forces.value_noise_1d` hashes an interval's two ends in one call, for per-strand times
    and for one time shared by every strand: the written-out blend of the two, bit for bit."""
    from waft.core.forces import lattice_value, value_noise_1d

    seed = np.arange(12) * 7 + 3
    times = np.broadcast_to(np.asarray(t, dtype=np.float64), seed.shape)
    i = np.floor(times)
    w = times - i
    w = w * w * (3.0 - 2.0 * w)
    a, b = lattice_value(seed, i), lattice_value(seed, i + 1)
    np.testing.assert_array_equal(value_noise_1d(seed, t), a + (b - a) * w)
