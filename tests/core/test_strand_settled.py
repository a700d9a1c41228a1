"""Settled poses for strands (the Pose Track of cutscene cloth tools): a chain's state captured at
one frame is where it starts, and where it restarts after an animation cut, instead of its
animated reference: a tail modelled sticking out does not fall into place at every shot."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from waft import core
from waft.core.strands import capture_settled_offsets

FPS = 24
FRAMES = 150
CUT = 110
SETTLED = 90  # the chain has hung for over three seconds
BONES, LENGTH = 8, 0.1


def _turn(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _case(rig, chains: int = 1, **params):
    """Tails modelled sticking out level (+x), so their reference is not how they hang; the
    character walks slowly along its y and, at frame CUT, the shot cuts to it 3 m away, turned
    90 degrees about z (space and reference together). The walk (with the damping) makes the
    tail trail a little behind: the settled pose holds that too."""
    straight = np.zeros((BONES + 1, 3))
    straight[:, 0] = LENGTH * np.arange(BONES + 1)
    straight[:, 2] = 1.0
    rests = [straight + (0.0, 0.3 * c, 0.0) for c in range(chains)]
    space = np.repeat(np.eye(4)[None, None], FRAMES, axis=0).repeat(chains, axis=1)
    walk = np.zeros((FRAMES, 3))
    walk[:, 1] = 0.3 * np.arange(FRAMES) / FPS
    space[:, :, :3, 3] = walk[:, None]
    space[CUT:, :, :3, :3] = _turn(0.5 * np.pi)  # walking along its own y, as before the cut
    space[CUT:, :, :3, 3] = (walk[CUT:] @ _turn(0.5 * np.pi).T + (3.0, 1.0, 0.0))[:, None]
    reference = np.stack([rests[c] @ space[:, c, :3, :3].transpose(0, 2, 1)
                          + space[:, c, None, :3, 3] for c in range(chains)], axis=1)
    defaults = {"damping": 4.0, "bend_compliance": 1e-3}
    defaults.update(params)
    model, drive = rig.build(rests, frames=FRAMES, fps=FPS, reference=reference, space=space,
                             **defaults)
    return model, drive


def _speed(x: np.ndarray) -> np.ndarray:
    """(F - 1,) fastest particle per frame relative to the root (the character's own travel and
    the cut's jump taken out), m/s."""
    local = x - x[:, :, :1]
    return np.linalg.norm(np.diff(local, axis=0), axis=-1).max(axis=(1, 2)) * FPS


def _settled(rig, chains: int = 1, **params):
    model, drive = _case(rig, chains, **params)
    free = core.bake(model, drive).positions
    offset = capture_settled_offsets(drive, free, SETTLED)
    return model, drive, free, offset


def test_a_chain_starts_and_restarts_after_a_cut_from_its_settled_pose(rig):
    model, drive, free, offset = _settled(rig)
    assert _speed(free)[:5].max() > 1.0  # without: the tail falls from level at the start
    settled = core.bake(model, dataclasses.replace(drive, settled_offset=offset)).positions
    speed = _speed(settled)
    assert speed[:CUT - 1].max() < 0.05  # hangs still from the first frame
    assert speed[CUT:].max() < 0.05  # and after the cut (the cut frame itself turns it)
    # The first frame is the captured pose (relative to the root: same axes, no turn yet).
    hang = free[SETTLED, 0] - free[SETTLED, 0, :1]
    assert np.abs(settled[0, 0] - settled[0, 0, :1] - hang).max() < 1e-9
    # After the cut it hangs from the turned character: the captured shape turned 90 degrees.
    turned = hang @ _turn(0.5 * np.pi).T
    assert np.abs(settled[CUT, 0] - settled[CUT, 0, :1] - turned).max() < 2e-3


def test_the_restored_pose_keeps_every_segment_at_its_rest_length(rig):
    """Offsets that no longer fit the reference (a capture under another pose, here scaled
    by 1.3) are put back along their directions at rest length: no stretch, no kick."""
    model, drive, _, offset = _settled(rig)
    settled = core.bake(model, dataclasses.replace(drive, settled_offset=1.3 * offset)).positions
    lengths = np.linalg.norm(np.diff(settled[0, 0], axis=0), axis=-1)
    assert np.abs(lengths - LENGTH).max() < 1e-12
    assert np.all(np.isfinite(settled))


def test_a_chain_without_a_settled_pose_bakes_as_before(rig):
    """Two chains; only the first has a settled pose (NaN rows for the other): the second is
    bitwise what it is with no settled pose at all."""
    model, drive, free, offset = _settled(rig, chains=2)
    offset[1] = np.nan
    mixed = core.bake(model, dataclasses.replace(drive, settled_offset=offset)).positions
    assert np.array_equal(mixed[:, 1], free[:, 1])
    assert _speed(mixed[:, :1])[:CUT - 1].max() < 0.05


def test_a_stale_settled_pose_is_a_clear_error(rig):
    model, drive, _, offset = _settled(rig)
    offset[0, 3] = np.nan  # one free particle lost its offset: a capture of another chain
    with pytest.raises(core.SetupError, match=r"chain 'Rig: Chain.0'.*particle 3.*capture"):
        core.bake(model, dataclasses.replace(drive, settled_offset=offset))
    with pytest.raises(core.SetupError, match="settled_offset has shape"):
        core.bake(model, dataclasses.replace(drive, settled_offset=offset[:, :4]))
