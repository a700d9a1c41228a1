"""Waft's solver core: pure NumPy, importable without Blender.

Bone chains (and later hair, cloth-bone and ragdolls) become strands of particles; a bake runs a
fixed-substep XPBD simulation over per-frame inputs and returns world positions per frame.
Usage from a studio pipeline, no Blender needed::

    import numpy as np
    from waft.core import ChainRest, ColliderSet, Drive, SolverSettings, StrandParams, bake, \\
        build_strand_model
    rest = np.array([[0, 0, 1.6], [0, 0, 1.4], [0, 0, 1.2]])       # root + 2 bones, metres
    model = build_strand_model(chains=[ChainRest("Rig", "Hair", rest, [True, False, False])],
                               colliders=ColliderSet.empty())
    F = 48; ref = np.repeat(rest[None, None], F, axis=0)            # (F, S, P, 3) animation
    drive = Drive(fps=24, reference=ref, kinematic=np.array([[True, False, False]]),
                  space=np.broadcast_to(np.eye(4), (F, 1, 4, 4)),
                  collider_matrix=np.zeros((F, 0, 4, 4)), params=StrandParams.defaults(1, 3))
    positions = bake(model, drive, SolverSettings(substep=1 / 240)).positions  # (F, S, P, 3)
"""

from .colliders import ColliderKind, ColliderSet
from .drive import Drive, validate_drive
from .errors import DivergenceError, SetupError, WaftError
from .model import ChainRest, StrandModel, build_strand_model
from .params import StrandParams, rate_normalised, shape_strength, validate_params
from .solver import (
    BakeJob,
    BakeResult,
    SolverSettings,
    State,
    SubstepDrive,
    bake,
    bake_steps,
    step,
)

__all__ = [
    "BakeJob",
    "BakeResult",
    "ChainRest",
    "ColliderKind",
    "ColliderSet",
    "DivergenceError",
    "Drive",
    "SetupError",
    "SolverSettings",
    "State",
    "StrandModel",
    "StrandParams",
    "SubstepDrive",
    "WaftError",
    "bake",
    "bake_steps",
    "build_strand_model",
    "rate_normalised",
    "shape_strength",
    "step",
    "validate_drive",
    "validate_params",
]
