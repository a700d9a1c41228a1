"""Cosserat rods (seed 003, Kugelstadt & Schömer 2016): length, unit orientations, per-axis
bend and twist stiffness, and the hood pendulum (seed 001) as a one-segment rod."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from waft.core import SetupError, SolverSettings
from waft.core.cloth.rod import (
    RodDrive,
    RodParams,
    RodRest,
    RodStream,
    bake_rods,
    build_rod_model,
    qmul,
    rotate,
)
from waft.core.rotations import quat_between, quat_multiply

G = 9.81
Y = np.array([0.0, 1.0, 0.0])  # a Blender bone points along its local +Y


def bone_quat(direction) -> np.ndarray:
    direction = np.asarray(direction, dtype=float)
    return quat_between(Y, direction / np.linalg.norm(direction))


def straight_rod(direction, *, bones: int, length: float, name="Tie") -> RodRest:
    d = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    points = d[None] * length * np.arange(bones + 1)[:, None]
    q = np.repeat(bone_quat(d)[None], bones, axis=0)
    return RodRest(name, tuple(f"{name}.{i:03d}" for i in range(bones)), points, q)


def drive_for(model, frames, *, reference_orientation=None, fps=24.0, **params) -> RodDrive:
    S = model.rods
    reference = np.repeat(model.rest_positions[None], frames, axis=0)
    if reference_orientation is None:
        reference_orientation = np.repeat(model.rest_orientation[None], frames, axis=0)
    settings = {"world_motion_fraction": 1.0}
    settings.update(params)
    return RodDrive(fps=fps, reference=reference, reference_orientation=reference_orientation,
                    space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)),
                    collider_matrix=np.zeros((frames, 0, 4, 4)),
                    params=RodParams.defaults(S, **settings))


def test_hood_pendulum_period_matches_the_compound_pendulum():
    """One segment, bending off, released at 10 degrees: the tip particle (unit mass) and the
    segment's rotational inertia I = m L^2 / 12 swing as a compound pendulum,
    T = 2 pi sqrt((L^2 + I/m) / (g L)) (1 + theta^2 / 16) = 1.4792 s for L = 0.5 m."""
    L, theta = 0.5, np.radians(10.0)
    tip = np.array([L * np.sin(theta), 0.0, -L * np.cos(theta)])
    rod = RodRest("Hood", ("hood",), np.array([[0.0, 0.0, 0.0], tip]), bone_quat(tip)[None])
    model = build_rod_model(rods=[rod])
    frames = 24 * 6
    down = np.broadcast_to(bone_quat((0, 0, -1)), (frames, 1, 1, 4))
    result = bake_rods(model, drive_for(model, frames, reference_orientation=down,
                                       bend_twist_compliance=np.inf, damping=0.0, drag=0.0))
    x = result.positions[:, 0, 1, 0]
    t = np.arange(frames) / 24.0
    i = np.flatnonzero(np.sign(x[1:]) != np.sign(x[:-1]))
    crossings = t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i])
    period = 2.0 * np.mean(np.diff(crossings))
    expected = 2 * np.pi * np.sqrt((L * L + L * L / 12) / (G * L)) * (1 + theta ** 2 / 16)
    assert abs(period / expected - 1.0) < 0.005, (period, expected)
    # The bone keeps pointing at the particle (stretch-shear) and its orientation stays unit.
    seg = result.positions[:, 0, 1] - result.positions[:, 0, 0]
    axis = rotate(result.orientation[:, 0, 0], Y)
    cos = np.sum(axis * seg, -1) / np.linalg.norm(seg, axis=-1)
    assert np.all(cos[1:] > np.cos(np.radians(0.1)))


def test_rod_released_horizontally_keeps_length_and_unit_orientations():
    model = build_rod_model(rods=[straight_rod((1, 0, 0), bones=5, length=0.1),
                                  straight_rod((0, 1, 0), bones=3, length=0.2, name="Ribbon")])
    result = bake_rods(model, drive_for(model, 48, bend_twist_compliance=1e-1))
    x = result.positions
    lengths = np.linalg.norm(np.diff(x, axis=2), axis=-1)
    rest = model.rest_length
    active = rest > 0
    ratio = lengths[:, active] / rest[active]
    assert np.all(np.abs(ratio - 1.0) < 1e-9)  # bones never stretch (exact FTL sweep)
    np.testing.assert_allclose(np.linalg.norm(result.orientation, axis=-1), 1.0, atol=1e-12)
    assert x[-1, 0, -1, 2] < -0.2  # it did swing down under gravity


def _bending_energy(q: np.ndarray, model, root: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Sum of `C^2 / (2 alpha)` over the solver's bend-twist constraints (the root segment
    against its reference, each pair against its rest Darboux vector), per frame; `q` (F, B, 4)."""
    conj = np.array([1.0, -1.0, -1.0, -1.0])
    pairs = [(np.broadcast_to(root, q[:, 0].shape), q[:, 0], np.array([1.0, 0.0, 0.0, 0.0]))]
    pairs += [(q[:, j], q[:, j + 1], model.rest_darboux[0, j]) for j in range(q.shape[1] - 1)]
    energy = np.zeros(q.shape[0])
    for a, b, rest in pairs:
        omega = quat_multiply(a * conj, b)
        minus, plus = omega - rest, omega + rest
        closer = np.sum(plus * plus, -1) < np.sum(minus * minus, -1)
        c = np.where(closer[:, None], plus, minus)[:, 1:]
        energy += 0.5 * np.sum(c * c / alpha, axis=-1)
    return energy


@pytest.mark.parametrize("rate", [240, 960])
def test_rod_released_level_gains_no_energy(rate):
    """A passive rod (no damping, nothing animated) released level swings as an elastic beam:
    kinetic + potential + bending energy. FTL's sweep with DFTL's 0.9 weight made 3.4-3.9 % of
    the fall at 240-3840 Hz; with the sweep's velocity a mass-weighted inelastic impulse it
    makes 0.7 % at 240 Hz and 0.01 % at 960 Hz."""
    rod = straight_rod((1.0, 0.0, 0.0), bones=8, length=0.1)
    model = build_rod_model(rods=[rod])
    compliance = 1e-2
    drive = drive_for(model, 3 * rate, fps=float(rate), damping=0.0,
                      bend_twist_compliance=compliance)
    result = bake_rods(model, drive, SolverSettings(substep=1.0 / rate))
    x = result.positions[:, 0, 1:]
    v = (x[2:] - x[:-2]) * (0.5 * rate)
    axes = np.asarray(RodParams.defaults(1).bend_stiffness_axes, dtype=float).reshape(-1)[:3]
    bending = _bending_energy(result.orientation[:, 0], model,
                              drive.reference_orientation[0, 0, 0], compliance / axes)
    energy = 0.5 * np.square(v).sum(axis=(1, 2)) + G * x[1:-1, :, 2].sum(axis=1) + bending[1:-1]
    fall = energy[0] - energy.min()
    assert fall > 10.0
    assert np.max(energy - np.minimum.accumulate(energy)) <= 0.01 * fall


@pytest.mark.parametrize("axes, follows", [((1, 1, 1), True), ((1, 0, 1), False),
                                           ((0, 1, 0), True)])
def test_twist_stiffness_acts_only_through_its_own_axis(axes, follows):
    """The root bone twists 90 degrees about the hanging rod (its local y axis) in 0.5 s: with a
    twist multiplier the whole tie follows, with twist 0 it stays untwisted (bending alone
    transmits no twist)."""
    model = build_rod_model(rods=[straight_rod((0, 0, -1), bones=3, length=0.3)])
    frames = 48
    t = np.arange(frames) / 24.0
    angle = np.radians(90.0) * np.clip(t / 0.5, 0.0, 1.0)
    turn = np.stack([np.cos(angle / 2), 0 * angle, 0 * angle, np.sin(angle / 2)], axis=1)
    reference = quat_multiply(turn[:, None, None], model.rest_orientation[None])
    result = bake_rods(model, drive_for(model, frames, reference_orientation=reference,
                                        bend_twist_compliance=1e-4, bend_stiffness_axes=axes))
    x_axis = rotate(result.orientation[-1, 0], np.array([1.0, 0.0, 0.0]))
    twist = np.degrees(np.arctan2(x_axis[:, 1], x_axis[:, 0]))
    np.testing.assert_allclose(twist, 90.0 if follows else 0.0, atol=2.0)


def test_bend_stiffness_is_anisotropic():
    """A horizontal rod along +x: gravity bends it about world y, which is the bone's local x.
    Stiff local x holds it up; stiff z alone (x free) lets it hang. Near-rigid bending needs a
    few iterations (XPBD: as alpha -> 0 it converges like PBD; one pass per 1/240 s substep
    leaves a 0.10 m droop here, four 0.023 m)."""
    model = build_rod_model(rods=[straight_rod((1, 0, 0), bones=4, length=0.1)])

    def tip_drop(axes):
        drive = drive_for(model, 48, bend_twist_compliance=1e-6, bend_stiffness_axes=axes)
        return -bake_rods(model, drive, SolverSettings(iterations=4)).positions[-1, 0, -1, 2]

    stiff, floppy = tip_drop((1.0, 1.0, 0.0)), tip_drop((0.0, 1.0, 1.0))
    assert stiff < 0.05
    assert floppy > 0.3


def test_rod_validation_names_the_bone():
    rod = straight_rod((1, 0, 0), bones=2, length=0.1)
    x = rod.rest_positions.copy()
    x[2] = x[1]
    with pytest.raises(SetupError, match="Tie.001' has zero length"):
        build_rod_model(rods=[RodRest("Tie", rod.names, x, rod.rest_orientation)])
    model = build_rod_model(rods=[rod])
    with pytest.raises(SetupError, match="Tie.*damping"):
        bake_rods(model, drive_for(model, 4, damping=-1.0))
    frames = 3
    with pytest.raises(SetupError, match="reference_orientation"):
        bake_rods(model, RodDrive(24, np.zeros((frames, 1, 3, 3)), np.zeros((frames, 1, 1, 4)),
                                  np.broadcast_to(np.eye(4), (frames, 1, 4, 4)),
                                  np.zeros((frames, 0, 4, 4)), RodParams.defaults(1)))


def test_substep_does_not_change_the_pendulum():
    rod = RodRest("Hood", ("hood",), np.array([[0.0, 0.0, 0.0], [0.2, 0.0, -0.3]]),
                  bone_quat((0.2, 0.0, -0.3))[None])
    model = build_rod_model(rods=[rod])
    drive = drive_for(model, 24, bend_twist_compliance=1e-3)
    a = bake_rods(model, drive, SolverSettings(substep=1 / 240)).positions
    b = bake_rods(model, drive, SolverSettings(substep=1 / 960)).positions
    assert np.abs(a - b).max() < 0.01


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stretch=st.floats(0.0, 1.0), bend=st.one_of(st.just(np.inf), st.floats(0.0, 10.0)),
       axes=st.tuples(*[st.floats(0.0, 5.0)] * 3), damping=st.floats(0.0, 50.0),
       fraction=st.floats(0.0, 1.0), wind=st.floats(-20.0, 20.0),
       speed=st.floats(0.0, 10.0), iterations=st.integers(1, 3))
def test_random_rod_settings_never_nan(stretch, bend, axes, damping, fraction, wind, speed,
                                       iterations):
    model = build_rod_model(rods=[straight_rod((1, 0, -1), bones=3, length=0.15),
                                  straight_rod((0, 0, -1), bones=1, length=0.3, name="Hood")])
    frames = 24
    t = np.arange(frames) / 24.0
    offset = np.zeros((frames, 3))
    offset[:, 0] = speed * np.minimum(t, 0.5)
    drive = drive_for(model, frames, stretch_shear_compliance=stretch, bend_twist_compliance=bend,
                      bend_stiffness_axes=axes, damping=damping, world_motion_fraction=fraction,
                      wind_velocity=(wind, 0.0, 0.0))
    space = np.repeat(np.eye(4)[None, None], frames, axis=0).repeat(2, axis=1)
    space[:, :, :3, 3] = offset[:, None]
    drive = RodDrive(drive.fps, drive.reference + offset[:, None, None],
                     drive.reference_orientation, space, drive.collider_matrix, drive.params)
    result = bake_rods(model, drive, SolverSettings(iterations=iterations))
    assert np.all(np.isfinite(result.positions))
    np.testing.assert_allclose(np.linalg.norm(result.orientation, axis=-1), 1.0, atol=1e-9)
    lengths = np.linalg.norm(np.diff(result.positions, axis=2), axis=-1)
    active = model.rest_length > 0
    np.testing.assert_allclose(lengths[:, active], np.broadcast_to(
        model.rest_length[active], lengths[:, active].shape), rtol=1e-9)


def test_streamed_rod_frames_are_the_baked_frames():
    """``RodStream`` (the live preview's) gives every output frame bit for bit as the bake,
    sub-frame samples and a swinging root included."""
    model = build_rod_model(rods=[straight_rod((1, 0, 0), bones=4, length=0.1),
                                  straight_rod((0, 1, 0), bones=3, length=0.15, name="Ribbon")])
    frames = 121  # 120 Hz samples for 24 output frames at 24 fps
    drive = drive_for(model, frames, fps=120.0, damping=0.5)
    t = np.arange(frames) / 120.0
    reference = drive.reference.copy()
    reference[:, :, :, 0] += (0.2 * np.sin(9.0 * t))[:, None, None]  # a 16 m/s² swing
    drive = RodDrive(fps=120.0, reference=reference,
                     reference_orientation=drive.reference_orientation, space=drive.space,
                     collider_matrix=drive.collider_matrix, params=drive.params,
                     output_fps=24.0, output_frames=25)
    baked = bake_rods(model, drive)
    stream = RodStream(model, drive)
    steps = []
    while stream.frames_done < stream.total:
        assert stream.result() is None
        steps.append(tuple(a.copy() for a in stream.step()))
    np.testing.assert_array_equal(np.stack([p for p, _ in steps]), baked.positions)
    np.testing.assert_array_equal(np.stack([q for _, q in steps]), baked.orientation)
    np.testing.assert_array_equal(stream.result().positions, baked.positions)
    assert np.abs(baked.positions[-1] - baked.positions[0]).max() > 0.01  # it moved
    with pytest.raises(IndexError):
        stream.step()


def test_the_rods_hamilton_product_is_the_quaternion_product():
    """`rod.qmul` (`rotations.quat_product`: 16 signed products summed by one matrix
    product) against `rotations.quat_multiply`, broadcasting one segment against several as
    the bend does."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(3, 4, 4)), rng.normal(size=(3, 1, 4))
    np.testing.assert_allclose(qmul(a, b), quat_multiply(a, np.broadcast_to(b, a.shape)),
                               rtol=0, atol=1e-14)
    np.testing.assert_allclose(qmul(b, a), quat_multiply(np.broadcast_to(b, a.shape), a),
                               rtol=0, atol=1e-14)


def _level_rod_frames(out_fps: float, rate: float) -> np.ndarray:
    """A rod laid level from a still root swings down: its particles at `out_fps` (inputs at
    240 Hz, substeps at `rate`)."""
    model = build_rod_model(rods=[straight_rod((1, 0, 0), bones=4, length=0.1)])
    drive = drive_for(model, 241, fps=240.0)
    drive = RodDrive(fps=240.0, reference=drive.reference,
                     reference_orientation=drive.reference_orientation, space=drive.space,
                     collider_matrix=drive.collider_matrix, params=drive.params,
                     output_fps=out_fps, output_frames=int(round(out_fps)) + 1)
    return bake_rods(model, drive, SolverSettings(substep=1.0 / rate)).positions[:, 0]


def test_frames_between_the_same_two_substeps_blend_them():
    """Three frames a substep (120 fps output on 40 Hz substeps, a Substep Rate under the frame
    rate): every third frame is the 40 fps bake's, the two between lie near the segment between
    its neighbours (the rod's bones are re-placed on the blend: a chord). The second of them
    took the later substep's state before, a third of a step off."""
    fine, coarse = _level_rod_frames(120.0, 40.0), _level_rod_frames(40.0, 40.0)
    k = len(coarse) - 1
    assert np.abs(fine[::3] - coarse).max() <= 1e-9
    step = np.linalg.norm(coarse[1:] - coarse[:-1], axis=-1)
    assert step.max() > 1e-2  # it swings
    for j in (1, 2):
        blend = coarse[:-1] + (j / 3.0) * (coarse[1:] - coarse[:-1])
        off = np.linalg.norm(fine[j::3][:k] - blend, axis=-1)
        assert (off <= 0.2 * step + 1e-6).all(), (j, float((off / (step + 1e-9)).max()))


def _rod_over_a_ball(depth: float, frames: int = 30):
    """A level 6 x 5 cm rod (radius 2 cm) over a ball of 10 cm whose top is `depth` metres
    above the rod's axis minus its radius (inside it when positive), at 240 Hz: positions
    (F, 1, 7, 3) and the ball's centre."""
    from waft.core.colliders import ColliderKind, ColliderSet

    rod = straight_rod((1, 0, 0), bones=6, length=0.05)
    model = build_rod_model(rods=[rod], colliders=ColliderSet.create(
        names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.1], friction=[0.0]))
    centre = np.array([0.15, 0.0, depth - 0.12])
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, :3, 3] = centre
    d = drive_for(model, frames, fps=240.0)
    d = RodDrive(fps=240.0, reference=d.reference, reference_orientation=d.reference_orientation,
                 space=d.space, collider_matrix=M, params=d.params)
    return bake_rods(model, d, SolverSettings(substep=1 / 240)).positions, centre


def test_a_rod_drawn_into_a_collider_starts_outside_it_and_is_not_thrown():
    """Drawn 4 cm into a ball, the rod starts clear of it by its radius and is not thrown: it
    moved at 12 m/s in its first substeps when the first substep pushed it out as velocity;
    now about 1 m/s, its frames and bending springing back to the pushed segments."""
    x, centre = _rod_over_a_ball(0.04)
    assert np.linalg.norm(x[0, 0] - centre, axis=-1).min() >= 0.12 - 1e-9
    speed = np.linalg.norm(np.diff(x[:11], axis=0), axis=-1) * 240.0
    assert speed.max() < 2.0, speed.max()


def test_a_rod_clear_of_its_collider_bakes_the_same_bits_as_without_the_start_pass(
        monkeypatch):
    from waft.core.cloth import rod as rod_module

    x, _ = _rod_over_a_ball(-0.03)
    monkeypatch.setattr(rod_module._RodBake, "_start_outside", lambda self, x, x_prev, c: None)
    without, _ = _rod_over_a_ball(-0.03)
    assert x.tobytes() == without.tobytes()



def test_a_rod_pressed_on_a_fast_turning_collider_ends_every_substep_outside_it(
        turned_ellipsoid):
    """The rod drawn 3 cm into an ellipsoid (10 cm across, 12 cm along the rod) turning
    1,500 deg/s about the rod's direction, sampled at 60 Hz, substeps and frames at 240 Hz: at
    every substep's end the rod is outside the exactly turned collider, radius counted. The
    element-wise lerp of the samples' matrices is a chord (cos(12.5 deg) across the turn
    halfway): the rod ended substeps 2.37 mm inside it (0.59 mm at 120 Hz samples, 6.9 mm at
    3,000 deg/s); blended with `lerp_affine`, 0.002 mm (the ellipsoid's tangent-plane
    distance)."""
    from waft.core.colliders import ColliderKind, ColliderSet, ellipsoid_normal

    rate, sub, omega = 60.0, 240.0, np.radians(1500.0)
    frames = 16
    rod = straight_rod((1, 0, 0), bones=6, length=0.05)
    model = build_rod_model(rods=[rod], colliders=ColliderSet.create(
        names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.1], friction=[0.0]))
    centre = np.array([0.15, 0.0, 0.03 - 0.12])
    M = np.stack([turned_ellipsoid(omega * f / rate, centre) for f in range(frames)])[:, None]
    d = drive_for(model, frames, fps=rate)
    d = RodDrive(fps=rate, reference=d.reference, reference_orientation=d.reference_orientation,
                 space=d.space, collider_matrix=M, params=d.params, output_fps=sub)
    x = bake_rods(model, d, SolverSettings(substep=1 / sub)).positions
    depth = []
    for i in range(len(x)):
        true = turned_ellipsoid(omega * i / sub, centre)
        _, sd = ellipsoid_normal(x[i, 0], true, np.linalg.inv(true), 0.1)
        depth.append(0.02 - sd.min())
    assert max(depth) < 1e-5, max(depth)
