"""Audit (session 40): a passive cage falling onto a static BOX collider, the scene of
test_cloth_energy's ball with the ball replaced by a box, and onto a static capsule; a cape on
a capsule body moving with the character. These tests record violations of the product's laws
found with parameters the suite did not use. On the box the links hold since the contact sweep
settles them at rest between its pushes; the energy (box 47 / 66 % -> 4 / 1.3 % -> 0.14 /
0.14 %, capsule 5.5 / 3.3 % -> 0.7 / 0.5 %) and the moving capsule's links (6.8 % -> 2.2 % ->
within 0.5 %) hold since the contacts' velocity pass (`solver._Bake._contact_velocity`).
Session 41 added the ground plane, which the velocity pass does not help (strict xfails)."""

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
CAPSULE = np.array([0.0, 0.35, -0.25])  # centre: across the cage, under its middle


def _fall_on_a_box(*, damping: float | None, seconds: float = 1.0, capsule: bool = False,
                   substep: float = 1.0 / FPS, ground_friction: float | None = None,
                   box: np.ndarray = BOX):
    """An 8 x 8 cage, 0.7 m square, laid flat, its first row pinned, falls onto the box centred
    at `box` (or a capsule of radius 8 cm lying under it across its width, or with
    `ground_friction` a ground plane 0.3 m below it): (model, positions at 240 fps, the drive's
    params)."""
    rest = grid_rest(8, 8, width=0.7, height=0.7, origin=(-0.35, 0.0, 0.0))
    p = rest.rest_positions
    rest = replace(rest, rest_positions=np.stack([p[:, 0], -p[:, 2], np.zeros(len(p))], axis=1))
    frames = int(seconds * FPS)
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    if ground_friction is not None:
        colliders = core.ColliderSet.create(names=["Ground"], kind=[core.ColliderKind.PLANE],
                                            size=[1.0], friction=[ground_friction])
        M[:, 0, 2, 3] = -0.3
    elif capsule:  # 0.6 m long between its caps' centres, along world X (local Z)
        colliders = core.ColliderSet.create(names=["Capsule"], kind=[core.ColliderKind.CAPSULE],
                                            size=[0.3], radius_a=[0.08], radius_b=[0.08],
                                            friction=[0.0])
        M[:, 0, :3, :3] = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]
        M[:, 0, :3, 3] = CAPSULE
    else:
        colliders = core.ColliderSet.create(names=["Box"], kind=[core.ColliderKind.BOX],
                                            size=[0.15], friction=[0.0])
        M[:, 0, :3, 3] = box
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    settings = {"radius": 0.01} if damping is None else {"radius": 0.01, "damping": damping}
    drive = still_drive(model, frames, fps=FPS, collider_matrix=M, **settings)
    x = bake_cloth(model, drive, core.SolverSettings(substep=substep)).positions
    return model, x, drive.params


@pytest.mark.parametrize("hz", [240, 160, 120], ids=["240Hz", "160Hz", "120Hz"])
@pytest.mark.parametrize("damping", [0.0, None], ids=["undamped", "default-damping"])
def test_a_cage_falling_onto_a_box_gains_no_energy(damping, hz):
    """Over 1 s the cage on a box gained 47 % (undamped) and 66 % (default damping) of its
    fall, 4.0 % / 1.3 % once the contact sweep kept its links (on a ball of the same size
    0.0 %): the contact sweep lifted a vertex out of the box as a position fix and left it the
    velocity it had into the box. With the contacts' velocity pass (restitution 0): 0.14 % /
    0.14 % (120 Hz substeps: 11 % / 5.1 % -> 0.18 % / 0.16 %, 1.1-1.2 % with friction 0.3 or 1;
    480 Hz 0.00 % / 0.07 %). At 160 Hz it still gained 3.2 % / 1.1 %: a diagonal link cutting
    the box's top edge at a corner was pushed along the normal of the face nearest its point
    closest to the centre, +z one substep and -x the next, its near end thrown 11-13 mm a
    substep. Pushed along the edge's separating axis (`constraints._box_edge_contacts`):
    0.14 / 0.14 % at 240 Hz, 0.48 / 0.36 % at 160 Hz, 0.58 / 0.10 % at 120 Hz."""
    model, x, params = _fall_on_a_box(damping=damping, substep=1.0 / hz)
    energy, drop = _energy(model, x, params, h=1.0 / hz), _drop(x, model)
    assert drop > 50.0  # it fell
    assert _rise(energy) <= 0.01 * drop, (_rise(energy), drop)


@pytest.mark.parametrize(("damping", "shift"), [
    pytest.param(0.05, -0.001, marks=pytest.mark.xfail(strict=True, reason="s46: 1.72 % of "
                 "the fall (s49: 0.89 % with step-9 move restitution, not landed)")),
    pytest.param(0.5, 0.003, marks=pytest.mark.xfail(strict=True, reason="s46: 3.04 % of "
                 "the fall (s49: 0.04 % with step-9 move restitution, not landed)")),
], ids=["damping-0.05-box-1mm-left", "damping-0.5-box-3mm-right"])
def test_a_cage_falling_onto_a_box_moved_by_millimetres_gains_no_energy(damping, shift):
    """The box drop at 120 Hz substeps with the box moved along x by millimetres: the 0.10-0.68
    % above (undamped, default, damping 0.05-0.5) are one sample of a spread; moved by ±1, 2 or
    3 mm 12 of those 36 drops gain over 1 % (`tools/cloth_energy_ledger.py --spread`). A
    diagonal link over the box's top corner is pushed along one edge's axis one substep and the
    other's the next (docs/cloth-solver.md, the ledger under "Known limits")."""
    box = BOX + np.array([shift, 0.0, 0.0])
    model, x, params = _fall_on_a_box(damping=damping, substep=1.0 / 120, box=box)
    energy, drop = _energy(model, x, params, h=1.0 / 120), _drop(x, model)
    assert drop > 50.0  # it fell
    assert _rise(energy) <= 0.01 * drop, (_rise(energy), drop)


@pytest.mark.parametrize(("damping", "hz"), [
    (0.0, 240), (None, 240), (0.0, 120),
    pytest.param(None, 120, marks=pytest.mark.xfail(strict=True, reason="1.04 % of the fall "
                 "(6.7 % before the contacts' velocity pass; s49: 0.49 % with step-9 move "
                 "restitution, not landed)")),
    pytest.param(0.0, 480, marks=pytest.mark.xfail(strict=True, reason="1.24 % of the fall "
                 "(about 5 % before): the cloth drawn over the capsule by its falling hem, "
                 "where step 9's position fixes act; s49: 0.69 % with step-9 move restitution, "
                 "not landed")),
], ids=["undamped", "default-damping", "undamped-120Hz", "default-damping-120Hz",
        "undamped-480Hz"])
def test_a_cage_falling_onto_a_capsule_gains_no_energy(damping, hz):
    """The cage onto a static capsule thinner than its spacing (radius 8 cm, 10 cm between
    vertices: edge contacts). Before the contacts' velocity pass the drop bounced off the
    capsule at 2/3 of its speed (a vertex pushed out of the capsule's cap by its links'
    averaged edge contacts kept the push as velocity): 5.5 % / 3.3 % of the fall at 240 Hz,
    4.7 % / 6.7 % at 120 Hz. Now 0.71 % / 0.52 %, 0.95 % undamped at 120 Hz, 0.56 % with
    default damping at 480 Hz."""
    model, x, params = _fall_on_a_box(damping=damping, capsule=True, substep=1.0 / hz)
    energy, drop = _energy(model, x, params, h=1.0 / hz), _drop(x, model)
    assert drop > 50.0  # it fell
    assert _rise(energy) <= 0.01 * drop, (_rise(energy), drop)


@pytest.mark.parametrize(("friction", "damping", "hz"), [
    (0.5, 0.0, 240), (0.5, None, 240), (0.5, None, 120),
    pytest.param(0.0, 0.0, 240, marks=pytest.mark.xfail(strict=True, reason="s41: 5.2 % of "
                 "the fall on a frictionless ground (5.3 % with default damping, 2.9 % at "
                 "120 Hz): step 9's position fixes as the cage lands, with its parents held; "
                 "s49: 0.00 % with step-9 move restitution, not landed")),
    pytest.param(0.5, 0.0, 480, marks=pytest.mark.xfail(strict=True, reason="s41: 1.45 % of "
                 "the fall (0.78 % at 240 Hz; s49: 0.00 % with step-9 move restitution, not "
                 "landed)")),
], ids=["undamped", "default-damping", "default-damping-120Hz", "frictionless-undamped",
        "undamped-480Hz"])
def test_a_cage_falling_onto_the_ground_gains_no_energy(friction, damping, hz):
    """The cage swinging down onto a ground plane (it lands flat along its free rows and slides
    on it). Measured on the contacts' velocity pass: with friction 0.5, 0.78 % / 0.04 % of the
    fall at 240 Hz (undamped / default damping), 0.17 % with default damping at 120 Hz."""
    model, x, params = _fall_on_a_box(damping=damping, ground_friction=friction,
                                      substep=1.0 / hz)
    energy, drop = _energy(model, x, params, h=1.0 / hz), _drop(x, model)
    assert drop > 50.0  # it fell
    assert _rise(energy) <= 0.01 * drop, (_rise(energy), drop)


def test_hard_vertical_links_hold_on_a_box():
    model, x, _ = _fall_on_a_box(damping=None)
    assert _vertical_strain(model, x) <= 5e-3, _vertical_strain(model, x)


def _vertical_strain(model, x: np.ndarray) -> float:
    """The largest relative length error of a hard vertical link over the frames `x`."""
    v = model.vertical
    a, b = model.stretch.a[v], model.stretch.b[v]
    ratio = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / model.stretch.rest[v]
    return float(np.abs(ratio - 1.0).max())


def _cape_on_a_moving_body(body_offset: float = 0.0):
    """A cape: an 8 x 8 cage, 0.6 m, its top row pinned to a character whose space moves on a
    1.5 Hz figure-eight peaking at 4 g (read at 240 Hz), a vertical capsule body collider
    (radius 0.12 m) moving with it `0.15 + body_offset` m behind the cape, max distance 0.15 m,
    default settings: (model, positions at 240 fps)."""
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
    M[:, 0, :3, 3] = np.array([0.0, 0.15 + body_offset, 1.2]) + offset
    drive = ClothDrive(fps=FPS, reference=rest.rest_positions[None] + offset[:, None],
                       space=space, collider_matrix=M, params=ClothParams.defaults(1))
    return model, bake_cloth(model, drive, core.SolverSettings(substep=1.0 / FPS)).positions


@pytest.mark.parametrize("body_offset", [0.0, 0.002, -0.005],
                         ids=["as-built", "body-2mm-back", "body-5mm-forward"])
def test_hard_vertical_links_hold_on_a_capsule_moving_with_the_character(body_offset):
    """The cape (`_cape_on_a_moving_body`): every hard vertical link within 0.5 % of its length
    at the end of every substep. Links ended substeps up to 6.8 % short (9.0 % on a box, 7.7 %
    on a sphere at 8 g), 2.2 % once the contact sweep settled them between its pushes (its last
    push may still shorten one): the velocity a vertex kept into the capsule carried it deep
    inside again every substep. 0.38 % since the contacts' velocity pass, but with the body
    moved 2-10 mm 0.3-1.9 % (`tools/cloth_energy_ledger.py --cape-spread`; 2 mm back 1.92 %,
    5 mm forward 1.34 %): a hem link pointing into the body, pushed along the normal and left
    short on the 1-3 frames (of 481) where its child touches it. Exact (1e-14) since the push
    puts the child on its rest-length sphere outside the tangent plane
    (`constraints.turn_vertices_out`)."""
    model, x = _cape_on_a_moving_body(body_offset)
    assert _vertical_strain(model, x) <= 5e-3, _vertical_strain(model, x)
