"""*Show Simulation Shapes* draws what the bake simulates with at the size it acts: a chain
particle's drawn sphere rests exactly on the floor it collided with in the bake, ragdoll bodies
are the capsules of their bones at the current pose, cloth max-distance spheres have the
solver's limit, body-mesh colliders are drawn by their own triangle edges."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "cloth"))
sys.path.insert(0, str(Path(__file__).resolve().parent / "ragdoll"))
import cloth_rigs  # noqa: E402
import ragdoll_rigs  # noqa: E402
import waft_rigs as rigs  # noqa: E402

RING = 3 * 32  # segments of one sphere outline (three great circles)


def _shapes(waft):
    return sys.modules[f"{waft.__name__}.addon.overlay_shapes"]


def test_a_drawn_particle_sphere_rests_on_the_floor_it_collided_with(scene, bake_api, waft):
    """Bake a chain falling onto a floor with two radii; at the end every drawn sphere is above
    the floor and the lowest ones touch it (what the solver collided is what is drawn)."""
    ob = rigs.chain_rig(scene, count=4, length=0.12, direction=(1.0, 0.0, -0.2))
    rigs.calm(ob, damping=3.0, radius=0.03)
    wide = ob.pose.bones[rigs.bone_names("Hair", 4)[3]].waft
    wide.use_overrides, wide.radius = True, 0.06
    assert bpy.ops.waft.add_collider(shape='PLANE', size=1.0) == {'FINISHED'}
    floor_z = 1.85
    scene.objects["WaftCollider.Plane"].location = (0.0, 0.0, floor_z)
    scene.frame_start, scene.frame_end = 1, 72
    bake_api.bake_scene(scene)
    scene.frame_set(scene.frame_end)
    lines = _shapes(waft).simulation_lines(scene)["particles"]
    spheres = lines.reshape(4, RING * 2, 3).astype(np.float64)
    bottoms = spheres[..., 2].min(axis=1)
    assert np.all(bottoms > floor_z - 2e-3)  # nothing drawn inside the floor
    assert abs(bottoms[3] - floor_z) < 2e-3  # the wide tail lies on it
    radius = 0.5 * (spheres[..., 2].max(axis=1) - spheres[..., 2].min(axis=1))
    np.testing.assert_allclose(radius, [0.03, 0.03, 0.03, 0.06], rtol=1e-5)


def test_ragdoll_bodies_are_their_capsules_at_the_current_pose(scene, waft):
    ob = ragdoll_rigs.humanoid(scene)
    ragdoll_rigs.set_rotation(ob.pose.bones["forearm.L"], (0.0, 0.0, 0.9))
    bpy.context.view_layer.update()
    shapes = _shapes(waft)
    read = sys.modules[f"{waft.__name__}.addon.ragdoll.reading"].read_ragdoll(scene, ob, 1.0)
    lines = shapes.simulation_lines(scene)
    bodies = lines["bodies"].reshape(len(read.names), -1, 3).astype(np.float64)
    for i, name in enumerate(read.names):
        world = np.array(ob.matrix_world) @ np.array(ob.pose.bones[name].matrix)
        head = world[:3, 3]
        tail = head + world[:3, 1] / np.linalg.norm(world[:3, 1]) * read.length[i]
        axis = tail - head
        t = np.clip((bodies[i] - head) @ axis / (axis @ axis), 0.0, 1.0)
        distance = np.linalg.norm(bodies[i] - (head + t[:, None] * axis), axis=1)
        np.testing.assert_allclose(distance, read.radius[i], atol=2e-6, err_msg=name)
    # The bent forearm's body follows its bone, not the rest pose.
    forearm = bodies[read.names.index("forearm.L")]
    assert np.abs(forearm[:, 1]).max() > 0.1
    # Swing cones start at the child's head.
    cones = lines["limits"]
    assert len(cones)
    heads = {tuple(np.round(np.array(ob.matrix_world) @ np.append(ob.pose.bones[n].head, 1.0),
                            5)[:3]) for n in read.names}
    starts = {tuple(p) for p in np.round(cones[:, 0].astype(np.float64), 5)}
    assert starts & heads
    # In the viewport only the selected setups are drawn (a crowd would bury the view).
    view_layer = bpy.context.view_layer
    ob.select_set(False)
    assert len(shapes.simulation_lines(scene, view_layer)["bodies"]) == 0
    ob.select_set(True)
    assert len(shapes.simulation_lines(scene, view_layer)["bodies"]) == len(lines["bodies"])


def test_cloth_max_distance_spheres_and_pins(scene, waft):
    rig, cage = cloth_rigs.cloth_rig(scene)
    settings = cage.waft_cloth
    settings.max_distance, settings.max_distance_scale = 0.05, 1.5
    settings.edge_max_distance_scale = 0.5
    bpy.context.view_layer.update()
    lines = _shapes(waft).simulation_lines(scene)
    pinned = 6  # the top row
    free = len(cage.data.vertices) - pinned
    assert len(lines["pinned"]) == 3 * pinned
    spheres = lines["max_distance"].reshape(free, RING * 2, 3).astype(np.float64)
    radius = 0.5 * (spheres[..., 0].max(axis=1) - spheres[..., 0].min(axis=1))
    # Border vertices (fewer than four neighbours: the sides and the bottom row) get the edge
    # scale; the inner ones the plain limit.
    assert np.allclose(sorted(set(np.round(radius, 6))), [0.05 * 1.5 * 0.5, 0.05 * 1.5])
    settings.max_distance = 0.0
    bpy.context.view_layer.update()  # as the UI evaluates before it redraws
    assert len(_shapes(waft).simulation_lines(scene)["max_distance"]) == 0


def test_a_body_mesh_collider_is_drawn_by_its_triangle_edges(scene, waft):
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=6, radius=0.2,
                                         location=(0.1, 0.2, 1.0))
    body = bpy.context.object
    body.scale = (1.0, 1.3, 0.8)
    body.waft_collider.enabled = True
    bpy.context.view_layer.update()
    overlay = sys.modules[f"{waft.__name__}.addon.overlay"]
    segments, _ = overlay.collider_segments(scene)
    mesh = body.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    world = np.array([np.array(body.matrix_world) @ np.append(v.co, 1.0)
                      for v in mesh.vertices])[:, :3]
    points = segments.reshape(-1, 3).astype(np.float64)
    nearest = np.linalg.norm(points[:, None] - world[None], axis=-1).min(axis=1)
    assert nearest.max() < 1e-6  # every drawn point is a vertex of the collision surface
    mesh.calc_loop_triangles()
    edges = {tuple(sorted(e)) for t in mesh.loop_triangles
             for e in ((t.vertices[0], t.vertices[1]), (t.vertices[1], t.vertices[2]),
                       (t.vertices[2], t.vertices[0]))}
    assert len(segments) == len(edges)


def test_a_baked_ragdoll_shows_its_animation_target_in_red(scene, bake_api, waft):
    """After a bake the target (the user's animation, what the motors pull toward) is drawn as
    bodies beside the simulation: each drawn point is at the body radius from the bone as the
    animation poses it with Waft's result muted; Clear Bake removes it."""
    ob = ragdoll_rigs.humanoid(scene)
    ragdoll_rigs.animate_wave(ob, range(1, 25), amplitude=0.8, period=12.0)
    ob.waft_ragdoll.use_ground = True
    for pb in ob.pose.bones:
        pb.waft_ragdoll.motor_strength = 0.2  # loose: the simulation strays from the target
    scene.frame_start, scene.frame_end = 1, 24
    bake_api.bake_scene(scene)
    shapes = _shapes(waft)
    scene.frame_set(18)
    lines = shapes.simulation_lines(scene)
    target = lines["target"].reshape(len(ragdoll_rigs.NAMES), -1, 3).astype(np.float64)
    read = sys.modules[f"{waft.__name__}.addon.ragdoll.reading"].read_ragdoll(scene, ob, 1.0)
    tracks = [t for t in ob.animation_data.nla_tracks if t.name.startswith("Waft")
              and "original" not in t.name and "rest" not in t.name]
    assert tracks
    for t in tracks:
        t.mute = True
    scene.frame_set(18)
    for i, name in enumerate(read.names):
        world = np.array(ob.matrix_world) @ np.array(ob.pose.bones[name].matrix)
        head = world[:3, 3]
        axis = world[:3, 1] / np.linalg.norm(world[:3, 1]) * read.length[i]
        t = np.clip((target[i] - head) @ axis / (axis @ axis), 0.0, 1.0)
        distance = np.linalg.norm(target[i] - (head + t[:, None] * axis), axis=1)
        np.testing.assert_allclose(distance, read.radius[i], atol=1e-5, err_msg=name)
    for t in tracks:
        t.mute = False
    scene.frame_set(18)
    bodies = shapes.simulation_lines(scene)["bodies"].astype(np.float64)
    apart = np.abs(bodies - lines["target"]).max()
    assert apart > 0.02  # the simulation is drawn where it is, the target where it pulls
    scene.frame_set(40)  # outside the baked range: no target
    assert len(shapes.simulation_lines(scene)["target"]) == 0
    scene.frame_set(18)
    bake_api.clear_bake(scene)
    assert len(shapes.simulation_lines(scene)["target"]) == 0
