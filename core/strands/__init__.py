"""Bone chains and hair guides as strands of particles (FTL/DFTL + XPBD, fixed substeps).

``build_strand_model`` turns chains into a ``StrandModel`` (what does not change), a ``Drive``
holds what does (per-frame reference pose, space, colliders, ``StrandParams``), and
``bake`` / ``bake_steps`` run the fixed-substep solver; ``bone_frames`` turns the solved
particles back into bone rotations. Layout and units: docs/internals.md.
"""

# Re-exported (``name as name``) for ``waft.core`` and pipeline scripts.
from .bone_frames import chain_pose_rotations as chain_pose_rotations
from .drive import Drive as Drive
from .drive import validate_drive as validate_drive
from .model import ChainRest as ChainRest
from .model import StrandModel as StrandModel
from .model import build_strand_model as build_strand_model
from .params import StrandParams as StrandParams
from .params import rate_normalised as rate_normalised
from .params import shape_strength as shape_strength
from .params import validate_params as validate_params
from .settled import capture_settled_offsets as capture_settled_offsets
from .solver import BakeJob as BakeJob
from .solver import BakeResult as BakeResult
from .solver import State as State
from .solver import SubstepDrive as SubstepDrive
from .solver import bake as bake
from .solver import bake_steps as bake_steps
from .solver import step as step
