"""core.transcendental: the same bits wherever the allocator puts the memory.

NumPy's AVX-512 kernels for exp/expm1/tan/arcsin/arctan2/power/cbrt fall back to the C library
when input and output memory touch; the wrappers allocate guarded outputs so the path (and the
bits) cannot depend on heap history.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

from waft.core import transcendental

RNG = np.random.default_rng(7)
X = RNG.uniform(-0.9, 0.9, 64)
Y = RNG.uniform(0.1, 2.0, 64)
CASES = [
    ("exp", np.exp, (X,)), ("expm1", np.expm1, (X,)), ("tan", np.tan, (X,)),
    ("arcsin", np.arcsin, (X,)), ("arctan2", np.arctan2, (X, Y)), ("power", np.power, (Y, X)),
    ("cbrt", np.cbrt, (Y,)),
]


def _touching(ufunc, args):
    """`ufunc(*args)` with the first input ending exactly where the output begins."""
    n = len(args[0])
    buffer = np.empty(2 * n)
    buffer[:n] = args[0]
    ufunc(buffer[:n], *args[1:], out=buffer[n:])
    return buffer[n:].copy()


@pytest.mark.parametrize(("name", "ufunc", "args"), CASES, ids=[c[0] for c in CASES])
def test_equal_to_numpy_on_separate_memory(name, ufunc, args):
    assert np.array_equal(getattr(transcendental, name)(*args), ufunc(*args))


@pytest.mark.parametrize(("name", "ufunc", "args"), CASES, ids=[c[0] for c in CASES])
def test_same_bits_after_any_heap_history(name, ufunc, args):
    f = getattr(transcendental, name)
    reference = f(*args)
    gc.disable()
    try:
        for seed in range(200):
            sizes = np.random.default_rng(seed).integers(1, 3 * len(X), 8)
            junk = [np.empty(int(s)) for s in sizes]
            del junk[::2]
            assert np.array_equal(f(*args), reference), seed
            # 0-d and broadcast operands take the same path as arrays.
            assert f(*(a[3] for a in args)) == reference[3]
    finally:
        gc.enable()


def test_numpy_alone_depends_on_where_the_output_lands():
    """The hazard the module exists for (on CPUs whose NumPy uses SVML kernels)."""
    differs = [name for name, ufunc, args in CASES
               if not np.array_equal(_touching(ufunc, args), ufunc(*args))]
    if not differs:
        pytest.skip("this CPU/NumPy computes the same bits on both paths")
    assert "arctan2" in differs


def test_solver_code_calls_the_guarded_functions():
    """A direct np.exp & co. in core/ would bring heap-dependent bits back."""
    import re
    from pathlib import Path

    import waft.core

    pattern = re.compile(r"\bnp\.(exp|expm1|exp2|log|log1p|log2|log10|tan|arcsin|arccos|arctan"
                         r"|arctan2|power|cbrt|sinh|cosh|tanh|arcsinh|arccosh|arctanh)\(")
    root = Path(waft.core.__file__).parent
    offenders = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py"))
                 if path.name not in ("transcendental.py",) and not path.name.startswith("_bench")
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if pattern.search(line)]
    assert not offenders
