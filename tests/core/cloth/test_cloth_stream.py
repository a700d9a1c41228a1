"""A cloth bake fed its samples as they are read (`core.cloth.ClothStream`, what a live preview
steps as the timeline plays) gives the bake's frames bit for bit: nothing a substep reads may
depend on samples after it, whatever the scene holds (moving colliders with friction, an
ellipsoid that stops being a sphere, an animation cut, the back stop, turbulent wind,
animated damping, a sub-frame sample grid, a body mesh)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from waft import core
from waft.core._bench_meshes import uv_sphere
from waft.core.cloth import ClothStream, bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest
from waft.core.mesh_colliders import MeshColliders

from .conftest import still_drive

RATE = 120.0  # samples per second


def _held(drive, known: int):
    """`drive` with every sample from `known` on replaced by sample `known - 1`: placeholders
    the stream must never read."""

    def hold(a):
        a = np.array(a, copy=True)
        if a.ndim and a.shape[0] == drive.frames and a.shape[0] > 1:
            a[known:] = a[known - 1]
        return a

    params = replace(drive.params, **{name: hold(getattr(drive.params, name))
                                      for name in drive.params.__dataclass_fields__})
    meshes = drive.meshes
    if meshes is not None:
        meshes = replace(meshes, vertices=tuple(hold(v) for v in meshes.vertices))
    return replace(drive, reference=hold(drive.reference), space=hold(drive.space),
                   collider_matrix=hold(drive.collider_matrix), params=params, meshes=meshes)


def _streamed(model, drive, settings=None, *, short: int = 0):
    stream = ClothStream(model, _held(drive, 1), settings, known=1)
    frames = []
    for i in range(stream.output_frames):
        need = stream.needed(i)
        if stream.known < need:
            stream.feed(_held(drive, need - short), need - short)
            stream._bake.known = need if short else stream._bake.known  # force past the check
        frames.append(stream.step().copy())
    return np.stack(frames), stream


def _rows(drive, lo: int, hi: int):
    """The drive of samples lo..hi-1 alone (what the preview hands `feed_rows`)."""

    def cut(a):
        a = np.asarray(a)
        return a[lo:hi] if a.ndim and a.shape[0] == drive.frames and drive.frames > 1 else a

    params = replace(drive.params, **{name: cut(getattr(drive.params, name))
                                      for name in drive.params.__dataclass_fields__})
    meshes = drive.meshes
    if meshes is not None:
        meshes = replace(meshes, vertices=tuple(v[lo:hi] for v in meshes.vertices))
    return replace(drive, reference=cut(drive.reference), space=cut(drive.space),
                   collider_matrix=cut(drive.collider_matrix), params=params, meshes=meshes,
                   output_fps=None, output_frames=None)


def _streamed_rows(model, drive, settings=None) -> np.ndarray:
    stream = ClothStream(model, _held(drive, 1), settings, known=1)
    frames = []
    for i in range(stream.output_frames):
        need = stream.needed(i)
        if stream.known < need:
            stream.feed_rows(_rows(drive, stream.known, need))
        frames.append(stream.step().copy())
    return np.stack(frames)


def _scene(kind: int, *, output_fps: float, seconds: float = 0.5, mesh: bool = False):
    F = int(round(seconds * RATE)) + 1
    t = np.arange(F) / RATE
    colliders = core.ColliderSet.create(names=["C"], kind=[kind], size=[0.15],
                                        radius_a=[0.05], radius_b=[0.05], friction=[0.4])
    model = build_cloth_model(cloths=[grid_rest(8, 8, max_distance=0.3)], colliders=colliders)
    M = np.tile(np.eye(4), (F, 1, 1, 1))
    M[:, 0, :3, 3] = np.stack([0.5 + 0.2 * np.sin(5 * t), 0.1 + 0.3 * t, -0.6 + 0 * t], -1)
    M[:, 0, 0, 0] = np.where(t > 0.25, 1.3, 1.0)  # an ellipsoid from a sphere, half way
    reference = np.repeat(model.rest_positions[None], F, 0).copy()
    reference[:, :, 0] += (0.4 * np.sin(9 * t))[:, None]  # fast sway (several g)
    reference[int(0.35 * RATE):, :, 1] += 1.5  # an animation cut
    drive = still_drive(model, F, fps=RATE, reference=reference, collider_matrix=M,
                        radius=0.02, backstop_distance=0.05, wind_velocity=(0.0, 3.0, 0.0),
                        wind_turbulence=0.5, drag=1.0,
                        damping=np.where(t < 0.2, 0.5, 3.0)[:, None])
    if mesh:
        vertices, tris = uv_sphere(0.12, 12, 24)
        centre = np.stack([0.3 + 0.1 * np.cos(7 * t), 0.05 + 0 * t, -0.4 + 0 * t], -1)
        drive = replace(drive, meshes=MeshColliders.create(
            names=["Body"], triangles=[tris], vertices=[vertices[None] + centre[:, None]],
            friction=[0.3]))
    frames = int(round(seconds * output_fps)) + 1
    return model, replace(drive, output_fps=output_fps, output_frames=frames)


@pytest.mark.parametrize("kind", [0, 1, 2, 3])
@pytest.mark.parametrize("output_fps", [24.0, 25.0, 60.0])
def test_stream_gives_the_bake_bit_for_bit(kind, output_fps):
    model, drive = _scene(kind, output_fps=output_fps)
    settings = core.SolverSettings(preroll_frames=3)
    baked = bake_cloth(model, drive, settings)
    streamed, stream = _streamed(model, drive, settings)
    assert np.abs(baked.positions - baked.positions[:1]).max() > 0.1  # it moved (and cut)
    assert baked.cuts.any() and baked.contact.any()
    np.testing.assert_array_equal(streamed, baked.positions)
    np.testing.assert_array_equal(_streamed_rows(model, drive, settings), baked.positions)
    result = stream.result()
    np.testing.assert_array_equal(result.positions, baked.positions)
    np.testing.assert_array_equal(result.contact, baked.contact)
    np.testing.assert_array_equal(result.cuts, baked.cuts)


def test_stream_with_a_body_mesh_gives_the_bake_bit_for_bit():
    model, drive = _scene(0, output_fps=24.0, seconds=0.3, mesh=True)
    streamed, _ = _streamed(model, drive)
    baked = bake_cloth(model, drive).positions
    np.testing.assert_array_equal(streamed, baked)
    np.testing.assert_array_equal(_streamed_rows(model, drive), baked)


def _deforming_body(radius: float, centre: np.ndarray, t: np.ndarray) -> MeshColliders:
    """A sphere turning and swelling unevenly between samples (its pseudo-normals change from
    one sample to the next; a rigidly carried one's do not, so it could not show a stale or
    held sample's normals)."""
    vertices, tris = uv_sphere(radius, 12, 24)
    c, s = np.cos(3.0 * t), np.sin(3.0 * t)
    turn = np.zeros((len(t), 3, 3))
    turn[:, 0, 0], turn[:, 0, 1], turn[:, 1, 0], turn[:, 1, 1], turn[:, 2, 2] = c, -s, s, c, 1.0
    scale = np.stack([1 + 0.4 * np.sin(11 * t), 1 - 0.3 * np.sin(11 * t),
                      1 + 0.3 * np.cos(8 * t)], -1)
    V = np.einsum("fij,vj->fvi", turn, vertices) * scale[:, None, :] + centre[:, None]
    return MeshColliders.create(names=["Body"], triangles=[tris], vertices=[V], friction=[0.3])


def _streamed_in_chunks(model, drive, settings, chunk: int) -> np.ndarray:
    """Fed `chunk` samples at a time (as many chunks as the next frame needs)."""
    stream = ClothStream(model, _held(drive, 1), settings, known=1)
    frames = []
    for i in range(stream.output_frames):
        need = stream.needed(i)
        if stream.known < need:
            known = min(stream.known + chunk * -(-(need - stream.known) // chunk), drive.frames)
            stream.feed(_held(drive, known), known)
        frames.append(stream.step().copy())
    return np.stack(frames)


@pytest.mark.parametrize(("output_fps", "preroll"), [(24.0, 3), (50.0, 3), (60.0, 0)])
def test_stream_with_a_deforming_body_mesh_gives_the_bake_bit_for_bit(output_fps, preroll):
    """Issue 13: a body that turns and swells between samples, fed one sample at a time, two,
    or as the frames need them, gives the bake's frames bit for bit. The pre-roll once held
    the mesh at n h (playing its first frames while the drive stood at frame 0): fed one
    sample at a time, the stream read held samples and parted from the bake. (`_streamed` feeds
    each frame's samples as it needs them, which is what chunks of one sample do: their
    `known` is min(known + 1 * (need - known), F) = need, the same feeds, so only chunks of two
    and three are added.)"""
    model, drive = _scene(0, output_fps=output_fps, mesh=True)
    t = np.arange(drive.frames) / RATE
    centre = np.stack([0.3 + 0.1 * np.cos(7 * t), 0.05 + 0 * t, -0.4 + 0 * t], -1)
    drive = replace(drive, meshes=_deforming_body(0.12, centre, t))
    settings = core.SolverSettings(preroll_frames=preroll)
    baked = bake_cloth(model, drive, settings)
    assert baked.contact.any()
    np.testing.assert_array_equal(_streamed(model, drive, settings)[0], baked.positions)
    for chunk in (2, 3):
        np.testing.assert_array_equal(_streamed_in_chunks(model, drive, settings, chunk),
                                      baked.positions)


def test_one_sample_too_few_would_show():
    """The test can fail: fed one sample short of `needed` (forced past the check), frames
    part from the bake."""
    model, drive = _scene(0, output_fps=24.0)
    streamed, _ = _streamed(model, drive, short=1)
    assert np.abs(streamed - bake_cloth(model, drive).positions).max() > 1e-4


def test_stream_refuses_a_frame_whose_samples_are_not_read():
    model, drive = _scene(0, output_fps=24.0, seconds=0.25)
    stream = ClothStream(model, _held(drive, 2), known=2)
    stream.step()
    with pytest.raises(ValueError, match="needs .* samples, 2 are read"):
        stream.step()
