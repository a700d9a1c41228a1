"""Cloth-bone solver (seeds 001 and 003): low-resolution quad cages whose vertices drive bones.

See docs/cloth-solver.md. Pure NumPy; importable without Blender.
"""

from .bone_frames import bone_world, grid_frames, rest_offsets
from .drive import ClothDrive, validate_cloth_drive
from .model import ClothModel, ClothRest, build_cloth_model
from .params import ClothParams
from .settled import capture_settled_offsets
from .solver import ClothBakeJob, ClothResult, ClothStream, bake_cloth, bake_cloth_steps

__all__ = [
    "ClothBakeJob",
    "ClothDrive",
    "ClothModel",
    "ClothParams",
    "ClothRest",
    "ClothResult",
    "ClothStream",
    "bake_cloth",
    "bake_cloth_steps",
    "bone_world",
    "capture_settled_offsets",
    "build_cloth_model",
    "grid_frames",
    "rest_offsets",
    "validate_cloth_drive",
]
