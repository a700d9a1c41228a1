"""Ragdoll operators and humanoid defaults, as a user runs them (bpy.ops in Pose Mode)."""

from __future__ import annotations

import importlib
import math

import bpy
import numpy as np
import pytest
import ragdoll_rigs as rigs
import waft_rigs

SPELLINGS = {
    # Mixamo, Rigify (DEF), glTF / Godot, VRM, VRM humanoid names, plain
    "hips": ["mixamorig:Hips", "DEF-spine", "hips", "J_Bip_C_Hips", "Pelvis"],
    "chest": ["mixamorig:Spine2", "DEF-spine.003", "upper_chest", "J_Bip_C_UpperChest"],
    "upper_arm": ["mixamorig:LeftArm", "DEF-upper_arm.L", "upper_arm_l", "J_Bip_L_UpperArm",
                  "leftUpperArm", "UpperArm.R"],
    "forearm": ["mixamorig:RightForeArm", "DEF-forearm.R", "lower_arm_r", "J_Bip_R_LowerArm",
                "rightLowerArm", "lowerarm.r_Armature"],
    "thigh": ["mixamorig:LeftUpLeg", "DEF-thigh.L", "upper_leg_l", "J_Bip_L_UpperLeg",
              "thigh.l_Armature"],
    "shin": ["mixamorig:LeftLeg", "DEF-shin.L", "lower_leg_l", "J_Bip_L_LowerLeg", "calf_l"],
    "foot": ["mixamorig:RightFoot", "DEF-foot.R", "foot_r", "J_Bip_R_Foot"],
    "shoulder": ["mixamorig:LeftShoulder", "DEF-shoulder.L", "shoulder_l", "clavicle_l"],
    "head": ["mixamorig:Head", "DEF-spine.006", "head", "J_Bip_C_Head"],
    None: ["mixamorig:LeftHandIndex1", "proximal_index_l", "hand_l_equipment", "ball.001",
           "Tail.003", "DEF-pelvis.L", "DEF-pelvis.R"],
}


@pytest.fixture(scope="session")
def humanoid(waft):
    return importlib.import_module(waft.__name__ + ".addon.ragdoll.humanoid")


@pytest.mark.parametrize("role", list(SPELLINGS))
def test_humanoid_roles_by_name(humanoid, role):
    for name in SPELLINGS[role]:
        assert humanoid.role_of(name) == role, name


def test_sides(humanoid):
    assert [humanoid.side_of(n) for n in ("mixamorig:LeftArm", "DEF-forearm.R", "upper_arm_l",
                                          "J_Bip_R_Foot", "rightLowerLeg", "hips")] == \
        ["L", "R", "L", "R", "R", ""]


def test_limb_segments_by_name(humanoid):
    """Rigify splits each limb bone into B-bone segments; only those are one rigid body."""
    segment = humanoid.is_limb_segment
    for name, parent in (("DEF-shin.L.001", "DEF-shin.L"), ("DEF-upper_arm.R.001",
                                                              "DEF-upper_arm.R"),
                         ("DEF-thigh.L.001", "DEF-thigh.L"),
                         ("DEF-forearm.L.002", "DEF-forearm.L.001")):
        assert segment(name, parent), name
    for name, parent in (("DEF-shin.L", "DEF-thigh.L.001"),  # the knee
                         ("DEF-hand.L", "DEF-forearm.L.001"),  # the wrist
                         ("DEF-spine.001", "DEF-spine"),  # vertebrae have joints
                         ("DEF-spine.005", "DEF-spine.004"),  # the neck's two bones
                         ("DEF-shin.L.001", None), ("DEF-shin.R.001", "DEF-shin.L")):
        assert not segment(name, parent), name


def test_humanoid_bones_are_the_deforming_ones_when_there_are_some(waft):
    """A generated Rigify rig names its controls, ORG and MCH bones like the body too; the DEF
    (deforming) bones are the skeleton. Rigs whose bones all deform keep every match."""
    create = importlib.import_module(waft.__name__ + ".addon.ragdoll.create")
    names = ["root", "torso", "DEF-spine", "ORG-spine", "MCH-spine", "thigh_fk.L", "DEF-thigh.L",
             "ORG-thigh.L", "thigh_ik.L", "DEF-pelvis.L"]
    deform = {n: n.startswith("DEF-") for n in names}
    assert create.humanoid_bones(names, deform) == {"DEF-spine", "DEF-thigh.L"}
    plain = ["Hips", "Spine", "LeftUpLeg"]
    assert create.humanoid_bones(plain, {n: True for n in plain}) == set(plain)
    assert create.humanoid_bones(plain, {n: False for n in plain}) == set(plain)


def _hinge(humanoid, role, axes, parent_axis=None):
    return humanoid.hinge_limits(role, child_axes=np.array(axes, float).T,
                                 parent_axis=parent_axis, forward=np.array([0.0, -1.0, 0.0]))


def test_hinges_are_one_sided_about_the_rigs_own_bend_axis(humanoid):
    """A straight shin (Y down) with X to the side flexes backwards about +X: its range is
    [-10°, 145°] there. The same bone rolled 90° (X forwards, as the Godot glTF humanoid's
    forearms are) bends about its Z: the hinge moves to Z. A rest pre-bent the way the joint
    flexes gives the rig's own axis; one bent backwards or sideways does not."""
    (half, center) = _hinge(humanoid, "shin", [(1, 0, 0), (0, 0, -1), (0, 1, 0)])
    rng = (math.degrees(center[0] - half[0]), math.degrees(center[0] + half[0]))
    assert rng == pytest.approx((-10.0, 145.0)) and center[1] == 0.0
    assert math.degrees(half[1]) == pytest.approx(10.0)
    (half, center) = _hinge(humanoid, "shin", [(0, -1, 0), (0, 0, -1), (1, 0, 0)])
    rng = (math.degrees(center[1] - half[1]), math.degrees(center[1] + half[1]))
    assert rng == pytest.approx((-10.0, 145.0)) and center[0] == 0.0
    # a left forearm along +X in a T-pose flexes towards the front (-Y): about -Z world
    (half, center) = _hinge(humanoid, "forearm", [(0, 0, 1), (1, 0, 0), (0, 1, 0)])
    assert math.degrees(center[0]) == pytest.approx(-67.5)
    def shin(tail, limb=None):
        """A shin pointing along `tail` under a thigh pointing straight down, X to the side."""
        tail = np.array(tail) / np.linalg.norm(tail)
        x_axis = np.array([1.0, 0.0, 0.0]) - tail[0] * tail
        x_axis /= np.linalg.norm(x_axis)
        return humanoid.hinge_limits("shin", child_axes=np.array(
            [x_axis, tail, np.cross(x_axis, tail)]).T, parent_axis=np.array([0.0, 0.0, -1.0]),
            forward=np.array([0.0, -1.0, 0.0]), limb=limb)

    s5, s4, s3 = (math.sin(math.radians(a)) for a in (5.0, 4.0, 3.0))
    # pre-bent 5° the way it flexes (an IK rig), 4° past straight, 3° sideways (knock knees):
    # each flexes backwards about X; a rest bent the wrong way or sideways is not a flexion
    for tail in ((0.0, s5, -1.0), (0.0, -s4, -1.0), (s3, 0.0, -1.0)):
        (half, center) = shin(tail)
        assert math.degrees(center[0]) == pytest.approx(67.5) and center[1] == 0.0, tail
        assert math.degrees(half[1]) == pytest.approx(10.0)
    # a bone that points off its limb (glTF imports whose bones all point up) says nothing
    assert shin((0.0, 0.0, -1.0), limb=np.array([0.0, 0.0, 1.0])) is None
    assert _hinge(humanoid, "hand", [(1, 0, 0), (0, 0, -1), (0, 1, 0)]) is None
    # a forearm pointing forwards does not say which way it bends
    assert _hinge(humanoid, "forearm", [(1, 0, 0), (0, -1, 0), (0, 0, -1)]) is None


def _pose_mode(ob):
    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    bpy.ops.object.mode_set(mode='POSE')


def _bare_rig(scene):
    ob = rigs.humanoid(scene)
    for pb in ob.pose.bones:
        pb.waft_ragdoll.body = False
        pb.waft_ragdoll.radius = 0.0
    ob.waft_ragdoll.enabled = False
    return ob


def test_create_from_humanoid_names(scene):
    ob = _bare_rig(scene)
    _pose_mode(ob)
    assert bpy.ops.waft.ragdoll_create(source="HUMANOID") == {'FINISHED'}
    assert ob.waft_ragdoll.enabled
    assert all(pb.waft_ragdoll.body for pb in ob.pose.bones)
    shin = ob.pose.bones["shin.L"].waft_ragdoll
    # a one-sided hinge about local X: 145° of flexion (backwards), 10° past straight
    low = math.degrees(shin.swing_center[0] - shin.swing_limit[0])
    high = math.degrees(shin.swing_center[0] + shin.swing_limit[0])
    assert sorted((abs(low), abs(high))) == pytest.approx([10.0, 145.0])
    assert shin.swing_limit[1] == pytest.approx(math.radians(10.0))
    assert shin.twist_limit[1] == pytest.approx(math.radians(10.0))
    height = 1.72 - 0.03  # head tail to the lowest foot point
    hips = ob.pose.bones["hips"].waft_ragdoll
    assert hips.radius == pytest.approx(0.07 * height, rel=1e-3)
    assert hips.use_mass  # Winter's segment fractions of a 70 kg, 1.75 m body, scaled by H³
    assert hips.mass == pytest.approx(0.142 * 70.0 * (height / 1.75) ** 3, rel=1e-3)
    total = sum(pb.waft_ragdoll.mass for pb in ob.pose.bones)
    assert 0.9 < total / (70.0 * (height / 1.75) ** 3) < 1.0


def test_create_from_selection_fills_the_tree(scene):
    ob = _bare_rig(scene)
    _pose_mode(ob)
    for pb in ob.pose.bones:
        waft_rigs.set_selected(pb, pb.name in ("hips", "hand.L"))
    bpy.ops.waft.ragdoll_create(source="SELECTED")
    bodies = {pb.name for pb in ob.pose.bones if pb.waft_ragdoll.body}
    assert bodies == {"hips", "spine", "chest", "upper_arm.L", "forearm.L", "hand.L"}


def test_create_from_a_bone_collection(scene):
    ob = _bare_rig(scene)
    for bone in ob.data.bones:  # bones named like no humanoid part, in one collection
        bone.name = "J_" + bone.name.replace(".", "_")
    torso = ob.data.collections.new("Ragdoll")
    for name in ("J_hips", "J_spine", "J_chest", "J_upper_arm_L", "J_forearm_L"):
        torso.assign(ob.data.bones[name])
    _pose_mode(ob)
    assert bpy.ops.waft.ragdoll_create(source="COLLECTION",
                                       bone_collection="Ragdoll") == {'FINISHED'}
    bodies = {pb.name for pb in ob.pose.bones if pb.waft_ragdoll.body}
    assert bodies == {"J_hips", "J_spine", "J_chest", "J_upper_arm_L", "J_forearm_L"}
    assert ob.waft_ragdoll.enabled
    with pytest.raises(RuntimeError, match=r"Armature 'Dummy': no bone collection 'Nope'"):
        bpy.ops.waft.ragdoll_create(source="COLLECTION", bone_collection="Nope")


def _limit_violations(scene, ob, frames) -> float:
    """Largest swing/twist correction (rad) the animation would need to fit the bodies'
    limits, over ``frames`` (0 when the animation is inside every limit)."""
    from waft.core.ragdoll.limits import joint_rotation, limit_correction, swing_twist
    from waft.core.rotations import quat_from_matrix

    bodies = [pb for pb in ob.pose.bones if pb.waft_ragdoll.body and pb.parent is not None]

    def quats(matrices):
        m = np.array(matrices)[:, :3, :3]
        return quat_from_matrix(m / np.linalg.norm(m, axis=-2, keepdims=True))

    rest_c = quats([pb.bone.matrix_local for pb in bodies])
    rest_p = quats([pb.parent.bone.matrix_local for pb in bodies])
    rest = joint_rotation(rest_c, rest_p, np.tile([1.0, 0.0, 0.0, 0.0], (len(bodies), 1)))
    swing = np.array([tuple(pb.waft_ragdoll.swing_limit) for pb in bodies])
    twist = np.array([tuple(pb.waft_ragdoll.twist_limit) for pb in bodies])
    center = np.array([tuple(pb.waft_ragdoll.swing_center) for pb in bodies])
    worst = 0.0
    for frame in frames:
        scene.frame_set(frame)
        d = joint_rotation(quats([pb.matrix for pb in bodies]),
                           quats([pb.parent.matrix for pb in bodies]), rest)
        fix_s, fix_t = limit_correction(*swing_twist(d), swing, twist, center)
        worst = max(worst, float(np.abs(fix_s).max()), float(np.abs(fix_t).max()))
    return worst


@pytest.mark.parametrize("fit", ["NONE", "CURRENT", "RIG_ACTIONS", None, "old-off", "old-on"])
def test_create_fits_limits_to_the_animation(scene, fit):
    """None: the operator's default, which fits (the character's own animation is inside).
    "old-…": the option's older form, ``fit_to_animation=False/True``, which scripts written
    before Fit Limits To still pass (off keeps the table's limits)."""
    ob = _bare_rig(scene)
    frames = range(1, 25)
    scene.frame_start, scene.frame_end = frames[0], frames[-1]
    rigs.animate_wave(ob, frames, amplitude=1.4)  # arms and legs far past humanoid limits
    _pose_mode(ob)
    options = ({} if fit is None else {"fit_to_animation": fit == "old-on"}
               if fit in (None, "old-off", "old-on") else {"fit_limits": fit})
    assert bpy.ops.waft.ragdoll_create(source="HUMANOID", **options) == {'FINISHED'}
    worst = _limit_violations(scene, ob, frames)
    if fit not in ("NONE", "old-off"):
        assert worst == 0.0  # the character's own animation never meets a limit
    else:
        assert worst > 0.2  # the humanoid defaults alone would fight this animation


MIXAMO = {"hips": "Hips", "spine": "Spine", "chest": "Spine2", "neck": "Neck", "head": "Head"}
for _side, _word in (("L", "Left"), ("R", "Right")):
    MIXAMO.update({f"upper_arm.{_side}": f"{_word}Arm", f"forearm.{_side}": f"{_word}ForeArm",
                   f"hand.{_side}": f"{_word}Hand", f"thigh.{_side}": f"{_word}UpLeg",
                   f"shin.{_side}": f"{_word}Leg", f"foot.{_side}": f"{_word}Foot"})


def _stash(ob, name: str):
    """Put ``ob``'s active action on a muted NLA track of its own, as Blender's Stash does
    (and the glTF importer does with every clip but the first), and give it ``name``."""
    anim_data = ob.animation_data
    action = anim_data.action
    action.name = name
    track = anim_data.nla_tracks.new()
    track.name = "[Action Stash]"
    track.strips.new(name, int(action.frame_range[0]), action)
    track.mute = True
    anim_data.action = None
    return action


@pytest.mark.parametrize("fit", ["CURRENT", "RIG_ACTIONS"])
def test_a_mixamo_rigs_stashed_animation_is_inside_the_limits(scene, waft_module_name, fit):
    """A Mixamo-named rig plays a calm wave and has a wild one stashed (a muted NLA track):
    Create's default (Rig's Actions) fits both, so switching to the stashed one meets no limit;
    fitted to the current animation alone, the stashed one is far outside, until the warning's
    fix (Fit Limits to Animation, which reads the rig's actions too) widens them."""
    ob = _bare_rig(scene)
    frames = range(1, 25)
    scene.frame_start, scene.frame_end = frames[0], frames[-1]
    rigs.animate_wave(ob, frames, amplitude=1.4)  # arms and legs far past humanoid limits
    wild = _stash(ob, "Wild")
    rigs.animate_wave(ob, frames, amplitude=0.3)
    calm = ob.animation_data.action
    for old, new in MIXAMO.items():  # Blender renames the channels of every action with them
        ob.data.bones[old].name = "mixamorig:" + new
    _pose_mode(ob)
    assert bpy.ops.waft.ragdoll_create(source="HUMANOID", fit_limits=fit) == {'FINISHED'}
    assert ob.pose.bones["mixamorig:LeftForeArm"].waft_ragdoll.body
    assert rigs.limits_exceeded_deg(scene, ob, frames, waft_module_name) < 1.0
    ob.animation_data.action = wild
    if hasattr(ob.animation_data, "action_slot"):
        ob.animation_data.action_slot = wild.slots[0]
    assert any(fc.data_path.startswith('pose.bones["mixamorig:')
               for fc in waft_rigs.action_fcurves(wild) if "Hips" in fc.data_path)
    exceeded = rigs.limits_exceeded_deg(scene, ob, frames, waft_module_name)
    if fit == "RIG_ACTIONS":
        assert exceeded < 1.0
    else:
        assert exceeded > 20.0
        # the warning's fix reads the rig's actions too (its default, as Create's), from the
        # calm one playing
        ob.animation_data.action = calm
        assert bpy.ops.waft.fix_warning(fix="FIT_LIMITS", armature=ob.name) == {'FINISHED'}
        assert ob.animation_data.action == calm
        ob.animation_data.action = wild
        assert rigs.limits_exceeded_deg(scene, ob, frames, waft_module_name) < 1.0
    ob.animation_data.action = calm


def test_create_rejects_separate_trees(scene):
    ob = _bare_rig(scene)
    _pose_mode(ob)
    for pb in ob.pose.bones:
        waft_rigs.set_selected(pb, pb.name in ("hand.L", "foot.R"))
    with pytest.raises(RuntimeError, match=r"separate trees"):
        bpy.ops.waft.ragdoll_create(source="SELECTED")
    assert not any(pb.waft_ragdoll.body for pb in ob.pose.bones)


def test_set_mode_on_selected_bodies(scene):
    ob = rigs.humanoid(scene)
    _pose_mode(ob)
    for pb in ob.pose.bones:
        waft_rigs.set_selected(pb, pb.name.startswith("hand"))
    assert bpy.ops.waft.ragdoll_set_mode(mode="KINEMATIC") == {'FINISHED'}
    modes = {pb.name: pb.waft_ragdoll.mode for pb in ob.pose.bones}
    assert modes["hand.L"] == modes["hand.R"] == "KINEMATIC"
    assert modes["forearm.L"] == "DRIVEN"


def test_apply_preset(scene):
    ob = rigs.humanoid(scene)
    _pose_mode(ob)
    assert bpy.ops.waft.ragdoll_apply_preset(preset="LOCOMOTION") == {'FINISHED'}
    assert all(pb.waft_ragdoll.blend == pytest.approx(0.4) for pb in ob.pose.bones)
    bpy.ops.waft.ragdoll_apply_preset(preset="LIMP")
    assert not ob.waft_ragdoll.root_lock
    assert all(pb.waft_ragdoll.mode == "FREE" for pb in ob.pose.bones)


def test_every_float_setting_is_keyframeable(scene):
    ob = rigs.humanoid(scene)
    body = ob.pose.bones["chest"].waft_ragdoll
    for name, prop in body.bl_rna.properties.items():
        if prop.type == 'FLOAT':
            assert prop.is_animatable, name
            ob.keyframe_insert(f'pose.bones["chest"].waft_ragdoll.{name}', frame=1)
    for name, prop in ob.waft_ragdoll.bl_rna.properties.items():
        if prop.type == 'FLOAT':
            assert prop.is_animatable, name


def test_panels_and_operators_are_registered():
    for name in ("WAFT_PT_ragdoll", "WAFT_PT_ragdoll_world", "WAFT_PT_ragdoll_carrier",
                 "WAFT_PT_ragdoll_body", "WAFT_PT_ragdoll_sidebar"):
        assert hasattr(bpy.types, name), name
    for op in ("ragdoll_create", "ragdoll_set_mode", "ragdoll_apply_preset"):
        assert hasattr(bpy.ops.waft, op)
        getattr(bpy.ops.waft, op).get_rna_type()  # raises if the operator is not registered
