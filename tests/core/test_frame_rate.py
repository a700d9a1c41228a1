"""Frame-rate independence under fast motion: the same keyed motion baked at 24, 25, 30, 50
and 60 fps agrees when the inputs are samples on the substep grid in seconds (what the add-on
passes: `Drive.fps` = the sample rate, `output_fps` = the scene's frame rate)."""

from __future__ import annotations

import numpy as np
import pytest

from waft import core

RATE = 240.0  # samples per second = the default substep rate
OMEGA = 2 * np.pi * 1.5  # a 1.5 Hz figure-eight


def _figure_eight(peak_g: float):
    amplitude = peak_g * 9.81 / OMEGA**2  # the x motion's peak acceleration is A ω²
    return lambda t: np.stack([amplitude * np.sin(OMEGA * t), 0.0 * t,
                               0.5 * amplitude * np.sin(2 * OMEGA * t)], axis=-1)


def _tip(rig, fps: float, peak_g: float, *, seconds: float = 2.0, sampled: bool = True):
    frames = int(round(seconds * fps)) + 1
    rate = RATE if sampled else fps
    samples = int(np.ceil((frames - 1) / fps * rate - 1e-9)) + 1
    chain = rig.vertical_chain(bones=4, length=0.1)
    model, drive = rig.build([chain], frames=samples, fps=rate, root_motion=_figure_eight(peak_g),
                             damping=1.0)
    if sampled:
        drive = core.Drive(fps=rate, reference=drive.reference, kinematic=drive.kinematic,
                           space=drive.space, collider_matrix=drive.collider_matrix,
                           params=drive.params, output_fps=fps, output_frames=frames)
    positions = core.bake(model, drive).positions
    assert positions.shape[0] == frames
    return positions[:, 0, -1]


def _at_common_times(tips: dict[float, np.ndarray]) -> dict[float, float]:
    """Largest tip distance (m) to the 24 fps bake at the whole and half seconds every rate
    shares (25 fps: whole seconds only)."""
    out = {}
    for fps, tip in tips.items():
        step = 1.0 if fps == 25 else 0.5
        times = np.arange(0.0, 2.0 + 1e-9, step)
        out[fps] = float(np.max(np.linalg.norm(tip[np.round(times * fps).astype(int)]
                                               - tips[24][np.round(times * 24).astype(int)],
                                               axis=-1)))
    return out


@pytest.mark.parametrize("peak_g", [1.0, 3.6, 5.0])
def test_fast_motion_bakes_alike_at_every_frame_rate(rig, peak_g):
    tips = {fps: _tip(rig, fps, peak_g) for fps in (24, 25, 30, 50, 60)}
    assert max(_at_common_times(tips).values()) < 1e-3


def test_inputs_sampled_once_per_frame_do_not(rig):
    """What the bake did before: inputs at the frames, linear in between (the gap this closes)."""
    tips = {fps: _tip(rig, fps, 3.6, sampled=False) for fps in (24, 60)}
    assert _at_common_times(tips)[60] > 0.05


def test_output_at_the_sample_rate_is_the_plain_bake(rig):
    chain = rig.vertical_chain(bones=3, length=0.1)
    model, drive = rig.build([chain], frames=25, fps=24.0, root_motion=_figure_eight(2.0))
    plain = core.bake(model, drive).positions
    same = core.bake(model, core.Drive(
        fps=24.0, reference=drive.reference, kinematic=drive.kinematic, space=drive.space,
        collider_matrix=drive.collider_matrix, params=drive.params, output_fps=24.0,
        output_frames=25)).positions
    assert np.array_equal(plain, same)


def test_more_output_frames_than_the_samples_cover_is_an_error(rig):
    chain = rig.vertical_chain(bones=2, length=0.1)
    model, drive = rig.build([chain], frames=11, fps=240.0)
    bad = core.Drive(fps=240.0, reference=drive.reference, kinematic=drive.kinematic,
                     space=drive.space, collider_matrix=drive.collider_matrix,
                     params=drive.params, output_fps=24.0, output_frames=3)
    with pytest.raises(core.SetupError, match="output_frames"):
        core.bake(model, bad)
