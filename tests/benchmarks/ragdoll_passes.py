"""Calls per substep of each pass of a ragdoll substep (issue 10: "report the NumPy calls per
substep"; issue 14: "show it with a profile: calls per substep, time per call").

`bench_ragdoll.py`'s two cases rebuilt in the core, without Blender: the 17-body `_bench_cases`
humanoid on 45° round cones and ±30° twist, the hips swinging and turning (its formula), no
ground, 24 fps, 240 Hz, 4 iterations, self-collision on. ``limp``: hips kinematic, the others
FREE, hanging on their limits; ``driven``: every body DRIVEN on 0.6 motors, the root locked.

Calls are every Python and C function entered under each function `Level.step` calls directly
(a `sys.setprofile` hook, cProfile's way of counting: ufunc arithmetic on arrays is not a call);
the step's own C calls are one row, and ``<listcomp>`` (before Python 3.12) is the step's list
of `limit_directions`. The CPU time per frame is a separate unprofiled bake.

    python tests/benchmarks/ragdoll_passes.py [--frames 40] [--case limp|driven|both]
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
import time

import numpy as np
from _waft import use_checkout

use_checkout()

import waft.core.ragdoll as ragdoll  # noqa: E402
from waft.core.colliders import ColliderSet  # noqa: E402
from waft.core.ragdoll import _bench_cases as cases  # noqa: E402
from waft.core.ragdoll import level  # noqa: E402

FPS, SUBSTEP_HZ, ITERATIONS = 24.0, 240, 4


def _rotation(ax: float, ay: float, az: float) -> np.ndarray:
    """Z ⊗ Y ⊗ X Euler rotation (Blender's XYZ order, as `ragdoll_rigs.set_rotation`)."""
    cx, sx, cy, sy, cz, sz = (math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay),
                              math.cos(az), math.sin(az))
    x = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    y = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    z = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return z @ y @ x


def case(*, driven: bool, frames: int):
    """(model, drive, settings) of bench_ragdoll's limp or driven configuration."""
    rest = cases.humanoid_rest(17)
    n = len(rest.names)
    rest = type(rest)(**{**rest.__dict__,
                         "swing_limit": np.full((n, 2), math.radians(45.0)),
                         "twist_limit": np.tile(np.radians([-30.0, 30.0]), (n, 1))})
    model = ragdoll.build_ragdoll_model(
        ragdolls=[rest], colliders=ColliderSet.create(names=(), kind=[], size=[]))
    pivot = np.eye(4)
    pivot[:3, 3] = rest.rest_matrix[0, :3, 3]
    back = np.eye(4)
    back[:3, 3] = -pivot[:3, 3]
    target = np.empty((frames, n, 4, 4))
    for f in range(frames):  # bench_ragdoll.animate_hips, the whole body carried rigidly
        phase = 2.0 * math.pi * (f + 1) / 36.0
        move = np.eye(4)
        move[:3, :3] = _rotation(0.2 * math.sin(phase), 0.3 * math.sin(phase),
                                 0.6 * math.sin(0.5 * phase))
        move[:3, 3] = (0.25 * math.sin(phase), -0.02 * (f + 1), 0.1 * math.cos(2 * phase))
        target[f] = pivot @ move @ back @ rest.rest_matrix
    mode = np.full((1, n), int(ragdoll.BodyMode.DRIVEN if driven else ragdoll.BodyMode.FREE))
    if not driven:
        mode[0, 0] = int(ragdoll.BodyMode.KINEMATIC)
    params = ragdoll.RagdollParams.defaults(n, 1, motor_strength=0.6, mode=mode,
                                            root_lock=np.array([[driven]]), blend=0.0)
    drive = ragdoll.RagdollDrive(fps=FPS, target=target,
                                 collider_matrix=np.zeros((frames, 0, 4, 4)), params=params)
    return model, drive, ragdoll.RagdollSettings(substep=1.0 / SUBSTEP_HZ,
                                                 iterations=ITERATIONS)


def calls_by_pass(model, drive, settings) -> tuple[dict[str, int], int]:
    """({pass: calls}, substeps) of one bake."""
    step = level.Level.step.__code__
    calls: collections.Counter = collections.Counter()
    where = {"inside": False, "depth": 0, "pass": ""}
    substeps = [0]

    def hook(frame, event, arg) -> None:
        if event == "call":
            if frame.f_code is step:
                where.update(inside=True, depth=0)
                substeps[0] += 1
                return
            if not where["inside"]:
                return
            where["depth"] += 1
            if where["depth"] == 1:
                where["pass"] = frame.f_code.co_name
            calls[where["pass"]] += 1
        elif event == "c_call" and where["inside"]:
            calls[where["pass"] if where["depth"] else "(the step's own C calls)"] += 1
        elif event == "return" and where["inside"]:
            if frame.f_code is step:
                where["inside"] = False
            else:
                where["depth"] -= 1

    sys.setprofile(hook)
    try:
        ragdoll.bake_ragdoll(model, drive, settings)
    finally:
        sys.setprofile(None)
    return dict(calls), substeps[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--case", choices=("limp", "driven", "both"), default="both")
    args = parser.parse_args()
    for name in ("limp", "driven") if args.case == "both" else (args.case,):
        model, drive, settings = case(driven=name == "driven", frames=args.frames)
        start = time.process_time()
        ragdoll.bake_ragdoll(model, drive, settings)
        cpu = time.process_time() - start
        calls, substeps = calls_by_pass(model, drive, settings)
        total = sum(calls.values()) / substeps
        print(f"{name}: {1e3 * cpu / args.frames:.1f} CPU ms/frame, {total:.0f} calls/substep, "
              f"{1e6 * cpu / (substeps * total):.2f} CPU µs per call (unprofiled bake)")
        for pass_, count in sorted(calls.items(), key=lambda item: -item[1]):
            if count / substeps >= 1.0:
                print(f"  {pass_:32s} {count / substeps:7.1f}")


if __name__ == "__main__":
    main()
