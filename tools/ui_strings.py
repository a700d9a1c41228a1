"""Every text the installed Waft add-on shows in Blender's UI, read from what it registered.

Used by tests/blender/test_ui_text.py (plain words, no raw line breaks), the translation
coverage test and tools/missing_translations.py. Needs bpy with Waft enabled::

    texts = ui_strings.registered_texts("bl_ext.waft_local.waft")   # [(where, text), ...]
    labels = ui_strings.drawn_labels("bl_ext.waft_local.waft")      # fixed panel labels

Looked at: each operator's, panel's and menu's label and tooltip (``bl_description`` or the
docstring), the name, description and enum items of every property Waft defines on them, and
every property group reached from a ``waft…`` property of an object, bone, scene, armature or
mesh (nested groups too; an operator's own properties come from ``bpy.ops``: its class's RNA
has none). Properties Blender itself defines on the base types (an operator's
``bl_idname``, a panel's region type) and unnamed internal ones are not Waft's words.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import bpy

# A panel's fixed label: layout.label(text="…"), layout.operator(…, text="…"), …
DRAWN_LABEL = re.compile(r"""\btext=(?:"([^"{}]+)"|'([^'{}]+)')""")

OWNERS = ("Object", "PoseBone", "Bone", "Scene", "Armature", "Mesh")
BASES = ("Operator", "Panel", "Menu", "UIList", "PropertyGroup")


def _base_identifiers() -> set[str]:
    names = set()
    for base in BASES:
        names |= {p.identifier for p in getattr(bpy.types, base).bl_rna.properties}
    return names


def waft_classes(module_name: str) -> list[tuple[str, object, str, str]]:
    """(name, bl_rna struct, label, tooltip) of Waft's registered classes and property
    groups (a group's label is empty: its name is not shown)."""
    found = []
    for name in dir(bpy.types):
        cls = getattr(bpy.types, name, None)
        if isinstance(cls, type) and getattr(cls, "__module__", "").startswith(module_name):
            tooltip = getattr(cls, "bl_description", "") or " ".join((cls.__doc__ or "").split())
            # A preset menu's bl_label is the preset last applied; its own name is kept apart.
            label = getattr(cls, "default_label", "") or getattr(cls, "bl_label", "")
            found.append((name, cls.bl_rna, label, tooltip))
    todo = [prop.fixed_type for owner in OWNERS
            for prop in getattr(bpy.types, owner).bl_rna.properties
            if prop.identifier.startswith("waft") and prop.type in {'POINTER', 'COLLECTION'}]
    seen = set()
    while todo:
        struct = todo.pop()
        if struct.identifier in seen:
            continue
        seen.add(struct.identifier)
        found.append((struct.identifier, struct, "", ""))
        todo += [prop.fixed_type for prop in struct.properties
                 if prop.type in {'POINTER', 'COLLECTION'} and prop.identifier != "rna_type"
                 and prop.fixed_type.identifier.lower().startswith("waft")]
    return found


def registered_texts(module_name: str) -> list[tuple[str, str]]:
    """(where, text) of every non-empty text Waft shows (module doc)."""
    base = _base_identifiers()
    texts = []
    for name, rna, label, tooltip in waft_classes(module_name):
        if label:
            texts.append((f"{name} label", label))
        if tooltip:
            texts.append((f"{name} tooltip", tooltip))
        for prop in rna.properties:
            if prop.identifier in base or prop.name in ("", prop.identifier):
                continue
            texts += _property_texts(f"{name}.{prop.identifier}", prop)
    # An operator's own properties (its redo panel and its options), not the ones it takes
    # from Blender's helpers (ExportHelper's file path, AddPresetBase's preset name)
    for name, cls in _waft_operators(module_name):
        rna = _operator_rna(cls)
        for identifier in _own_annotations(cls, module_name):
            prop = rna.properties.get(identifier) if rna is not None else None
            if prop is not None and prop.name not in ("", identifier):
                texts += _property_texts(f"{name}.{identifier}", prop)
    # Settings registered straight on a Blender type (a ragdoll body's per-frame settings are
    # PoseBone.waft_ragdoll_<name>, so that Insert Keyframe can make their path).
    for owner in OWNERS:
        for prop in getattr(bpy.types, owner).bl_rna.properties:
            if prop.identifier.startswith("waft") and prop.type not in {'POINTER', 'COLLECTION'}:
                texts += _property_texts(f"{owner}.{prop.identifier}", prop)
    return [(where, text) for where, text in texts if text]


def _waft_operators(module_name: str) -> list[tuple[str, type]]:
    return [(name, getattr(bpy.types, name)) for name in dir(bpy.types) if "_OT_" in name
            and getattr(getattr(bpy.types, name), "__module__", "").startswith(module_name)]


def _operator_rna(cls):
    """The RNA of operator ``cls``'s properties (``bpy.ops.<module>.<name>``), or None."""
    module, _, op_name = getattr(cls, "bl_idname", "").partition(".")
    try:
        return getattr(getattr(bpy.ops, module), op_name).get_rna_type()
    except (AttributeError, KeyError):
        return None


def _own_annotations(cls, module_name: str) -> list[str]:
    """The properties the Waft classes in ``cls``'s bases declare."""
    names = []
    for base in reversed(cls.__mro__):
        if getattr(base, "__module__", "").startswith(module_name):
            names += [n for n in getattr(base, "__annotations__", {}) if n not in names]
    return names


def _property_texts(where: str, prop) -> list[tuple[str, str]]:
    texts = [(f"{where} name", prop.name), (f"{where} description", prop.description)]
    for item in getattr(prop, "enum_items", ()):
        texts += [(f"{where} item {item.identifier}", item.name),
                  (f"{where} item {item.identifier} description", item.description)]
    return texts


def drawn_labels(module_name: str) -> list[tuple[str, str]]:
    """(where, text) of the fixed labels Waft's panels draw (``text="…"`` in its source; the
    f-strings around names of the user's objects are not translated)."""
    root = Path(sys.modules[module_name].__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in DRAWN_LABEL.finditer(line):
                found.append((f"{path.relative_to(root)}:{number}",
                              match.group(1) or match.group(2)))
    return found


def all_texts(module_name: str) -> set[str]:
    """Every text Waft shows: registered ones and fixed panel labels."""
    return ({text for _, text in registered_texts(module_name)}
            | {text for _, text in drawn_labels(module_name)})
