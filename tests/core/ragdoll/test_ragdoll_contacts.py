"""Capsule bodies against every collider shape, friction, and the segment helpers."""

from __future__ import annotations

import numpy as np
import pytest

from waft.core.colliders import ColliderKind, ColliderSet
from waft.core.ragdoll import BodyMode, RagdollSettings, bake_ragdoll, build_ragdoll_model
from waft.core.ragdoll._bench_cases import ground
from waft.core.ragdoll.contacts import closest_between_segments, closest_on_segment
from waft.core.ragdoll.level import JOINT_TOLERANCE
from waft.core.ragdoll.motors import motor_omega

from .conftest import (
    chain_rest,
    folding_humanoid,
    limp_drop,
    record_gaps_and_depths,
    static_drive,
)

FREE = BodyMode.FREE


def test_segment_helpers():
    a = np.array([[0.0, 0, 0], [0, 0, 0]])
    b = np.array([[1.0, 0, 0], [1, 0, 0]])
    p = closest_on_segment(a, b, np.array([0.3, 1.0, 0.0]))
    assert np.allclose(p, [[0.3, 0, 0]] * 2)
    q = closest_between_segments(a, b, np.array([2.0, -1, 1]), np.array([2.0, 1, 1]))
    assert np.allclose(q, [[1, 0, 0]] * 2)
    q = closest_between_segments(a, b, np.array([0.5, -1, 1]), np.array([0.5, 1, 1]))
    assert np.allclose(q, [[0.5, 0, 0]] * 2)


def _drop(colliders: ColliderSet, matrix: np.ndarray, *, frames=45, friction=0.5,
          start=(0.0, 0.0, 1.0), tail=(0.3, 0.0, 1.0), radius=0.05):
    """A free horizontal capsule dropped from `start` onto a collider."""
    rest = chain_rest([start], [tail], radius=radius)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    drive = static_drive(model, rest.rest_matrix, frames, collider_matrix=matrix[None],
                         mode=FREE, root_lock=False, friction=friction)
    return model, bake_ragdoll(model, drive, RagdollSettings())


def _ends(model, result):
    m = result.physics_matrix[:, 0]
    return m[:, :3, 3], m[:, :3, 3] + m[:, :3, 1] * model.length[0]


def test_capsule_rests_on_the_ground_plane():
    cs, M = ground(0.2)
    model, result = _drop(cs, M)
    a, b = _ends(model, result)
    lowest = np.minimum(a[:, 2], b[:, 2]) - 0.05
    assert lowest.min() > 0.2 - 1e-6  # never below the ground
    assert lowest[-1] == pytest.approx(0.2, abs=2e-3)  # resting on it
    assert abs(a[-1, 2] - b[-1, 2]) < 2e-3  # lying flat


def test_capsule_against_sphere_box_capsule_colliders():
    cases = {
        "sphere": (ColliderKind.ELLIPSOID, dict(size=[0.3]), (0.15, 0.0, 0.3)),
        "box": (ColliderKind.BOX, dict(size=[0.25]), (0.15, 0.0, 0.25)),
        "capsule": (ColliderKind.CAPSULE, dict(size=[0.4], radius_a=[0.2], radius_b=[0.2]),
                    (0.15, 0.0, 0.2)),
    }
    for name, (kind, fields, centre) in cases.items():
        cs = ColliderSet.create(names=(name,), kind=[kind], **fields)
        M = np.eye(4)
        if kind == ColliderKind.CAPSULE:  # lying along world Y
            M[:3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]
        M[:3, 3] = centre
        model, result = _drop(cs, M, frames=30, friction=1.0)
        a, b = _ends(model, result)
        # The capsule's axis must stay at least its radius from the collider surface.
        t = np.linspace(0, 1, 21)[None, :, None]
        axis = a[:, None] + t * (b - a)[:, None]
        from waft.core.colliders import shape_normal
        _, sd = shape_normal(int(kind), axis.reshape(-1, 3), M, np.linalg.inv(M), cs, 0)
        assert sd.min() > 0.05 - 2e-3, name
        # It landed on top (was stopped, did not fall through to the floor of the test).
        assert a[-1, 2] > centre[2] - 0.01, name


def test_friction_stops_a_sliding_capsule_and_zero_friction_does_not():
    # The target slides along X at 2 m/s; the body starts with that velocity.
    slopes = {mu: _slide((1.0, 0.0, 0.0), mu, frames=20)[-1, 0, 3] for mu in (0.0, 1.0)}
    assert slopes[0.0] == pytest.approx(2.0 * 19 / 30, rel=0.02)  # slides on
    # Coulomb: v² / (2 μ g) = 0.2 m to stop from 2 m/s
    assert slopes[1.0] == pytest.approx(0.2, abs=0.05)


def test_collider_mask_and_kinematic_bodies_are_not_pushed():
    cs, M = ground(0.5)
    rest = chain_rest([(0, 0, 1.0), (0, 0, 0.8)], [(0, 0, 0.8), (0, 0, 0.4)])
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs,
                                collider_mask=np.array([[True], [False]]))
    drive = static_drive(model, rest.rest_matrix, 10, collider_matrix=M[None],
                         mode=np.array([[BodyMode.KINEMATIC, BodyMode.DRIVEN]]),
                         motor_strength=1.0)
    result = bake_ragdoll(model, drive, RagdollSettings())
    # The driven body hangs through the ground (masked out), as its motor demands.
    assert np.allclose(result.physics_matrix[:, 1], drive.target[:, 1], atol=1e-6)


def _slide(direction, mu: float, v0: float = 2.0, frames: int = 45, radius: float = 0.05):
    """A free capsule lying on the ground, launched at v0 along `direction`."""
    cs, M = ground(0.0)
    rest = chain_rest([(0, 0, radius)], [(0.3, 0, radius)], radius=radius)
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    target = np.repeat(rest.rest_matrix[None], frames, axis=0)
    target[:, 0, :3, 3] += v0 * np.arange(frames)[:, None] / 30.0 * np.asarray(direction)
    from waft.core.ragdoll import RagdollDrive, RagdollParams
    drive = RagdollDrive(fps=30.0, target=target, collider_matrix=np.broadcast_to(
        M, (frames, 1, 4, 4)), params=RagdollParams.defaults(
            1, 1, mode=FREE, root_lock=False, friction=mu))
    return bake_ragdoll(model, drive, RagdollSettings()).physics_matrix[:, 0]


def _on_slope(tilt: float, mu: float, frames: int = 91) -> np.ndarray:
    """The centre (frames, 3) of a free capsule laid along the fall line of a plane tilted by
    `tilt` (degrees), 1 mm above it."""
    cs, M = ground(0.0)
    c, s = np.cos(np.radians(tilt)), np.sin(np.radians(tilt))
    tilted = np.eye(4)
    tilted[:3, :3] = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
    normal, down = tilted[:3, 2], tilted[:3, 0]
    head = normal * 0.051
    rest = chain_rest([tuple(head)], [tuple(head + 0.3 * down)], radius=0.05)
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    drive = static_drive(model, rest.rest_matrix, frames, collider_matrix=(tilted @ M)[None],
                         mode=FREE, root_lock=False, friction=mu)
    m = bake_ragdoll(model, drive, RagdollSettings()).physics_matrix[:, 0]
    return m[:, :3, 3] + m[:, :3, 1] * 0.15


def test_static_friction_holds_a_capsule_on_a_slope_and_coulomb_lets_a_steeper_one_slide():
    """Friction acted in the velocity pass only: each substep's positions had already slid by
    the tangential part of g h² before the velocity was stopped, so a capsule on a 15° slope
    with friction 0.5 (tan 15° = 0.27) crept down at g sin 15° h = 10.6 mm/s for ever (21 mm
    over the 2 s). Static friction in the position solve (Müller 2020 §3.5, on by default)
    holds it; with friction 0.2 it slides as Coulomb's block, ½ g (sin θ − μ cos θ) t²."""
    held = _on_slope(15.0, 0.5)
    assert np.linalg.norm(held[-1] - held[30]) < 1e-4  # (10.6 mm/s: 21 mm over the 2 s)
    slid = _on_slope(15.0, 0.2)
    t, theta = 90 / 30.0, np.radians(15.0)
    coulomb = 0.5 * 9.81 * (np.sin(theta) - 0.2 * np.cos(theta)) * t * t
    assert np.linalg.norm(slid[-1] - slid[0]) == pytest.approx(coulomb, rel=0.03)


def test_static_friction_holds_no_more_than_the_friction_cone_over_a_substep():
    """A capsule lying on the ground, pressed 1 mm into it and pulled 0.3 mm sideways before
    each of four iterations (as a joint pulls): friction 0.5 may give at most 0.5 × the
    substep's normal impulse, m × 0.5 mm, against the 1.2 mm of pulls. Each iteration's
    correction was checked against the summed normal impulse alone, so the hold put it back
    every time (m × 1.2 mm, 2.4 times what friction can); now it holds the first pull, lets
    go at the second, and the body keeps 0.9 mm of them."""
    from waft.core.ragdoll.bodies import Bodies
    from waft.core.ragdoll.contacts import Contacts
    from waft.core.rotations import quat_from_matrix

    r = 0.05
    rest = chain_rest([(0.0, 0.0, r)], [(0.3, 0.0, r)], radius=r, mass=2.0)
    colliders, M = ground(0.0)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    half = model.length / 2.0
    centre = rest.rest_matrix[:, :3, 3] + rest.rest_matrix[:, :3, 1] * half[:, None]
    s = Bodies.at(centre, quat_from_matrix(rest.rest_matrix[:, :3, :3]))
    s.inv_mass[0], s.inv_inertia[0] = 1.0 / model.mass[0], 1.0 / model.inertia[0]
    s.freeze_inertia()
    contacts = Contacts(model, np.arange(1), half, model.radius)
    frame = contacts.frame(M[None])
    contacts.begin()
    s.x[0, 2] -= 0.001
    for _ in range(4):
        s.x[0, 0] += 0.0003
        contacts.solve(s, frame, np.array([True]), friction=np.array([0.5]))
    normal = contacts.normal_total[0, 0]
    assert normal == pytest.approx(model.mass[0] * 0.001, rel=0.01)
    given = model.mass[0] * (0.0012 - (s.x[0, 0] - centre[0, 0]))
    assert given <= 0.5 * normal * (1.0 + 1e-9), (given, normal)
    assert s.x[0, 0] - centre[0, 0] == pytest.approx(0.0009, abs=1e-6)


@pytest.mark.parametrize("direction", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.6, 0.8, 0.0)])
def test_a_sliding_capsule_stops_at_the_coulomb_distance_without_spinning(direction):
    """Friction at the middle of the contact: a capsule sliding sideways used to be rubbed at
    whichever end was deeper and spun 85° (stopping at half the distance)."""
    m = _slide(direction, mu=0.5)
    centre = m[:, :3, 3] + m[:, :3, 1] * 0.15
    travelled = np.linalg.norm(centre[-1, :2] - centre[0, :2])
    assert travelled == pytest.approx(2.0 ** 2 / (2 * 0.5 * 9.81), rel=0.05)
    turn = np.degrees(np.arccos(np.clip(m[-1, :3, 1] @ m[0, :3, 1], -1.0, 1.0)))
    assert turn < 1.0


@pytest.mark.parametrize(("v0", "radius"), [(6.0, 0.02), (8.0, 0.03), (5.0, 0.01)])
def test_a_fast_slide_is_not_stopped_by_the_substep_sweep(v0, radius):
    """Faster than its radius per substep, a capsule sliding on the ground was put back by the
    continuous-collision sweep at the first point of its path each substep (every point of a
    slide touches the ground): it slid a quarter of the Coulomb distance, as if launched at
    half its speed. The sweep now leaves a body alone against a collider it slides along."""
    mu = 0.5
    coulomb = v0**2 / (2 * mu * 9.81)
    frames = int((v0 / (mu * 9.81) + 0.5) * 30.0) + 1
    m = _slide((0.0, 1.0, 0.0), mu=mu, v0=v0, frames=frames, radius=radius)
    centre = m[:, :3, 3] + m[:, :3, 1] * 0.15
    travelled = np.linalg.norm(centre[-1, :2] - centre[0, :2])
    assert travelled == pytest.approx(coulomb, rel=0.05)
    assert np.all(m[:, 2, 3] > radius - 1e-3)  # on the ground, not in it


@pytest.mark.parametrize(("restitution", "height"), [(0.0, 0.0), (0.5, 0.25), (0.8, 0.64)])
def test_a_capsule_dropped_from_a_metre_bounces_to_restitution_squared(restitution, height):
    from waft.core.ragdoll import RagdollDrive, RagdollParams
    cs, M = ground(0.0)
    rest = chain_rest([(0, 0, 1.05)], [(0.3, 0, 1.05)])
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    frames = 60
    drive = RagdollDrive(fps=30.0, target=np.repeat(rest.rest_matrix[None], frames, axis=0),
                         collider_matrix=np.broadcast_to(M, (frames, 1, 4, 4)),
                         params=RagdollParams.defaults(1, 1, mode=FREE, root_lock=False,
                                                       restitution=restitution))
    z = bake_ragdoll(model, drive, RagdollSettings()).physics_matrix[:, 0, 2, 3] - 0.05
    landed = int(np.argmin(z[:20]))  # the fall takes 0.45 s
    bounce = z[landed:].max()
    if restitution == 0.0:
        assert bounce < 0.01
    else:  # (v e)² / 2g = e² h, sampled at frames
        assert bounce == pytest.approx(height, rel=0.1)


def test_a_fast_body_does_not_tunnel_through_a_thin_wall():
    """30 m/s is 12.5 cm per 240 Hz substep: the capsule used to jump over a 2 cm box."""
    from waft.core.ragdoll import RagdollDrive, RagdollParams
    cs = ColliderSet.create(names=("Wall",), kind=[ColliderKind.BOX], size=[1.0])
    M = np.diag([0.01, 2.0, 2.0, 1.0])  # the unit box scaled to 2 cm x 4 m x 4 m
    M[0, 3] = 0.5
    rest = chain_rest([(0, 0, 1.0)], [(0, 0, 1.3)])
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    frames = 20
    target = np.repeat(rest.rest_matrix[None], frames, axis=0)
    target[:, 0, 0, 3] += 30.0 * np.arange(frames) / 30.0
    drive = RagdollDrive(fps=30.0, target=target, collider_matrix=np.broadcast_to(
        M, (frames, 1, 4, 4)), params=RagdollParams.defaults(
            1, 1, mode=FREE, root_lock=False, gravity=(0.0, 0.0, 0.0)))
    x = bake_ragdoll(model, drive, RagdollSettings()).physics_matrix[:, 0, 0, 3]
    assert x.max() <= 0.5 - 0.01 - 0.05 + 1e-3  # stopped on the near face


@pytest.mark.parametrize(("speed", "strength"), [(0.5, 0.9), (2.0, 0.9), (1.0, 0.5)])
def test_a_shoulder_pressed_into_a_wall_keeps_its_joint(speed, strength):
    """A chest (root locked, its animation walking into a wall) whose arm hangs from a shoulder
    on the wall's side: the wall stops the chest with the shoulder joint inside it. The final
    projection used to translate the arm out, opening the shoulder by 12-14 mm (8 cm in the
    fall sample, an arm drawn inside the wall); now the chest turns to lift its joint out and
    the arm stays on it, outside the wall."""
    frames, fps = 45, 30.0
    rest = chain_rest([(0, 0, 1.0), (-0.18, 0.0, 1.36)], [(0, 0, 1.4), (-0.18, 0.0, 1.0)],
                      radius=(0.11, 0.045), mass=(20.0, 3.0), parent=[-1, 0])
    # a wall whose outside is +X, its face at x = 0.5; the chest starts 0.25 m from it
    cs = ColliderSet.create(names=("Wall",), kind=[ColliderKind.PLANE], size=[1.0])
    M = np.eye(4)
    M[:3, 0], M[:3, 1], M[:3, 2], M[:3, 3] = (0, 1, 0), (0, 0, 1), (1, 0, 0), (0.5, 0, 0)
    target = np.repeat(rest.rest_matrix[None], frames, axis=0).copy()
    target[:, :, 0, 3] += 0.75 - speed * np.arange(frames)[:, None] / fps
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    drive = static_drive(model, rest.rest_matrix, frames, fps=fps, collider_matrix=M,
                         root_lock=True, motor_strength=strength, gravity=(0.0, 0.0, 0.0))
    drive = type(drive)(fps=fps, target=target, collider_matrix=drive.collider_matrix,
                        params=drive.params)
    P = bake_ragdoll(model, drive, RagdollSettings()).physics_matrix
    anchor = np.linalg.inv(rest.rest_matrix[0]) @ rest.rest_matrix[1][:, 3]
    gap = np.linalg.norm((P[:, 0] @ anchor)[:, :3] - P[:, 1, :3, 3], axis=-1)
    assert gap.max() <= JOINT_TOLERANCE + 1.5e-3  # about the final pass's own tolerance
    arm = np.stack([P[:, 1, 0, 3], P[:, 1, 0, 3] + 0.36 * P[:, 1, 0, 1]])
    assert arm.min() >= 0.5 + 0.045 - 1e-3  # and the arm is outside the wall
    assert arm.min() <= 0.5 + 0.045 + 2e-3  # ... pressed against it


@pytest.mark.parametrize(("strength", "hz"), [(0.0, 240), (0.5, 240), (0.5, 960)])
def test_a_chain_animated_into_the_ground_is_pushed_out_without_a_launch(strength, hz):
    """Three capsules lying on the ground whose animation bends both joints 1 rad down into it
    from the first frame: the pose starts with the end 34 cm deep. It is pushed out as a
    position change, not as a collision: that penetration was removed inside the iterations,
    became velocity, and the joints handed it to the bodies the contact does not touch (thrown
    3.9 m up at strength 0.5, 64 m at 960 Hz with stronger motors). Pushed out, the chain
    holds only its motors' spring energy, about ½ ω² I θ² with θ = 1 rad at both joints: from
    the first frame on, its centre of mass may rise no higher than that lifts it. (A much
    stronger motor, 0.9, stores kilojoules in that pose, enough to throw the chain: that is the
    springs' energy, not the contact's.)"""
    frames, n = 90, 3
    mass = np.array([10.0, 3.0, 3.0])
    rest = chain_rest([(0.4 * i, 0, 0.06) for i in range(n)],
                      [(0.4 * (i + 1), 0, 0.06) for i in range(n)], radius=0.05, mass=mass)
    colliders, M = ground(0.0)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    target = np.repeat(rest.rest_matrix[None], frames, axis=0).copy()
    c, s = np.cos(1.0), np.sin(1.0)
    bend = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    target[:, 1:, :3, :3] = bend @ rest.rest_matrix[1:, :3, :3]
    drive = static_drive(model, rest.rest_matrix, frames, collider_matrix=M, root_lock=False,
                         motor_strength=strength)
    drive = type(drive)(fps=drive.fps, target=target, collider_matrix=drive.collider_matrix,
                        params=drive.params)
    P = bake_ragdoll(model, drive, RagdollSettings(substep=1.0 / hz)).physics_matrix
    centres = P[..., :3, 3] + P[..., :3, 1] * 0.2
    height = centres[..., 2] @ mass / mass.sum()
    spring = 0.5 * float(motor_omega(np.array(strength))) ** 2 * model.joint_inertia[1:].sum()
    assert height[1:].max() <= height[1] + spring / (mass.sum() * 9.81) + 0.01
    # and it comes to rest (the subtree motors' net force made it creep along the ground)
    assert np.abs(P[-1, :, :3, 3] - P[-11, :, :3, 3]).max() < 1e-4


def test_a_body_whose_head_is_a_little_inside_is_turned_out_about_it_not_lifted_whole():
    """A toe as thick as its foot has its head on the ground whenever the ankle's joint
    tolerance lets the foot's tail sink a few millimetres. Its head 5 mm inside and its tip
    3.5 cm inside, it was translated out by the tip's depth, leaving its foot by 3.5 cm (up to
    5 cm on a limp Rigify human at rest); now it is translated by the head's 5 mm and turned
    about the head for the rest, and ends outside."""
    from waft.core.ragdoll._bench_cases import bone_frame
    from waft.core.ragdoll.bodies import Bodies
    from waft.core.ragdoll.contacts import Contacts
    from waft.core.rotations import quat_from_matrix

    r = 0.02
    head, tail = np.array([0.0, 0.0, r - 0.005]), np.array([0.0, -0.1, r - 0.035])
    rest = chain_rest([(0.0, 0.1, r), (0.0, 0.0, r)], [(0.0, 0.0, r), (0.0, -0.1, r)],
                      radius=r, parent=[-1, 0])
    colliders, M = ground(0.0)
    model = build_ragdoll_model(ragdolls=[rest], colliders=colliders)
    frame = np.stack([rest.rest_matrix[0], bone_frame(head, tail)])
    half = model.length / 2.0
    centre = frame[:, :3, 3] + frame[:, :3, 1] * half[:, None]
    s = Bodies.at(centre, quat_from_matrix(frame[:, :3, :3]))
    contacts = Contacts(model, np.arange(2), half, model.radius)
    frames = contacts.frame(M[None])
    contacts.project(s, frames, np.ones(2, dtype=bool), only=np.array([1]),
                     pivot=np.array([True]))
    moved_head = s.x[1] - s.R[1][:, 1] * half[1]
    assert np.linalg.norm(moved_head - head) < 0.005 + 1e-9  # by the head's depth only
    ends = np.stack([moved_head, s.x[1] + s.R[1][:, 1] * half[1]])
    assert ends[:, 2].min() > r - 1e-9  # and out of the ground


def test_a_limp_humanoid_landing_on_straight_legs_keeps_every_joint_and_stays_out(monkeypatch):
    """A limp humanoid dropped upright lands on straight legs: the steep shins cannot be
    turned out of the ground about the knee and are translated, and with 4 iterations the
    ground's push had not reached up the legs, so the knees opened by up to 14 mm at the end
    of a substep (a limp Rigify human kneeling: 12 mm). The parents now follow (a turn at the
    hip, else the chain lifted by the excess): every joint within its tolerance and no body
    inside the ground when each substep ends."""
    from waft.core.ragdoll._bench_cases import humanoid_rest

    gaps, depths = record_gaps_and_depths(monkeypatch)
    model, drive = limp_drop(humanoid_rest(17), frames=45, lift=0.02)
    bake_ragdoll(model, drive, RagdollSettings(iterations=4))
    assert max(gaps) < JOINT_TOLERANCE + 1e-6, max(gaps)
    assert max(depths) < 1e-6, max(depths)


def test_a_limp_humanoid_landing_on_its_feet_ends_every_substep_inside_its_limits(monkeypatch):
    """The contact projection turns a body about its head out of the ground, a rotation
    relative to its parent, after the final pass left every limit exact: a limp welded Rigify
    human landing on its toes ended substeps with a foot 34° past its ankle's limit, a shin 12°
    past the knee's, a toe 42°. A body at its limit now turns with its parent (the rest of the
    push is translated and handed to the parents): every limit within 2° when each substep
    ends, every joint within its tolerance, nothing inside the ground, no energy gained."""
    from waft.core.ragdoll import level as level_module
    from waft.core.ragdoll.limits import limit_rotation
    from waft.core.ragdoll.momentum import energies

    over, gaps, depths, rises = [], [], [], []
    original = level_module.Level.step

    def step(level, sub, k):
        s, c = level.state, level.coefficients(sub.f)
        before = sum(energies(s, level.member, level.mass, level.inertia, c.gravity)).sum()
        original(level, sub, k)
        after = sum(energies(s, level.member, level.mass, level.inertia, c.gravity)).sum()
        rises.append(after - before)
        lim = np.flatnonzero(level.has_limit)
        d = limit_rotation(s.q[lim], s.q[level.parent[lim]], level.rest_relative[lim],
                           level.swing_limit[lim], level.twist_limit[lim],
                           level.swing_center[lim])
        over.append(0.0 if d is None else np.degrees(np.linalg.norm(d, axis=1).max()))
        gaps.append(level.joint_gaps(c.attach_all, level.anchor[0])[1].max())
        depths.append(level.contacts.depths(s, level.run.colliders_at(sub),
                                            np.arange(level.n)).max())

    monkeypatch.setattr(level_module.Level, "step", step)
    # tipped forward 20° about the feet and dropped 5 cm: it lands on its toes and folds
    model, drive = limp_drop(folding_humanoid(17), frames=40, tilt_deg=-20.0, lift=0.05)
    bake_ragdoll(model, drive, RagdollSettings(iterations=4))
    assert max(over) < 2.0, max(over)
    assert max(gaps) < JOINT_TOLERANCE + 1e-6, max(gaps)
    assert max(depths) < 1e-6, max(depths)
    assert max(rises) < 1e-9, max(rises)


def _shapes_and_segments(seed: int = 7):
    """A rotated, non-uniformly scaled box, a sphere, a scaled ellipsoid, a tilted plane and a
    capsule, and 4,000 random segments around them (centres, half axes, radii)."""
    rng = np.random.default_rng(seed)
    colliders = ColliderSet.create(names=["box", "sphere", "egg", "plane", "capsule"],
                                   kind=[ColliderKind.BOX, ColliderKind.ELLIPSOID,
                                         ColliderKind.ELLIPSOID, ColliderKind.PLANE,
                                         ColliderKind.CAPSULE],
                                   size=[0.5, 0.3, 0.3, 1.0, 0.2], radius_a=[0, 0, 0, 0, 0.1],
                                   radius_b=[0, 0, 0, 0, 0.1])
    M = np.tile(np.eye(4), (5, 1, 1))
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    q *= np.sign(np.linalg.det(q))
    M[0, :3, :3] = q @ np.diag([0.1, 2.0, 1.3])  # a wall turned about every axis
    M[0, :3, 3] = (0.4, -0.2, 1.0)
    M[1, :3, :3] = 1.7 * q
    M[1, :3, 3] = (-1.5, 0.5, 0.8)
    M[2, :3, :3] = np.diag([1.0, 2.0, 0.5])
    M[2, :3, 3] = (1.5, 1.5, 0.5)
    M[3, :3, :3] = q
    M[4, :3, 3] = (0.0, 2.0, 0.3)
    x = rng.uniform(-3.0, 3.0, size=(4000, 3))
    axis = rng.normal(size=(4000, 3)) * rng.uniform(0.0, 0.4, size=(4000, 1))
    radius = rng.uniform(0.01, 0.1, size=4000)
    return colliders, M, x, axis, radius


def test_the_collider_bound_is_below_every_distance_the_contacts_compute():
    """`ColliderFrame.lower_bound` lets the contact passes skip a collider's exact test: it
    must never exceed the distance outside (0 inside) of the deepest point `Contacts.deepest`
    gives (boxes, spheres, planes), and it bounds tightly enough that most far segments are
    skipped."""
    from waft.core.ragdoll.contacts import BOUND_TOLERANCE, ColliderFrame, Contacts

    colliders, M, x, axis, radius = _shapes_and_segments()
    frame = ColliderFrame(M, colliders)
    contacts = Contacts.__new__(Contacts)
    contacts.colliders, contacts.t = colliders, np.linspace(0.0, 1.0, 9)
    lower = frame.lower_bound(x, axis)
    for k in range(colliders.count):
        _, _, sd = contacts.deepest(k, x - axis, x + axis, frame, radius, point=False)
        if k in (2, 4):  # scaled ellipsoid, capsule: no bound
            assert np.all(lower[k] == -np.inf)
            continue
        outside = np.maximum(sd, 0.0)
        assert np.all(lower[k] <= outside + BOUND_TOLERANCE), (k, np.max(lower[k] - outside))
        beyond = sd > radius + 0.2
        assert np.mean(lower[k][beyond] > radius[beyond]) > 0.5, k
    # a body gone to NaN is tested as before (its NaN distances decide), not skipped
    nan = np.full((1, 3), np.nan)
    every = np.ones((colliders.count, 1), dtype=bool)
    assert contacts._within(frame, nan, nan, every, np.array([0.05])) == [True] * 5


def test_the_contact_passes_skip_the_colliders_beyond_reach_and_agree_with_the_full_test(
        monkeypatch):
    """Bodies near the box and the plane only: the projection and the depths do not test the
    sphere far from them at all (no exact test for a collider the bound puts out of reach),
    and give bit for bit what testing every collider gives."""
    from waft.core.ragdoll import contacts as contacts_module
    from waft.core.ragdoll.bodies import Bodies
    from waft.core.ragdoll.contacts import ColliderFrame, Contacts
    from waft.core.rotations import quat_from_matrix

    colliders, M, _, _, _ = _shapes_and_segments()
    rng = np.random.default_rng(3)
    n = 12
    heads = np.concatenate([rng.uniform(0.2, 0.6, size=(6, 3)) + (0.0, -0.2, 0.6),
                            rng.uniform(-0.3, 0.3, size=(6, 3)) * (1, 1, 0)])
    tails = heads + rng.normal(size=(n, 3)) * 0.15
    rests = [chain_rest([h], [t], radius=0.06, setup=f"Rig{i}")
             for i, (h, t) in enumerate(zip(heads, tails, strict=True))]
    model = build_ragdoll_model(ragdolls=rests, colliders=colliders)
    half = model.length / 2.0
    frames = model.rest_matrix
    centre = frames[:, :3, 3] + frames[:, :3, 1] * half[:, None]

    def run(skip: bool):
        if not skip:  # every collider in reach: the exact test everywhere
            monkeypatch.setattr(ColliderFrame, "lower_bound",
                                lambda self, x, axis: np.full((len(self.M), len(x)), -np.inf))
        tested = []
        deepest = Contacts.deepest
        monkeypatch.setattr(Contacts, "deepest",
                            lambda self, k, *a, **kw: tested.append(k) or deepest(self, k, *a,
                                                                                    **kw))
        s = Bodies.at(centre, quat_from_matrix(frames[:, :3, :3]))
        contacts = Contacts(model, np.arange(n), half, model.radius)
        frame = contacts.frame(M)
        depth = contacts.depths(s, frame, np.arange(n))
        contacts.project(s, frame, np.ones(n, dtype=bool), pivot=np.zeros(n, dtype=bool))
        monkeypatch.undo()
        return depth, s.x.copy(), s.q.copy(), tested

    depth, x, q, tested = run(skip=True)
    depth_all, x_all, q_all, tested_all = run(skip=False)
    assert depth.tobytes() == depth_all.tobytes()
    assert x.tobytes() == x_all.tobytes() and q.tobytes() == q_all.tobytes()
    assert depth[0].max() > 0.0 and depth[3].max() > 0.0  # the box and the plane are touched
    assert set(tested_all) == set(range(colliders.count))
    # the far sphere is not tested; the scaled ellipsoid and the capsule have no bound
    assert set(tested) == {0, 2, 3, 4}, tested
    assert contacts_module.BOUND_TOLERANCE < 1e-5



def test_a_body_pressed_on_a_fast_turning_collider_is_no_deeper_between_samples(
        monkeypatch, turned_ellipsoid):
    """Two capsules (radius 3 cm) lying along X, the second held by its motor 2 cm into an
    ellipsoid (10 cm across, 12 cm along X) turning 3,000 deg/s about X, sampled at 60 Hz,
    240 Hz substeps: the body's depth in the exactly turned collider at the end of the
    substeps between samples is no more than at the samples (0.95 mm, the contact against the
    motor). The element-wise lerp of the samples' matrices is a chord (cos(25 deg) across the
    turn halfway): 8.7 mm between samples (2.5 mm at 1,500 deg/s); with `lerp_affine` 0.95."""
    from waft.core.colliders import ellipsoid_normal
    from waft.core.ragdoll import level as level_module

    rate, omega, frames = 60.0, np.radians(3000.0), 16
    rest = chain_rest([(-0.3, 0, 0.2), (0.0, 0, 0.2)], [(0.0, 0, 0.2), (0.3, 0, 0.2)],
                      radius=0.03)
    cs = ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.1],
                            friction=[0.0])
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    centre = np.array([0.15, 0.0, 0.2 - 0.03 - 0.1 + 0.02])
    M = np.stack([turned_ellipsoid(omega * f / rate, centre) for f in range(frames)])[:, None]
    drive = static_drive(model, rest.rest_matrix, frames, fps=rate, collider_matrix=M,
                         friction=0.0)
    on_samples, between = [], []
    original = level_module.Level.step

    def step(level, sub, k):
        original(level, sub, k)
        if sub.frozen:
            return
        s, n = level.state, len(level.half)
        true = turned_ellipsoid(omega * (sub.f + sub.alpha) / rate, centre)
        u = np.linspace(-1.0, 1.0, 81)[None, :, None]  # points along each capsule's axis
        axis = s.x[:n, None] + u * s.R[:n, None, :, 1] * level.half[:, None, None]
        _, sd = ellipsoid_normal(axis.reshape(-1, 3), true, np.linalg.inv(true), 0.1)
        depth = float((level.radius[:, None] - sd.reshape(n, -1)).max())
        (on_samples if sub.alpha in (0.0, 1.0) else between).append(depth)

    monkeypatch.setattr(level_module.Level, "step", step)
    bake_ragdoll(model, drive, RagdollSettings(substep=1.0 / 240.0))
    assert on_samples and between
    assert max(between) <= max(on_samples) + 5e-5, (max(between), max(on_samples))
