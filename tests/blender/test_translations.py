"""The UI in Japanese and Simplified Chinese: every registered text has both translations, and
Blender shows them when the interface language is switched."""

from __future__ import annotations

import importlib

import bpy
import pytest

import ui_strings  # tools/


@pytest.fixture
def table(waft_module_name):
    return importlib.import_module(f"{waft_module_name}.addon.translation_table").MESSAGES


def test_every_registered_text_has_japanese_and_chinese(waft_module_name, table):
    texts = ui_strings.all_texts(waft_module_name)
    missing = sorted(texts - set(table))
    assert not missing, f"{len(missing)} texts without translations " \
                        f"(tools/missing_translations.py prints them): {missing[:5]}"
    for english in texts:
        ja, zh = table[english]
        assert ja.strip() and zh.strip() and "TODO" not in ja + zh, english
        assert "\n" not in ja + zh, english  # a tooltip is one paragraph in every language


def test_no_stale_entries(waft_module_name, table):
    texts = ui_strings.all_texts(waft_module_name)
    assert not sorted(set(table) - texts)


def test_registered_with_blender_for_both_languages_and_contexts(waft_module_name, table):
    """The bpy wheel ships no locale files (``bpy.app.translations.locales`` is empty, the only
    interface language DEFAULT), so switching the language cannot run here: the dictionary the
    add-on hands to Blender is checked instead, and that Blender takes it again."""
    translations = importlib.import_module(f"{waft_module_name}.addon.translations")
    registered = translations.translations_dict()
    assert set(registered) >= {"ja_JP", "zh_HANS"}
    for locale, column in (("ja_JP", 0), ("zh_HANS", 1)):
        for context in ("*", "Operator"):
            assert registered[locale][(context, "Shape Stiffness")] == \
                table["Shape Stiffness"][column]
    assert registered["ja_JP"][("*", "Shape Stiffness")] == "形状の剛性"
    assert registered["zh_HANS"][("*", "Shape Stiffness")] == "形状刚度"
    bpy.app.translations.unregister(translations.__name__)
    bpy.app.translations.register(translations.__name__, registered)
