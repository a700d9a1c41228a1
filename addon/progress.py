"""Progress of a bake, shared by every system (strands, hair, cloth, ragdoll) and the operator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core.errors import DivergenceError

# Where each phase sits on the progress bar (start, span): sampling drives Blender frame by
# frame and dominates, the solve is NumPy, the write is bulk foreach_set.
PHASE_SPAN = {"sample": (0.0, 0.4), "solve": (0.4, 0.55), "write": (0.95, 0.05)}


@dataclass(frozen=True)
class Progress:
    """One step of a bake: ``phase`` is 'sample', 'solve' or 'write'; ``system`` who reports."""

    phase: str
    done: int
    total: int
    system: str = "strands"

    @property
    def fraction(self) -> float:
        start, span = PHASE_SPAN[self.phase]
        return start + span * (self.done / max(self.total, 1))


def solve_steps(make_job, frame_start: int, *, system: str = "strands", per_frame: int = 1):
    """Generator: run the core bake job ``make_job()`` frame by frame, yielding 'solve'
    ``Progress``; returns the job's result. Core counts frames from 0 at the first baked frame,
    so a ``DivergenceError`` is raised again with the scene frame users see. ``per_frame``: the
    job's frames per scene frame (a drive sampled between the scene's frames); the error then
    names the first scene frame at or after the job's."""
    try:
        job = make_job()
        for done, total in job:
            yield Progress("solve", done, total, system=system)
    except DivergenceError as error:
        raise DivergenceError(error.setup, frame_start + -(-error.frame // per_frame),
                              error.detail) from error
    return job.result


def run_to_end(steps: Iterator[Progress],
               progress: Callable[[Progress], None] | None = None):
    """Drive a bake generator to its end synchronously (``progress`` sees every step) and
    return what it returns."""
    try:
        while True:
            item = next(steps)
            if progress is not None:
                progress(item)
    except StopIteration as stop:
        return stop.value
