"""Guides from a hair Curves object: roots follow the surface, the groom is kept, the solved
guides play back from a packed bake, render strands follow, bad guides fail cleanly."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import hair_rigs  # noqa: E402
import waft_rigs  # noqa: E402

from waft.core.hair import closest_on_mesh  # noqa: E402

G, P = 12, 6
FRAMES = range(1, 13)


@pytest.fixture
def groom(scene, tmp_path):
    scene.frame_start, scene.frame_end = 1, 12
    ob, scalp, head = hair_rigs.curves_head(scene, guides=G, points=P)
    hair_rigs.save_first_on_42(tmp_path)
    return ob, scalp, head


def test_guides_follow_the_surface_keep_lengths_and_the_groom(scene, bake_api, groom):
    ob, scalp, _head = groom
    ob.waft.shape_stiffness = 0.02
    groom_before = hair_rigs.original_points(ob).copy()
    report = bake_api.bake_scene(scene)
    hair = report.systems["hair"]
    assert [s.name for s in hair.setups] == ["Groom"] and hair.setups[0].guides == G
    np.testing.assert_array_equal(hair_rigs.original_points(ob), groom_before)
    rest = groom_before.reshape(G, P, 3)
    rest_lengths = np.linalg.norm(np.diff(rest, axis=1), axis=-1)
    tips = {}
    for f in FRAMES:
        scene.frame_set(f)
        points = hair_rigs.evaluated_points(ob).reshape(G, P, 3)
        vertices, triangles = hair_rigs.evaluated_triangles(scalp)
        on = closest_on_mesh(points[:, 0], vertices=vertices, triangles=triangles).position
        assert np.max(np.linalg.norm(on - points[:, 0], axis=1)) < 1e-5, f
        lengths = np.linalg.norm(np.diff(points, axis=1), axis=-1)
        np.testing.assert_allclose(lengths, rest_lengths, rtol=0.01)
        tips[f] = points[:, -1]
    # The head turned 90° by frame 7: the tips moved, and lag behind a rigid turn.
    rigid = np.einsum("ij,gj->gi", [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
                      tips[1] - np.array(hair_rigs.HEAD)) + np.array(hair_rigs.HEAD)
    assert np.median(np.linalg.norm(tips[7] - tips[1], axis=1)) > 0.05
    assert np.median(np.linalg.norm(tips[7] - rigid, axis=1)) > 0.005


def test_render_strands_grow_on_the_surface_and_clear_removes_the_guides_bake(
        scene, bake_api, groom):
    ob, scalp, _head = groom
    ob.waft_hair.render_strands = True
    ob.waft_hair.count = 500
    ob.waft_hair.points = 8
    bake_api.bake_scene(scene)
    strands = scene.objects["Groom Strands"]
    for f in (1, 6, 12):
        scene.frame_set(f)
        roots = hair_rigs.evaluated_points(strands).reshape(500, 8, 3)[:, 0]
        vertices, triangles = hair_rigs.evaluated_triangles(scalp)
        on = closest_on_mesh(roots, vertices=vertices, triangles=triangles).position
        assert np.max(np.linalg.norm(on - roots, axis=1)) < 1e-5
    assert ob.modifiers.get("Waft Strands") is not None
    assert "Groom" in bake_api.clear_bake(scene)
    assert ob.modifiers.get("Waft Strands") is None


def test_render_strands_of_hair_curves_are_pushed_out_of_a_body_mesh(scene, bake_api, groom):
    """Hair Curves guides take the same path as guide chains: their render strands end outside
    a body-mesh head (flat faces, turning with the head) by their radius."""
    ob, _scalp, head = groom
    hair = ob.waft_hair
    hair.render_strands, hair.count, hair.points, hair.storage = True, 500, 8, "POINTS"
    hair.root_radius, hair.tip_radius = 0.003, 0.001
    mesh = hair_rigs.mesh_head(scene, head, 0.099, hair_rigs.HEAD, depth=0.12)
    bake_api.bake_scene(scene)
    strands = scene.objects["Groom Strands"]
    radius = np.tile(np.linspace(0.003, 0.001, 8)[1:], 500)
    resting = 0
    for f in (1, 6, 12):
        scene.frame_set(f)
        x = hair_rigs.evaluated_points(strands).reshape(500, 8, 3)[:, 1:].reshape(-1, 3)
        sd = hair_rigs.convex_signed_distance(x.astype(np.float64), mesh)
        assert (sd - radius).min() > -1e-5, (f, float((sd - radius).min()))
        resting += int(np.sum(np.abs(sd - radius) < 2e-5))
    assert resting > 20, resting  # the mesh held strands on its faces


def _setup_error(waft):
    return sys.modules[waft.__name__ + ".core.errors"].SetupError


def _fails_cleanly(scene, bake_api, waft, pattern):
    before = (waft_rigs.fingerprint(scene), sorted(o.name for o in bpy.data.objects),
              [len(o.modifiers) for o in bpy.data.objects], len(bpy.data.hair_curves))
    with pytest.raises(_setup_error(waft)) as info:
        bake_api.bake_scene(scene)
    assert re.search(pattern, str(info.value)), str(info.value)
    after = (waft_rigs.fingerprint(scene), sorted(o.name for o in bpy.data.objects),
             [len(o.modifiers) for o in bpy.data.objects], len(bpy.data.hair_curves))
    assert after == before


def test_mixed_point_counts(scene, bake_api, waft, groom):
    ob = groom[0]
    data = bpy.data.hair_curves.new("Mixed")
    data.add_curves([4, 4, 5])
    data.position_data.foreach_set("vector", np.linspace(0, 1, 13 * 3).astype(np.float32))
    data.surface = ob.data.surface
    ob.data = data
    _fails_cleanly(scene, bake_api, waft,
                   r"Curves 'Groom'.*same number of points.*curve 2 has 5")


def test_zero_length_strand(scene, bake_api, waft, groom):
    ob = groom[0]
    points = hair_rigs.original_points(ob).reshape(G, P, 3)
    points[3] = points[3, 0]
    ob.data.position_data.foreach_set("vector", points.ravel())
    _fails_cleanly(scene, bake_api, waft, r"Curves 'Groom'.*curve 3 has a zero-length segment")


def test_surface_without_faces(scene, bake_api, waft, groom):
    _ob, scalp, _head = groom
    mesh = bpy.data.meshes.new("Points")
    mesh.from_pydata([(0, 0, 1.6), (0.1, 0, 1.6), (0, 0.1, 1.6)], [], [])
    scalp.data = mesh
    _fails_cleanly(scene, bake_api, waft, r"Curves 'Groom'.*'Scalp' has no faces")


def test_density_zero_on_the_surface(scene, bake_api, waft, groom):
    ob, scalp, _head = groom
    group = scalp.vertex_groups.new(name="Density")
    group.add(list(range(len(scalp.data.vertices))), 0.0, 'REPLACE')
    ob.waft_hair.render_strands = True
    ob.waft_hair.density_group = "Density"
    _fails_cleanly(scene, bake_api, waft, r"Curves 'Groom'.*zero everywhere")


def test_guides_collide_with_the_scene_colliders(scene, bake_api, tmp_path):
    # Horizontal guides fall under gravity onto a sphere below them: every point ends outside
    # the sphere (colliders, their matrices and the unit scale reach the solver).
    scene.frame_start, scene.frame_end = 1, 24
    ob, _scalp, _head = hair_rigs.curves_head(scene, guides=6, points=6, turn_deg=0.0)
    points = hair_rigs.original_points(ob).reshape(6, 6, 3)
    points[:] = points[:, :1] + np.linspace(0, 0.3, 6)[None, :, None] * np.array([1.0, 0, 0])
    ob.data.position_data.foreach_set("vector", points.ravel())
    # A big ball whose top is 0.15 m below the head centre: hanging, the 0.3 m guides would
    # reach 0.1 m into it.
    centre = np.array(hair_rigs.HEAD) + np.array([0.0, 0.0, -0.6])
    waft_rigs.sphere_collider(scene, "Ball", tuple(centre), 0.45)
    ob.waft.shape_stiffness = 0.0
    ob.waft.radius = 0.0
    hair_rigs.save_first_on_42(tmp_path)
    bake_api.bake_scene(scene)
    lowest = []
    for f in range(1, 25, 4):
        scene.frame_set(f)
        p = hair_rigs.evaluated_points(ob)
        assert np.min(np.linalg.norm(p - centre, axis=1)) >= 0.45 - 2e-3, f
        lowest.append(p[:, 2].min())
    assert lowest[-1] < lowest[0] - 0.05  # they did fall onto the ball


def _tips_first_and_after_turn(scene, bake_api, ob) -> tuple[np.ndarray, np.ndarray]:
    bake_api.bake_scene(scene)
    tips = []
    for f in (1, 7):
        scene.frame_set(f)
        tips.append(hair_rigs.evaluated_points(ob).reshape(G, P, 3)[:, -1].copy())
    return tips[0], tips[1]


def test_hair_settings_reach_the_curves_guides(scene, bake_api, groom):
    """Object.waft hair settings (here shock propagation) act on Curves guides as on chains:
    full shock carries the head's turn down the strands, so the tips lag far less."""
    ob, _scalp, _head = groom
    ob.waft.shape_stiffness = 0.02
    # No gravity: the strands would also sag over these frames, by about as much as full shock
    # leaves of the lag (with energy-conserving lengths they fall freely from the groom).
    ob.waft.gravity_factor = 0.0
    lags = []
    for shock in (0.0, 1.0):
        ob.waft.shock_propagation = shock
        first, turned = _tips_first_and_after_turn(scene, bake_api, ob)
        rigid = np.einsum("ij,gj->gi", [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
                          first - np.array(hair_rigs.HEAD)) + np.array(hair_rigs.HEAD)
        lags.append(np.median(np.linalg.norm(turned - rigid, axis=1)))
    assert lags[1] < 0.5 * lags[0], lags
