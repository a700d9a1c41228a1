"""Fabric presets for cloth cages (values from ``core.cloth.presets.FABRICS``).

Preset values are SI (metres); settings shown in scene units are converted with the scene's
unit scale when applied.
"""

from __future__ import annotations

from ...core.cloth import presets as core_presets
from ..preset_menus import PresetKind
from .reading import LENGTH_SETTINGS

FABRICS = core_presets.FABRICS
_DESCRIPTIONS = getattr(core_presets, "DESCRIPTIONS", {})


def _description(name: str) -> str:
    values = FABRICS[name]
    text = values.get("description") if isinstance(values, dict) else None
    return str(text or _DESCRIPTIONS.get(name, name.replace("_", " ").title()))


FABRIC_ITEMS = tuple((name, name.replace("_", " ").title(), _description(name))
                     for name in FABRICS)


def fabric_values(name: str) -> dict[str, float]:
    try:
        values = FABRICS[name]
    except KeyError:
        raise ValueError(f"unknown fabric {name!r}; expected one of {sorted(FABRICS)}") from None
    return {k: v for k, v in values.items() if k != "description"}


def apply_fabric(settings, name: str, *, unit_scale: float = 1.0) -> list[str]:
    """Copy a fabric's values onto ``Object.waft_cloth``; returns the settings changed.

    An infinite backstop switches the backstop off; lengths go from metres to scene units.
    """
    changed = []
    for key, value in fabric_values(name).items():
        if key == "backstop_distance" and value == float("inf"):
            settings.use_backstop = False
            changed.append("use_backstop")
            continue
        if key == "backstop_distance":
            settings.use_backstop = True
        if key in LENGTH_SETTINGS:
            value = value / unit_scale
        if key in ("gravity", "wind_velocity"):
            value = tuple(value)
        setattr(settings, key, value)
        changed.append(key)
    settings.fabric = name
    return changed


# What a user's fabric preset stores: every setting a built-in fabric sets (in the scene's
# units, as shown), and the backstop switch.
USER_PRESET_VALUES = tuple(sorted({key for values in FABRICS.values() for key in values}
                                  - {"description"})) + ("use_backstop",)

PRESET_KIND = PresetKind(
    key="fabrics", label="Fabric Presets", subdir="waft/fabrics", owner="waft_cloth",
    values=USER_PRESET_VALUES, builtin=FABRIC_ITEMS, apply_operator="waft.cloth_apply_fabric",
    apply_property="fabric")
