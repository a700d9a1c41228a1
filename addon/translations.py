"""Waft's UI in Japanese and Simplified Chinese through ``bpy.app.translations``.

Every English text of ``translation_table.MESSAGES`` is registered for the default context
("*": property names, tooltips, labels drawn by panels) and for the operator context (an
operator's name on its button and in menus). Blender picks them up when *Preferences › Interface
› Translation* is on and the language is 日本語 or 简体中文.
"""

from __future__ import annotations

import bpy

from .translation_table import MESSAGES

# Blender 4.x/5.x call Simplified Chinese "zh_HANS"; older builds and some tools "zh_CN".
LOCALES = {"ja_JP": 0, "zh_HANS": 1, "zh_CN": 1}
CONTEXTS = ("*", "Operator")
_OWNER = __name__


def translations_dict() -> dict:
    return {locale: {(context, english): texts[column] for english, texts in MESSAGES.items()
                     for context in CONTEXTS}
            for locale, column in LOCALES.items()}


def register() -> None:
    bpy.app.translations.register(_OWNER, translations_dict())


def unregister() -> None:
    bpy.app.translations.unregister(_OWNER)
