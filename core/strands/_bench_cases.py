"""Scenes shared by the strand benchmark (tests/benchmarks/bench_hair.py) and the tests that
measure the same situation: strands hanging from a head over sphere colliders."""

from __future__ import annotations

import numpy as np

from ..colliders import ColliderKind, ColliderSet
from .model import ChainRest, build_strand_model


def hanging_from_roots(rest: np.ndarray, spheres, *, setup: str, frames: int,
                       friction: float = 0.3):
    """A strand model of chains `rest` (S, P, 3) pinned at their first particle, colliding
    with `spheres` ((name, centre, radius), ...), and the spheres' (frames, K, 4, 4) still
    world matrices. Returns (model, kinematic (P,), matrices)."""
    P = rest.shape[1]
    kinematic = np.zeros(P, dtype=bool)
    kinematic[0] = True
    chains = [ChainRest(setup=setup, name=f"{setup}.{s}", rest_positions=rest[s],
                        kinematic=kinematic) for s in range(len(rest))]
    colliders = ColliderSet.create(
        names=[n for n, _, _ in spheres], kind=[ColliderKind.ELLIPSOID] * len(spheres),
        size=[r for _, _, r in spheres], friction=[friction] * len(spheres))
    model = build_strand_model(chains=chains, colliders=colliders)
    M = np.tile(np.eye(4), (frames, len(spheres), 1, 1))
    for k, (_, centre, _) in enumerate(spheres):
        M[:, k, :3, 3] = centre
    return model, kinematic, M


# The hair benchmark's body (tests/benchmarks/bench_hair.py): the sphere colliders seed 000
# used, head to arms, as (name, centre, radius).
BODY_SPHERES = (
    ("Head", (0.0, 0.0, 1.6), 0.1), ("Neck", (0.0, 0.0, 1.45), 0.06),
    ("Shoulder.L", (0.17, 0.0, 1.38), 0.08), ("Shoulder.R", (-0.17, 0.0, 1.38), 0.08),
    ("Chest", (0.0, 0.03, 1.25), 0.14), ("Back", (0.0, -0.05, 1.3), 0.13),
    ("Arm.L", (0.25, 0.0, 1.2), 0.06), ("Arm.R", (-0.25, 0.0, 1.2), 0.06),
)
HEAD = np.array([0.0, 0.0, 1.6])
# Its torso (chest and back) and the rest of it (head, neck, shoulders, arms).
TORSO_SPHERES = tuple(b for b in BODY_SPHERES if b[0] in ("Chest", "Back"))
LIMB_SPHERES = tuple(b for b in BODY_SPHERES if b not in TORSO_SPHERES)


def head_guides(guides: int, particles: int, *, length: float = 0.5,
                seed: int = 0) -> np.ndarray:
    """`guides` chains of `particles` (S, P, 3) rooted at random on the head's upper part,
    groomed away from the scalp and falling: the rest pose clears the head, gravity drapes it
    over the body."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.0, 2.0 * np.pi, guides)
    phi = rng.uniform(0.3, 1.4, guides)
    normal = np.stack([np.sin(phi) * np.cos(theta), np.sin(phi) * np.sin(theta), np.cos(phi)], -1)
    roots = HEAD + 0.102 * normal
    direction = normal + np.array([0.0, 0.0, -0.4])
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    steps = length / (particles - 1) * np.arange(particles)
    return roots[:, None] + direction[:, None] * steps[None, :, None]


def head_turning(rest: np.ndarray, frames: int, fps: float,
                 degrees_per_second: float = 360.0) -> np.ndarray:
    """The chains `rest` carried by the head turning about the vertical at a steady rate:
    (frames, S, P, 3) at `fps`."""
    angle = np.radians(degrees_per_second) * np.arange(frames) / fps
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros((frames, 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
    return np.einsum("fij,spj->fspi", R, rest - HEAD) + HEAD


# The slide audits' torso (tests/core/test_slide_audit.py, test_mesh_slide.py): a chest below
# the head and a shoulder capsule along x, on a figure-eight.
TORSO_CHEST = np.array([0.0, -0.04, 1.32])  # centre of the 0.13 m chest
TORSO_SHOULDERS = np.array([0.0, 0.02, 1.42])  # centre of the capsule (0.06 m, 0.28 m long)


def combed_down(clear, *, strands: int = 8, particles: int = 32, radius: float = 0.005,
                length: float = 0.4, seed: int = 0) -> list[ChainRest]:
    """`strands` straight strands of `length` rooted on the 0.1 m head sphere at HEAD and
    combed down and out, drawn at random (`seed`) until `clear(points, margin)` says their
    points keep their radius + 3 mm off the body; pinned at the root."""
    rng = np.random.default_rng(seed)
    rests = []
    while len(rests) < strands:
        phi, theta = rng.uniform(0.2, 1.5), rng.uniform(0.0, 2.0 * np.pi)
        n = np.array([np.sin(phi) * np.cos(theta), np.sin(phi) * np.sin(theta), np.cos(phi)])
        out = 0.35 * n + np.array([0.0, 0.0, -1.0])
        out /= np.linalg.norm(out)
        points = HEAD + (0.1 + radius + 1e-3) * n + np.outer(
            np.arange(particles) * length / (particles - 1), out)
        if clear(points[1:], radius + 0.003):
            kinematic = np.zeros(particles, dtype=bool)
            kinematic[0] = True
            rests.append(ChainRest(setup="Hair", name=f"S{len(rests)}", rest_positions=points,
                                   kinematic=kinematic))
    return rests


def figure_eight(t: np.ndarray, *, g: float, hz: float = 1.5) -> np.ndarray:
    """(len(t), 3) offsets of a `hz` figure-eight whose sideways swing peaks at `g` g."""
    w = 2 * np.pi * hz
    A = g * 9.81 / w**2
    return np.stack([A * np.sin(w * t), 0.3 * A * np.sin(2 * w * t),
                     0.5 * A * np.sin(2 * w * t)], -1)


def torso_meshes(frames: int, *, rings: int, segments: int):
    """TORSO_SPHERES as still, closed, frictionless UV-sphere body meshes of `rings` x
    `segments` over `frames` samples: (MeshColliders, per mesh its triangles' corner arrays
    (a, b, c), each (T, 3))."""
    from .._bench_meshes import uv_sphere
    from ..mesh_colliders import MeshColliders

    triangles, vertices, corners = [], [], []
    for _, centre, radius in TORSO_SPHERES:
        v, t = uv_sphere(radius, rings, segments)
        v = v + centre
        triangles.append(t)
        vertices.append(np.repeat(v[None], frames, 0))
        corners.append(np.moveaxis(v[t], 1, 0))
    meshes = MeshColliders.create(names=[b[0] for b in TORSO_SPHERES], triangles=triangles,
                                  vertices=vertices, friction=[0.0] * len(TORSO_SPHERES))
    return meshes, corners


def groom_every_substep(model, rest: np.ndarray, kinematic: np.ndarray, collider_matrix,
                        params, *, frames: int, fps: float, hz: float, meshes=None) -> np.ndarray:
    """The guides `rest` (S, P, 3) carried by the head turning (`head_turning`) over `frames`
    at `fps`, baked at `hz` substeps and read at every substep end: positions
    (substeps + 1, S, P, 3)."""
    from .. import SolverSettings
    from . import Drive, bake

    S, P = rest.shape[:2]
    substeps = int(round((frames - 1) / fps * hz))
    drive = Drive(fps=fps, reference=head_turning(rest, frames, fps),
                  kinematic=np.broadcast_to(kinematic, (S, P)).copy(),
                  space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)),
                  collider_matrix=collider_matrix, params=params, meshes=meshes,
                  output_fps=hz, output_frames=substeps + 1)
    return bake(model, drive, SolverSettings(substep=1.0 / hz)).positions
