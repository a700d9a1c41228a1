"""Audit (session 40): a passive cage falling onto a static BOX collider, the scene of
test_cloth_energy's ball with the ball replaced by a box. These tests record violations of the
product's laws found with parameters the suite did not use (repro and figures:
/work/tmp/s40/audit/repro_cloth_box.py). On the box the links hold since session 40 (the
contact sweep settles them at rest between its pushes); the box's energy (47 / 66 % -> about
4 / 1 %) and the moving capsule's links (6.8 % -> 2.2 %) stay strict xfails."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from waft import core
from waft.core.cloth import bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest

from .conftest import still_drive
from .test_cloth_energy import FPS, _drop, _energy, _rise

BOX = np.array([0.05, 0.3, -0.3])  # centre; half extent 0.15 m: under the middle of the cage


def _fall_on_a_box(*, damping: float | None, seconds: float = 1.0):
    """An 8 x 8 cage, 0.7 m square, laid flat, its first row pinned, falls onto the box:
    (model, positions at every 240 Hz substep, the drive's params)."""
    rest = grid_rest(8, 8, width=0.7, height=0.7, origin=(-0.35, 0.0, 0.0))
    p = rest.rest_positions
    rest = replace(rest, rest_positions=np.stack([p[:, 0], -p[:, 2], np.zeros(len(p))], axis=1))
    frames = int(seconds * FPS)
    colliders = core.ColliderSet.create(names=["Box"], kind=[core.ColliderKind.BOX],
                                        size=[0.15], friction=[0.0])
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, :3, 3] = BOX
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    settings = {"radius": 0.01} if damping is None else {"radius": 0.01, "damping": damping}
    drive = still_drive(model, frames, fps=FPS, collider_matrix=M, **settings)
    x = bake_cloth(model, drive, core.SolverSettings(substep=1.0 / FPS)).positions
    return model, x, drive.params


@pytest.mark.xfail(strict=True, reason="audit s40: over 1 s the cage on a box gained 47 % "
                   "(undamped) and 66 % (default damping) of its fall; 4.0 % / 1.3 % after the "
                   "session 40 fix (links exact, box edge contacts at the closest point); on a "
                   "ball of the same size 0.0 %")
@pytest.mark.parametrize("damping", [0.0, None], ids=["undamped", "default-damping"])
def test_a_cage_falling_onto_a_box_gains_no_energy(damping):
    model, x, params = _fall_on_a_box(damping=damping)
    energy, drop = _energy(model, x, params), _drop(x, model)
    assert drop > 50.0  # it fell
    assert _rise(energy) <= 0.01 * drop, (_rise(energy), drop)


def test_hard_vertical_links_hold_on_a_box():
    model, x, _ = _fall_on_a_box(damping=None)
    v = model.vertical
    a, b = model.stretch.a[v], model.stretch.b[v]
    ratio = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[v]
    assert np.abs(ratio - 1.0).max() <= 5e-3, np.abs(ratio - 1.0).max()


@pytest.mark.xfail(strict=True, reason="audit s40: hard vertical links end substeps up to 6.8 % "
                   "short (6.3 % at 24 fps frames; 9.0 % on a box, 7.7 % on a sphere at 8 g); "
                   "exact with the collider moved away; 2.2 % after the session 40 fix (the "
                   "contact sweep's last push may still shorten a link)")
def test_hard_vertical_links_hold_on_a_capsule_moving_with_the_character():
    """A cape: an 8 x 8 cage, 0.6 m, its top row pinned to a character whose space moves on a
    1.5 Hz figure-eight peaking at 4 g (read at 240 Hz), a vertical capsule body collider
    (radius 0.12 m) moving with it behind the cape, max distance 0.15 m, default settings.
    Every hard vertical link within 0.5 % of its length at the end of every substep."""
    from waft.core.cloth import ClothDrive, ClothParams

    rest = grid_rest(8, 8, width=0.6, height=0.6, origin=(-0.3, 0.0, 1.5), max_distance=0.15)
    colliders = core.ColliderSet.create(names=["Body"], kind=[core.ColliderKind.CAPSULE],
                                        size=[0.25], radius_a=[0.12], radius_b=[0.12],
                                        friction=[0.3])
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames = 2 * FPS + 1
    t = np.arange(frames) / FPS
    w = 2 * np.pi * 1.5
    amplitude = 4.0 * 9.81 / w**2
    offset = np.stack([amplitude * np.sin(w * t), 0.3 * amplitude * np.sin(2 * w * t),
                       0.5 * amplitude * np.sin(2 * w * t)], -1)
    space = np.repeat(np.eye(4)[None, None], frames, axis=0)
    space[:, 0, :3, 3] = offset
    M = np.repeat(np.eye(4)[None, None], frames, axis=0)
    M[:, 0, :3, 3] = np.array([0.0, 0.15, 1.2]) + offset
    drive = ClothDrive(fps=FPS, reference=rest.rest_positions[None] + offset[:, None],
                       space=space, collider_matrix=M, params=ClothParams.defaults(1))
    x = bake_cloth(model, drive, core.SolverSettings(substep=1.0 / FPS)).positions
    v = model.vertical
    a, b = model.stretch.a[v], model.stretch.b[v]
    ratio = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[v]
    assert np.abs(ratio - 1.0).max() <= 5e-3, np.abs(ratio - 1.0).max()
