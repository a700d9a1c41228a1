"""Guides from a hair Curves object (``Object.waft_hair.enabled``): the ``hair`` system.

Each curve is a guide strand. Its root is bound to the nearest point of the Curves object's
``surface`` mesh (evaluated, so a skinned or parented scalp carries it) and its groomed shape
rides on the frame of that surface triangle: that is the reference pose the shape constraints
pull toward. Without a surface the guides follow the Curves object's own transform. The guides
are solved by ``core.solver.bake_steps`` with the object's ``Object.waft`` settings (sampled
per frame), then written back into the Curves object as a packed geometry-nodes bake placed
first in its modifier stack (the user's own modifiers, e.g. Blender's hair interpolation, then
follow the simulated guides), and the render strands are written as for guide armatures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import bpy
import numpy as np

from ...core.colliders import ColliderSet
from ...core.errors import SetupError
from ...core.hair import closest_on_mesh, evaluate_roots
from ...core.strands.drive import Drive
from ...core.strands.model import MIN_SEGMENT_LENGTH, ChainRest, build_strand_model
from ...core.strands.params import StrandParams
from ...core.strands.solver import bake_steps
from .. import preview, reading
from ..mesh_colliders import MeshSampler, is_mesh_collider, read_mesh_collider
from ..progress import Progress, solve_steps
from ..report import SystemReport, timings
from ..sampling import frame_kept
from ..settled import read_point_offsets
from ..strands.assemble import hair_fields, setup_fields
from ..strands.reading import SETUP_FLOAT_SETTINGS
from ..strands.sampling import SETUP_SCALARS, SETUP_VECTORS
from . import curves, output

NAME = "hair"


def claims(ob) -> bool:
    return ob.type == 'CURVES' and ob.waft_hair.enabled


@dataclass(frozen=True)
class GuideSetup:
    name: str
    rest_local: np.ndarray  # (G, P, 3) object space, Blender units (the groom)
    surface: output.Scalp | None
    colliders: tuple  # collider object names this setup collides with
    render: output.Target | None
    space: tuple[str, str] | None = None  # (armature, bone): the Space Bone, None = surface
    # (G, P, 3) settled pose (Capture Settled Pose: offsets from the groom carried by the
    # surface, in the space's axes, Blender units) when Settled Pose is on, else None
    settled_offset: np.ndarray | None = None


@dataclass
class Prepared:
    setups: list[GuideSetup]
    colliders: tuple  # reading.ColliderRead, sorted by name
    frame_start: int
    frame_end: int
    fps: float
    unit: float
    meshes: tuple = ()  # mesh_colliders.MeshColliderRead, sorted by name


@dataclass
class SetupReport:
    name: str
    guides: int
    particles: int
    strands: int = 0


@dataclass
class HairReport(SystemReport):
    name: str = NAME
    from_preview: bool = False  # the live preview had solved this exact input: not solved again

    def summary(self) -> str:
        names = ", ".join(s.name for s in self.setups)
        guides = sum(s.guides for s in self.setups)
        strands = sum(s.strands for s in self.setups)
        reused = "; the preview's simulation, not solved again" if self.from_preview else ""
        return (f"Waft hair baked {names}: {guides} guides, {strands} render strands, "
                f"{self.frames} frames ({timings(self)}){reused}")


def read_guides(ob) -> np.ndarray:
    """(G, P, 3) object-space points of a hair Curves object; SetupError on bad guides."""
    data = ob.data
    where = f"Curves '{ob.name}'"
    G = len(data.curves)
    if G == 0:
        raise SetupError(f"{where} has no curves to use as guides")
    offsets = np.empty(G + 1, dtype=np.int32)
    data.curve_offset_data.foreach_get("value", offsets)
    counts = np.diff(offsets)
    if np.any(counts != counts[0]):
        other = int(np.flatnonzero(counts != counts[0])[0])
        raise SetupError(f"{where}: every guide curve needs the same number of points (curve 0 "
                         f"has {counts[0]}, curve {other} has {counts[other]}); resample them")
    if counts[0] < 2:
        raise SetupError(f"{where}: a guide curve needs at least 2 points, they have "
                         f"{counts[0]}")
    points = np.empty(offsets[-1] * 3, dtype=np.float32)
    data.position_data.foreach_get("vector", points)
    guides = points.reshape(G, counts[0], 3).astype(np.float64)
    if not np.all(np.isfinite(guides)):
        raise SetupError(f"{where}: a curve point is not finite")
    segments = np.linalg.norm(np.diff(guides, axis=1), axis=-1)
    short = np.argwhere(segments < MIN_SEGMENT_LENGTH)
    if short.size:
        g, k = (int(i) for i in short[0])
        raise SetupError(f"{where}: curve {g} has a zero-length segment ({k}-{k + 1}); "
                         "strands with zero length cannot be simulated")
    return guides


def _read_setup(scene, ob, *, use_settled: bool = True) -> GuideSetup:
    reading.check_world_scale(ob, "Curves")
    reading.check_finite_settings(ob.waft, SETUP_FLOAT_SETTINGS, f"Curves '{ob.name}'")
    rest = read_guides(ob)
    settled = None
    if use_settled and ob.waft.use_settled_pose:
        settled = read_point_offsets(ob.data, captured=ob.waft.settled_count,
                                     points=rest.shape[0] * rest.shape[1],
                                     where=f"Curves '{ob.name}'").reshape(rest.shape)
    surface = None
    if ob.data.surface is not None:
        surface = output.read_scalp(scene, ob, ob.data.surface, "")
    colliders = tuple(c.name for c in reading.setup_collider_objects(scene, ob))
    render = None
    if ob.waft_hair.render_strands:
        render = output.target_for(scene, ob)
        output.check_bake_possible(ob.name)
    elif not curves.packed_bakes():
        output.check_bake_possible(ob.name)
    space = reading.space_bone(ob, f"Curves '{ob.name}'")
    return GuideSetup(name=ob.name, rest_local=rest, surface=surface, colliders=colliders,
                      render=render,
                      space=(space[0].name, space[1]) if space is not None else None,
                      settled_offset=settled)


def prepare(scene, *, objects, frame_start, frame_end, use_settled: bool = True
            ) -> Prepared | None:
    """``use_settled`` False: ignore settled poses (Capture Settled Pose simulates without)."""
    obs = objects if objects is not None else [ob for ob in scene.objects if claims(ob)]
    obs = sorted((ob for ob in obs if claims(ob)), key=lambda ob: ob.name)
    if not obs:
        return None
    setups = [_read_setup(scene, ob, use_settled=use_settled) for ob in obs]
    names = sorted({c for s in setups for c in s.colliders})
    found = [scene.objects[n] for n in names]
    unit = reading.unit_scale(scene)
    colliders = tuple(reading.read_collider(ob) for ob in found if not is_mesh_collider(ob))
    meshes = tuple(read_mesh_collider(ob, unit) for ob in found if is_mesh_collider(ob))
    return Prepared(setups=setups, colliders=colliders, frame_start=int(frame_start),
                    frame_end=int(frame_end), fps=reading.scene_fps(scene), unit=unit,
                    meshes=meshes)


class _Samples:
    """Per-frame object matrices, surface vertices, collider matrices and settings."""

    def __init__(self, prepared: Prepared, F: int):
        self.matrix = np.empty((F, len(prepared.setups), 4, 4))
        self.surface = [np.empty((F, s.surface.vertices, 3)) if s.surface else None
                        for s in prepared.setups]
        self.surface_matrix = np.empty((F, len(prepared.setups), 4, 4))
        # World Motion's frame: the surface's, or the Space Bone's (root motion on a bone)
        self.space_matrix = np.empty((F, len(prepared.setups), 4, 4))
        self.collider = np.empty((F, len(prepared.colliders), 4, 4))
        self.gravity = np.empty((F, 3))
        self.meshes = MeshSampler(prepared.meshes, F)
        self.settings = [{name: np.empty(F) for name in SETUP_SCALARS} | {
            name: np.empty((F, 3)) for name in SETUP_VECTORS} for _ in prepared.setups]


def _sample(scene, prepared: Prepared, samples: _Samples, i: int) -> None:
    for s, setup in enumerate(prepared.setups):
        ob = scene.objects[setup.name]
        samples.matrix[i, s] = np.array(ob.matrix_world)
        for name, series in samples.settings[s].items():
            series[i] = getattr(ob.waft, name)
        if setup.surface is not None:
            surface = scene.objects[setup.surface.name]
            mesh = surface.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
            if len(mesh.vertices) != setup.surface.vertices:
                raise SetupError(f"Curves '{setup.name}': surface '{surface.name}' changes its "
                                 f"vertex count at frame {scene.frame_current}")
            co = np.empty(setup.surface.vertices * 3, dtype=np.float32)
            mesh.vertices.foreach_get("co", co)
            m = np.array(surface.matrix_world)
            samples.surface_matrix[i, s] = m
            samples.surface[s][i] = co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]
        else:
            samples.surface_matrix[i, s] = samples.matrix[i, s]
        if setup.space is not None:
            armature = scene.objects[setup.space[0]]
            samples.space_matrix[i, s] = (np.array(armature.matrix_world)
                                          @ np.array(armature.pose.bones[setup.space[1]].matrix))
        else:
            samples.space_matrix[i, s] = samples.surface_matrix[i, s]
    for k, collider in enumerate(prepared.colliders):
        samples.collider[i, k] = np.array(collider.object.matrix_world)
    samples.meshes.sample(i)
    samples.gravity[i] = tuple(scene.gravity) if scene.use_gravity else (0.0, 0.0, 0.0)


def _triangle_frames(vertices, triangles, tri) -> np.ndarray:
    """(..., G, 3, 3) rotation matrices (columns: edge, in-plane normal, normal) of triangles."""
    corners = triangles[tri]
    a, b, c = (vertices[..., corners[:, i], :] for i in range(3))
    x = b - a
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    z = np.cross(b - a, c - a)
    z /= np.linalg.norm(z, axis=-1, keepdims=True)
    return np.stack([x, np.cross(z, x), z], axis=-1)


def _reference(setup: GuideSetup, rest_world, samples: _Samples, s: int) -> np.ndarray:
    """The groomed pose carried by the surface (or the object): (F, G, P, 3) world units."""
    if setup.surface is None:
        relative = samples.matrix[:, s] @ np.linalg.inv(samples.matrix[0, s])  # (F, 4, 4)
        return np.einsum("fij,gpj->fgpi", relative[:, :3, :3], rest_world) + \
            relative[:, None, None, :3, 3]
    verts = samples.surface[s]
    tris = setup.surface.triangles
    bound = closest_on_mesh(rest_world[:, 0], vertices=verts[0], triangles=tris,
                            name=f"surface '{setup.surface.name}'")
    root, _ = evaluate_roots(triangle=bound.triangle, barycentric=bound.barycentric,
                             vertices=verts, triangles=tris)  # (F, G, 3)
    frames = _triangle_frames(verts, tris, bound.triangle)  # (F, G, 3, 3)
    local = np.einsum("gji,gpj->gpi", frames[0], rest_world - root[0][:, None])
    return root[:, :, None] + np.einsum("fgij,gpj->fgpi", frames, local)


def _params(prepared: Prepared, samples: _Samples, sizes: list[int], P: int) -> StrandParams:
    """Object.waft settings per frame → core shapes, strands ordered setup by setup."""
    unit = prepared.unit

    def strand(name):
        return np.concatenate([np.repeat(d[name][:, None], n, axis=1)
                               for d, n in zip(samples.settings, sizes, strict=True)], axis=1)

    def particle(values):
        return np.repeat(values[:, :, None], P, axis=2)

    wind = np.concatenate([np.repeat((d["wind_direction"] / np.maximum(np.linalg.norm(
        d["wind_direction"], axis=1, keepdims=True), 1e-12) * d["wind_speed"][:, None] * unit)
        [:, None], n, axis=1) for d, n in zip(samples.settings, sizes, strict=True)], axis=1)
    gravity = np.concatenate([np.repeat((samples.gravity * unit * d["gravity_factor"][:, None])
                                        [:, None], n, axis=1)
                              for d, n in zip(samples.settings, sizes, strict=True)], axis=1)
    return StrandParams.defaults(
        sum(sizes), P,
        damping=particle(strand("damping")),
        shape_stiffness=particle(strand("shape_stiffness")),
        radius=particle(strand("radius") * unit),
        gravity=gravity,
        wind_velocity=wind,
        **setup_fields(strand, particle, unit),
        **hair_fields(strand, P),
    )


@dataclass(frozen=True)
class Simulation:
    """Solved guides before anything is written (``simulate``)."""

    model: object  # core StrandModel
    drive: Drive
    result: object  # core BakeResult (the scene frames)
    samples: _Samples
    sizes: list  # guides per setup
    sample_s: float
    solve_s: float
    from_preview: bool = False  # the result is the live preview's (``preview.solved_hair``)


def simulate(prepared: Prepared, scene, *, settings):
    """Generator (yields Progress): sample every frame in one pass (``_sample``), solve, return
    a ``Simulation``. The bake and Capture Settled Pose both run it."""
    frames = np.arange(prepared.frame_start, prepared.frame_end + 1)
    F = len(frames)
    samples = _Samples(prepared, F)
    t0 = time.perf_counter()
    with frame_kept(scene):
        for i, frame in enumerate(frames):
            scene.frame_set(int(frame))
            _sample(scene, prepared, samples, i)
            if i % 10 == 9 or i == F - 1:
                yield Progress("sample", i + 1, F)
    model, drive, sizes = solver_input(prepared, samples)
    t1 = time.perf_counter()
    # The live preview played this very input through: its result is the bake's, bit for bit.
    result = preview.solved_hair(scene, model, drive, settings)
    from_preview = result is not None
    if result is None:
        result = yield from solve_steps(lambda: bake_steps(model, drive, settings),
                                        prepared.frame_start)
    return Simulation(model=model, drive=drive, result=result, samples=samples, sizes=sizes,
                      sample_s=t1 - t0, solve_s=time.perf_counter() - t1,
                      from_preview=from_preview)


def solver_input(prepared: Prepared, samples: _Samples) -> tuple:
    """(core model, drive, guides per setup) of the samples (the bake's, or a live preview's
    with the samples not read yet held at the last one read)."""
    unit = prepared.unit
    chains, references, sizes, settled = [], [], [], []
    for s, setup in enumerate(prepared.setups):
        m0 = samples.matrix[0, s]
        rest_world = setup.rest_local @ m0[:3, :3].T + m0[:3, 3]
        references.append(_reference(setup, rest_world, samples, s))
        P = rest_world.shape[1]
        kinematic = np.zeros(P, dtype=bool)
        kinematic[0] = True
        chains += [ChainRest(setup=setup.name, name=f"curve {g}",
                             rest_positions=rest_world[g] * unit, kinematic=kinematic)
                   for g in range(len(rest_world))]
        sizes.append(len(rest_world))
        settled.append(np.full(rest_world.shape, np.nan) if setup.settled_offset is None
                       else setup.settled_offset * unit)
    P = chains[0].rest_positions.shape[0]
    if any(c.rest_positions.shape[0] != P for c in chains):
        raise SetupError("Hair Curves objects baked together need the same points per curve")
    K, M = len(prepared.colliders), len(prepared.meshes)
    mask = np.zeros((K, len(chains)), dtype=bool)
    mesh_mask = np.zeros((M, len(chains)), dtype=bool)
    start = 0
    for setup, n in zip(prepared.setups, sizes, strict=True):
        for k, collider in enumerate(prepared.colliders):
            mask[k, start:start + n] = collider.name in setup.colliders
        for m, mesh in enumerate(prepared.meshes):
            mesh_mask[m, start:start + n] = mesh.name in setup.colliders
        start += n
    shapes = reading.collider_set(prepared.colliders) if K else ColliderSet.empty()
    model = build_strand_model(chains=chains, colliders=shapes, collider_mask=mask)
    scale = np.diag([unit] * 3 + [1.0])
    space = np.concatenate([np.repeat((scale @ samples.space_matrix[:, s])[:, None], n, axis=1)
                            for s, n in enumerate(sizes)], axis=1)
    kinematic = np.zeros((len(chains), P), dtype=bool)
    kinematic[:, 0] = True
    any_settled = any(setup.settled_offset is not None for setup in prepared.setups)
    drive = Drive(fps=prepared.fps, reference=np.concatenate(references, axis=1) * unit,
                  kinematic=kinematic, space=space, collider_matrix=scale @ samples.collider,
                  params=_params(prepared, samples, sizes, P),
                  settled_offset=np.concatenate(settled) if any_settled else None,
                  meshes=samples.meshes.result(unit), mesh_mask=mesh_mask if M else None)
    return model, drive, sizes


def run_steps(prepared: Prepared, scene, *, settings, sample_chunk: int = 10):
    # Hair guides sample every frame in one pass (``_sample``); ``sample_chunk`` is accepted
    # for the protocol's sake.
    """Sample, solve, bind render strands; return the commit closure."""
    frames = np.arange(prepared.frame_start, prepared.frame_end + 1)
    F = len(frames)
    run = yield from simulate(prepared, scene, settings=settings)
    samples, sizes, result, unit = run.samples, run.sizes, run.result, prepared.unit
    P = run.model.particles
    positions = result.positions / unit  # (F, S, P, 3) Blender units
    report = HairReport(frames=F, sample_s=run.sample_s, solve_s=run.solve_s,
                        from_preview=run.from_preview)
    guides, animations = [], []
    start = 0
    for setup, n in zip(prepared.setups, sizes, strict=True):
        guides.append(positions[:, start:start + n])
        start += n
        report.setups.append(SetupReport(name=setup.name, guides=n, particles=n * P))
        if setup.render is not None:
            lod = output.guides_at_lod([guides[-1][:, g] for g in range(n)],
                                       setup.render.settings.points)
            scalp = output.sample_scalps(scene, [setup.render], frames, [])[0]
            animations.append(output.StrandAnimation(setup.render, lod, scalp, frames))
            report.setups[-1].strands = setup.render.settings.count
    report.particles = sum(r.particles for r in report.setups)

    def commit() -> HairReport:
        t3 = time.perf_counter()
        for s, setup in enumerate(prepared.setups):
            _write_guides(scene, setup, guides[s], samples.matrix[:, s], frames)
        for animation in animations:
            output.write(scene, animation)
        report.write_s = time.perf_counter() - t3
        return report

    return commit


def _write_guides(scene, setup: GuideSetup, world, matrices, frames) -> None:
    """Bake the solved guides (F, G, P, 3 world) into the Curves object, in object space."""
    ob = scene.objects[setup.name]
    inverse = np.linalg.inv(matrices)  # (F, 4, 4)
    local = np.einsum("fij,fgpj->fgpi", inverse[:, :3, :3], world) + \
        inverse[:, None, None, :3, 3]
    local = local.astype(np.float32)
    first = int(frames[0])

    def positions_at(frame: int) -> np.ndarray:
        return local[min(max(frame - first, 0), len(frames) - 1)].ravel()

    curves.bake_animation(scene, ob, frame_start=first, frame_end=int(frames[-1]),
                          positions_at=positions_at,
                          rest=setup.rest_local.astype(np.float32).ravel(), first=True)


def clear(scene, *, objects=None) -> list[str]:
    """Remove the guides' bakes; clearing the whole scene also removes the render strands'
    bakes (their Curves objects then show the first frame; delete them to get rid of them)."""
    obs = objects if objects is not None else [ob for ob in scene.objects if claims(ob)]
    cleared = [ob.name for ob in obs if ob.type == 'CURVES' and curves.remove_bake(ob)]
    owners = obs if objects is not None else [ob for ob in scene.objects if ob.type in {
        'ARMATURE', 'CURVES'} and ob.waft_hair.render_strands]
    for ob in owners:
        output_ob = ob.waft_hair.output
        if output_ob is not None and curves.remove_bake(output_ob) and ob.name not in cleared:
            cleared.append(ob.name)
    return cleared
