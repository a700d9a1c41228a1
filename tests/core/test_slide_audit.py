"""Audit (session 41, H2) of the slide to length (`solver._slide_to_length`) against every
constraint at every substep end. Repro scripts: /work/tmp/s41/h2/ (audit.py: strands on a head
sphere, chest sphere, shoulder capsule and a body mesh, 2-8 g figure-eights and falls, max
distance, tether, friction and bending sweeps; bench_md.py, bench_mesh.py: the hair
benchmark's scene with a max distance, or with its chest and back spheres as body meshes)."""

from __future__ import annotations

import numpy as np
import pytest

from waft import core
from waft.core._bench_meshes import uv_sphere
from waft.core.mesh_colliders import MeshColliders
from waft.core.strands._bench_cases import hanging_from_roots

HEAD = np.array([0.0, 0.0, 1.6])
SPHERES = (  # the hair benchmark's colliders (tests/benchmarks/bench_hair.py) but its torso
    ("Head", (0.0, 0.0, 1.6), 0.1), ("Neck", (0.0, 0.0, 1.45), 0.06),
    ("Shoulder.L", (0.17, 0.0, 1.38), 0.08), ("Shoulder.R", (-0.17, 0.0, 1.38), 0.08),
    ("Arm.L", (0.25, 0.0, 1.2), 0.06), ("Arm.R", (-0.25, 0.0, 1.2), 0.06),
)
BODY = (("Chest", (0.0, 0.03, 1.25), 0.14), ("Back", (0.0, -0.05, 1.3), 0.13))


def _guides(n: int, particles: int, length: float, seed: int = 0) -> np.ndarray:
    """The benchmark's groom: roots on the upper head, combed out and down."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.0, 2.0 * np.pi, n)
    phi = rng.uniform(0.3, 1.4, n)
    normal = np.stack([np.sin(phi) * np.cos(theta), np.sin(phi) * np.sin(theta), np.cos(phi)], -1)
    direction = normal + np.array([0.0, 0.0, -0.4])
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    steps = length / (particles - 1) * np.arange(particles)
    return (HEAD + 0.102 * normal)[:, None] + direction[:, None] * steps[None, :, None]


@pytest.mark.parametrize("body", [
    pytest.param("spheres", marks=pytest.mark.xfail(strict=True, reason=(
        "open (H2 audit): at 100 guides substep 79 ends 9.2 % off (strand 26, segment 29-30): "
        "particles 29 and 30 both off after a collider pass slide at once, 30 measured from "
        "29's place before its slide; ordered parent first, the slid 30 leaves its child's "
        "segment 30-31 8.9 % off in the last pass, which no sweep follows"))),
    pytest.param("meshes", marks=pytest.mark.xfail(strict=True, reason=(
        "open (H2 audit): the slide to length is off on body meshes, so head-on tips on a "
        "mesh end substeps short: 100 guides, worst 2.9 % short, 42 of 120 substep ends over "
        "0.5 %; the benchmark's 1,000 guides 12.2 % short (46 of 120)"))),
])
def test_hair_benchmark_groom_keeps_its_lengths_at_every_substep_end(body):
    """The hair benchmark's scene at a tenth of its guides (100 x 32 particles, 0.5 m, a head
    turning at 360 deg/s, 240 Hz substeps, read at every substep end) with its chest and back
    as spheres (friction 0.3) or as closed UV-sphere body meshes (frictionless): every segment
    within 0.5 % of its length at the end of every substep."""
    frames, fps, hz, S, P = 13, 24.0, 240.0, 100, 32
    rest = _guides(S, P, 0.5)
    spheres = SPHERES + BODY if body == "spheres" else SPHERES
    model, kinematic, M = hanging_from_roots(rest, spheres, setup="Guide", frames=frames)
    angle = np.radians(360.0) * np.arange(frames) / fps
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros((frames, 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
    reference = np.einsum("fij,spj->fspi", R, rest - HEAD) + HEAD
    meshes = None
    if body == "meshes":
        triangles, vertices = [], []
        for _, centre, radius in BODY:
            v, t = uv_sphere(radius, 24, 48)
            triangles.append(t)
            vertices.append(np.repeat((v + centre)[None], frames, 0))
        meshes = MeshColliders.create(names=[b[0] for b in BODY], triangles=triangles,
                                      vertices=vertices, friction=[0.0, 0.0])
    params = core.StrandParams.defaults(S, P, shape_stiffness=0.05, radius=0.005,
                                        voxel_friction=0.2, voxel_resolution=32)
    substeps = int(round((frames - 1) / fps * hz))
    drive = core.Drive(fps=fps, reference=reference,
                       kinematic=np.broadcast_to(kinematic, (S, P)).copy(),
                       space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)), collider_matrix=M,
                       params=params, meshes=meshes, output_fps=hz, output_frames=substeps + 1)
    x = core.bake(model, drive, core.SolverSettings(substep=1.0 / hz)).positions
    L = np.linalg.norm(np.diff(rest, axis=1), axis=-1)
    stretch = np.abs(np.linalg.norm(np.diff(x, axis=2), axis=-1) / L - 1.0)
    assert stretch.max() <= 5e-3, (stretch.max(), int((stretch.max(axis=(1, 2)) > 5e-3).sum()))
