"""A bone-chain bake reads the scene a block of samples at a time and lets each block go once it
is the solver's input (a long shot held every read bone at every sample beside the drive: the
peak memory of a 512-bone, 5,000-frame bake). The input made block by block is the one made
from every sample at once, bit for bit: many blocks, a block of one sample at the end,
sub-frame samples, animated settings, a Space Bone, a moving mesh collider, one armature (its
chains share one space) and two."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

pytestmark = pytest.mark.compat


def _scene(scene, *, armatures: int):
    scene.render.fps, scene.frame_start, scene.frame_end = 24, 1, 33
    scene.waft.sample_rate = 120.0
    rig = rigs.chain_rig(scene, "Tail", count=5, length=0.2)
    root = rig.pose.bones[rigs.ROOT]
    for frame in range(1, 34, 4):
        root.location = (0.3 * np.sin(0.5 * frame), 0.1 * np.cos(0.3 * frame), 0.0)
        root.keyframe_insert("location", frame=frame)
    rig.waft.damping = 0.5
    rig.waft.keyframe_insert("damping", frame=1)
    rig.waft.damping = 3.0
    rig.waft.keyframe_insert("damping", frame=30)
    first = rig.pose.bones["Hair.001"]
    first.waft.use_overrides = True
    first.waft.shape_stiffness = 0.1
    path = 'pose.bones["Hair.001"].waft.shape_stiffness'
    rig.keyframe_insert(path, frame=1)
    first.waft.shape_stiffness = 0.6
    rig.keyframe_insert(path, frame=20)
    ball = rigs.mesh_sphere(scene, "Ball", (0.2, 0.0, 1.3), 0.15, segments=16, rings=8)
    ball.keyframe_insert("location", frame=1)
    ball.location = (-0.2, 0.1, 1.2)
    ball.keyframe_insert("location", frame=33)
    rigs.sphere_collider(scene, "Sphere", (0.0, 0.3, 1.6), 0.1)
    if armatures > 1:
        other = rigs.chain_rig(scene, "Ears", count=3, length=0.1, start=(1.0, 0.0, 1.8),
                               prefix="Ear")
        other.location = (0.5, 0.0, 0.0)
        other.keyframe_insert("location", frame=1)
        other.location = (0.9, 0.2, 0.0)
        other.keyframe_insert("location", frame=33)
        other.waft.space_bone = rigs.ROOT
        other.pose.bones[rigs.ROOT].location = (0.0, 0.0, 0.0)
        other.pose.bones[rigs.ROOT].keyframe_insert("location", frame=1)
        other.pose.bones[rigs.ROOT].location = (0.1, 0.0, 0.1)
        other.pose.bones[rigs.ROOT].keyframe_insert("location", frame=33)


@pytest.mark.parametrize(("armatures", "rate"), [(1, 120.0), (2, 120.0), (1, 0.0), (2, 2.0),
                                                (1, 480.0)])
def test_the_input_read_in_blocks_is_the_input_of_every_sample(scene, waft_module_name,
                                                                 armatures, rate):
    """Sub-frame samples (120 Hz), the scene frames (0), a grid coarser than a block (2 Hz
    at 24 fps: one grid sample per 12 frames, blocks of 7), and scene frames further apart than
    a block (480 Hz: 20 samples a frame; such a block raised a ValueError from deep in the
    sampler, as 24 fps at an 8,000 Hz Sample Rate did with the bake's blocks of 256)."""
    _scene(scene, armatures=armatures)
    scene.waft.sample_rate = rate
    module = waft_module_name
    system = importlib.import_module(f"{module}.addon.strands.system")
    reading = importlib.import_module(f"{module}.addon.strands.reading")
    sampling = importlib.import_module(f"{module}.addon.sampling")
    strand_sampling = importlib.import_module(f"{module}.addon.strands.sampling")
    assemble = importlib.import_module(f"{module}.addon.strands.assemble")
    progress = importlib.import_module(f"{module}.addon.progress")
    identical = importlib.import_module(f"{module}.core.identical").identical

    read = reading.read_scene(scene)
    times, on_grid, at_frames = sampling.sample_times(read.frame_start, read.frame_end,
                                                      read.fps, rate)
    assert len(at_frames) == 33 and len(times) == {120.0: 161, 0.0: 33, 2.0: 34, 480.0: 641}[rate]
    rate = rate if rate > 0.0 else None
    frame = scene.frame_current
    # Every sample at once (what the bake did before).
    samples = progress.run_to_end(sampling.sample_steps(
        scene, strand_sampling.Sampler(scene, read, times), chunk=1 << 30,
        muted=sampling.waft_tracks_muted(s.object for s in read.setups)))
    everything = assemble.solver_input(read, samples.take(on_grid), rate=rate)
    frames = assemble.chain_frames(read, samples.take(at_frames))[0] if rate else \
        everything.frames
    # Blocks of 7 samples read 3 at a time: 23 blocks, the last of one sample.
    original = system.SAMPLE_BLOCK
    system.SAMPLE_BLOCK = 7
    try:
        blocks = progress.run_to_end(system.sampled_input(scene, read, times, on_grid,
                                                          at_frames, rate=rate, chunk=3))
    finally:
        system.SAMPLE_BLOCK = original
    assert scene.frame_current == frame
    assert identical(blocks.model, everything.model)
    assert identical(blocks.drive, everything.drive)
    assert blocks.drive.meshes is not None
    params = blocks.drive.params
    assert params.damping.shape[0] == params.shape_stiffness.shape[0] == len(on_grid) > 2
    for name in ("rest_matrix", "parent_rest_matrix", "reference_matrix", "parent_matrix",
                 "object_matrix"):
        mine, theirs = getattr(blocks.frames, name), getattr(frames, name)
        assert mine.shape == theirs.shape
        assert np.array_equal(mine.astype(np.float64), theirs), name
    # The pose matrices are Blender's float32: kept so, exactly.
    assert blocks.frames.reference_matrix.dtype == np.float32
    if armatures == 1:  # one space per sample, seen by every chain
        assert blocks.drive.space.strides[1] == 0


def test_the_sampler_holds_a_block_and_refuses_what_it_let_go(scene, waft_module_name):
    _scene(scene, armatures=1)
    module = waft_module_name
    reading = importlib.import_module(f"{module}.addon.strands.reading")
    strand_sampling = importlib.import_module(f"{module}.addon.strands.sampling")
    read = reading.read_scene(scene)
    sampler = strand_sampling.Sampler(scene, read, held=5)
    assert sampler.held == 5
    sampler.sample_chunk(5)
    with pytest.raises(RuntimeError, match="release"):
        sampler.sample_chunk(1)
    first = sampler.rows(np.arange(5))
    sampler.release(4)
    sampler.sample_chunk(4)
    again = sampler.rows(np.array([4]))
    assert np.array_equal(again.pose_matrix[0], first.pose_matrix[0][4:5])
    with pytest.raises(ValueError, match="released"):
        sampler.rows(np.array([3]))
    with pytest.raises(RuntimeError, match="holds a block"):
        sampler.partial_result()
