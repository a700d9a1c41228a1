"""The live preview plays rods too: the timeline played forward shows, bit for bit, the bone
channels and matrices the bake of the same scene writes (a tie swung hard by its keyed root
into a frictional ball, quaternion and Euler bones, 24 and 25 fps, 120 Hz sub-frame samples),
nothing is keyed, turning it off gives the bones back, and *Bake* after a full preview writes
it without solving again (a changed setting solves again)."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cloth_rigs import rigs  # noqa: E402
from test_cloth_preview import _shown  # noqa: E402
from test_rods import rod_rig  # noqa: E402

pytestmark = pytest.mark.compat


def _scene(scene, fps: int, rotation_mode: str):
    scene.render.fps = fps
    scene.frame_start, scene.frame_end = 1, fps  # one second
    scene.waft.sample_rate = 120.0
    rig = rod_rig(scene, count=4, length=0.08, direction=(1.0, 0.0, -0.2))
    for pose_bone in rig.pose.bones:
        pose_bone.rotation_mode = rotation_mode
    keys = [int(round(1 + t * fps)) for t in np.arange(0.0, 1.01, 0.25)]
    rigs.key_root_location(rig, keys, lambda f: (0.25 * np.sin(4.0 * (f - 1) / fps), 0.0, 0.0),
                           interpolation="BEZIER")
    ball = rigs.sphere_collider(scene, "Ball", (0.2, 0.0, 1.9), 0.08)
    ball.waft_collider.friction = 0.4
    scene.frame_set(scene.frame_start)
    return rig, [b.name for b in rig.pose.bones if b.name.startswith("Tie")]


def _play(scene, rig, names) -> dict:
    out = {}
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        out[frame] = _shown(rig, names)
    return out


@pytest.mark.parametrize(("fps", "rotation_mode"), [(24, "QUATERNION"), (25, "XYZ")])
def test_played_rod_preview_is_the_bake_bit_for_bit(scene, bake_api, waft_module_name, fps,
                                                    rotation_mode):
    rig, names = _scene(scene, fps, rotation_mode)
    frames = range(scene.frame_start, scene.frame_end + 1)
    rest = _shown(rig, names)
    actions_before = set(bpy.data.actions.keys())
    scene.waft.use_preview = True
    previewed = _play(scene, rig, names)
    state = sys.modules[f"{waft_module_name}.addon.preview"].state(scene)
    assert state.message == "" and sorted(state.cache) == list(frames), state.status()
    assert set(bpy.data.actions.keys()) == actions_before  # nothing keyed
    scene.waft.use_preview = False
    scene.frame_set(scene.frame_start)
    np.testing.assert_array_equal(_shown(rig, names), rest)  # the animation again
    assert not bake_api.bake_scene(scene).systems["rod"].from_preview
    baked = _play(scene, rig, names)
    assert max(np.abs(baked[f] - baked[frames[0]]).max() for f in frames) > 0.05  # it swings
    for frame in frames:
        np.testing.assert_array_equal(previewed[frame], baked[frame], err_msg=f"frame {frame}")


def test_bake_after_a_full_rod_preview_writes_it_without_solving_again(scene, bake_api):
    rig, names = _scene(scene, 24, "QUATERNION")
    frames = range(scene.frame_start, scene.frame_end + 1)
    bake_api.bake_scene(scene)
    solved = _play(scene, rig, names)
    bake_api.clear_bake(scene)
    scene.waft.use_preview = True
    _play(scene, rig, names)
    report = bake_api.bake_scene(scene).systems["rod"]
    assert report.from_preview and "not solved again" in report.summary()
    scene.waft.use_preview = False
    reused = _play(scene, rig, names)
    for frame in frames:
        np.testing.assert_array_equal(reused[frame], solved[frame], err_msg=f"frame {frame}")
    bake_api.clear_bake(scene)
    scene.waft.use_preview = True
    _play(scene, rig, names)
    rig.waft_rod.damping = 6.0  # changed after the last frame change
    assert not bake_api.bake_scene(scene).systems["rod"].from_preview
