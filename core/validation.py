"""Range checks on setting arrays, shared by every system's parameter validation."""

from __future__ import annotations

import numpy as np


def out_of_range(values: np.ndarray, *, allow_inf: bool, low=None, high=None) -> np.ndarray:
    """Where a setting is invalid: NaN, infinite (unless ``allow_inf``), below ``low`` or above
    ``high`` (either may be None)."""
    bad = np.isnan(values) | (np.isinf(values) & (not allow_inf))
    if low is not None:
        bad |= values < low
    if high is not None:
        bad |= values > high
    return bad
