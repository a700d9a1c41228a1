"""The cloth cages' live preview: the bake's own pipeline fed one scene frame at a time.

A ``ClothPreviewRun`` reads the cages as the bake does (``read_cloth`` over the scene's
range), samples the scene at the bake's sample times as the timeline reaches them
(``ClothSampler``, the samples not read yet held at the last one read), and steps
``core.cloth.ClothStream``, which gives every frame bit for bit as the bake of the same range
does. Each frame's bone keys are computed as the bake computes them (``pose.bone_keys``) and
kept as the channel values the F-curves would hold (location, and the rotation made
continuous from frame to frame: ``preview_channels.RotationTrack``). The simulated cage itself
is drawn by the overlay (``ShownCage``), the vertices the bake's *Cage Output* mesh plays.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.cloth import ClothStream
from ...core.errors import DivergenceError
from ...core.identical import identical
from .. import preview_channels
from ..reading import frame_range
from ..sampling import sample_times
from . import assemble, pose, reading, writing
from .sampling import ClothSampler, result_tracks_muted

CAGE = "cage"  # the property name of a shown entry: (None, cage name, CAGE, ShownCage)


class ShownCage:
    """One previewed frame of a simulated cage: its vertices (V, 3) float32 world, as the bake's
    *Cage Output* mesh stores them, and its edges (E, 2), drawn by the overlay."""

    def __init__(self, points: np.ndarray, edges: np.ndarray):
        self.points, self.edges = points, edges

    @property
    def held(self) -> int:
        return len(self.points)

    def segments(self) -> np.ndarray:
        """(E, 2, 3) float32 world: the cage's edges."""
        return self.points[self.edges]


class ClothPreviewRun:
    """One run of the cloth preview from the scene's first frame (``strands.preview
    .PreviewRun``'s interface: ``next_frame``, ``step``, ``restore_static``)."""

    def __init__(self, scene, *, settings):
        start, end = frame_range(scene)
        read = reading.read_cloth(scene, None, start, end)
        self.read, self.settings = read, settings
        rate = float(scene.waft.sample_rate)
        times, self.on_grid, self.at_frames = sample_times(start, end, read.fps, rate)
        self.sub_frame = rate > read.fps  # else the samples are the scene frames (as the bake)
        self.rate = rate if self.sub_frame else None
        self.sampler = ClothSampler(scene, read, times)
        self.model = assemble.cloth_input_model(read)
        self.static = []  # the cloth bones' unkeyed channels (``static_pose``)
        for setup in read.setups:
            self.static += preview_channels.static_pose(
                setup.armature, writing.static_channels(setup.armature, setup.bone_names))
        self.stream: ClothStream | None = None
        self._rotations = preview_channels.RotationTrack()
        self._partial = None  # (samples read, their ClothSamples)

    @property
    def frame_start(self) -> int:
        return self.read.frame_start

    @property
    def next_frame(self) -> int:
        return self.frame_start + (0 if self.stream is None else self.stream.frames_done)

    def restore_static(self) -> None:
        preview_channels.restore_static(self.static)

    def _known(self) -> int:
        done = self.sampler.done
        return int(np.searchsorted(self.on_grid, done)) if self.sub_frame else done

    def _sample_until(self, count: int) -> None:
        stop = int(self.on_grid[count - 1]) + 1 if self.sub_frame else count
        if self.sampler.done >= stop:
            return
        self.restore_static()
        with result_tracks_muted(s.armature for s in self.read.setups):
            self.sampler.sample_chunk(stop - self.sampler.done)

    def _samples(self):
        if self._partial is None or self._partial[0] != self.sampler.done:
            self._partial = (self.sampler.done, self.sampler.partial_result())
        return self._partial[1]

    def _drive(self):
        samples = self._samples()
        if not self.sub_frame:
            return assemble.cloth_drive(self.read, samples)[0]
        return assemble.cloth_drive(self.read, samples.take(self.on_grid), rate=self.rate,
                                    frames=samples.take(self.at_frames))[0]

    def step(self) -> list:
        """Simulate the next frame; what it shows ``[(object, bone, property, values), …]``."""
        i = self.next_frame - self.frame_start
        if i > self.read.frame_end - self.read.frame_start:
            raise IndexError("the preview reached the end of the range")
        if self.stream is None:
            self._sample_until(min(2, len(self.on_grid)))
            self.stream = ClothStream(self.model, self._drive(), self.settings,
                                      known=self._known())
        need = self.stream.needed(i)
        if self.stream.known < need:
            self._sample_until(need)
            # Only the new samples' rows are built and handed over: the cost per frame does
            # not grow with the range.
            first, known = self.stream.known, self._known()
            index = self.on_grid[first:known] if self.sub_frame else np.arange(first, known)
            rows = assemble.cloth_drive(self.read, self.sampler.rows(index), rate=self.rate)[0]
            if self.sub_frame:  # the scene frames read with them: the output reference
                done = int(np.searchsorted(self.at_frames, self.sampler.done))
                new = self.at_frames[self.stream.output_known:done]
                rows = replace(rows, output_reference=(
                    assemble.output_reference(self.read, self.sampler.rows(new)) if len(new)
                    else np.zeros((0, self.model.n_vertices, 3))))
            self.stream.feed_rows(rows)
        return self._pose(i, self.stream.step())

    def result_for(self, model, drive, settings):
        """The bake's ``ClothResult`` for ``model`` and ``drive`` (the bake's solver input) and
        ``settings``, when this run has played the whole range from exactly that input (every
        sample read, bit-identical); None otherwise (the bake then solves)."""
        stream = self.stream
        if (stream is None or stream.frames_done < stream.output_frames
                or self.sampler.done < self.sampler.total
                or not identical(settings, self.settings)):
            return None
        if not (identical(self.model, model) and identical(self._drive(), drive)):
            return None
        return stream.result()

    def _pose(self, i: int, positions: np.ndarray) -> list:
        """The channel values the bake would key at output frame ``i``."""
        read = self.read
        samples = self.sampler.rows(self.at_frames[i : i + 1])
        offsets = self.model.vertex_offset
        bones, locations, raw, cages = [], [], [], []
        for s, setup in enumerate(read.setups):
            cage = positions[None, offsets[s]:offsets[s + 1]] / read.unit_scale
            cages.append((None, setup.name, CAGE, ShownCage(cage[0].astype(np.float32),
                                                            setup.edges)))
            keys = pose.bone_keys(setup, cage, samples.pose[s], samples.armature_world[s])
            if not (np.isfinite(keys.location).all() and np.isfinite(keys.rotation).all()):
                raise DivergenceError(setup.name, read.frame_start + i, "bone keys are not finite")
            bones += [(setup.armature, name) for name in setup.bone_names]
            locations.append(keys.location[0])
            raw.append(keys.rotation[0])
        quats = self._rotations.signed(np.concatenate(raw))
        shown = [(ob, name, "location", tuple(v)) for (ob, name), v
                 in zip(bones, np.concatenate(locations).tolist(), strict=True)]
        return shown + self._rotations.channels(bones, quats) + cages
