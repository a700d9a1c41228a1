"""The live preview plays cloth cages too: the timeline played forward shows, bit for bit, the
bone channels the bake of the same scene writes (quaternion and Euler bones, 24 and 25 fps,
a frictional ball in the cloth's way, the cloth and a bone chain in one scene), nothing is
keyed, and turning it off gives the bones back. The simulated cage it draws is the one the
bake's *Cage Output* mesh plays."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cloth_rigs  # noqa: E402
from cloth_rigs import rigs  # noqa: E402

pytestmark = pytest.mark.compat


def _scene(scene, fps: int, rotation_mode: str, *, chain: bool = False):
    scene.render.fps = fps
    rig, cage = cloth_rigs.cloth_rig(scene, rotation_mode=rotation_mode)
    scene.frame_start, scene.frame_end = 1, fps
    # A sway at several g, keyed in seconds so every frame rate plays the same motion.
    keys = [int(round(1 + t * fps)) for t in np.arange(0.0, 1.01, 0.25)]
    cloth_rigs.key_root(rig, keys, lambda f: (0.25 * np.sin(4.0 * (f - 1) / fps), 0.0, 0.0),
                        interpolation="BEZIER")
    ball = rigs.sphere_collider(scene, "Ball", (0.0, 0.15, 1.75), 0.12)
    ball.waft_collider.friction = 0.4
    scene.waft.sample_rate = 120.0
    if chain:
        chains = rigs.chain_rig(scene, "Tail", count=3, length=0.1, start=(1.0, 0.0, 2.0))
        rigs.key_figure_eight(chains.pose.bones[rigs.ROOT], fps, peak_g=3.0, seconds=1.0)
    scene.frame_set(scene.frame_start)
    return rig, cage


def _shown(rig, names) -> np.ndarray:
    bpy.context.view_layer.update()
    values = []
    for name in names:
        pose_bone = rig.pose.bones[name]
        prop = ("rotation_quaternion" if pose_bone.rotation_mode == "QUATERNION"
                else "rotation_euler")
        values.extend(pose_bone.location)
        values.extend(getattr(pose_bone, prop))
        values.extend(v for row in pose_bone.matrix for v in row)
    return np.array(values, dtype=np.float32)


def _segment_set(segments: np.ndarray) -> set:
    """Line segments as a set, either end first."""
    return {tuple(sorted((tuple(a), tuple(b)))) for a, b in segments.tolist()}


def _play(scene, rig, names, frames) -> dict:
    out = {}
    for frame in frames:
        scene.frame_set(frame)
        out[frame] = _shown(rig, names)
    return out


@pytest.mark.parametrize(("fps", "rotation_mode", "chain"),
                         [(24, "QUATERNION", False), (25, "XYZ", True)])
def test_played_cloth_preview_is_the_bake_bit_for_bit(scene, bake_api, waft_module_name, fps,
                                                      rotation_mode, chain):
    rig, cage = _scene(scene, fps, rotation_mode, chain=chain)
    names = [item.bone for item in cage.waft_cloth.bones]
    frames = range(scene.frame_start, scene.frame_end + 1)
    rest = _shown(rig, names)
    cage.waft_cloth.use_cage_output = True
    actions_before = set(bpy.data.actions.keys())
    scene.waft.use_preview = True
    previewed, cages = _play(scene, rig, names, frames), {}
    preview = sys.modules[f"{waft_module_name}.addon.preview"]
    overlay = sys.modules[f"{waft_module_name}.addon.overlay"]
    for frame in frames:  # the simulated cage, drawn (scrubbing back over cached frames)
        scene.frame_set(frame)
        [(name, shown)] = preview.shown_cages(scene)
        assert name == cage.name
        cages[frame] = shown.points.copy()
        edges = np.array([tuple(e.vertices) for e in cage.data.edges])
        assert _segment_set(overlay.previewed_cage_segments(scene)) == _segment_set(
            shown.points[edges])  # the cage mesh's edges, every one
    state = preview.state(scene)
    assert state.message == "" and sorted(state.cache) == list(frames), state.status()
    assert set(bpy.data.actions.keys()) == actions_before  # nothing keyed
    scene.waft.use_preview = False
    scene.frame_set(scene.frame_start)
    np.testing.assert_array_equal(_shown(rig, names), rest)  # the animation again
    bake_api.bake_scene(scene)
    baked = _play(scene, rig, names, frames)
    moved = max(np.abs(baked[f] - baked[frames[0]]).max() for f in frames)
    assert moved > 0.05  # the cloth bones swing
    for frame in frames:
        np.testing.assert_array_equal(previewed[frame], baked[frame], err_msg=f"frame {frame}")
    # The preview drew the cage where the bake's Cage Output mesh plays it, bit for bit.
    blocks = cage.waft_cloth.cage_output.data.shape_keys.key_blocks
    for frame in frames:
        co = np.empty(len(cage.data.vertices) * 3, dtype=np.float32)
        blocks[f"Frame {frame}"].data.foreach_get("co", co)
        np.testing.assert_array_equal(cages[frame].ravel(), co, err_msg=f"frame {frame}")
    assert np.abs(cages[frames[-1]] - cages[frames[0]]).max() > 0.05


def test_cloth_preview_off_gives_the_bones_back(scene, waft_module_name):
    rig, cage = _scene(scene, 24, "QUATERNION")
    names = [item.bone for item in cage.waft_cloth.bones]
    scene.frame_set(5)
    animation = _shown(rig, names)
    scene.waft.use_preview = True
    _play(scene, rig, names, range(1, 6))
    assert np.abs(_shown(rig, names) - animation).max() > 1e-4  # the preview's pose
    scene.waft.use_preview = False
    np.testing.assert_array_equal(_shown(rig, names), animation)


def test_bake_after_a_full_cloth_preview_writes_it_without_solving_again(scene, bake_api):
    rig, cage = _scene(scene, 24, "QUATERNION")
    names = [item.bone for item in cage.waft_cloth.bones]
    frames = range(scene.frame_start, scene.frame_end + 1)
    bake_api.bake_scene(scene)
    solved = _play(scene, rig, names, frames)
    bake_api.clear_bake(scene)
    scene.waft.use_preview = True
    _play(scene, rig, names, frames)
    report = bake_api.bake_scene(scene)
    assert report.systems["cloth"].from_preview
    assert "not solved again" in report.systems["cloth"].summary()
    scene.waft.use_preview = False
    reused = _play(scene, rig, names, frames)
    for frame in frames:
        np.testing.assert_array_equal(reused[frame], solved[frame], err_msg=f"frame {frame}")
    # A setting changed after the preview played (no frame change since): solved again.
    bake_api.clear_bake(scene)
    scene.waft.use_preview = True
    _play(scene, rig, names, frames)
    cage.waft_cloth.damping = 6.0
    report = bake_api.bake_scene(scene)
    assert not report.systems["cloth"].from_preview
    scene.waft.use_preview = False
    changed = _play(scene, rig, names, frames)
    assert max(np.abs(changed[f] - solved[f]).max() for f in frames) > 1e-4


def test_the_bake_does_not_depend_on_where_the_playhead_is(scene, bake_api):
    """The setups are read on the bake's first frame, as the preview reads them: a cage whose
    armature object travels and turns (object keys, the cage parented to it) was baked 1.2 m
    off with the playhead on the last frame (its rest offsets came from the armature's world
    matrix there), and apart from what the preview had shown."""
    rig, cage = _scene(scene, 24, "QUATERNION")
    cage.parent = rig
    for frame, x, turn in ((1, 0.0, 0.0), (24, 1.0, 1.2)):
        rig.location.x, rig.rotation_euler.z = x, turn
        rig.keyframe_insert("location", frame=frame)
        rig.keyframe_insert("rotation_euler", frame=frame)
    keys = []
    for frame in (scene.frame_start, scene.frame_end, 10):
        scene.frame_set(frame)
        bake_api.bake_scene(scene)
        assert scene.frame_current == frame
        keys.append(cloth_rigs.cloth_fcurves(rig))
    for other in keys[1:]:
        assert other.keys() == keys[0].keys()
        assert all(np.array_equal(other[k], keys[0][k]) for k in keys[0])
