"""Render strands of guide armatures: the ``STRAND_OUTPUTS`` hook of addon/systems.py.

``prepare_output`` (before sampling) reads and validates each armature's ``waft_hair``
settings and scalp; ``build_output`` (after the solve) samples the evaluated scalp on every
baked frame, scatters and binds the render strands on the first frame and returns ``commit``,
which writes the Curves object and its packed bake. Guides are the solved chains
("<Armature>: <first bone>" -> (F, bones + 1, 3) world Blender units), each resampled on its
uniform cubic B-spline to the points-per-strand LOD. Each frame's strands are then pushed out
of the colliders their guides collide with, to their own radius (``core.hair.collide``: between
two guides hugging the head a strand otherwise cut up to 10 cm into it): the shape colliders,
then the body-mesh colliders' surfaces of that frame. Nothing is written before ``commit``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import bpy
import numpy as np

from ...core.errors import SetupError
from ...core.hair import (
    bind_strands,
    collide_strands,
    collide_strands_meshes,
    evaluate_roots,
    interpolate_strands,
    playback,
    resample_bspline,
)
from ...core.hair import scatter_roots as core_scatter
from ...core.hair.collide import Projections
from ...core.mesh_colliders import MeshColliders
from ...core.mesh_lattice import NodeCache
from ..mesh_colliders import MeshSampler, is_mesh_collider, read_mesh_collider
from ..reading import collider_set, read_collider, setup_collider_objects
from ..sampling import frame_kept, waft_tracks_muted
from . import curves


@dataclass(frozen=True)
class StrandSettings:
    """A snapshot of ``Object.waft_hair`` (read once, on the bake's first frame)."""

    count: int
    method: str
    clump: float
    randomness: float
    seed: int
    points: int
    root_radius: float
    tip_radius: float
    output: str
    alembic_path: str
    storage: str = "GUIDES"
    body_meshes: bool = True  # pushed out of the body-mesh colliders too

    @classmethod
    def read(cls, hair) -> StrandSettings:
        return cls(count=int(hair.count), method=hair.method, clump=float(hair.clump),
                   randomness=float(hair.randomness), seed=int(hair.seed),
                   points=int(hair.points), root_radius=float(hair.root_radius),
                   tip_radius=float(hair.tip_radius),
                   output=hair.output.name if hair.output is not None else "",
                   alembic_path=hair.alembic_path, storage=hair.storage,
                   body_meshes=bool(hair.body_meshes))


@dataclass(frozen=True)
class Scalp:
    """A scalp mesh's evaluated topology and density, read before the bake."""

    name: str
    triangles: np.ndarray  # (T, 3) int
    vertices: int
    density: np.ndarray | None  # (V,)


@dataclass(frozen=True)
class Target:
    setup: str  # the object whose render strands these are
    scalp: Scalp
    settings: StrandSettings
    # the colliders its guides collide with (reading.ColliderRead): the strands are pushed out
    # of them after interpolation (core.hair.collide)
    colliders: tuple = ()
    # its body-mesh colliders (mesh_colliders.MeshColliderRead), pushed out of after the shapes
    meshes: tuple = ()


def _evaluated_mesh(ob):
    return ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data


def read_scalp(scene, owner, scalp_ob, density_group: str) -> Scalp:
    """Validate and read the scalp mesh; errors name the owner and the scalp."""
    where = f"{owner.type.title()} '{owner.name}'"
    if scalp_ob is None:
        raise SetupError(f"{where}: Render Strands is on but no Scalp mesh is set")
    if scalp_ob.type != 'MESH':
        raise SetupError(f"{where}: scalp '{scalp_ob.name}' is not a mesh")
    if scene.objects.get(scalp_ob.name) is None:
        raise SetupError(f"{where}: scalp '{scalp_ob.name}' is not in scene '{scene.name}'")
    mesh = _evaluated_mesh(scalp_ob)
    if len(mesh.polygons) == 0:
        raise SetupError(f"{where}: scalp '{scalp_ob.name}' has no faces to grow hair from")
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    density = None
    if density_group:
        group = scalp_ob.vertex_groups.get(density_group)
        if group is None:
            raise SetupError(f"{where}: scalp '{scalp_ob.name}' has no vertex group "
                             f"'{density_group}' (the density group)")
        original = scalp_ob.data
        if len(original.vertices) != len(mesh.vertices):
            raise SetupError(f"{where}: scalp '{scalp_ob.name}' changes its vertex count in "
                             "its modifiers, so the density group cannot be mapped")
        density = np.zeros(len(original.vertices))
        index = group.index
        for vertex in original.vertices:  # no bulk accessor for vertex-group weights
            for element in vertex.groups:
                if element.group == index:
                    density[vertex.index] = element.weight
        if not np.any(density > 0.0):
            raise SetupError(f"{where}: density group '{density_group}' of scalp "
                             f"'{scalp_ob.name}' is zero everywhere, so no hair can grow")
    return Scalp(name=scalp_ob.name, triangles=tris.reshape(-1, 3).astype(np.int64),
                 vertices=len(mesh.vertices), density=density)


def check_settings(owner, settings: StrandSettings) -> None:
    where = f"{owner.type.title()} '{owner.name}'"
    if settings.count < 1:
        raise SetupError(f"{where}: the render strand count is {settings.count}; it must be "
                         "at least 1 (a density of 0 grows no hair)")
    if settings.points < 2:
        raise SetupError(f"{where}: points per strand must be at least 2")
    values = (settings.clump, settings.randomness, settings.root_radius, settings.tip_radius)
    if not all(np.isfinite(v) for v in values):
        raise SetupError(f"{where}: a render strand setting is not finite")


def target_for(scene, ob) -> Target:
    hair = ob.waft_hair
    settings = StrandSettings.read(hair)
    check_settings(ob, settings)
    scalp = hair.scalp
    if scalp is None and ob.type == 'CURVES':  # hair Curves guides: grow on their surface
        scalp = ob.data.surface
    found = sorted(setup_collider_objects(scene, ob), key=lambda c: c.name)
    colliders = tuple(read_collider(c) for c in found if not is_mesh_collider(c))
    # World Blender units, as the strands (unit scale 1).
    meshes = tuple(read_mesh_collider(c, 1.0) for c in found
                   if is_mesh_collider(c) and settings.body_meshes)
    return Target(setup=ob.name, scalp=read_scalp(scene, ob, scalp, hair.density_group),
                  settings=settings, colliders=colliders, meshes=meshes)


@dataclass(frozen=True)
class PreparedOutput:
    scene: object  # bpy.types.Scene being baked
    targets: list[Target]


def prepare_output(scene, setup_objects) -> PreparedOutput | None:
    """Targets of the armatures with Render Strands on; SetupError on bad input."""
    targets = [target_for(scene, ob) for ob in setup_objects
               if ob.type == 'ARMATURE' and ob.waft_hair.render_strands]
    for target in targets:
        check_bake_possible(target.setup)
    return PreparedOutput(scene=scene, targets=targets) if targets else None


def check_bake_possible(owner: str) -> None:
    """Blender 4.2 bakes geometry only to disk, next to a saved .blend (no PACKED target)."""
    if not curves.packed_bakes() and not bpy.data.filepath:
        raise SetupError(f"'{owner}': Blender {bpy.app.version_string} stores the render-strand "
                         "bake on disk next to the .blend; save the file before baking")


@dataclass(frozen=True)
class ScalpSamples:
    """One target's per-frame inputs: evaluated scalp and the animatable strand settings."""

    vertices: np.ndarray  # (F, V, 3) world
    clump: np.ndarray  # (F,)
    randomness: np.ndarray  # (F,)
    collider_matrix: np.ndarray  # (F, K, 4, 4) world, the target's colliders
    matrix: np.ndarray  # (F, 4, 4) the scalp's world matrix
    meshes: MeshColliders | None = None  # the target's body meshes at each frame (world)


def sample_scalps(scene, targets: list[Target], frames, muted) -> list[ScalpSamples]:
    """The evaluated scalp (world vertices) and Clump / Randomness of each target per frame."""
    F = len(frames)
    verts = [np.empty((F, t.scalp.vertices, 3)) for t in targets]
    clump = [np.empty(F) for _ in targets]
    randomness = [np.empty(F) for _ in targets]
    colliders = [np.empty((F, len(t.colliders), 4, 4)) for t in targets]
    matrices = [np.empty((F, 4, 4)) for _ in targets]
    meshes = [MeshSampler(t.meshes, F) for t in targets]
    with frame_kept(scene), waft_tracks_muted(muted):
        for i, frame in enumerate(frames):
            scene.frame_set(int(frame))
            for t, target in enumerate(targets):
                meshes[t].sample(i)
                for k, collider in enumerate(target.colliders):
                    colliders[t][i, k] = np.array(collider.object.matrix_world)
                owner = scene.objects[target.setup]
                clump[t][i] = owner.waft_hair.clump
                randomness[t][i] = owner.waft_hair.randomness
                ob = scene.objects[target.scalp.name]
                mesh = _evaluated_mesh(ob)
                if len(mesh.vertices) != target.scalp.vertices:
                    raise SetupError(f"Scalp '{ob.name}' changes its vertex count at frame "
                                     f"{int(frame)}; render strands need a fixed topology")
                co = np.empty(target.scalp.vertices * 3, dtype=np.float32)
                mesh.vertices.foreach_get("co", co)
                matrix = np.array(ob.matrix_world, dtype=np.float64)
                matrices[t][i] = matrix
                verts[t][i] = co.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    for target, c, r in zip(targets, clump, randomness, strict=True):
        if not (np.all(np.isfinite(c)) and np.all(np.isfinite(r)) and np.all(r >= 0.0)):
            raise SetupError(f"'{target.setup}': animated Clump or Randomness is not finite "
                             "or negative")
    return [ScalpSamples(vertices=v.astype(np.float32), clump=np.clip(c, 0.0, 1.0), randomness=r,
                         collider_matrix=m, matrix=w, meshes=b.result(1.0))
            for v, c, r, m, w, b in zip(verts, clump, randomness, colliders, matrices, meshes,
                                        strict=True)]


def guides_at_lod(chains: list[np.ndarray], points: int) -> np.ndarray:
    """Chains (F, n_i, 3) of any lengths -> guides (F, G, points, 3) on their B-splines."""
    F = chains[0].shape[0]
    out = np.empty((F, len(chains), points, 3))
    lengths = np.array([c.shape[1] for c in chains])
    for n in np.unique(lengths):  # one batched resample per distinct chain length
        members = np.flatnonzero(lengths == n)
        stacked = np.stack([chains[g] for g in members], axis=1)  # (F, m, n, 3)
        out[:, members] = resample_bspline(stacked, points)
    return out


class StrandBinder:
    """One target's render strands made from its guides: roots scattered on the scalp and bound
    to the guides on the first frame (``bind``), then each frame interpolated between the
    guides and pushed out of the colliders (``positions``). The bake (``StrandAnimation``) and
    the live preview (``PreviewStrands``) both make their strands here, so they agree bit for
    bit. The binding holds unit jitter (randomness 1): each frame scales it and sets the clump,
    which are animatable."""

    def __init__(self, target: Target, guides: np.ndarray, vertices: np.ndarray, clump: float):
        """``guides`` (G, points, 3) and ``vertices`` (V, 3) world, ``clump``: the first frame's."""
        s = target.settings
        self.target = target
        name = f"Scalp '{target.scalp.name}' of '{target.setup}'"
        self.roots = core_scatter(vertices=vertices, triangles=target.scalp.triangles,
                                  count=s.count, density=target.scalp.density, seed=s.seed,
                                  name=name)
        self.binding = bind_strands(roots=self.roots, guide_rest=guides, method=s.method,
                                    clump=float(clump), randomness=1.0, seed=s.seed,
                                    name=f"Guides of '{target.setup}'")
        self.colliders = collider_set(target.colliders) if target.colliders else None
        self.radius = np.linspace(s.root_radius, s.tip_radius, s.points)
        # Body-mesh lattice nodes kept while a body stands still (same bits as without).
        self._node_cache = NodeCache()

    def positions(self, guides: np.ndarray, vertices: np.ndarray, clump: float,
                  randomness: float, collider_matrix: np.ndarray, out: np.ndarray,
                  meshes: MeshColliders | None = None, sample: int = 0) -> np.ndarray:
        """``out`` (count, points, 3) float32: every strand of a frame whose guides (float32),
        scalp vertices, Clump, Randomness, collider matrices and body meshes (their sample
        ``sample``) are given."""
        self.interpolate(guides, vertices, clump, randomness, out)
        self.collide(out, collider_matrix)
        self.collide_meshes(out, meshes, sample)
        return out

    def interpolate(self, guides: np.ndarray, vertices: np.ndarray, clump: float,
                    randomness: float, out: np.ndarray) -> np.ndarray:
        """``out``: the strands interpolated between the guides, before collision."""
        b = self.binding
        binding = replace(b, clump=np.full_like(b.clump, clump), jitter=b.jitter * randomness)
        roots = evaluate_roots(triangle=self.roots.triangle, barycentric=self.roots.barycentric,
                               vertices=vertices, triangles=self.target.scalp.triangles,
                               normals=False)[0]
        return interpolate_strands(binding, guides, roots=roots, out=out)

    def collide(self, out: np.ndarray, collider_matrix: np.ndarray) -> Projections:
        """Push ``out`` out of the colliders, in place."""
        if self.colliders is None:
            return Projections(0, 0)
        return collide_strands(out, self.radius, self.colliders, collider_matrix)

    def collide_meshes(self, out: np.ndarray, meshes: MeshColliders | None,
                       sample: int) -> np.ndarray:
        """Push ``out`` out of the body meshes at their sample ``sample``, in place, after the
        shapes; the flat indices of the points moved."""
        return collide_strands_meshes(out, self.radius, meshes, sample=sample,
                                      cache=self._node_cache)


class StrandAnimation:
    """Render strands of one target, computed per frame on demand (memory ~ guides + scalp).

    Roots and binding are made on the first frame (``StrandBinder``).
    """

    def __init__(self, target: Target, guides: np.ndarray, scalp: ScalpSamples, frames):
        s = target.settings
        self.target = target
        self.frame_start = int(frames[0])
        self.frame_end = int(frames[-1])
        self.guides = guides.astype(np.float32)  # (F, G, points, 3)
        self.scalp = scalp
        self.binder = StrandBinder(target, guides[0], scalp.vertices[0], scalp.clump[0])
        self._buffer = np.empty((s.count, s.points, 3), dtype=np.float32)

    def index(self, frame: int) -> int:
        return min(max(frame - self.frame_start, 0), self.frame_end - self.frame_start)

    @property
    def strands(self) -> int:
        return self.target.settings.count

    def positions(self, frame: int) -> np.ndarray:
        """Flat float32 point positions of every strand at scene frame ``frame``."""
        i, scalp = self.index(frame), self.scalp
        return self.binder.positions(self.guides[i], scalp.vertices[i], scalp.clump[i],
                                     scalp.randomness[i], scalp.collider_matrix[i],
                                     self._buffer, scalp.meshes, i).ravel()

    def radius(self) -> np.ndarray:
        return self.binder.radius

    def carrier(self, frame: int) -> np.ndarray:
        """The compact bake's carrier points at scene frame ``frame`` (core.hair.playback)."""
        i, scalp, s = self.index(frame), self.scalp, self.target.settings
        self.binder.interpolate(self.guides[i], scalp.vertices[i], scalp.clump[i],
                                scalp.randomness[i], self._buffer)
        passes = self.binder.collide(self._buffer, scalp.collider_matrix[i]).passes
        moved = self.binder.collide_meshes(self._buffer, scalp.meshes, i)
        return playback.carrier_points(
            self.binder.binding, self.guides[i], scalp_matrix=scalp.matrix[i],
            clump=float(scalp.clump[i]), randomness=float(scalp.randomness[i]),
            root_radius=s.root_radius, tip_radius=s.tip_radius,
            records=playback.collider_records(self.binder.colliders, scalp.collider_matrix[i]),
            passes=passes, corrections=(moved, self._buffer.reshape(-1, 3)[moved]))

    def binding_attributes(self) -> dict:
        """The per-strand binding as curve attributes of the compact bake's data."""
        binding, roots = self.binder.binding, self.binder.roots
        vertices = self.target.scalp.triangles[roots.triangle]
        out = {f"waft_g{i}": ('INT', binding.guide[:, i]) for i in range(3)}
        out |= {f"waft_scalp_v{i}": ('INT', vertices[:, i]) for i in range(3)}
        out |= {"waft_weight": ('FLOAT_VECTOR', binding.weight),
                "waft_jitter": ('FLOAT_VECTOR', binding.jitter),
                "waft_bary": ('FLOAT_VECTOR', roots.barycentric)}
        return out


def animations(scene, targets: list[Target], guides: list[np.ndarray], frames,
               muted) -> list[StrandAnimation]:
    scalps = sample_scalps(scene, targets, frames, muted)
    return [StrandAnimation(t, g, s, frames)
            for t, g, s in zip(targets, guides, scalps, strict=True)]


def write(scene, animation: StrandAnimation):
    """Create/update the '<setup> Strands' Curves object and bake it (the commit step)."""
    s = animation.target.settings
    name = f"{animation.target.setup} Strands"
    existing = scene.objects.get(s.output) if s.output else scene.objects.get(name)
    first = animation.positions(animation.frame_start).reshape(animation.strands, s.points, 3)
    if s.storage == "POINTS":
        data = curves.new_curves_data(name, strands=animation.strands, points=s.points,
                                      positions=first, radius=animation.radius())
        ob = curves.strand_object(scene, name, existing, data)
        curves.bake_animation(scene, ob, frame_start=animation.frame_start,
                              frame_end=animation.frame_end, positions_at=animation.positions)
    else:
        data = curves.new_binding_data(name, roots=first[:, 0], tips=first[:, -1],
                                       attributes=animation.binding_attributes())
        ob = curves.strand_object(scene, name, existing, data)
        binder = animation.binder
        # Every frame's carrier first: the Bake node needs one point count for all of them,
        # and a body mesh moves a different number of points each frame (its corrections).
        carriers = [animation.carrier(f)
                    for f in range(animation.frame_start, animation.frame_end + 1)]
        slots = max(playback.corrections_in(c) for c in carriers)
        carriers = [playback.with_slots(c, slots) for c in carriers]
        sizes = playback.carrier_sizes(binder.binding.guides, s.points,
                                       binder.colliders.count if binder.colliders else 0, slots)
        curves.bake_carrier(scene, ob, frame_start=animation.frame_start,
                            frame_end=animation.frame_end, sizes=sizes,
                            carrier_at=lambda f: carriers[animation.index(f)],
                            scalp=scene.objects[animation.target.scalp.name])
    owner = scene.objects.get(animation.target.setup)
    if owner is not None and owner.waft_hair.output != ob:
        owner.waft_hair.output = ob
    if s.alembic_path:
        curves.export_alembic(scene, ob, s.alembic_path, frame_start=animation.frame_start,
                              frame_end=animation.frame_end)
    return ob


def owner_chains(target: Target, chain_positions: dict) -> list[np.ndarray]:
    """The solved chains ``{"<armature>: <first bone>": positions}`` of ``target``'s armature,
    its guides, in the bake's chain order."""
    chains = [p for key, p in chain_positions.items() if key.startswith(f"{target.setup}: ")]
    if not chains:
        raise SetupError(f"Armature '{target.setup}': Render Strands is on but it has no "
                         "simulated chains to use as guides")
    return chains


def preview_output(scene, setup_objects):
    """The live preview's render strands of the armatures with Render Strands on
    (``preview_strands.ChainStrands``), None without any; SetupError on bad input."""
    from .preview_strands import ChainStrands

    targets = [target_for(scene, ob) for ob in setup_objects
               if ob.type == 'ARMATURE' and ob.waft_hair.render_strands]
    if not targets:
        return None
    return ChainStrands(scene, targets, [scene.objects[t.setup] for t in targets
                                         if t.setup in scene.objects])


def build_output(prepared: PreparedOutput, chain_positions: dict, frames):
    """Sample scalps, bind the strands; return ``commit()`` writing the Curves objects."""
    scene, targets = prepared.scene, prepared.targets
    guides = [guides_at_lod(owner_chains(target, chain_positions), target.settings.points)
              for target in targets]
    muted = [scene.objects[t.setup] for t in targets if t.setup in scene.objects]
    prepared_animations = animations(scene, targets, guides, frames, muted)

    def commit() -> list:
        return [write(scene, animation) for animation in prepared_animations]

    return commit
