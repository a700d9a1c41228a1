"""Ragdoll test helpers: the installed add-on's ragdoll modules, and a stand-in solver.

The stand-in (``kinematic_core``) returns every body exactly at its animation target; it checks
reading, sampling and writing (targets → pose keys → Blender playback) apart from the physics.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
for path in (HERE, HERE.parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture(scope="session")
def ragdoll_system(waft):
    return importlib.import_module(waft.__name__ + ".addon.ragdoll.system")


@pytest.fixture(scope="session")
def setup_error(waft):
    return importlib.import_module(waft.__name__ + ".core.errors").SetupError


@dataclass(frozen=True)
class _Settings:
    substep: float = 1.0 / 240.0
    iterations: int = 4
    preroll_frames: int = 0
    self_collision: bool = True


class _Job:
    def __init__(self, model, drive):
        self.result = None
        self._model, self._drive = model, drive

    def __iter__(self):
        # the animation at the output frames (the scene's), as the solver returns them
        shown = self._drive.output_target
        shown = self._drive.target if shown is None else shown
        frames = shown.shape[0]
        for f in range(frames):
            yield f + 1, frames
        self.result = SimpleNamespace(
            body_matrix=np.array(shown), physics_matrix=np.array(shown),
            fell_at=np.full(self._model.n_ragdolls, -1))


@pytest.fixture
def kinematic_core(waft, ragdoll_system, monkeypatch):
    """Replace the solver by one that returns the animation targets; restore afterwards."""
    base = waft.__name__ + ".core.ragdoll."
    model, params, drive = (importlib.import_module(base + m)
                            for m in ("model", "params", "drive"))
    stand_in = SimpleNamespace(
        RagdollRest=model.RagdollRest, build_ragdoll_model=model.build_ragdoll_model,
        RagdollParams=params.RagdollParams, RagdollDrive=drive.RagdollDrive)
    stand_in.RagdollSettings = _Settings
    stand_in.bake_ragdoll_steps = lambda model, drive, settings: _Job(model, drive)
    monkeypatch.setattr(ragdoll_system, "core_api", lambda: stand_in)
    return stand_in
