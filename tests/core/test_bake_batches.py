"""The bake prepares a frame's substeps in batches (core/strands/solver.py
`_Bake.frame_drives`): the
Verlet source terms and the shock propagation's root motion must be what each substep's own
interpolated reference gives, also when shock propagation is switched off and on again."""

from __future__ import annotations

import dataclasses

import numpy as np

from waft import core
from waft.core.strands.constraints.shock import root_motion
from waft.core.strands.drive import validate_drive


def test_batched_sources_and_root_motion_match_each_substep(rig):
    rest = rig.vertical_chain(bones=6, length=0.05)
    frames, fps = 12, 24.0
    shock = np.zeros((frames, 2))
    shock[:4] = 0.5  # on, off for frames 4-6, on again
    shock[7:] = 0.8

    def sway(t):  # the root swings and its segment turns (reference per frame below)
        return np.stack([0.2 * np.sin(5 * t), 0.1 * np.cos(3 * t), 0 * t], -1)

    model, drive = rig.build([rest, rest + (0.3, 0.0, 0.0)], frames=frames, fps=fps,
                             root_motion=sway, shape_stiffness=0.2, shock_propagation=shock)
    reference = drive.reference.copy()
    reference[:, :, 1:] += 0.05 * np.sin(np.arange(frames))[:, None, None, None]  # a turning
    drive = core.Drive(fps=fps, reference=reference, kinematic=drive.kinematic,
                       space=drive.space, collider_matrix=drive.collider_matrix,
                       params=drive.params)
    bake = core.strands.solver._Bake(model, validate_drive(model, drive), core.SolverSettings())
    h = bake.h
    start, end = np.empty_like(bake.ws.reference), np.empty_like(bake.ws.reference)
    n, checked, shocked = 0, 0, 0
    for i in range(1, frames):
        n_stop = n
        while n_stop * h < i / fps - 1e-9:
            n_stop += 1
        for sd in bake.frame_drives(n, n_stop):
            c = sd.coefficients
            bake.reference_at(n * h, start)
            bake.reference_at((n + 1) * h, end)
            A, B, alpha = sd.source_terms
            assert np.allclose(A + alpha * B, c.base_h2 + c.pull * end, rtol=0, atol=1e-12)
            if c.shock is not None:
                expected = root_motion(start, end, c.shock)
                assert np.allclose(sd.shock_motion[0], expected[0], rtol=0, atol=1e-12)
                assert np.allclose(sd.shock_motion[1], expected[1], rtol=0, atol=1e-12)
                shocked += 1
            else:
                assert sd.shock_motion is None
            checked += 1
            n += 1
    assert checked == n and 0 < shocked < checked
    # The root really moves between substeps (the comparison is not vacuous).
    assert np.abs(root_motion(start, end, np.ones(2))[1]).max() > 1e-4


def test_coefficients_are_rebuilt_only_where_sampled_params_change(rig, monkeypatch):
    """The add-on samples every setting per frame: unanimated ones must not rebuild the
    per-frame coefficients, animated ones must, and the result is the same as the static run."""
    rest = rig.vertical_chain(bones=5, length=0.1)
    frames = 10
    model, drive = rig.build([rest, rest + (0.2, 0.0, 0.0)], frames=frames,
                             root_motion=lambda t: np.stack([0.2 * np.sin(4 * t), 0 * t, 0 * t],
                                                            -1),
                             damping=0.5, shape_stiffness=0.1, bend_compliance=0.01)
    calls = []
    original = core.strands.solver.frame_coefficients

    def counting(ws, kinematic, params, frame):
        calls.append(frame)
        return original(ws, kinematic, params, frame)

    monkeypatch.setattr(core.strands.solver, "frame_coefficients", counting)

    def bake(params):
        calls.clear()
        d = core.Drive(fps=drive.fps, reference=drive.reference, kinematic=drive.kinematic,
                       space=drive.space, collider_matrix=drive.collider_matrix, params=params)
        return core.bake(model, d).positions, list(calls)

    static, static_calls = bake(drive.params)
    per_frame = {f.name: np.repeat(np.asarray(getattr(drive.params, f.name))[:1], frames, axis=0)
                 for f in dataclasses.fields(drive.params)}
    sampled, sampled_calls = bake(core.StrandParams(**per_frame))
    assert np.array_equal(sampled, static)
    assert sampled_calls == static_calls == [0]
    animated = dict(per_frame)
    animated["damping"] = per_frame["damping"].copy()
    animated["damping"][5:8] = np.array([2.0, 3.0, 3.0])[:, None, None]  # keyed, 0.5 from 8
    moved, animated_calls = bake(core.StrandParams(**animated))
    assert animated_calls == [0, 5, 6, 8]  # frame 7 keeps frame 6's coefficients
    assert np.array_equal(moved[:5], static[:5])  # before the keyed frames
    assert np.abs(moved[7:] - static[7:]).max() > 1e-6
