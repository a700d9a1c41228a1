"""Pose-bone ``matrix_basis`` from desired world matrices, for every bone of every frame at once.

Blender composes a pose bone's armature-space matrix from its parent's (Bone.matrix_local is the
rest matrix, armature space)::

    pose_k = pose_parent @ inverse(rest_parent) @ rest_k @ basis_k     (root: rest_k @ basis_k)

and world = object_matrix @ pose. Systems that simulate whole bone frames (cloth-bone grids,
ragdoll bodies) know the world matrix they want for each bone and need ``basis_k``; when the
parent is itself simulated its *new* world matrix must be used, which is why ``parent_world`` is an
input the caller assembles (simulated parents' results, or the sampled pose for the others).
"""

from __future__ import annotations

import numpy as np

from .affine import inverse_affine

_AFFINE_ROW = np.array([0.0, 0.0, 0.0, 1.0])


def affine_inverse(m: np.ndarray) -> np.ndarray:
    """Inverses of stacked 4×4 matrices (…, 4, 4).

    Affine ones (last row exactly 0 0 0 1, as every Blender object and bone matrix is): the
    closed-form 3×3 inverse (``core.bone_frames.inverse3``) and ``-inv @ t``, which handle any
    scale or shear; LAPACK's per-matrix call overhead would dominate a bake of every bone of every
    frame (a few µs per 4×4). Anything else goes through ``np.linalg.inv``.
    """
    m = np.asarray(m, dtype=np.float64)
    if not np.array_equal(m[..., 3, :], np.broadcast_to(_AFFINE_ROW, m.shape[:-1])):
        return np.linalg.inv(m)
    return inverse_affine(m)


def basis_from_world(
    *,
    world: np.ndarray,
    rest: np.ndarray,
    parent_world: np.ndarray,
    parent_rest: np.ndarray,
) -> np.ndarray:
    """``matrix_basis`` (…, 4, 4) giving each bone the world matrix ``world``.

    Args (keyword-only, all (…, 4, 4), broadcast against each other):
        world: the bone's desired world matrix (object matrix included).
        rest: ``Bone.matrix_local`` of the bone.
        parent_world: the parent bone's world matrix at that frame, ``object_matrix @ pose_parent``;
            for a root bone pass the armature's ``matrix_world``.
        parent_rest: ``Bone.matrix_local`` of the parent; identity for a root bone.

    basis = inverse(inverse(parent_rest) @ rest) @ inverse(parent_world) @ world
          = (inverse(rest) @ parent_rest) @ (inverse(parent_world) @ world).
    General affine inverses (object and bone matrices may carry scale), in closed form
    (``affine_inverse``); the rest offset is formed on the rest matrices' own (usually per-bone,
    not per-frame) shape, once.
    """
    offset_inverse = affine_inverse(rest) @ np.asarray(parent_rest, dtype=np.float64)
    local = affine_inverse(parent_world) @ np.asarray(world, dtype=np.float64)
    return offset_inverse @ local


def split_basis(basis: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(location (…, 3), rotation (…, 3, 3) orthonormal, scale (…, 3)) of ``matrix_basis``.

    Scale is each column's length; a negative determinant flips the first axis's scale so the
    rotation stays proper.
    """
    location = basis[..., :3, 3].copy()
    m = basis[..., :3, :3]
    # Column lengths as one einsum (np.linalg.norm over axis -2 is ~7x slower on 10^5 matrices).
    scale = np.sqrt(np.einsum("...ij,...ij->...j", m, m))
    rotation = m / np.maximum(scale[..., None, :], 1e-12)
    # Triple product (the closed-form determinant): np.linalg.det is a LAPACK call per 3×3.
    flip = np.einsum("...i,...i->...", np.cross(rotation[..., :, 0], rotation[..., :, 1]),
                     rotation[..., :, 2]) < 0.0
    if np.any(flip):
        scale[..., 0] = np.where(flip, -scale[..., 0], scale[..., 0])
        rotation[..., :, 0] = np.where(flip[..., None], -rotation[..., :, 0], rotation[..., :, 0])
    return location, rotation, scale
