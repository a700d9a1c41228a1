"""Frames with the settings of the frame before share its coefficients (level.settings_epochs):
the bake is the same, bit for bit, as with coefficients made at every frame, also where a
setting is keyed to change (a motor letting go, gravity turning, a death switch's mode) and
where the distance limit shrinks with the target's speed (read at every frame)."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.ragdoll import RagdollSettings, bake_ragdoll, level
from waft.core.ragdoll.model import BodyMode

from .conftest import walking_humanoid

FRAMES = 24


def _keyed(n_bodies: int, *, shrink: bool) -> dict:
    """Settings keyed to change at frames 8 and 15, constant between."""
    strength = np.full((FRAMES, n_bodies), 0.8)
    strength[8:] = 0.3
    gravity = np.tile([0.0, 0.0, -9.81], (FRAMES, 1, 1))
    gravity[15:] = (0.0, -3.0, -9.81)
    mode = np.full((FRAMES, n_bodies), int(BodyMode.DRIVEN))
    mode[15:, 3:] = int(BodyMode.FREE)
    params = dict(motor_strength=strength, gravity=gravity, mode=mode)
    if shrink:
        params.update(distance_limit=0.3, distance_limit_speed=2.0)
    return params


def test_settings_epochs_change_exactly_where_a_setting_does():
    _, model, drive = walking_humanoid(bodies=8, frames=FRAMES,
                                       **_keyed(8, shrink=False))
    params = {name: getattr(drive.params, name) for name in drive.params.__dataclass_fields__}
    full = {name: np.broadcast_to(np.asarray(v), (FRAMES,) + np.shape(v)[1:])
            for name, v in params.items()}
    epochs = level.settings_epochs(full, FRAMES)
    assert np.array_equal(np.flatnonzero(np.diff(epochs)) + 1, [8, 15])


@pytest.mark.parametrize("shrink", [False, True], ids=["settings", "speed-limit"])
def test_shared_coefficients_bake_the_same_bits(monkeypatch, shrink):
    _, model, drive = walking_humanoid(bodies=8, frames=FRAMES, motor_strength=0.8,
                                       **{k: v for k, v in _keyed(8, shrink=shrink).items()
                                          if k != "motor_strength"})
    shared = bake_ragdoll(model, drive, RagdollSettings()).physics_matrix
    monkeypatch.setattr(level, "settings_epochs", lambda params, frames: np.arange(frames))
    every_frame = bake_ragdoll(model, drive, RagdollSettings()).physics_matrix
    np.testing.assert_array_equal(shared, every_frame)
    # The keyed changes really act: the free limbs fall away from the walk after frame 15.
    _, _, still = walking_humanoid(bodies=8, frames=FRAMES, motor_strength=0.8)
    steady = bake_ragdoll(model, still, RagdollSettings()).physics_matrix
    assert np.abs(shared[-1] - steady[-1]).max() > 0.01
