"""A bake fed its samples as they are read (`core.strands.solver.Stream`, what the live preview
steps as the timeline plays) gives the bake's frames bit for bit: nothing a substep reads may
depend on samples after it, whatever the scene holds (moving colliders with friction, animated
settings, an animation cut, sub-frame samples, a body mesh)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from waft import core
from waft.core._bench_meshes import uv_sphere
from waft.core.mesh_colliders import MeshColliders
from waft.core.strands.solver import Stream


def _held(drive, known: int):
    """`drive` with every sample from `known` on replaced by sample `known - 1` (what the
    preview has before reading them): placeholders the stream must never read."""

    def hold(a):
        a = np.array(a, copy=True)
        if a.ndim and a.shape[0] == drive.frames and a.shape[0] > 1:
            a[known:] = a[known - 1]
        return a

    params = replace(drive.params, **{name: hold(getattr(drive.params, name))
                                      for name in drive.params.__dataclass_fields__
                                      if getattr(drive.params, name) is not None})
    meshes = drive.meshes
    if meshes is not None:
        meshes = replace(meshes, vertices=[hold(v) for v in meshes.vertices])
    return replace(drive, reference=hold(drive.reference), space=hold(drive.space),
                   collider_matrix=hold(drive.collider_matrix), params=params, meshes=meshes)


def _streamed(model, drive, settings=None) -> np.ndarray:
    stream = Stream(model, _held(drive, 1), settings, known=1)
    frames = []
    for i in range(stream.output_frames):
        need = stream.needed(i)
        if stream.known < need:
            stream.feed(_held(drive, need), need)
        frames.append(stream.step().copy())
    return np.stack(frames)


def _rows(drive, lo: int, hi: int):
    """The drive of samples lo..hi-1 alone (what the preview hands `feed_rows`)."""

    def cut(a):
        a = np.asarray(a)
        return a[lo:hi] if a.ndim and a.shape[0] == drive.frames and drive.frames > 1 else a

    params = replace(drive.params, **{name: cut(getattr(drive.params, name))
                                      for name in drive.params.__dataclass_fields__
                                      if getattr(drive.params, name) is not None})
    meshes = drive.meshes
    if meshes is not None:
        meshes = replace(meshes, vertices=tuple(v[lo:hi] for v in meshes.vertices))
    return replace(drive, reference=cut(drive.reference), space=cut(drive.space),
                   collider_matrix=cut(drive.collider_matrix), params=params, meshes=meshes,
                   output_fps=None, output_frames=None)


def _streamed_rows(model, drive, settings=None) -> np.ndarray:
    stream = Stream(model, _held(drive, 1), settings, known=1)
    frames = []
    for i in range(stream.output_frames):
        need = stream.needed(i)
        if stream.known < need:
            stream.feed_rows(_rows(drive, stream.known, need))
        frames.append(stream.step().copy())
    return np.stack(frames)


def _scene(rig, *, sample_fps: float, output_fps: float, seconds: float = 1.0, mesh=False):
    frames = int(round(seconds * sample_fps)) + 1
    t = np.arange(frames) / sample_fps
    rest = rig.vertical_chain(bones=8, length=0.04, top=(0.0, 0.0, 0.5))
    colliders = core.ColliderSet.create(names=["Ball", "Floor"], kind=[0, 3], size=[0.08, 1.0],
                                        friction=[0.4, 0.2])
    M = np.tile(np.eye(4), (frames, 2, 1, 1))
    M[:, 0, :3, 3] = np.stack([0.1 * np.sin(6 * t), 0.05 + 0 * t, 0.3 - 0.1 * t], -1)
    M[:, 1, 2, 3] = 0.05

    def sway(time):  # fast (several g) with a 2 m teleport half way
        jump = np.where(time >= 0.5, 2.0, 0.0)
        return np.stack([0.15 * np.sin(14 * time) + jump, 0.1 * np.cos(9 * time), 0 * time], -1)

    damping = np.where(t[:, None, None] < 0.4, 0.5, 2.0) * np.ones((1, 2, 9))
    model, drive = rig.build([rest, rest + (0.2, 0.0, 0.0)], frames=frames, fps=sample_fps,
                             root_motion=sway, colliders=colliders, collider_matrix=M,
                             radius=0.01, shape_stiffness=0.1, damping=damping,
                             shock_propagation=0.3)
    if mesh:
        vertices, tris = uv_sphere(0.07, 12, 24)
        centre = np.stack([0.05 * np.cos(5 * t), 0.0 * t, 0.25 + 0 * t], -1)
        meshes = MeshColliders.create(names=["Body"], triangles=[tris],
                                      vertices=[vertices[None] + centre[:, None]],
                                      friction=[0.3])
        drive = replace(drive, meshes=meshes)
    output = int(round(seconds * output_fps)) + 1
    return model, replace(drive, output_fps=output_fps, output_frames=output)


@pytest.mark.parametrize(("sample_fps", "output_fps"), [(24.0, 24.0), (120.0, 24.0),
                                                         (120.0, 25.0), (120.0, 60.0)])
def test_stream_gives_the_bake_bit_for_bit(rig, sample_fps, output_fps):
    model, drive = _scene(rig, sample_fps=sample_fps, output_fps=output_fps)
    settings = core.SolverSettings(preroll_frames=6)
    baked = core.bake(model, drive, settings).positions
    streamed = _streamed(model, drive, settings)
    assert np.all(np.isfinite(baked))
    assert np.abs(baked - baked[:1]).max() > 0.1  # the chains did move (and jumped)
    np.testing.assert_array_equal(streamed, baked)
    np.testing.assert_array_equal(_streamed_rows(model, drive, settings), baked)


def test_stream_with_a_body_mesh_gives_the_bake_bit_for_bit(rig):
    model, drive = _scene(rig, sample_fps=120.0, output_fps=24.0, seconds=0.5, mesh=True)
    baked = core.bake(model, drive).positions
    np.testing.assert_array_equal(_streamed(model, drive), baked)
    np.testing.assert_array_equal(_streamed_rows(model, drive), baked)


@pytest.mark.parametrize(("sample_fps", "output_fps"), [(24.0, 24.0), (120.0, 25.0)])
def test_stream_with_a_deforming_body_mesh_gives_the_bake_bit_for_bit(rig, sample_fps,
                                                                       output_fps):
    """Issue 13: a body that turns and swells unevenly between samples (its pseudo-normals
    change; a rigidly carried one's do not) fed one, two or three samples at a time, with a
    pre-roll, gives the bake's frames bit for bit: no cache of the body mesh holds a held
    sample's values."""
    model, drive = _scene(rig, sample_fps=sample_fps, output_fps=output_fps, seconds=0.5,
                          mesh=True)
    t = np.arange(drive.frames) / sample_fps
    vertices, tris = uv_sphere(0.07, 12, 24)
    c, s = np.cos(3.0 * t), np.sin(3.0 * t)
    turn = np.zeros((len(t), 3, 3))
    turn[:, 0, 0], turn[:, 0, 1], turn[:, 1, 0], turn[:, 1, 1], turn[:, 2, 2] = c, -s, s, c, 1.0
    scale = np.stack([1 + 0.4 * np.sin(11 * t), 1 - 0.3 * np.sin(11 * t),
                      1 + 0.3 * np.cos(8 * t)], -1)
    # Beside the first chain as its root sways (`_scene`'s sway), overlapping it.
    centre = np.stack([0.15 * np.sin(14 * t) + 0.06, 0.1 * np.cos(9 * t), 0.3 + 0 * t], -1)
    V = np.einsum("fij,vj->fvi", turn, vertices) * scale[:, None, :] + centre[:, None]
    drive = replace(drive, meshes=MeshColliders.create(names=["Body"], triangles=[tris],
                                                       vertices=[V], friction=[0.3]))
    settings = core.SolverSettings(preroll_frames=4)
    baked = core.bake(model, drive, settings).positions
    plain = core.bake(model, replace(drive, meshes=None), settings).positions
    assert np.abs(baked - plain).max() > 1e-3  # the body does push the chains
    np.testing.assert_array_equal(_streamed(model, drive, settings), baked)
    for chunk in (1, 2, 3):
        stream = Stream(model, _held(drive, 1), settings, known=1)
        frames = []
        for i in range(stream.output_frames):
            need = stream.needed(i)
            if stream.known < need:
                known = min(stream.known + chunk * -(-(need - stream.known) // chunk),
                            drive.frames)
                stream.feed(_held(drive, known), known)
            frames.append(stream.step().copy())
        np.testing.assert_array_equal(np.stack(frames), baked)


def test_stream_refuses_a_frame_whose_samples_are_not_read(rig):
    model, drive = _scene(rig, sample_fps=120.0, output_fps=24.0, seconds=0.25)
    stream = Stream(model, _held(drive, 2), known=2)
    stream.step()  # frame 0 needs samples 0 and 1
    with pytest.raises(ValueError, match="needs 7 samples, 2 are read"):
        stream.step()


def test_a_finished_stream_gives_the_bakes_result(rig):
    model, drive = _scene(rig, sample_fps=120.0, output_fps=24.0, seconds=0.25)
    settings = core.SolverSettings(preroll_frames=3)
    stream = Stream(model, drive, settings, known=drive.frames)
    stream.step()
    with pytest.raises(ValueError, match="1 of 7 frames are solved"):
        stream.result()
    while stream.frames_done < stream.output_frames:
        stream.step()
    baked = core.bake(model, drive, settings)
    result = stream.result()
    np.testing.assert_array_equal(result.positions, baked.positions)
    assert result.substeps == baked.substeps


def test_rows_must_follow_the_samples_read(rig):
    model, drive = _scene(rig, sample_fps=120.0, output_fps=24.0, seconds=0.25)
    stream = Stream(model, _held(drive, 2), known=2)
    with pytest.raises(ValueError, match="start at sample 3, 2 are read"):
        stream._bake.update_rows(stream._bake.drive, 3)
    stream.feed_rows(_rows(drive, 2, 5))
    assert stream.known == 5


def test_identical_is_bitwise():
    from waft.core.identical import identical

    a = np.array([0.0, np.nan, 1.0])
    assert identical(a, a.copy())
    assert not identical(a, np.array([-0.0, np.nan, 1.0]))  # the sign of zero counts
    assert not identical(a, a.astype(np.float32))
    assert not identical(a, a[None])
    assert not identical(a, np.array([0.0, np.nan, np.nextafter(1.0, 2.0)]))  # one ulp
    settings = core.SolverSettings(preroll_frames=3)
    assert identical(settings, core.SolverSettings(preroll_frames=3))
    assert not identical(settings, core.SolverSettings(preroll_frames=4))
    assert identical({"k": [a, (1, 2.0)]}, {"k": [a.copy(), (1, 2.0)]})
    assert not identical({"k": [a, (1, 2.0)]}, {"k": [a, (1, 2.5)]})
    assert not identical(None, a) and identical(None, None)


@pytest.mark.parametrize("particles", [9, 10])
def test_a_reference_in_the_solvers_own_layout_bakes_the_same_without_a_copy(rig, particles):
    """A drive whose reference is a view of the solver's component-major layout
    (`component_major_reference`, what the add-on's bake fills block by block) gives the
    bake's frames bit for bit; the solver fills its padding columns in place (9 particles are
    padded to 10, 10 to 14), so nothing the caller sees changes."""
    from waft.core.strands import solver

    model, drive = _scene(rig, sample_fps=120.0, output_fps=24.0, seconds=0.5)
    if particles == 10:  # a ninth bone: chains of 10 particles
        rest = rig.vertical_chain(bones=9, length=0.04, top=(0.0, 0.0, 0.5))
        model, plain = rig.build([rest, rest + (0.2, 0.0, 0.0)], frames=drive.frames,
                                 fps=drive.fps, radius=0.01, shape_stiffness=0.1)
        drive = replace(plain, output_fps=24.0, output_frames=drive.output_frames)
    assert drive.reference.shape[2] == particles
    baked = core.bake(model, drive).positions
    view = solver.component_major_reference(*drive.reference.shape[:3])
    view[...] = drive.reference
    held = view.copy()
    job = solver.bake_steps(model, replace(drive, reference=view))
    # The bake's component-major reference is the caller's memory, not a copy of it.
    assert view.base is job._runner.reference_soa
    for _ in job:
        pass
    np.testing.assert_array_equal(job.result.positions, baked)
    np.testing.assert_array_equal(view, held)
