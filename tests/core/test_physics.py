"""Whole-solver physics against analytic results."""

from __future__ import annotations

import numpy as np
import pytest

from waft import core

G = 9.81


def _free_particle(rig, frames, fps, **params):
    # A 1-bone chain whose segment constraint is switched off: particle 1 is free.
    rest = np.array([[0.0, 0.0, 0.0], [0.3, 0.0, 2.0]])
    return rig.build([rest], frames=frames, fps=fps, stretch_compliance=np.inf, **params)


@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0])
def test_free_fall_is_exact(rig, fps):
    model, drive = _free_particle(rig, frames=25, fps=fps)
    x = core.bake(model, drive).positions[:, 0, 1]
    t = np.arange(25) / fps
    expected = np.array([0.3, 0.0, 2.0]) + np.outer(0.5 * t**2, [0.0, 0.0, -G])
    assert np.allclose(x, expected, atol=1e-10)


def test_free_fall_with_initial_velocity_by_step(rig):
    model, drive = _free_particle(rig, frames=2, fps=24)
    h = 1 / 240
    state, substep = core.strands.solver.start(model, drive, core.SolverSettings(substep=h))
    x0, v0, g = np.array([0.3, 0.0, 2.0]), np.array([1.0, -2.0, 3.0]), np.array([0, 0, -G])
    state.positions(model)[0, 1] = x0
    state.previous(model)[0, 1] = x0 - v0 * h + 0.5 * g * h * h
    for n in range(1, 49):
        core.step(model, state, substep, h)
        t = n * h
        assert np.allclose(state.positions(model)[0, 1], x0 + v0 * t + 0.5 * g * t * t, atol=1e-12)


def _pendulum(rig, *, angle_deg, seconds, fps=24.0, damping=0.0):
    L = 1.0
    a = np.radians(angle_deg)
    rest = np.array([[0.0, 0.0, 2.0], [L * np.sin(a), 0.0, 2.0 - L * np.cos(a)]])
    model, drive = rig.build([rest], frames=int(seconds * fps) + 1, fps=fps, damping=damping)
    return core.bake(model, drive).positions[:, 0, 1], fps


def _crossings(signal, fps):
    s = np.sign(signal)
    idx = np.flatnonzero(s[:-1] * s[1:] < 0)
    # Linear interpolation of the zero crossing times.
    return (idx + signal[idx] / (signal[idx] - signal[idx + 1])) / fps


def test_pendulum_period(rig):
    x, fps = _pendulum(rig, angle_deg=5.0, seconds=12.0)
    crossings = _crossings(x[:, 0], fps)
    period = 2 * np.mean(np.diff(crossings))
    expected = 2 * np.pi * np.sqrt(1.0 / G) * 1.00048
    assert period == pytest.approx(expected, rel=0.01)


def test_undamped_pendulum_energy_never_grows(rig):
    x, fps = _pendulum(rig, angle_deg=30.0, seconds=8.0, fps=240.0)
    v = (x[2:] - x[:-2]) * fps / 2
    energy = 0.5 * np.sum(v**2, axis=-1) + G * x[1:-1, 2]
    start_energy = G * x[0, 2]  # released at rest
    assert np.max(energy) <= start_energy + 1e-3 * G
    # ... and it does swing for the whole time (not dissipated to rest).
    assert np.max(np.abs(x[-480:, 0])) > 0.4  # amplitude 0.5 at release; PBD dissipates a little


def test_hanging_chain_keeps_every_segment_length(rig):
    """Default chain settings (tether on): a chain hanging under gravity keeps its lengths."""
    rest = rig.vertical_chain(bones=8, length=0.05)
    model, drive = rig.build([rest], frames=72, damping=1.0, use_tether=True,
                             bend_compliance=0.01, shape_stiffness=0.1)
    x = core.bake(model, drive).positions[:, 0]
    lengths = np.linalg.norm(np.diff(x, axis=1), axis=-1)
    assert np.max(np.abs(lengths / 0.05 - 1.0)) < 0.005


def test_frame_rate_independence(rig):
    rest = rig.vertical_chain(bones=6, length=0.08)
    motion = lambda t: np.stack([0.1 * np.sin(np.pi * t), 0.05 * np.sin(2 * t), 0 * t], -1)  # noqa: E731
    results = {}
    for fps in (24, 30, 60):
        model, drive = rig.build([rest], frames=2 * fps + 1, fps=fps, root_motion=motion,
                                 damping=1.0, use_tether=True, bend_compliance=0.01,
                                 shape_stiffness=0.05)
        results[fps] = core.bake(model, drive).positions[:, 0]
    shared = np.arange(0, 2.0 + 1e-9, 1 / 6)  # times every rate hits
    sampled = {fps: results[fps][np.round(shared * fps).astype(int)] for fps in results}
    moved = np.max(np.abs(sampled[60][:, -1] - rest[-1]))
    assert moved > 0.05  # the tip really swings
    for fps in (24, 30):
        assert np.max(np.linalg.norm(sampled[fps] - sampled[60], axis=-1)) < 1e-3


def test_bakes_are_bit_identical(rig):
    rest = rig.vertical_chain(bones=5, length=0.1)
    motion = lambda t: np.stack([0.3 * np.sin(3 * t), 0 * t, 0 * t], -1)  # noqa: E731
    colliders = core.ColliderSet.create(names=["Ball"], kind=[0], size=[0.1], friction=[0.5])
    M = np.tile(np.eye(4), (30, 1, 1, 1))
    M[:, 0, :3, 3] = (0.1, 0.0, 0.7)
    kwargs = dict(frames=30, fps=25, root_motion=motion, colliders=colliders, collider_matrix=M,
                  damping=1.0, drag=0.5, radius=0.01, wind_velocity=(2.0, 1.0, 0.0),
                  wind_turbulence=0.5, wind_gust=0.5, wind_seed=3, shape_stiffness=0.1,
                  bend_compliance=0.01, use_tether=True, world_motion_fraction=0.3)
    a = core.bake(*rig.build([rest, rest + 0.2], **kwargs)).positions
    b = core.bake(*rig.build([rest, rest + 0.2], **kwargs)).positions
    assert np.array_equal(a, b)


def _translating_space(frames, fps, velocity):
    space = np.tile(np.eye(4), (frames, 1, 1, 1))
    space[:, 0, :3, 3] = np.outer(np.arange(frames) / fps, velocity)
    return space


def test_world_motion_fraction_zero_carries_the_chain_rigidly(rig):
    rest = np.array([[0.1 * i, 0.0, 1.0] for i in range(5)])  # horizontal, no gravity
    frames, fps, velocity = 30, 24.0, np.array([3.0, 0.0, 1.0])
    motion = lambda t: np.outer(t * (t > 0.2), velocity) - np.outer(0.2 * (t > 0.2), velocity)  # noqa: E731
    space = np.tile(np.eye(4), (frames, 1, 1, 1))
    t = np.arange(frames) / fps
    space[:, 0, :3, 3] = motion(t)
    out = {}
    for fraction in (0.0, 1.0):
        model, drive = rig.build([rest], frames=frames, fps=fps, root_motion=motion, space=space,
                                 gravity=(0.0, 0.0, 0.0), world_motion_fraction=fraction)
        out[fraction] = core.bake(model, drive).positions[:, 0]
    rigid = rest[None] + motion(t)[:, None]
    assert np.allclose(out[0.0], rigid, atol=1e-9)
    assert np.max(np.abs(out[1.0] - rigid)) > 0.05  # with all world motion the chain lags


def test_wind_is_deterministic_per_seed_and_blows_downwind(rig):
    rest = rig.vertical_chain(bones=5, length=0.1)

    def run(seed):
        model, drive = rig.build([rest], frames=48, drag=2.0, wind_velocity=(3.0, 0.0, 0.0),
                                 wind_turbulence=0.5, wind_gust=0.5, wind_seed=seed, damping=0.5)
        return core.bake(model, drive).positions[:, 0]

    a, b, c = run(1), run(1), run(2)
    assert np.array_equal(a, b)
    assert np.max(np.abs(a - c)) > 1e-3
    assert a[-1, -1, 0] > 0.05  # pushed along +X


def test_divergence_is_reported_with_setup_and_frame(rig):
    rest = rig.vertical_chain(bones=2, length=0.05)
    model, drive = rig.build([rest], frames=100, setup="Blowup", stretch_compliance=np.inf)
    with pytest.raises(core.DivergenceError) as info:
        core.bake(model, drive)
    # Free fall leaves the 10 m bound after sqrt(2 * 10 / g) = 1.43 s, i.e. frame 35 at 24 fps.
    assert info.value.setup == "Blowup"
    assert info.value.frame == 35
    assert "Blowup" in str(info.value) and "35" in str(info.value)


def test_preroll_settles_before_frame_zero(rig):
    rest = np.array([[0.1 * i, 0.0, 1.0] for i in range(4)])  # horizontal, will hang
    model, drive = rig.build([rest], frames=2, damping=4.0, use_tether=True)
    settled = core.bake(model, drive, core.SolverSettings(preroll_frames=96)).positions[0, 0]
    assert np.allclose(settled[:, 0], 0.0, atol=0.01)  # hanging straight down at frame 0
    assert np.allclose(settled[:, 2], 1.0 - 0.1 * np.arange(4), atol=0.01)
