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

from .rotations import (
    make_sign_continuous,
    matrix_from_quat,
    normalize,
    quat_between,
    quat_from_matrix,
)


def _to_armature_space(object_matrix: np.ndarray, positions_world: np.ndarray) -> np.ndarray:
    """(F, S, P, 3) world positions → armature space of each strand's object at that frame."""
    inv = np.linalg.inv(object_matrix)
    return np.einsum("fsij,fspj->fspi", inv[..., :3, :3], positions_world) + inv[..., None, :3, 3]


def _rotation_part(m: np.ndarray) -> np.ndarray:
    """Columns of a 3×3 scaled rotation normalised (bones carry scale, we key rotation only)."""
    return m / np.maximum(np.linalg.norm(m, axis=-2, keepdims=True), 1e-12)


def swung_pose_matrices(
    *, reference_matrix: np.ndarray, positions_armature: np.ndarray
) -> np.ndarray:
    """Armature-space pose matrices (F, S, B, 4, 4) whose Y axes follow the simulated segments.

    Each bone's head moves to its particle and its animated orientation is swung onto the segment
    from particle k to k + 1; a degenerate segment keeps the animated direction.
    """
    ref_axes = reference_matrix[..., :3, :3]
    animated_dir = normalize(ref_axes[..., :, 1])
    segment = positions_armature[:, :, 1:] - positions_armature[:, :, :-1]
    simulated_dir = normalize(segment, fallback=animated_dir)
    swing = matrix_from_quat(quat_between(animated_dir, simulated_dir))
    swung = reference_matrix.copy()
    swung[..., :3, :3] = swing @ ref_axes
    swung[..., :3, 3] = positions_armature[:, :, :-1]
    return swung


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
    swung = swung_pose_matrices(
        reference_matrix=reference_matrix,
        positions_armature=_to_armature_space(object_matrix, positions),
    )
    # Each bone's parent, new pose and rest: bone 0's is the unsimulated parent.
    parent_pose = np.concatenate((parent_matrix[:, :, None], swung[:, :, :-1]), axis=2)
    parent_rest = np.concatenate((parent_rest_matrix[:, None], rest_matrix[:, :-1]), axis=1)
    rest_offset = np.linalg.inv(parent_rest) @ rest_matrix
    basis = np.linalg.solve(parent_pose @ rest_offset, swung)
    quats = quat_from_matrix(_rotation_part(basis[..., :3, :3]))
    return make_sign_continuous(quats, axis=0)
