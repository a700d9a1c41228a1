"""Presets through Blender's preset system: one menu and one Add/Remove operator per kind.

Each menu lists the built-in presets shipped with Waft (the dicts of each system's
``presets.py``, applied by their own operators) and, below them, the user's presets: Python
files in Blender's user preset folder (``scripts/presets/waft/<kind>/``), saved by the
``AddPresetBase`` operator with a name field and ＋ at the bottom of the menu, removed with the
－ beside each one, run by ``script.execute_preset`` as every Blender preset is. A studio shares
a set by copying that folder (or pointing Blender's script directories at a shared one).

A user preset stores every physics setting of the kind (not the rig-specific ones: a chain's
space bone, a ragdoll's shapes, masses and joint limits); a ragdoll preset stores the armature's
behaviour and one body's, and applies that body's to every body of the ragdoll.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import bpy
from bl_operators.presets import AddPresetBase

BLENDER_RESET_LABEL = "Presets"  # what AddPresetBase sets a menu's title to after a removal


@dataclass(frozen=True)
class PresetKind:
    """One kind of preset: where its files live and what it stores."""

    key: str  # "chains": WAFT_MT_chains_presets, waft.chains_preset_add
    label: str  # the menu's title before a preset is chosen
    subdir: str  # under Blender's scripts/presets/
    owner: str  # the settings' attribute on the active object
    values: tuple[str, ...]  # settings a user preset stores
    builtin: tuple  # EnumProperty items of the built-ins
    apply_operator: str  # the operator applying a built-in, and its enum property
    apply_property: str
    # Writes the preset file itself (``AddPresetBase.add``) where assignments to the active
    # object's settings are not enough: (object, filepath, kind) -> None.
    write: Callable | None = None
    body_values: tuple[str, ...] = ()  # ragdolls: per-body settings (PoseBone.waft_ragdoll)

    @property
    def menu_idname(self) -> str:
        return f"WAFT_MT_{self.key}_presets"

    @property
    def add_idname(self) -> str:
        return f"waft.{self.key}_preset_add"


def user_preset_dirs(kind: PresetKind, *, create: bool = False) -> list[str]:
    """Folders holding the user's presets of ``kind`` (Blender's ``preset_paths``); with
    ``create`` the user folder is made when none exists yet, so the menu can offer ＋."""
    paths = bpy.utils.preset_paths(kind.subdir)
    if not paths and create:
        made = bpy.utils.user_resource('SCRIPTS', path=os.path.join("presets", kind.subdir),
                                       create=True)
        paths = [made] if made else []
    return paths


def mark_applied(kind: PresetKind, identifier: str) -> None:
    """Title the menu with the built-in just applied, as ``script.execute_preset`` does with
    a file's name."""
    menu = getattr(bpy.types, kind.menu_idname, None)
    if menu is not None:
        menu.bl_label = next(name for ident, name, _ in kind.builtin if ident == identifier)


def literal(value) -> str:
    """A setting's value as Python source for a preset file."""
    if isinstance(value, (str, bool, int, float)):
        return repr(value)
    return repr(tuple(value))  # a thin-wrapped vector


def _menu_class(kind: PresetKind):
    def draw(self, context):
        layout = self.layout
        for ident, name, _ in kind.builtin:
            props = layout.operator(kind.apply_operator, text=name)
            setattr(props, kind.apply_property, ident)
        layout.separator()
        layout.label(text="Your Presets")
        self.path_menu(user_preset_dirs(kind, create=True), "script.execute_preset",
                       props_default={"menu_idname": self.bl_idname},
                       filter_ext=lambda ext: ext.lower() == ".py",
                       add_operator=kind.add_idname)

    return type(kind.menu_idname, (bpy.types.Menu,), {
        # bl_label is the title shown, changed to the preset last applied (as Blender's own
        # preset menus do); default_label is the menu's own name.
        "bl_idname": kind.menu_idname, "bl_label": kind.label, "default_label": kind.label,
        "preset_subdir": kind.subdir, "preset_operator": "script.execute_preset",
        "__doc__": f"Built-in {kind.label.lower()} and the ones you saved",
        "draw": draw})


def _add_operator_class(kind: PresetKind):
    namespace = {
        "bl_idname": kind.add_idname, "bl_label": f"Add {kind.label[:-1]}",
        "bl_options": {'REGISTER', 'INTERNAL'},
        "__doc__": f"Save the active object's {kind.label[:-8].lower()} settings as a preset "
                   "in your Blender preset folder, or remove one you saved",
        "preset_menu": kind.menu_idname, "preset_subdir": kind.subdir,
        "preset_defines": [f"settings = bpy.context.object.{kind.owner}"],
        "preset_values": [f"settings.{name}" for name in kind.values],
        "poll": classmethod(lambda cls, context: context.object is not None
                            and getattr(context.object, kind.owner, None) is not None),
    }
    if kind.write is not None:
        namespace["add"] = lambda self, context, filepath: kind.write(context.object, filepath,
                                                                      kind)
    return type(f"WAFT_OT_{kind.key}_preset_add", (AddPresetBase, bpy.types.Operator),
                namespace)


def draw_preset_menu(layout, kind: PresetKind) -> None:
    """The preset row of a panel: the menu (titled with the preset last applied), ＋ and －."""
    menu = getattr(bpy.types, kind.menu_idname)
    row = layout.row(align=True)
    # Removing a preset makes AddPresetBase title the menu "Presets": show its own name then.
    title = kind.label if menu.bl_label == BLENDER_RESET_LABEL else menu.bl_label
    row.menu(kind.menu_idname, text=title)
    row.operator(kind.add_idname, text="", icon='ADD')
    row.operator(kind.add_idname, text="", icon='REMOVE').remove_active = True


def preset_classes(kind: PresetKind) -> tuple:
    """The menu and the Add/Remove operator of ``kind``, for its system's ``CLASSES``."""
    return _menu_class(kind), _add_operator_class(kind)
