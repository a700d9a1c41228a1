"""Body-mesh colliders: a mesh object (usually the character's skinned body) with Waft Collider
on. Its evaluated (deformed) surface is read at every sample time with the other inputs and
handed to the core as ``core.mesh_colliders.MeshColliders``.

Read once (``read_mesh_collider``): the object, its settings and that its evaluated mesh has
faces. Sample (``MeshSampler``): the loop triangles at the first sample, then per sample the
evaluated positions (``attributes["position"]``, reference/blender-api.md §2) and the world
matrix; a modifier that changes the vertex or triangle count during the animation is an error
naming the object. Chains, hair guides, render strands and cloth collide with mesh colliders;
ragdolls and rods collide with the shape colliders only.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..core.errors import SetupError
from ..core.mesh_colliders import MeshColliders, outward

MESH_FLOAT_SETTINGS = ("friction", "depth")


@dataclass(frozen=True)
class MeshColliderRead:
    object: object  # bpy.types.Object (mesh)
    name: str
    friction: float
    depth: float  # metres


def is_mesh_collider(ob) -> bool:
    return ob.type == 'MESH'


def read_mesh_collider(ob, unit_scale: float) -> MeshColliderRead:
    """Validate a mesh collider: finite settings, a world matrix that is not collapsed, and an
    evaluated mesh with faces."""
    settings = ob.waft_collider
    for name in MESH_FLOAT_SETTINGS:
        value = float(getattr(settings, name))
        if not np.isfinite(value):
            raise SetupError(f"Collider '{ob.name}': setting '{name}' is not finite")
    m = np.array(ob.matrix_world, dtype=np.float64)
    if not np.all(np.isfinite(m)) or abs(np.linalg.det(m[:3, :3])) < 1e-18:
        raise SetupError(f"Collider '{ob.name}': world matrix is not finite or has zero scale")
    mesh = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    if len(mesh.polygons) == 0:
        raise SetupError(f"Collider '{ob.name}': a mesh collider needs faces; this mesh has "
                         f"{len(mesh.vertices)} vertices and no face")
    _check_manifold(ob, mesh)
    if not settings.depth > 0.0:
        raise SetupError(f"Collider '{ob.name}': Depth must be positive")
    return MeshColliderRead(object=ob, name=ob.name, friction=float(settings.friction),
                            depth=float(settings.depth) * unit_scale)


def _check_manifold(ob, mesh) -> None:
    """An edge of more than two faces (a fin, a duplicated face, faces inside the body) has no
    inside or outside: the angle-weighted pseudo-normal that decides which side a particle is
    on (Bærentzen & Aanæs 2005) is wrong near it, and particles are pushed through the surface.
    Open borders (an edge of one face) are fine: the mesh is solid on its front side."""
    edge_of_loop = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("edge_index", edge_of_loop)
    faces = np.bincount(edge_of_loop, minlength=len(mesh.edges))
    shared = np.flatnonzero(faces > 2)
    if len(shared):
        a, b = mesh.edges[int(shared[0])].vertices
        raise SetupError(
            f"Collider '{ob.name}': {len(shared)} edge(s) are shared by more than two faces "
            f"(non-manifold: e.g. the edge of vertices {a} and {b}, {int(faces[shared[0]])} "
            "faces), so inside and outside are undefined there. In Edit Mode, Select › Select "
            "All by Trait › Non Manifold shows them; delete or separate the extra faces "
            "(Mesh › Clean Up › Merge by Distance removes duplicated ones)")


def mesh_collider_union(per_owner: list[list], unit_scale: float
                        ) -> tuple[tuple[MeshColliderRead, ...], np.ndarray]:
    """The mesh colliders any owner collides with, once and sorted by name, and the
    (M, owners) bool mask (as ``reading.collider_union`` for the shapes)."""
    found = sorted({ob.name: ob for obs in per_owner for ob in obs
                    if is_mesh_collider(ob)}.values(), key=lambda ob: ob.name)
    meshes = tuple(read_mesh_collider(ob, unit_scale) for ob in found)
    mask = np.array([[any(m.object is ob for ob in obs) for obs in per_owner]
                     for m in meshes], dtype=bool).reshape(len(meshes), len(per_owner))
    return meshes, mask


def loop_triangles(mesh) -> np.ndarray:
    """The (T, 3) int64 vertex indices of an (evaluated) mesh's loop triangles."""
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    return tris.reshape(-1, 3).astype(np.int64)


def shift_rows(buffers, start: int, keep: int) -> None:
    """Rows start..start+keep-1 of every buffer become its first rows (a sampler's buffers
    when the samples before ``start`` are let go)."""
    for buffer in buffers:
        buffer[:keep] = buffer[start:start + keep]


class MeshSampler:
    """The evaluated world vertices of every mesh collider at each of `samples` times."""

    def __init__(self, reads: tuple[MeshColliderRead, ...], samples: int, *,
                 held: int | None = None):
        """``held``: the samples the buffers hold at once (all of them by default); a bake
        that converts its samples in blocks (``release``) holds a block."""
        self.reads = reads
        self.samples = samples
        self.base = 0  # the first sample in the buffers
        self._held = samples if held is None else min(held, samples)
        self._triangles: list[np.ndarray | None] = [None] * len(reads)
        self._local: list[np.ndarray | None] = [None] * len(reads)
        self._world = np.empty((self._held, len(reads), 4, 4))
        self._first_det = np.zeros(len(reads))  # the first sample's, which the faces follow

    def sample(self, i: int) -> None:
        if not self.reads:
            return
        depsgraph = bpy.context.evaluated_depsgraph_get()
        j = i - self.base
        for m, read in enumerate(self.reads):
            evaluated = read.object.evaluated_get(depsgraph)
            mesh = evaluated.data
            if self._triangles[m] is None:
                self._local[m] = np.empty((self._held, len(mesh.vertices) * 3), np.float32)
                mesh.attributes["position"].data.foreach_get("vector", self._local[m][j])
                # A closed mesh built or flipped inside out still collides from outside.
                self._triangles[m] = outward(loop_triangles(mesh),
                                             self._local[m][j].reshape(-1, 3))
            elif (len(mesh.vertices) * 3 != self._local[m].shape[1]
                  or len(mesh.polygons) == 0):
                raise SetupError(
                    f"Collider '{read.name}': its modifiers change the mesh's vertex count "
                    f"during the animation ({len(mesh.vertices)} vertices now, "
                    f"{self._local[m].shape[1] // 3} at the first frame); a mesh collider needs "
                    "the same topology on every frame")
            mesh.attributes["position"].data.foreach_get("vector", self._local[m][j])
            self._world[j, m] = np.array(evaluated.matrix_world)
            if i == 0:
                self._first_det[m] = np.linalg.det(self._world[j, m, :3, :3])

    def release(self, upto: int, done: int) -> None:
        """Samples before ``upto`` are converted: the buffers start at it (``done``: the
        samples read)."""
        shift_rows([self._world, *(b for b in self._local if b is not None)],
                   upto - self.base, done - upto)
        self.base = upto

    def hold(self, done: int) -> None:
        """Every sample from `done` on a copy of the last one read (a preview's placeholders)."""
        self._world[done:] = self._world[done - 1]
        for local in self._local:
            if local is not None:
                local[done:] = local[done - 1]

    def result(self, unit_scale: float) -> MeshColliders | None:
        """World-space vertices in metres (float32), None when there is no mesh collider."""
        return self.rows(slice(None), unit_scale)

    def rows(self, index, unit_scale: float) -> MeshColliders | None:
        """``result`` at the samples ``index`` (an index array, or a slice: no copy) alone
        (the first sample, always read, decides which way the faces point)."""
        if not self.reads:
            return None
        numbers = np.arange(self.samples)[index]
        if self.base:
            index = numbers - self.base
        vertices, triangles = [], []
        for m, read in enumerate(self.reads):
            world = self._world[index, m]
            det = np.linalg.det(world[:, :3, :3])
            first = float(self._first_det[m])
            bad = (det <= 0.0) if first > 0.0 else (det >= 0.0)
            if first == 0.0 or bad.any():
                f = int(numbers[np.flatnonzero(bad)[0]]) if bad.any() else 0
                raise SetupError(f"Collider '{read.name}': its world scale flips sign or "
                                 f"collapses at sample {f}")
            tris = self._triangles[m]
            if first < 0.0:
                tris = tris[:, ::-1].copy()  # mirrored: keep the faces' outside outward
            local = self._local[m][index].reshape(len(numbers), -1, 3).astype(np.float64)
            points = (np.einsum("fij,fnj->fni", world[:, :3, :3], local)
                      + world[:, None, :3, 3]) * unit_scale
            vertices.append(points.astype(np.float32))
            triangles.append(tris)
        return MeshColliders.create(
            names=[r.name for r in self.reads], triangles=triangles, vertices=vertices,
            friction=[r.friction for r in self.reads], depth=[r.depth for r in self.reads])


def take(meshes: MeshColliders | None, index) -> MeshColliders | None:
    """The mesh colliders at the samples `index`."""
    if meshes is None:
        return None
    return MeshColliders(meshes.names, meshes.triangles,
                         tuple(v[index] for v in meshes.vertices), meshes.friction,
                         meshes.depth)
