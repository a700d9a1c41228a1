"""The bone chains' live preview: the bake's own pipeline fed one scene frame at a time.

A ``PreviewRun`` reads the setups as the bake does (``read_scene`` over the scene's range),
samples the scene at the bake's sample times as the timeline reaches them (``Sampler``, the
samples not read yet held at the last one read), and steps ``core.strands.solver.Stream``, which
gives every frame bit for bit as the bake of the same range does. Each frame's bone rotations
are computed as the bake writes them (``chain_axes`` + ``basis_rotations``, the quaternion sign
carried from frame to frame as ``make_sign_continuous`` does) and kept as the channel values the
F-curves would hold (``writing.rotation_channels``), so showing a frame sets exactly what
playing the bake would.
"""

from __future__ import annotations

import time

import numpy as np

from ...core.identical import identical
from ...core.strands.bone_frames import basis_rotations, chain_axes
from ...core.strands.solver import Stream
from .. import preview_channels, rest_channels, systems
from ..sampling import sample_times, waft_tracks_muted
from . import vrm_mode
from .assemble import chain_frames, drive_rows, solver_input
from .reading import read_scene
from .sampling import Sampler


class PreviewRun:
    """One run of the preview from the scene's first frame (see module doc).

    ``step`` returns what a simulated frame shows, ``[(object, bone name, property, values),
    …]`` (``show`` puts it on the bones; addon/preview.py caches it per frame). Sampling sets
    the scene's frame (sub-frames too); the caller keeps the frame-change handler from running
    the preview again meanwhile and puts its frame back.
    """

    def __init__(self, scene, *, settings):
        read = read_scene(scene)
        self.read, self.settings = read, settings
        # Chains in VRM Spring Bone mode: solved over the whole shot at the first frame, as the
        # bake solves them (``vrm_mode.solve``); None until then or without any.
        self.vrm = None
        self.has_vrm = bool(vrm_mode.vrm_chains(read))
        self.sample_ms = 0.0  # reading the whole shot for them
        rate = float(scene.waft.sample_rate)
        self.rate = rate if rate > 0.0 else None
        times, self.on_grid, self.at_frames = sample_times(
            read.frame_start, read.frame_end, read.fps, rate)
        self.sampler = Sampler(scene, read, times)
        self.static = []  # the simulated bones' unkeyed rotations (``static_pose``)
        for setup in read.setups:
            names = [n for c in setup.chains for n in c.bone_names]
            self.static += preview_channels.static_pose(
                setup.object, rest_channels.static_channels(setup.object, names))
        self.stream: Stream | None = None
        self._rotations = preview_channels.RotationTrack()
        self._partial = None  # (samples read, their Samples)
        # What the chains make beyond their bones (render strands), drawn by the overlay.
        setup_objects = [s.object for s in read.setups]
        self.outputs = [previewer for previewer in (
            module.preview_output(scene, setup_objects)
            for module in systems.strand_output_modules()) if previewer is not None]

    @property
    def frame_start(self) -> int:
        return self.read.frame_start

    @property
    def frame_end(self) -> int:
        return self.read.frame_end

    @property
    def next_frame(self) -> int:
        """The scene frame the next ``step`` simulates."""
        return self.frame_start + (0 if self.stream is None else self.stream.frames_done)

    def objects(self) -> list:
        return [s.object for s in self.read.setups]

    def restore_static(self) -> None:
        """Put the simulated bones' unkeyed rotations back to the animation's."""
        preview_channels.restore_static(self.static)

    def _sample_until(self, count: int) -> None:
        """Read the samples before grid sample ``count`` (and every scene frame among them)."""
        stop = int(self.on_grid[count - 1]) + 1
        if self.sampler.done >= stop:
            return
        self.restore_static()
        with waft_tracks_muted(self.objects()):
            self.sampler.sample_chunk(stop - self.sampler.done)

    def _samples(self):
        """Everything read so far, later samples held (converted once per sampling pass)."""
        if self._partial is None or self._partial[0] != self.sampler.done:
            self._partial = (self.sampler.done, self.sampler.partial_result())
        return self._partial[1]

    def _drive(self):
        return solver_input(self.read, self._samples().take(self.on_grid), rate=self.rate)

    def step(self) -> list:
        """Simulate the next frame; what it shows (see the class doc)."""
        i = self.next_frame - self.frame_start
        if i > self.frame_end - self.frame_start:
            raise IndexError("the preview reached the end of the range")
        if self.stream is None:
            # The VRM chains are solved over the whole shot at once: it is read here (its time
            # is the first frame's, not a frame's cost: ``sample_ms``).
            t0 = time.perf_counter()
            self._sample_until(len(self.on_grid) if self.has_vrm else min(2, len(self.on_grid)))
            inputs = self._drive()
            self.stream = Stream(inputs.model, inputs.drive, self.settings,
                                 known=self._known())
            if self.has_vrm:
                self._solve_vrm(inputs.drive.reference.shape[2])
                self.sample_ms = 1000.0 * (time.perf_counter() - t0)
        need = self.stream.needed(i)
        if self.stream.known < need:
            self._sample_until(need)
            # Only the new samples' rows are built and handed over: the cost per frame does not
            # grow with the range (rebuilding the whole drive was 110 ms a frame at 512 bones).
            rows = self.sampler.rows(self.on_grid[self.stream.known : self._known()])
            self.stream.feed_rows(drive_rows(self.read, rows, rate=self.rate)[0])
        positions = self.stream.step()
        if self.vrm is not None:  # the bake's: its VRM chains' positions replace Waft's
            positions = positions.copy()
            positions[list(self.vrm.chains)] = self.vrm.positions[i]
        return self._pose(i, positions) + self._outputs(i, positions)

    def _solve_vrm(self, particles: int) -> None:
        """The VRM Spring Bone chains over the whole shot (``system.simulate``'s call)."""
        samples = self._samples()
        self.vrm = vrm_mode.solve(self.read, samples.take(self.at_frames)
                                  if self.rate is not None else samples, particles,
                                  preroll_frames=self.settings.preroll_frames)

    def _outputs(self, i: int, positions: np.ndarray) -> list:
        """The render strands of output frame ``i`` (``STRAND_OUTPUTS``), from the chains
        as the bake hands them over (``system.run_steps``' ``chain_positions``)."""
        if not self.outputs:
            return []
        read = self.read
        chains = {read.chain_name(s): positions[s, : len(chain.bone_names) + 1] / read.unit_scale
                  for s, chain in enumerate(read.chains)}
        self.restore_static()  # the scalp is read with the animation's pose, as in the bake
        return [entry for previewer in self.outputs
                for entry in previewer.frame(self.frame_start + i, chains)]

    def result_for(self, inputs, settings):
        """The bake's ``BakeResult`` for solver input ``inputs`` (``assemble.SolverInput``) and
        ``settings``, when this run has played the whole range from exactly that input: every
        sample read and bit-identical to the bake's, the same settings. None otherwise (the bake
        then solves). Bit-identical input gives a bit-identical result (the solver is
        deterministic and the stream is the bake's loop), so nothing is trusted to a hash."""
        stream = self.stream
        if (stream is None or stream.frames_done < stream.output_frames
                or self.sampler.done < self.sampler.total
                or not identical(settings, self.settings)):
            return None
        mine = self._drive()
        if not (identical(mine.model, inputs.model) and identical(mine.drive, inputs.drive)):
            return None
        return stream.result()

    def _known(self) -> int:
        """Grid samples read so far."""
        return int(np.searchsorted(self.on_grid, self.sampler.done))

    def _pose(self, i: int, positions: np.ndarray) -> list:
        """The channel values the bake would key at output frame ``i``."""
        read = self.read
        f = chain_frames(read, self.sampler.rows(self.at_frames[i : i + 1],
                                                 settings=False))[0]
        axes = chain_axes(reference_matrix=f.reference_matrix, object_matrix=f.object_matrix,
                          positions=positions[None])
        if self.vrm is not None:  # their own orientations carry their twist (system._write)
            axes[:, list(self.vrm.chains), : self.vrm.axes.shape[2]] = self.vrm.axes[i : i + 1]
        raw = basis_rotations(rest_matrix=f.rest_matrix, parent_rest_matrix=f.parent_rest_matrix,
                              parent_matrix=f.parent_matrix, axes=axes)[0]
        quats = self._rotations.signed(raw)
        bones = [(read.setups[chain.setup_index].object, name)
                 for chain in read.chains for name in chain.bone_names]
        flat = np.concatenate([quats[s, : len(chain.bone_names)]
                               for s, chain in enumerate(read.chains)])
        return self._rotations.channels(bones, flat)


show = preview_channels.show
