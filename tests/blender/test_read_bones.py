"""A bone-chain bake samples only the bones it reads (its chains, their parents, its Space Bone):
a 4-bone tail on a rig of hundreds of bones kept every bone's matrix at every sample. The keys
are the same bit for bit as those of the same chain on a rig without the other bones."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat

EXTRA = 150  # unrelated bones before and after the chain


def _rig(scene, name: str, extra: int):
    def extras(prefix):
        return [{"name": f"{prefix}.{i:03d}", "head": (0.01 * i, 1.0, 0.0),
                 "tail": (0.01 * i, 1.0, 0.1)} for i in range(extra)]

    chain = [f"Hair.{i:03d}" for i in range(4)]
    bones = extras("Before") + [
        {"name": "Travel", "head": (0.0, 0.0, 0.0), "tail": (0.0, 0.2, 0.0)},
        {"name": "Root", "head": (0.0, 0.0, 2.2), "tail": (0.0, 0.0, 2.0), "parent": "Travel"},
    ] + [{"name": b, "head": (0.0, 0.0, 2.0 - 0.2 * i), "tail": (0.0, 0.0, 1.8 - 0.2 * i),
          "parent": chain[i - 1] if i else "Root", "connect": i > 0}
         for i, b in enumerate(chain)] + extras("After")
    ob = rigs.new_armature(scene, name, bones)
    for b in chain:
        ob.pose.bones[b].waft.simulate = True
    ob.waft.enabled = True
    ob.waft.space_bone = "Travel"
    root, travel = ob.pose.bones["Root"], ob.pose.bones["Travel"]
    for frame in range(1, 31):
        root.location = (0.3 * np.sin(0.4 * frame), 0.0, 0.1 * np.cos(0.3 * frame))
        root.keyframe_insert("location", frame=frame)
        travel.location = (0.05 * frame, 0.0, 0.0)
        travel.keyframe_insert("location", frame=frame)
    for pb in ob.pose.bones:
        if pb.name.startswith(("Before", "After")):  # animated too: they are sampled, not read
            pb.rotation_mode = 'XYZ'
            pb.rotation_euler = (0.1, 0.0, 0.0)
            pb.keyframe_insert("rotation_euler", frame=1)
    return ob, chain


def _keys(ob, chain) -> dict:
    curves = rigs.action_fcurves(ob.animation_data.nla_tracks["Waft"].strips[0].action)
    out = {}
    for fc in curves:
        if any(f'"{b}"' in fc.data_path for b in chain):
            co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
            fc.keyframe_points.foreach_get("co", co)
            out[(fc.data_path, fc.array_index)] = co
    return out


def test_a_chain_on_a_big_rig_samples_its_own_bones_and_bakes_as_on_a_small_one(
        scene, bake_api, waft_module_name):
    scene.frame_start, scene.frame_end = 1, 30
    big, chain = _rig(scene, "Big", EXTRA)
    small, _ = _rig(scene, "Small", 0)
    reading = importlib.import_module(f"{waft_module_name}.addon.strands.reading")
    sampling = importlib.import_module(f"{waft_module_name}.addon.strands.sampling")
    read = reading.read_scene(scene)
    index = next(i for i, s in enumerate(read.setups) if s.name == "Big")
    bones = sampling.read_bones(read, index)
    assert len(big.pose.bones) == 2 * EXTRA + 6
    assert sorted(big.pose.bones[int(b)].name for b in bones) == sorted(chain + ["Root",
                                                                                 "Travel"])
    bake_api.bake_scene(scene)
    big_keys, small_keys = _keys(big, chain), _keys(small, chain)
    assert len(big_keys) == len(small_keys) >= 4 * 4
    for key, values in small_keys.items():
        np.testing.assert_array_equal(big_keys[key], values, err_msg=str(key))
    swing = max(float(np.ptp(v[1::2])) for v in big_keys.values())
    assert swing > 0.05  # the chain moves: a wrong bone read would show
