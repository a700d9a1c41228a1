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
    "Measured (session 49): the scene of test_ragdoll_rest (folding humanoid tipped 10°, "
    "dropped 5 cm, friction 0.5) still moves from 3 s on, less: at 60 Hz with 1 iteration "
    "27, 27 mm/s in seconds 3-5 (session 46: 616, 368, 406, 246 mm/s in seconds 3-6; on this "
    "5 s bake 811, 153), at 90 Hz 12, 12 mm/s (was 77, 17). The cause found: with one "
    "iteration the Jacobi joints do not carry a leg from the pelvis to a foot on the ground, "
    "the shin sank ~20 mm a substep that the final pass lifted back by position only, and its "
    "velocity into the ground (1.1-1.3 m/s) stayed (5-7 J of kinetic energy at rest); the "
    "joints' velocity stop and the contacts' approach stop (level.STOP_OPENED_JOINTS, "
    "contacts.STOP_APPROACH) take it out. What is left: the hands lying on the ground ratchet "
    "by 0.4 mm every 8 frames (12 mm/s at 90 Hz) and a foot and shin at 60 Hz (22, 15 mm/s). "
    "Session 50 (same numbers: 26.7 mm/s at 60 Hz, 12.3 at 90 Hz): at rest the joints stay "
    "open up to the tolerance (elbows 4.4 mm, ankles 5.0) and each substep the ball joints "
    "re-close the whole gap, a pull friction must hold; a forearm, held at its contact "
    "centre only, turns about it and drags the wrist 30 um per 2 substeps, the hand's hold "
    "climbs from 0.68 to 1.0 of its cone in 8 frames and slips 0.38 mm at once; at 60 Hz the "
    "feet's holds let go every substep. A spin hold of line contacts: unbounded 1.6 and "
    "9.1 mm/s, bounded by Coulomb (the pull needs 1-8.6 times it) worse, 25 mm/s "
    "(docs/ragdoll.md, Session 50)."))
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
