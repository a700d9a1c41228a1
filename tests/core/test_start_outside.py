"""A start pose drawn through a collider is put out of it as a pose, not as motion
(`solver._Bake._start_outside`).

Grooms and modelled chains often pass through the body: the head-turn sample's crown strands
are drawn up and over the head, 4-5 cm inside it. Pushed out in the first substep, the push was
taken as velocity (5 cm at 240 Hz is 12 m/s) and the contact rounds passed it along the chain: a
crown strand rose 58 cm over the head and fell over the face, and the render strands around it
stood out in a stepped clump in the sample's first frames.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from waft import core

from .test_energy import HZ, G, _groom


def _groom_through_a_collider(seed: int, bend_compliance: float):
    """A random groom (`_groom`) with a sphere, a capsule or a box (seed % 3) placed over one
    of its middle particles, so 1-3 cm of the strand starts inside it; the root stays clear.
    No damping, no pull toward the groom, sampled at every substep (240 Hz)."""
    rng = np.random.default_rng(1000 + seed)
    rest = _groom(seed)
    P = len(rest)
    kind = (core.ColliderKind.ELLIPSOID, core.ColliderKind.CAPSULE,
            core.ColliderKind.BOX)[seed % 3]
    size = float(rng.uniform(0.04, 0.1))
    radius = 0.005
    inside = int(rng.integers(max(2, P // 3), P))  # a particle the collider will hold
    # The centre 1-3 cm short of the surface from that particle, on a random side.
    side = rng.normal(size=3)
    side /= np.linalg.norm(side)
    centre = rest[inside] + side * (size + radius - rng.uniform(0.01, 0.03))
    root_gap = np.linalg.norm(rest[0] - centre) - 1.8 * (size + radius)
    centre += min(root_gap, 0.0) * (rest[0] - centre) / np.linalg.norm(rest[0] - centre)
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    model = core.build_strand_model(
        chains=[core.ChainRest(setup="Groom", name="Strand", rest_positions=rest,
                               kinematic=kinematic)],
        colliders=core.ColliderSet.create(names=["Body"], kind=[kind], size=[size],
                                          radius_a=[0.6 * size], radius_b=[0.6 * size]))
    frames = int(0.75 * HZ)
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, :3, 3] = centre
    params = core.StrandParams.defaults(1, P, damping=0.0, drag=0.0, shape_stiffness=0.0,
                                        bend_compliance=bend_compliance, radius=radius)
    drive = core.Drive(fps=HZ, reference=np.repeat(rest[None, None], frames, axis=0),
                       kinematic=kinematic[None].copy(),
                       space=np.broadcast_to(np.eye(4), (frames, 1, 4, 4)),
                       collider_matrix=M, params=params)
    x = core.bake(model, drive, core.SolverSettings(substep=1.0 / HZ)).positions[:, 0]
    return x, rest, kind, size, radius, centre


@pytest.mark.parametrize("seed", range(9))
def test_a_groom_drawn_through_a_collider_starts_outside_it_at_rest(seed):
    """Released at rest, a strand (no bending, no damping) gains no speed but what gravity
    gives it: at the end of the first frame (1/24 s) no particle moves faster than 2 g t (0.2-0.5
    m/s measured; 1.5-5.8 m/s, up to 11 within the frame, when the first substep pushed it
    out). The start (substep 0) is clear of the collider by the particle radius.
    With bending, the pose put out of the collider is bent off the groom and the bend's
    elastic energy is released as motion, as a bent spring's is (default bending: up to 1.6
    m/s in the first frame, 3.5-11 before)."""
    x, rest, kind, size, radius, centre = _groom_through_a_collider(seed, math.inf)
    assert not np.allclose(x[0], rest)  # the groom really started inside
    local = x[0, 1:] - centre
    if kind == core.ColliderKind.ELLIPSOID:
        clearance = np.linalg.norm(local, axis=1) - size
    elif kind == core.ColliderKind.BOX:
        clearance = np.max(np.abs(local) - size, axis=1)  # outside a face (or more)
    else:  # a capsule along local Z: half-height `size`, radius 0.6 size
        axial = np.clip(local[:, 2], -size, size)
        clearance = np.linalg.norm(local - axial[:, None] * [0, 0, 1], axis=1) - 0.6 * size
    assert clearance.min() >= radius - 1e-6, clearance.min()
    t = int(HZ / 24)
    speed = np.linalg.norm(x[t + 1] - x[t - 1], axis=-1) * HZ / 2.0
    assert speed.max() <= 2.0 * G * t / HZ, speed.max()


HEAD_CENTRE = np.array([0.0, 0.0, 1.62])


def _head_turn_groom(guides: int = 48, bones: int = 8, segment: float = 0.05,
                     scalp: float = 0.104) -> np.ndarray:
    """(guides, bones + 1, 3) the head-turn sample's groom (samples/hair_head_turn.py): roots
    on a Fibonacci spiral over the scalp cap, each strand leaving along the scalp normal and
    bending down over its first bones, so the crown's strands cross the head."""
    golden = math.pi * (3.0 - math.sqrt(5.0))
    down = np.array([0.0, 0.0, -1.0])
    strands = []
    for i in range(guides):
        phi = golden * i
        back = 0.5 * (1.0 + math.sin(phi))
        theta = math.radians(60.0 + 45.0 * back) * math.sqrt((i + 0.5) / guides) * 0.95
        normal = np.array([math.sin(theta) * math.cos(phi), math.sin(theta) * math.sin(phi),
                           math.cos(theta)])
        points = [HEAD_CENTRE + normal * scalp]
        for b in range(bones):
            w = min(1.0, 0.35 + 0.3 * b)
            d = normal * (1.0 - w) + down * w
            points.append(points[-1] + segment * d / np.linalg.norm(d))
        strands.append(points)
    return np.array(strands)


def test_the_head_turn_groom_falls_into_place_without_throwing_its_crown_strands():
    """The sample's 48 guides on its head sphere (11.5 cm, particle radius 1 cm: the roots
    lie inside the shell, several strands cross the head), its shape pull, damping and default
    bending, the head still for 2.5 s at 24 fps: the groom falls into place. No particle ever
    rises more than 5 cm above where it starts, out of the head (1.9 cm measured; 58 cm when
    the first substep pushed the crown strands out as velocity, which threw one over the
    face)."""
    rest = _head_turn_groom()
    S, P = rest.shape[:2]
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    model = core.build_strand_model(
        chains=[core.ChainRest(setup="Hair", name=f"Guide.{i:02d}", rest_positions=r,
                               kinematic=kinematic) for i, r in enumerate(rest)],
        colliders=core.ColliderSet.create(names=["Head"], kind=[core.ColliderKind.ELLIPSOID],
                                          size=[0.115]))
    frames = 60
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, :3, 3] = HEAD_CENTRE
    params = core.StrandParams.defaults(S, P, shape_stiffness=0.04, damping=1.5, radius=0.01)
    drive = core.Drive(fps=24.0, reference=np.repeat(rest[None], frames, axis=0),
                       kinematic=np.tile(kinematic, (S, 1)),
                       space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)),
                       collider_matrix=M, params=params)
    z = core.bake(model, drive, core.SolverSettings()).positions[..., 2]
    rise = (z - z[0]).max()
    assert rise <= 0.05, rise


def test_a_chain_carried_over_a_cut_into_a_collider_is_put_out_of_it_as_a_pose():
    """A chain hanging at rest is carried over an animation cut (its root jumps 3 m at 0.5 s,
    read on the 240 Hz sample grid) to where a ball waits, 3 cm into it. It is put out of the
    ball as a pose, keeping its motion (none), as at the start: over the frame after the cut
    it moves no faster on average than free fall's g t (0.41 m/s; 3.7 m/s when the first
    substep pushed it out). No bending, whose spring-back from the pushed shape is its own
    motion (default bending: 0.64 m/s, 3.1 before). Before the cut nothing touched it."""
    rate, fps, frames, P, segment, radius = 240.0, 24.0, 25, 9, 0.05, 0.005
    samples = (frames - 1) * int(rate / fps) + 1
    t = np.arange(samples) / rate
    rest = np.array([[0.0, 0.0, 2.0 - k * segment] for k in range(P)])
    jump = np.where(t >= 0.5 - 1e-9, 3.0, 0.0)
    reference = np.repeat(rest[None, None], samples, axis=0)
    reference[..., 0] += jump[:, None, None]
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    colliders = core.ColliderSet.create(names=["Ball"], kind=[core.ColliderKind.ELLIPSOID],
                                        size=[0.1])
    centre = np.array([3.0 + 0.1 + radius - 0.03, 0.0, 1.8])
    M = np.tile(np.eye(4), (samples, 1, 1, 1))
    M[:, 0, :3, 3] = centre
    model = core.build_strand_model(
        chains=[core.ChainRest(setup="Tail", name="Tail", rest_positions=rest,
                               kinematic=kinematic)], colliders=colliders)
    params = core.StrandParams.defaults(1, P, radius=radius, bend_compliance=math.inf)
    drive = core.Drive(fps=rate, reference=reference, kinematic=kinematic[None].copy(),
                       space=np.broadcast_to(np.eye(4), (samples, 1, 4, 4)),
                       collider_matrix=M, params=params, output_fps=fps, output_frames=frames)
    x = core.bake(model, drive).positions[:, 0]
    cut = 12  # 0.5 s at 24 fps
    assert np.abs(x[:cut, :, 0]).max() < 1e-9  # hung still before the cut, nothing touched
    clearance = np.linalg.norm(x[cut, 1:] - centre, axis=-1) - 0.1
    assert clearance.min() >= radius - 1e-6, clearance.min()
    speed = np.linalg.norm(x[cut + 1] - x[cut], axis=-1) * fps
    assert speed.max() <= G / fps, speed.max()


def test_a_settled_chain_put_out_of_a_collider_keeps_the_motion_it_starts_with():
    """A chain with a settled pose on a character walking at 1 m/s starts moving with it (the
    settled pose one substep later sets the velocity). Drawn 2 cm into a ball that walks
    along, it is put out of the ball as a pose and keeps that velocity: every free particle's
    speed along the walk over the first substep is within 10 % of 1 m/s (taking the start
    pass's `x_prev = x`, it started at rest: -0.03 to 0.06 m/s, and trailed)."""
    rate, P, segment, radius, v = 240.0, 9, 0.05, 0.005, 1.0
    samples = 121
    t = np.arange(samples) / rate
    rest = np.array([[0.0, 0.0, 2.0 - k * segment] for k in range(P)])
    reference = np.repeat(rest[None, None], samples, axis=0)
    reference[..., 0] += v * t[:, None, None]
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    space = np.tile(np.eye(4), (samples, 1, 1, 1))
    space[:, 0, 0, 3] = v * t
    M = np.tile(np.eye(4), (samples, 1, 1, 1))
    M[:, 0, 0, 3] = v * t + 0.1 + radius - 0.02
    M[:, 0, 2, 3] = 1.8
    model = core.build_strand_model(
        chains=[core.ChainRest(setup="Tail", name="Tail", rest_positions=rest,
                               kinematic=kinematic)],
        colliders=core.ColliderSet.create(names=["Ball"], kind=[core.ColliderKind.ELLIPSOID],
                                          size=[0.1]))
    params = core.StrandParams.defaults(1, P, radius=radius, bend_compliance=math.inf,
                                        damping=0.0, drag=0.0)
    drive = core.Drive(fps=rate, reference=reference, kinematic=kinematic[None].copy(),
                       space=space, collider_matrix=M, params=params, output_fps=rate,
                       output_frames=samples, settled_offset=np.zeros((1, P, 3)))
    x = core.bake(model, drive).positions[:, 0]
    assert np.abs(x[0, 1:, 0] - rest[1:, 0]).max() > 0.01  # it really started inside
    speed = (x[1, 1:, 0] - x[0, 1:, 0]) * rate
    assert np.all(np.abs(speed - v) <= 0.1 * v), speed
