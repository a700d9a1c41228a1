"""A Waft setup on a linked character with a library override keeps its settings and bakes.

The character (an armature with a bone chain, keyed travel) lives in a library .blend. A shot
file links it, makes a library override, turns Waft on and changes settings on the override
(object, bone), saves and reopens: everything must still be set (before every Waft property was
LIBRARY_OVERRIDABLE, `enabled`, `simulate` and the stiffness came back off/default). The bake on
the override writes its actions into the shot file and survives save and reopen too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat
NAMES = rigs.bone_names("Hair", 4)


def _library(scene, path: Path) -> None:
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(1.0, 0.0, 0.0))
    ob.waft.enabled = False  # the character as rigged: no Waft yet
    for name in NAMES:
        ob.pose.bones[name].waft.simulate = False
    scene.frame_start, scene.frame_end = 1, 24
    rigs.key_root_location(ob, (1, 12, 24), lambda f: (0.0, 0.02 * f, 0.0))
    character = bpy.data.collections.new("Character")
    scene.collection.children.link(character)
    scene.collection.objects.unlink(ob)
    character.objects.link(ob)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


def _link_and_override(scene, path: Path):
    with bpy.data.libraries.load(str(path), link=True) as (_, data_to):
        data_to.collections = ["Character"]
    linked = data_to.collections[0]
    scene.collection.children.link(linked)
    override = linked.override_hierarchy_create(scene, bpy.context.view_layer,
                                                do_fully_editable=True)
    scene.collection.children.unlink(linked)
    ob = next(o for o in override.objects if o.type == 'ARMATURE')
    assert ob.override_library is not None and ob.library is None
    return ob


def _set_up(ob) -> None:
    ob.waft.enabled = True
    ob.waft.shape_stiffness = 0.37
    ob.waft.world_motion_fraction = 0.25
    for name in NAMES:
        ob.pose.bones[name].waft.simulate = True


def _reopen(path: Path):
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    scene = bpy.context.scene
    ob = next(o for o in scene.objects if o.type == 'ARMATURE' and o.override_library)
    return scene, ob


def test_settings_on_an_overridden_character_survive_save_and_reopen(scene, bake_api,
                                                                      tmp_path):
    _library(scene, tmp_path / "character.blend")
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 24
    ob = _link_and_override(scene, tmp_path / "character.blend")
    _set_up(ob)
    scene, ob = _reopen(tmp_path / "shot.blend")
    assert ob.waft.enabled
    assert ob.waft.shape_stiffness == pytest.approx(0.37)
    assert ob.waft.world_motion_fraction == pytest.approx(0.25)
    assert all(ob.pose.bones[name].waft.simulate for name in NAMES)

    before = rigs.world_points(scene, ob, NAMES, range(1, 25))
    bake_api.bake_scene(scene)
    baked = rigs.world_points(scene, ob, NAMES, range(1, 25))
    assert np.abs(baked - before).max() > 0.01  # the chain swings
    track = ob.animation_data.nla_tracks["Waft"]
    action = track.strips[0].action
    assert action.library is None and len(rigs.action_fcurves(action)) > 0
    scene, ob = _reopen(tmp_path / "shot.blend")
    assert np.array_equal(rigs.world_points(scene, ob, NAMES, range(1, 25)), baked)
    ob.animation_data.nla_tracks["Waft"].mute = True
    assert np.array_equal(rigs.world_points(scene, ob, NAMES, range(1, 25)), before)
