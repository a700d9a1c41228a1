"""Helpers for the cloth-core tests: build a drive around a model with test defaults."""

from __future__ import annotations

import numpy as np

from waft.core.cloth import ClothDrive, ClothParams


def still_drive(model, frames: int, *, fps: float = 24.0, reference=None, space=None,
                collider_matrix=None, reset_frames=(), **params) -> ClothDrive:
    """A drive whose reference is the rest pose (or `reference`), world-space by default."""
    C = model.n_cloths
    if reference is None:
        reference = np.repeat(model.rest_positions[None], frames, axis=0)
    if space is None:
        space = np.broadcast_to(np.eye(4), (frames, C, 4, 4))
    if collider_matrix is None:
        collider_matrix = np.zeros((frames, model.colliders.count, 4, 4))
    settings = {"world_motion_fraction": 1.0}
    settings.update(params)
    return ClothDrive(fps=fps, reference=reference, space=space,
                      collider_matrix=collider_matrix,
                      params=ClothParams.defaults(C, **settings), reset_frames=reset_frames)
