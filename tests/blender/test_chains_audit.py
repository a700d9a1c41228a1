"""Audit (session 46): bone chains through the user's path with motions the suite did not use.

The suite's frame-rate test keys the figure-eight on the root bone, whose local axes turn it
into a level figure-eight (no vertical motion). Keyed on the armature object, the same keys
shake the chain vertically as well (z peaks at twice the x's acceleration): what holds and what
does not is below.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402


def _shaken_object(scene, bake_api, fps: int, *, length: float, direction=(0.0, 0.0, -1.0),
                   substep_rate: float = 240.0) -> np.ndarray:
    """Four bones of ``length`` hanging along ``direction`` from an armature object keyed on
    the 1.5 Hz figure-eight (x peaks at 5 g, z at 10 g; keys every 1/12 s in seconds, Bezier),
    damping 1/s, default bending and tether, baked at ``fps``: the chain at 0, 1 and 2 s."""
    ob = rigs.chain_rig(scene, count=4, length=length, direction=direction)
    rigs.calm(ob, damping=1.0)
    rigs.key_figure_eight(ob, fps, peak_g=5.0, scene=scene)  # the object's own location
    bake_api.bake_scene(scene, substep_rate=substep_rate)
    return rigs.world_points(scene, ob, rigs.bone_names("Hair", 4), [1, 1 + fps, 1 + 2 * fps])


def _parted(scene, bake_api, **kwargs) -> dict:
    results = rigs.bake_at_rates(scene, lambda fps: _shaken_object(scene, bake_api, fps,
                                                                   **kwargs))
    assert np.ptp(results[24][:, -1], axis=0).max() > 0.02  # the tip swings (4 cm and more)
    return {fps: rigs.largest_distance(results[fps], results[24]) for fps in results}


@pytest.mark.parametrize("length,direction", [(0.1, (0.0, 0.0, -1.0)),
                                              (0.05, (0.3, 0.0, -1.0))])
def test_a_shaken_armature_object_bakes_alike_at_every_frame_rate(scene, bake_api, length,
                                                                  direction):
    """10 cm bones hanging straight (0.011 mm apart at most), and 5 cm bones hanging tilted
    (0.015 mm): within 1 mm of the 24 fps bake at 25, 30, 50 and 60 fps."""
    parted = _parted(scene, bake_api, length=length, direction=direction)
    assert max(parted.values()) < 1e-3, parted


@pytest.mark.xfail(strict=True, reason="audit s46: 5 cm bones hanging exactly straight down part "
                   "from their 24 fps bake by 146 / 201 / 153 / 177 mm at 25 / 30 / 50 / 60 fps "
                   "(36 % of the 0.55 m motion). While the object accelerates down faster than "
                   "g the straight chain is at an unstable balance, and at 240 Hz its segments "
                   "step up to a whole segment per substep (SHAKE rejects 5 substeps, FTL takes "
                   "them; at 480 Hz steps of 0.52): the inputs' float32 rounding, 0.8 um apart "
                   "between the frame rates, grows to the whole swing (a 1 nm change to the "
                   "reference: 37 mm at 2 s). At 960 Hz (steps 0.14) the bakes agree to 0.7 mm; "
                   "tilted 0.3 rad or 10 cm bones, 0.015 mm")
def test_a_straight_short_chain_shaken_vertically_bakes_alike_at_every_frame_rate(scene,
                                                                                    bake_api):
    parted = _parted(scene, bake_api, length=0.05)
    assert max(parted.values()) < 1e-3, parted
