"""Property groups: where every Waft setting lives in the .blend.

Names and defaults follow docs/internals.md ("Blender-side names"). Every float is keyframeable
(the default for FloatProperty) because the bake samples settings per frame. Lengths use the
'LENGTH' unit so they display in the scene's units; the reader converts to metres.
"""


import math

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
)

from . import compat, constrained

COLLIDER_SHAPES = (
    ("AUTO", "Auto", "From the empty's display type: Sphere → ellipsoid, Cube → box, "
     "Single Arrow → plane (normal local +Z)"),
    ("SPHERE", "Sphere", "Sphere of radius Display Size; non-uniform scale makes an ellipsoid"),
    ("CAPSULE", "Capsule",
     "Segment ±Display Size along local Z with radii A (at −Z) and B (at +Z)"),
    ("BOX", "Box", "Box with half-extents Display Size along each local axis"),
    ("PLANE", "Plane", "Infinite plane through the origin; local +Z is outside"),
)


def _preview_toggled(settings, context) -> None:
    from .preview import set_enabled

    set_enabled(settings.id_data, settings.use_preview)


def collection_poll(_self, collection) -> bool:
    """PointerProperty poll: only collections."""
    return isinstance(collection, bpy.types.Collection)


def object_type_poll(kind: str):
    """PointerProperty poll accepting objects of type ``kind`` ('ARMATURE', 'MESH', ...)."""
    def poll(_self, ob) -> bool:
        return ob.type == kind
    poll.__name__ = f"{kind.lower()}_poll"
    return poll


OVERRIDABLE = {'LIBRARY_OVERRIDABLE'}


def overridable(cls) -> None:
    """Make every property of the group ``cls`` library-overridable, so Waft set up on a linked,
    overridden character keeps its settings after save and reopen (collections may also gain
    items in the override)."""
    for name, prop in list(cls.__annotations__.items()):
        function, keywords = getattr(prop, "function", None), getattr(prop, "keywords", None)
        if function is None or keywords is None:
            continue
        flags = set(keywords.get("override", ())) | OVERRIDABLE
        if function is bpy.props.CollectionProperty:
            flags.add('USE_INSERTION')
        cls.__annotations__[name] = function(**{**keywords, "override": flags})


def register_groups(classes, pointers) -> None:
    """Register the property-group ``classes`` (every property library-overridable), then
    attach each ``(owner type, attribute, group)`` of ``pointers`` as an overridable
    PointerProperty (e.g. ``Object.waft``)."""
    for cls in classes:
        overridable(cls)
        bpy.utils.register_class(cls)
    for owner, name, group in pointers:
        setattr(owner, name, PointerProperty(type=group, override=OVERRIDABLE))


def unregister_groups(classes, pointers) -> None:
    """Undo ``register_groups`` in reverse order."""
    for owner, name, _group in reversed(pointers):
        delattr(owner, name)
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)


def groups_registration(classes, pointers):
    """(register, unregister) functions for a module's property groups (as Blender's
    ``register_classes_factory`` makes them for classes)."""
    def register() -> None:
        register_groups(classes, pointers)

    def unregister() -> None:
        unregister_groups(classes, pointers)

    return register, unregister


def use_settled_pose_property(what: str, restarts: str, start_pose: str, hanging: str):
    """``use_settled_pose`` of a system's settings (Capture Settled Pose, addon/settled.py)."""
    return BoolProperty(
        name="Settled Pose", default=False,
        description=f"Start {what}, and restart {restarts}, from the pose saved with Capture "
                    f"Settled Pose instead of from {start_pose}, so a shot begins with {hanging} "
                    "already hanging (a saved physics pose track, as in cutscene cloth tools)")


def settled_frame_property():
    """``settled_frame``: the scene frame a settled pose was captured at."""
    return IntProperty(name="Captured at", options={'HIDDEN'},
                       description="Scene frame the settled pose was captured at")



BAKE_TARGETS = (
    ('TRACK', "NLA Track",
     "The result plays from Waft's own NLA track above your animation, which is not changed "
     "(Clear Bake removes it)"),
    ('MERGED', "NLA Track + Merged Copy",
     "Also make '<action> (Waft)': a copy of your action with the physics keys in it and its "
     "frame range set to the bake, one clip per action for game export (glTF, FBX). Your "
     "action is not changed"),
) + ((
    ('SLOT', "Slot in Your Action",
     "The result goes into a new slot of your own action (your keys are not changed), played "
     "by Waft's NLA track: the physics travels with the action when you append it or put it "
     "in an asset library (Clear Bake removes the slot)"),
) if compat.LAYERED_ACTIONS else ())

class WaftSceneSettings(bpy.types.PropertyGroup):
    """Bake settings of the scene (``Scene.waft``)."""

    use_preview: BoolProperty(
        name="Preview", default=False, update=_preview_toggled,
        description="Simulate the bone chains, cloth cages, rods, ragdolls and hair guides while "
                    "the timeline plays, with the bake's own solvers, from the first frame (no "
                    "keys are written, hair guides are drawn; played from the first frame it "
                    "shows exactly what Bake writes). Simulated frames are kept for scrubbing; "
                    "any change to a setting, a collider or the animation starts it over")
    show_collider_shapes: BoolProperty(
        name="Show Collider Shapes", default=True,
        description="Draw every Waft collider in the viewport as the exact surface chains, "
                    "hair, cloth and ragdolls collide with")
    show_simulation_shapes: BoolProperty(
        name="Show Simulation Shapes", default=True,
        description="Draw in the viewport what the selected setups simulate with, at the size "
                    "it acts: each chain bone's collision sphere, ragdoll bodies, joint swing "
                    "limits and (after a bake) the animation target in red, cloth pinned "
                    "vertices and max-distance spheres")

    substep_rate: FloatProperty(
        name="Substep Rate", default=240.0, min=30.0, soft_max=2000.0,
        description="Simulation steps per second (Hz), fixed whatever the frame rate")
    iterations: IntProperty(
        name="Iterations", default=1, min=1, soft_max=10,
        description="Constraint passes per substep (more substeps beat more iterations)")
    preroll: IntProperty(
        name="Pre-roll", default=0, min=0, soft_max=250,
        description="Frames of settling on the first frame's pose before the bake starts")
    use_key_reduction: BoolProperty(
        name="Reduce Keys", default=False,
        description="Write bone chains' rotations with fewer keys: only where interpolating "
                    "between keys would move a bone tail more than Key Error Distance or turn a "
                    "bone more than Key Error Angle (off: a key on every frame)")
    key_error_distance: FloatProperty(
        name="Key Error Distance", default=0.001, min=1e-6, soft_max=0.01, unit='LENGTH',
        precision=4,
        description="Reduce Keys: the most any bone tail may move from the baked motion")
    key_error_angle: FloatProperty(
        name="Key Error Angle", default=math.radians(0.5), min=1e-6, soft_max=math.radians(5.0),
        subtype='ANGLE',
        description="Reduce Keys: the most any bone may turn from the baked motion")
    use_loop: BoolProperty(
        name="Loop", default=False,
        description="Bake bone chains and cloth-bones as a clean loop: the baked range must "
                    "be one cycle of a cyclic animation (Cycles modifiers, NLA repeats). "
                    "Earlier cycles are simulated first so the motion settles into the cycle, "
                    "and the clip's end is blended into the cycle before it so the last frame "
                    "flows into the first")
    bake_target: EnumProperty(
        name="Bake Target", default='TRACK', items=BAKE_TARGETS,
        description="Where a bake's keys go")
    export_vrm_springs: BoolProperty(
        name="VRM Spring Bones", default=True,
        description="glTF export: write the exported armatures' Waft bone chains and their "
                    "colliders as VRM spring bones (VRMC_springBone), for VRM runtimes and "
                    "engines that read them; other programs ignore the data")
    loop_cycles: IntProperty(
        name="Loop Cycles", default=3, min=1, soft_max=10,
        description="Whole cycles simulated before the baked one when Loop is on (more settle "
                    "slow, lightly damped motion better)")
    sample_rate: FloatProperty(
        name="Sample Rate", default=120.0, min=0.0, soft_max=1000.0,
        description="How often per second bone chains, hair, cloth, rods and ragdolls "
                    "read the animation, at times in seconds shared by every frame rate, so fast "
                    "motion bakes alike at 24, "
                    "25, 30, 50 or 60 fps (Hz). Higher follows fast keys more closely and costs "
                    "more scene evaluations. 0 = once per frame: fastest, but fast motion then "
                    "depends on the frame rate")
    constrained_bones: EnumProperty(
        name="Constrained Bones", items=constrained.POLICY_ITEMS, default=constrained.WARN,
        description="Baked bones that a constraint (Copy Rotation, Damped Track, IK, Child "
                    "Of…) or a driver would override play back away from the simulation: warn "
                    "about them, or turn those constraints off in Waft's result (muting or "
                    "clearing the result gives them back)")


def _capsule_radius(end: str, axis: str):
    return FloatProperty(
        name=f"Radius {end}", default=0.5, min=0.0, soft_max=10.0,
        description=f"Capsule radius at local {axis}, in the empty's local units")


class WaftColliderSettings(bpy.types.PropertyGroup):
    """A collider empty (``Object.waft_collider``)."""

    enabled: BoolProperty(
        name="Waft Collider", default=False,
        description="Simulated chains, hair and cloth collide with this object: an empty "
                    "with a shape, or a mesh (its deformed surface, e.g. the character's body)")
    shape: EnumProperty(name="Shape", items=COLLIDER_SHAPES, default="AUTO")
    radius_a: _capsule_radius("A", "−Z")
    radius_b: _capsule_radius("B", "+Z")
    friction: FloatProperty(
        name="Friction", default=0.3, min=0.0, soft_max=1.0,
        description="Coulomb friction coefficient of contacts with this collider")
    depth: FloatProperty(
        name="Depth", default=0.02, min=1e-4, soft_max=0.2, unit='LENGTH',
        description="Mesh colliders: how far inside the surface a particle is still found and "
                    "pushed out. Deeper costs more; thin parts (fingers, ears) thinner than this "
                    "can let a fast particle through to the other side")


register, unregister = groups_registration(
    (WaftSceneSettings, WaftColliderSettings),
    ((bpy.types.Scene, "waft", WaftSceneSettings),
     (bpy.types.Object, "waft_collider", WaftColliderSettings)))
