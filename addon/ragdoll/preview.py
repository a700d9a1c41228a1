"""The ragdolls' live preview: the bake's own pipeline, one scene frame per timeline frame.

A ``RagdollPreviewRun`` prepares the ragdolls as the bake does (``system.prepare``). At its
first frame it reads the animation over the whole range at the bake's sample times
(``RagdollSampler`` at ``addon.sampling.sample_times``): the ragdoll solver looks
ahead along its targets (their velocities, the speed-dependent distance limit), so unlike the
bone chains it cannot start from samples not read yet. That first frame costs the sampling of
the shot (the status shows it); every later frame is solved as the timeline reaches it by
``core.ragdoll.RagdollStream``, the bake's frame loop, whose shown pose of a frame is bit for bit
the bake's (output blend and recovery included). Each frame's channels are computed as the bake
keys them (``system.bone_keys``; quaternion signs and Euler angles carried from frame to frame
by ``preview_channels.RotationTrack``).
"""

from __future__ import annotations

import time

import numpy as np

from ...core.errors import DivergenceError
from ...core.identical import identical
from .. import preview_channels
from ..progress import run_to_end
from ..sampling import is_result_track, sample_steps, sample_times, tracks_muted
from . import sampling, system, writing


class RagdollPreviewRun:
    """One run of the ragdolls' preview from the scene's first frame (``strands.preview
    .PreviewRun``'s interface: ``next_frame``, ``step``, ``restore_static``)."""

    def __init__(self, scene, *, settings):
        self.scene = scene
        self.prepared = prepared = system.prepare(scene)
        self.rate = float(scene.waft.sample_rate)
        self.core = system.core_api()
        self.settings = system.ragdoll_settings(prepared, settings, self.core)
        self.located = [r.keyed.located_names for r in prepared.reads]
        self.static = []  # the bodies' unkeyed channels (``static_pose``)
        for read, located in zip(prepared.reads, self.located, strict=True):
            self.static += preview_channels.static_pose(
                read.object, writing.static_channels(read.object, read.keyed.names, located))
        self.bones = [(read.object, name) for read in prepared.reads
                      for name in read.keyed.names]
        self.samples = None  # every scene frame's samples (read at the first step)
        self.drive = None
        self.stream = None
        self.sample_ms = 0.0  # reading the whole range at the first frame
        self._rotations = preview_channels.RotationTrack()

    @property
    def next_frame(self) -> int:
        done = 0 if self.stream is None else self.stream.frames_done
        return self.prepared.frame_start + done

    def restore_static(self) -> None:
        preview_channels.restore_static(self.static)

    def _start(self) -> None:
        """Read the whole range (as the bake reads it) and start the solver."""
        prepared = self.prepared
        t0 = time.perf_counter()
        times, on_grid, at_frames = sample_times(prepared.frame_start, prepared.frame_end,
                                                 prepared.fps, self.rate)
        self.restore_static()
        samples = run_to_end(sample_steps(
            self.scene, sampling.RagdollSampler(self.scene, prepared.reads, prepared.colliders,
                                                times),
            chunk=system.SAMPLE_CHUNK * system.samples_per_frame(self.rate, prepared.fps),
            muted=tracks_muted((r.object for r in prepared.reads), is_result_track),
            system=system.NAME))
        self.drive = system.solver_drive(prepared, samples, self.core, on_grid=on_grid,
                                         at_frames=at_frames, rate=self.rate)
        self.samples = samples.take(at_frames)
        # the animation target is drawn beside the preview, as after a bake
        system.remember_targets(prepared, self.drive.output_target)
        self.stream = self.core.RagdollStream(prepared.model, self.drive, self.settings)
        self.sample_ms = 1000.0 * (time.perf_counter() - t0)

    def step(self) -> list:
        """Simulate the next scene frame; what it shows ``[(object, bone, property, values),
        …]``."""
        if self.stream is None:
            self._start()
        i = self.next_frame - self.prepared.frame_start
        if i > self.prepared.frame_end - self.prepared.frame_start:
            raise IndexError("the preview reached the end of the range")
        try:
            body = self.stream.step()
            while self.stream.frames_done <= i:
                body = self.stream.step()
        except DivergenceError as error:  # an output frame: a scene frame from the first
            raise DivergenceError(error.setup, self.prepared.frame_start + error.frame,
                                  error.detail) from error
        return self._pose(i, body)

    def fell_at(self) -> list[tuple[str, int]]:
        """(ragdoll, scene frame) of every ragdoll whose root lock has let go so far."""
        if self.stream is None:
            return []
        fell = self.stream.fell_at
        return [(read.name, self.prepared.frame_start + int(fell[r]))
                for r, read in enumerate(self.prepared.reads) if fell[r] >= 0]

    def result_for(self, model, drive, settings):
        """The bake's ``RagdollResult`` for its solver input (``model``, ``drive``,
        ``settings``) when this run has played the whole range from exactly that input
        (bit-identical); None otherwise (the bake then solves)."""
        stream = self.stream
        if stream is None or stream.result() is None or not identical(settings, self.settings):
            return None
        if not (identical(self.prepared.model, model) and identical(self.drive, drive)):
            return None
        return stream.result()

    def _pose(self, i: int, body: np.ndarray) -> list:
        """The channel values the bake would key at scene frame ``i`` (from 0)."""
        keys = system.bone_keys(self.prepared, self.samples.take(np.array([i])), body[None])
        quats = self._rotations.signed(np.concatenate([k.rotation[0] for k in keys]))
        shown = self._rotations.channels(self.bones, quats)
        for read, located, k in zip(self.prepared.reads, self.located, keys, strict=True):
            shown += [(read.object, name, "location", tuple(v))
                      for name, v in zip(located, k.location[0].tolist(), strict=True)]
        return shown
