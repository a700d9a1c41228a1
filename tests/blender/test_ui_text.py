"""What users read: every registered label, tooltip and enum item speaks plain words.

The research trail ("seed 001", the articles the techniques come from) stays in code comments
and docs/internals.md; a tooltip names the technique instead. Tooltips are one paragraph:
Blender shows a raw line break as a broken tooltip.
"""

from __future__ import annotations

import re

import bpy

RESEARCH_NOTE = re.compile(r"seed\s*0\d\d", re.IGNORECASE)


OWNERS = (bpy.types.Object, bpy.types.PoseBone, bpy.types.Bone, bpy.types.Scene,
          bpy.types.Armature, bpy.types.Mesh)


def _waft_classes(module_name: str) -> list[type]:
    """Operators, panels and menus (in ``bpy.types`` by name), and every property group
    reached from a ``waft…`` property of an ID or bone, nested groups included."""
    found = []
    for name in dir(bpy.types):
        cls = getattr(bpy.types, name, None)
        if isinstance(cls, type) and getattr(cls, "__module__", "").startswith(module_name):
            found.append(cls)
    todo = [prop.fixed_type for owner in OWNERS for prop in owner.bl_rna.properties
            if prop.identifier.startswith("waft") and prop.type in {'POINTER', 'COLLECTION'}]
    seen = set()
    while todo:
        struct = todo.pop()
        if struct.identifier in seen:
            continue
        seen.add(struct.identifier)
        found.append(type(struct.identifier, (), {"bl_rna": struct, "__doc__": None,
                                                   "group": True}))
        todo += [prop.fixed_type for prop in struct.properties
                 if prop.type in {'POINTER', 'COLLECTION'} and prop.identifier != "rna_type"
                 and prop.fixed_type.identifier.lower().startswith("waft")]
    return found


def _texts(cls) -> list[tuple[str, str]]:
    """(where, text) of everything Blender shows for a class: label, tooltip, properties."""
    texts = [(f"{cls.__name__}.bl_label", getattr(cls, "bl_label", "") or ""),
             (f"{cls.__name__}.bl_description", getattr(cls, "bl_description", "") or ""),
             (f"{cls.__name__} docstring (tooltip)", (cls.__doc__ or "").strip())]
    rna = getattr(cls, "bl_rna", None)
    for prop in (rna.properties if rna is not None else ()):
        if prop.identifier == "rna_type":
            continue
        where = f"{cls.__name__}.{prop.identifier}"
        texts += [(f"{where} name", prop.name), (f"{where} description", prop.description)]
        for item in getattr(prop, "enum_items", ()):
            texts += [(f"{where} item {item.identifier}", item.name),
                      (f"{where} item {item.identifier} description", item.description)]
    return texts


def test_no_research_notes_or_raw_line_breaks_in_the_ui(waft_module_name):
    classes = _waft_classes(waft_module_name)
    # Operators, panels, menus and property groups of every system are all looked at.
    kinds = {base.__name__ for cls in classes for base in cls.__mro__}
    assert {"Operator", "Panel", "Menu"} <= kinds
    groups = [cls.__name__ for cls in classes if getattr(cls, "group", False)]
    assert len(groups) >= 8, groups  # each system's object, bone and scene settings
    assert len(classes) > 60
    texts = [t for cls in classes for t in _texts(cls)]
    assert len(texts) > 500
    notes = [(where, text) for where, text in texts if RESEARCH_NOTE.search(text)]
    assert not notes, notes
    tooltips = [(where, text) for where, text in texts
                if "docstring" not in where and "\n" in text]
    assert not tooltips, tooltips


def test_operator_tooltips_are_one_paragraph(waft_module_name):
    """An operator's tooltip is its docstring: wrapped source lines show as breaks."""
    broken = [(cls.__name__, cls.__doc__) for cls in _waft_classes(waft_module_name)
              if issubclass(cls, bpy.types.Operator) and cls.__doc__
              and "\n" in cls.__doc__.strip() and not getattr(cls, "bl_description", "")]
    assert not broken, broken
