"""A small rig's substeps run on Python floats from one output frame to the next
(`core/strands/float_step.py`): the same bits as the array `step`, whole bakes compared with the
float path switched off, and no array `step` at all where the rig uses nothing else."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import waft.core.strands.float_step as float_step
import waft.core.strands.solver as solver
from waft import core


def _tails(*, strands: int, fps: float, sample_rate: float, frames: int, teleport: bool,
           animated_damping: bool, bend_compliance: float, collider: bool):
    """`strands` 4-bone tails (one with a pinned root only), roots swinging fast on a
    figure-eight sampled at `sample_rate`, written at `fps`."""
    P = 5
    samples = int(np.ceil((frames - 1) / fps * sample_rate - 1e-9)) + 1
    rest = np.zeros((strands, P, 3))
    rest[:, :, 0] = 0.1 * np.arange(strands)[:, None]
    rest[:, :, 2] = 1.5 - 0.08 * np.arange(P)[None]
    kinematic = np.zeros((strands, P), dtype=bool)
    kinematic[:, 0] = True
    names = ["Ball"] if collider else []
    model = core.build_strand_model(
        chains=[core.ChainRest(setup="T", name=f"T: Tail{s}", rest_positions=rest[s],
                               kinematic=kinematic[s]) for s in range(strands)],
        colliders=core.ColliderSet.create(names=names,
                                          kind=[core.ColliderKind.ELLIPSOID] * len(names),
                                          size=[0.1] * len(names), friction=[0.3] * len(names)))
    t = np.arange(samples) / sample_rate
    reference = np.repeat(rest[None], samples, axis=0)
    reference[..., 0] += 0.3 * np.sin(2.0 * np.pi * 1.5 * t)[:, None, None]
    reference[..., 1] += 0.2 * np.sin(2.0 * np.pi * 3.0 * t)[:, None, None]
    if teleport:  # a cut: the carry over it runs on arrays
        reference[samples // 2 :, :, :, 0] += 2.0
    damping = np.full((1, strands, P), 1.0)
    if animated_damping:  # coefficients that change mid-shot
        damping = np.where(t[:, None, None] < t[-1] / 3, 1.0, 4.0) * np.ones((1, strands, P))
    ball = np.tile(np.eye(4), (samples, len(names), 1, 1))
    ball[:, :, :3, 3] = (0.12, 0.0, 1.3)
    drive = core.Drive(fps=sample_rate, reference=reference, kinematic=kinematic,
                       space=np.broadcast_to(np.eye(4), (samples, strands, 4, 4)),
                       collider_matrix=ball, output_fps=fps, output_frames=frames,
                       params=core.StrandParams.defaults(strands, P, damping=damping,
                                                         bend_compliance=bend_compliance))
    return model, drive


CASES = [
    dict(strands=1, fps=24.0, sample_rate=120.0, frames=60, teleport=False,
         animated_damping=False, bend_compliance=1e-4, collider=False),
    dict(strands=3, fps=25.0, sample_rate=120.0, frames=50, teleport=False,
         animated_damping=True, bend_compliance=1e-4, collider=False),  # frames off the grid
    dict(strands=2, fps=30.0, sample_rate=30.0, frames=45, teleport=True,
         animated_damping=False, bend_compliance=1e-3, collider=False),
    dict(strands=1, fps=24.0, sample_rate=120.0, frames=30, teleport=False,
         animated_damping=False, bend_compliance=1e-4, collider=True),  # arrays throughout
    dict(strands=2, fps=24.0, sample_rate=120.0, frames=30, teleport=False,
         animated_damping=False, bend_compliance=1e-6, collider=False),  # stiff: direct solve
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("iterations,preroll", [(1, 0), (2, 6)])
def test_float_substeps_bake_the_array_steps_bits(monkeypatch, case, iterations, preroll):
    model, drive = _tails(**case)
    settings = core.SolverSettings(substep=1.0 / 240.0, iterations=iterations,
                                   preroll_frames=preroll)
    on_floats = 0
    original = float_step.step_floats

    def counted(*args):
        nonlocal on_floats
        on_floats += 1
        return original(*args)

    monkeypatch.setattr(solver, "step_floats", counted)
    floats = core.bake(model, drive, settings)
    if case["collider"] or case["bend_compliance"] < 1e-5:
        assert on_floats == 0  # colliders, stiff bending: the array passes
    else:
        # (Pre-roll substeps, and a teleport's frame, run on arrays.)
        assert on_floats > 0.8 * floats.substeps - preroll * 10
    monkeypatch.setattr(float_step.FloatCoefficients, "of", staticmethod(lambda *a: None))
    arrays = core.bake(model, drive, settings)
    assert np.abs(arrays.positions[-1] - arrays.positions[0]).max() > 0.05  # they swing
    assert floats.substeps == arrays.substeps
    assert floats.positions.tobytes() == arrays.positions.tobytes()  # bits, signed zeros too


def test_a_tail_without_colliders_never_takes_the_array_step(monkeypatch):
    """The 4-bone tail of bench_chains.py's skinned-body scene: its 990 substeps cost NumPy's
    per-call overhead ~40 times each in `step` (41 ms of the 55 ms bake); on floats none."""
    model, drive = _tails(**CASES[0])
    calls = 0
    original = solver.step

    def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(solver, "step", counted)
    result = core.bake(model, drive, core.SolverSettings(substep=1.0 / 240.0))
    assert result.substeps > 500
    assert calls == 0


def test_source_terms_are_made_a_block_of_intervals_at_a_time(monkeypatch):
    """The flat source rows of a tail's intervals are made `SOURCE_BLOCK` at a time, not once
    per interval (five ufuncs and two `tolist` calls each, a tenth of the tail's solve), and
    the bake keeps the array step's bits across blocks and a coefficient change mid-block."""
    model, drive = _tails(**CASES[1])  # 237 samples, damping animated at a third of the shot
    blocks = []
    original = float_step.FloatCoefficients.source_block

    def counted(self, reference_soa, first, stop):
        blocks.append((first, stop))
        return original(self, reference_soa, first, stop)

    monkeypatch.setattr(float_step.FloatCoefficients, "source_block", counted)
    settings = core.SolverSettings(substep=1.0 / 240.0)
    floats = core.bake(model, drive, settings)
    intervals = drive.frames - 1
    assert intervals > 3 * float_step.SOURCE_BLOCK
    # Every interval once; one more block where the coefficients change.
    assert len(blocks) <= intervals // float_step.SOURCE_BLOCK + 2
    assert sum(stop - first for first, stop in blocks) >= intervals
    monkeypatch.setattr(float_step.FloatCoefficients, "of", staticmethod(lambda *a: None))
    arrays = core.bake(model, drive, settings)
    assert floats.positions.tobytes() == arrays.positions.tobytes()


def test_a_streamed_tail_never_reads_a_placeholder_sample():
    """A tail fed its samples as the timeline plays (`Stream`, the live preview) gives the
    bake's bits: a block of source rows made ahead covers only samples already read, and is
    made again when more arrive (the later samples are placeholders until then)."""
    model, drive = _tails(**CASES[0])
    settings = core.SolverSettings(substep=1.0 / 240.0)
    baked = core.bake(model, drive, settings).positions
    held = drive.reference.copy()
    stream = solver.Stream(model, replace(drive, reference=_held(held, 1)), settings, known=1)
    frames = []
    for i in range(stream.output_frames):
        need = stream.needed(i)
        if stream._bake.known < need:
            stream.feed(replace(drive, reference=_held(held, need)), need)
        frames.append(stream.step().copy())
    assert np.stack(frames).tobytes() == baked.tobytes()


def _held(reference: np.ndarray, known: int) -> np.ndarray:
    """`reference` with its samples from `known` on replaced by far-off placeholders."""
    out = reference.copy()
    out[known:] = reference[known - 1] + 10.0
    return out
