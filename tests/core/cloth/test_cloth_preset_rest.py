"""What lies on a collider under friction comes to rest (session 49): a 6 x 6 cage, 0.5 m
square, with every fabric preset (core/cloth/presets.py), laid flat with its first row pinned,
swings down onto a sphere, a capsule, a box or the ground and drapes there, passive (no wind,
nothing animated), collider friction 0.3 (the default).

Rest: every vertex touching the collider (within half a millimetre of its radius) moves less
than 1 mm/s over the last second of a 6 s bake (4 s on the box, whose edge contacts make its
substep three times dearer). Coulomb friction holds a contact whose
tangential pull is inside the cone without any slip; 1 mm/s is 4 µm a 240 Hz substep, 2.4 %
of the 170 µm gravity presses a resting vertex into the collider each substep (under 1 mm a
second, below anything a frame shows). See tests/core/test_preset_rest.py for the chains.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from waft import core
from waft.core.cloth import ClothDrive, ClothParams, bake_cloth, build_cloth_model
from waft.core.cloth._bench_cases import grid_rest
from waft.core.cloth.presets import FABRICS
from waft.core.colliders import ColliderKind, shape_normal

FPS = 60.0
SECONDS = 6.0
BOX_SECONDS = 4.0  # the box's edge contacts cost three times the other shapes' substep
CAGE, WIDTH = 6, 0.5
FRICTION = 0.3
REST_SPEED = 1e-3  # m/s, see the module docstring
TOUCH = 5e-4  # a vertex within this of its radius from the surface touches it


def _collider(kind: str):
    """The collider under the cage's middle (the ground 0.25 m below the pinned row)."""
    M = np.eye(4)
    if kind == "plane":
        colliders = core.ColliderSet.create(names=["Ground"], kind=[ColliderKind.PLANE],
                                            size=[1.0], friction=[FRICTION])
        M[2, 3] = -0.25
    elif kind == "sphere":
        colliders = core.ColliderSet.create(names=["Ball"], kind=[ColliderKind.ELLIPSOID],
                                            size=[0.15], friction=[FRICTION])
        M[:3, 3] = (0.0, 0.25, -0.2)
    elif kind == "capsule":  # 0.6 m between its caps' centres, along world X (local Z)
        colliders = core.ColliderSet.create(names=["Capsule"], kind=[ColliderKind.CAPSULE],
                                            size=[0.3], radius_a=[0.1], radius_b=[0.1],
                                            friction=[FRICTION])
        M[:3, :3] = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]
        M[:3, 3] = (0.0, 0.25, -0.15)
    else:
        colliders = core.ColliderSet.create(names=["Box"], kind=[ColliderKind.BOX],
                                            size=[0.12], friction=[FRICTION])
        M[:3, 3] = (0.0, 0.25, -0.17)
    return colliders, M


def contact_rest_speed(fabric: str, kind: str) -> float:
    """The largest speed (m/s) of a vertex touching the collider over the last second."""
    rest = grid_rest(CAGE, CAGE, width=WIDTH, height=WIDTH, origin=(-WIDTH / 2, 0.0, 0.0))
    p = rest.rest_positions
    rest = replace(rest, rest_positions=np.stack([p[:, 0], -p[:, 2], np.zeros(len(p))], axis=1))
    colliders, M = _collider(kind)
    model = build_cloth_model(cloths=[rest], colliders=colliders)
    frames = int((BOX_SECONDS if kind == "box" else SECONDS) * FPS) + 1
    settings = {**FABRICS[fabric], "world_motion_fraction": 1.0}
    drive = ClothDrive(fps=FPS, reference=np.repeat(model.rest_positions[None], frames, axis=0),
                       space=np.broadcast_to(np.eye(4), (frames, 1, 4, 4)),
                       collider_matrix=np.tile(M, (frames, 1, 1, 1)),
                       params=ClothParams.defaults(1, **settings))
    x = bake_cloth(model, drive).positions
    assert np.isfinite(x).all()
    speed = np.linalg.norm(np.diff(x, axis=0), axis=-1) * FPS
    _, distance = shape_normal(int(colliders.kind[0]), x.reshape(-1, 3), M, np.linalg.inv(M),
                               colliders, 0)
    touching = (distance.reshape(x.shape[:2]) < FABRICS[fabric]["radius"] + TOUCH)[1:]
    return float(np.where(touching, speed, 0.0)[-int(FPS):].max())


KINDS = ("sphere", "capsule", "box", "plane")
# mm/s over the last second, touching vertices. Session 49 measured the ground's creep (TWEED /
# DOWN_JACKET / VEIL 1.81 / 4.83 / 1.30): step 6's sweep moved a resting vertex's x_prev by its
# share of the sweep's drag, and friction measured from x_prev pulled it there; session 50's
# friction from the substep's start (core/cloth/contact_friction.py) rests them (0.01 / 0.45 /
# 0.51). DOWN_JACKET on the box: 1.03 -> 1.02, a seesaw (docs/cloth-solver.md, session 50): a
# diagonal lying level on the top face between two edges is a tie for its deepest point, pushed
# at one end of the tie and then the other, pass after pass (vertex 22 z +-53 um, 3 substeps).
# RUBBER on the ball is not a creep: the stretchy cage
# (damping + drag 0.4/s) still swings there; its kinetic energy's envelope falls 0.92/s from
# 2 s to 10 s (velocity 0.46/s, contact damping on top of the 0.4), and at 10 s its contacts
# rest (5e-6 mm/s).
CREEPING = {("RUBBER", "sphere"): 25.3, ("DOWN_JACKET", "box"): 1.02}


def _cases():
    for fabric in FABRICS:
        for kind in KINDS:
            marks = ()
            if (fabric, kind) in CREEPING:
                marks = pytest.mark.xfail(strict=True, reason=(
                    f"s50: its contacts move {CREEPING[fabric, kind]} mm/s in the last second "
                    "(box: a link level on its top face seesaws between the ends of its tie; "
                    "ball: the RUBBER cage still swinging, at rest by 10 s)"))
            yield pytest.param(fabric, kind, marks=marks, id=f"{fabric}-{kind}")


@pytest.mark.parametrize(("fabric", "kind"), list(_cases()))
def test_a_fabric_preset_draped_on_a_collider_comes_to_rest(fabric, kind):
    speed = contact_rest_speed(fabric, kind)
    assert speed < REST_SPEED, f"{speed * 1e3:.3f} mm/s"
