"""Body-mesh colliders through the whole pipeline: a mesh object with Waft Collider on, its
evaluated (deformed) surface sampled per frame, chains baked against it and played back.

Distances are measured against the evaluated mesh with Blender's own BVH (mathutils), not with
Waft's code."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import bmesh
import bpy
import numpy as np
import pytest
from mathutils import Vector
from mathutils.bvhtree import BVHTree

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402


def signed_distances(scene, ob, points: np.ndarray) -> np.ndarray:
    """Signed distance of world `points` from the evaluated mesh of `ob` (negative inside),
    from Blender's BVH (built on the world-space evaluated vertices) nearest point and the face
    normal there."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = ob.evaluated_get(depsgraph)
    mesh = evaluated.data
    world = evaluated.matrix_world
    vertices = [world @ v.co for v in mesh.vertices]
    tree = BVHTree.FromPolygons(vertices, [tuple(p.vertices) for p in mesh.polygons])
    out = np.empty(len(points))
    for i, p in enumerate(points):
        q = Vector(p)
        location, normal, _, distance = tree.find_nearest(q)
        out[i] = distance if (q - location).dot(normal) >= 0.0 else -distance
    return out


BALL_CENTER, BALL_RADIUS = np.array((0.35, 0.0, 1.75)), 0.12


def _chain_over_ball(scene, frames: int):
    """A six-bone horizontal chain (particle radius 1 cm) that falls onto a mesh ball."""
    ob = rigs.chain_rig(scene, count=6, length=0.1, direction=(1.0, 0.0, 0.0))
    rigs.calm(ob, damping=1.0, radius=0.01)
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, frames
    return ob, rigs.mesh_sphere(scene, "Ball", BALL_CENTER, BALL_RADIUS)


def test_chain_falls_onto_a_mesh_ball_and_stays_outside(scene, bake_api):
    ob, ball = _chain_over_ball(scene, 48)
    center, radius = BALL_CENTER, BALL_RADIUS
    names = rigs.bone_names("Hair", 6)
    report = bake_api.bake_scene(scene)
    simulated = report.chain_positions["Rig: Hair.000"]
    d = np.linalg.norm(simulated - center, axis=-1)
    assert np.any(d < radius + 0.012)  # the ball was hit
    tails = rigs.world_points(scene, ob, names, range(1, 49))[:, 1:]
    scene.frame_set(1)
    sd = signed_distances(scene, ball, tails.reshape(-1, 3))
    # Outside the mesh by the particle radius (played back: keys carry rounding of ~1e-6).
    assert sd.min() > 0.01 - 1e-4


def test_a_closed_mesh_with_flipped_normals_still_collides_from_outside(scene, bake_api):
    """A closed mesh built or flipped inside out (faces pointing in) collides like the same
    mesh pointing out: Waft orients closed meshes by their volume. Before, it took the outside
    for the inside and pulled the chain into the ball."""
    _ob, ball = _chain_over_ball(scene, 30)
    outward = bake_api.bake_scene(scene).chain_positions["Rig: Hair.000"]
    bake_api.clear_bake(scene)
    bm = bmesh.new()
    bm.from_mesh(ball.data)
    bmesh.ops.reverse_faces(bm, faces=bm.faces)
    bm.to_mesh(ball.data)
    bm.free()
    ball.data.update()
    inward = bake_api.bake_scene(scene).chain_positions["Rig: Hair.000"]
    d = np.linalg.norm(outward - BALL_CENTER, axis=-1)
    assert np.any(d < BALL_RADIUS + 0.012)  # the ball was hit
    np.testing.assert_allclose(inward, outward, atol=1e-6)


def skinned_body(scene):
    """A capsule-like mesh (a UV sphere stretched to 0.5 x 0.2 x 0.2 m) skinned to one bone of
    armature 'Body' whose bone rises 0.6 m over frames 1-24 and bends the mesh's top half."""
    arm = rigs.new_armature(scene, "Body", [
        {"name": "Hips", "head": (0.3, 0.0, 0.5), "tail": (0.3, 0.0, 0.8)},
        {"name": "Chest", "head": (0.3, 0.0, 0.8), "tail": (0.3, 0.0, 1.1), "parent": "Hips",
         "connect": True}])
    body = rigs.mesh_sphere(scene, "BodyMesh", (0.3, 0.0, 0.8), 1.0, segments=32, rings=16)
    body.scale = (0.2, 0.2, 0.5)
    bpy.context.view_layer.update()
    hips, chest = body.vertex_groups.new(name="Hips"), body.vertex_groups.new(name="Chest")
    for v in body.data.vertices:
        (chest if v.co.z > 0.0 else hips).add([v.index], 1.0, 'REPLACE')
    modifier = body.modifiers.new("Armature", 'ARMATURE')
    modifier.object = arm
    hips_bone = arm.pose.bones["Hips"]
    for frame, z in ((1, -0.6), (24, 0.0)):
        hips_bone.location = (0.0, z, 0.0)  # bone-local Y is world Z for this bone
        hips_bone.keyframe_insert("location", frame=frame)
    return arm, body


def test_chain_is_pushed_by_a_skinned_body_rising_into_it(scene, bake_api):
    ob = rigs.chain_rig(scene, count=6, length=0.08, direction=(1.0, 0.0, 0.0),
                        start=(0.25, 0.0, 1.4))
    rigs.calm(ob, damping=2.0, radius=0.01)
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, 36
    _, body = skinned_body(scene)
    scene.frame_set(1)
    names = rigs.bone_names("Hair", 6)
    bake_api.bake_scene(scene)
    worst = []
    for frame in range(1, 37):
        tails = rigs.world_points(scene, ob, names, [frame])[0, 1:]
        worst.append(float(signed_distances(scene, body, tails).min()))
    # Hanging straight down from its root (x = 0.25) the chain would be inside the risen body
    # (its top there at z = 1.28 from frame 24): the deformed body lifts it instead. Every
    # tail ends outside it, within rounding of the keys, and rests on it at the end.
    assert min(worst) > 0.01 - 2e-3, worst
    assert worst[-1] < 0.02, worst


def _refused(scene, bake_api, waft, pattern: str) -> None:
    """The bake raises SetupError matching ``pattern`` and the file is as it was."""
    before = rigs.fingerprint(scene)
    error = sys.modules[waft.__name__ + ".core.errors"].SetupError
    with pytest.raises(error) as info:
        bake_api.bake_scene(scene)
    assert re.search(pattern, str(info.value)), info.value
    assert rigs.fingerprint(scene) == before


def test_mesh_collider_without_faces_names_it_and_changes_nothing(scene, bake_api, waft):
    rigs.chain_rig(scene, count=3, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 6
    mesh = bpy.data.meshes.new("Points")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1)], [])
    points = bpy.data.objects.new("PointCloud", mesh)
    scene.collection.objects.link(points)
    points.waft_collider.enabled = True
    _refused(scene, bake_api, waft, r"Collider 'PointCloud'.*needs faces")


def test_non_manifold_mesh_collider_names_it_and_changes_nothing(scene, bake_api, waft):
    """A fin (three faces on one edge) has no inside or outside: a clear error, the file as it
    was. An open mesh (a border edge of one face) is fine."""
    rigs.chain_rig(scene, count=3, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 6
    mesh = bpy.data.meshes.new("Fin")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1)], [],
                     [(0, 1, 2), (1, 0, 3), (0, 1, 4)])
    fin = bpy.data.objects.new("Fin", mesh)
    scene.collection.objects.link(fin)
    fin.waft_collider.enabled = True
    _refused(scene, bake_api, waft, r"Collider 'Fin'.*1 edge.*more than two faces.*Non Manifold")
    mesh.clear_geometry()
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, -1, 0)], [], [(0, 1, 2), (1, 0, 3)])
    bake_api.bake_scene(scene)  # an open sheet bakes


def test_mesh_collider_whose_topology_changes_names_it_and_changes_nothing(scene, bake_api,
                                                                           waft):
    rigs.chain_rig(scene, count=3, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 12
    ball = rigs.mesh_sphere(scene, "Growing", (0.2, 0.0, 1.6), 0.1)
    build = ball.modifiers.new("Build", 'BUILD')
    build.frame_start, build.frame_duration = 1, 10
    scene.frame_set(12)  # the whole mesh at the current frame: the read step accepts it
    _refused(scene, bake_api, waft, r"Collider 'Growing'.*(vertex count|faces)")


def test_mesh_ball_pushes_the_cloth(scene, bake_api):
    sys.path.insert(0, str(Path(__file__).resolve().parent / "cloth"))
    import cloth_rigs

    rig, cage = cloth_rigs.cloth_rig(scene)
    scene.frame_start, scene.frame_end = 1, 24
    center = np.array((0.0, -0.05, 1.75))
    ball = rigs.mesh_sphere(scene, "Ball", center, 0.12)
    # The skinned cage starts up to 4.3 cm inside the ball: the mesh's Depth must reach that
    # far (at the default 2 cm the deepest vertices are not found and stay inside).
    ball.waft_collider.depth = 0.06
    cage.waft_cloth.radius = 0.01
    cloth = bake_api.bake_scene(scene).systems["cloth"]
    positions = cloth.positions["Cage"]
    # Without the collider the cloth would hang through the ball.
    assert np.linalg.norm(cloth.reference["Cage"][0, 6:] - center, axis=-1).min() < 0.12
    # Frame 1 is the skinned start (inside the ball); from the next frame on it is outside the
    # mesh by its radius.
    sd = signed_distances(scene, ball, positions[1:, 6:].reshape(-1, 3))
    assert sd.min() > 0.01 - 1e-4, sd.min()


def test_hair_curves_guides_fall_onto_a_mesh_ball(scene, bake_api, tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent / "hair_render"))
    import hair_rigs

    # Horizontal guides fall under gravity onto a mesh ball below them (as the sphere-empty
    # test in hair_render/test_curves_guides.py): every point ends outside the mesh.
    scene.frame_start, scene.frame_end = 1, 24
    ob, _scalp, _head = hair_rigs.curves_head(scene, guides=6, points=6, turn_deg=0.0)
    points = hair_rigs.original_points(ob).reshape(6, 6, 3)
    points[:] = points[:, :1] + np.linspace(0, 0.3, 6)[None, :, None] * np.array([1.0, 0, 0])
    ob.data.position_data.foreach_set("vector", points.ravel())
    centre = np.array(hair_rigs.HEAD) + np.array([0.0, 0.0, -0.6])
    ball = rigs.mesh_sphere(scene, "Ball", tuple(centre), 0.45, segments=64, rings=32)
    ob.waft.shape_stiffness = 0.0
    ob.waft.radius = 0.005
    hair_rigs.save_first_on_42(tmp_path)
    bake_api.bake_scene(scene)
    lowest = []
    for f in range(1, 25, 4):
        scene.frame_set(f)
        p = hair_rigs.evaluated_points(ob).reshape(6, 6, 3)[:, 1:].reshape(-1, 3)
        assert signed_distances(scene, ball, p).min() >= 0.005 - 1e-4, f
        lowest.append(p[:, 2].min())
    assert lowest[-1] < lowest[0] - 0.05  # they did fall onto the ball


def _figure_eight_into_a_body(scene, bake_api, fps: int, *, body: bool = True) -> np.ndarray:
    """A hanging chain whose root swings a 5 g figure-eight beside a ball mesh carried by the
    root bone (parented to it): the chain slaps into the mesh every swing. The tails at every
    whole second (0, 1, 2 s), world."""
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(0.0, 0.0, -1.0))
    rigs.calm(ob, damping=1.0, radius=0.01)
    rigs.key_figure_eight(ob.pose.bones[rigs.ROOT], fps, peak_g=5.0, scene=scene)
    # 5 mm from the hanging chain's particle radius: the swing reaches it (at 2 cm, only the
    # energy that FTL substeps used to make, before SHAKE took the whipping segments, did).
    bpy.ops.mesh.primitive_uv_sphere_add(segments=24, ring_count=12, radius=0.06,
                                         location=(0.075, 0.0, 1.78))
    ball = bpy.context.object
    ball.waft_collider.enabled = body
    world = ball.matrix_world.copy()
    ball.parent, ball.parent_type, ball.parent_bone = ob, 'BONE', rigs.ROOT
    ball.matrix_world = world
    bake_api.bake_scene(scene, substep_rate=240)
    return rigs.world_points(scene, ob, rigs.bone_names("Hair", 4), [1, 1 + fps, 1 + 2 * fps])


def test_a_chain_hitting_a_body_mesh_bakes_alike_at_every_frame_rate(scene, bake_api):
    """The mesh is read at the same sub-frame instants at 24, 25, 30, 50 and 60 fps, so fast
    motion against it bakes alike (the frame-rate law, with a body mesh in the way)."""
    results = rigs.bake_at_rates(scene, lambda fps: _figure_eight_into_a_body(scene, bake_api,
                                                                              fps))
    assert np.ptp(results[24][:, -1]) > 0.05  # the tip moves
    for fps in (25, 30, 50, 60):
        assert rigs.largest_distance(results[fps], results[24]) < 1e-3, fps
    rigs.reset_scene(scene)
    without = _figure_eight_into_a_body(scene, bake_api, 24, body=False)
    assert rigs.largest_distance(without, results[24]) > 0.01  # the body was in the way
