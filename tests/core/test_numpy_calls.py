"""core/numpy_calls.filled: the rows the strand passes floor and cap with (np.maximum /
np.minimum against an array runs NumPy's SIMD loop, against a scalar its plain loop) must give
the bits the scalar operand gives, NaN and signed zeros included."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.numpy_calls import filled


def test_filled_rows_hold_their_value_and_keep_signed_zeros_apart():
    short = filled(-0.0, 3)
    assert short.shape == (3,) and not short.flags.writeable
    longer = filled(0.0, 1000)  # +0.0: its own row, not -0.0's grown
    assert np.all(np.signbit(filled(-0.0, 2000)))
    assert not np.any(np.signbit(longer))
    assert np.all(filled(1e-12, 10) == 1e-12) and np.all(filled(1e-12, 5000) == 1e-12)


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
@pytest.mark.parametrize("value", [1e-12, 0.0, -0.0, 1.0])
def test_floor_against_a_row_gives_the_scalar_floors_bits(ufunc, value):
    rng = np.random.default_rng(7)
    a = rng.normal(scale=1e-11, size=5000)
    a[::7] = 0.0
    a[1::7] = -0.0
    a[2::11] = np.nan
    a[3::13] = 5e-324  # subnormal
    a[4::17] = value
    by_scalar = ufunc(a, value)
    by_row = ufunc(a, filled(value, a.size))
    assert by_scalar.tobytes() == by_row.tobytes()
