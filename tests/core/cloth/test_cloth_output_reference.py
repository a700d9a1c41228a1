"""The reference at the output frames (`ClothDrive.output_reference`, what the add-on samples at
the scene frames besides the 120 Hz grid): a frame between two samples (25 and 50 fps) holds its
pinned vertices and its max distance to the cage at the frame, not to the samples interpolated
(off by the curvature of the motion: 1.5 mm on a 4 g figure-eight); frames on the samples bake
bit for bit as without it; a stream fed it row by row gives the bake's frames bit for bit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from waft import core
from waft.core import SetupError
from waft.core.cloth import ClothParams, ClothStream, bake_cloth
from waft.core.cloth.drive import between_samples
from waft.core.timestep import frame_interval, interpolate

from .test_cloth_stream import _held, _rows, _scene
from .test_cloth_subframe import SECONDS, _drive, _figure_eight, _model

RATE = 120.0  # the add-on's default sample rate: 25 and 50 fps frames fall between samples


def _figure_eight_drive(fps: int, peak_g: float = 5.0):
    """test_cloth_subframe's cage (max distance growing toward the hem, a sphere in it) on a
    figure-eight sampled at RATE, with (the drive) and without (the plain one) the reference
    sampled at its frames."""
    model, rest = _model()
    frames = int(round(SECONDS * fps)) + 1
    samples = int(np.ceil((frames - 1) / fps * RATE - 1e-9)) + 1
    plain = _drive(model, rest, np.arange(samples) / RATE, peak_g, fps=RATE, output_fps=fps,
                   output_frames=frames)
    exact = rest.rest_positions[None] + _figure_eight(np.arange(frames) / fps, peak_g)[:, None]
    return model, rest, plain, replace(plain, output_reference=exact)


@pytest.mark.parametrize("fps", [25, 50])
def test_frames_between_samples_hold_the_pins_and_the_max_distance_to_the_frame(fps):
    model, rest, plain, drive = _figure_eight_drive(fps)
    exact = drive.output_reference
    interpolated = np.stack([interpolate(plain.reference, *frame_interval(i / fps, RATE,
                                                                          plain.frames))
                             for i in range(len(exact))])
    assert np.abs(interpolated - exact).max() > 1e-4  # the samples' chord is off the frame
    x = bake_cloth(model, drive).positions
    assert np.abs(x - x[0]).max() > 0.1  # it really moves
    np.testing.assert_array_equal(x[:, model.pinned], exact[:, model.pinned])
    scale = float(ClothParams.defaults(1).edge_max_distance_scale.reshape(-1)[0])
    limit = rest.max_distance * np.where(model.edge_vertex, scale, 1.0)
    free = ~model.pinned
    past = np.linalg.norm(x - exact, axis=-1)[:, free] - limit[free]
    assert past.max() <= 1e-9
    rows = np.arange(48).reshape(8, 6)  # the hard vertical links stay at length
    vertical = np.linalg.norm(x[:, rows[1:]] - x[:, rows[:-1]], axis=-1)
    assert np.abs(vertical / (1.0 / 7.0) - 1.0).max() < 5e-3


@pytest.mark.parametrize("fps", [24, 30, 60])
def test_frames_on_the_samples_bake_bit_for_bit_with_or_without_it(fps):
    model, _, plain, _ = _figure_eight_drive(fps)
    on = [frame_interval(i / fps, RATE, plain.frames) for i in range(plain.output_frames)]
    assert not any(between_samples(a, RATE) for _, a in on)  # every frame is a sample
    drive = replace(plain, output_reference=plain.reference[[f + round(a) for f, a in on]])
    before, after = bake_cloth(model, plain), bake_cloth(model, drive)
    np.testing.assert_array_equal(after.positions, before.positions)
    np.testing.assert_array_equal(after.contact, before.contact)
    np.testing.assert_array_equal(after.cuts, before.cuts)


def _exact_scene(output_fps: float):
    """test_cloth_stream's scene (colliders, a cut, wind, back stop) with its reference also
    sampled at the output frames (its formula at the frames' times)."""
    model, drive = _scene(0, output_fps=output_fps)
    t = np.arange(drive.output_frames) / output_fps
    exact = np.repeat(model.rest_positions[None], len(t), 0).copy()
    exact[:, :, 0] += (0.4 * np.sin(9 * t))[:, None]
    exact[t >= int(0.35 * RATE) / RATE, :, 1] += 1.5
    return model, replace(drive, output_reference=exact)


def test_a_stream_fed_it_row_by_row_gives_the_bake_bit_for_bit():
    model, drive = _exact_scene(25.0)
    settings = core.SolverSettings(preroll_frames=3)
    baked = bake_cloth(model, drive, settings)
    assert baked.cuts.any()
    exact = drive.output_reference
    stream = ClothStream(model, _held(drive, 1), settings, known=1)
    frames = []
    for i in range(stream.output_frames):
        need = stream.needed(i)
        if stream.known < need:
            # The frames read with the samples (the add-on reads them in time order).
            done = int(np.searchsorted(np.arange(len(exact)) / 25.0, (need - 1) / RATE,
                                       side="right"))
            rows = replace(_rows(drive, stream.known, need),
                           output_reference=exact[stream.output_known:done])
            stream.feed_rows(rows)
        frames.append(stream.step().copy())
    np.testing.assert_array_equal(np.stack(frames), baked.positions)
    np.testing.assert_array_equal(stream.result().cuts, baked.cuts)
    # Without it the frames between samples differ: the test can fail.
    plain = bake_cloth(model, replace(drive, output_reference=None), settings)
    assert np.abs(plain.positions - baked.positions).max() > 1e-6


def test_a_stream_refuses_a_frame_whose_reference_is_not_fed():
    model, drive = _exact_scene(25.0)
    stream = ClothStream(model, _held(drive, 2), known=2)
    stream.step()
    need = stream.needed(1)
    stream.feed_rows(replace(_rows(drive, stream.known, need),
                             output_reference=drive.output_reference[1:1]))
    with pytest.raises(ValueError, match="needs its output_reference"):
        stream.step()
    with pytest.raises(ValueError, match="output_reference rows exactly"):
        stream.feed_rows(replace(_rows(drive, stream.known, stream.known + 1),
                                 output_reference=None))


def test_a_wrong_or_non_finite_output_reference_is_a_setup_error():
    model, drive = _exact_scene(25.0)
    with pytest.raises(SetupError, match="output_reference has shape"):
        bake_cloth(model, replace(drive, output_reference=drive.output_reference[1:]))
    bad = drive.output_reference.copy()
    bad[3, 5, 0] = np.nan
    with pytest.raises(SetupError, match="vertex 5 at output frame 3 is not finite"):
        bake_cloth(model, replace(drive, output_reference=bad))
