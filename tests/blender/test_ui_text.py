"""What users read: every registered label, tooltip and enum item speaks plain words.

The research trail ("seed 001", the articles the techniques come from) stays in code comments
and docs/internals.md; a tooltip names the technique instead. Tooltips are one paragraph:
Blender shows a raw line break in a description as a broken tooltip, and an operator's tooltip
is its docstring, line breaks and all, unless ``bl_description`` says otherwise.
"""

from __future__ import annotations

import re

import bpy

import ui_strings  # tools/

RESEARCH_NOTE = re.compile(r"seed\s*0\d\d", re.IGNORECASE)


def test_every_system_is_read(waft_module_name):
    classes = ui_strings.waft_classes(waft_module_name)
    names = {name for name, _, _, _ in classes}
    assert {"WAFT_OT_bake", "WAFT_PT_setup", "WAFT_MT_chains_presets"} <= names
    assert {"WaftSetupSettings", "WaftClothSettings", "WaftRagdollSettings",
            "WaftRagdollBodySettings"} <= names
    texts = ui_strings.registered_texts(waft_module_name)
    assert len(texts) > 300
    assert not [t for w, t in texts if t in ("bl_idname", "Options for this operator type")]


def test_no_research_notes_or_raw_line_breaks_in_the_ui(waft_module_name):
    texts = ui_strings.registered_texts(waft_module_name)
    notes = [(where, text) for where, text in texts if RESEARCH_NOTE.search(text)]
    assert not notes, notes
    broken = [(where, text) for where, text in texts if "\n" in text]
    assert not broken, broken
    markup = [(where, text) for where, text in texts if "``" in text]  # developer docstrings
    assert not markup, markup


def test_operator_tooltips_are_one_paragraph(waft_module_name):
    """An operator's tooltip is its docstring: wrapped source lines show as breaks."""
    broken = [name for name in dir(bpy.types)
              if name.startswith("WAFT_OT_") and not getattr(getattr(bpy.types, name),
                                                             "bl_description", "")
              and "\n" in (getattr(bpy.types, name).__doc__ or "").strip()]
    assert not broken, broken
