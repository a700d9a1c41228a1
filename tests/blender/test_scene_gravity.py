"""The scene's gravity reaches the bone-chain bake: the sampler reads it once per bake when
nothing animates it (addon/strands/sampling.py), so a value changed between two bakes, Gravity
switched off, and a keyed gravity (read at every sample) must each still move the chain."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat

SIDEWAYS = (0.0, 9.81, -9.81)  # 45 degrees towards +Y


def _hanging_tail(scene):
    """A 4-bone, 0.6 m tail hanging straight down from a still root, damped so it settles."""
    scene.render.fps, scene.frame_start, scene.frame_end = 24, 1, 48
    ob = rigs.chain_rig(scene, "Tail", count=4, length=0.15)
    rigs.calm(ob, damping=3.0)
    return ob


def _tip_y(report) -> np.ndarray:
    """(F,) the tip's sideways (+Y) offset from the root, per frame."""
    positions = report.chain_positions["Tail: Hair.000"]  # (F, 5, 3)
    return positions[:, -1, 1] - positions[:, 0, 1]


def test_a_changed_scene_gravity_reaches_the_next_bake(scene, bake_api):
    _hanging_tail(scene)
    scene.gravity = (0.0, 0.0, -9.81)
    assert np.abs(_tip_y(bake_api.bake_scene(scene))).max() < 1e-4  # straight down: at rest
    scene.gravity = SIDEWAYS
    swung = _tip_y(bake_api.bake_scene(scene))
    assert swung[-1] > 0.25  # towards the new gravity (0.42 m at 45 degrees, at rest)
    scene.use_gravity = False
    assert np.abs(_tip_y(bake_api.bake_scene(scene))).max() < 1e-4  # no gravity: no swing


def test_a_keyed_scene_gravity_reaches_every_sample(scene, bake_api):
    """Gravity keyed to turn sideways at frame 24 (constant keys): before it the tail hangs
    still, after it swings towards +Y."""
    _hanging_tail(scene)
    scene.gravity = (0.0, 0.0, -9.81)
    scene.keyframe_insert("gravity", frame=1)
    scene.gravity = SIDEWAYS
    scene.keyframe_insert("gravity", frame=24)
    for curve in rigs.action_fcurves(scene.animation_data.action):
        for key in curve.keyframe_points:
            key.interpolation = "CONSTANT"
    scene.frame_set(1)
    y = _tip_y(bake_api.bake_scene(scene))
    assert np.abs(y[:23]).max() < 1e-4  # frames 1-23: straight down
    assert y[-1] > 0.25
