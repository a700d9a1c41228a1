"""Cloth inputs sampled on a fixed grid in seconds (`ClothDrive.fps` = the sample rate,
`output_fps` = the scene's frame rate, what the add-on passes): fast motion bakes alike at 24,
25, 30, 50 and 60 fps with every constraint on at once (hard vertical links, max distance, a
collider in the way)."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core import ColliderKind, ColliderSet, SetupError
from waft.core.cloth import ClothDrive, ClothParams, ClothRest, bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest

RATE = 240.0
OMEGA = 2 * np.pi * 1.5  # a 1.5 Hz figure-eight
SECONDS = 2.0
FPS = (24, 25, 30, 50, 60)


def _figure_eight(t: np.ndarray, peak_g: float) -> np.ndarray:
    amplitude = peak_g * 9.81 / OMEGA**2  # the x motion's peak acceleration is A w^2
    return np.stack([amplitude * np.sin(OMEGA * t), 0.0 * t,
                     0.5 * amplitude * np.sin(2 * OMEGA * t)], axis=-1)


def _model():
    rest = grid_rest(8, 6)
    limit = np.linspace(0.0, 0.3, 8).repeat(6)  # max distance grows toward the hem
    rest = ClothRest(rest.setup, rest.rest_positions, rest.quads, rest.pinned, limit)
    colliders = ColliderSet.create(names=["Leg"], kind=[ColliderKind.ELLIPSOID], size=[1.0],
                                   friction=[0.3])
    return build_cloth_model(cloths=[rest], colliders=colliders), rest


def _drive(model, rest, times: np.ndarray, peak_g: float, **kw) -> ClothDrive:
    F = times.size
    offset = _figure_eight(times, peak_g)
    reference = rest.rest_positions[None] + offset[:, None]
    space = np.repeat(np.eye(4)[None, None], F, axis=0)
    space[:, 0, :3, 3] = offset
    leg = np.repeat(np.eye(4)[None, None], F, axis=0)
    leg[:, 0, :3, :3] *= 0.1
    centre = rest.rest_positions.mean(axis=0) + (0.0, 0.06, -0.2)
    leg[:, 0, :3, 3] = centre + offset  # a 10 cm sphere in the cloth, moving with it
    params = ClothParams.defaults(1, world_motion_fraction=0.3, damping=1.0)
    return ClothDrive(fps=kw.pop("fps"), reference=reference, space=space,
                      collider_matrix=leg, params=params, **kw)


def _bake(fps: float, peak_g: float, *, sampled: bool = True) -> np.ndarray:
    model, rest = _model()
    frames = int(round(SECONDS * fps)) + 1
    if sampled:
        samples = int(np.ceil((frames - 1) / fps * RATE - 1e-9)) + 1
        drive = _drive(model, rest, np.arange(samples) / RATE, peak_g, fps=RATE,
                       output_fps=fps, output_frames=frames)
    else:
        drive = _drive(model, rest, np.arange(frames) / fps, peak_g, fps=fps)
    positions = bake_cloth(model, drive).positions
    assert positions.shape[0] == frames
    return positions


def _gap(bakes: dict) -> float:
    """Largest vertex distance (m) to the 24 fps bake at the whole and half seconds every rate
    shares (25 fps: whole seconds only)."""
    worst = 0.0
    for fps, x in bakes.items():
        times = np.arange(0.0, SECONDS + 1e-9, 1.0 if fps == 25 else 0.5)
        ours = x[np.round(times * fps).astype(int)]
        base = bakes[24][np.round(times * 24).astype(int)]
        worst = max(worst, float(np.linalg.norm(ours - base, axis=-1).max()))
    return worst


@pytest.mark.parametrize("peak_g", [1.0, 5.0])
def test_fast_motion_bakes_alike_at_every_frame_rate(peak_g):
    bakes = {fps: _bake(fps, peak_g) for fps in FPS}
    assert _gap(bakes) < 1e-3


def test_inputs_sampled_once_per_frame_do_not():
    """The control: the same motion read once per frame (linear in between) is a different,
    jerky motion at every frame rate."""
    assert _gap({fps: _bake(fps, 5.0, sampled=False) for fps in (24, 60)}) > 0.01


def test_output_at_the_sample_rate_is_the_plain_bake():
    model, rest = _model()
    times = np.arange(25) / 24.0
    plain = bake_cloth(model, _drive(model, rest, times, 2.0, fps=24.0)).positions
    same = bake_cloth(model, _drive(model, rest, times, 2.0, fps=24.0, output_fps=24.0,
                                    output_frames=25)).positions
    assert np.array_equal(plain, same)


def _moved(offset):
    """(reference, result) of the cloth whose reference moves by `offset(times)` (m, along X)
    over 1 s of 240 Hz samples, output at 24 fps with no cut blend."""
    model, rest = _model()
    times = np.arange(int(RATE) + 1) / RATE  # 1 s
    drive = _drive(model, rest, times, 0.0, fps=RATE, output_fps=24.0, output_frames=25)
    reference = drive.reference.copy()
    reference[:, :, 0] += offset(times)[:, None]
    params = ClothParams.defaults(1, world_motion_fraction=0.3, damping=1.0, cut_blend_frames=0)
    drive = ClothDrive(fps=RATE, reference=reference, space=drive.space,
                       collider_matrix=drive.collider_matrix, params=params,
                       output_fps=24.0, output_frames=25)
    return reference, bake_cloth(model, drive)


def test_a_cut_between_sub_frame_samples_restarts_at_the_next_frame():
    """A 2 m teleport between two 240 Hz samples inside scene frame 5's interval: the cut is
    reported at frame 5 and the cloth is on its new reference there (cut blend 0)."""
    jump = int(4.5 / 24.0 * RATE)  # between frames 4 and 5
    reference, result = _moved(lambda t: 2.0 * (np.arange(len(t)) >= jump))
    assert np.flatnonzero(result.cuts[:, 0]).tolist() == [5]
    new_reference = reference[round(5 / 24.0 * RATE)]
    assert np.linalg.norm(result.positions[5] - new_reference, axis=-1).max() < 1e-9
    assert np.linalg.norm(result.positions[4] - reference[0], axis=-1).max() < 0.5


def test_a_teleport_keyed_over_one_frame_is_a_cut():
    """A 2 m jump keyed Linear from frame 4 to frame 5, read at 10 samples a frame: 0.2 m a
    sample, far under the 1 m Cut Threshold, which the setting (and its tooltip) means per
    frame. It was no cut and whipped the cloth 0.7 m; now frame 5 is a cut and the cloth is
    on its new reference there (cut blend 0)."""
    reference, result = _moved(lambda t: 2.0 * np.clip((t - 4.0 / 24.0) * 24.0, 0.0, 1.0))
    assert np.flatnonzero(result.cuts[:, 0]).tolist() == [5]
    assert np.linalg.norm(result.positions[5] - reference[round(5 / 24.0 * RATE)],
                          axis=-1).max() < 1e-9


def test_more_output_frames_than_the_samples_cover_is_an_error():
    model, rest = _model()
    drive = _drive(model, rest, np.arange(11) / RATE, 1.0, fps=RATE, output_fps=24.0,
                   output_frames=3)
    with pytest.raises(SetupError, match="output_frames"):
        bake_cloth(model, drive)
