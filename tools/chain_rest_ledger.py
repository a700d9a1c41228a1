"""Where a resting chain's creep comes from: each pass's share of its particles' motion along
the ground over the last second of `tools/chain_rest_spread.py --rest`'s drape
(`python tools/chain_rest_ledger.py [--preset SOFT] [--friction 0.3] [--height 0.15]`).

The solver's passes are wrapped (the bake's bits are unchanged: the printed speed is the
spread's) and every particle's x motion (um, the chain lies along +x) is summed per pass over
the last second's substeps: "the first pass" (Verlet with the shape pull, bending,
the first SHAKE's and FTL's moves are listed apart as "shake"), the first collider pass (its
pushes and friction), the contact rounds' SHAKE and colliders, and the positions-only passes.
The rows add up to "total", the particle's motion over that second.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


class Ledger:
    """Sums of each pass's x motion per particle while `recording`."""

    def __init__(self):
        self.sums: dict[str, np.ndarray] = {}
        self.recording = False
        self.x: np.ndarray | None = None  # the state being stepped
        self.mark: np.ndarray | None = None  # x when the last listed pass ended
        self.phase = "the first pass"

    def add(self, name: str, motion: np.ndarray) -> None:
        if self.recording:
            self.sums[name] = self.sums.get(name, 0.0) + motion[0, 0].copy()

    def settle(self) -> None:
        """The motion since the last listed pass, to the current phase."""
        self.add(self.phase, self.x - self.mark)
        self.mark = self.x.copy()

    def wrap_pass(self, fn, label: str, position: int):
        """`fn` (x is its argument `position`) listed as `label` in the current phase."""
        def wrapped(*args, **kwargs):
            if self.x is None or args[position] is not self.x:
                return fn(*args, **kwargs)  # not the stepped state (the start pose's pushes)
            self.settle()
            result = fn(*args, **kwargs)
            self.add(f"{label} in {self.phase}", self.x - self.mark)
            self.mark = self.x.copy()
            return result
        return wrapped

    def wrap_phase(self, fn, phase: str):
        """`fn` (x its third argument) run as `phase`."""
        def wrapped(*args, **kwargs):
            if self.x is None or args[2] is not self.x:
                return fn(*args, **kwargs)
            self.settle()
            outer, self.phase = self.phase, phase
            result = fn(*args, **kwargs)
            self.settle()
            self.phase = outer
            return result
        return wrapped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="SOFT")
    parser.add_argument("--friction", type=float, default=0.3)
    parser.add_argument("--height", type=float, default=0.15)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    import tools.chain_rest_spread as spread
    spread._tests()  # registers `waft`, the package the tests' bakes run
    solver = importlib.import_module("waft.core.strands.solver")
    ledger = Ledger()
    substeps = [0]
    first = [None]
    step = solver.step

    def counted_step(model, state, sd, h, *, workspace=None):
        substeps[0] += 1
        ledger.recording = first[0] is not None and substeps[0] > first[0]
        ledger.x, ledger.mark = state.x, state.x.copy()
        start = state.x.copy()
        ledger.phase = "the first pass"
        step(model, state, sd, h, workspace=workspace)
        ledger.settle()
        ledger.add("total", state.x - start)

    solver.step = counted_step
    solver._collide = ledger.wrap_pass(solver._collide, "colliders", 2)
    solver.solve_shake = ledger.wrap_pass(solver.solve_shake, "shake", 0)
    solver._contact_rounds = ledger.wrap_phase(solver._contact_rounds, "the contact rounds")
    solver._lengths_after_contact = ledger.wrap_phase(solver._lengths_after_contact,
                                                      "the positions-only passes")

    def bake() -> float:
        return spread.rest_speed(args.preset, args.friction, args.height, args.seconds)

    bake()  # counts the substeps
    first[0] = substeps[0] - int(round(substeps[0] / args.seconds))
    substeps[0] = 0
    speed = bake()
    print(f"{args.preset} friction {args.friction:g} root {args.height * 100:g} cm: contacts' "
          f"speed {speed * 1e3:.3f} mm/s; x motion (um) over the last second, particle 0..")
    for name in sorted(ledger.sums, key=lambda n: (n == "total", n)):
        row = ledger.sums[name]
        if np.any(np.abs(row) >= 5e-8):  # 0.05 um
            print(f"  {name:42s}" + "".join(f"{1e6 * v:9.1f}" for v in row))


if __name__ == "__main__":
    main()
