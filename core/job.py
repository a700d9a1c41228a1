"""The bake-job pattern every solver shares: an iterator that yields ``(frames_done, total)`` per
baked frame and holds the result once exhausted, plus the divergence test behind it.

A modal operator advances a job in chunks and simply drops it to cancel; nothing is returned
before the whole range is validated and solved (the result appears only after the last frame).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np


class _Runs(Protocol):
    """A bake in progress: its generator fills ``result`` when it finishes."""

    result: Any


class FrameJob:
    """Iterator over a bake, one frame per `next()`: yields (frames_done, total).

    Subclasses validate their input, then call ``super().__init__(runner, frames, total)`` with
    the object whose ``result`` the generator ``frames`` sets on its last step.
    """

    def __init__(self, runner: _Runs, frames: Iterator[tuple[int, int]], total: int):
        self._runner = runner
        self._iterator = frames
        self.total = total
        self.result = None

    def __iter__(self) -> FrameJob:
        return self

    def __next__(self) -> tuple[int, int]:
        try:
            return next(self._iterator)
        except StopIteration:
            self.result = self._runner.result
            raise


class FrameStream:
    """A bake stepped one output frame at a time (a live preview steps it as the timeline
    plays): ``advance()`` solves the next frame of the generator ``frames`` (the bake's own
    loop, so every frame is the bake's) and subclasses read it from ``runner``; after the last
    frame ``result()`` is the bake's result."""

    def __init__(self, runner: _Runs, frames: Iterator[tuple[int, int]], total: int):
        self._runner = runner
        self._frames = frames
        self.frames_done = 0
        self.total = total

    def advance(self) -> int:
        """Solve the next frame; its index (from 0)."""
        if self.frames_done >= self.total:
            raise IndexError("the stream is past its last frame")
        self.frames_done = next(self._frames)[0]
        if self.frames_done == self.total:
            for _ in self._frames:  # the end of the loop builds the result
                pass
        return self.frames_done - 1

    def result(self):
        """The whole bake's result once every frame is solved, else None."""
        return getattr(self._runner, "result", None) if self.frames_done == self.total else None


def run_job(job: FrameJob, progress: Callable[[int, int], None] | None = None):
    """Run ``job`` to the end, calling ``progress(done, total)`` per frame; its result."""
    for done, total in job:
        if progress is not None:
            progress(done, total)
    assert job.result is not None
    return job.result


def first_diverged(distance: np.ndarray, bound, where: np.ndarray | None = None):
    """Index tuple of the first entry of ``distance`` beyond ``bound`` (or NaN), else None.

    ``~(distance <= bound)`` makes NaN count as diverged (NaN compares False); ``where`` limits
    the test (e.g. to active particles).
    """
    bad = ~(distance <= bound)
    if where is not None:
        bad = bad & where
    if not np.any(bad):
        return None
    return tuple(int(v) for v in np.argwhere(bad)[0])


def distance_detail(value: float) -> str:
    """How far a diverged point is: "not finite" or "<d> m from its reference"."""
    return "not finite" if not np.isfinite(value) else f"{value:.3g} m from its reference"
