"""Read and validate the ragdolls taking part in a bake (nothing is modified).

Every problem a user can make in the file is found here, before anything is sampled, and named
with the armature and bone: zero-length bones, a body whose parent bone is not a body (only the
root may hang from a non-body bone), twist limits with min > max, zero or negative mass or
density, non-finite settings, a carrier that is missing, not a ragdoll, or not baked with it.
Shapes and joint limits are read once (at the current frame); the per-frame settings are
sampled by ``sampling.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core import transcendental
from ...core.errors import SetupError
from .. import reading as shared_reading
from .create import body_parent
from .properties import MODE_VALUES, body_setting

# A bone shorter than this in the world (metres) has no axis for its capsule.
MIN_BONE_LENGTH = shared_reading.MIN_BONE_LENGTH

RAGDOLL_FLOATS = ("fall_threshold", "recovery_delay", "recovery_time", "gravity_factor",
                  "ground_height", "substep_rate",
                  "default_density")
BODY_FLOATS = ("radius", "mass", "density", "motor_strength", "motor_damping", "velocity_drive",
               "blend", "distance_limit", "distance_limit_speed", "joint_damping",
               "linear_damping", "friction", "restitution")
BODY_VECTORS = ("swing_limit", "twist_limit", "swing_center")


@dataclass(frozen=True)
class KeyedBones:
    """The bones a ragdoll's bake keys: every body bone (``body_bones`` order), welded ones too.

    A bone welded to the body it hangs from (``weld``: Rigify's DEF-forearm.L.001 on
    DEF-forearm.L) is no solver body of its own: it is carried by that body, keeping its animated
    pose relative to the carrying bone."""

    names: tuple[str, ...]
    bone_index: np.ndarray  # (W,) index of each bone in ob.pose.bones
    body: np.ndarray  # (W,) the solver body carrying it (``RagdollRead.names`` index)
    welded: np.ndarray  # (W,) bool: carried by another bone's body
    # (W,) index in ``names`` of the bone's parent bone when that is keyed too, -1 otherwise
    parent: np.ndarray
    # (W,) index in ob.pose.bones of its parent bone when that is not keyed (the root's parent
    # bone; a Rigify DEF limb's ORG parent), -1 otherwise
    frame_parent_bone: np.ndarray
    located: np.ndarray  # (W,) bool: keyed with location too (the root and detached bodies)
    rest_local: np.ndarray  # (W, 4, 4) Bone.matrix_local (armature units)
    parent_rest_local: np.ndarray  # (W, 4, 4) the parent bone's matrix_local, identity if none

    @property
    def located_names(self) -> list[str]:
        return [n for n, on in zip(self.names, self.located, strict=True) if on]


@dataclass(frozen=True)
class RagdollRead:
    """One armature's ragdoll; bodies are listed parents first (the root body first). A body
    with bones welded to it (``KeyedBones``) is one capsule over them all."""

    object: object  # bpy.types.Object
    name: str
    bone_count: int  # len(ob.pose.bones): the foreach_get buffer size
    names: tuple[str, ...]  # the solver bodies' bones
    bone_index: np.ndarray  # (N,) index of each body's bone in ob.pose.bones
    parent: np.ndarray  # (N,) joint parent body index, -1 for the root body
    keyed: KeyedBones
    rest_matrix: np.ndarray  # (N, 4, 4) world body frames now, metres, no scale
    length: np.ndarray  # (N,) m
    radius: np.ndarray  # (N,) m
    mass: np.ndarray  # (N,) kg
    swing_limit: np.ndarray  # (N, 2) rad, inf where free (≥ 180°)
    swing_center: np.ndarray  # (N, 2) rad, the swing ellipse's centre (0 where free)
    twist_limit: np.ndarray  # (N, 2) rad
    carrier: tuple[str, str] | None  # (carrier armature name, carrier bone name)
    substep_rate: float  # Hz, 0 = the scene's
    iterations: int  # 0 = the scene's
    ground: float | None  # ground plane height (m) or None
    self_collision: bool
    collide_with_others: bool
    colliders: tuple  # bpy collider empties this ragdoll touches


def _where(ob, bone: str | None = None) -> str:
    return f"Armature '{ob.name}'" + (f", bone '{bone}'" if bone is not None else "")


def _finite(value, what: str) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise SetupError(f"{what} is {value}; it must be a finite number")
    return value


def _check_settings(ob) -> None:
    settings = ob.waft_ragdoll
    for name in RAGDOLL_FLOATS:
        _finite(getattr(settings, name), f"{_where(ob)}: ragdoll setting '{name}'")


def _check_body_settings(ob, pose_bone) -> None:
    where = _where(ob, pose_bone.name)
    for name in BODY_FLOATS:
        _finite(body_setting(pose_bone, name), f"{where}: setting '{name}'")
    for name in BODY_VECTORS:
        for value in body_setting(pose_bone, name):
            _finite(value, f"{where}: setting '{name}'")
    mode = body_setting(pose_bone, "mode")
    if mode not in MODE_VALUES:
        raise SetupError(f"{where}: unknown mode {mode!r}")


def joint_parent(pb, names) -> str | None:
    """The body the body ``pb`` hangs from (``create.body_parent``: its parent bone, or for
    Rigify the DEF body of its nearest ORG ancestor); None for the root."""
    bone, parents = pb.parent, {pb.name: pb.parent.name if pb.parent else None}
    while bone is not None:
        parents[bone.name] = bone.parent.name if bone.parent else None
        bone = bone.parent
    return body_parent(pb.name, parents, names)


def body_bones(ob) -> list:
    """The pose bones that are bodies, parents first: by depth in the tree of joint parents,
    then in armature order."""
    chosen = [pb for pb in ob.pose.bones if pb.waft_ragdoll.body]
    names = {pb.name for pb in chosen}
    parent = {pb.name: joint_parent(pb, names) for pb in chosen}

    def depth(name: str) -> int:
        d = 0
        while parent[name] is not None and d <= len(parent):
            name, d = parent[name], d + 1
        return d

    order = {pb.name: i for i, pb in enumerate(ob.pose.bones)}
    return sorted(chosen, key=lambda pb: (depth(pb.name), order[pb.name]))


def _check_tree(ob, bones) -> None:
    """Exactly one body (the root) may have no joint parent body."""
    names = {pb.name for pb in bones}
    root = bones[0]
    for pb in bones[1:]:
        if joint_parent(pb, names) is not None:
            continue
        parent = pb.parent
        if parent is None:
            raise SetupError(
                f"{_where(ob, pb.name)}: it has no parent bone, but '{root.name}' is already "
                f"the ragdoll's root; a ragdoll is one tree of bodies (remove one of them)")
        raise SetupError(
            f"{_where(ob, pb.name)}: its parent bone '{parent.name}' is not a ragdoll body; "
            f"every body except the root ('{root.name}') must hang from another body (make "
            f"'{parent.name}' a body too, or remove '{pb.name}')")


def _mass(ob, pb, settings, length: float, radius: float) -> float:
    body = pb.waft_ragdoll
    where = _where(ob, pb.name)
    if body.use_mass:
        if not body.mass > 0.0:
            raise SetupError(f"{where}: mass {body.mass:g} kg must be positive")
        return float(body.mass)
    if body.density < 0.0:
        raise SetupError(f"{where}: density {body.density:g} kg/m³ must be positive")
    density = float(body.density) if body.density > 0.0 else float(settings.default_density)
    if not density > 0.0:
        raise SetupError(f"{where}: density {density:g} kg/m³ (the ragdoll's default density) "
                         f"must be positive")
    volume = math.pi * radius * radius * length + 4.0 / 3.0 * math.pi * radius ** 3
    return density * volume


def _limits(ob, pb) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    body = pb.waft_ragdoll
    swing = np.array(body.swing_limit, dtype=np.float64)
    twist = np.array(body.twist_limit, dtype=np.float64)
    if np.any(swing < 0.0):
        raise SetupError(f"{_where(ob, pb.name)}: swing limit "
                         f"({', '.join(f'{math.degrees(v):g}°' for v in swing)}) must not be "
                         f"negative")
    if twist[0] > twist[1]:
        raise SetupError(f"{_where(ob, pb.name)}: twist limit min "
                         f"{math.degrees(twist[0]):g}° is greater than max "
                         f"{math.degrees(twist[1]):g}°")
    # A cone of 180° or more leaves the swing free.
    swing = np.where(swing >= math.pi - 1e-6, np.inf, swing)
    center = np.where(np.isfinite(swing), np.array(body.swing_center, dtype=np.float64), 0.0)
    return swing, twist, center


def without_scale(matrix: np.ndarray) -> np.ndarray:
    """Orthonormal frames (…, 4, 4): Gram–Schmidt with the bone axis Y kept, then Z, X = Y×Z."""
    out = np.array(matrix, dtype=np.float64, copy=True)
    y = out[..., :3, 1]
    y = y / np.linalg.norm(y, axis=-1, keepdims=True)
    z = out[..., :3, 2]
    z = z - np.sum(z * y, axis=-1, keepdims=True) * y
    z = z / np.linalg.norm(z, axis=-1, keepdims=True)
    out[..., :3, 0] = np.cross(y, z)
    out[..., :3, 1] = y
    out[..., :3, 2] = z
    out[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    return out


def _carrier(ob) -> tuple[str, str] | None:
    settings = ob.waft_ragdoll
    if settings.carrier is None:
        if settings.carrier_bone:
            raise SetupError(f"{_where(ob)}: carrier bone '{settings.carrier_bone}' is set but "
                             f"the carrier armature is missing (was it deleted?); pick the "
                             f"carrier or clear the bone")
        return None
    carrier = settings.carrier
    if carrier is ob:
        raise SetupError(f"{_where(ob)}: a ragdoll cannot be its own carrier")
    if not settings.carrier_bone:
        raise SetupError(f"{_where(ob)}: carrier '{carrier.name}' is set but no carrier bone")
    return carrier.name, settings.carrier_bone


def _welded(bones, joint: list[str | None]) -> np.ndarray:
    """(W,) bool: the bones welded to the body they hang from (a root has none to weld to)."""
    return np.array([bool(pb.waft_ragdoll.weld) and j is not None
                     for pb, j in zip(bones, joint, strict=True)], dtype=bool)


def _carrying_body(welded: np.ndarray, joint: list[str | None], position: dict) -> np.ndarray:
    """(W,) the bone (index in the body bones) whose body carries each bone: itself, or up the
    chain of welds. ``body_bones`` lists parents first, so one pass suffices."""
    carrier = np.arange(len(welded))
    for i in range(len(welded)):
        if welded[i]:
            carrier[i] = carrier[position[joint[i]]]
    return carrier


def _segment_length(rest_world: np.ndarray, length: np.ndarray, carrier: np.ndarray
                    ) -> np.ndarray:
    """(W,) length of the capsule of each carrying bone's body: along its own axis to the
    farthest tail of the bones it carries (a Rigify limb's segments lie on one line, so the
    sum of their lengths). ``rest_world``: (W, 4, 4) scale-free frames, metres."""
    tails = rest_world[:, :3, 3] + rest_world[:, :3, 1] * length[:, None]
    head, axis = rest_world[carrier, :3, 3], rest_world[carrier, :3, 1]
    reach = np.einsum("wk,wk->w", tails - head, axis)
    out = length.copy()
    np.maximum.at(out, carrier, reach)
    return out


def read_ragdoll(scene, ob, unit: float) -> RagdollRead:
    shared_reading.check_world_scale(ob, "Armature")
    _check_settings(ob)
    shared_reading.check_animation_target(ob)
    settings = ob.waft_ragdoll
    bones = body_bones(ob)
    if not bones:
        raise SetupError(f"{_where(ob)}: no bones are ragdoll bodies; select bones in Pose Mode "
                         f"and use Create Ragdoll")
    _check_tree(ob, bones)
    object_matrix = np.array(ob.matrix_world, dtype=np.float64)
    scale = np.diag([unit, unit, unit, 1.0])
    index = {pb.name: i for i, pb in enumerate(ob.pose.bones)}
    position = {pb.name: i for i, pb in enumerate(bones)}
    n = len(bones)
    rest_local = np.empty((n, 4, 4))
    parent_rest = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    keyed_parent = np.full(n, -1, dtype=np.int64)
    frame_parent = np.full(n, -1, dtype=np.int64)
    length, radius, mass = np.empty(n), np.empty(n), np.empty(n)
    swing, twist, center = np.empty((n, 2)), np.empty((n, 2)), np.empty((n, 2))
    joint = [joint_parent(pb, position) for pb in bones]
    for i, pb in enumerate(bones):
        _check_body_settings(ob, pb)
        bone = pb.bone
        rest_local[i] = np.array(bone.matrix_local, dtype=np.float64)
        if pb.parent is not None:
            parent_rest[i] = np.array(pb.parent.bone.matrix_local, dtype=np.float64)
            if pb.parent.name in position:
                keyed_parent[i] = position[pb.parent.name]
            else:
                frame_parent[i] = index[pb.parent.name]
        world = scale @ object_matrix @ rest_local[i]
        axis_scale = float(np.linalg.norm(world[:3, 1]))
        length[i] = bone.length * axis_scale
        if not length[i] > MIN_BONE_LENGTH:
            raise SetupError(f"{_where(ob, pb.name)}: bone has zero length; give it a length "
                             f"in Edit Mode or remove it from the ragdoll")
        mean_scale = float(transcendental.cbrt(abs(np.linalg.det(world[:3, :3]))))
        body_radius = pb.waft_ragdoll.radius * unit
        if body_radius <= 0.0:
            body_radius = 0.5 * (bone.head_radius + bone.tail_radius) * mean_scale
        if not body_radius > 0.0:
            raise SetupError(f"{_where(ob, pb.name)}: radius must be positive (set Radius or "
                             f"the bone's envelope radius)")
        radius[i] = body_radius
        mass[i] = _mass(ob, pb, settings, length[i], radius[i])
        swing[i], twist[i], center[i] = _limits(ob, pb)
    rest_world = without_scale(scale @ object_matrix @ rest_local)
    # Welded bones join the body carrying them: one capsule over all, their masses summed,
    # the carrying bone's limits and settings.
    welded = _welded(bones, joint)
    carrier = _carrying_body(welded, joint, position)
    own = np.flatnonzero(~welded)  # the solver bodies, parents first
    body_of = np.cumsum(~welded) - 1  # bone → its solver body, for the bodies themselves
    total_mass = np.zeros(n)
    np.add.at(total_mass, carrier, mass)
    widest = radius.copy()
    np.maximum.at(widest, carrier, radius)
    body_length = _segment_length(rest_world, length, carrier)
    parent = np.array([body_of[carrier[position[joint[i]]]] if joint[i] is not None else -1
                       for i in own], dtype=np.int64)
    ground = None
    if settings.use_ground:
        ground = float(settings.ground_height) * unit
    bone_index = np.array([index[pb.name] for pb in bones], dtype=np.int64)
    keyed = KeyedBones(
        names=tuple(pb.name for pb in bones), bone_index=bone_index, body=body_of[carrier],
        welded=welded, parent=keyed_parent, frame_parent_bone=frame_parent,
        located=keyed_parent < 0, rest_local=rest_local, parent_rest_local=parent_rest)
    return RagdollRead(
        object=ob, name=ob.name, bone_count=len(ob.pose.bones),
        names=tuple(bones[i].name for i in own), bone_index=bone_index[own],
        parent=parent, keyed=keyed, rest_matrix=rest_world[own],
        length=body_length[own], radius=widest[own], mass=total_mass[own],
        swing_limit=swing[own], twist_limit=twist[own], swing_center=center[own],
        carrier=_carrier(ob), substep_rate=float(settings.substep_rate),
        iterations=int(settings.iterations), ground=ground,
        self_collision=bool(settings.self_collision),
        collide_with_others=bool(settings.collide_with_others),
        colliders=tuple(collider_objects(scene, ob)),
    )


def collider_objects(scene, ob) -> list:
    """The Waft collider empties this ragdoll collides with (its collection, else all). Body
    meshes are not ragdoll colliders (bodies collide with the shapes)."""
    collection = ob.waft_ragdoll.collider_collection
    members = [m for m in shared_reading.enabled_colliders(scene, collection)
               if m.type != 'MESH']
    if collection is None:
        return sorted(members, key=lambda o: o.name)
    if not members:
        raise SetupError(f"{_where(ob)}: collider collection '{collection.name}' holds no Waft "
                         f"collider; add one or clear the collection")
    for member in members:
        if scene.objects.get(member.name) is not member:
            raise SetupError(f"{_where(ob)}: collider '{member.name}' is not in scene "
                             f"'{scene.name}'")
    return sorted(members, key=lambda o: o.name)


def find_ragdolls(scene, objects=None) -> list:
    """The armatures to bake: ``objects`` (each must be an enabled ragdoll) or all in scene."""
    if objects is None:
        return sorted((ob for ob in scene.objects
                       if ob.type == 'ARMATURE' and ob.waft_ragdoll.enabled),
                      key=lambda ob: ob.name)
    found = []
    for ob in objects:
        if ob.type != 'ARMATURE' or not ob.waft_ragdoll.enabled:
            raise SetupError(f"Object '{ob.name}' is not a Waft ragdoll (enable Waft Ragdoll on "
                             f"an armature)")
        found.append(ob)
    return found


def carrier_indices(reads: list[RagdollRead], scene) -> list[tuple[int, int] | None]:
    """(ragdoll index, body index) of each ragdoll's carrier; SetupError when it is unusable."""
    by_name = {r.name: i for i, r in enumerate(reads)}
    out = []
    for read in reads:
        if read.carrier is None:
            out.append(None)
            continue
        ob_name, bone = read.carrier
        where = f"Armature '{read.name}'"
        carrier = scene.objects.get(ob_name)
        if carrier is None:
            raise SetupError(f"{where}: carrier '{ob_name}' is not in scene '{scene.name}'")
        if carrier.type != 'ARMATURE' or not carrier.waft_ragdoll.enabled:
            raise SetupError(f"{where}: carrier '{ob_name}' is not a Waft ragdoll; enable its "
                             f"ragdoll (its simulated body is what this one hangs on)")
        if ob_name not in by_name:
            raise SetupError(f"{where}: its carrier '{ob_name}' is not baked with it; bake both "
                             f"(Bake All) so the carrier is solved first")
        keyed = reads[by_name[ob_name]].keyed
        if bone not in keyed.names:
            raise SetupError(f"{where}: carrier bone '{bone}' is not a body of ragdoll "
                             f"'{ob_name}'")
        # a welded bone is carried by another bone's body: the root hangs on that body
        out.append((by_name[ob_name], int(keyed.body[keyed.names.index(bone)])))
    return out
