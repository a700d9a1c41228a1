"""Bone rotations from simulated chain particles.

A chain of ``B`` bones is simulated as ``B + 1`` particles: particle ``k`` is the head of bone
``k`` and particle ``k + 1`` its tail. Going back to bones, each bone keeps its animated
orientation and is *swung* by the shortest-arc rotation that takes its animated direction to its
simulated direction, so the twist the animator keyed about the bone's own axis survives (the
swing/twist split used by Kawaii Physics and VRM spring bones).

The result is expressed as Blender's ``matrix_basis`` rotation, which relates a pose-bone matrix
to its parent's (armature space)::

    pose_k = pose_parent @ inverse(rest_parent) @ rest_k @ basis_k

The parent of bone ``k > 0`` is the (new, simulated) bone ``k - 1``; the parent of bone 0 is the
chain's unsimulated parent, or none. Every bone of every frame is computed at once: there is no
loop over bones, chains or frames.
"""

from __future__ import annotations

import numpy as np

from ..affine import inverse3
from ..rotations import make_sign_continuous, normalize, quat_from_matrix, swing_matrix


def _rotation_part(m: np.ndarray) -> np.ndarray:
    """Columns of a 3×3 scaled rotation normalised (bones carry scale, we key rotation only)."""
    return m / np.maximum(np.linalg.norm(m, axis=-2, keepdims=True), 1e-12)


def swung_axes(*, reference_axes: np.ndarray, segments_armature: np.ndarray) -> np.ndarray:
    """Armature-space bone axes (F, S, B, 3, 3) whose Y axes follow the simulated segments.

    Each bone's animated orientation is swung by the shortest arc from its animated direction
    (its Y axis) onto the segment from particle k to k + 1; a degenerate segment keeps the
    animated direction. Only orientation matters for ``matrix_basis`` rotations: translations
    cancel out of the rotation part of ``inverse(parent @ offset) @ pose``.
    """
    animated_dir = normalize(reference_axes[..., :, 1])
    simulated_dir = normalize(segments_armature, fallback=animated_dir)
    return swing_matrix(animated_dir, simulated_dir) @ reference_axes


def chain_pose_rotations(
    *,
    rest_matrix: np.ndarray,
    parent_rest_matrix: np.ndarray,
    reference_matrix: np.ndarray,
    parent_matrix: np.ndarray,
    object_matrix: np.ndarray,
    positions: np.ndarray,
) -> np.ndarray:
    """Quaternions (F, S, B, 4), (w, x, y, z), of each chain bone's ``matrix_basis`` rotation.

    Args (keyword-only; ``F`` frames, ``S`` chains, ``B`` bones per chain padded, ``P = B + 1``):
        rest_matrix: (S, B, 4, 4) ``Bone.matrix_local`` of each chain bone; identity for padding.
        parent_rest_matrix: (S, 4, 4) ``matrix_local`` of bone 0's parent (identity if none).
        reference_matrix: (F, S, B, 4, 4) evaluated ``PoseBone.matrix`` (armature space).
        parent_matrix: (F, S, 4, 4) evaluated ``PoseBone.matrix`` of bone 0's parent (identity if
            none; then ``parent_rest_matrix`` must be identity too).
        object_matrix: (F, S, 4, 4) the armature object's ``matrix_world`` at each frame.
        positions: (F, S, P, 3) simulated particle positions in world space.

    The quaternions are sign-continuous along the frame axis so linear F-curve interpolation
    between keys never takes the long way round.
    """
    if positions.shape[2] != reference_matrix.shape[2] + 1:
        raise ValueError(
            f"positions hold {positions.shape[2]} particles per chain; "
            f"{reference_matrix.shape[2]} bones need {reference_matrix.shape[2] + 1}"
        )
    axes = chain_axes(reference_matrix=reference_matrix, object_matrix=object_matrix,
                      positions=positions)
    return basis_rotations(rest_matrix=rest_matrix, parent_rest_matrix=parent_rest_matrix,
                           parent_matrix=parent_matrix, axes=axes)


def chain_axes(*, reference_matrix: np.ndarray, object_matrix: np.ndarray,
               positions: np.ndarray) -> np.ndarray:
    """Armature-space bone axes (F, S, B, 3, 3): each animated bone swung onto its simulated
    segment (arguments as ``chain_pose_rotations``)."""
    object_inv = inverse3(object_matrix[..., :3, :3])
    segments_world = positions[:, :, 1:] - positions[:, :, :-1]
    segments = (object_inv[:, :, None] @ segments_world[..., None])[..., 0]
    return swung_axes(reference_axes=reference_matrix[..., :3, :3], segments_armature=segments)


def basis_rotations(*, rest_matrix: np.ndarray, parent_rest_matrix: np.ndarray,
                    parent_matrix: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Quaternions (F, S, B, 4) of the ``matrix_basis`` that give each chain bone the
    armature-space orientation ``axes`` (F, S, B, 3, 3), its parent being the bone before it
    (bone 0's: ``parent_matrix``), sign-continuous along the frames."""
    parent_axes = np.concatenate((parent_matrix[:, :, None, :3, :3], axes[:, :, :-1]), axis=2)
    parent_rest = np.concatenate((parent_rest_matrix[:, None, :3, :3], rest_matrix[:, :-1, :3, :3]),
                                 axis=1)
    rest_offset = inverse3(parent_rest) @ rest_matrix[..., :3, :3]
    basis = inverse3(parent_axes @ rest_offset) @ axes
    quats = quat_from_matrix(_rotation_part(basis))
    return make_sign_continuous(quats, axis=0)
