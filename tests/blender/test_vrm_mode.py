"""The VRM Spring Bone solver through the whole pipeline: a rig built with bpy, baked, played
back, and compared with the core's VRM algorithm run on the same animation by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

FPS = 30


def _vrm_rig(scene, *, bent: bool = False):
    """Root (keyed sideways swing) with a 3-bone chain; VRM settings differ from the defaults
    and the middle bone overrides them."""
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, 40
    ob = rigs.chain_rig(scene, count=3, length=0.3,
                        direction=(0.4, 0.0, -1.0) if bent else (0.0, 0.0, -1.0))
    ob.waft.solver = 'VRM'
    ob.waft.vrm_stiffness = 0.8
    ob.waft.vrm_gravity_power = 0.5
    ob.waft.vrm_drag_force = 0.3
    ob.waft.radius = 0.02
    middle = ob.pose.bones["Hair.001"].waft
    middle.use_overrides = True
    middle.vrm_stiffness = 2.0
    middle.vrm_drag_force = 0.6
    middle.vrm_gravity_power = 0.25  # an override replaces every VRM setting of the bone
    middle.radius = 0.03
    root = ob.pose.bones[rigs.ROOT]
    root.rotation_mode = 'XYZ'
    for frame, angle in ((1, 0.0), (10, 0.9), (20, -0.7), (30, 0.3), (40, 0.0)):
        root.rotation_euler = (0.0, angle, 0.0)
        root.keyframe_insert("rotation_euler", frame=frame)
    return ob


def _core_reference(scene, ob, waft, frames):
    """The same springs through ``simulate_vrm_springs`` directly, from the rig's rest bones and
    the root's evaluated pose (the Waft track muted: the user's animation only)."""
    vrm = sys.modules[waft.__name__ + ".core.strands.vrm_spring"]
    names = rigs.bone_names("Hair", 3)
    bones = [ob.data.bones[n] for n in names]
    rest = [np.array(b.matrix_local) for b in bones]
    parent_rest = np.array(ob.data.bones[rigs.ROOT].matrix_local)
    local = [np.linalg.inv(p) @ r for p, r in zip([parent_rest] + rest[:-1], rest, strict=True)]
    child = [(np.linalg.inv(rest[i]) @ np.append(np.array(bones[i + 1].head_local), 1.0))[:3]
             for i in range(2)] + [np.array((0.0, bones[-1].length, 0.0))]
    track = ob.animation_data.nla_tracks.get("Waft")
    if track is not None:
        track.mute = True
    parent = []
    for frame in frames:
        scene.frame_set(frame)
        parent.append(np.array(ob.matrix_world) @ np.array(ob.pose.bones[rigs.ROOT].matrix))
    if track is not None:
        track.mute = False

    def per_joint(values):
        return np.array(values, dtype=np.float64)[None, None]

    params = vrm.VrmJointParams(
        stiffness=per_joint([0.8, 2.0, 0.8]), gravity_power=per_joint([0.5, 0.25, 0.5]),
        gravity_dir=np.broadcast_to((0.0, 0.0, -1.0), (1, 1, 3, 3)),
        drag_force=per_joint([0.3, 0.6, 0.3]), hit_radius=per_joint([0.02, 0.03, 0.02]))
    chains = vrm.VrmChains(local_matrix=np.array(local)[None], child_position=np.array(child)[None],
                           count=np.array([3]))
    result = vrm.simulate_vrm_springs(chains=chains, parent_matrix=np.array(parent)[:, None],
                                      params=params, fps=float(FPS))
    return result


def test_vrm_spring_bone_bake_plays_back_the_vrm_algorithm(scene, bake_api, waft):
    ob = _vrm_rig(scene, bent=True)
    report = bake_api.bake_scene(scene, preroll=0)  # a VRM runtime starts from the rest pose
    frames = list(range(1, 41))
    names = rigs.bone_names("Hair", 3)
    played = rigs.world_points(scene, ob, names, frames)
    reference = _core_reference(scene, ob, waft, frames)
    np.testing.assert_allclose(played[:, 1:], reference.tail[:, 0], atol=1e-5)
    np.testing.assert_allclose(report.chain_positions["Rig: Hair.000"], played, atol=1e-5)
    # The twist VRM gives each joint is keyed too: the played-back bone X axes are VRM's.
    scene.frame_set(25)
    for j, name in enumerate(names):
        x_axis = np.array((ob.matrix_world @ ob.pose.bones[name].matrix).col[0][:3])
        x_axis /= np.linalg.norm(x_axis)
        vrm_x = reference.world_matrix[24, 0, j, :3, 0]
        np.testing.assert_allclose(x_axis, vrm_x / np.linalg.norm(vrm_x), atol=1e-5)
    # It moved: the swing left the chain behind the root and the gravity pulled it down.
    assert np.abs(played[1:, -1] - played[0, -1]).max() > 0.05


def test_vrm_mode_ignores_the_frame_rate_independent_solver_settings(scene, bake_api, waft):
    """VRM Spring Bone reads only its own settings: Waft's damping, shape stiffness and the like
    change nothing."""
    ob = _vrm_rig(scene)
    bake_api.bake_scene(scene)
    names = rigs.bone_names("Hair", 3)
    first = rigs.world_points(scene, ob, names, range(1, 41))
    bake_api.clear_bake(scene)
    ob.waft.damping, ob.waft.shape_stiffness, ob.waft.gravity_factor = 9.0, 0.9, 0.0
    bake_api.bake_scene(scene)
    second = rigs.world_points(scene, ob, names, range(1, 41))
    assert np.array_equal(first, second)


def test_vrm_and_waft_setups_bake_together(scene, bake_api):
    """A scene with one setup of each solver: each chain gets its own solver's motion, the same
    as when it is baked alone."""
    vrm_rig = _vrm_rig(scene)
    waft_rig = rigs.chain_rig(scene, "Other", start=(2.0, 0.0, 2.0))
    root = waft_rig.pose.bones[rigs.ROOT]
    for frame, x in ((1, 0.0), (15, 0.4), (40, 0.4)):
        root.location = (x, 0.0, 0.0)
        root.keyframe_insert("location", frame=frame)
    vrm_names, waft_names = rigs.bone_names("Hair", 3), rigs.bone_names("Hair", 4)
    bake_api.bake_scene(scene)
    vrm_both = rigs.world_points(scene, vrm_rig, vrm_names, range(1, 41))
    waft_both = rigs.world_points(scene, waft_rig, waft_names, range(1, 41))
    bake_api.clear_bake(scene)
    bake_api.bake_scene(scene, objects=[vrm_rig])
    vrm_alone = rigs.world_points(scene, vrm_rig, vrm_names, range(1, 41))
    bake_api.clear_bake(scene)
    bake_api.bake_scene(scene, objects=[waft_rig])
    waft_alone = rigs.world_points(scene, waft_rig, waft_names, range(1, 41))
    np.testing.assert_allclose(vrm_both, vrm_alone, atol=1e-9)
    np.testing.assert_allclose(waft_both, waft_alone, atol=1e-9)
    # The Waft chain swung behind its root (which only translates).
    lag = (waft_both[:, -1] - waft_both[:, 0]) - (waft_both[0, -1] - waft_both[0, 0])
    assert np.abs(lag).max() > 0.02


def test_vrm_chains_are_previewed_bit_for_bit_as_baked(scene, bake_api, waft):
    """The live preview solves the VRM Spring Bone chains over the whole shot at the first frame
    (as the bake does) and plays them beside a Waft chain: every frame's bones are the bake's,
    at the Sample Rate's sub-frames and with a pre-roll."""
    vrm_rig = _vrm_rig(scene, bent=True)
    waft_rig = rigs.chain_rig(scene, "Other", start=(2.0, 0.0, 2.0))
    root = waft_rig.pose.bones[rigs.ROOT]
    for frame, x in ((1, 0.0), (15, 0.4), (40, 0.4)):
        root.location = (x, 0.0, 0.0)
        root.keyframe_insert("location", frame=frame)
    scene.waft.sample_rate, scene.waft.preroll = 120.0, 6
    scene.waft.use_key_reduction = False
    bones = [(vrm_rig, rigs.bone_names("Hair", 3)), (waft_rig, rigs.bone_names("Hair", 4))]
    preview = sys.modules[waft.__name__ + ".addon.preview"]
    frames = range(1, 41)
    scene.frame_set(1)
    scene.waft.use_preview = True
    previewed = {}
    for frame in frames:
        scene.frame_set(frame)
        previewed[frame] = rigs.shown_channels(bones)
    state = preview.state(scene)
    assert state.message == "" and sorted(state.cache) == list(frames), state.status()
    assert "VRM spring bones solved over the shot" in state.status()
    scene.waft.use_preview = False
    bake_api.bake_scene(scene)
    for frame in frames:
        scene.frame_set(frame)
        np.testing.assert_array_equal(previewed[frame], rigs.shown_channels(bones),
                                      err_msg=f"frame {frame}")
    assert np.abs(previewed[20] - previewed[1]).max() > 0.05
