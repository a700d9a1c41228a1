"""A ragdoll on a freshly generated Rigify human (Blender's own metarig).

Rigify names its controls, ORG and MCH bones like the body too; the mesh follows the DEF bones,
which hang from ORG bones (DEF-thigh.L from ORG-spine) and copy the tweak bones' transforms.
Create › Humanoid must pick the DEF skeleton and join it into one tree through the ORG↔DEF
correspondence, and the baked DEF bones must play the simulation (their constraints turned off
for the result, reversibly).
"""

from __future__ import annotations

import sys

import bpy
import numpy as np
import pytest

FRAMES = range(1, 121)  # 5 s at 24 fps: a limp tumble takes about 4 s to settle


@pytest.fixture
def scene(rigify_human):
    """The file holding the fresh Rigify human (conftest's ``rigify_human``: generated once per
    session, opened anew for each test), in place of conftest's empty one."""
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    return scene


@pytest.fixture
def rig(scene, rigify_human):
    return rigify_human


def _create(rig):
    bpy.ops.object.mode_set(mode='POSE')
    result = bpy.ops.waft.ragdoll_create(source='HUMANOID')
    bpy.ops.object.mode_set(mode='OBJECT')
    assert result == {'FINISHED'}
    return [pb for pb in rig.pose.bones if pb.waft_ragdoll.body]


def _heads_tails(scene, rig, names):
    out = np.empty((len(FRAMES), len(names), 2, 3))
    for i, frame in enumerate(FRAMES):
        scene.frame_set(frame)
        mw = rig.matrix_world
        for j, name in enumerate(names):
            pb = rig.pose.bones[name]
            out[i, j] = (mw @ pb.head, mw @ pb.tail)
    return out


def test_create_humanoid_picks_the_deform_skeleton_as_one_tree(scene, rig, bake_api):
    bodies = _create(rig)
    names = {pb.name for pb in bodies}
    assert all(n.startswith("DEF-") for n in names), sorted(names)
    for part in ("DEF-spine", "DEF-spine.006", "DEF-thigh.L", "DEF-shin.R.001",
                 "DEF-upper_arm.L", "DEF-forearm.R", "DEF-hand.L", "DEF-foot.R"):
        assert part in names
    # The DEF bones follow constraints: the operator chose to turn them off for the result.
    assert scene.waft.constrained_bones == "TURN_OFF"
    # Ten frames: the bake's body count is what is checked here (the falls below bake all 120)
    report = bake_api.bake_scene(scene, frame_start=FRAMES[0], frame_end=FRAMES[9])
    assert report.systems["ragdoll"].setups[0].bodies == len(bodies)


def test_a_limp_rigify_human_falls_holds_its_joints_and_rests_on_the_ground(scene, rig,
                                                                            bake_api):
    bodies = _create(rig)
    for pb in bodies:
        pb.waft_ragdoll.mode = "FREE"
    rig.waft_ragdoll.root_lock = False  # limp from the first frame
    names = [pb.name for pb in bodies]
    standing = _heads_tails(scene, rig, names)
    report = bake_api.bake_scene(scene)
    played = _heads_tails(scene, rig, names)
    # It fell: the head came down by most of its height.
    head = names.index("DEF-spine.006")
    assert played[-1, head, 1, 2] < 0.5 * standing[0, head, 1, 2]
    # Nothing sank through the ground (capsule radii stay above it) and it came to rest.
    assert played[:, :, :, 2].min() > -0.03
    assert np.abs(played[-1] - played[-4]).max() < 0.01
    # Every joint holds in the simulation (B-bone segments at the previous segment's tail, a
    # thigh at the hips, an upper arm at the shoulder, through Rigify's ORG parents) ...
    frames = report.systems["ragdoll"].body_matrix["rig"]  # (F, N, 4, 4) at the bone heads
    gaps = _joint_gaps(rig, _body_order(rig), frames)
    assert gaps.max() < 0.006, gaps.max()  # the solver's joint tolerance is 5 mm
    # ... and the keys play it: rotation keys drop those millimetres joint by joint, so a
    # seven-segment spine ends up to ~3 cm off at the head.
    sim_heads = frames[:, :, :3, 3]
    played_heads = _heads_tails(scene, rig, _body_order(rig))[:, :, 0]
    assert np.abs(played_heads - sim_heads).max() < 0.035


SEGMENTS = [f"DEF-{bone}.{side}" for side in "LR" for bone in ("upper_arm", "forearm", "thigh",
                                                                "shin")]


def test_create_welds_each_limb_bone_s_segments_into_one_body(scene, rig, bake_api):
    """Rigify's DEF-shin.L and DEF-shin.L.001 are one bone's B-bone segments (the mesh bends
    smoothly along them); the joint between them is mid-bone, not a knee. Create welds the
    second to the first: one capsule over both, their masses summed."""
    bodies = _create(rig)
    welded = sorted(pb.name for pb in bodies if pb.waft_ragdoll.weld)
    assert welded == sorted(n + ".001" for n in SEGMENTS)
    reading = _module("addon.ragdoll.reading")
    read = reading.read_ragdoll(scene, rig, 1.0)
    assert len(read.names) == len(bodies) - len(SEGMENTS)
    assert len(read.keyed.names) == len(bodies)
    for name in SEGMENTS:
        i = read.names.index(name)
        halves = [rig.pose.bones[n] for n in (name, name + ".001")]
        length = sum((rig.matrix_world @ pb.bone.tail_local
                      - rig.matrix_world @ pb.bone.head_local).length for pb in halves)
        assert abs(read.length[i] - length) < 1e-5, name
        assert abs(read.mass[i] - sum(pb.waft_ragdoll.mass for pb in halves)) < 1e-5, name
    # the knee joins the shin to the thigh's body, not to a half of it
    shin = read.names.index("DEF-shin.L")
    assert read.names[read.parent[shin]] == "DEF-thigh.L"


def test_a_limp_rigify_human_keeps_each_limb_bone_straight(scene, rig, bake_api):
    """Limp, a Rigify human folded its shins and forearms in the middle (93-145° between a
    bone's two segments, the mid-bone joint having the knee's or elbow's limits). Welded, each
    limb bone stays one rigid segment in the simulation and as played, and the knees and
    elbows still bend only as hinges."""
    bodies = _create(rig)
    for pb in bodies:
        pb.waft_ragdoll.mode = "FREE"
    rig.waft_ragdoll.root_lock = False
    report = bake_api.bake_scene(scene)
    names = _body_order(rig)
    frames = report.systems["ragdoll"].body_matrix["rig"]
    assert frames.shape[1] == len(names)
    played = _heads_tails(scene, rig, names)
    for name in SEGMENTS:
        a, b = names.index(name), names.index(name + ".001")
        rel = np.swapaxes(frames[:, a, :3, :3], -1, -2) @ frames[:, b, :3, :3]
        bend = np.arccos(np.clip((np.trace(rel, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0))
        assert np.degrees(bend.max()) < 0.01, name
        # played: the second segment starts at the first's tail and runs on along it
        first, second = played[:, a], played[:, b]
        assert np.abs(second[:, 0] - first[:, 1]).max() < 1e-4, name
        way = [(p[:, 1] - p[:, 0]) / np.linalg.norm(p[:, 1] - p[:, 0], axis=-1, keepdims=True)
               for p in (first, second)]
        assert np.degrees(np.arccos(np.clip(np.sum(way[0] * way[1], axis=-1), -1, 1)).max()
                          ) < 0.05, name
    # knees bend backwards only, elbows forwards only: the hinge's flexion side
    for knee, thigh in (("DEF-shin.L", "DEF-thigh.L"), ("DEF-forearm.R", "DEF-upper_arm.R")):
        body = rig.pose.bones[knee].waft_ragdoll
        axis = 0 if abs(body.swing_center[0]) > 0 else 1
        sign = np.sign(body.swing_center[axis])
        c, p = names.index(knee), names.index(thigh)
        rest = (np.linalg.inv(np.array(rig.data.bones[thigh].matrix_local))
                @ np.array(rig.data.bones[knee].matrix_local))[:3, :3]
        local = np.swapaxes(rest, 0, 1) @ np.swapaxes(frames[:, p, :3, :3], -1, -2) \
            @ frames[:, c, :3, :3]
        # swing about the hinge axis (X or Z of the child), from where the bone's Y went
        y = local[:, :, 1]
        bent = np.arctan2(y[:, 2] if axis == 0 else -y[:, 0], y[:, 1])
        extension = np.radians(10.0) + np.radians(3.0)  # 10° past straight + 3° slack
        assert np.all(sign * bent > -extension), (knee, np.degrees(sign * bent).min())


def _animate_fk(rig, frames) -> None:
    """Rigify's own controls, as an animator keys them: arms and legs in FK, elbows and knees
    bending, hands twisting (Rigify spreads a hand's twist along the forearm's segments)."""
    for parent in ("upper_arm_parent.L", "upper_arm_parent.R", "thigh_parent.L",
                   "thigh_parent.R"):
        rig.pose.bones[parent]["IK_FK"] = 1.0
    keys = {"forearm_fk": (0, 1.6), "shin_fk": (0, 1.4), "hand_fk": (1, 0.9),
            "thigh_fk": (0, -0.7), "upper_arm_fk": (2, 0.6)}
    for frame in frames:
        phase = np.sin(2.0 * np.pi * (frame - frames[0]) / len(frames))
        for side in "LR":
            for control, (axis, amplitude) in keys.items():
                pb = rig.pose.bones[f"{control}.{side}"]
                pb.rotation_mode = 'XYZ'
                angle = [0.0, 0.0, 0.0]
                angle[axis] = amplitude * (0.5 + 0.5 * phase) if axis == 0 else amplitude * phase
                pb.rotation_euler = angle
                pb.keyframe_insert("rotation_euler", frame=frame)


def test_an_animated_rigify_human_meets_no_limit_and_its_segments_play_the_animation(
        scene, rig, bake_api):
    """Created on a Rigify human animated with its own controls, the ragdoll's joints (the
    knee on the thigh's body, not on its second segment) hold the animation inside their
    limits at every frame, and a ragdoll blended fully to the animation plays it back,
    the forearm's second segment keeping the share of the hand's twist Rigify gives it."""
    frames = range(1, 25)
    scene.frame_start, scene.frame_end = frames[0], frames[-1]
    _animate_fk(rig, frames)
    bodies = _create(rig)  # fits the limits to the animation (the default)
    warnings = _module("addon.ragdoll.warnings")
    names = [pb.name for pb in bodies]
    animation = _poses(scene, rig, names, frames)
    twist = []
    for frame in frames:
        scene.frame_set(frame)
        assert warnings._outside_limits(rig) == [], frame
        a, b = (np.array(rig.pose.bones[n].matrix)[:3, :3] for n in ("DEF-forearm.L",
                                                                      "DEF-forearm.L.001"))
        twist.append(np.degrees(np.arccos(np.clip((np.trace(a.T @ b) - 1.0) / 2.0, -1, 1))))
    assert max(twist) > 10.0  # Rigify twists the second segment with the hand
    for pb in bodies:
        pb.waft_ragdoll.blend = 1.0
    bake_api.bake_scene(scene)
    played = _poses(scene, rig, names, frames)
    assert np.abs(played - animation).max() < 1e-3  # positions (m) and axes, twist included


def test_a_rigify_humans_stashed_animation_is_inside_the_limits(scene, rig, waft_module_name):
    """A Rigify human idles (its torso bobbing) and has its FK flexing animation stashed (a
    muted NLA track, as Blender's Stash leaves it). Create's default (Fit Limits To › Rig's
    Actions) reads the stashed one too, through Rigify's constraints (the DEF bones follow the
    FK controls), so playing it meets no limit; fitted to the idle alone it does."""
    import ragdoll_rigs as rigs

    frames = range(1, 25)
    scene.frame_start, scene.frame_end = frames[0], frames[-1]
    _animate_fk(rig, frames)
    anim_data = rig.animation_data
    flex = anim_data.action
    flex.name = "Flex"
    track = anim_data.nla_tracks.new()
    track.name = "[Action Stash]"
    track.strips.new(flex.name, frames[0], flex)
    track.mute = True
    anim_data.action = None
    for pb in rig.pose.bones:  # the idle: the FK controls at rest, the torso bobbing
        if pb.name.split(".")[0] in ("forearm_fk", "shin_fk", "hand_fk", "thigh_fk",
                                     "upper_arm_fk"):
            pb.rotation_euler = (0.0, 0.0, 0.0)
    for frame in frames:
        rig.pose.bones["torso"].location = (0.0, 0.0, 0.02 * np.sin(frame / 4.0))
        rig.pose.bones["torso"].keyframe_insert("location", frame=frame)
    idle = anim_data.action

    def play(action):
        anim_data.action = action
        if hasattr(anim_data, "action_slot"):
            anim_data.action_slot = action.slots[0]

    def outside(action) -> float:
        play(action)
        return rigs.limits_exceeded_deg(scene, rig, frames, waft_module_name)

    for fit in ("CURRENT", "RIG_ACTIONS"):
        play(idle)
        bpy.ops.object.mode_set(mode='POSE')
        assert bpy.ops.waft.ragdoll_create(source='HUMANOID', fit_limits=fit) == {'FINISHED'}
        bpy.ops.object.mode_set(mode='OBJECT')
        assert anim_data.action == idle and track.mute  # as the user left them
        found = {"idle": outside(idle), "flex": outside(flex)}
        if fit == "CURRENT":
            assert found["idle"] < 1.0 and found["flex"] > 5.0, found
        else:
            assert max(found.values()) < 1.0, found


def _poses(scene, rig, names, frames) -> np.ndarray:
    """(F, N, 4, 4) world matrices of the bones ``names``."""
    out = np.empty((len(frames), len(names), 4, 4))
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        for j, name in enumerate(names):
            out[i, j] = np.array(rig.matrix_world @ rig.pose.bones[name].matrix)
    return out


def _module(name: str):
    from importlib import import_module
    return import_module(_addon_module() + "." + name)


def _body_order(rig) -> list[str]:
    from importlib import import_module
    reading = import_module(_addon_module() + ".addon.ragdoll.reading")
    return [pb.name for pb in reading.body_bones(rig)]


def _joint_gaps(rig, names, frames) -> np.ndarray:
    """(F, bodies) distance of each body's head from its rest place in its joint parent's
    simulated frame (m); 0 for the root."""
    from importlib import import_module
    reading = import_module(_addon_module() + ".addon.ragdoll.reading")
    body_names = set(names)
    out = np.zeros(frames.shape[:2])
    for k, name in enumerate(names):
        parent = reading.joint_parent(rig.pose.bones[name], body_names)
        if parent is None:
            continue
        p = names.index(parent)
        offset = (np.linalg.inv(np.array(rig.data.bones[parent].matrix_local))
                  @ np.array(rig.data.bones[name].matrix_local)[:, 3])
        anchor = np.einsum("fij,j->fi", frames[:, p], offset)[:, :3]
        out[:, k] = np.linalg.norm(frames[:, k, :3, 3] - anchor, axis=-1)
    return out


def _addon_module() -> str:
    return next(name for name in sys.modules if name.endswith(".addon.ragdoll.reading")
                ).rsplit(".addon.ragdoll.reading", 1)[0]


FEET = ("DEF-foot.L", "DEF-foot.R", "DEF-toe.L", "DEF-toe.R")


def _table_radii(rig, waft, names=FEET) -> dict[str, float]:
    """The humanoid table's capsule radius of bodies ``names`` (a fraction of the height); the
    feet's is what Create gave them before it sized them to the ground."""
    import importlib
    create = importlib.import_module(waft.__name__ + ".addon.ragdoll.create")
    humanoid = importlib.import_module(waft.__name__ + ".addon.ragdoll.humanoid")
    ends = np.array([(*p, 1.0) for b in rig.data.bones for p in (b.head_local, b.tail_local)])
    height = create.character_height((ends @ np.array(rig.matrix_world).T)[:, :3])
    return {n: humanoid.defaults_for(n).radius_of_height * height for n in names}


def test_feet_inside_the_ground_are_named_and_fitting_their_radius_removes_the_jump(
        scene, rig, waft, bake_api):
    """A Rigify foot with the humanoid table's 4.8 cm capsule round a bone whose tail is 1.7 cm
    above the sole (what Create gave it before it sized feet to the ground, and what a setup
    made then still has): on the default ground it starts 3 cm inside and the bake pushes it
    out on the first frame. The panel names it; *Fit Radius to Ground* makes each such radius
    the bone's height above the ground (undoable), and the first frame no longer jumps."""
    import importlib
    warnings = importlib.import_module(waft.__name__ + ".addon.ragdoll.warnings")
    _create(rig)
    for name, radius in _table_radii(rig, waft).items():
        rig.pose.bones[name].waft_ragdoll.radius = radius
    rig.waft_ragdoll.fall_threshold = 0.0
    scene.frame_set(1)
    found = [w for w in warnings.ragdoll_warnings(scene, rig) if w.fix == "GROUND_RADIUS"]
    assert len(found) == 1 and "mm inside the ground" in found[0].text, found
    depths = warnings.ground_depths(scene, rig)
    assert {"DEF-foot.L", "DEF-foot.R", "DEF-toe.L", "DEF-toe.R"} <= set(depths)
    assert depths["DEF-foot.L"][0] > 0.02  # 3 cm

    feet = ["DEF-foot.L", "DEF-toe.L"]
    jump = _first_frame_jump(scene, rig, feet, bake_api)
    assert jump > 0.02  # the push-out's jump
    bpy.ops.ed.undo_push(message="before the fix")
    radius = rig.pose.bones["DEF-foot.L"].waft_ragdoll.radius
    assert bpy.ops.waft.fix_warning(fix="GROUND_RADIUS", armature=rig.name) == {'FINISHED'}
    fitted = rig.pose.bones["DEF-foot.L"].waft_ragdoll.radius
    assert fitted == pytest.approx(depths["DEF-foot.L"][1]) and fitted < radius
    assert warnings.ground_depths(scene, rig) == {}
    assert _first_frame_jump(scene, rig, feet, bake_api) < 0.3 * jump
    name = rig.name
    bpy.ops.ed.undo_push(message="fix")
    bpy.ops.ed.undo()
    rig = bpy.context.scene.objects[name]
    assert rig.pose.bones["DEF-foot.L"].waft_ragdoll.radius == radius


def test_create_sizes_the_feet_clear_of_the_ground(scene, rig, waft, bake_api):
    """Create gives each foot and toe body its bone's height above the ground (1.7 cm, not the
    table's 4.8 and 3.0 cm), in the rest pose and at the current frame: no ground warning, and
    the first frame does not jump (the table's radii jumped 30 mm)."""
    import importlib
    warnings = importlib.import_module(waft.__name__ + ".addon.ragdoll.warnings")
    scene.frame_set(1)
    _create(rig)
    rig.waft_ragdoll.fall_threshold = 0.0
    assert not [w for w in warnings.ragdoll_warnings(scene, rig) if w.fix == "GROUND_RADIUS"]
    assert warnings.ground_depths(scene, rig) == {}
    assert warnings.ground_depths(scene, rig, rest=True) == {}
    table = _table_radii(rig, waft)
    for name in FEET:
        bone = rig.pose.bones[name].bone
        lowest = min((rig.matrix_world @ p).z for p in (bone.head_local, bone.tail_local))
        radius = rig.pose.bones[name].waft_ragdoll.radius
        assert radius == pytest.approx(lowest, abs=1e-5) and radius < table[name], name
    for name, radius in _table_radii(rig, waft, ("DEF-shin.L", "DEF-thigh.L", "DEF-spine")
                                     ).items():  # the others keep the table's
        assert rig.pose.bones[name].waft_ragdoll.radius == pytest.approx(radius), name
    assert _first_frame_jump(scene, rig, ["DEF-foot.L", "DEF-toe.L"], bake_api) < 0.005


def _first_frame_jump(scene, rig, names, bake_api) -> float:
    """How far the tails of bones ``names`` move from frame 1 to 2 in a bake of frames 1-3
    (the scene's range is put back)."""
    kept = scene.frame_start, scene.frame_end
    scene.frame_start, scene.frame_end = 1, 3
    try:
        bake_api.bake_scene(scene)
        scene.frame_set(1)
        before = [np.array(rig.matrix_world @ rig.pose.bones[n].tail) for n in names]
        scene.frame_set(2)
        after = [np.array(rig.matrix_world @ rig.pose.bones[n].tail) for n in names]
    finally:
        scene.frame_start, scene.frame_end = kept
    return float(max(np.linalg.norm(a - b) for a, b in zip(after, before, strict=True)))
