"""Root motion keyed on a bone (glTF, Mixamo, game rigs): World Motion measured in a Space Bone.

The same fast back-and-forth travel is keyed once on the armature object and once on its root
bone. With the Space Bone set to that bone, the chain must feel the travel exactly as when the
object carries it: World Motion 0.1 tames the swing in both, and the two bakes agree. Without
it the bone-keyed travel ignores World Motion (the issue: 0.395 m swing at 1.0 and at 0.1).
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
FRAMES = range(1, 37)
KEYS = (1, 7, 13, 19, 25, 31)


def _travel(frame: int) -> float:
    return 0.0 if (frame - 1) // 6 % 2 == 0 else 0.6  # 0.6 m in 6 frames, back and forth


def _rig(scene, *, on_bone: bool, fraction: float, space_bone: str = ""):
    rigs.reset_scene(scene)
    ob = rigs.chain_rig(scene, count=4, length=0.1)
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    ob.waft.world_motion_fraction = fraction
    ob.waft.space_bone = space_bone
    if on_bone:
        # The root bone points down (its local Y is world −Z; local X is world X).
        rigs.key_root_location(ob, KEYS, lambda f: (_travel(f), 0.0, 0.0))
    else:
        for frame in KEYS:
            ob.location = (_travel(frame), 0.0, 0.0)
            ob.keyframe_insert("location", frame=frame)
        rigs.set_interpolation(ob, "LINEAR")
    return ob


def _swing(scene, bake_api, **rig) -> tuple[np.ndarray, float]:
    """Tips in world space, and their largest distance from where the animation puts them."""
    ob = _rig(scene, **rig)
    animated = rigs.world_points(scene, ob, NAMES, FRAMES)
    bake_api.bake_scene(scene)
    baked = rigs.world_points(scene, ob, NAMES, FRAMES)
    return baked, float(np.linalg.norm(baked[:, -1] - animated[:, -1], axis=-1).max())


def test_space_bone_makes_world_motion_act_on_bone_keyed_travel(scene, bake_api):
    on_object, swing_object = _swing(scene, bake_api, on_bone=False, fraction=0.1)
    _, swing_bone_full = _swing(scene, bake_api, on_bone=True, fraction=1.0, space_bone="Root")
    _, swing_bone_ignored = _swing(scene, bake_api, on_bone=True, fraction=0.1)
    on_bone, swing_bone = _swing(scene, bake_api, on_bone=True, fraction=0.1, space_bone="Root")
    assert swing_bone_full > 0.15  # the travel really swings the chain
    assert swing_bone_ignored > 0.8 * swing_bone_full  # without a space bone: no effect
    assert swing_bone < 0.3 * swing_bone_full
    # The bone-keyed travel in the bone's space bakes as the object-keyed travel does.
    assert np.abs(on_bone - on_object).max() < 1e-4
    assert abs(swing_bone - swing_object) < 1e-4


def test_a_space_bone_that_is_not_a_bone_is_a_clear_error(scene, bake_api):
    from waft_rigs import fingerprint  # noqa: PLC0415

    _rig(scene, on_bone=True, fraction=0.1, space_bone="Nope")
    before = fingerprint(scene)
    with pytest.raises(Exception, match=r"Armature 'Rig': space bone 'Nope' is not a bone"):
        bake_api.bake_scene(scene)
    assert fingerprint(scene) == before
