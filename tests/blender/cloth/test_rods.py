"""Rod chains (ties, ribbons, seed 001's hood pendulum) baked in real Blender: keys put every bone
on the simulated rod with its simulated orientation, gravity swings a horizontal hood down, the
user's action is kept and cleared back, bad rods fail cleanly."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cloth_rigs import rigs  # noqa: E402

ROOT = rigs.ROOT


def rod_rig(scene, *, count: int = 1, length: float = 0.2, direction=(1.0, 0.0, 0.0)):
    """Root (animate it) with a chain of ``count`` bones sticking out of its tail."""
    bones = [{"name": ROOT, "head": (0.0, 0.0, 2.2), "tail": (0.0, 0.0, 2.0)}]
    head = np.array((0.0, 0.0, 2.0))
    step = np.array(direction) / np.linalg.norm(direction) * length
    for i in range(count):
        bones.append({"name": f"Tie.{i}", "head": tuple(head), "tail": tuple(head + step),
                      "parent": f"Tie.{i - 1}" if i else ROOT, "connect": i > 0})
        head = head + step
    rig = rigs.new_armature(scene, "Rig", bones)
    for i in range(count):
        rigs.set_selected(rig.pose.bones[f"Tie.{i}"], True)
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.waft.rod_assign(action="ADD") == {'FINISHED'}
    return rig


def _worlds(scene, rig, names, frames) -> np.ndarray:
    out = np.empty((len(frames), len(names), 4, 4))
    for i, frame in enumerate(frames):
        scene.frame_set(frame)
        for b, name in enumerate(names):
            out[i, b] = np.array(rig.matrix_world) @ np.array(rig.pose.bones[name].matrix)
    return out


def test_assign_makes_one_chain_per_selected_run(scene):
    rig = rod_rig(scene, count=3)
    assert [c.root for c in rig.waft_rod.chains] == ["Tie.0"]
    assert rig.waft_rod.enabled


def test_hood_pendulum_swings_down_and_bones_follow_the_rod(scene, bake_api):
    """Seed 001's hood: one bone held out sideways falls and swings under gravity; the keys put
    the bone on the rod (head on particle 0, tail on particle 1)."""
    rig = rod_rig(scene, count=1, length=0.2)
    rig.waft_rod.damping = 0.5
    rig.waft_rod.bend_twist_compliance = 100.0  # a free pendulum: no pull to the animation
    scene.frame_start, scene.frame_end = 1, 24
    report = bake_api.bake_scene(scene)
    rods = report.systems["rod"]
    assert rods.bones == 1 and rods.frames == 24
    positions = rods.positions["Rig: Tie.0"]  # (F, 2, 3)
    assert positions[-1, 1, 2] < 2.0 - 0.1  # hangs well below the pivot
    frames = [1, 8, 16, 24]
    world = _worlds(scene, rig, ["Tie.0"], frames)[:, 0]
    np.testing.assert_allclose(world[:, :3, 3], positions[np.array(frames) - 1, 0], atol=1e-4)
    tail = world[:, :3, 3] + world[:, :3, 1] * 0.2
    np.testing.assert_allclose(tail, positions[np.array(frames) - 1, 1], atol=1e-4)
    rotation = world[:, :3, :3]
    np.testing.assert_allclose(np.swapaxes(rotation, 1, 2) @ rotation,
                               np.broadcast_to(np.eye(3), rotation.shape), atol=1e-5)


def test_tie_chain_hangs_and_keeps_its_length(scene, bake_api):
    rig = rod_rig(scene, count=4, length=0.08, direction=(1.0, 0.0, -0.2))
    scene.frame_start, scene.frame_end = 1, 48
    rigs.key_root_location(rig, [1, 24, 48], lambda f: (0.0 if f != 24 else 0.3, 0.0, 0.0))
    rods = bake_api.bake_scene(scene).systems["rod"]
    positions = rods.positions["Rig: Tie.0"]
    segments = np.linalg.norm(np.diff(positions, axis=1), axis=-1)
    assert np.abs(segments / segments[0, 0] - 1.0).max() < 0.01
    names = [f"Tie.{i}" for i in range(4)]
    world = _worlds(scene, rig, names, [12, 30, 48])
    np.testing.assert_allclose(world[..., :3, 3], positions[[11, 29, 47], :4], atol=2e-4)


def _fast_figure_eight(scene, bake_api, fps: int, *, sample_rate: float | None = None
                       ) -> np.ndarray:
    """A 4-bone tie whose root is keyed on a 1.5 Hz figure-eight peaking at 5 g (keys every
    1/12 s in seconds, Bezier), baked at ``fps``; the bones' heads at 0, 1 and 2 s."""
    rig = rod_rig(scene, count=4, length=0.08, direction=(1.0, 0.0, -0.2))
    if sample_rate is not None:  # else the default
        scene.waft.sample_rate = sample_rate
    rigs.key_figure_eight(rig.pose.bones[ROOT], fps, peak_g=5.0, scene=scene)
    bake_api.bake_scene(scene)
    names = [f"Tie.{i}" for i in range(4)]
    return _worlds(scene, rig, names, [1, 1 + fps, 1 + 2 * fps])[..., :3, 3]


def test_fast_motion_bakes_alike_at_24_25_30_50_and_60_fps(scene, bake_api):
    """Sub-frame sampling at the default rate, as for bone chains and cloth (read once per
    frame, 24 and 60 fps part by centimetres)."""
    def bake(fps, **kwargs):
        return _fast_figure_eight(scene, bake_api, fps, **kwargs)

    results = rigs.bake_at_rates(scene, bake)
    assert np.ptp(results[24][:, -1, 0]) > 0.05  # the tip moves
    for fps in (25, 30, 50, 60):
        assert rigs.largest_distance(results[fps], results[24]) < 1e-3, fps
    once_per_frame = rigs.bake_at_rates(scene, bake, (24, 60), sample_rate=0.0)
    assert rigs.largest_distance(once_per_frame[60], once_per_frame[24]) > 1e-2


def test_user_action_kept_and_cleared_back(scene, bake_api):
    rig = rod_rig(scene, count=2)
    scene.frame_start, scene.frame_end = 1, 6
    rigs.key_root_location(rig, [1, 6], lambda f: (0.05 * f, 0.0, 0.0))
    action = rig.animation_data.action
    before = rigs.fingerprint(scene)["actions"]
    bake_api.bake_scene(scene)
    tracks = [t.name for t in rig.animation_data.nla_tracks]
    assert tracks[-1] == "Waft Rod" and "Waft: original" in tracks
    assert rig.animation_data.action is None
    assert bake_api.clear_bake(scene) == ["Rig"]
    assert rig.animation_data.action == action
    assert rigs.fingerprint(scene)["actions"] == before


@pytest.mark.parametrize("case, pattern", [
    ("missing root", r"Armature 'Rig': rod root bone 'Nope' does not exist"),
    ("nan", r"Armature 'Rig'.*'damping'.*finite"),
    ("twice", r"Armature 'Rig', bone 'Tie.1': in two rod chains"),
])
def test_bad_rods_fail_cleanly(scene, bake_api, waft, case, pattern):
    rig = rod_rig(scene, count=2)
    scene.frame_start, scene.frame_end = 1, 4
    bake_api.bake_scene(scene)
    if case == "missing root":
        rig.waft_rod.chains.add().root = "Nope"
    elif case == "nan":
        rig.waft_rod.damping = math.nan
    else:
        rig.waft_rod.chains.add().root = "Tie.1"
    before = rigs.fingerprint(scene)
    error = sys.modules[waft.__name__ + ".core.errors"].SetupError
    with pytest.raises(error) as info:
        bake_api.bake_scene(scene)
    assert re.search(pattern, str(info.value)), str(info.value)
    assert rigs.fingerprint(scene) == before
