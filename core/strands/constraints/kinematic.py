"""Kinematic particles (roots and pinned nodes) copy the interpolated reference exactly."""

from __future__ import annotations

import numpy as np


def set_kinematic(x: np.ndarray, reference: np.ndarray, *, roots_only: bool,
                  kinematic: np.ndarray) -> None:
    """Set kinematic particles of `x` to `reference` (both (3, S, P)).

    `roots_only`: only particle 0 of each strand is kinematic, a plain slice copy. Otherwise
    `kinematic` (S, P) bool selects them.
    """
    if roots_only:
        x[:, :, 0] = reference[:, :, 0]
    else:
        np.copyto(x, reference, where=kinematic)
