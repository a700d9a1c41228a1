"""Progress of a bake, shared by every system (strands, hair, cloth, ragdoll) and the operator."""

from __future__ import annotations

from dataclasses import dataclass

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
