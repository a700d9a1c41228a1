"""Read once: turn the scene's Waft setups and colliders into plain data, validating everything.

Nothing here depends on the current frame except the rest pose's world placement, and nothing
is written to the scene. Every problem raises ``SetupError`` naming the object (and bone), so a
bake fails before it samples, solves or writes anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.colliders import ColliderKind
from ..core.errors import SetupError

# A bone shorter than this in the world (metres) has no direction to swing. Blender clamps a
# zero-length edit bone to 2e-6 units instead of deleting it, so the test must be a threshold.
MIN_BONE_LENGTH = 1e-5
# World scale columns shorter than this count as zero scale.
MIN_SCALE = 1e-9

# Settings of Object.waft that are plain floats; each must be finite.
SETUP_FLOAT_SETTINGS = (
    "shape_stiffness", "shape_decay", "damping", "stretch_compliance", "bend_compliance",
    "max_distance", "radius", "gravity_factor", "world_motion_fraction", "wind_speed",
    "wind_turbulence", "wind_gust", "drag", "wind_direction_variation", "wind_tangent_response",
    "wind_strand_variation", "ftl_damping", "local_stiffness", "shape_range", "shock_propagation",
    "voxel_friction",
)
BONE_FLOAT_SETTINGS = ("shape_stiffness", "damping", "radius")
COLLIDER_FLOAT_SETTINGS = ("radius_a", "radius_b", "friction")

# AUTO collider shape from the empty's display type (reference/blender-api.md §6).
AUTO_SHAPES = {
    "SPHERE": ColliderKind.ELLIPSOID,
    "CUBE": ColliderKind.BOX,
    "SINGLE_ARROW": ColliderKind.PLANE,
}
EXPLICIT_SHAPES = {
    "SPHERE": ColliderKind.ELLIPSOID,
    "CAPSULE": ColliderKind.CAPSULE,
    "BOX": ColliderKind.BOX,
    "PLANE": ColliderKind.PLANE,
}


@dataclass(frozen=True)
class ChainRead:
    """One simulated chain: bones from root to tip, as indices into ``ob.pose.bones``."""

    setup_index: int
    bone_names: tuple[str, ...]
    bone_indices: tuple[int, ...]
    parent_index: int  # index of the first bone's parent in ob.pose.bones, -1 if none
    pinned: tuple[bool, ...]
    bone_length: np.ndarray  # (B,) rest length in armature units
    rest_matrix: np.ndarray  # (B, 4, 4) Bone.matrix_local
    parent_rest_matrix: np.ndarray  # (4, 4)


@dataclass(frozen=True)
class SetupRead:
    object: object  # bpy.types.Object (armature)
    name: str
    bone_count: int  # len(ob.pose.bones), the foreach_get buffer size
    chains: tuple[ChainRead, ...]


@dataclass(frozen=True)
class ColliderRead:
    object: object  # bpy.types.Object (empty)
    name: str
    kind: int
    size: float
    radius_a: float
    radius_b: float
    friction: float


@dataclass(frozen=True)
class SceneRead:
    setups: tuple[SetupRead, ...]
    chains: tuple[ChainRead, ...]  # all chains of all setups, in setup order
    colliders: tuple[ColliderRead, ...]
    collider_mask: np.ndarray  # (K, S) bool
    unit_scale: float  # metres per Blender unit
    frame_start: int
    frame_end: int
    fps: float


def unit_scale(scene) -> float:
    """Metres per Blender unit (``scene.unit_settings.scale_length``)."""
    scale = float(scene.unit_settings.scale_length)
    if not math.isfinite(scale) or scale <= 0.0:
        raise SetupError(f"Scene '{scene.name}': unit scale {scale} must be a positive number")
    return scale


def scene_fps(scene) -> float:
    fps = scene.render.fps / scene.render.fps_base
    if not math.isfinite(fps) or fps <= 0.0:
        raise SetupError(f"Scene '{scene.name}': frame rate {fps} must be positive")
    return fps


def check_world_scale(ob, what: str) -> None:
    """Zero, negative (mirrored) or non-finite world scale cannot be simulated."""
    m = np.array(ob.matrix_world, dtype=np.float64)
    if not np.all(np.isfinite(m)):
        raise SetupError(f"{what} '{ob.name}': world matrix is not finite")
    columns = np.linalg.norm(m[:3, :3], axis=0)
    if np.any(columns < MIN_SCALE):
        raise SetupError(f"{what} '{ob.name}': world scale is zero ({_fmt(columns)})")
    if np.linalg.det(m[:3, :3]) <= 0.0:
        raise SetupError(
            f"{what} '{ob.name}': world scale is negative (mirrored); apply the scale or "
            f"use positive scale")


def _fmt(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


def check_finite_settings(settings, names, where: str) -> None:
    for name in names:
        value = getattr(settings, name)
        if not math.isfinite(value):
            raise SetupError(f"{where}: setting '{name}' is {value}; it must be a finite number")
    direction = getattr(settings, "wind_direction", None)
    if direction is not None and not all(math.isfinite(v) for v in direction):
        raise SetupError(f"{where}: setting 'wind_direction' is not finite")


def find_setups(scene, objects=None) -> list:
    """The armatures to bake: ``objects`` if given (each must be a setup), else every setup."""
    if objects is None:
        found = [ob for ob in scene.objects if ob.type == 'ARMATURE' and ob.waft.enabled]
        if not found:
            raise SetupError(
                f"Scene '{scene.name}' has no Waft setup: select bones in Pose Mode and use "
                f"Assign Bones, or enable Waft on an armature")
        return sorted(found, key=lambda ob: ob.name)
    setups = []
    for ob in objects:
        if isinstance(ob, str):
            name = ob
            ob = scene.objects.get(name)
            if ob is None:
                raise SetupError(f"Object '{name}' is not in scene '{scene.name}'")
        if ob.type != 'ARMATURE':
            raise SetupError(f"Object '{ob.name}' is not an armature; only armatures can be "
                             f"Waft setups")
        if not ob.waft.enabled:
            raise SetupError(f"Object '{ob.name}' is not a Waft setup (enable Waft on it)")
        setups.append(ob)
    if not setups:
        raise SetupError("No objects given to bake")
    return setups


def _flagged_children(pose_bone) -> list:
    return [child for child in pose_bone.children if child.waft.simulate]


def chain_bone_runs(ob) -> list[list]:
    """Runs of simulated pose bones, root first; a run starts at a flagged bone whose parent is
    not flagged. A flagged bone with several flagged children is ambiguous and rejected."""
    runs = []
    for pose_bone in ob.pose.bones:
        if not pose_bone.waft.simulate:
            continue
        if pose_bone.parent is not None and pose_bone.parent.waft.simulate:
            continue
        run = [pose_bone]
        while True:
            children = _flagged_children(run[-1])
            if len(children) > 1:
                names = " and ".join(f"'{c.name}'" for c in children)
                raise SetupError(
                    f"Armature '{ob.name}', bone '{run[-1].name}': chain branches into {names}; "
                    f"flag one branch only (unflag the others or make them separate chains)")
            if not children:
                break
            run.append(children[0])
        runs.append(run)
    return runs


MIN_GUIDE_BONES = 2


def is_hair_guide_setup(ob) -> bool:
    """An armature whose chains are hair guides (it grows render strands, ``waft_hair``)."""
    hair = getattr(ob, "waft_hair", None)
    return bool(hair is not None and getattr(hair, "render_strands", False))


def check_hair_guides(ob, runs) -> None:
    """A hair guide needs at least two bones: one bone cannot bend, curl or carry local shape,
    and render strands interpolated from it would be straight sticks. Single-bone chains stay
    valid for other setups (a tail, an antenna: the foundation's single-bone use case)."""
    if not is_hair_guide_setup(ob):
        return
    for run in runs:
        if len(run) < MIN_GUIDE_BONES:
            raise SetupError(
                f"Armature '{ob.name}', bone '{run[0].name}': a hair guide needs at least "
                f"{MIN_GUIDE_BONES} bones (this chain has {len(run)}); one bone cannot bend or "
                f"keep a curl. Flag its child bones too, or turn off Render Strands")


def read_chain(ob, setup_index: int, run, bone_index: dict, metres_per_unit: float) -> ChainRead:
    for pose_bone in run:
        if not pose_bone.bone.length * metres_per_unit > MIN_BONE_LENGTH:
            raise SetupError(f"Armature '{ob.name}', bone '{pose_bone.name}': bone has zero "
                             f"length; give it a length in Edit Mode")
        if pose_bone.waft.use_overrides:
            check_finite_settings(pose_bone.waft, BONE_FLOAT_SETTINGS,
                                  f"Armature '{ob.name}', bone '{pose_bone.name}'")
    parent = run[0].parent
    identity = np.eye(4)
    return ChainRead(
        setup_index=setup_index,
        bone_names=tuple(pb.name for pb in run),
        bone_indices=tuple(bone_index[pb.name] for pb in run),
        parent_index=bone_index[parent.name] if parent is not None else -1,
        pinned=tuple(bool(pb.waft.pinned) for pb in run),
        bone_length=np.array([pb.bone.length for pb in run], dtype=np.float64),
        rest_matrix=np.array([np.array(pb.bone.matrix_local) for pb in run], dtype=np.float64),
        parent_rest_matrix=(np.array(parent.bone.matrix_local, dtype=np.float64)
                            if parent is not None else identity),
    )


def read_setup(ob, setup_index: int, unit: float) -> SetupRead:
    check_world_scale(ob, "Armature")
    check_finite_settings(ob.waft, SETUP_FLOAT_SETTINGS, f"Armature '{ob.name}'")
    if ob.animation_data is not None and ob.animation_data.use_tweak_mode:
        raise SetupError(f"Armature '{ob.name}': leave NLA tweak mode before baking")
    runs = chain_bone_runs(ob)
    if not runs:
        raise SetupError(f"Armature '{ob.name}': no bones are flagged for simulation; select "
                         f"bones in Pose Mode and use Assign Bones")
    check_hair_guides(ob, runs)
    bone_index = {pb.name: i for i, pb in enumerate(ob.pose.bones)}
    # Shortest world length of one armature unit (smallest scale column), in metres.
    metres = unit * float(np.linalg.norm(np.array(ob.matrix_world)[:3, :3], axis=0).min())
    chains = tuple(read_chain(ob, setup_index, run, bone_index, metres) for run in runs)
    return SetupRead(object=ob, name=ob.name, bone_count=len(ob.pose.bones), chains=chains)


def collider_kind(ob) -> int:
    shape = ob.waft_collider.shape
    if shape != "AUTO":
        return EXPLICIT_SHAPES[shape]
    display = ob.empty_display_type
    if display in AUTO_SHAPES:
        return AUTO_SHAPES[display]
    raise SetupError(
        f"Collider '{ob.name}': display type '{display}' has no collider shape; use a Sphere, "
        f"Cube or Single Arrow empty, or pick the shape (Sphere, Capsule, Box, Plane)")


def read_collider(ob) -> ColliderRead:
    if ob.type != 'EMPTY':
        raise SetupError(f"Collider '{ob.name}': only empties can be Waft colliders "
                         f"(this is a {ob.type.lower()})")
    check_world_scale(ob, "Collider")
    settings = ob.waft_collider
    check_finite_settings(settings, COLLIDER_FLOAT_SETTINGS, f"Collider '{ob.name}'")
    size = float(ob.empty_display_size)
    if not size > 0.0:
        raise SetupError(f"Collider '{ob.name}': display size must be positive")
    return ColliderRead(object=ob, name=ob.name, kind=int(collider_kind(ob)), size=size,
                        radius_a=float(settings.radius_a), radius_b=float(settings.radius_b),
                        friction=float(settings.friction))


def enabled_colliders(scene, collection) -> list:
    """The Waft collider empties of ``collection``; every one in ``scene`` when it is None."""
    if collection is None:
        return [ob for ob in scene.objects if ob.waft_collider.enabled]
    return [ob for ob in collection.all_objects if ob.waft_collider.enabled]


def collider_union(per_owner: list[list]) -> tuple[tuple[ColliderRead, ...], np.ndarray]:
    """Read every collider empty any owner (setup, cage, rod armature) collides with, once and
    sorted by name, and the (K, owners) bool mask of which owner collides with which."""
    found = sorted({ob.name: ob for obs in per_owner for ob in obs}.values(),
                   key=lambda ob: ob.name)
    colliders = tuple(read_collider(ob) for ob in found)
    mask = np.array([[any(c.object is ob for ob in obs) for obs in per_owner]
                     for c in colliders], dtype=bool).reshape(len(colliders), len(per_owner))
    return colliders, mask


def setup_collider_objects(scene, setup_ob) -> list:
    """The collider empties one setup collides with."""
    collection = setup_ob.waft.collider_collection
    if collection is None:
        return enabled_colliders(scene, None)
    members = enabled_colliders(scene, collection)
    if not members:
        raise SetupError(
            f"Armature '{setup_ob.name}': collider collection '{collection.name}' holds no "
            f"Waft collider (was it deleted?); add one or clear the collection")
    for ob in members:
        if scene.objects.get(ob.name) is not ob:
            raise SetupError(f"Armature '{setup_ob.name}': collider '{ob.name}' is not in "
                             f"scene '{scene.name}'")
    return members


def frame_range(scene, frame_start=None, frame_end=None) -> tuple[int, int]:
    start = scene.frame_start if frame_start is None else int(frame_start)
    end = scene.frame_end if frame_end is None else int(frame_end)
    if end < start:
        raise SetupError(f"Scene '{scene.name}': frame range {start}–{end} is empty "
                         f"(end before start)")
    return start, end


def read_scene(scene, *, objects=None, frame_start=None, frame_end=None) -> SceneRead:
    """Validate and read every setup and collider taking part in a bake."""
    start, end = frame_range(scene, frame_start, frame_end)
    scale = unit_scale(scene)
    fps = scene_fps(scene)
    setups = tuple(read_setup(ob, i, scale) for i, ob in enumerate(find_setups(scene, objects)))
    chains = tuple(chain for setup in setups for chain in setup.chains)
    colliders, by_setup = collider_union(
        [setup_collider_objects(scene, s.object) for s in setups])
    mask = by_setup[:, [chain.setup_index for chain in chains]]
    return SceneRead(setups=setups, chains=chains, colliders=colliders, collider_mask=mask,
                     unit_scale=scale, frame_start=start, frame_end=end, fps=fps)
