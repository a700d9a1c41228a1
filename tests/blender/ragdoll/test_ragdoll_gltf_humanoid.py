"""Create Waft Ragdoll › Humanoid on the Godot glTF humanoid (../shared/assets): a rig nobody
here made, whose forearms bend about their local Z (Rigify's and Mixamo's bend about X)."""

from __future__ import annotations

import importlib
import math
import shutil
import tempfile
from pathlib import Path

import bpy
import numpy as np
import pytest
import ragdoll_rigs as rigs

ASSET = (Path(__file__).resolve().parents[4] / "shared" / "assets" / "godot_skel_bone_2025"
         / "skel_bone_2025.glb")
JOINTS = (("lower_arm_l", "upper_arm_l"), ("lower_arm_r", "upper_arm_r"),
          ("lower_leg_l", "upper_leg_l"), ("lower_leg_r", "upper_leg_r"))


@pytest.fixture
def walker(scene):
    if not ASSET.exists():
        pytest.skip(f"no {ASSET}")
    with tempfile.TemporaryDirectory() as tmp:  # the importer may write next to the file
        copy = Path(tmp) / ASSET.name
        shutil.copyfile(ASSET, copy)
        bpy.ops.import_scene.gltf(filepath=str(copy))
    rig = next(o for o in scene.objects if o.type == 'ARMATURE')
    # (Blender 4.2's importer names the actions '<name>_<armature>')
    walk = bpy.data.actions.get("hmd-walk") or bpy.data.actions["hmd-walk_Rig"]
    rig.animation_data.action = walk
    if hasattr(rig.animation_data, "action_slot"):
        rig.animation_data.action_slot = walk.slots[0]
    scene.frame_start, scene.frame_end = (int(v) for v in walk.frame_range)
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    return rig


def test_elbows_and_knees_are_one_sided_hinges_about_the_rigs_own_axis(scene, walker,
                                                                      waft_module_name):
    """With Fit Limits off (the humanoid table alone), the walk's elbows (26-46° about local Z,
    the left one negative) and knees (up to 60° about X) are inside their limits, which bend
    one way only: a symmetric cone about X clamped the elbows at 15° and the Physical Animation
    preset then held the head 47 cm off the walk."""
    bpy.ops.object.mode_set(mode='POSE')
    assert bpy.ops.waft.ragdoll_create(source='HUMANOID', fit_limits='NONE') == {'FINISHED'}
    bpy.ops.object.mode_set(mode='OBJECT')
    create = importlib.import_module(waft_module_name + ".addon.ragdoll.create")
    limits = importlib.import_module(waft_module_name + ".core.ragdoll.limits")
    frames = range(scene.frame_start, scene.frame_end + 1)
    matrices = []
    for frame in frames:
        scene.frame_set(frame)
        matrices.append([[np.array(walker.pose.bones[n].matrix) for n in pair]
                         for pair in JOINTS])
    q = create.bone_orientation(np.array(matrices))  # (F, joints, 2, 4)
    for j, (child, parent) in enumerate(JOINTS):
        body = walker.pose.bones[child].waft_ragdoll
        d = limits.joint_rotation(q[:, j, 0], q[:, j, 1], np.tile(
            create.rest_relative(walker, [child], [parent]), (len(frames), 1)))
        swing, twist = limits.swing_twist(d)
        tile = [np.tile(np.array(tuple(v)), (len(frames), 1))
                for v in (body.swing_limit, body.twist_limit, body.swing_center)]
        fix, _ = limits.limit_correction(swing, twist, *tile)
        assert np.degrees(np.abs(fix).max()) < 3.0, child  # (the ellipse's corners: 2.7°)
        hinge = 1 if child.startswith("lower_arm") else 0  # the axis the walk bends about
        low = body.swing_center[hinge] - body.swing_limit[hinge]
        high = body.swing_center[hinge] + body.swing_limit[hinge]
        bend = swing[:, 2 * hinge]
        # one-sided: 145° the way the walk bends, 10° the other way
        way = 1.0 if bend.mean() > 0 else -1.0
        assert math.degrees(max(way * low, way * high)) == pytest.approx(145.0)
        assert math.degrees(min(way * low, way * high)) == pytest.approx(-10.0)


def _frames(action) -> range:
    start, end = action.frame_range
    return range(math.floor(start), math.ceil(end) + 1)


def _play_alone(rig, action) -> None:
    """What a user does to switch clips: make ``action`` the active one (the importer's NLA
    tracks stay muted under it)."""
    anim_data = rig.animation_data
    anim_data.action = action
    if hasattr(anim_data, "action_slot"):
        anim_data.action_slot = action.slots[0]


def test_every_animation_of_the_rig_is_inside_its_limits(scene, walker, waft_module_name):
    """Create (its default, Fit Limits To › Rig's Actions) on the glTF humanoid with the walk
    playing: each of its 31 actions, played alone as a user switching clips would, stays
    inside every joint's limits at every frame (within 1°). Fitted to the walk alone (before,
    and Fit Limits To › Current Animation), 19 of the other 30 left them, jump_1 by 57°."""
    actions = list(bpy.data.actions)
    assert len(actions) == 31
    assert all(t.mute for t in walker.animation_data.nla_tracks)
    bpy.ops.object.mode_set(mode='POSE')
    assert bpy.ops.waft.ragdoll_create(source='HUMANOID') == {'FINISHED'}
    bpy.ops.object.mode_set(mode='OBJECT')
    outside = {}
    for action in actions:
        _play_alone(walker, action)
        worst = rigs.limits_exceeded_deg(scene, walker, _frames(action), waft_module_name)
        if worst > 1.0:
            outside[action.name] = round(worst, 1)
    assert not outside, outside


def _rna_values(struct) -> dict:
    """Every plain property of ``struct`` (pointers by name), for a bitwise comparison."""
    out = {}
    for prop in struct.bl_rna.properties:
        if prop.identifier == "rna_type" or prop.type == 'COLLECTION':
            continue
        value = getattr(struct, prop.identifier)
        if prop.type == 'POINTER':
            value = getattr(value, "name", getattr(value, "identifier", repr(value)))
        elif getattr(prop, "is_array", False):
            value = tuple(np.array(value).ravel().tolist())
        out[prop.identifier] = value
    return out


def _state(scene, rig) -> dict:
    """The user's animation state: the active action and its settings, every NLA track and
    strip, every pose channel and the object's own (as float32 bytes), the frame."""
    anim_data = rig.animation_data
    channels = {}
    for name in ("location", "rotation_quaternion", "rotation_euler", "scale"):
        size = len(getattr(rig.pose.bones[0], name))
        values = np.empty(len(rig.pose.bones) * size, dtype=np.float32)
        rig.pose.bones.foreach_get(name, values)
        channels[name] = values.tobytes()
    return {
        "anim_data": _rna_values(anim_data),
        "tracks": [(_rna_values(t), [_rna_values(s) for s in t.strips])
                   for t in anim_data.nla_tracks],
        "channels": channels,
        "object": np.array([*rig.location, *rig.rotation_euler, *rig.scale],
                           dtype=np.float32).tobytes(),
        "users": {a.name: a.users for a in bpy.data.actions},
        "frame": (scene.frame_current, scene.frame_subframe),
    }


@pytest.mark.parametrize("active", [True, False])
def test_create_gives_the_animation_state_back_bit_for_bit(scene, walker, active):
    """Reading every action plays each alone for a moment; afterwards the active action, its
    slot, the NLA tracks' mute/solo/influence, every pose channel (a bone posed by hand too,
    and one only another action keys) and the frame are exactly as before, with an active
    action or none, and undo gives the setup back."""
    anim_data = walker.animation_data
    anim_data.action_influence, anim_data.action_blend_type = 0.75, 'COMBINE'
    tracks = anim_data.nla_tracks
    tracks["hmd-neutral"].mute = False
    tracks["hmd-neutral"].strips[0].influence = 0.5
    tracks["hmd-jump_1"].is_solo = True
    # a channel only another clip keys (the object's height), set by hand: playing that clip
    # leaves its value there, which going back to the frame does not undo
    # (Blender 4.2's importer names the actions '<name>_<armature>')
    fist = bpy.data.actions.get("fistAnim") or bpy.data.actions["fistAnim_Rig"]
    _curves(fist).new("location", index=2).keyframe_points.insert(
        1.0, -0.5)
    walker.location.z = 0.125
    walker.pose.bones["head"].scale = (1.0, 1.5, 1.0)  # posed by hand, keyed by no clip
    if not active:  # every clip on the NLA (as after a bake, which stashes the active one)
        anim_data.action = None
    scene.frame_set(7, subframe=0.25)
    before, name = _state(scene, walker), walker.name
    bpy.ops.object.mode_set(mode='POSE')
    bpy.ops.ed.undo_push(message="before Create")
    assert bpy.ops.waft.ragdoll_create(source='HUMANOID') == {'FINISHED'}
    assert walker.pose.bones["hips"].waft_ragdoll.body
    assert _state(scene, walker) == before
    bpy.ops.ed.undo_push(message="Create")
    bpy.ops.ed.undo()
    rig = bpy.context.scene.objects[name]
    assert not any(pb.waft_ragdoll.body for pb in rig.pose.bones)
    assert _state(bpy.context.scene, rig) == before


def _curves(action):
    """Where an action's F-curves for its (only) slot go: its channelbag (4.4+), else itself."""
    if not hasattr(action, "layers"):
        return action.fcurves
    return action.layers[0].strips[0].channelbag(action.slots[0], ensure=True).fcurves
