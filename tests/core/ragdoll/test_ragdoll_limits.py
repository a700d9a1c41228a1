"""Swing (elliptical cone) and twist limits under violent motion; joint damping per second."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from waft.core.ragdoll import (
    BodyMode,
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
    limits,
)
from waft.core.ragdoll.bodies import qmul, quat_conj, quat_exp
from waft.core.ragdoll.limits import (
    closest_on_ellipse,
    inside_bound,
    joint_rotation,
    limit_correction,
    limit_rotation,
    swing_twist,
)
from waft.core.rotations import quat_from_matrix

from .conftest import chain_rest, static_drive

SWING = np.array([0.3, 0.6])  # rad about local X and Z
TWIST = np.array([-0.2, 0.4])


def _axis_rotation(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    M = np.eye(4)
    M[:3, :3] = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
    return M


def _shaken_chain(frames: int, fps: float, iterations: int, swing=SWING, center=None):
    """A kinematic root shaken and spun violently (square-wave jerks, 15 rad/s reversing
    spins) carrying three FREE capsules with limits (swing ellipses centred on `center`)."""
    heads = [(0, 0, 1.0), (0, 0, 0.8), (0, 0, 0.5), (0, 0, 0.2)]
    tails = [(0, 0, 0.8), (0, 0, 0.5), (0, 0, 0.2), (0, 0, 0.0)]
    rest = chain_rest(heads, tails, swing=swing, twist=TWIST, mass=(1, 1, 2, 0.5))
    if center is not None:
        rest = dataclasses.replace(rest, swing_center=np.tile(center, (4, 1)))
    model = build_ragdoll_model(ragdolls=[rest])
    t = np.arange(frames) / fps
    target = np.empty((frames, 4, 4, 4))
    offsets = np.linalg.inv(rest.rest_matrix[0]) @ rest.rest_matrix
    for f in range(frames):  # building the test animation
        spin = _axis_rotation((1, 0.5, 0.3), 15 * t[f] * np.sign(np.sin(3 * np.pi * t[f])))
        root = spin @ rest.rest_matrix[0]
        root[:3, 3] = rest.rest_matrix[0][:3, 3] + [0.3 * np.sin(6 * np.pi * t[f]),
                                                    0.2 * np.sign(np.sin(4 * np.pi * t[f])), 0]
        target[f] = root @ offsets
    params = RagdollParams.defaults(4, 1, mode=np.array([[0, 2, 2, 2]]), joint_damping=0.0)
    drive = RagdollDrive(fps=fps, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=params)
    return rest, model, bake_ragdoll(model, drive, RagdollSettings(iterations=iterations))


def _joint_angles(rest, world):
    q = quat_from_matrix(world[..., :3, :3])
    q_rest = quat_from_matrix(rest.rest_matrix[:, :3, :3])
    swings, twists = [], []
    for i in range(1, len(rest.names)):
        rel = qmul(quat_conj(q_rest[i - 1:i]), q_rest[i:i + 1])
        d = qmul(np.repeat(quat_conj(rel), len(q), 0), qmul(quat_conj(q[:, i - 1]), q[:, i]))
        d *= np.where(d[:, :1] < 0, -1.0, 1.0)
        s, t = swing_twist(d)
        swings.append(s)
        twists.append(t)
    return np.stack(swings, 1), np.stack(twists, 1)


def _excess(swing, twist):
    """Angle (rad) by which joints are outside the ellipse / twist range."""
    e = np.sqrt((swing[..., 0] / SWING[0]) ** 2 + (swing[..., 2] / SWING[1]) ** 2)
    angle = np.linalg.norm(swing, axis=-1)
    swing_out = np.where(e > 1, angle * (1 - 1 / np.maximum(e, 1)), 0.0)
    twist_out = np.maximum(twist - TWIST[1], 0) + np.maximum(TWIST[0] - twist, 0)
    return swing_out, twist_out


def test_limit_correction_projects_onto_the_ellipse_and_range():
    swing = np.array([[0.6, 0.0, 0.0], [0.0, 0.0, 0.3], [0.4, 0.0, 0.4]])
    twist = np.array([0.5, -0.5, 0.1])
    fix, tfix = limit_correction(swing, twist, np.tile(SWING, (3, 1)), np.tile(TWIST, (3, 1)))
    out = swing + fix
    assert np.allclose(out[0], [0.3, 0, 0]) and np.allclose(out[1], [0, 0, 0.3])
    e = (out[2, 0] / 0.3) ** 2 + (out[2, 2] / 0.6) ** 2
    assert abs(e - 1) < 1e-12
    assert np.allclose(twist + tfix, [0.4, -0.2, 0.1])
    # The decomposition round-trips: exp(swing) exp(twist Y) gives back the rotation.
    d = qmul(quat_exp(np.array([[0.2, 0.0, -0.1]])), quat_exp(np.array([[0.0, 0.3, 0.0]])))
    s, t = swing_twist(d)
    assert np.allclose(s, [[0.2, 0, -0.1]]) and np.allclose(t, [0.3])


def test_an_outside_swing_goes_to_the_closest_point_of_its_ellipse():
    """Against a dense sampling of each ellipse, over axes from 1e-6 to 3 rad and points up to
    50 times outside; and a knee (145° bend, 10° sideways) bent 117° and 8.7° sideways is fixed
    sideways, not by straightening it (the radial scaling straightened it 18°)."""
    rng = np.random.default_rng(7)
    a, b = rng.uniform(1e-6, 3.0, 400), rng.uniform(1e-6, 3.0, 400)
    angle, scale = rng.uniform(0, 2 * np.pi, 400), rng.uniform(1.001, 50.0, 400)
    point = np.stack((a * np.cos(angle) * scale, b * np.sin(angle) * scale), axis=1)
    closest = closest_on_ellipse(point, a, b)
    assert np.abs((closest[:, 0] / a) ** 2 + (closest[:, 1] / b) ** 2 - 1.0).max() < 1e-12
    t = np.linspace(0.0, 2 * np.pi, 20001)
    for k in range(len(a)):
        ring = np.stack((a[k] * np.cos(t), b[k] * np.sin(t)), axis=1)
        best = np.linalg.norm(ring - point[k], axis=1).min()
        assert np.linalg.norm(closest[k] - point[k]) <= best + 1e-12
    knee = np.radians([[145.0, 10.0]])
    fix, _ = limit_correction(np.radians([[116.6, 0.0, 8.7]]), np.zeros(1), knee,
                              np.radians([[-10.0, 10.0]]))
    assert abs(np.degrees(fix[0, 0])) < 1.0 and np.degrees(fix[0, 2]) < -2.0


def test_a_few_outside_swings_on_floats_give_the_vectorised_bits():
    """A joint or two over its limit takes the closest points on Python floats
    (`SCALAR_POINTS`): the same operations in the same order, so the same bits as the
    vectorised Newton steps, over axes from 1e-6 to 3 rad, points up to 50 times outside,
    points on an axis."""
    rng = np.random.default_rng(3)
    for m in range(1, limits.SCALAR_POINTS + 1):
        for _ in range(40):
            a, b = rng.uniform(1e-6, 3.0, m), rng.uniform(1e-6, 3.0, m)
            angle = rng.choice([0.0, np.pi / 2, rng.uniform(0, 2 * np.pi)], m)
            scale = rng.uniform(1.001, 50.0, m)
            point = np.stack((a * np.cos(angle) * scale, b * np.sin(angle) * scale), axis=1)
            floats = closest_on_ellipse(point, a, b)
            copies = limits.SCALAR_POINTS + 1  # enough rows to take the vectorised steps
            vectorised = closest_on_ellipse(np.tile(point, (copies, 1)), np.tile(a, copies),
                                            np.tile(b, copies))[:m]
            np.testing.assert_array_equal(floats, vectorised)


def test_joints_within_the_inside_bound_are_inside_their_limits():
    """`inside_bound` lets the limit test answer "all inside" without the swing-twist split:
    wherever a joint rotation's w exceeds it, the full test must find no correction; and it
    must not be so cautious that it never answers (a joint well inside passes)."""
    rng = np.random.default_rng(7)
    n = 20000
    swing = np.column_stack([rng.uniform(0.05, 2.5, n), rng.uniform(0.05, 2.5, n)])
    twist = np.column_stack([rng.uniform(-2.0, 0.3, n), rng.uniform(-0.3, 2.0, n)])
    twist[::7] = (-np.inf, np.inf)
    swing[::11] = np.inf
    centre = rng.uniform(-0.4, 0.4, (n, 2)) * (rng.random(n) < 0.5)[:, None]
    centre[::11] = 0.0
    bound = inside_bound(swing, twist, centre)
    # rotations of every size about every axis, many just inside the bound
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    limit_angle = 2.0 * np.arccos(np.clip(bound, -1.0, 1.0))
    angle = np.where(rng.random(n) < 0.5, limit_angle * rng.uniform(0.9, 1.0, n),
                     rng.uniform(0.0, np.pi, n))
    d = joint_rotation(quat_exp(axis * angle[:, None]), np.tile([1.0, 0, 0, 0], (n, 1)),
                       np.tile([1.0, 0, 0, 0], (n, 1)))
    clear = d[:, 0] > bound
    assert clear.sum() > n // 3
    s, t = swing_twist(d[clear])
    fix, tfix = limit_correction(s, t, swing[clear], twist[clear], centre[clear])
    assert not fix.any() and not tfix.any()


def test_the_limit_rotation_lands_on_the_limit_at_a_deep_bend():
    """Turning the child by the returned world rotation vector puts the joint exactly on its
    limit, for swings up to 170° combined with twist (summing the swing fix in the joint frame
    and the twist fix about the child's axis as one rotation vector missed by tens of degrees
    at deep bends, and the iterations diverged)."""
    rng = np.random.default_rng(11)
    m = 300
    swing_limit = np.tile(np.radians([145.0, 10.0]), (m, 1))
    twist_limit = np.tile(np.radians([-10.0, 10.0]), (m, 1))
    bend = rng.uniform(np.radians(90.0), np.radians(170.0), m)
    side = rng.uniform(-0.8, 0.8, m)
    swing = np.stack((bend, np.zeros(m), side), axis=1)
    twist = np.zeros((m, 3))
    twist[:, 1] = rng.uniform(-1.2, 1.2, m)
    d = qmul(quat_exp(swing), quat_exp(twist))
    parent = quat_exp(rng.normal(size=(m, 3)))
    rest = quat_exp(rng.normal(size=(m, 3)) * 0.3)
    child = qmul(qmul(parent, rest), d)
    dtheta = limit_rotation(child, parent, rest, swing_limit, twist_limit)
    moved = qmul(quat_exp(dtheta), child)
    s, t = swing_twist(joint_rotation(moved, parent, rest))
    e = (s[:, 0] / swing_limit[:, 0]) ** 2 + (s[:, 2] / swing_limit[:, 1]) ** 2
    assert e.max() < 1.0 + 1e-9
    assert np.all(np.abs(t) <= np.radians(10.0) + 1e-9)


def test_one_sided_hinges_hold_their_range_under_violent_motion():
    """Hinges bending 0-100° about X one way and ±10° about Z (ellipse centre (50°, 0)): under
    the violent shake every joint ends each frame inside that one-sided range (within 1°), and
    it is used, bent far the allowed way and never more than 1° the other way (a symmetric
    cone let knees bend forwards as far as backwards)."""
    half = np.radians([50.0, 10.0])
    rest, model, result = _shaken_chain(frames=60, fps=30.0, iterations=2, swing=half,
                                        center=np.radians([50.0, 0.0]))
    swing, _ = _joint_angles(rest, result.physics_matrix)
    sx, sz = np.degrees(swing[..., 0]), np.degrees(swing[..., 2])
    e = ((sx - 50.0) / 50.0) ** 2 + (sz / 10.0) ** 2
    assert e.max() < 1.0 + 2.0 * 1.0 / 10.0  # within about 1° of the ellipse
    assert sx.min() > -1.0 and sx.max() > 60.0


def test_limits_are_never_exceeded_under_violent_motion():
    rest, model, result = _shaken_chain(frames=60, fps=30.0, iterations=2)
    swing, twist = _joint_angles(rest, result.physics_matrix)
    swing_out, twist_out = _excess(swing, twist)
    assert np.degrees(swing_out.max()) < 1.0
    assert np.degrees(twist_out.max()) < 1.0
    # The motion is violent enough to press the joints against their limits.
    reach = np.sqrt((swing[..., 0] / SWING[0]) ** 2 + (swing[..., 2] / SWING[1]) ** 2)
    assert reach.max() > 0.99
    assert twist.max() > TWIST[1] - 0.05 or twist.min() < TWIST[0] + 0.05
    # and the ball joints stay joined.
    heads = result.physics_matrix[:, 1:, :3, 3]
    tails = result.physics_matrix[:, :-1, :3, 3] + result.physics_matrix[:, :-1, :3, 1] * \
        model.length[:-1, None]
    assert np.linalg.norm(heads - tails, axis=-1).max() < 0.0051


def _swinging(joint_damping: float, substep: float):
    theta0 = 0.4
    hang = np.array([0.0, np.sin(theta0), -np.cos(theta0)])
    rest = chain_rest([(0, 0, 1.2), (0, 0, 1.0)], [(0, 0, 1.0), np.array([0, 0, 1.0]) + 0.5 * hang],
                      radius=(0.05, 0.08))
    model = build_ragdoll_model(ragdolls=[rest])
    drive = static_drive(model, rest.rest_matrix, 90, fps=30.0,
                         mode=np.array([[BodyMode.KINEMATIC, BodyMode.FREE]]),
                         joint_damping=joint_damping)
    result = bake_ragdoll(model, drive, RagdollSettings(substep=substep, iterations=1))
    angle = np.arctan2(result.physics_matrix[:, 1, 1, 1], -result.physics_matrix[:, 1, 2, 1])
    return np.abs(angle[-30:]).max()


def test_joint_damping_is_per_second_not_per_substep():
    # Position-based integration itself loses a little energy, O(h): compare each damped swing
    # with the undamped one at the same substep.
    ratios = []
    for substep in (1 / 240, 1 / 480):
        free = _swinging(0.0, substep)
        assert free > 0.3  # undamped, the swing keeps most of its 0.4 rad amplitude
        ratios.append(_swinging(4.0, substep) / free)
    assert ratios[0] < 0.6
    assert abs(ratios[1] - ratios[0]) < 0.1 * ratios[0]



def _bodies_and_joints(parent: np.ndarray, depth: np.ndarray, rng):
    from waft.core.ragdoll.bodies import Bodies
    from waft.core.ragdoll.joints import colour_joints

    n = len(parent)
    q = rng.normal(size=(n, 4))
    s = Bodies.at(rng.normal(size=(n, 3)), q / np.linalg.norm(q, axis=1, keepdims=True))
    s.inv_mass[:n] = 1.0 / rng.uniform(1.0, 5.0, n)
    s.inv_inertia[:n] = 1.0 / rng.uniform(0.01, 0.2, (n, 3))
    s.freeze_inertia()
    (col,) = colour_joints(parent=parent, depth=depth, half_length=np.full(n, 0.2),
                           rest_relative=np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)),
                           swing_limit=np.full((n, 2), np.inf),
                           twist_limit=np.tile([-np.inf, np.inf], (n, 1)),
                           swing_center=np.zeros((n, 2)))
    return s, col


def test_the_stop_of_undone_turns_is_a_couple_that_only_slows_joints():
    """`stop_undone_turns`: what the final projections turned back of a joint leaves no
    relative angular velocity toward it (at most |turn| / h of it is taken), as an equal and
    opposite couple: the angular momentum stays and the kinetic energy never grows."""
    from waft.core.ragdoll.limits import stop_undone_turns

    rng = np.random.default_rng(7)
    h = 1.0 / 240.0
    # one joint: exact
    s, col = _bodies_and_joints(np.array([2, 0]), np.array([0, 1]), rng)
    for _ in range(20):
        s.w[:2] = rng.normal(size=(2, 3)) * 5.0
        turned = np.zeros((3, 3))
        turned[:2] = rng.normal(size=(2, 3)) * 0.01
        u = (turned[1] - turned[0]) / np.linalg.norm(turned[1] - turned[0])
        along = (s.w[1] - s.w[0]) @ u
        stop_undone_turns(s, col, turned, h)
        expected = along if along >= 0.0 else min(0.0, along + np.linalg.norm(
            turned[1] - turned[0]) / h)
        assert (s.w[1] - s.w[0]) @ u == pytest.approx(expected, abs=1e-9)
    # a small tree (a body in three stopped joints): momentum kept, no energy gained
    n = 4
    s, col = _bodies_and_joints(np.array([n, 0, 1, 1]), np.array([0, 1, 2, 2]), rng)
    inertia = np.linalg.inv(s.Iw_inv[:n])
    for _ in range(20):
        s.w[:n] = rng.normal(size=(n, 3)) * 5.0
        turned = np.zeros((n + 1, 3))
        turned[:n] = rng.normal(size=(n, 3)) * 0.01
        Iw = np.einsum("nij,nj->ni", inertia, s.w[:n])
        L0, E0 = Iw.sum(axis=0), 0.5 * np.einsum("nk,nk->", s.w[:n], Iw)
        stop_undone_turns(s, col, turned, h)
        Iw = np.einsum("nij,nj->ni", inertia, s.w[:n])
        assert np.allclose(Iw.sum(axis=0), L0, atol=1e-9)
        assert 0.5 * np.einsum("nk,nk->", s.w[:n], Iw) <= E0 + 1e-9


def test_an_outside_swing_of_a_round_cone_goes_to_its_radial_point():
    """A round cone (equal half-axes) takes its closest point in closed form, a p / |p|, on
    floats and vectorised alike (the same bits), on the circle, and the nearest of a dense
    sampling of it; mixed with ellipses in one call, each row as it would be alone."""
    rng = np.random.default_rng(11)
    m = 300
    a = rng.uniform(1e-6, 3.0, m)
    angle, scale = rng.uniform(0, 2 * np.pi, m), rng.uniform(1.001, 50.0, m)
    point = np.stack((a * np.cos(angle) * scale, a * np.sin(angle) * scale), axis=1)
    closest = closest_on_ellipse(point, a, a)
    assert np.abs((closest[:, 0] / a) ** 2 + (closest[:, 1] / a) ** 2 - 1.0).max() < 1e-12
    radial = point * (a / np.linalg.norm(point, axis=1))[:, None]
    assert np.abs(closest - radial).max() <= 1e-15 * a.max()
    t = np.linspace(0.0, 2 * np.pi, 20001)
    for k in range(0, m, 10):
        ring = a[k] * np.stack((np.cos(t), np.sin(t)), axis=1)
        best = np.linalg.norm(ring - point[k], axis=1).min()
        assert np.linalg.norm(closest[k] - point[k]) <= best + 1e-12
    for k in range(0, m, 30):
        np.testing.assert_array_equal(closest_on_ellipse(point[k:k + 1], a[k:k + 1],
                                                         a[k:k + 1]), closest[k:k + 1])
    b = np.where(np.arange(m) % 2 == 0, a, rng.uniform(1e-6, 3.0, m))
    mixed = closest_on_ellipse(point, a, b)
    np.testing.assert_array_equal(mixed[::2], closest[::2])
    ellipse = np.arange(1, m, 2)
    np.testing.assert_array_equal(mixed[ellipse], closest_on_ellipse(point[ellipse],
                                                                     a[ellipse], b[ellipse]))
