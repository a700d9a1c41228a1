"""Presets through Blender's preset system: built-ins in the menu, the user's own saved to the
user preset folder by Add Preset, loaded by ``script.execute_preset``, removed by －.

The menus are drawn into a recording layout (no window headless) to check what they list.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import bpy
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs  # noqa: E402


class _Recorder:
    """Stands in for ``UILayout``: records every operator entry and what it was given."""

    def __init__(self, log):
        self.log = log
        self.emboss = 'NORMAL'

    def operator(self, idname, text="", **_):
        props = type("Props", (), {})()
        self.log.append((idname, text, props))
        return props

    def row(self, **_):
        return self

    column = row

    def separator(self, **_):
        pass

    def label(self, **_):
        pass

    def prop(self, *_, **__):
        pass


def _menu_entries(kind) -> list[tuple[str, str, object]]:
    menu = getattr(bpy.types, kind.menu_idname)
    log: list = []
    fake = type("Drawn", (), {"layout": _Recorder(log), "bl_idname": kind.menu_idname,
                              "path_menu": bpy.types.Menu.path_menu})()
    menu.draw(fake, bpy.context)
    return log


def _kind(waft_module_name, system):
    return importlib.import_module(f"{waft_module_name}.addon.{system}.presets").PRESET_KIND


def _user_dir(kind) -> Path:
    return Path(bpy.utils.user_resource('SCRIPTS', path=os.path.join("presets", kind.subdir)))


def _save_and_reload(kind, name: str, change) -> Path:
    assert getattr(bpy.ops.waft, f"{kind.key}_preset_add")(name=name) == {'FINISHED'}
    path = _user_dir(kind) / f"{bpy.types.WAFT_OT_chains_preset_add.as_filename(name)}.py"
    assert path.is_file()
    # The user's preset folder, inside the throwaway Blender user directory of this session.
    assert str(path).startswith(os.environ["BLENDER_USER_RESOURCES"])
    change()
    assert bpy.ops.script.execute_preset(filepath=str(path),
                                         menu_idname=kind.menu_idname) == {'FINISHED'}
    assert getattr(bpy.types, kind.menu_idname).bl_label == name
    return path


def _remove(kind, name: str, path: Path) -> None:
    add = getattr(bpy.ops.waft, f"{kind.key}_preset_add")
    assert add(name=name, remove_name=True) == {'FINISHED'}
    assert not path.exists()


def test_chain_presets_built_in_and_saved_by_the_user(scene, waft_module_name):
    kind = _kind(waft_module_name, "strands")
    rig = waft_rigs.chain_rig(scene)
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.waft.apply_preset(preset="TAIL") == {'FINISHED'}
    assert bpy.types.WAFT_MT_chains_presets.bl_label == "Tail"  # the menu says what is on
    rig.waft.shape_stiffness, rig.waft.damping, rig.waft.use_tether = 0.123, 7.5, True
    rig.waft.wind_direction = (0.0, 1.0, 0.25)

    def change():
        rig.waft.shape_stiffness, rig.waft.damping, rig.waft.use_tether = 0.9, 0.1, False
        rig.waft.wind_direction = (1.0, 0.0, 0.0)

    path = _save_and_reload(kind, "Studio Tail", change)
    assert rig.waft.shape_stiffness == pytest.approx(0.123)
    assert rig.waft.damping == pytest.approx(7.5) and rig.waft.use_tether
    assert tuple(rig.waft.wind_direction) == pytest.approx((0.0, 1.0, 0.25))
    assert "space_bone" not in path.read_text()  # a bone name belongs to one rig
    entries = _menu_entries(kind)
    built_in = [text for idname, text, _ in entries if idname == "waft.apply_preset"]
    assert built_in == [name for _, name, _ in kind.builtin]
    loaded = [(text, props) for idname, text, props in entries
              if idname == "script.execute_preset"]
    assert [text for text, _ in loaded] == ["Studio Tail"]
    assert loaded[0][1].filepath == str(path)
    removers = [props for idname, _, props in entries
                if idname == kind.add_idname and getattr(props, "remove_name", False)]
    assert [p.name for p in removers] == ["Studio Tail"]  # － beside the user's preset
    _remove(kind, "Studio Tail", path)
    assert not [e for e in _menu_entries(kind) if e[0] == "script.execute_preset"]
    # Blender titles a menu "Presets" after a removal; the panel shows the menu's own name.
    shown = []
    layout = type("Row", (), {"row": lambda self, **_: self,
                              "menu": lambda self, idname, text="": shown.append(text),
                              "operator": lambda self, *a, **k: type("P", (), {})()})()
    preset_menus = importlib.import_module(f"{waft_module_name}.addon.preset_menus")
    preset_menus.draw_preset_menu(layout, kind)
    assert shown == ["Chain and Hair Presets"]


def test_fabric_presets_store_vectors_and_the_backstop(scene, waft_module_name):
    kind = _kind(waft_module_name, "cloth")
    cage = bpy.data.objects.new("Cage", bpy.data.meshes.new("Cage"))
    scene.collection.objects.link(cage)
    bpy.context.view_layer.objects.active = cage
    assert bpy.ops.waft.cloth_apply_fabric(fabric="SILK") == {'FINISHED'}
    assert bpy.types.WAFT_MT_fabrics_presets.bl_label == "Silk"
    cloth = cage.waft_cloth
    cloth.bend_compliance, cloth.use_backstop, cloth.gravity = 0.25, True, (0.0, 0.0, -4.0)

    def change():
        cloth.bend_compliance, cloth.use_backstop, cloth.gravity = 1.0, False, (0.0, 0.0, -9.8)

    path = _save_and_reload(kind, "Wet Silk", change)
    assert cloth.bend_compliance == pytest.approx(0.25) and cloth.use_backstop
    assert tuple(cloth.gravity) == pytest.approx((0.0, 0.0, -4.0))
    _remove(kind, "Wet Silk", path)


def test_ragdoll_presets_give_every_body_the_stored_behaviour(scene, waft_module_name):
    kind = _kind(waft_module_name, "ragdoll")
    rig = waft_rigs.chain_rig(scene, count=4)
    bpy.context.view_layer.objects.active = rig
    bodies = [pb.waft_ragdoll for pb in rig.pose.bones]
    for body in bodies:
        body.body = True
    rig.waft_ragdoll.root_lock, rig.waft_ragdoll.fall_threshold = True, 0.42
    bodies[0].mode, bodies[0].motor_strength, bodies[0].blend = 'DRIVEN', 0.66, 0.3
    bodies[0].radius = 0.123  # a shape: not part of a preset

    def change():
        rig.waft_ragdoll.root_lock, rig.waft_ragdoll.fall_threshold = False, 0.0
        for body in bodies:
            body.mode, body.motor_strength, body.blend, body.radius = 'FREE', 0.0, 0.0, 0.05

    _save_and_reload(kind, "Stagger", change)
    assert rig.waft_ragdoll.root_lock and rig.waft_ragdoll.fall_threshold == pytest.approx(0.42)
    for body in bodies:  # the first body's behaviour on every body; shapes untouched
        assert body.mode == 'DRIVEN' and body.motor_strength == pytest.approx(0.66)
        assert body.blend == pytest.approx(0.3) and body.radius == pytest.approx(0.05)
    assert bpy.ops.waft.ragdoll_apply_preset(preset="LIMP") == {'FINISHED'}
    assert bpy.types.WAFT_MT_ragdolls_presets.bl_label == "Limp Ragdoll"
