"""Colliders: no particle ends inside any shape (against exact distances), friction, tunnelling."""

from __future__ import annotations

import numpy as np
import pytest

from waft import core
from waft.core import ColliderKind

RADIUS = 0.02
RNG = np.random.default_rng(11)


def rotation(axis, angle):
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def world(R, scale, t):
    M = np.eye(4)
    M[:3, :3] = R @ np.diag(scale)
    M[:3, 3] = t
    return M


# Exact signed distances used as ground truth ---------------------------------------------


def ellipsoid_distance(p_local_axes, semi):
    """Distance from points (N, 3) to an axis-aligned ellipsoid (outside points), by bisection
    on the Lagrange multiplier (Eberly)."""
    y = np.abs(p_local_axes)
    a2 = np.asarray(semi) ** 2
    lo = np.full(len(y), -np.min(a2) + 1e-15)
    hi = np.full(len(y), np.max(np.linalg.norm(y, axis=1) * np.max(semi)) + 10.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        f = np.sum((np.sqrt(a2) * y / (mid[:, None] + a2)) ** 2, axis=1) - 1
        lo = np.where(f > 0, mid, lo)
        hi = np.where(f > 0, hi, mid)
    t = 0.5 * (lo + hi)
    closest = a2 * y / (t[:, None] + a2)
    inside = np.sum((y / np.sqrt(a2)) ** 2, axis=1) < 1
    return np.where(inside, -1.0, np.linalg.norm(y - closest, axis=1))


def round_cone_distance(p, A, B, ra, rb):
    """Convex hull of two balls = union of the interpolated balls; f(t) is convex (ternary)."""
    lo, hi = np.zeros(len(p)), np.ones(len(p))

    def f(t):
        c = A + t[:, None] * (B - A)
        return np.linalg.norm(p - c, axis=1) - (ra + t * (rb - ra))

    for _ in range(200):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        left = f(m1) < f(m2)
        hi = np.where(left, m2, hi)
        lo = np.where(left, lo, m1)
    return f(0.5 * (lo + hi))


def box_distance(p_local_axes, half):
    q = np.abs(p_local_axes) - half
    outside = np.linalg.norm(np.maximum(q, 0), axis=1)
    return outside + np.minimum(np.max(q, axis=1), 0)


# ------------------------------------------------------------------------------------------


def scatter_and_settle(rig, kind, M, *, size, radius_a=0.0, radius_b=0.0, frames=3):
    """Free particles (stretch off) scattered through the collider; bake a few frames."""
    centre = M[:3, 3]
    chains = []
    for _ in range(40):
        tip = centre + RNG.uniform(-0.25, 0.25, 3)
        chains.append(np.array([centre + np.array([0.0, 0.0, 3.0]), tip]))
    colliders = core.ColliderSet.create(names=["Shape"], kind=[kind], size=[size],
                                        radius_a=[radius_a], radius_b=[radius_b])
    Ms = np.broadcast_to(M, (frames, 1, 4, 4))
    model, drive = rig.build(chains, frames=frames, colliders=colliders, collider_matrix=Ms,
                             stretch_compliance=np.inf, radius=RADIUS, gravity=(0.0, 0.0, 0.0))
    return core.bake(model, drive).positions[:, :, 1]  # (F, 40, 3)


def test_ellipsoid_from_non_uniform_scale(rig):
    R = rotation([1, 2, 3], 0.7)
    M = world(R, (0.2, 0.1, 0.15), (0.3, -0.2, 1.0))
    x = scatter_and_settle(rig, ColliderKind.ELLIPSOID, M, size=1.0)
    local = (x[-1] - M[:3, 3]) @ R  # into the ellipsoid's axes (rotation only)
    distance = ellipsoid_distance(local, (0.2, 0.1, 0.15))
    assert np.all(distance >= RADIUS - 1e-6)


def test_sphere(rig):
    M = world(rotation([0, 0, 1], 0.3), (0.5, 0.5, 0.5), (0.0, 0.0, 1.0))  # world radius 0.15
    x = scatter_and_settle(rig, ColliderKind.ELLIPSOID, M, size=0.3)
    assert np.all(np.linalg.norm(x[-1] - M[:3, 3], axis=1) >= 0.15 + RADIUS - 1e-9)


@pytest.mark.parametrize("ra, rb", [(0.08, 0.08), (0.1, 0.04)])
def test_capsule_with_two_radii(rig, ra, rb):
    R = rotation([1, 0, 1], 1.1)
    M = world(R, (1.0, 1.0, 1.0), (0.1, 0.1, 1.0))
    x = scatter_and_settle(rig, ColliderKind.CAPSULE, M, size=0.15, radius_a=ra, radius_b=rb)
    A = M[:3, :3] @ [0, 0, -0.15] + M[:3, 3]
    B = M[:3, :3] @ [0, 0, 0.15] + M[:3, 3]
    assert np.all(round_cone_distance(x[-1], A, B, ra, rb) >= RADIUS - 1e-6)


def test_box(rig):
    R = rotation([0, 1, 1], 0.5)
    scale = np.array([1.0, 2.0, 0.5])
    M = world(R, scale, (0.0, 0.2, 1.0))
    x = scatter_and_settle(rig, ColliderKind.BOX, M, size=0.1)
    local = (x[-1] - M[:3, 3]) @ R
    assert np.all(box_distance(local, 0.1 * scale) >= RADIUS - 1e-6)


def test_plane(rig):
    R = rotation([1, 0, 0], 0.4)
    M = world(R, (3.0, 3.0, 3.0), (0.0, 0.0, 1.0))
    x = scatter_and_settle(rig, ColliderKind.PLANE, M, size=1.0)
    normal = R[:, 2]
    assert np.all((x[-1] - M[:3, 3]) @ normal >= RADIUS - 1e-9)


def test_fast_collider_does_not_tunnel(rig):
    """A ball crossing a hanging chain at 24 m/s within one frame still hits it."""
    rest = rig.vertical_chain(bones=8, length=0.05, top=(0.0, 0.0, 1.0))
    frames = 6
    centres = np.zeros((frames, 3))
    centres[:, 0] = np.array([-0.5, 0.5, 1.5, 2.5, 3.5, 4.5])  # 1 m per frame
    centres[:, 2] = 0.8
    Ms = np.tile(np.eye(4), (frames, 1, 1, 1))
    Ms[:, 0, :3, :3] *= 0.1
    Ms[:, 0, :3, 3] = centres
    colliders = core.ColliderSet.create(names=["Bullet"], kind=[ColliderKind.ELLIPSOID],
                                        size=[1.0])
    model, drive = rig.build([rest], frames=frames, colliders=colliders, collider_matrix=Ms,
                             radius=RADIUS, use_tether=True)
    x = core.bake(model, drive).positions[:, 0]
    # The ball never sits on a particle at a frame, and it really hit the chain: the middle was
    # knocked well away from its rest place (an inextensible chain whirls round its upper part
    # rather than being dragged along stretched, so the direction is not asserted).
    assert np.all(np.linalg.norm(x - centres[:, None], axis=-1) >= 0.1 + RADIUS - 1e-9)
    assert np.max(np.linalg.norm(x[1, 3:6] - rest[3:6], axis=-1)) > 0.05


def test_friction_holds_a_particle_on_a_slope_only_with_enough_mu(rig):
    angle = np.radians(20.0)  # tan = 0.364
    R = rotation([1, 0, 0], angle)
    M = world(R, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0))
    normal = R[:, 2]
    start = normal * RADIUS  # resting on the slope
    rest = np.array([start + [0.0, 0.0, 2.0], start])  # root far above, segment off

    def slide(mu):
        colliders = core.ColliderSet.create(names=["Slope"], kind=[ColliderKind.PLANE],
                                            size=[1.0], friction=[mu])
        model, drive = rig.build([rest], frames=48, colliders=colliders,
                                 collider_matrix=np.broadcast_to(M, (48, 1, 4, 4)),
                                 stretch_compliance=np.inf, radius=RADIUS)
        x = core.bake(model, drive).positions[:, 0, 1]
        assert np.all((x - M[:3, 3]) @ normal >= RADIUS - 1e-9)
        return np.linalg.norm(x[-1] - start)

    assert slide(0.6) < 1e-6
    slid = slide(0.0)
    expected = 0.5 * 9.81 * np.sin(angle) * (47 / 24) ** 2  # frictionless slide to frame 47
    assert slid == pytest.approx(expected, rel=1e-6)  # Verlet is exact for constant g
    assert slide(0.2) > 0.5 * slid * 0.1  # kinetic friction slows but does not stop it


def test_collider_mask_limits_which_strands_collide(rig):
    M = world(np.eye(3), (1.0, 1.0, 1.0), (0.0, 0.0, 1.0))
    colliders = core.ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID], size=[0.2])
    rest = np.array([[0.0, 0.0, 3.0], [0.05, 0.0, 1.0]])
    chains = [rest, rest, rest]
    model, drive = rig.build(chains, frames=3, colliders=colliders,
                             collider_matrix=np.broadcast_to(M, (3, 1, 4, 4)),
                             stretch_compliance=np.inf, radius=RADIUS, gravity=(0, 0, 0))
    masked = core.build_strand_model(
        chains=[core.ChainRest("Rig", f"c{i}", c, [True, False]) for i, c in enumerate(chains)],
        colliders=colliders, collider_mask=np.array([[True, False, True]]))
    x = core.bake(masked, drive).positions[-1, :, 1]
    d = np.linalg.norm(x - M[:3, 3], axis=1)
    assert d[0] >= 0.2 + RADIUS - 1e-9 and d[2] >= 0.2 + RADIUS - 1e-9
    assert np.allclose(x[1], rest[1])  # untouched: that collider does not act on strand 1


@pytest.mark.parametrize(("kind", "shock"), [(ColliderKind.PLANE, 0.0), (ColliderKind.BOX, 0.0),
                                           (ColliderKind.ELLIPSOID, 0.0),
                                           (ColliderKind.PLANE, 0.3)])
def test_a_moving_collider_drags_what_lies_on_it(rig, kind, shock):
    """Friction acts on the motion relative to the collider's surface: a rope lying across a
    conveyor (a plane, a wide box top or a big ball) moving along +X at 1 m/s is dragged along
    it. Friction against the world left it where it lay (0.000 m)."""
    frames, fps = 25, 24.0
    rest = np.stack([np.zeros(7), np.arange(7) * 0.05, np.full(7, 0.011)], axis=-1)
    t = np.arange(frames) / fps
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, 0, 3] = 1.0 * t
    if kind == ColliderKind.BOX:  # a 4 m wide, 1 m deep slab, top at z = 0
        M[:, 0, :3, :3] = np.diag([2.0, 2.0, 0.5])
        M[:, 0, 2, 3] = -0.5
        size = 1.0
    elif kind == ColliderKind.ELLIPSOID:  # a 5 m ball, top at z = 0
        M[:, 0, 2, 3] = -5.0
        size = 5.0
    else:
        size = 1.0
    colliders = core.ColliderSet.create(names=["Belt"], kind=[kind], size=[size],
                                        friction=[1.0])
    model, drive = rig.build([rest], frames=frames, fps=fps, colliders=colliders,
                             collider_matrix=M, radius=0.01, damping=1.0,
                             shock_propagation=shock)
    x = core.bake(model, drive).positions[:, 0]
    assert x[-1, -1, 0] > 0.1  # the tip dragged along +X by the belt (the root stays at x = 0)
    if kind == ColliderKind.ELLIPSOID:  # never inside it
        assert np.all(np.linalg.norm(x - M[:, 0, None, :3, 3], axis=-1) >= 5.0 + 0.01 - 1e-6)
    else:
        assert np.all(x[..., 2] > 0.01 - 1e-6)


def test_surface_motion_is_none_exactly_when_the_collider_did_not_move():
    """np.array_equal's rule: -0.0 equals 0.0, NaN equals nothing (a NaN matrix is 'moved', and
    the push-out's own checks see it)."""
    from waft.core.colliders import surface_motion

    still = np.eye(4)
    signed = still.copy()
    signed[0, 3] = -0.0
    assert surface_motion(still, still.copy()) is None
    assert surface_motion(signed, still) is None
    moved = still.copy()
    moved[0, 3] = 1e-12
    np.testing.assert_allclose(surface_motion(moved, still)[0, 3], 1e-12)
    broken = still.copy()
    broken[1, 3] = np.nan
    assert surface_motion(broken, broken.copy()) is not None


def test_a_float32_rotation_is_a_similarity_and_a_squashed_one_is_not():
    """Blender hands over float32 matrices: a sphere parented to a turning bone is a rotation
    only to float32 rounding, and must still take the sphere path; a real squash must not."""
    from waft.core.colliders import is_similarity
    from waft.core.rotations import matrix_from_quat

    rng = np.random.default_rng(3)
    for _ in range(50):
        q = rng.normal(size=4)
        M = np.eye(4)
        M[:3, :3] = 0.7 * matrix_from_quat(q / np.linalg.norm(q))
        M[:3, 3] = rng.normal(size=3)
        assert is_similarity(M.astype(np.float32).astype(np.float64))
        squashed = M.copy()
        squashed[:3, 2] *= 1.0 + 1e-4
        assert not is_similarity(squashed)
