"""The rods' live preview: the rod bake's own pipeline, one scene frame per timeline frame.

A ``RodPreviewRun`` reads the rods as the bake does (``rods.read_rods``) and, at its first frame,
samples the whole range at the bake's sample times (``rods.sample_rods``: a few matrices per
chain per sample, milliseconds for a shot). Every later frame is solved as the timeline reaches
it by ``core.cloth.rod.RodStream``, the bake's own loop, and turned into the channels the bake
keys (``rods.chain_keys``; quaternion signs and Euler angles carried from frame to frame by
``preview_channels.RotationTrack``), so a frame shown is the baked frame bit for bit.
"""

from __future__ import annotations

import time

import numpy as np

from ...core.cloth.rod import RodStream, build_rod_model
from ...core.errors import DivergenceError
from ...core.identical import identical
from .. import preview_channels
from ..progress import run_to_end
from ..reading import collider_set, frame_range
from ..sampling import sample_times
from . import rod_system, rods, writing


class RodPreviewRun:
    """One run of the rods' preview from the scene's first frame (``strands.preview
    .PreviewRun``'s interface: ``next_frame``, ``step``, ``restore_static``)."""

    def __init__(self, scene, *, settings):
        start, end = frame_range(scene)
        self.scene, self.settings = scene, settings
        self.read = read = rods.read_rods(scene, None, start, end)
        self.static = []  # the rod bones' unkeyed channels (``static_pose``)
        for i, armature in enumerate(read.armatures):
            names = [n for c in read.chains if c.armature == i for n in c.bone_names]
            self.static += preview_channels.static_pose(
                armature.object, writing.static_channels(armature.object, names, writing.ROD))
        self.bones = [(read.armatures[c.armature].object, name)
                      for c in read.chains for name in c.bone_names]
        self.samples = self.drive = self.stream = None
        self.model = build_rod_model(rods=rods.rod_rests(read),
                                     colliders=collider_set(read.colliders),
                                     collider_mask=read.collider_mask)
        self.sample_ms = 0.0  # reading the whole range at the first frame
        self._rotations = preview_channels.RotationTrack()

    @property
    def next_frame(self) -> int:
        return self.read.frame_start + (0 if self.stream is None else self.stream.frames_done)

    def restore_static(self) -> None:
        preview_channels.restore_static(self.static)

    def _start(self) -> None:
        """Read the whole range at the bake's sample times and start the solver."""
        read = self.read
        t0 = time.perf_counter()
        rate = float(self.scene.waft.sample_rate)
        times, on_grid, at_frames = sample_times(read.frame_start, read.frame_end, read.fps, rate)
        self.restore_static()
        samples = run_to_end(rods.sample_rods(self.scene, read, times=times,
                                              chunk=rod_system.SAMPLE_CHUNK))
        sub_frame = rate > read.fps  # else the samples are the scene frames (as the bake)
        self.drive = rods.rod_drive(read, samples.take(on_grid) if sub_frame else samples,
                                    rate=rate if sub_frame else None)
        self.samples = samples.take(at_frames) if sub_frame else samples
        self.stream = RodStream(self.model, self.drive, self.settings)
        self.sample_ms = 1000.0 * (time.perf_counter() - t0)

    def step(self) -> list:
        """Simulate the next scene frame; what it shows ``[(object, bone, property, values),
        …]``."""
        if self.stream is None:
            self._start()
        i = self.stream.frames_done
        try:
            positions, orientation = self.stream.step()
        except DivergenceError as error:  # an output frame index: the scene frame
            raise DivergenceError(error.setup, self.read.frame_start + error.frame,
                                  error.detail) from error
        read, samples = self.read, self.samples.take(np.array([i]))
        locations, raw = [], []
        for s, chain in enumerate(read.chains):
            location, quats = rods.chain_keys(read, samples, chain, positions[None, s],
                                              orientation[None, s])
            if not (np.isfinite(location).all() and np.isfinite(quats).all()):
                raise DivergenceError(chain.name, read.frame_start + i, "bone keys are not finite")
            locations.append(location[0])
            raw.append(quats[0])
        quats = self._rotations.signed(np.concatenate(raw))
        shown = [(ob, name, "location", tuple(v)) for (ob, name), v
                 in zip(self.bones, np.concatenate(locations).tolist(), strict=True)]
        return shown + self._rotations.channels(self.bones, quats)

    def result_for(self, model, drive, settings):
        """The bake's ``RodResult`` for its solver input when this run has played the whole
        range from exactly that input (bit-identical); None otherwise (the bake then solves)."""
        stream = self.stream
        if stream is None or stream.result() is None or not identical(settings, self.settings):
            return None
        if not (identical(self.model, model) and identical(self.drive, drive)):
            return None
        return stream.result()
