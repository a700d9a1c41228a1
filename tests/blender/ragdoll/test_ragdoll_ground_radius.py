"""Create Waft Ragdoll › Humanoid sizes the feet clear of the ground on rigs nobody here made
(../shared/assets): the Godot glTF humanoid, whose foot bones run 1.3 cm above the sole under
the humanoid table's 4.5 cm capsule, and the Godette VRM, whose toe bones start 2.1 cm above it
under a 2.4 cm one. (The Rigify human's: test_ragdoll_rigify.py.)"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import bpy
import pytest

ASSETS = Path(__file__).resolve().parents[4] / "shared" / "assets"
RIGS = {
    "gltf": (ASSETS / "godot_skel_bone_2025" / "skel_bone_2025.glb",
             ("foot_l", "foot_r", "toes_l", "toes_r")),
    "vrm": (ASSETS / "godette_vrm" / "Godette_vrm_v4.vrm",
            ("toes.l_Armature", "toes.r_Armature")),
}


@pytest.mark.parametrize("asset", list(RIGS))
def test_create_sizes_the_feet_clear_of_the_ground(scene, waft_module_name, tmp_path, asset):
    path, feet = RIGS[asset]
    if not path.exists():
        pytest.skip(f"no {path}")
    copy = tmp_path / (path.stem + ".glb")  # the glTF importer wants a glTF extension
    shutil.copyfile(path, copy)
    bpy.ops.import_scene.gltf(filepath=str(copy))
    rig = next(o for o in scene.objects if o.type == 'ARMATURE')
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.object.mode_set(mode='POSE')
    assert bpy.ops.waft.ragdoll_create(source='HUMANOID', fit_limits='NONE') == {'FINISHED'}
    bpy.ops.object.mode_set(mode='OBJECT')
    warnings = importlib.import_module(waft_module_name + ".addon.ragdoll.warnings")
    assert not [w for w in warnings.ragdoll_warnings(scene, rig) if w.fix == "GROUND_RADIUS"]
    assert warnings.ground_depths(scene, rig) == {}
    assert warnings.ground_depths(scene, rig, rest=True) == {}
    for name in feet:
        bone = rig.data.bones[name]
        lowest = min((rig.matrix_world @ p).z for p in (bone.head_local, bone.tail_local))
        assert rig.pose.bones[name].waft_ragdoll.radius == pytest.approx(lowest, abs=1e-5), name
