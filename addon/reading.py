"""Read once: turn the scene's Waft setups and colliders into plain data, validating everything.

Nothing here depends on the current frame except the rest pose's world placement, and nothing
is written to the scene. Every problem raises ``SetupError`` naming the object (and bone), so a
bake fails before it samples, solves or writes anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.colliders import ColliderKind, ColliderSet
from ..core.errors import SetupError

# A bone shorter than this in the world (metres) has no direction to swing. Blender clamps a
# zero-length edit bone to 2e-6 units instead of deleting it, so the test must be a threshold.
MIN_BONE_LENGTH = 1e-5
# World scale columns shorter than this count as zero scale.
MIN_SCALE = 1e-9

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
class ColliderRead:
    object: object  # bpy.types.Object (empty)
    name: str
    kind: int
    size: float
    radius_a: float
    radius_b: float
    friction: float


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


def check_animation_target(ob) -> None:
    """The armature ``ob`` takes Waft's result as NLA tracks over its own, with its active
    action moved onto one of them: refuse, before anything is read or written, what would keep
    that result from playing or from being kept."""
    where = f"Armature '{ob.name}'"
    if ob.library is not None:
        raise SetupError(
            f"{where} is linked from '{ob.library.filepath}' and cannot hold a bake (it "
            f"would be lost on save); make a library override of it (Object > Library "
            f"Override > Make) and bake that")
    anim_data = ob.animation_data
    if anim_data is None:
        return
    if anim_data.use_tweak_mode:
        raise SetupError(f"{where}: leave NLA tweak mode before baking")
    if not anim_data.use_nla:
        raise SetupError(
            f"{where}: its NLA tracks are turned off (the checkbox by its name in the NLA "
            f"editor), so Waft's result tracks would not play; turn them on and bake again")
    solo = next((track.name for track in anim_data.nla_tracks if track.is_solo), None)
    if solo is not None:
        raise SetupError(
            f"{where}: NLA track '{solo}' is soloed, so only it plays and Waft's result would "
            f"not; turn its solo off and bake again")


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
    sorted by name, and the (K, owners) bool mask of which owner collides with which. Mesh
    colliders are left to ``mesh_colliders.mesh_collider_union``."""
    found = sorted({ob.name: ob for obs in per_owner for ob in obs
                    if ob.type != 'MESH'}.values(),
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


def scene_range(scene) -> tuple[int, int]:
    """The frames the scene plays: its preview range when that is on (the only range that may
    be negative, with Allow Negative Frames), else its frame range."""
    if scene.use_preview_range:
        return scene.frame_preview_start, scene.frame_preview_end
    return scene.frame_start, scene.frame_end


def frame_range(scene, frame_start=None, frame_end=None) -> tuple[int, int]:
    """The frames to bake: the given ones, else the range the scene plays (``scene_range``)."""
    played = scene_range(scene)
    start = played[0] if frame_start is None else int(frame_start)
    end = played[1] if frame_end is None else int(frame_end)
    if end < start:
        raise SetupError(f"Scene '{scene.name}': frame range {start}–{end} is empty "
                         f"(end before start)")
    return start, end


def collider_set(colliders) -> ColliderSet:
    """The core's collider shapes from a sequence of ``ColliderRead``."""
    c = colliders
    return ColliderSet.create(
        names=[x.name for x in c], kind=[x.kind for x in c], size=[x.size for x in c],
        radius_a=[x.radius_a for x in c], radius_b=[x.radius_b for x in c],
        friction=[x.friction for x in c])


def space_armature(ob):
    """The armature whose bones a setup's Space Bone names: the setup itself when it is an
    armature, else the armature deforming its surface (a hair Curves object's scalp, through
    its Armature modifier), else its parent armature; None when there is none."""
    if ob.type == 'ARMATURE':
        return ob
    surface = getattr(getattr(ob, "data", None), "surface", None)
    for modifier in getattr(surface, "modifiers", ()):
        if modifier.type == 'ARMATURE' and modifier.object is not None:
            return modifier.object
    parent = ob.parent
    return parent if parent is not None and parent.type == 'ARMATURE' else None


def space_bone(ob, where: str) -> tuple[object, str] | None:
    """(armature, bone name) of the setup's Space Bone, None when it has none; SetupError
    naming the setup when the name is not a bone of ``space_armature``."""
    name = ob.waft.space_bone
    if not name:
        return None
    armature = space_armature(ob)
    if armature is None:
        raise SetupError(f"{where}: space bone '{name}' needs an armature (its surface's "
                         f"Armature modifier or a parent armature); there is none")
    if name not in armature.pose.bones:
        raise SetupError(f"{where}: space bone '{name}' is not a bone of armature "
                         f"'{armature.name}'")
    return armature, name


_plain: dict[str, tuple[tuple[str, bool], ...]] = {}  # RNA struct → (identifier, is_array)


def settings_values(group) -> tuple:
    """Every plain (not pointer or collection) property value of a property group (``ob.waft``,
    a bone's, a collider's, a cage's): what identifies its settings (the preview's fingerprint,
    the overlay's cached reads). The names are looked up once per type (walking
    ``bl_rna.properties`` per bone was most of the fingerprint's 12 ms a frame at 512 bones)."""
    return tuple(tuple(getattr(group, name)) if is_array else getattr(group, name)
                 for name, is_array in plain_properties(group))


def plain_properties(group) -> tuple:
    """``((name, is array), …)``: the plain properties ``settings_values`` reads, in its order."""
    key = group.bl_rna.identifier
    names = _plain.get(key)
    if names is None:
        names = _plain[key] = tuple(
            (prop.identifier, bool(getattr(prop, "is_array", False)))
            for prop in group.bl_rna.properties
            if prop.type not in {'POINTER', 'COLLECTION'} and prop.identifier != "rna_type")
    return names
