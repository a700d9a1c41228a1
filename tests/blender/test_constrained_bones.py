"""Baked bones under constraints or drivers: never silently overridden.

Blender evaluates constraints after the NLA, so a Copy Rotation on a simulated bone (a Rigify
tail) plays back where the constraint puts it. Scene › Waft › Constrained Bones: WARN names every
such bone (object, bone, constraint); TURN_OFF keys the constraint's influence to 0 in Waft's
result and holds the user's influence under it, so muting or clearing the result gives the rig
back exactly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat
NAMES = rigs.bone_names("Hair", 4)
FRAMES = range(1, 25)
INFLUENCE = 0.75


def _rig(scene):
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.key_root_location(ob, (1, 12, 24), lambda f: (0.0, 0.02 * f, 0.0))
    c = ob.pose.bones[NAMES[2]].constraints.new('COPY_ROTATION')
    c.name = "Tail Follow"
    c.target, c.subtarget = ob, rigs.ROOT
    c.influence = INFLUENCE
    return ob, c


def _tails(scene, ob):
    return rigs.world_points(scene, ob, NAMES, FRAMES)


def _with_constraint_muted(scene, ob, c):
    c.mute = True
    try:
        return _tails(scene, ob)
    finally:
        c.mute = False


def test_warn_names_the_object_bone_and_constraint(scene, bake_api):
    ob, c = _rig(scene)
    assert scene.waft.constrained_bones == "WARN"
    report = bake_api.bake_scene(scene)
    assert len(report.warnings) == 1
    assert "'Rig'" in report.warnings[0] and f"'{NAMES[2]}'" in report.warnings[0]
    assert "Copy Rotation 'Tail Follow'" in report.warnings[0]
    # Warned, not changed: the constraint still overrides the keys (what the warning says).
    played, keys_alone = _tails(scene, ob), _with_constraint_muted(scene, ob, c)
    assert np.abs(played - keys_alone).max() > 0.01
    assert c.influence == INFLUENCE and not c.mute


def test_turn_off_plays_the_simulation_and_mute_and_clear_give_the_rig_back(scene, bake_api):
    ob, c = _rig(scene)
    before = _tails(scene, ob)
    scene.waft.constrained_bones = "TURN_OFF"
    for _ in range(2):  # a re-bake holds the user's influence, not the result's 0
        report = bake_api.bake_scene(scene)
        assert report.warnings == []
        played, keys_alone = _tails(scene, ob), _with_constraint_muted(scene, ob, c)
        assert np.array_equal(played, keys_alone)
        assert np.abs(played - before).max() > 0.01  # the chain swings
    track = ob.animation_data.nla_tracks["Waft"]
    track.mute = True
    assert np.array_equal(_tails(scene, ob), before)
    assert c.influence == INFLUENCE
    track.mute = False
    _tails(scene, ob)  # plays the result: the pose's influence is 0 now
    assert c.influence == 0.0
    bake_api.clear_bake(scene)
    assert c.influence == INFLUENCE and not c.mute
    assert np.array_equal(_tails(scene, ob), before)
    assert not [t for t in ob.animation_data.nla_tracks if t.name.startswith("Waft")]


def test_drivers_ik_and_hinges_are_reported(scene, bake_api):
    ob, c = _rig(scene)
    c.mute = True
    ik = ob.pose.bones[NAMES[3]].constraints.new('IK')
    ik.target, ik.subtarget, ik.chain_count = ob, rigs.ROOT, 2
    fcurve = ob.pose.bones[NAMES[0]].driver_add("rotation_quaternion", 1)
    fcurve.driver.expression = "0.0"
    ob.data.bones[NAMES[1]].use_inherit_rotation = False
    warnings = bake_api.bake_scene(scene).warnings
    text = "\n".join(warnings)
    assert "Tail Follow" not in text  # muted: it overrides nothing
    assert f"bone '{NAMES[3]}': Ik 'IK'" in text
    assert f"bone '{NAMES[2]}': Ik 'IK' on '{NAMES[3]}'" in text
    assert f"bone '{NAMES[1]}': Inherit Rotation is off" in text
    assert f"bone '{NAMES[0]}': a driver on rotation_quaternion[1]" in text
    assert f"bone '{NAMES[1]}': Ik" not in text  # chain of 2: bones 3 and 2 only
