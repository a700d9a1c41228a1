"""A cage drawn into a collider starts outside it at rest (`solver._Bake._start_outside`).

Cages are often drawn into the body they hang on. Pushed out in the first substep, the push was
taken as velocity (4 cm in a 1/240 s substep is 10 m/s): an 8 x 8 cage whose pinned row hangs
over a ball or a box 3 cm above it flew off at 9.7 and 16 m/s. The start pose is now put out of
the colliders as a pose: the colliders, the links relaxed positions only and the hard links
swept, the colliders last, and no velocity.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from waft import core
from waft.core.cloth import bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest

from .conftest import still_drive

HZ = 240
G = 9.81
RADIUS = 0.01


def _cage_drawn_into(kind, *, inside: float, hz: int = HZ, frames: int = 60,
                     fps: float = HZ):
    """An 8 x 8 cage, 0.7 m square, laid flat with its first row pinned, over a collider
    (a ball or box of half-size 0.15 m, or a capsule of radius 0.08 m along world X) whose top
    is `inside` metres above the cage: (positions at `fps`, collider centre)."""
    rest = grid_rest(8, 8, width=0.7, height=0.7, origin=(-0.35, 0.0, 0.0))
    p = rest.rest_positions
    rest = replace(rest, rest_positions=np.stack([p[:, 0], -p[:, 2], np.zeros(len(p))], axis=1))
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    if kind == core.ColliderKind.CAPSULE:
        colliders = core.ColliderSet.create(names=["Capsule"], kind=[kind], size=[0.3],
                                            radius_a=[0.08], radius_b=[0.08], friction=[0.0])
        M[:, 0, :3, :3] = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]
        top = 0.08
    else:
        colliders = core.ColliderSet.create(names=["Body"], kind=[kind], size=[0.15],
                                            friction=[0.0])
        top = 0.15
    centre = np.array([0.05, 0.3, inside - top])
    M[:, 0, :3, 3] = centre
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    drive = still_drive(model, frames, fps=fps, collider_matrix=M, radius=RADIUS)
    x = bake_cloth(model, drive, core.SolverSettings(substep=1.0 / hz)).positions
    return x, centre


def _clearance(kind, local: np.ndarray) -> np.ndarray:
    """Signed distance of points (n, 3), relative to the collider's centre, to its surface."""
    if kind == core.ColliderKind.ELLIPSOID:
        return np.linalg.norm(local, axis=1) - 0.15
    if kind == core.ColliderKind.BOX:
        return np.max(np.abs(local) - 0.15, axis=1)
    axial = np.clip(local[:, 0], -0.3, 0.3)  # the capsule lies along world X
    return np.linalg.norm(local - axial[:, None] * [1.0, 0.0, 0.0], axis=1) - 0.08


KINDS = [core.ColliderKind.ELLIPSOID, core.ColliderKind.BOX, core.ColliderKind.CAPSULE]


@pytest.mark.parametrize("kind", KINDS, ids=["ball", "box", "capsule"])
@pytest.mark.parametrize("inside", [0.01, 0.03])
def test_a_cage_drawn_into_a_collider_starts_outside_it_at_rest(kind, inside):
    """The first frame is clear of the collider by the cloth's radius (within 0.1 mm), and
    after 10 substeps (1/24 s) no vertex moves faster than free fall could make it, 2 g t
    (0.40-0.41 m/s measured; 9.7 m/s off the ball and 16 off the box when the first substep
    pushed the cage out)."""
    x, centre = _cage_drawn_into(kind, inside=inside)
    assert _clearance(kind, x[0] - centre).min() >= RADIUS - 1e-4
    speed = np.linalg.norm(x[11] - x[9], axis=-1) * HZ / 2.0
    assert speed.max() <= 2.0 * G * 10 / HZ, speed.max()


def test_a_cage_clear_of_its_collider_bakes_the_same_bits_as_without_the_start_pass(
        monkeypatch):
    """Nothing to put out: the start pass changes no bit (the cage 5 cm above the ball)."""
    from waft.core.cloth import solver

    x, _ = _cage_drawn_into(core.ColliderKind.ELLIPSOID, inside=-0.05, frames=30)
    monkeypatch.setattr(solver._Bake, "_start_outside", lambda self, x, x_prev: None)
    without, _ = _cage_drawn_into(core.ColliderKind.ELLIPSOID, inside=-0.05, frames=30)
    assert x.tobytes() == without.tobytes()


def test_a_cage_restarting_inside_a_collider_at_a_cut_is_put_out_of_it_at_rest():
    """A cut (the reference jumps 3 m at frame 12; no blend) restarts the cage from its
    reference at rest, here 3 cm into a ball that waits there: the restart is put out of the
    ball like the start. After the cut: clear of the ball by the radius on the cut frame,
    and its mean speed over the next 1/24 s within free fall's g t (0.22 m/s; 0.98 m/s, 3 cm
    inside on the cut frame, when the first substep pushed it out as velocity); before the cut
    the cage hung untouched (the ball far away)."""
    rest = grid_rest(8, 8, width=0.7, height=0.7, origin=(-0.35, 0.0, 0.0))
    p = rest.rest_positions
    rest = replace(rest, rest_positions=np.stack([p[:, 0], -p[:, 2], np.zeros(len(p))], axis=1))
    colliders = core.ColliderSet.create(names=["Ball"], kind=[core.ColliderKind.ELLIPSOID],
                                        size=[0.15], friction=[0.0])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames, cut, fps = 24, 12, 24.0
    ref = np.repeat(rest.rest_positions[None], frames, axis=0)
    ref[cut:, :, 0] += 3.0
    space = np.repeat(np.eye(4)[None, None], frames, axis=0)
    space[cut:, 0, 0, 3] = 3.0
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    centre = np.array([3.05, 0.3, 0.03 - 0.15])
    M[:, 0, :3, 3] = centre
    drive = still_drive(model, frames, fps=fps, reference=ref, space=space, collider_matrix=M,
                        radius=RADIUS, cut_threshold=1.0, cut_blend_frames=0)
    result = bake_cloth(model, drive, core.SolverSettings(substep=1.0 / HZ))
    x = result.positions
    assert result.cuts[:, 0].tolist() == [i == cut for i in range(frames)]
    assert _clearance(core.ColliderKind.ELLIPSOID, x[cut] - centre).min() >= RADIUS - 1e-4
    speed = np.linalg.norm(x[cut + 1] - x[cut], axis=-1) * fps  # mean speed over 1/24 s
    assert speed.max() <= G / fps, speed.max()
