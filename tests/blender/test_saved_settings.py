"""Files saved by an older Waft open with every setting intact.

``fixtures/settings_before_strands_move.blend`` was saved by the extension as it was before the
bone-chain system moved into its own packages (commit c530e3a; ``fixtures/make_settings_fixture.py``
made it): every float, int and bool of every Waft property group set away from its default, and
one setting keyframed. Property names are the file format, so a rename anywhere loses users'
settings silently; this test reads every recorded value back.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import bpy
import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BLEND = FIXTURES / "settings_before_strands_move.blend"


def _resolve(key: str):
    """``objects['Rig'].pose.bones['Hair.000'].waft`` → the property group of the open file."""
    return eval(key, {}, {"objects": bpy.data.objects, "scene": bpy.context.scene})  # noqa: S307


def test_settings_saved_before_the_move_open_intact(waft, tmp_path):
    expected = json.loads((FIXTURES / "settings_before_strands_move.json").read_text())
    keys = expected.pop("keys")
    copy = tmp_path / BLEND.name
    shutil.copy2(BLEND, copy)
    bpy.ops.wm.open_mainfile(filepath=str(copy), load_ui=False)
    checked = 0
    mismatches = []
    for owner, values in expected.items():
        group = _resolve(owner)
        for name, value in values.items():
            got = getattr(group, name)
            got = list(got) if isinstance(value, list) else got
            if got != pytest.approx(value, rel=1e-6, abs=1e-7):
                mismatches.append(f"{owner}.{name}: saved {value!r}, read {got!r}")
            checked += 1
    assert mismatches == []
    assert checked > 300  # every group was in the file, not an empty record
    action = bpy.data.objects["Rig"].animation_data.action
    fcurves = [fc for fc in _fcurves(action) if fc.data_path == keys["path"]]
    assert len(fcurves) == 1
    points = [c for p in fcurves[0].keyframe_points for c in p.co]
    assert points == pytest.approx([c for point in keys["points"] for c in point])


def _fcurves(action):
    if hasattr(action, "layers") and len(action.layers):  # 4.4+ slotted actions
        return [fc for layer in action.layers for strip in layer.strips
                for bag in strip.channelbags for fc in bag.fcurves]
    return list(action.fcurves)
