"""Import VRM Spring Bones on a real character: Godette (VRM 0.x, CC BY 3.0, tests/data), imported
with Blender's glTF importer as a user would, and a VRM 1.0 file written from the same rig."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest
from mathutils import Vector

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

GODETTE = Path(__file__).resolve().parents[1] / "data" / "godette_vrm" / "Godette_vrm_v4.vrm"


@pytest.fixture
def godette(scene, tmp_path):
    copy = tmp_path / "godette.glb"  # the glTF importer wants a glTF extension
    shutil.copyfile(GODETTE, copy)
    bpy.ops.import_scene.gltf(filepath=str(copy))
    rig = next(ob for ob in scene.objects if ob.type == 'ARMATURE')
    bpy.context.view_layer.objects.active = rig
    return rig


def _chains(gltf: dict) -> list[list[str]]:
    """VRM 0.x chains: each bone group root and its first-child descendants."""
    nodes = gltf["nodes"]
    chains = []
    for group in gltf["extensions"]["VRM"]["secondaryAnimation"]["boneGroups"]:
        for root in group["bones"]:
            chain, node = [], root
            while True:
                chain.append(nodes[node]["name"])
                children = nodes[node].get("children", [])
                if not children:
                    break
                node = children[0]
            chains.append(chain)
    return chains


def test_godette_vrm0_springs_become_the_files_chains_settings_and_colliders(godette, scene):
    rig = godette
    gltf = rigs.gltf_json(GODETTE)
    secondary = gltf["extensions"]["VRM"]["secondaryAnimation"]
    result = bpy.ops.waft.import_vrm_springs(filepath=str(GODETTE))
    assert result == {'FINISHED'}
    assert rig.waft.enabled and rig.waft.solver == 'VRM'
    expected = {name for chain in _chains(gltf) for name in chain}
    flagged = {pb.name for pb in rig.pose.bones if pb.waft.simulate}
    assert flagged == expected

    # Settings: per group, the setup's or the bone's override.
    def effective(pb, key, setup_key=None):
        source = pb.waft if pb.waft.use_overrides else rig.waft
        return getattr(source, setup_key or key)

    for group in secondary["boneGroups"]:
        for root in group["bones"]:
            name = gltf["nodes"][root]["name"]
            pb = rig.pose.bones[name]
            assert effective(pb, "vrm_stiffness") == pytest.approx(group["stiffiness"])
            assert effective(pb, "vrm_drag_force") == pytest.approx(group["dragForce"])
            assert effective(pb, "vrm_gravity_power") == pytest.approx(group["gravityPower"])
            assert effective(pb, "radius") == pytest.approx(group["hitRadius"])
    assert tuple(rig.waft.vrm_gravity_dir) == pytest.approx((0.0, 0.0, -1.0))

    # Colliders: one sphere per collider of a group some spring uses, at the file's place.
    colliders = [ob for ob in scene.objects if ob.waft_collider.enabled]
    used_groups = {g for group in secondary["boneGroups"] for g in group["colliderGroups"]}
    expected_count = sum(len(secondary["colliderGroups"][g]["colliders"]) for g in used_groups)
    assert len(colliders) == expected_count == 4
    bpy.context.view_layer.update()
    for g in used_groups:
        group = secondary["colliderGroups"][g]
        head = rig.matrix_world @ rig.data.bones[gltf["nodes"][group["node"]]["name"]].head_local
        for c in group["colliders"]:
            o = c["offset"]
            # Unity's left-handed offset (x mirrored) in glTF Y-up, then Blender Z-up; the
            # head's node has no rotation in this file.
            centre = head + Vector((-o["x"], -o["z"], o["y"]))
            match = [ob for ob in colliders
                     if (ob.matrix_world.translation - centre).length < 1e-5]
            assert len(match) == 1, (g, c)
            assert match[0].waft_collider.shape == "SPHERE"
            assert match[0].empty_display_size == pytest.approx(c["radius"], rel=1e-6)
            assert match[0].parent_bone == gltf["nodes"][group["node"]]["name"]

    # Each chain collides with its own groups only: the buns (no groups) with nothing.
    for group in secondary["boneGroups"]:
        allowed = {gltf["nodes"][secondary["colliderGroups"][g]["node"]]["name"]
                   for g in group["colliderGroups"]}
        for root in group["bones"]:
            own = rig.pose.bones[gltf["nodes"][root]["name"]].waft.collider_collection
            assert own is not None
            assert {ob.parent_bone for ob in own.all_objects} == allowed

    # Leaf joints got VRM 0.x's 7 cm virtual tail along the parent-to-joint direction.
    for chain in _chains(gltf):
        leaf = rig.data.bones[chain[-1]]
        assert leaf.length == pytest.approx(0.07, abs=1e-6)
        direction = (leaf.head_local - leaf.parent.head_local).normalized()
        assert (leaf.tail_local - leaf.head_local).normalized().dot(direction) > 1 - 1e-6


def test_imported_springs_bake_and_the_hair_moves(godette, scene, bake_api):
    rig = godette
    bpy.ops.waft.import_vrm_springs(filepath=str(GODETTE))
    head = rig.pose.bones["head_Armature"]
    head.rotation_mode = 'XYZ'
    for frame, turn in ((1, 0.0), (12, 0.8), (24, -0.6)):
        head.rotation_euler = (0.0, turn, 0.0)
        head.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = 1, 24
    report = bake_api.bake_scene(scene)
    assert report.bones == len({pb.name for pb in rig.pose.bones if pb.waft.simulate})
    positions = report.chain_positions
    assert len(positions) == 8
    for name, points in positions.items():
        assert np.isfinite(points).all(), name
    # The fringe lags behind the turning head: its tip is not carried rigidly.
    fringe = positions[f"{rig.name}: FrontHair_L"]
    assert np.abs(np.diff(fringe[:, -1], axis=0)).max() > 1e-3


def test_a_file_for_another_character_changes_nothing(scene, tmp_path, bake_api):
    rig = rigs.chain_rig(scene)
    before = rigs.fingerprint(scene)
    flags = [pb.waft.simulate for pb in rig.pose.bones]
    bpy.context.view_layer.objects.active = rig
    with pytest.raises(RuntimeError, match="has no bone named"):
        bpy.ops.waft.import_vrm_springs(filepath=str(GODETTE))
    assert rigs.fingerprint(scene) == before
    assert [pb.waft.simulate for pb in rig.pose.bones] == flags
    assert rig.waft.solver != 'VRM'
    assert not [ob for ob in scene.objects if ob.waft_collider.enabled]
    broken = tmp_path / "broken.vrm"
    broken.write_bytes(b"glTF\x02\x00\x00\x00garbage")
    with pytest.raises(RuntimeError, match="broken.vrm"):
        bpy.ops.waft.import_vrm_springs(filepath=str(broken))


def test_vrm1_springs_and_capsule_and_plane_colliders(godette, scene, tmp_path):
    """A VRM 1.0 file for the same rig (its nodes, VRMC_springBone written by hand): the last
    joint is the tail of the one before, settings per joint, a capsule and a plane."""
    rig = godette
    gltf = rigs.gltf_json(GODETTE)
    nodes = gltf["nodes"]
    index = {n["name"]: i for i, n in enumerate(nodes)}
    fringe = _chains(gltf)[0]  # FrontHair_Center_L and its child
    head = index["head_Armature"]
    gltf["extensions"] = {"VRMC_springBone": {
        "specVersion": "1.0",
        "colliders": [
            {"node": head, "shape": {"capsule": {"offset": [0.0, 0.05, 0.0], "radius": 0.08,
                                                 "tail": [0.0, 0.25, 0.0]}}},
            {"node": head, "shape": {"sphere": {"offset": [0, 0, 0], "radius": 0}},
             "extensions": {"VRMC_springBone_extended_collider": {
                 "specVersion": "1.0", "shape": {"plane": {"offset": [0.0, 0.0, 0.1],
                                                           "normal": [0.0, 0.0, 1.0]}}}}}],
        "colliderGroups": [{"colliders": [0, 1]}],
        "springs": [{"name": "fringe", "colliderGroups": [0], "joints": [
            {"node": index[fringe[0]], "stiffness": 1.5, "dragForce": 0.3, "hitRadius": 0.01,
             "gravityPower": 0.2, "gravityDir": [0.0, -1.0, 0.0]},
            {"node": index[fringe[1]]}]}]}}
    path = tmp_path / "fringe.gltf"
    path.write_text(json.dumps(gltf))
    assert bpy.ops.waft.import_vrm_springs(filepath=str(path)) == {'FINISHED'}
    flagged = [pb.name for pb in rig.pose.bones if pb.waft.simulate]
    assert flagged == [fringe[0]]  # the last joint is only the tail
    first = rig.data.bones[fringe[0]]
    assert (first.tail_local - rig.data.bones[fringe[1]].head_local).length < 1e-6
    assert rig.waft.vrm_stiffness == pytest.approx(1.5)
    assert rig.waft.vrm_gravity_power == pytest.approx(0.2)
    colliders = sorted((ob for ob in scene.objects if ob.waft_collider.enabled),
                       key=lambda ob: ob.waft_collider.shape)
    assert [ob.waft_collider.shape for ob in colliders] == ["CAPSULE", "PLANE"]
    capsule, plane = colliders
    bpy.context.view_layer.update()
    head_world = rig.matrix_world @ rig.data.bones["head_Armature"].head_local
    # glTF +Y (up) is Blender +Z; the capsule runs 0.05–0.25 above the head node.
    np.testing.assert_allclose(capsule.matrix_world.translation, head_world + Vector((0, 0, 0.15)),
                               atol=1e-5)
    assert capsule.empty_display_size == pytest.approx(0.1)
    assert capsule.waft_collider.radius_a == pytest.approx(0.08)
    np.testing.assert_allclose(capsule.matrix_world.to_3x3().col[2], (0.0, 0.0, 1.0), atol=1e-6)
    # glTF +Z (forward) is Blender -Y: the plane faces -Y, 0.1 in front of the head.
    np.testing.assert_allclose(plane.matrix_world.to_3x3().col[2], (0.0, -1.0, 0.0), atol=1e-6)
    np.testing.assert_allclose(plane.matrix_world.translation, head_world + Vector((0, -0.1, 0)),
                               atol=1e-5)
