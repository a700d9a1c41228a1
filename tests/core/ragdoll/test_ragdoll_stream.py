"""``RagdollStream`` (what the live preview steps) gives every frame, as soon as it is solved,
bit for bit the frame the bake returns: the output blend, a fall and the recovery blend after
it, kinematic bodies and a ragdoll carried by another one's body included."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.ragdoll import RagdollSettings, RagdollStream, bake_ragdoll

from .test_ragdoll_framerate_carrier import _carried
from .test_ragdoll_targets import runner_input


def _fallen_runner():
    # the runner's root is blocked by a wall, lets go, and is blended back after 0.1 s
    return runner_input(True, recovery_delay=0.1, recovery_time=0.2)


def _carried_pair():
    model, drive, _ = _carried(weak_carrier=True)
    return model, drive


@pytest.mark.parametrize("case", [_fallen_runner, _carried_pair])
def test_every_streamed_frame_is_the_baked_frame(case):
    model, drive = case()
    settings = RagdollSettings()
    baked = bake_ragdoll(model, drive, settings)
    stream = RagdollStream(model, drive, settings)
    shown = []
    while stream.frames_done < stream.total:
        assert stream.result() is None
        shown.append(stream.step())
    np.testing.assert_array_equal(np.stack(shown), baked.body_matrix)
    result = stream.result()
    np.testing.assert_array_equal(result.body_matrix, baked.body_matrix)
    np.testing.assert_array_equal(result.physics_matrix, baked.physics_matrix)
    np.testing.assert_array_equal(result.fell_at, baked.fell_at)
    with pytest.raises(IndexError):
        stream.step()
    if case is _fallen_runner:
        fell = int(baked.fell_at[0])
        assert 0 < fell < stream.total - 8  # the recovery blend is part of what is compared
        blended = np.abs(baked.body_matrix[fell + 5:] - baked.physics_matrix[fell + 5:]).max()
        assert blended > 1e-3
