"""Systems sharing a character: the ragdoll is solved first, and a chain on it follows the
ragdoll's result in the same bake.

A ponytail (3 bones under the head) on a humanoid whose ragdoll falls limp. One bake of both
must give the chain exactly what baking the ragdoll first and then the chain gives (the chain
then samples the written ragdoll), and baking the scene again must give the same keys (before,
the chain read the animation on the first bake and the previous ragdoll result on the next:
tails centimetres apart). A failing second stage leaves the file as it was.
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest
import ragdoll_rigs as rigs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import waft_rigs  # noqa: E402

FRAMES = range(1, 41)
TAIL = ("Tail.000", "Tail.001", "Tail.002")


def _character(scene, frames: range = FRAMES):
    scene.frame_start, scene.frame_end = frames[0], frames[-1]
    ob = rigs.humanoid(scene)
    ob.waft_ragdoll.root_lock = False
    for pb in ob.pose.bones:
        pb.waft_ragdoll.mode = "FREE"
    bpy.ops.object.mode_set(mode='EDIT')
    parent, head = ob.data.edit_bones["head"], (0.0, 0.1, 1.65)
    for name in TAIL:
        bone = ob.data.edit_bones.new(name)
        bone.head, bone.tail = head, (head[0], head[1] + 0.12, head[2])
        bone.parent, head = parent, bone.tail
        bone.use_connect = parent.name != "head"
        parent = bone
    bpy.ops.object.mode_set(mode='OBJECT')
    for name in TAIL:
        pb = ob.pose.bones[name]
        pb.rotation_mode = 'QUATERNION'
        pb.waft.simulate = True
    ob.waft.enabled = True
    rigs.animate_wave(ob, frames)
    return ob


def _tail_keys(ob) -> np.ndarray:
    action = ob.animation_data.nla_tracks["Waft"].strips[0].action
    curves = sorted(waft_rigs.action_fcurves(action), key=lambda c: (c.data_path, c.array_index))
    out = []
    for fc in curves:
        values = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", values)
        out.append(values)
    return np.array(out)


def test_a_chain_on_a_ragdoll_follows_its_new_result_in_one_bake(scene, bake_api):
    ob = _character(scene)
    # Reference: the ragdoll written first, then the chain sampled on it.
    bake_api.bake_scene(scene, objects=[ob])  # both (the chain follows the ragdoll now)
    together = _tail_keys(ob)
    ob.waft.enabled = False
    bake_api.bake_scene(scene, objects=[ob])  # the ragdoll alone, written
    ob.waft.enabled = True
    ob.waft_ragdoll.enabled = False
    bake_api.bake_scene(scene, objects=[ob])  # the chain alone, on the written ragdoll
    ob.waft_ragdoll.enabled = True
    assert np.array_equal(_tail_keys(ob), together)
    # The same scene baked again: the same keys, bitwise.
    bake_api.bake_scene(scene, objects=[ob])
    assert np.array_equal(_tail_keys(ob), together)
    # And the chain really moved with the fall (it is not the chain of the standing pose).
    ob.animation_data.nla_tracks["Waft Ragdoll"].mute = True
    standing = waft_rigs.world_points(scene, ob, TAIL, [FRAMES[-1]])
    ob.animation_data.nla_tracks["Waft Ragdoll"].mute = False
    fallen = waft_rigs.world_points(scene, ob, TAIL, [FRAMES[-1]])
    assert np.abs(fallen - standing).max() > 0.3


def test_a_failing_second_stage_leaves_the_ragdoll_result_as_it_was(scene, bake_api,
                                                                      monkeypatch):
    # Ten frames: what is checked (a chain stage failing after the ragdoll was solved leaves
    # the file, the ragdoll's written result and the chain's keys as they were) does not depend
    # on how far the ragdoll falls; the 40-frame bakes cost 10 CPU-s
    ob = _character(scene, frames=range(1, 11))
    bake_api.bake_scene(scene, objects=[ob])
    before = waft_rigs.fingerprint(scene)
    keys = _tail_keys(ob)
    strands = sys.modules[bake_api.__name__.rsplit(".", 1)[0] + ".strands.system"]

    def fail(*args, **kwargs):
        raise RuntimeError("chain solve failed")
        yield  # a generator, like run_steps

    monkeypatch.setattr(strands, "run_steps", fail)
    with pytest.raises(RuntimeError, match="chain solve failed"):
        bake_api.bake_scene(scene, objects=[ob])
    assert waft_rigs.fingerprint(scene) == before
    assert np.array_equal(_tail_keys(ob), keys)
