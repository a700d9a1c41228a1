"""VRM spring bones out: Blender's own glTF exporter writes a Waft chain setup as
``VRMC_springBone`` (through Waft's exporter hook). Checked by reading the JSON back (places from
the file's own node matrices) and by re-importing with *Import VRM Spring Bones*."""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest
from mathutils import Matrix, Vector

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

GODETTE = Path(__file__).resolve().parents[1] / "data" / "godette_vrm" / "Godette_vrm_v4.vrm"


def _node_world(nodes: list) -> list[np.ndarray]:
    """World matrices of glTF nodes (glTF axes), written out here independently of Waft."""
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}

    def local(n):
        m = np.eye(4)
        if "matrix" in n:
            return np.array(n["matrix"]).reshape(4, 4).T
        x, y, z, w = n.get("rotation", (0, 0, 0, 1))
        m[:3, :3] = np.array(Matrix(((1 - 2 * (y * y + z * z), 2 * (x * y - z * w),
                                      2 * (x * z + y * w)),
                                     (2 * (x * y + z * w), 1 - 2 * (x * x + z * z),
                                      2 * (y * z - x * w)),
                                     (2 * (x * z - y * w), 2 * (y * z + x * w),
                                      1 - 2 * (x * x + y * y))))) * n.get("scale", (1, 1, 1))
        m[:3, 3] = n.get("translation", (0, 0, 0))
        return m

    def world(i):
        return world(parent[i]) @ local(nodes[i]) if i in parent else local(nodes[i])

    return [world(i) for i in range(len(nodes))]


def _blender(p) -> np.ndarray:
    """glTF axes to Blender's (+Y up to +Z up)."""
    return np.array((p[0], -p[2], p[1]))


def _at(world: np.ndarray, offset) -> np.ndarray:
    return _blender((world @ np.append(offset, 1.0))[:3])


def _export(path: Path, **kwargs) -> dict:
    assert bpy.ops.export_scene.gltf(filepath=str(path), export_format='GLB',
                                     **kwargs) == {'FINISHED'}
    return rigs.gltf_json(path)


def _vrm_chain_scene(scene):
    """A VRM-solver chain with a per-bone override, a sphere, a capsule and a plane collider on
    its root bone, and a Space Bone."""
    ob = rigs.chain_rig(scene, count=3, length=0.2, direction=(0.0, 0.3, -1.0))
    ob.waft.solver = 'VRM'
    ob.waft.vrm_stiffness, ob.waft.vrm_drag_force, ob.waft.vrm_gravity_power = 1.3, 0.35, 0.4
    ob.waft.vrm_gravity_dir = (0.0, 0.6, -0.8)
    ob.waft.radius = 0.03
    ob.waft.space_bone = rigs.ROOT
    second = ob.pose.bones["Hair.001"].waft
    second.use_overrides, second.vrm_stiffness, second.radius = True, 2.5, 0.05
    made = []
    for name, shape, location in (("Ball", "SPHERE", (0.1, 0.0, 1.7)),
                                  ("Pill", "CAPSULE", (-0.1, 0.1, 1.6)),
                                  ("Wall", "PLANE", (0.0, -0.2, 1.5))):
        empty = bpy.data.objects.new(name, None)
        scene.collection.objects.link(empty)
        empty.waft_collider.enabled = True
        empty.waft_collider.shape = shape
        empty.empty_display_size = 0.07 if shape != "CAPSULE" else 0.12
        empty.waft_collider.radius_a = empty.waft_collider.radius_b = 0.04
        empty.matrix_world = (Matrix.Translation(location)
                              @ Matrix.Rotation(math.radians(35), 4, 'X'))
        world = empty.matrix_world.copy()
        empty.parent, empty.parent_type, empty.parent_bone = ob, 'BONE', rigs.ROOT
        empty.matrix_world = world
        made.append(empty)
    bpy.context.view_layer.update()
    return ob, made


def test_vrm_setup_exports_as_vrmc_springbone_with_its_settings_and_places(scene, tmp_path):
    ob, (ball, pill, wall) = _vrm_chain_scene(scene)
    gltf = _export(tmp_path / "chain.glb")
    assert "VRMC_springBone" in gltf["extensionsUsed"]
    assert "VRMC_springBone_extended_collider" in gltf["extensionsUsed"]
    ext = gltf["extensions"]["VRMC_springBone"]
    nodes, world = gltf["nodes"], _node_world(gltf["nodes"])
    (spring,) = ext["springs"]
    names = [nodes[j["node"]]["name"] for j in spring["joints"]]
    assert names == ["Hair.000", "Hair.001", "Hair.002", "Hair.002_end"]
    assert nodes[spring["center"]]["name"] == rigs.ROOT
    first, second, third, _tail = spring["joints"]
    assert first["stiffness"] == pytest.approx(1.3) and third["stiffness"] == pytest.approx(1.3)
    assert second["stiffness"] == pytest.approx(2.5)
    assert first["dragForce"] == pytest.approx(0.35)
    assert first["gravityPower"] == pytest.approx(0.4)
    assert first["hitRadius"] == pytest.approx(0.03) and second["hitRadius"] == pytest.approx(0.05)
    # Blender (0, 0.6, -0.8) is glTF (0, -0.8, -0.6).
    np.testing.assert_allclose(first["gravityDir"], (0.0, -0.8, -0.6), atol=1e-6)
    # The added tail node sits at the last bone's tail.
    tail_world = _at(world[spring["joints"][-1]["node"]], (0, 0, 0))
    np.testing.assert_allclose(tail_world, ob.matrix_world @ ob.data.bones["Hair.002"].tail_local,
                               atol=1e-5)
    # Colliders: at the empties' places, read through the file's node matrices.
    colliders = ext["colliders"]
    assert [nodes[c["node"]]["name"] for c in colliders] == [rigs.ROOT] * 3
    assert spring["colliderGroups"] == [0] and ext["colliderGroups"][0]["colliders"] == [0, 1, 2]
    by_shape = {}
    for c in colliders:
        extended = c.get("extensions", {}).get("VRMC_springBone_extended_collider")
        shape = extended["shape"] if extended else c["shape"]
        by_shape[next(iter(shape))] = (world[c["node"]], next(iter(shape.values())))
    m, sphere = by_shape["sphere"]
    np.testing.assert_allclose(_at(m, sphere["offset"]), ball.matrix_world.translation, atol=1e-5)
    assert sphere["radius"] == pytest.approx(0.07)
    m, capsule = by_shape["capsule"]
    axis = pill.matrix_world.to_3x3().col[2].normalized() * 0.12
    np.testing.assert_allclose(_at(m, capsule["offset"]), pill.matrix_world.translation - axis,
                               atol=1e-5)
    np.testing.assert_allclose(_at(m, capsule["tail"]), pill.matrix_world.translation + axis,
                               atol=1e-5)
    assert capsule["radius"] == pytest.approx(0.04)
    m, plane = by_shape["plane"]
    np.testing.assert_allclose(_at(m, plane["offset"]), wall.matrix_world.translation, atol=1e-5)
    normal = _blender(m[:3, :3] @ np.array(plane["normal"]))
    np.testing.assert_allclose(normal / np.linalg.norm(normal),
                               wall.matrix_world.to_3x3().col[2].normalized(), atol=1e-6)


def test_export_off_writes_no_spring_bones(scene, tmp_path):
    _vrm_chain_scene(scene)
    scene.waft.export_vrm_springs = False
    gltf = _export(tmp_path / "plain.glb")
    assert "VRMC_springBone" not in gltf.get("extensions", {})
    assert "VRMC_springBone" not in gltf.get("extensionsUsed", [])


def test_waft_solver_setup_exports_the_closest_vrm_values(scene, tmp_path):
    ob = rigs.chain_rig(scene, count=2, length=0.25)
    ob.waft.shape_stiffness, ob.waft.shape_decay = 0.2, 1.0
    ob.waft.damping, ob.waft.drag, ob.waft.gravity_factor = 3.0, 0.6, 0.5
    gltf = _export(tmp_path / "waft.glb")
    joints = gltf["extensions"]["VRMC_springBone"]["springs"][0]["joints"]
    # Shape Stiffness s (fraction closed per 1/60 s) → stiffness s·L·60 (VRM closes
    # stiffness·Δt/L of the angle per frame); Shape Decay gives the tip s².
    assert joints[0]["stiffness"] == pytest.approx(0.2 * 0.25 * 60)
    assert joints[1]["stiffness"] == pytest.approx(0.2 ** 2 * 0.25 * 60)
    assert joints[0]["dragForce"] == pytest.approx(1 - math.exp(-3.6 / 60))
    assert joints[0]["gravityPower"] == pytest.approx(9.81 * 0.5 / 60, rel=1e-3)
    np.testing.assert_allclose(joints[0]["gravityDir"], (0.0, -1.0, 0.0), atol=1e-6)


def _chain_colliders(rig) -> dict:
    """Chain root → the bones its own colliders hang on (None: the setup's colliders)."""
    out = {}
    for pb in rig.pose.bones:
        if pb.waft.simulate and not (pb.parent and pb.parent.waft.simulate):
            own = pb.waft.collider_collection
            out[pb.name] = None if own is None else sorted(o.parent_bone
                                                           for o in own.all_objects)
    return out


def test_godette_round_trip_export_and_reimport(scene, tmp_path):
    """Godette's VRM 0.x springs, imported into Waft, exported by Blender's glTF exporter as
    VRM 1.0 and imported again into the re-imported character: same chains, settings,
    colliders and tails."""
    copy = tmp_path / "godette.glb"
    shutil.copyfile(GODETTE, copy)
    bpy.ops.import_scene.gltf(filepath=str(copy))
    rig = next(ob for ob in scene.objects if ob.type == 'ARMATURE')
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.waft.import_vrm_springs(filepath=str(GODETTE)) == {'FINISHED'}
    bpy.context.view_layer.update()

    def setup(rig):
        out = {}
        for pb in rig.pose.bones:
            if pb.waft.simulate:
                source = pb.waft if pb.waft.use_overrides else rig.waft
                out[pb.name] = (round(source.vrm_stiffness, 5), round(source.vrm_drag_force, 5),
                                round(source.vrm_gravity_power, 5), round(source.radius, 5),
                                tuple(np.round(np.array(rig.matrix_world
                                                        @ rig.data.bones[pb.name].tail_local), 4)))
        return out

    def colliders(scene):
        return sorted((ob.parent_bone, ob.waft_collider.shape, round(ob.empty_display_size, 5),
                       tuple(np.round(np.array(ob.matrix_world.translation), 4)))
                      for ob in scene.objects if ob.waft_collider.enabled)

    before, before_colliders = setup(rig), colliders(scene)
    chains_before = _chain_colliders(rig)
    out = tmp_path / "godette_out.glb"
    gltf = _export(out, export_animations=False)
    ext = gltf["extensions"]["VRMC_springBone"]
    assert len(ext["springs"]) == 8
    assert len(ext["colliders"]) == 4

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    bpy.ops.import_scene.gltf(filepath=str(out))
    again = next(ob for ob in scene.objects if ob.type == 'ARMATURE')
    bpy.context.view_layer.objects.active = again
    assert bpy.ops.waft.import_vrm_springs(filepath=str(out)) == {'FINISHED'}
    bpy.context.view_layer.update()
    assert again.waft.solver == 'VRM'
    assert setup(again) == before
    assert colliders(scene) == before_colliders
    assert _chain_colliders(again) == chains_before
    assert Vector(again.waft.vrm_gravity_dir).normalized().dot(Vector((0, 0, -1))) > 1 - 1e-6
