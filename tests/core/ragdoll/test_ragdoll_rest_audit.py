"""Audit (session 46): a limp humanoid comes to rest at the default 240 Hz and 4 iterations
(test_ragdoll_rest.py), not at the coarser substeps and single iteration a user may pick (the
add-on allows 30 Hz and 1 iteration)."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.ragdoll import RagdollSettings, bake_ragdoll

from .conftest import folding_humanoid, limp_drop
from .test_ragdoll_rest import REST_SPEED


@pytest.mark.xfail(strict=True, reason=(
    "Measured (session 46 audit): the scene of test_ragdoll_rest (folding humanoid tipped 10°, "
    "dropped 5 cm, friction 0.5) still moves from 3 s on: at 60 Hz with 1 iteration 616, 368, "
    "406, 246 mm/s in seconds 3-6 (191 mm/s at 8 s), at 90 Hz with 1 iteration 27, 12, 12 mm/s; "
    "at 60 Hz with 2 iterations it rests by 3 s. A body lying on the ground keeps a stored "
    "velocity into it (a foot -1.2 m/s) that the velocity pass leaves (it removes only "
    "separating speed at e = 0); zeroing the approach speed as well did not stop the crawl, so "
    "the cause is not found: likely the static-friction hold at a coarse substep (the tangential "
    "g h^2 slide that made the 240 Hz crawl of test_ragdoll_rest grows 16x at 60 Hz)."))
@pytest.mark.parametrize("hz", [60.0, 90.0])
def test_a_limp_humanoid_comes_to_rest_at_coarse_substeps_with_one_iteration(hz):
    frames, fps = 151, 30.0
    model, drive = limp_drop(folding_humanoid(17), frames=frames, tilt_deg=10.0, lift=0.05,
                             fps=fps)
    m = bake_ragdoll(model, drive, RagdollSettings(substep=1.0 / hz, iterations=1)
                     ).physics_matrix
    heads = m[:, :, :3, 3]
    tails = heads + m[:, :, :3, 1] * model.length[None, :, None]
    ends = np.stack((heads, tails), axis=2)
    speed = np.linalg.norm(np.diff(ends, axis=0), axis=-1).max(axis=(1, 2)) * fps
    assert speed[:int(0.5 * fps)].max() > 0.5  # (it did fall)
    assert speed[int(3 * fps):].max() < REST_SPEED, speed[int(3 * fps):].max()
