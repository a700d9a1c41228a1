"""The hair Curves guides' live preview: the bake's own pipeline fed one scene frame at a time,
drawn in the viewport (the groom itself is never written: the guides are shown as lines by
``overlay.py``, so nothing of the user's data changes while the preview runs).

A ``HairPreviewRun`` reads the guides as the bake does (``system.prepare``), samples each scene
frame as the timeline reaches it (``system._sample``, the frames not read yet held at the last
one read), and steps ``core.strands.solver.Stream``: every frame bit for bit as the bake of the
same range (so *Bake* after a full preview writes it without solving again:
``result_for``). Each frame gives the guides' points in the Curves object's space as the bake
stores them (float32, ``system._write_guides``' arithmetic) and its world matrix.
"""

from __future__ import annotations

import numpy as np

from ...core.identical import identical
from ...core.strands.solver import Stream
from ..reading import frame_range
from ..sampling import frame_kept
from . import system
from .preview_strands import PreviewStrands

GUIDES = "guides"  # the property name of a shown entry: (None, curves name, GUIDES, payload)


class HairPreviewRun:
    """One run of the hair guides' preview (``strands.preview.PreviewRun``'s interface)."""

    def __init__(self, scene, *, settings):
        start, end = frame_range(scene)
        self.prepared = system.prepare(scene, objects=None, frame_start=start, frame_end=end)
        self.scene, self.settings = scene, settings
        self.frames = np.arange(start, end + 1)
        self.samples = system._Samples(self.prepared, len(self.frames))
        self.done = 0  # frames sampled
        self.stream: Stream | None = None
        self.strands = [PreviewStrands(scene, setup.render, []) if setup.render is not None
                        else None for setup in self.prepared.setups]

    @property
    def next_frame(self) -> int:
        return int(self.frames[0]) + (0 if self.stream is None else self.stream.frames_done)

    def restore_static(self) -> None:
        """Nothing to put back: the guides are drawn, not written."""

    def _sample_until(self, count: int) -> None:
        count = min(count, len(self.frames))
        if self.done >= count:
            return
        with frame_kept(self.scene):
            for i in range(self.done, count):
                self.scene.frame_set(int(self.frames[i]))
                system._sample(self.scene, self.prepared, self.samples, i)
        self.done = count

    def _drive(self):
        """The drive of the frames read, the later ones held at the last read."""
        s, done = self.samples, self.done
        for array in (s.matrix, s.surface_matrix, s.space_matrix, s.collider, s.gravity,
                      *(v for v in s.surface if v is not None),
                      *(a for d in s.settings for a in d.values())):
            array[done:] = array[done - 1]
        s.meshes.hold(done)
        return system.solver_input(self.prepared, s)

    def result_for(self, model, drive, settings):
        """The bake's ``BakeResult`` for its solver input (``system.solver_input``) and
        ``settings`` when this run has played the whole range from exactly that input (every
        frame read, bit-identical); None otherwise (the bake then solves)."""
        stream = self.stream
        if (stream is None or stream.frames_done < stream.output_frames
                or self.done < len(self.frames) or not identical(settings, self.settings)):
            return None
        mine, theirs = self._drive()[:2], (model, drive)
        if not all(identical(a, b) for a, b in zip(mine, theirs, strict=True)):
            return None
        return stream.result()

    def step(self) -> list:
        """Simulate the next frame; ``[(None, curves name, GUIDES, (points, matrix)), …]``:
        the guides' points (G, P, 3) float32 in the object's space and its world matrix."""
        i = self.next_frame - int(self.frames[0])
        if i >= len(self.frames):
            raise IndexError("the preview reached the end of the range")
        if self.stream is None:
            self._sample_until(2)
            model, drive, self._sizes = self._drive()
            self.stream = Stream(model, drive, self.settings, known=self.done)
        need = self.stream.needed(i)
        if self.stream.known < need:
            self._sample_until(need)
            self.stream.feed(self._drive()[1], self.done)
        positions = self.stream.step()[:, : self.stream.model.particles] / self.prepared.unit
        shown, start = [], 0
        for s, (setup, n) in enumerate(zip(self.prepared.setups, self._sizes, strict=True)):
            world = positions[None, start:start + n]
            start += n
            matrix = self.samples.matrix[i : i + 1, s]
            inverse = np.linalg.inv(matrix)
            local = np.einsum("fij,fgpj->fgpi", inverse[:, :3, :3], world) + \
                inverse[:, None, None, :3, 3]
            shown.append((None, setup.name, GUIDES, (local[0].astype(np.float32), matrix[0])))
            if self.strands[s] is not None:  # render strands, as the bake makes them
                shown.append(self.strands[s].frame(int(self.frames[i]), list(world[0])))
        return shown
