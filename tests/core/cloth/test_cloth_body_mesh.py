"""A skirt around a body mesh: issue 13's "skirt vertices inside the body mesh" figure, measured
on a closed body (the sample humanoid is a skeleton, whose open bones have no inside).

The body is one closed mesh collider of three parts (hips and two legs, UV-sphere ellipsoids);
the legs swing 40° forward and back at 1.5 Hz, a run. The skirt is a 16 × 7 ring cage pinned at
the waist, with max distance, the default fabric and a 1.5 cm particle radius. The figure is
measured against the analytic ellipsoids the mesh approximates (its vertices lie on them, so
the mesh is inside them): a vertex counts as inside when it is more than 1 mm inside one.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from waft.core._bench_meshes import uv_sphere
from waft.core.cloth import ClothDrive, ClothParams, bake_cloth, build_cloth_model
from waft.core.cloth.model import ClothRest
from waft.core.mesh_colliders import MeshColliders

FPS = 24.0
FRAMES = 37  # 1.5 s
SWING = np.radians(40.0)
HZ = 1.5
HIPS = (np.array([0.0, 0.0, 0.95]), np.array([0.17, 0.12, 0.13]))  # centre, semi-axes
LEG = np.array([0.075, 0.075, 0.25])
ROWS, COLUMNS = 7, 16


def _turn_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _body() -> list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """Per frame, the parts as (centre, rotation, semi-axes): the hips, then the legs hanging
    from hip joints 9 cm either side, swinging in opposite phase (eased in over 0.5 s)."""
    frames = []
    for t in np.arange(FRAMES) / FPS:
        parts = [(HIPS[0], np.eye(3), HIPS[1])]
        for side, phase in ((1.0, 0.0), (-1.0, np.pi)):
            R = _turn_x(SWING * min(t / 0.5, 1.0) * np.sin(2 * np.pi * HZ * t + phase))
            parts.append((np.array([0.09 * side, 0.0, 0.9]) + R @ (0.0, 0.0, -0.24), R, LEG))
        frames.append(parts)
    return frames


def _skirt() -> ClothRest:
    """A flared ring cage from the waist (19 cm) to the hem (28 cm), 45 cm long; quads wound
    so their normals face out."""
    angle = 2 * np.pi * np.arange(COLUMNS) / COLUMNS
    rows = [np.stack([r * np.cos(angle), r * np.sin(angle), np.full(COLUMNS, z)], axis=1)
            for r, z in zip(np.linspace(0.19, 0.28, ROWS), 0.93 - 0.075 * np.arange(ROWS),
                            strict=True)]
    quads = [(r * COLUMNS + c, (r + 1) * COLUMNS + c, (r + 1) * COLUMNS + (c + 1) % COLUMNS,
              r * COLUMNS + (c + 1) % COLUMNS) for r in range(ROWS - 1) for c in range(COLUMNS)]
    pinned = np.arange(ROWS * COLUMNS) < COLUMNS
    return ClothRest(setup="Skirt", rest_positions=np.concatenate(rows), quads=np.array(quads),
                     pinned=pinned, max_distance=np.where(pinned, np.inf, 0.25))


def _bake(body, *, collide: bool) -> np.ndarray:
    rest = _skirt()
    model = build_cloth_model(cloths=[rest])
    drive = ClothDrive(fps=FPS, reference=np.repeat(rest.rest_positions[None], FRAMES, axis=0),
                       space=np.broadcast_to(np.eye(4), (FRAMES, 1, 4, 4)),
                       collider_matrix=np.zeros((FRAMES, 0, 4, 4)),
                       params=ClothParams.defaults(1, world_motion_fraction=1.0, radius=0.015))
    if collide:
        unit, triangles = uv_sphere(1.0, 24, 48)
        vertices = np.array([np.concatenate([(unit * axes) @ R.T + centre
                                             for centre, R, axes in parts]) for parts in body])
        triangles = np.concatenate([triangles + k * len(unit) for k in range(3)])
        drive = replace(drive, meshes=MeshColliders.create(
            names=["Body"], triangles=[triangles], vertices=[vertices]))
    return bake_cloth(model, drive).positions


@functools.cache
def _skirt_on_the_body() -> np.ndarray:
    """The skirt baked against the running body mesh, shared by both tests (read-only): the
    bake is deterministic (bitwise), so the second test's own bake only cost its time (one
    of the file's two collided bakes, about half its CPU)."""
    x = _bake(_body(), collide=True)
    x.flags.writeable = False
    return x


def _depth_inside(points: np.ndarray, parts) -> np.ndarray:
    """How far inside the body each point is (m, > 0 inside), by the ellipsoids' normalised
    radius scaled by their smallest semi-axis."""
    depth = np.full(len(points), -np.inf)
    for centre, R, axes in parts:
        q = np.linalg.norm(((points - centre) @ R) / axes, axis=1)
        depth = np.maximum(depth, (1.0 - q) * axes.min())
    return depth


def test_a_running_skirt_stays_outside_its_body_mesh():
    """Issue 13's figure: under 0.1 % of the skirt's vertex-frames inside the body and none
    deeper than 5 mm. Measured: none inside, the nearest 6 mm outside (the legs reach 3 m/s at
    the hem). The same skirt with no collider has 1.6 % of its vertex-frames up to 4 cm inside
    the legs, so the run does drive the legs through the skirt."""
    body = _body()
    for collide, check in ((False, "through"), (True, "outside")):
        x = _skirt_on_the_body() if collide else _bake(body, collide=False)
        assert np.isfinite(x).all()
        depth = np.concatenate([_depth_inside(x[f], body[f]) for f in range(FRAMES)])
        inside = depth > 1e-3
        if check == "through":
            assert inside.mean() > 0.01 and depth.max() > 0.03, (inside.mean(), depth.max())
        else:
            assert inside.mean() < 1e-3, inside.mean()
            assert depth.max() <= 5e-3, depth.max()


def test_a_running_skirt_keeps_its_vertical_links_against_its_body_mesh():
    """Issue 13, all constraints at once against a body mesh: the contact sweep pushes the
    skirt out of the mesh inside its last top-down pass (`core.cloth.mesh_sweep`), so every
    vertical link ends every frame at most its rest length (within 0.1 %) with the max distance
    and the 1.5 cm cloth radius on, and no vertex is inside the body deeper than that radius.
    Measured: 0 (1e-15); before, with the mesh pushing after the sweep, 0.96 %."""
    body = _body()
    x = _skirt_on_the_body()
    model = build_cloth_model(cloths=[_skirt()])
    links = model.stretch
    vertical = model.vertical
    a, b, rest = links.a[vertical], links.b[vertical], links.rest[vertical]
    stretch = np.linalg.norm(x[:, b] - x[:, a], axis=-1) / rest - 1.0
    assert stretch.max() <= 1e-3, stretch.max()
    depth = np.concatenate([_depth_inside(x[f], body[f]) for f in range(FRAMES)])
    assert depth.max() <= 0.015, depth.max()
