"""Where a substep of the hair benchmark's guide solve goes: CPU time, calls, NumPy calls by pass.

    python tools/hair_profile.py [--frames 12] [--counts]

Bakes tests/benchmarks/bench_hair.py's `hair_guides` scene (1,000 x 32 guides, 240 Hz, eight body
spheres, the 32^3 voxel grid, a 360 deg/s head turn) and prints a Markdown table, per substep
of frames 2..N (frame 1, with no contact yet, is left out): calls of each pass, its exclusive
process CPU time (a timer around each of the solver's passes, nested ones subtracted) and share.
Process CPU, not wall time: the machine is shared, and CPU time is the steadier figure (shares
more than absolute times). With `--counts`, the bake counts NumPy calls by pass instead:
ufuncs called through `np.<name>` or as operators (counting wrappers, `np.set_numeric_ops`),
ndarray methods and NumPy's C functions (`sys.setprofile` c_call events), and the element
passes of the ufunc calls: the numbers each ran over (its largest array operand) in units of
the state's S x Ps particles, so one (3, S, Ps) operation counts 3 (methods such as `take` and
`copyto` are counted as calls, not as elements); the wrappers slow the bake, so it is not
timed. Either way the solver computes its usual bits (the wrappers call
the same functions).
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests" / "benchmarks"))

import bench_hair  # noqa: E402

from waft.core.strands import solver  # noqa: E402

# (solver name, label): the passes timed, inner ones first where they nest.
PASSES = (
    ("solve_bending", "bending"), ("solve_shake", "SHAKE"), ("solve_ftl", "FTL sweep"),
    ("_sphere_distances", "sphere broad phase (bounds + box test)"),
    ("push_out_spheres", "sphere narrow phase"), ("push_out_candidates", "sphere narrow phase"),
    ("resolve_creases", "creases"), ("_slide_to_length", "slide to length"),
    ("solve_voxel_friction", "voxel friction"), ("set_kinematic", "set_kinematic"),
    ("_collide", "collider pass (rest)"), ("_contact_rounds", "contact rounds (rest)"),
    ("_lengths_after_contact", "positions-only passes (rest)"),
    ("_slide_and_push", "slide and push (rest)"), ("step", "step: Verlet, the rest"),
)


def _job(frames: int):
    rest = bench_hair.guides_rest()
    model, drive = bench_hair.solver_case(rest, frames + 1)
    job = bench_hair.core.bake_steps(
        model, drive, bench_hair.core.SolverSettings(substep=1.0 / bench_hair.SUBSTEP_HZ))
    next(job)  # frame 0
    next(job)  # frame 1
    return job


def _wrap(enter, leave) -> None:
    for name, label in PASSES:
        original = getattr(solver, name)

        def wrapped(*args, _f=original, _label=label, **kwargs):
            enter(_label)
            try:
                return _f(*args, **kwargs)
            finally:
                leave(_label)
        setattr(solver, name, functools.wraps(original)(wrapped))


def times(frames: int) -> None:
    total = collections.Counter()
    calls = collections.Counter()
    stack: list[list] = []

    def enter(label):
        stack.append([time.process_time(), 0.0])

    def leave(label):
        start, inner = stack.pop()
        spent = time.process_time() - start
        total[label] += spent - inner
        calls[label] += 1
        if stack:
            stack[-1][1] += spent

    _wrap(enter, leave)
    job = _job(frames)
    total.clear()
    calls.clear()
    start = time.process_time()
    for _ in job:
        pass
    cpu = time.process_time() - start
    substeps = (frames - 1) * round(bench_hair.SUBSTEP_HZ / bench_hair.FPS)
    print(f"{frames - 1} frames, {substeps} substeps: {1e3 * cpu / (frames - 1):.1f} ms CPU a "
          f"frame under the timers, {1e3 * cpu / substeps:.2f} ms a substep\n")
    print("| pass | calls a substep | ms a substep | share |\n|---|---|---|---|")
    for label, spent in sorted(total.items(), key=lambda item: -item[1]):
        print(f"| {label} | {calls[label] / substeps:.1f} | {1e3 * spent / substeps:.2f} | "
              f"{100 * spent / cpu:.0f} % |")
    outside = cpu - sum(total.values())
    print(f"| outside `step` (drives, output) | | {1e3 * outside / substeps:.2f} | "
          f"{100 * outside / cpu:.0f} % |")


class _Counting:
    """A ufunc that counts its calls (and its reduce/accumulate/at calls) in `counter`."""

    def __init__(self, ufunc, counter, current, elements=None):
        self._ufunc, self._counter, self._current = ufunc, counter, current
        self._elements = elements

    def __call__(self, *args, **kwargs):
        self._counter[self._current[-1]] += 1
        if self._elements is not None:
            # Elements the call runs over: its largest array operand (the result's size for an
            # elementwise ufunc; broadcasts and scalars are not counted twice).
            out = kwargs.get("out")
            arrays = [a for a in (*args, *(out if isinstance(out, tuple) else (out,)))
                      if isinstance(a, np.ndarray)]
            self._elements[self._current[-1]] += max((a.size for a in arrays), default=1)
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        if name not in ("reduce", "accumulate", "at", "outer", "reduceat"):
            return attr

        def method(*args, **kwargs):
            self._counter[self._current[-1]] += 1
            return attr(*args, **kwargs)
        return method


def counts(frames: int) -> None:
    numpy_calls = collections.Counter()
    elements = collections.Counter()  # numbers the ufunc calls ran over, by pass
    calls = collections.Counter()
    current = ["outside `step`"]

    def enter(label):
        current.append(label)
        calls[label] += 1

    def leave(label):
        current.pop()

    _wrap(enter, leave)
    job = _job(frames)
    calls.clear()
    ufuncs = {name: getattr(np, name) for name in dir(np)
              if isinstance(getattr(np, name), np.ufunc)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        operators = np.set_numeric_ops()
        np.set_numeric_ops(**{name: _Counting(u, numpy_calls, current, elements)
                              for name, u in operators.items() if isinstance(u, np.ufunc)})
    for name, u in ufuncs.items():
        setattr(np, name, _Counting(u, numpy_calls, current, elements))

    def profile(frame, event, arg):
        if event == "c_call" and (isinstance(getattr(arg, "__self__", None), np.ndarray)
                                  or (getattr(arg, "__module__", None) or "").startswith("numpy")):
            numpy_calls[current[-1]] += 1

    sys.setprofile(profile)
    try:
        for _ in job:
            pass
    finally:
        sys.setprofile(None)
        for name, u in ufuncs.items():
            setattr(np, name, u)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            np.set_numeric_ops(**operators)
    substeps = (frames - 1) * round(bench_hair.SUBSTEP_HZ / bench_hair.FPS)
    # One element pass: a ufunc over as many numbers as the state has particles (S x Ps), so
    # a (3, S, Ps) operation counts 3.
    state = bench_hair.GUIDES * solver.solver_particles(bench_hair.PARTICLES)
    print(f"\nNumPy calls a substep: {sum(numpy_calls.values()) / substeps:.0f}, ufunc element "
          f"passes (S x Ps = {state} numbers each): {sum(elements.values()) / substeps / state:.0f}"
          "\n")
    print("| pass | NumPy calls a substep | a call | ufunc element passes a substep |\n"
          "|---|---|---|---|")
    for label, n in sorted(numpy_calls.items(), key=lambda item: -item[1]):
        per_call = f"{n / calls[label]:.0f}" if calls[label] else ""
        print(f"| {label} | {n / substeps:.0f} | {per_call} | "
              f"{elements[label] / substeps / state:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=12)
    parser.add_argument("--counts", action="store_true", help="also count NumPy calls by pass")
    args = parser.parse_args()
    if args.counts:
        counts(args.frames)
    else:
        times(args.frames)


if __name__ == "__main__":
    main()
