"""Loop-clean bakes of bone chains: a cyclic animation (Cycles modifier) baked with Loop plays
back a clip whose last frame flows into its first."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

CYCLE = 24  # frames


def _walk(scene, *, cyclic: bool = True, travel: bool = False):
    """A root bobbing and swaying like a walk, keyed over one cycle (frame 1 = frame 25) with a
    Cycles modifier; a 5-bone tail hangs from it. ``travel``: the armature object also walks
    forward (keyed linearly, not cyclic), so only the pose loops."""
    scene.render.fps, scene.render.fps_base = 24, 1.0
    scene.frame_start, scene.frame_end = 1, CYCLE
    ob = rigs.chain_rig(scene, count=5, length=0.12, direction=(0.0, 0.6, -1.0))
    ob.waft.damping = 0.5
    rigs.key_sway(ob.pose.bones[rigs.ROOT], CYCLE, step=3, sway=0.12, bob=0.05, turn=0.35)
    if cyclic:
        rigs.make_cyclic(ob)
    if travel:
        for frame, y in ((1, 0.0), (CYCLE + 1, 1.0)):
            ob.location = (0.0, y, 0.0)
            ob.keyframe_insert("location", frame=frame)
    return ob


def _seam_and_steps(scene, ob) -> tuple[float, float, float]:
    """(the jump from the last frame to the first, the largest frame-to-frame step inside the
    clip, the larger of the two steps beside the seam) of the chain's bone tails, in the
    armature's space, played back from Blender."""
    names = rigs.bone_names("Hair", 5)
    points = rigs.world_points(scene, ob, names, range(1, CYCLE + 1))
    local = []
    for i, frame in enumerate(range(1, CYCLE + 1)):
        scene.frame_set(frame)
        inverse = np.array(ob.matrix_world.inverted())
        local.append(points[i] @ inverse[:3, :3].T + inverse[:3, 3])
    tips = np.array(local)[:, 1:]  # every bone's tail
    step = np.linalg.norm(np.diff(tips, axis=0), axis=-1).max(axis=-1)
    seam = np.linalg.norm(tips[0] - tips[-1], axis=-1).max()
    return float(seam), float(step.max()), float(max(step[0], step[-1]))


@pytest.mark.parametrize("travel", [False, True])
def test_loop_bake_meets_the_loop_criterion(scene, bake_api, travel):
    ob = _walk(scene, travel=travel)
    scene.waft.use_loop = True
    report = bake_api.bake_scene(scene)
    assert report.frames == CYCLE
    seam, steps, beside = _seam_and_steps(scene, ob)
    assert steps > 0.005  # the tail does swing
    assert seam <= steps
    # No pop: the seam is a step like its neighbours (measured: 57.6 mm between 41.7 and 65.6).
    assert seam <= 1.1 * beside
    # Without Loop the same bake starts from rest and does not close (131 mm, max step 65 mm).
    bake_api.clear_bake(scene)
    scene.waft.use_loop = False
    bake_api.bake_scene(scene)
    open_seam, open_steps, _ = _seam_and_steps(scene, ob)
    assert open_seam > open_steps


def test_loop_keys_only_the_cycle_and_the_users_animation_is_untouched(scene, bake_api):
    ob = _walk(scene)
    scene.waft.use_loop = True
    scene.frame_set(1)  # the pose as the animation gives it, not as the keying left it
    before = rigs.fingerprint(scene)
    bake_api.bake_scene(scene)
    action = ob.animation_data.nla_tracks["Waft"].strips[0].action
    frames = {key.co[0] for fcurve in rigs.action_fcurves(action)
              for key in fcurve.keyframe_points}
    assert frames == set(map(float, range(1, CYCLE + 1)))
    bake_api.clear_bake(scene)
    assert rigs.fingerprint(scene) == before


def test_loop_on_an_animation_that_does_not_repeat_is_a_clear_error(scene, bake_api):
    ob = _walk(scene, cyclic=False)
    scene.waft.use_loop = True
    scene.frame_set(1)  # the pose as the animation gives it, not as the keying left it
    before = rigs.fingerprint(scene)
    with pytest.raises(Exception, match=r"Armature 'Rig', bone '.*': Loop needs an animation "
                                        r"that repeats"):
        bake_api.bake_scene(scene)
    assert rigs.fingerprint(scene) == before
    assert ob.animation_data.nla_tracks.get("Waft") is None
