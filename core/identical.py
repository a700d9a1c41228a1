"""Bitwise equality of solver inputs (models, drives, settings): the bakes are deterministic,
so two bit-identical inputs give bit-identical results and a result computed once (the live
preview's) can stand for a bake of the same input without solving again."""

from __future__ import annotations

import dataclasses

import numpy as np


def identical(a, b) -> bool:
    """True when ``a`` and ``b`` are the same value bit for bit: arrays by shape, dtype and
    bytes (NaN equals the same NaN, 0.0 differs from -0.0), dataclasses field by field, dicts,
    lists and tuples item by item, anything else by ``==``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return (a.shape == b.shape and a.dtype == b.dtype
                and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        return all(identical(getattr(a, f.name), getattr(b, f.name))
                   for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return bool(a == b)
