"""Which pass of a cloth substep raises the OUTPUT's energy: a ledger for the energy audits.

The energy tests (tests/core/cloth/test_cloth_energy.py, test_cloth_box_audit.py) count the
output: positions at the 240 fps frames, velocities from their central differences, spring
energy of the compliant links. At 240 Hz substeps frame i + 1 is the end of substep i + 1, so
the energy at frame i, E_i = |x_{i+1} - x_{i-1}|^2 / (8 h^2) / 2 + g z_i + springs(x_i), changes
within substep i + 1 only through x_{i+1}. This script records x before and after every pass
of every substep (the XPBD colours, the spans, the hard vertical sweeps, layers, colliders, max
distance, backstop, the contact sweep, the contacts' velocity pass) and splits each E_i - E_{i-1}
into: "inertia" (E_i with x_{i+1} the Verlet prediction, minus E_{i-1}: what the velocity the
solver carried, x - x_prev, does to the output) and each pass's change of E_i, summed over the
frames of the largest rise (`_rise`). Then a table around the rise: the output's and the
solver's kinetic energy (x_{i+1} - x_i against x - x_prev at the substep's end), the potential,
and each pass's share.

    .venv/bin/python tools/cloth_energy_ledger.py                # the frictionless ground
    .venv/bin/python tools/cloth_energy_ledger.py --friction 0.5
    .venv/bin/python tools/cloth_energy_ledger.py --scene capsule --damping default

`--matrix` skips the ledger and prints the rise of every drop of test_cloth_box_audit.py (box,
capsule and ground, each substep rate and damping the tests use) and of the box at 120 and
160 Hz with damping 0.05-0.5; `--box-shift` moves the box along x (metres) to see how fragile
a figure is (the box at 120 Hz spreads 0.1-3 % over shifts of 1-3 mm):

    .venv/bin/python tools/cloth_energy_ledger.py --matrix [--box-shift 0.001] [--jobs 2]

`--spread` runs the box at 120 Hz (undamped, default, damping 0.05-0.5) with the box moved
-3..3 mm along x and counts the drops over the audits' 1 % bound (the spread one sample hides);
`--cape-spread` moves the cape's body (the audit's hard-link test on a moving capsule) by
-10..10 mm and prints its worst hard-link strain (bound 0.5 %).

`--onset-restitution` runs any of these with session 48's variant patched in
(`install_onset_restitution`; not in the solver, docs/cloth-solver.md "Known limits"):

    .venv/bin/python tools/cloth_energy_ledger.py --matrix --onset-restitution --jobs 2

`--move-restitution` patches in session 49's (`install_move_restitution`), the same on every
vertex step 9 moved, above Müller et al. 2020's resting-contact speed, out of stiff cloths.
`--normal-restitution` (session 50, `install_normal_restitution`): the same only along the
collider's normal on the touched vertices; --matrix as main but the capsule at 480 Hz (1.24 ->
1.31 %), since step 10 already stops the touched vertices' normal velocity.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
sys.path.insert(0, str(ROOT))
import _waft  # noqa: E402

_waft.use_checkout()

from waft.core.cloth import solver  # noqa: E402

PASSES = ("solve_colour", "solve_spans", "sweep_levels", "push_layers", "clamp_max_distance",
          "push_backstop", "sweep_with_contacts")
METHODS = ("_collide", "_contact_velocity")
G = 9.81
H = 1.0 / 240.0


class Recorder:
    """Wraps the solver's passes: per substep a list of (pass, x after it), opened by the
    substep's start and the state before each pass (the gaps are the Verlet prediction, the
    pins and other in-line moves)."""

    def __init__(self):
        self.substeps: list[list[tuple[str, np.ndarray]]] = []
        self.current: list[tuple[str, np.ndarray]] = []

    def wrap(self, name, fn, *, method: bool = False):
        def run(*args, **kwargs):
            x = args[1] if method else args[0]
            self.current.append(("", x.copy()))
            out = fn(*args, **kwargs)
            self.current.append((name, x.copy()))
            return out
        return run

    def install(self) -> None:
        for name in PASSES:
            setattr(solver, name, self.wrap(name, getattr(solver, name)))
        for name in METHODS:
            setattr(solver._Bake, name, self.wrap(name.strip("_"), getattr(solver._Bake, name),
                                                  method=True))
        step = solver._Bake.step

        def recorded_step(bake, x, *args, **kwargs):
            self.current = [("start", x.copy())]
            step(bake, x, *args, **kwargs)
            self.substeps.append(self.current)

        solver._Bake.step = recorded_step


def install_onset_restitution() -> None:
    """Session 48's variant, not in the solver (docs/cloth-solver.md, Known limits): after
    step 9, restitution 0 along each vertex's own step-9 move `m` (Müller et al. 2020 §3.6 with
    m as the normal: the part of its velocity against m removed, nothing added) on the vertices
    whose contact begins in the substep (touched by step 7 or 9, not in the substep before: an
    impact, not a resting contact). The move is taken from step 7's colliders to the contacts'
    velocity pass, so it is step 9's only where nothing runs between them (no max distance or
    back stop: the audit's drops)."""
    bake_class = solver._Bake
    step, collide, velocity = bake_class.step, bake_class._collide, bake_class._contact_velocity

    def onset_step(bake, x, *args, **kwargs):
        bake.s48_after_collide = None
        bake.s48_stopped = False
        step(bake, x, *args, **kwargs)
        if not bake.s48_stopped:
            bake.s48_was = None

    def first_collide(bake, x, *args, **kwargs):
        collide(bake, x, *args, **kwargs)
        if getattr(bake, "s48_after_collide", 0) is None:
            bake.s48_after_collide = x.copy()

    def onset_velocity(bake, x, x_prev, touched, *args, **kwargs):
        was = getattr(bake, "s48_was", None)
        moved = x - bake.s48_after_collide
        size = np.linalg.norm(moved, axis=1)
        new = touched & (size > 1e-12)
        if was is not None:
            new &= ~was
        e = moved[new] / size[new, None]
        v = x[new] - x_prev[new]
        stop = np.minimum(np.einsum("ij,ij->i", v, e), 0.0)
        x_prev[new] += stop[:, None] * e
        bake.s48_was, bake.s48_stopped = touched.copy(), True
        velocity(bake, x, x_prev, touched, *args, **kwargs)

    solver._Bake.step = onset_step
    solver._Bake._collide = first_collide
    solver._Bake._contact_velocity = onset_velocity


# Session 49's variant: the resting-contact threshold of Müller et al. 2020 §3.6 (no restitution
# below 2 |g| h of normal speed), in metres per substep: 2 |g| h^2.
RESTING = 2.0


def _record_after_first_collide():
    """Patch the solver so each substep keeps where step 7's first collider pass left the
    vertices (`bake.s49_after_collide`), the start of the step 8-9 moves the restitution
    variants stop along; returns the unpatched `_contact_velocity` for them to call."""
    bake_class = solver._Bake
    step, collide = bake_class.step, bake_class._collide

    def move_step(bake, x, *args, **kwargs):
        bake.s49_after_collide = None
        step(bake, x, *args, **kwargs)

    def first_collide(bake, x, *args, **kwargs):
        collide(bake, x, *args, **kwargs)
        if getattr(bake, "s49_after_collide", 0) is None:
            bake.s49_after_collide = x.copy()

    bake_class.step = move_step
    bake_class._collide = first_collide
    return bake_class._contact_velocity


def install_move_restitution() -> None:
    """Session 49's variant, not in the solver (docs/cloth-solver.md, Known limits): after
    step 9, restitution 0 along each vertex's own step-9 move `m` on EVERY vertex it moved (not
    only where a contact begins, as `install_onset_restitution`), except where the vertex was
    moving against `m` slower than 2 |g| h (Müller et al. 2020 §3.6's resting contact: a
    position fix there is a contact holding the cloth up, and stopping along it ratchets the
    drape over a frictionless capsule) and in stiff cloths (`solver.STIFF_COMPLIANCE`: SHAKE's
    columns move their velocities already; stopped, rigid bending gained 6 % on its max
    distance and a ball). The move is taken from step 7's colliders to the contacts' velocity
    pass: step 9's where no max distance or back stop acts (the audit's drops)."""
    velocity = _record_after_first_collide()

    def move_velocity(bake, x, x_prev, touched, n, fr, f, *args, **kwargs):
        moved = x - bake.s49_after_collide
        size = np.linalg.norm(moved, axis=1)
        rows = (size > 1e-12) & bake.free & ~bake._stiff_cloths(f)[bake.cloth]
        e = moved[rows] / size[rows, None]
        along = np.einsum("ij,ij->i", x[rows] - x_prev[rows], e)
        resting = RESTING * np.linalg.norm(fr.accel_h2[rows], axis=1)
        stop = np.where(-along > resting, along, 0.0)
        x_prev[rows] += stop[:, None] * e
        velocity(bake, x, x_prev, touched, n, fr, f, *args, **kwargs)

    solver._Bake._contact_velocity = move_velocity


def install_normal_restitution() -> None:
    """Session 50's variant of `install_move_restitution`, not in the solver: restitution 0
    only along the collider's normal, on the vertices a shape collider touched in the substep:
    of each one's step-9 move m, the part along the normal n (m . n), and only where the
    vertex's velocity runs against it faster than 2 |g| h (the same resting exception); the
    step 9 moves across the normal, and the sweep's moves of untouched vertices, stay position
    fixes. Also skips stiff cloths."""
    velocity = _record_after_first_collide()

    def normal_velocity(bake, x, x_prev, touched, n, fr, f, g, alpha, frozen):
        moved = x - bake.s49_after_collide
        cm = bake.drive.collider_matrix
        M_all = solver.lerp_affine(cm[f], cm[g], alpha)
        stiff = bake._stiff_cloths(f)[bake.cloth]
        for k, kind, _friction, index, _by_axis, _edges in bake._near:
            rows = index[bake.touched_by[k][index] & bake.free[index] & ~stiff[index]]
            if rows.size == 0:
                continue
            M = M_all[k]
            normal, _ = solver.shape_normal(kind, x[rows], M, np.linalg.inv(M),
                                            bake.model.colliders, k)
            push = np.einsum("ij,ij->i", moved[rows], normal)
            rows, normal = rows[push > 1e-12], normal[push > 1e-12]
            along = np.einsum("ij,ij->i", x[rows] - x_prev[rows], normal)
            resting = RESTING * np.linalg.norm(fr.accel_h2[rows], axis=1)
            stop = np.where(-along > resting, along, 0.0)
            x_prev[rows] += stop[:, None] * normal
        velocity(bake, x, x_prev, touched, n, fr, f, g, alpha, frozen)

    solver._Bake._contact_velocity = normal_velocity


def _drops() -> dict[str, dict]:
    """The audit's drops by name: `_fall_on_a_box` keyword arguments."""
    drops: dict[str, dict] = {}
    named = {0.0: "undamped", None: "default"}
    for hz in (240, 160, 120):
        for damping in (0.0, None):
            drops[f"box {hz} Hz {named[damping]}"] = {"damping": damping, "substep": 1 / hz}
    for damping, hz in ((0.0, 240), (None, 240), (0.0, 120), (None, 120), (0.0, 480)):
        drops[f"capsule {hz} Hz {named[damping]}"] = {"damping": damping, "capsule": True,
                                                      "substep": 1 / hz}
    for friction, damping, hz in ((0.5, 0.0, 240), (0.5, None, 240), (0.5, None, 120),
                                  (0.0, 0.0, 240), (0.0, None, 240), (0.0, None, 120),
                                  (0.5, 0.0, 480)):
        drops[f"ground {friction} {hz} Hz {named[damping]}"] = {
            "damping": damping, "ground_friction": friction, "substep": 1 / hz}
    for hz in (120, 160):
        for damping in (0.05, 0.1, 0.2, 0.5):
            drops[f"box {hz} Hz damping {damping}"] = {"damping": damping, "substep": 1 / hz}
    return drops


def _rise_of(name: str, shift: float) -> tuple[str, float, float]:
    """One drop's rise and fall (J); the box moved `shift` metres along x."""
    import tests.core.cloth.test_cloth_box_audit as audit
    from tests.core.cloth.test_cloth_energy import _drop, _energy, _rise

    kwargs = _drops()[name]
    model, x, params = audit._fall_on_a_box(**kwargs, box=audit.BOX + np.array([shift, 0, 0]))
    return name, _rise(_energy(model, x, params, h=kwargs["substep"])), _drop(x, model)


def matrix(shift: float, jobs: int) -> None:
    """Every drop's rise in % of its fall."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs, initializer=_initializer, initargs=(VARIANT[0],)) as pool:
        names = list(_drops())
        for name, rise, drop in pool.map(_rise_of, names, [shift] * len(names)):
            print(f"{name:32s} {100 * rise / drop:6.2f} %  (fall {drop:.1f} J)", flush=True)


SHIFTS = (-0.003, -0.002, -0.001, 0.0, 0.001, 0.002, 0.003)


def spread(jobs: int) -> None:
    """The box at 120 Hz over SHIFTS: every drop's rise, then how many exceed 1 %."""
    from concurrent.futures import ProcessPoolExecutor

    names = [name for name in _drops() if name.startswith("box 120 Hz")]
    pairs = [(name, shift) for shift in SHIFTS for name in names]
    worst, over = 0.0, 0
    with ProcessPoolExecutor(jobs, initializer=_initializer, initargs=(VARIANT[0],)) as pool:
        rises = pool.map(_rise_of, [p[0] for p in pairs], [p[1] for p in pairs])
        for (name, shift), (_, rise, drop) in zip(pairs, rises, strict=True):
            share = 100 * rise / drop
            worst, over = max(worst, share), over + (share > 1.0)
            print(f"{1000 * shift:+4.0f} mm {name:28s} {share:6.2f} %", flush=True)
    print(f"{over} of {len(pairs)} drops over 1 %, worst {worst:.2f} %")


VARIANT: list[str | None] = [None]
VARIANTS = {"onset": install_onset_restitution, "move": install_move_restitution,
            "normal": install_normal_restitution}


def _initializer(variant: str | None) -> None:
    if variant is not None:
        VARIANTS[variant]()


CAPE_OFFSETS = (-0.01, -0.005, -0.002, 0.0, 0.002, 0.005, 0.01)


def _cape_strain(offset: float) -> float:
    import tests.core.cloth.test_cloth_box_audit as audit

    return audit._vertical_strain(*audit._cape_on_a_moving_body(offset))


def cape_spread(jobs: int) -> None:
    """The cape's worst hard-link strain (test_hard_vertical_links_hold_on_a_capsule_moving_with_
    the_character, bound 0.5 %) with its body moved CAPE_OFFSETS along y."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs, initializer=_initializer, initargs=(VARIANT[0],)) as pool:
        for offset, strain in zip(CAPE_OFFSETS, pool.map(_cape_strain, CAPE_OFFSETS),
                                  strict=True):
            print(f"body {1000 * offset:+4.0f} mm: hard links {100 * strain:.3f} % off",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", choices=("ground", "box", "capsule"), default="ground")
    parser.add_argument("--friction", type=float, default=0.0, help="the ground's friction")
    parser.add_argument("--damping", default="0", help="per second, or 'default'")
    parser.add_argument("--matrix", action="store_true", help="every audit drop's rise")
    parser.add_argument("--box-shift", type=float, default=0.0, help="metres along x")
    parser.add_argument("--spread", action="store_true",
                        help="the box at 120 Hz moved -3..3 mm: drops over 1 %%")
    parser.add_argument("--cape-spread", action="store_true",
                        help="the cape's hard-link strain with its body moved -10..10 mm")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--onset-restitution", action="store_const", const="onset",
                        dest="variant",
                        help="session 48's variant (install_onset_restitution), not landed")
    parser.add_argument("--move-restitution", action="store_const", const="move",
                        dest="variant",
                        help="session 49's variant (install_move_restitution), not landed")
    parser.add_argument("--normal-restitution", action="store_const", const="normal",
                        dest="variant",
                        help="session 50's variant (install_normal_restitution), not landed")
    args = parser.parse_args()
    VARIANT[0] = args.variant
    if args.variant is not None:
        VARIANTS[args.variant]()
    if args.matrix:
        matrix(args.box_shift, args.jobs)
        return
    if args.spread:
        spread(args.jobs)
        return
    if args.cape_spread:
        cape_spread(args.jobs)
        return
    recorder = Recorder()
    recorder.install()
    from tests.core.cloth.test_cloth_box_audit import _fall_on_a_box
    from tests.core.cloth.test_cloth_energy import _drop, _energy, _rise

    damping = None if args.damping == "default" else float(args.damping)
    scene = {"ground": {"ground_friction": args.friction}, "box": {},
             "capsule": {"capsule": True}}[args.scene]
    model, x, params = _fall_on_a_box(damping=damping, **scene)
    energy = _energy(model, x, params)
    moving = _energy(model, x, params, elastic=False)
    drop = _drop(x, model)
    pre = len(recorder.substeps) - (len(x) - 1)  # pre-roll substeps
    free = ~model.pinned
    X = x[:, free]

    def e_at(i: int, x_next: np.ndarray) -> float:
        """Kinetic + potential energy of frame i with x_{i+1} = x_next (springs apart)."""
        v = (x_next[free] - X[i - 1]) / (2.0 * H)
        return 0.5 * float(np.square(v).sum()) + G * float(X[i][:, 2].sum())

    def shares(i: int) -> tuple[float, list[tuple[str, float]]]:
        """Inertia and each pass's change of E_i within the substep ending at frame i + 1."""
        record = recorder.substeps[pre + i]
        inertia = e_at(i, record[1][1]) - moving[i - 2]
        out, last = [], e_at(i, record[1][1])
        for name, state in record[1:]:
            value = e_at(i, state)
            if name:
                out.append((name, value - last))
            last = value
        return inertia, out

    rise = _rise(energy)
    low = np.minimum.accumulate(energy)
    top = int(np.argmax(energy - low))
    bottom = int(np.argmin(energy[:top + 1]))
    print(f"{args.scene}, friction {args.friction}, damping {args.damping}: rise "
          f"{100 * rise / drop:.2f} % of the fall ({rise:.2f} of {drop:.1f} J), frames "
          f"{bottom + 1} -> {top + 1}")
    totals: dict[str, float] = {"inertia": 0.0}
    for i in range(bottom + 2, top + 2):  # energy[k] is frame k + 1
        inertia, passes = shares(i)
        totals["inertia"] += inertia
        seen: dict[str, int] = {}
        for name, change in passes:
            seen[name] = seen.get(name, 0) + 1
            key = name if name == "solve_colour" else f"{name} #{seen[name]}"
            totals[key] = totals.get(key, 0.0) + change
    totals["springs"] = float((energy - moving)[top] - (energy - moving)[bottom])
    for key, value in totals.items():
        print(f"  {key:28s} {value:+8.3f} J  {100 * value / drop:+6.2f} %")
    print("frame   E_i  kinetic: output solver  potential  passes (|change| > 0.05 J)")
    for i in range(max(2, bottom - 6), min(len(x) - 2, top + 6)):
        end = recorder.substeps[pre + i][-1][1]
        # The output's velocity is x_{i+1} - x_i; the solver's, x - x_prev at the substep's
        # end, is read from the next substep's prediction, x_pred - x = (x - x_prev) decay +
        # g h^2 (decay 1 undamped; pinned vertices are left out).
        if pre + i + 1 < len(recorder.substeps):
            nxt = recorder.substeps[pre + i + 1][1][1]
            carried = (nxt[free] - end[free]) / H
            carried[:, 2] += G * H
            solver_kinetic = 0.5 * float(np.square(carried).sum())
        else:
            solver_kinetic = float("nan")
        output_kinetic = 0.5 * float(np.square((X[i + 1] - X[i]) / H).sum())
        inertia, passes = shares(i)
        text = " ".join(f"{name}{change:+.2f}" for name, change in passes if abs(change) > 0.05)
        print(f"{i:4d} {energy[i - 1]:8.2f} {output_kinetic:8.2f} {solver_kinetic:7.2f} "
              f"{G * float(X[i][:, 2].sum()):9.2f}  inertia{inertia:+.2f} {text}")


if __name__ == "__main__":
    main()
