"""Bone keys from simulated cage positions (NumPy, no bpy).

Seed 001: each cloth bone takes the frame of its grid vertex (``core.cloth.bone_frames``): x
towards the vertex below, y from the left to the right neighbour (the roll from a fit of the
vertex's 1-ring where a fold turns that row into the column), z = x × y, at the vertex. The
bone keeps the offset it has from that frame in the bind pose (undeformed cage, armature rest
pose), so a bone need not sit exactly on its vertex. The wanted world matrices become
``matrix_basis`` (``core.bone_pose.basis_from_world``, closed-form affine inverses); a parent
that is itself a cloth bone contributes its *new* world matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...core.bone_pose import basis_from_world, split_basis
from ...core.cloth.bone_frames import bone_world, grid_frames, rest_offsets
from ...core.rotations import make_sign_continuous, quat_from_matrix

if TYPE_CHECKING:  # reading imports bpy; this module stays pure NumPy (benchmarks use it)
    from .reading import ClothSetupRead


@dataclass(frozen=True)
class BoneKeys:
    location: np.ndarray  # (F, B, 3) pose-bone location channels
    rotation: np.ndarray  # (F, B, 4) quaternions (w, x, y, z), sign-continuous over frames
    world: np.ndarray  # (F, B, 4, 4) the bones' world matrices, Blender units


def _frames(setup: ClothSetupRead, positions: np.ndarray) -> np.ndarray:
    grid = setup.grid
    # The 1-ring (rest cage and quads) keeps the roll defined where a fold turns the row into
    # the column; rest and animated frames come from this same call.
    return grid_frames(positions, vertex=setup.bone_vertex, below=grid.below, above=grid.above,
                       left=grid.left, right=grid.right, rest=setup.rest_world,
                       quads=setup.quads)


# The cloth writer's name for the one implementation (rods and tests import it from here).
pose_basis = basis_from_world


def bone_keys(setup: ClothSetupRead, positions: np.ndarray, pose: np.ndarray,
              armature_world: np.ndarray) -> BoneKeys:
    """Keys for one cage's bones.

    Args:
        positions: (F, N, 3) simulated cage, world, Blender units.
        pose: (F, bones, 4, 4) sampled armature-space pose (for parents that are not cloth).
        armature_world: (F, 4, 4) the armature's world matrix per frame, Blender units.
    """
    offsets = rest_offsets(grid_rest=_frames(setup, setup.rest_world),
                           bone_rest_world=setup.armature_rest_world @ setup.rest_matrix)
    world = bone_world(_frames(setup, positions), offsets)  # (F, B, 4, 4)
    parent_world = np.broadcast_to(armature_world[:, None], world.shape).copy()
    posed = setup.parent_index >= 0
    parent_world[:, posed] = armature_world[:, None] @ pose[:, setup.parent_index[posed]]
    cloth = setup.parent_cloth >= 0
    parent_world[:, cloth] = world[:, setup.parent_cloth[cloth]]
    basis = basis_from_world(world=world, rest=setup.rest_matrix, parent_world=parent_world,
                       parent_rest=setup.parent_rest)
    location, rotation, _scale = split_basis(basis)
    quats = make_sign_continuous(quat_from_matrix(rotation), axis=0)
    return BoneKeys(location=location, rotation=quats, world=world)
