"""Audit (session 46): bone chains dragged fast past colliders, with shapes, sizes and frame
rates the suite did not use (its collider tests keep the chain on a head sphere, its frame-rate
tests have no collider).

Fixed: frames off the substep grid (25 and 50 fps at 240 Hz) are a blend of two substep states
with the lengths re-placed, and no collider ran on them: they ended up to 20.5 mm inside a
capsule and 12.2 mm inside a box (0.6-1.1 mm inside 6-10 cm spheres) where every frame on the
grid (24, 30, 60 fps) was outside. Now `_Bake._blend_outside` puts such a frame out of the
colliders at its time, as a pose.

Fixed (session 47): where a particle has slipped past a box's edge or between the particles
of a sphere smaller than a segment, the positions-only passes that end a substep reached a
fixed point (the sweep puts the child back on its length through the collider, the collider
pushes it out the nearest face, back where it was) and the colliders won: the segment ended
one or two substeps up to 41 % (boxes) and 40 % (3 cm spheres) long (12 placements and
sizes, both sides of the path, 24/25/60 fps). Now the child is turned about its parent around
the edge until it clears the collider (`core/strands/around_edges.py`): 7 of the placements
within 0.24 % at every rate. Fixed (session 48): with friction the push's direction is
tilted, and where the box's own face was in the parent's reach but the tilted plane was not,
frames ended up to 21 % long; now the child slides to length on the face's own plane where
the segment at length lies outside that face's friction cone (5 of 8 box placements within
0.15 % at every rate). Open (strict xfails below): a child the cone holds while the chain
above pulls its parent on (3 of 8, 4.7-14.8 % at friction 0.3). And a curled chain released
under gravity gains energy (bending counted) in the frame its joints snap through straight
to the mirror curl (|m| is a double well; it loses more just after). Fixed (session 47):
the rise while its joints open, before any of them nears straight, from firm bending's one
Gauss-Seidel pass a substep (bending.FIRM_PASSES).
"""

from __future__ import annotations

import numpy as np
import pytest

from waft import core
from waft.core.colliders import ColliderKind, shape_normal
from waft.core.strands._bench_cases import (
    BODY_SPHERES,
    HEAD,
    hanging_from_roots,
    head_guides,
    head_turning,
)

from .test_energy import _bending_energy, _energy, _rise_and_release

RATE = 240.0  # samples and substeps a second
BONES, LENGTH, RADIUS = 8, 0.05, 0.005
OMEGA = 2 * np.pi * 1.5


def _dragged_past(rig, kind: ColliderKind, size: float, centre, *, fps: float,
                  peak_g: float = 5.0, radius_ab: float = 0.0, rotation=None,
                  friction: float = 0.3):
    """An 8-bone, 40 cm chain hanging from a root on a 1.5 Hz figure-eight (x peaks at
    ``peak_g``, z at twice that) past a fixed collider its root never enters, default bending,
    damping 1/s, 5 mm particles, collider friction 0.3 unless given, baked at 240 Hz and
    written at ``fps``. Returns (positions
    (F, P, 3) at the frames, the largest depth inside the collider per frame (m, particle radius
    counted), the largest length error per frame (share of the segment))."""
    chain = rig.vertical_chain(bones=BONES, length=LENGTH)
    amplitude = peak_g * 9.81 / OMEGA**2
    samples = int(2.0 * RATE) + 1
    frames = int(round(2.0 * fps)) + 1
    colliders = core.ColliderSet.create(names=["C"], kind=[kind], size=[size],
                                        radius_a=[radius_ab], radius_b=[radius_ab],
                                        friction=[friction])
    M = np.tile(np.eye(4), (samples, 1, 1, 1))
    M[:, 0, :3, 3] = centre
    if rotation is not None:
        M[:, 0, :3, :3] = rotation
    model, drive = rig.build(
        [chain], frames=samples, fps=RATE, colliders=colliders, collider_matrix=M,
        root_motion=lambda t: np.stack([amplitude * np.sin(OMEGA * t), 0.0 * t,
                                        0.5 * amplitude * np.sin(2 * OMEGA * t)], -1),
        damping=1.0, radius=RADIUS, bend_compliance=5e-5)
    _, root_clearance = shape_normal(int(kind), drive.reference[:, 0, 0], M[0, 0],
                                     np.linalg.inv(M[0, 0]), colliders, 0)
    assert root_clearance.min() > 0.04  # the root passes the collider 4 cm or more away
    drive = core.Drive(fps=RATE, reference=drive.reference, kinematic=drive.kinematic,
                       space=drive.space, collider_matrix=drive.collider_matrix,
                       params=drive.params, output_fps=fps, output_frames=frames)
    x = core.bake(model, drive).positions[:, 0]
    _, distance = shape_normal(int(kind), x[:, 1:].reshape(-1, 3), M[0, 0],
                               np.linalg.inv(M[0, 0]), colliders, 0)
    depth = (RADIUS - distance).reshape(frames, BONES).max(axis=1)
    stretch = np.abs(np.linalg.norm(np.diff(x, axis=1), axis=-1) / LENGTH - 1.0).max(axis=1)
    return x, depth, stretch


_ACROSS_Y = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # capsule axis along Y
CASES = {
    # kind, size, centre, keywords; depth of the worst frame at 25 / 50 fps before the fix
    "capsule 3 cm": (ColliderKind.CAPSULE, 0.1, (0.04, 0.0, 0.75),
                     dict(radius_ab=0.03, rotation=_ACROSS_Y)),  # 20.5 / 20.5 mm
    "box 10 cm": (ColliderKind.BOX, 0.05, (0.07, 0.0, 0.7), {}),  # 4.9 / 12.2 mm
    "sphere 6 cm": (ColliderKind.ELLIPSOID, 0.06, (0.07, 0.0, 0.75), {}),  # 0.6 / 1.1 mm
    "sphere 10 cm": (ColliderKind.ELLIPSOID, 0.10, (0.11, 0.0, 0.7), {}),  # 0.4 / 0.9 mm
}


@pytest.mark.parametrize("fps", [25, 50])
@pytest.mark.parametrize("case", list(CASES))
def test_frames_between_substeps_end_outside_the_colliders(rig, case, fps):
    """Every written frame, on the substep grid or between two substeps, ends with no particle
    inside the collider (past a micrometre); on the smooth spheres the lengths hold as well
    (within 0.5 %, what the suite holds every substep end to)."""
    kind, size, centre, keywords = CASES[case]
    x, depth, stretch = _dragged_past(rig, kind, size, centre, fps=fps, **keywords)
    assert np.isfinite(x).all()
    assert np.ptp(x[:, -1, 0]) > 0.3  # the tip swings
    assert depth.max() <= 1e-6, (float(depth.max()), int(np.argmax(depth)))
    if kind == ColliderKind.ELLIPSOID:
        assert stretch.max() <= 5e-3, float(stretch.max())


_TILTED = np.array([[np.cos(0.5), 0.0, np.sin(0.5)], [0.0, 1.0, 0.0],
                    [-np.sin(0.5), 0.0, np.cos(0.5)]])  # a box turned 29 deg about Y
UNDER_AN_EDGE = {
    # kind, size, centre, fps, keywords; the longest segment at a frame before session 47's
    # turn around the edge (`solver._around_edges`) -> after
    "box": (ColliderKind.BOX, 0.05, (-0.065, 0.0, 0.7), 24, {}),  # 18.4 -> 0.06 %
    "box, other side, 60 fps": (ColliderKind.BOX, 0.05, (0.065, 0.0, 0.7), 60,
                                {}),  # 33.4 -> 0.06 %
    "tilted box, frictionless, 60 fps": (ColliderKind.BOX, 0.05, (-0.07, 0.0, 0.7), 60,
                                         dict(rotation=_TILTED, friction=0.0)),  # 33.5 -> 0.02 %
    "small sphere": (ColliderKind.ELLIPSOID, 0.03, (0.03, 0.0, 0.8), 24, {}),  # 21.3 -> 0.00 %
    "capsule 3 cm": (ColliderKind.CAPSULE, 0.1, (0.04, 0.0, 0.75), 24,
                     dict(radius_ab=0.03, rotation=_ACROSS_Y)),  # 10.8 -> 0.02 %
}


@pytest.mark.parametrize("case", list(UNDER_AN_EDGE))
def test_chain_dragged_under_an_edge_keeps_its_lengths_at_every_frame(rig, case):
    """Where a particle has slipped under a box's edge (its parent riding up the next face) or
    to the far side of a sphere or capsule smaller than a segment (3 cm, 5 cm segments; the
    capsule of the test above, at 24 fps), every frame ends
    with no particle inside the collider (past a micrometre) and every segment within 0.5 % of
    its length. The sweep and the push reached a fixed point there (the sweep puts the child on
    its length through the collider, the push puts it back out of the nearest face, whose plane
    the parent stood more than a segment inside) and the frames ended up to 33-40 % long;
    now the child is turned about its parent around the edge until it clears the collider."""
    # The box 6.5 cm off the root's path, not 7 (session 47): with firm bending's extra passes
    # (bending.FIRM_PASSES) the chain no longer met the fixed point at 7 cm and 24 fps.
    kind, size, centre, fps, keywords = UNDER_AN_EDGE[case]
    _, depth, stretch = _dragged_past(rig, kind, size, centre, fps=fps, **keywords)
    assert depth.max() <= 1e-6, float(depth.max())
    assert stretch.max() <= 5e-3, (float(stretch.max()), int(np.argmax(stretch)))


WITH_FRICTION = {
    # size, centre, fps; the longest segment at a frame with collider friction 0.3, before the
    # slide on the face's own plane outside its friction cone -> after
    "box 8 cm, 24 fps": (0.04, (-0.055, 0.0, 0.75), 24),  # 20.8 -> 0.03 %
    "box 10 cm, 60 fps": (0.05, (-0.065, 0.0, 0.7), 60),  # 1.2 -> 0.09 %
    "box 10 cm, other side, 60 fps": (0.05, (0.07, 0.0, 0.75), 60),  # 6.0 -> 0.07 %
}


@pytest.mark.parametrize("case", list(WITH_FRICTION))
def test_chain_dragged_under_an_edge_with_friction_keeps_its_lengths(rig, case):
    """With collider friction (0.3) the push's direction is tilted by up to atan(friction):
    where the box's own face is in the parent's reach but the tilted plane is not, neither the
    slide nor the turn around the edge ran and frames ended up to 20.8 % long. Now the child
    slides to length on the face's own plane where the segment at length is outside that
    face's friction cone (`solver._slide_wave`): every frame ends outside and at length."""
    size, centre, fps = WITH_FRICTION[case]
    _, depth, stretch = _dragged_past(rig, ColliderKind.BOX, size, centre, fps=fps)
    assert depth.max() <= 1e-6, float(depth.max())
    assert stretch.max() <= 5e-3, (float(stretch.max()), int(np.argmax(stretch)))


@pytest.mark.xfail(strict=True, reason="audit s47, measured again s48: with friction 0.3, "
                   "where the segment at length would lie inside the box face's friction cone "
                   "(steeper against the face than atan(friction)) the wedge holds the child "
                   "and nothing positions-only may move it, while the chain above, dragged by "
                   "its 5 g root, pulls its parent on: the 8 cm box at (-0.06, 0, 0.8) ends a "
                   "frame 14.8 % long at 24 and 60 fps (16.0 % before the slide on the face's "
                   "own plane; 3 of 8 box placements still fail at one of 24/25/60 fps, "
                   "4.7-14.8 %). Tried s48: slid frictionless on the face (every placement <= "
                   "0.62 %), test_energy.py's passive drop seed 5 (friction 0.5) rose by 12.1 % "
                   "of its fall instead of 0.3 %; slid to the cone's edge, 0.34 % but other "
                   "placements stuck there (up to 4.2 %, one 0.06 -> 2.2 %); Mueller's substep "
                   "friction (static while the motion since the substep's start is within "
                   "friction x the length's normal correction) <= 1.1 % but seed 5 7.5 %. The "
                   "wedge must hold with velocities: the parent pulled back by SHAKE in the "
                   "contact rounds. s50 (14.8 % measured again): the cone summed over the "
                   "substep 0.0003 % here, but 6 of 8 placements fail (8 cm at -5.5/75 "
                   "0.03 -> 5.4 %: a particle at the edge meets the other face's normal); "
                   "a new cone per normal 3 of 8 but here 39.0 %; SHAKE holding the static "
                   "particles (infinitely heavy): 0.10 % here in two early variants, 4-7 of 8 "
                   "placements failing in every variant (the kept ones 16.5-16.8 % here: "
                   "tools/patches/s50_static_hold.diff, docs/hair.md Session 50)")
def test_chain_held_in_the_friction_cone_under_an_edge_keeps_its_lengths(rig):
    _, depth, stretch = _dragged_past(rig, ColliderKind.BOX, 0.04, (-0.06, 0.0, 0.8), fps=24)
    assert depth.max() <= 1e-6, float(depth.max())
    assert stretch.max() <= 5e-3, (float(stretch.max()), int(np.argmax(stretch)))


def _curled(segments: int, length: float, curl: float) -> np.ndarray:
    """A chain in the XZ plane leaving its root 0.3 rad below level, every joint bent ``curl``
    rad further down (a curled tail)."""
    points = [np.array([0.0, 0.0, 2.0])]
    angle = 0.3
    for _ in range(segments):
        points.append(points[-1] + length / segments * np.array([np.cos(angle), 0.0,
                                                                 -np.sin(angle)]))
        angle += curl
    return np.array(points)


@pytest.mark.xfail(strict=True, reason="audit s46, measured again s47: released with no "
                   "damping, a 1 m, 10-segment chain curled 0.4 rad a joint (default bend "
                   "compliance 5e-5, 240 Hz) rises 3.96 J above an earlier low (19.3 % of the "
                   "20.5 J it released). Not the cusp of C = |m| - |m_rest| at straight: by "
                   "frame 66 (every joint still >= 0.07 rad on its rest side) it has risen "
                   "1.69 J, and the counted bending energy scaled by 0.8-0.85 makes those frames "
                   "flat (one Gauss-Seidel bending pass a substep, multipliers reset, then SHAKE, "
                   "acts softer than its compliance); the other 2.3 J come in the frames where "
                   "the joints reach straight, and the flips then lose 5.6 J. Tried s47: the "
                   "offset's side kept from the start of the substep 18.7 %; a persistent signed "
                   "offset (the curl plane's normal given) 27.0 %, its energy counted signed; "
                   "3 more bending passes alternating with the lengths 5.7 % (3.2 % with the "
                   "side kept, 4.9 % signed); the direct solve of lengths and bending "
                   "(converged) 1.9 %, at the flip, but 7.7x the CPU for 4 such chains (s46: "
                   "5.6 % at 480 Hz, 1.0 % at 1920; curled 0.2 rad 3.8 %). With the firm "
                   "passes (bending.FIRM_PASSES, the rise before the flips gone: "
                   "test_a_curled_chain_gains_no_energy_while_its_joints_open) 4.2 %, all of "
                   "it in the frame where the joints snap through straight (then -6 J); with "
                   "the curl plane's signed offset too (no flips) 4.5 %")
def test_a_curled_chain_whose_joints_straighten_gains_no_energy(rig):
    """A passive curled chain (no damping, drag, shape or wind; default bending, 240 Hz) may
    not rise above an earlier energy, bending springs counted as tests/core/test_energy.py
    counts them, by more than 1 % of the potential energy it released."""
    rest = _curled(10, 1.0, 0.4)
    model, drive = rig.build([rest], frames=int(2.0 * RATE) + 1, fps=RATE,
                             bend_compliance=5e-5)
    x = core.bake(model, drive).positions[:, 0]
    rise, released = _rise_and_release(x, _energy(x, RATE) + _bending_energy(x, rest, 5e-5))
    assert released > 1.0
    assert rise <= 0.01 * released, (rise, released)


def test_a_curled_chain_gains_no_energy_while_its_joints_open(rig):
    """Other curl, segments and compliance than the test above, and only the frames before any
    joint has lost half its curl, where |m| - |m_rest| is smooth (far from the cusp at
    straight, so a signed offset would count the same energy): a passive curled chain released
    under gravity may not rise above an earlier energy, bending counted, by more than 1 % of
    what it released. With one bending pass a substep (4e-5 m/N at 240 Hz is firm, not stiff)
    it rose 0.57 J, 9.4 % of the 6.1 J released, in its first 39 frames; with the firm passes
    (bending.FIRM_PASSES) 0.00 % over its first 46."""
    curl, compliance = 0.3, 4e-5
    rest = _curled(8, 1.0, curl)
    model, drive = rig.build([rest], frames=int(0.25 * RATE) + 1, fps=RATE,
                             bend_compliance=compliance)
    x = core.bake(model, drive).positions[:, 0]
    segment = np.diff(x, axis=1)
    bend = np.arctan2(np.cross(segment[:, :-1], segment[:, 1:])[..., 1],
                      np.sum(segment[:, :-1] * segment[:, 1:], axis=-1))  # rest side > 0
    opened = np.flatnonzero(bend.min(axis=1) < 0.5 * curl)
    window = int(opened[0]) if opened.size else len(x)
    assert window >= 30  # 0.12 s of falling before a joint is half open
    x = x[:window]
    rise, released = _rise_and_release(x, _energy(x, RATE) + _bending_energy(x, rest, compliance))
    assert released > 3.0
    assert rise <= 0.01 * released, (rise, released)


@pytest.mark.parametrize("fps", [25, 50])
def test_hair_on_a_fast_turning_head_ends_every_frame_outside_it(fps):
    """24 guides of 8 particles (30 cm) on the head sphere (10 cm), head and roots turning 1,500
    deg/s about the vertical (a head turn keyed over a quarter second) for 0.6 s, read at 120 Hz
    and written at 25 and 50 fps (frames between the samples): no particle ends a frame inside
    the head, radius counted. The collider matrices blended between two samples of the turn
    shrank the sphere (a chord of the rotation): 0.57 mm inside at both rates before."""
    rate, seconds, guides, particles = 120.0, 0.6, 24, 8
    rest = head_guides(guides, particles, length=0.3)
    samples = int(seconds * rate) + 1
    model, kinematic, M = hanging_from_roots(rest, BODY_SPHERES[:1], setup="Hair",
                                             frames=samples)
    angle = np.radians(1500.0) * np.arange(samples) / rate
    M[:, 0, 0, 0], M[:, 0, 0, 1] = np.cos(angle), -np.sin(angle)
    M[:, 0, 1, 0], M[:, 0, 1, 1] = np.sin(angle), np.cos(angle)
    params = core.StrandParams.defaults(guides, particles, radius=0.01, shape_stiffness=0.02)
    drive = core.Drive(fps=rate, reference=head_turning(rest, samples, rate,
                                                        degrees_per_second=1500.0),
                       kinematic=np.broadcast_to(kinematic, (guides, particles)).copy(),
                       space=np.broadcast_to(np.eye(4), (samples, guides, 4, 4)),
                       collider_matrix=M, params=params, output_fps=float(fps),
                       output_frames=int(round(seconds * fps)) + 1)
    x = core.bake(model, drive).positions
    clearance = np.linalg.norm(x[:, :, 1:] - HEAD, axis=-1) - BODY_SPHERES[0][2] - 0.01
    assert clearance.min() < 0.005  # the hair lies on the head
    assert clearance.min() >= -1e-6, float(clearance.min())
