"""Rod chains (``Object.waft_rod`` on an armature): read, sample, assemble, and bone keys.

A rod is a chain of bones simulated as a Cosserat rod (StrayCloth, ``core.cloth.rod``): particles
at the bone heads (and the last tail) plus one orientation per bone, so ties, ribbons and hoods
get a full orientation (twist included), not only a direction. Particle 0 follows the animated
bone head; the first bone bends against its animated orientation. A one-bone chain is Alan Wake's
hood pendulum.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.cloth.rod import RodDrive, RodParams, RodRest
from ...core.errors import SetupError
from ...core.rotations import (
    make_sign_continuous,
    matrix_from_quat,
    quat_from_matrix,
    swing_matrix,
)
from .. import reading as shared_reading
from ..progress import Progress
from ..sampling import animated_paths, frame_kept, settings_at
from .assemble import stack_setups
from .pose import pose_basis
from .sampling import result_tracks_muted

FLOAT_SETTINGS = ("stretch_shear_compliance", "bend_twist_compliance", "damping",
                  "world_motion_fraction", "drag", "radius")
VECTOR_SETTINGS = ("bend_stiffness_axes", "gravity", "wind_velocity")
LENGTH_SETTINGS = ("radius",)


@dataclass(frozen=True)
class RodArmatureRead:
    object: object
    name: str
    bone_count: int
    space_bone: int  # index into pose.bones, -1 = the armature object
    rest_world: np.ndarray  # (4, 4) matrix_world when read


@dataclass(frozen=True)
class RodChainRead:
    armature: int  # index into RodRead.armatures
    name: str  # "<armature>: <root bone>"
    bone_names: tuple[str, ...]
    bone_index: np.ndarray  # (B,) into pose.bones
    parent_index: int  # the root's parent in pose.bones, -1 = none
    rest_matrix: np.ndarray  # (B, 4, 4) Bone.matrix_local
    parent_rest: np.ndarray  # (B, 4, 4): the root's parent rest (identity), then the chain's
    length: np.ndarray  # (B,) bone lengths, armature units


@dataclass(frozen=True)
class RodRead:
    armatures: tuple[RodArmatureRead, ...]
    chains: tuple[RodChainRead, ...]
    colliders: tuple  # addon.reading.ColliderRead
    collider_mask: np.ndarray  # (K, S)
    unit_scale: float
    frame_start: int
    frame_end: int
    fps: float


def claims(ob) -> bool:
    return ob.type == 'ARMATURE' and ob.waft_rod.enabled and len(ob.waft_rod.chains) > 0


def _where(ob) -> str:
    return f"Armature '{ob.name}'"


def _chain(ob, root: str) -> list:
    pose_bone = ob.pose.bones.get(root)
    if pose_bone is None:
        raise SetupError(f"{_where(ob)}: rod root bone '{root}' does not exist")
    chain = [pose_bone]
    while len(chain[-1].children) == 1:  # a fork ends the rod
        chain.append(chain[-1].children[0])
    return chain


def _read_armature(scene, ob, index: int, unit: float, seen: set) -> tuple:
    shared_reading.check_world_scale(ob, "Armature")
    settings = ob.waft_rod
    shared_reading.check_finite_settings(settings, FLOAT_SETTINGS, _where(ob))
    for name in VECTOR_SETTINGS:
        if not np.all(np.isfinite(tuple(getattr(settings, name)))):
            raise SetupError(f"{_where(ob)}: rod setting '{name}' is not finite")
    shared_reading.check_animation_target(ob)
    bones = list(ob.pose.bones)
    position = {pb.name: i for i, pb in enumerate(bones)}
    space_bone = -1
    if settings.space_bone:
        if settings.space_bone not in position:
            raise SetupError(f"{_where(ob)}: rod space bone '{settings.space_bone}' does not "
                             f"exist")
        space_bone = position[settings.space_bone]
    metres = unit * float(np.linalg.norm(np.array(ob.matrix_world)[:3, :3], axis=0).min())
    chains = []
    for item in settings.chains:
        run = _chain(ob, item.root)
        for pb in run:
            if (ob.name, pb.name) in seen:
                raise SetupError(f"{_where(ob)}, bone '{pb.name}': in two rod chains")
            seen.add((ob.name, pb.name))
            if not pb.bone.length * metres > shared_reading.MIN_BONE_LENGTH:
                raise SetupError(f"{_where(ob)}, bone '{pb.name}': bone has zero length")
        parent = run[0].parent
        rest = np.array([np.array(pb.bone.matrix_local) for pb in run])
        parent_rest = np.concatenate([
            np.array(parent.bone.matrix_local)[None] if parent is not None else np.eye(4)[None],
            rest[:-1]])
        chains.append(RodChainRead(
            armature=index, name=f"{ob.name}: {run[0].name}",
            bone_names=tuple(pb.name for pb in run),
            bone_index=np.array([position[pb.name] for pb in run], dtype=np.int64),
            parent_index=position[parent.name] if parent is not None else -1,
            rest_matrix=rest, parent_rest=parent_rest,
            length=np.array([pb.bone.length for pb in run])))
    armature = RodArmatureRead(object=ob, name=ob.name, bone_count=len(bones),
                               space_bone=space_bone, rest_world=np.array(ob.matrix_world))
    return armature, chains


def read_rods(scene, objects, frame_start: int, frame_end: int) -> RodRead | None:
    if objects is None:
        found = [ob for ob in scene.objects if claims(ob)]
    else:
        found = [ob for ob in objects if claims(ob)]
    if not found:
        return None
    found.sort(key=lambda ob: ob.name)
    unit = shared_reading.unit_scale(scene)
    armatures, chains, seen = [], [], set()
    for index, ob in enumerate(found):
        armature, read = _read_armature(scene, ob, index, unit, seen)
        armatures.append(armature)
        chains.extend(read)
    colliders, by_armature = shared_reading.collider_union(
        [shared_reading.enabled_colliders(scene, a.object.waft_rod.collider_collection)
         for a in armatures])
    mask = by_armature[:, [chain.armature for chain in chains]]
    return RodRead(armatures=tuple(armatures), chains=tuple(chains), colliders=colliders,
                   collider_mask=mask, unit_scale=unit, frame_start=frame_start,
                   frame_end=frame_end, fps=shared_reading.scene_fps(scene))


@dataclass
class RodSamples:
    frames: np.ndarray
    pose: list  # per armature (F, bones, 4, 4) armature space, Blender units
    armature_world: list  # per armature (F, 4, 4) Blender units
    collider_matrix: np.ndarray  # (F, K, 4, 4) metres
    settings: list  # per armature {name: (F or 1, ...)}

    def take(self, index: np.ndarray) -> RodSamples:
        """The samples at ``index`` (settings read once keep their single row)."""
        return RodSamples(frames=self.frames[index], pose=[p[index] for p in self.pose],
                          armature_world=[m[index] for m in self.armature_world],
                          collider_matrix=self.collider_matrix[index],
                          settings=settings_at(self.settings, index, len(self.frames)))


def sample_rods(scene, read: RodRead, *, times: np.ndarray | None = None,
                chunk: int = 1 << 30, system: str = "rod"):
    """Generator yielding ``Progress``; returns ``RodSamples`` (frame and mutes restored) at
    every frame, or at the scene frames ``times`` (possibly fractional: sub-frame samples)."""
    frames = np.arange(read.frame_start, read.frame_end + 1) if times is None else times
    n = len(frames)
    pose = [np.empty((n, a.bone_count * 16), np.float32) for a in read.armatures]
    world = np.empty((n, len(read.armatures), 4, 4))
    collider = np.empty((n, len(read.colliders), 4, 4))
    names = FLOAT_SETTINGS + VECTOR_SETTINGS
    animated = [{p.split(".", 1)[1] for p in animated_paths(a.object)
                 if p.startswith("waft_rod.")} for a in read.armatures]
    settings = [{name: [] for name in names} for _ in read.armatures]
    with frame_kept(scene), result_tracks_muted(a.object for a in read.armatures):
        for i, f in enumerate(frames):
            whole = int(np.floor(f))
            scene.frame_set(whole, subframe=float(f) - whole)
            for a, armature in enumerate(read.armatures):
                ob = armature.object
                ob.pose.bones.foreach_get("matrix", pose[a][i])
                world[i, a] = np.array(ob.matrix_world)
                for name, values in settings[a].items():
                    if i == 0 or name in animated[a]:
                        value = getattr(ob.waft_rod, name)
                        values.append(tuple(value) if name in VECTOR_SETTINGS else value)
            for k, c in enumerate(read.colliders):
                collider[i, k] = np.array(c.object.matrix_world)
            if (i + 1) % chunk == 0 or i + 1 == n:
                yield Progress("sample", i + 1, n, system=system)
    scale = np.diag([read.unit_scale] * 3 + [1.0])
    samples = RodSamples(
        frames=frames,
        pose=[buf.reshape(n, -1, 4, 4).transpose(0, 1, 3, 2).astype(np.float64) for buf in pose],
        armature_world=[world[:, a] for a in range(len(read.armatures))],
        collider_matrix=scale @ collider,
        settings=[{k: np.asarray(v, dtype=np.float64) for k, v in d.items()} for d in settings])
    for a, armature in enumerate(read.armatures):
        for name, values in samples.settings[a].items():
            if not np.isfinite(values).all():
                raise SetupError(f"{_where(armature.object)}: rod setting '{name}' is not "
                                 f"finite on some frame")
        if not np.isfinite(samples.pose[a]).all():
            raise SetupError(f"{_where(armature.object)}: evaluated pose is not finite")
    return samples


def _unit_rotation(m: np.ndarray) -> np.ndarray:
    return m[..., :3, :3] / np.maximum(np.linalg.norm(m[..., :3, :3], axis=-2,
                                                      keepdims=True), 1e-12)


def _particles(world: np.ndarray, length: np.ndarray) -> np.ndarray:
    """(…, B, 4, 4) bone world matrices → (…, B + 1, 3) heads and the last tail."""
    heads = world[..., :3, 3]
    tail = heads[..., -1, :] + world[..., -1, :3, 1] * length[-1]
    return np.concatenate([heads, tail[..., None, :]], axis=-2)


def chain_world(read: RodRead, samples: RodSamples, chain: RodChainRead) -> np.ndarray:
    """(F, B, 4, 4) sampled world matrices of a chain's bones, Blender units."""
    a = chain.armature
    return samples.armature_world[a][:, None] @ samples.pose[a][:, chain.bone_index]


def rod_rests(read: RodRead) -> list[RodRest]:
    out = []
    for chain in read.chains:
        world = read.armatures[chain.armature].rest_world @ chain.rest_matrix
        out.append(RodRest(setup=chain.name, names=chain.bone_names,
                           rest_positions=_particles(world, chain.length) * read.unit_scale,
                           rest_orientation=quat_from_matrix(_unit_rotation(world))))
    return out


def rod_drive(read: RodRead, samples: RodSamples, *, rate: float | None = None) -> RodDrive:
    """The core's drive; ``rate``: the samples' rate per second when they are on the sub-frame
    grid (``addon.sampling.sample_times``), None when they are the scene frames. Its output is
    the scene's frames either way."""
    F, S = len(samples.frames), len(read.chains)
    B = max(len(c.bone_names) for c in read.chains)
    reference = np.empty((F, S, B + 1, 3))
    orientation = np.empty((F, S, B, 4))
    space = np.empty((F, S, 4, 4))
    for s, chain in enumerate(read.chains):
        n = len(chain.bone_names)
        world = chain_world(read, samples, chain)
        reference[:, s, :n + 1] = _particles(world, chain.length) * read.unit_scale
        reference[:, s, n + 1:] = reference[:, s, n:n + 1]
        orientation[:, s, :n] = make_sign_continuous(quat_from_matrix(_unit_rotation(world)))
        orientation[:, s, n:] = orientation[:, s, n - 1:n]
        armature = read.armatures[chain.armature]
        m = samples.armature_world[chain.armature].copy()
        if armature.space_bone >= 0:
            m = m @ samples.pose[chain.armature][:, armature.space_bone]
        m[:, :3, :3] = _unit_rotation(m)
        m[:, :3, 3] *= read.unit_scale
        space[:, s] = m
    values = {}
    for name in FLOAT_SETTINGS + VECTOR_SETTINGS:
        stacked = stack_setups([samples.settings[c.armature][name] for c in read.chains])
        values[name] = stacked * read.unit_scale if name in LENGTH_SETTINGS else stacked
    return RodDrive(fps=read.fps if rate is None else rate, reference=reference,
                    reference_orientation=orientation, space=space,
                    collider_matrix=samples.collider_matrix, params=RodParams(**values),
                    output_fps=read.fps, output_frames=read.frame_end - read.frame_start + 1)


def chain_keys(read: RodRead, samples: RodSamples, chain: RodChainRead, positions: np.ndarray,
               orientation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(location (F, B, 3), quaternions (F, B, 4)) of a chain from the rod's particles
    (F, B + 1, 3) metres and orientations (F, B, 4): each bone at its head particle, turned by
    its orientation, keeping its sampled scale; parents are the chain's new bones.

    The rod's orientations follow its segments only up to the (soft) shear, while a connected
    bone's head is glued to its parent's tail; so each orientation is swung by the small shear
    angle that puts its rest segment direction exactly on the simulated segment (the twist comes
    from the rod): connected chains then sit on the particles."""
    n = len(chain.bone_names)
    sampled = chain_world(read, samples, chain)
    scale = np.linalg.norm(sampled[..., :3, :3], axis=-2)  # (F, B, 3)
    rest_world = read.armatures[chain.armature].rest_world @ chain.rest_matrix
    rest_rotation = _unit_rotation(rest_world)
    rest_segment = np.diff(_particles(rest_world, chain.length), axis=0)
    along = np.einsum("bji,bj->bi", rest_rotation, rest_segment)  # segment in the bone frame
    along /= np.linalg.norm(along, axis=-1, keepdims=True)
    rotation = matrix_from_quat(orientation[:, :n])  # (F, B, 3, 3)
    segment = np.diff(positions[:, :n + 1], axis=1)
    segment /= np.maximum(np.linalg.norm(segment, axis=-1, keepdims=True), 1e-12)
    current = np.einsum("fbij,bj->fbi", rotation, along)
    rotation = swing_matrix(current, segment) @ rotation
    world = np.zeros_like(sampled)
    world[..., :3, :3] = rotation * scale[..., None, :]
    world[..., :3, 3] = positions[:, :n] / read.unit_scale
    world[..., 3, 3] = 1.0
    a = chain.armature
    parent_world = np.empty_like(world)
    parent_world[:, 0] = samples.armature_world[a]
    if chain.parent_index >= 0:
        parent_world[:, 0] = samples.armature_world[a] @ samples.pose[a][:, chain.parent_index]
    parent_world[:, 1:] = world[:, :-1]
    basis = pose_basis(world=world, rest=chain.rest_matrix, parent_world=parent_world,
                       parent_rest=chain.parent_rest)
    location = basis[..., :3, 3]
    quats = make_sign_continuous(quat_from_matrix(_unit_rotation(basis)), axis=0)
    return location, quats
