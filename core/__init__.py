"""Waft's solver core: pure NumPy, importable without Blender.

One package per system (``strands`` for bone chains and hair guides, ``hair`` for render
strands, ``cloth`` for cloth-bone grids and rods, ``ragdoll`` for physical animation) beside the
kernels two or more of them share (colliders, rotations, affine inverses, time stepping, the
frame-job loop, errors, space carrying, forces, range checks). The bone-chain names are
re-exported here, so a pipeline script can bake chains with one import.
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

import sys as _sys

from . import strands
from .colliders import ColliderKind, ColliderSet
from .errors import DivergenceError, SetupError, WaftError
from .strands import (
    BakeJob,
    BakeResult,
    ChainRest,
    Drive,
    State,
    StrandModel,
    StrandParams,
    SubstepDrive,
    bake,
    bake_steps,
    build_strand_model,
    rate_normalised,
    shape_strength,
    step,
    validate_drive,
    validate_params,
)
from .timestep import SolverSettings

# Scripts written before the bone-chain system moved into ``core.strands`` import its modules as
# ``waft.core.solver`` and so on; the module table keeps those paths working (same objects).
for _old in ("bone_frames", "drive", "model", "params", "solver"):
    _sys.modules.setdefault(f"{__name__}.{_old}", getattr(strands, _old))
_sys.modules.setdefault(f"{__name__}.constraints", strands.constraints)
del _old

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
