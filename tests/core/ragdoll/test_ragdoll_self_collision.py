"""Capsule-capsule collisions between bodies of one ragdoll, and between ragdolls that opt in."""

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
)
from waft.core.ragdoll._bench_cases import ground, humanoid_rest, walk_targets
from waft.core.ragdoll.bodies import Bodies
from waft.core.ragdoll.self_collision import SelfCollision, segment_pairs_closest

from .conftest import chain_rest


def test_pairs_skip_joint_neighbours_and_bind_pose_overlaps():
    rest = humanoid_rest(17)
    model = build_ragdoll_model(ragdolls=[rest])
    sc = SelfCollision(ragdoll=model.ragdoll_of_body, parent=model.parent,
                       rest_matrix=model.rest_matrix, half=model.length / 2, radius=model.radius)
    pairs = {tuple(sorted(p)) for p in zip(sc.a, sc.b, strict=True)}
    neighbours = {tuple(sorted(p)) for p in model.neighbours}
    assert not pairs & neighbours
    assert (1, 11) not in pairs  # spine and thigh.L overlap at bind pose (around the hips)
    assert (7, 10) in pairs  # the two hands may collide
    assert sc.count > 80


def _pair_beside(gap: float):
    """Three capsules (radius 0.1 m, masses 1, 2, 3) whose only pair is bodies 0 and 2, with
    body 2 (vertical) brought to `gap` beside body 0 (vertical): (model, half lengths, the
    SelfCollision, the Bodies)."""
    rest = chain_rest([(0, 0, 1.0), (0, 0, 0.5), (1, 0, 0.5)],
                      [(0, 0, 0.5), (1, 0, 0.5), (1, 0, 1.0)], radius=0.1, mass=(1, 2, 3))
    model = build_ragdoll_model(ragdolls=[rest])
    half = model.length / 2
    sc = SelfCollision(ragdoll=model.ragdoll_of_body, parent=model.parent,
                       rest_matrix=model.rest_matrix, half=half, radius=model.radius)
    centre = model.rest_matrix[:, :3, 3] + model.rest_matrix[:, :3, 1] * half[:, None]
    centre[2] = centre[0] + (gap, 0.0, 0.0)
    q = np.tile([1.0, 0, 0, 0], (3, 1))
    q[0] = q[2] = (0.0, 1.0, 0.0, 0.0)  # both pointing down (+Y -> -Y about X: 180 deg)
    s = Bodies.at(centre, q)
    s.inv_mass[:3] = 1 / model.mass
    s.inv_inertia[:3] = 1 / model.inertia
    s.freeze_inertia()
    return model, half, sc, s


def test_one_pass_separates_a_pair_and_conserves_momentum():
    model, half, sc, s = _pair_beside(0.15)  # overlapping by 0.05 m
    assert list(zip(sc.a, sc.b, strict=True)) == [(0, 2)]
    before = s.x[:3].copy()
    sc.solve(s, np.ones(3, dtype=bool))
    a0, b0 = s.x[0] + s.R[0, :, 1] * half[0], s.x[0] - s.R[0, :, 1] * half[0]
    a2, b2 = s.x[2] + s.R[2, :, 1] * half[2], s.x[2] - s.R[2, :, 1] * half[2]
    p, q2 = segment_pairs_closest(a0[None], b0[None], a2[None], b2[None])
    assert np.linalg.norm(p - q2) >= 0.2 - 1e-9
    moved = (s.x[:3] - before) * model.mass[:, None]
    assert np.allclose(moved.sum(axis=0), 0.0, atol=1e-12)


def test_a_limp_ragdoll_falling_down_does_not_pass_through_itself():
    rest = humanoid_rest(17)
    rest = dataclasses.replace(rest, swing_limit=np.full((17, 2), np.inf),
                               twist_limit=np.tile([-np.inf, np.inf], (17, 1)))
    cs, M = ground(0.0)
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    frames = 60
    target = walk_targets(rest, frames=frames, fps=30.0, speed=0.0, scale=0.0)
    drive = RagdollDrive(fps=30.0, target=target,
                         collider_matrix=np.broadcast_to(M, (frames, 1, 4, 4)),
                         params=RagdollParams.defaults(17, 1, mode=2, root_lock=False,
                                                       joint_damping=0.5))
    sc = SelfCollision(ragdoll=model.ragdoll_of_body, parent=model.parent,
                       rest_matrix=model.rest_matrix, half=model.length / 2, radius=model.radius)

    def worst(result):  # (frames,) deepest overlap of any pair
        P = result.physics_matrix
        a = P[..., :3, 3]
        b = a + P[..., :3, 1] * model.length[:, None]
        p, q = segment_pairs_closest(a[:, sc.a].reshape(-1, 3), b[:, sc.a].reshape(-1, 3),
                                     a[:, sc.b].reshape(-1, 3), b[:, sc.b].reshape(-1, 3))
        overlap = np.tile(sc.sum_radius, frames) - np.linalg.norm(p - q, axis=1)
        return overlap.reshape(frames, -1).max(axis=1)

    off = worst(bake_ragdoll(model, drive, RagdollSettings(self_collision=False)))
    on = worst(bake_ragdoll(model, drive, RagdollSettings()))
    assert off.max() > 0.1  # the limbs fold through the body without it
    # On landing (frame 18) the thigh comes down on a foot held by the ground: the iterations
    # leave them overlapping, and since a passive ragdoll may not gain energy (cap_energy)
    # they are no longer popped apart by a separation speed, but pushed apart by position.
    # From the next frame on they are apart to within 5 mm. (Split by all their candidate
    # pairs rather than the pairs acting, a pelvis in ten pairs took a tenth of each push:
    # 44 mm the frame after landing, 20 mm the one after, a head folded onto the pelvis 6.7 mm
    # inside while lying still.)
    assert on.max() < 0.05
    assert on[20:].max() < 0.005


def test_segment_closest_points_match_brute_force():
    rng = np.random.default_rng(3)
    p1, q1, p2, q2 = (rng.normal(size=(200, 3)) for _ in range(4))
    q2[:20] = p2[:20] + 0.7 * (q1[:20] - p1[:20])  # parallel pairs too
    p, q = segment_pairs_closest(p1, q1, p2, q2)
    t = np.linspace(0, 1, 401)
    a = p1[:, None] + t[None, :, None] * (q1 - p1)[:, None]
    b = p2[:, None] + t[None, :, None] * (q2 - p2)[:, None]
    brute = np.linalg.norm(a[:, :, None] - b[:, None, :], axis=-1).min(axis=(1, 2))
    found = np.linalg.norm(p - q, axis=1)
    assert np.all(found <= brute + 1e-9)
    assert np.all(found >= brute - 1e-2)


def _two_bars(collide: bool) -> np.ndarray:
    """Bar A lies on the ground, bar B (crossed over it) is dropped onto it from 1 m; both
    free, each its own ragdoll. Returns B's centre height per frame."""
    a = dataclasses.replace(chain_rest([(-0.3, 0.0, 0.05)], [(0.3, 0.0, 0.05)], setup="A"),
                collide_with_others=collide)
    b = dataclasses.replace(chain_rest([(0.0, -0.3, 1.0)], [(0.0, 0.3, 1.0)], setup="B"),
                collide_with_others=collide)
    cs, M = ground(0.0)
    model = build_ragdoll_model(ragdolls=[a, b], colliders=cs)
    frames = 45
    target = np.repeat(model.rest_matrix[None], frames, axis=0)
    drive = RagdollDrive(fps=30.0, target=target,
                         collider_matrix=np.broadcast_to(M, (frames, 1, 4, 4)),
                         params=RagdollParams.defaults(2, 2, mode=BodyMode.FREE,
                                                       root_lock=False))
    result = bake_ragdoll(model, drive, RagdollSettings(self_collision=False))
    return result.physics_matrix[:, 1, 2, 3]


def test_ragdolls_that_opt_in_collide_with_each_other():
    assert _two_bars(collide=True)[-1] == pytest.approx(0.15, abs=0.005)  # on top of A
    assert _two_bars(collide=False)[-1] == pytest.approx(0.05, abs=0.005)  # through it


def _bar_sliding_across_a_bar(friction: float, speed: float = 0.5) -> tuple[float, float]:
    """Bar B (radius 3 cm) lies on bar A (radius 8 cm, on the ground), along it, and starts
    sliding along their axes at `speed`; both free, each its own ragdoll, `friction`
    everywhere. (B's rest is 1 cm higher: pairs touching at rest never collide.)
    Returns how far B's centre has slid after 0.3 s and its speed along its axis then."""
    a = dataclasses.replace(chain_rest([(0.0, -0.4, 0.08)], [(0.0, 0.4, 0.08)], setup="A",
                                       radius=0.08, mass=4.0), collide_with_others=True)
    b = dataclasses.replace(chain_rest([(0.0, -0.3, 0.2)], [(0.0, 0.3, 0.2)], setup="B",
                                       radius=0.03), collide_with_others=True)
    cs, M = ground(0.0)
    model = build_ragdoll_model(ragdolls=[a, b], colliders=cs)
    fps, frames = 60.0, 19
    target = np.repeat(model.rest_matrix[None], frames, axis=0)
    target[:, 1, 1, 3] += speed * np.arange(frames) / fps  # B's animation: along its axis (y)
    target[:, 1, 2, 3] -= 0.01  # ... starting on A
    drive = RagdollDrive(fps=fps, target=target,
                         collider_matrix=np.broadcast_to(M, (frames, 1, 4, 4)),
                         params=RagdollParams.defaults(2, 2, mode=BodyMode.FREE,
                                                       root_lock=False, friction=friction,
                                                       joint_damping=0.0))
    y = bake_ragdoll(model, drive, RagdollSettings(self_collision=False)).physics_matrix[:, 1, 1, 3]
    return float(y[-1] - y[0]), float((y[-1] - y[-2]) * fps)


def test_a_body_sliding_on_another_stops_as_coulomb_friction_says():
    """Coulomb friction between the bodies (Müller et al. 2020 §3.6): a bar sliding at v
    across another stops within v² / (2 μ g); frictionless it keeps sliding (the bodies of a
    limp character lying on each other slid for seconds)."""
    v, mu = 0.5, 0.5
    slid, speed = _bar_sliding_across_a_bar(mu, v)
    assert slid == pytest.approx(v * v / (2 * mu * 9.81), rel=0.1)
    assert abs(speed) < 0.02
    slid_free, speed_free = _bar_sliding_across_a_bar(0.0, v)
    assert slid_free > 0.8 * v * 0.3 and speed_free > 0.8 * v


def test_pairs_judged_clear_without_their_closest_points_are_clear():
    """`SelfCollision._clear` skips a pass from the broad phase's distances and how far each
    body moved since: wherever it says no pair can touch, the full closest-point test must
    find none within the reach. Two capsules (0.3 and 0.5 m) a few cm apart, half of them
    nearly parallel (the closest points' weakest case), moved and turned by up to 2 cm at
    their tips; and it must say clear often enough to matter."""
    from waft.core.ragdoll.bodies import qmul, quat_exp

    half, radius = np.array([0.15, 0.25]), np.array([0.04, 0.06])
    far = np.tile(np.eye(4), (2, 1, 1))
    far[1, 0, 3] = 5.0
    sc = SelfCollision(ragdoll=np.zeros(2, dtype=int), parent=np.array([2, 2]),
                       rest_matrix=far, half=half, radius=radius)
    assert sc.count == 1
    rng = np.random.default_rng(3)
    movable = np.ones(2, dtype=bool)
    said_clear = 0
    for trial in range(3000):
        q = quat_exp(rng.normal(size=(2, 3)) * 2.0)
        if trial % 2:  # nearly parallel
            q[1] = qmul(quat_exp(1e-6 * rng.normal(size=(1, 3))), q[:1])[0]
        s = Bodies.at(np.zeros((2, 3)), q)
        # body 1 placed along the normal of the closest points, its surface 0-3 cm away
        p, r = segment_pairs_closest(*((s.x[k] + sign * s.R[k, :, 1] * half[k])[None]
                                       for k in (0, 1) for sign in (-1.0, 1.0)))
        away = p[0] - r[0] if np.linalg.norm(p[0] - r[0]) > 1e-9 else rng.normal(size=3)
        clearance = rng.uniform(0.0, 0.03)
        normal = away / np.linalg.norm(away)
        s.x[1] += p[0] - r[0] - normal * (radius.sum() + clearance)
        if not sc.near(s, 0.05):
            continue
        # moves about as large as the clearance, the tightest toward body 0: a translation
        # along the normal, or a turn about the centre (then its end may swing closer)
        size = clearance * rng.uniform(0.5, 1.5)
        kind = trial % 3
        if kind == 0:
            s.x[1] += normal * size
        elif kind == 1:
            s.q[1] = qmul(quat_exp(rng.normal(size=(1, 3)) * size / half[1]), s.q[1:2])[0]
        else:
            s.x[:2] += rng.normal(size=(2, 3)) * size / np.sqrt(3.0)
            s.q[:2] = qmul(quat_exp(rng.normal(size=(2, 3)) * size / half[:, None]), s.q[:2])
        s.R[:2] = Bodies.at(s.x[:2], s.q[:2]).R[:2]
        s.freeze_inertia()
        for reach in (0.0, 0.001):
            if sc._clear(s, reach):
                said_clear += 1
                assert sc._contact(s, movable, reach) is None
    assert said_clear > 150


def _bar_on_a_sloping_bar(friction: float, *, hz: float = 240.0, seconds: float = 1.0,
                          slope: float = 15.0) -> float:
    """Bar B (radius 3 cm) lies along bar A (radius 8 cm), both on a `slope`° incline along
    their axes; A is kinematic (held on its animation), B free, `friction` on both. Returns
    how far B slid along A (down is negative) in `seconds`."""
    turn = np.radians(slope)
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(turn), -np.sin(turn)],
                     [0.0, np.sin(turn), np.cos(turn)]])
    a = dataclasses.replace(chain_rest([tilt @ (0.0, -0.4, 0.08)], [tilt @ (0.0, 0.4, 0.08)],
                                       setup="A", radius=0.08, mass=4.0),
                            collide_with_others=True)
    b = dataclasses.replace(chain_rest([tilt @ (0.0, -0.3, 0.2)], [tilt @ (0.0, 0.3, 0.2)],
                                       setup="B", radius=0.03), collide_with_others=True)
    model = build_ragdoll_model(ragdolls=[a, b])
    fps = 30.0
    frames = int(seconds * fps) + 1
    target = np.repeat(model.rest_matrix[None], frames, axis=0)
    target[:, 1, :3, 3] -= 0.01 * tilt[:, 2]  # B starts on A (its rest is 1 cm above)
    drive = RagdollDrive(fps=fps, target=target, collider_matrix=np.zeros((frames, 0, 4, 4)),
                         params=RagdollParams.defaults(
                             2, 2, mode=[[BodyMode.KINEMATIC, BodyMode.FREE]],
                             root_lock=False, friction=friction, joint_damping=0.0))
    result = bake_ragdoll(model, drive, RagdollSettings(self_collision=False, substep=1.0 / hz))
    along = (result.physics_matrix[:, 1, :3, 3] - result.physics_matrix[:, 0, :3, 3]) @ tilt[:, 1]
    return float(along[-1] - along[0])


@pytest.mark.parametrize("hz", [120.0, 240.0, 960.0])
def test_a_body_resting_on_another_does_not_creep_down_a_slope(hz):
    """Static friction between the bodies, in the position solve (Müller et al. 2020 §3.5,
    `SelfCollision.hold`): friction 0.5 > tan 15° holds a bar lying along another on a 15°
    slope. With friction in the velocity pass alone it crept at g sin 15° h per second, by the
    tangential part of g h² in every substep's positions (1 s: 22 mm at 120 Hz, 11 mm at
    240 Hz, 3 mm at 960 Hz)."""
    assert abs(_bar_on_a_sloping_bar(0.5, hz=hz)) < 1e-4


def test_a_body_on_a_slope_steeper_than_its_friction_slides_as_coulomb_says():
    """Friction 0.1 < tan 15°: the bar slides down the other with g (sin θ - μ cos θ)."""
    seconds, mu, turn = 0.5, 0.1, np.radians(15.0)
    expected = -0.5 * 9.81 * (np.sin(turn) - mu * np.cos(turn)) * seconds**2
    assert _bar_on_a_sloping_bar(mu, seconds=seconds) == pytest.approx(expected, rel=0.05)


@pytest.mark.parametrize("used", [0.0, 0.5, 1.0])
def test_the_velocity_pass_rubs_with_what_the_hold_left_of_the_cone(used):
    """One Coulomb cone per substep, shared by the position solve's static friction and the
    velocity pass's kinetic friction (`SelfCollision.hold`, `stop_normal_motion`): after the
    hold used a share `used` of friction × the summed normal impulse, a pair sliding fast
    gets the rest of the bound as its tangential impulse, not the whole bound again."""
    model, _, sc, s = _pair_beside(0.2)  # touching: radii 0.1 + 0.1
    movable = np.ones(3, dtype=bool)
    assert sc.near(s, 0.01)
    h, mu, normal = 1.0 / 240.0, 0.5, 0.01  # normal: the substep's summed λ_n (kg m)
    sc.normal_total[:] = normal
    sc.tangent_total[:] = (0.0, used * mu * normal, 0.0)
    s.v[2] = (0.0, 5.0, 0.0)  # sliding along the other, faster than friction can stop
    sc.stop_normal_motion(s, movable, friction=np.full(3, mu), h=h)
    impulse = model.mass[2] * np.linalg.norm(s.v[2] - (0.0, 5.0, 0.0))
    assert impulse == pytest.approx((1.0 - used) * mu * normal / h, rel=1e-9)
