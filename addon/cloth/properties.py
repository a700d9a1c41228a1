"""Cloth-bone settings (``Object.waft_cloth`` on the cage mesh).

Every ``core.cloth.params.ClothParams`` field is a keyframeable property of the same name (the
bake samples animated ones per frame). Lengths use the 'LENGTH' unit (scene units, converted to
metres when baking); compliances are XPBD compliances in m/N, rates are per second, velocities
and accelerations are m/s and m/s² (SI whatever the scene unit).
"""

import bpy
import numpy as np
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ...core.cloth.params import DEFAULTS
from ...core.cloth.rod import RodParams
from ..properties import (
    groups_registration,
    object_type_poll,
    settled_frame_property,
    use_settled_pose_property,
)
from .presets import FABRIC_ITEMS

PIN_MODES = (
    ("SKINNED", "Skinned",
     "Pinned vertices follow the cage's own Armature modifier (its evaluated, skinned shape)"),
    ("SURFACE", "Surface",
     "Pinned vertices stick to the nearest triangle of the body mesh by barycentric "
     "coordinates (StrayCloth): shoulders, waist and elbows where one bone is not enough"),
)


_armature_poll = object_type_poll('ARMATURE')
_mesh_poll = object_type_poll('MESH')


class WaftClothBone(bpy.types.PropertyGroup):
    """One bone driven by the cage: its head sits on ``vertex`` (editable mapping)."""

    bone: StringProperty(name="Bone", description="Bone of the armature driven by the cage")
    vertex: IntProperty(
        name="Vertex", default=-1, min=-1,
        description="Cage vertex the bone's head follows (-1 = not mapped, an error)")


class WaftClothLayer(bpy.types.PropertyGroup):
    """A layer of the cloth for layered self-collision (StrayCloth), bottom layer first."""

    group: StringProperty(
        name="Vertex Group",
        description="Vertices of this layer; layer L collides one-sidedly with layer L-1")


class WaftClothSettings(bpy.types.PropertyGroup):
    """A low-res cage mesh whose simulated vertices drive an armature's bones (Alan Wake)."""

    enabled: BoolProperty(
        name="Waft Cloth", default=False,
        description="Simulate this cage and drive the mapped bones with it when baking")
    armature: PointerProperty(
        name="Armature", type=bpy.types.Object, poll=_armature_poll,
        description="Armature whose bones the cage drives")
    fabric: EnumProperty(
        name="Fabric", items=FABRIC_ITEMS,
        description="Fabric preset; applied with Apply Fabric")
    pin_group: StringProperty(
        name="Pin Group",
        description="Vertex group of the vertices that follow the character exactly "
                    "(weight > 0.5 = pinned)")
    pin_mode: EnumProperty(name="Pin Mode", items=PIN_MODES, default="SKINNED")
    body: PointerProperty(
        name="Body", type=bpy.types.Object, poll=_mesh_poll,
        description="Body mesh the pinned vertices stick to (Surface pin mode)")
    max_distance: FloatProperty(
        name="Max Distance", default=0.0, min=0.0, soft_max=1.0, unit='LENGTH',
        description="Each vertex stays within this distance of its skinned position, "
                    "times its Max Distance Group weight; 0 = no limit. Read once per bake: "
                    "key Max Distance Scale to animate it")
    max_distance_group: StringProperty(
        name="Max Distance Group",
        description="Vertex group scaling Max Distance per vertex (paint it larger at the hem); "
                    "empty = the same for every vertex")
    layers: CollectionProperty(type=WaftClothLayer)
    bones: CollectionProperty(type=WaftClothBone)
    bones_index: IntProperty(options={'HIDDEN'})
    space_bone: StringProperty(
        name="Space Bone",
        description="Bone whose frame is the character space of the local-space simulation "
                    "(World Motion); empty = the armature object")
    reset_frames: StringProperty(
        name="Reset Frames",
        description="Comma-separated scene frames where the cloth restarts from the skinned "
                    "pose (hard cuts you know about)")
    use_settled_pose: use_settled_pose_property(
        "the cloth", "it after cuts and at Reset Frames", "the skinned cage", "the cloth")
    settled_frame: settled_frame_property()
    settled_vertices: IntProperty(
        options={'HIDDEN'}, description="Cage vertex count when the settled pose was captured")
    collider_collection: PointerProperty(
        name="Colliders", type=bpy.types.Collection,
        description="Only Waft colliders in this collection touch the cloth; "
                    "empty = every Waft collider in the scene")
    use_cage_output: BoolProperty(
        name="Bake Cage Mesh", default=False,
        description="Also write the simulated cage as an animated mesh object "
                    "('<cage> Waft') for viewing")

    # ClothParams fields (same names).
    stretch_compliance: FloatProperty(
        name="Stretch Compliance", default=DEFAULTS['stretch_compliance'],
        min=0.0, soft_max=0.01, precision=5,
        description="XPBD compliance of the structural (stretch) links in m/N; 0 = inextensible")
    shear_compliance: FloatProperty(
        name="Shear Compliance", default=DEFAULTS['shear_compliance'],
        min=0.0, soft_max=0.1, precision=5,
        description="XPBD compliance of the quad diagonals (shear) in m/N")
    bend_compliance: FloatProperty(
        name="Bend Compliance", default=DEFAULTS['bend_compliance'],
        min=0.0, soft_max=1.0, precision=4,
        description="XPBD compliance of the skip-one links (bending) in m/N")
    horizontal_compliance: FloatProperty(
        name="Horizontal Compliance", default=DEFAULTS['horizontal_compliance'],
        min=0.0, soft_max=0.1, precision=5,
        description="XPBD compliance of the links between neighbouring chains (keeps skirts "
                    "from opening gaps) in m/N")
    use_hard_vertical: BoolProperty(
        name="Hard Vertical", default=bool(DEFAULTS['use_hard_vertical']),
        description="Solve the vertical links top-down as hard constraints, so the cloth never "
                    "stretches vertically (Alan Wake)")
    damping: FloatProperty(
        name="Damping", default=DEFAULTS['damping'], min=0.0, soft_max=20.0,
        description="Velocity decays as exp(-damping·t), per second (1/s)")
    gravity: FloatVectorProperty(
        name="Gravity", default=tuple(DEFAULTS['gravity']), size=3,
        description="Gravity acceleration in m/s²")
    world_motion_fraction: FloatProperty(
        name="World Motion", default=DEFAULTS['world_motion_fraction'],
        min=0.0, max=1.0, subtype='FACTOR',
        description="How much of the character's motion through the world the cloth feels "
                    "(1 = all, 0 = carried along rigidly)")
    wind_velocity: FloatVectorProperty(
        name="Wind", default=tuple(DEFAULTS['wind_velocity']), size=3,
        description="Mean wind velocity in m/s")
    wind_turbulence: FloatProperty(
        name="Turbulence", default=DEFAULTS['wind_turbulence'], min=0.0, max=1.0, subtype='FACTOR',
        description="Seeded noise on the wind, relative to the wind speed")
    wind_seed: IntProperty(
        name="Wind Seed", default=int(DEFAULTS['wind_seed']), min=0,
        description="Noise seed; the same seed gives the same wind")
    drag: FloatProperty(
        name="Drag", default=DEFAULTS['drag'], min=0.0, soft_max=10.0,
        description="Air drag toward the wind velocity, per second (1/s)")
    radius: FloatProperty(
        name="Radius", default=DEFAULTS['radius'], min=0.0, soft_max=0.2, unit='LENGTH',
        description="Collision radius of each cage vertex")
    max_distance_scale: FloatProperty(
        name="Max Distance Scale", default=DEFAULTS['max_distance_scale'], min=0.0, soft_max=4.0,
        description="Multiplies every vertex's max distance (key it to loosen the cloth)")
    use_backstop: BoolProperty(
        name="Backstop", default=False,
        description="Keep vertices in front of the skinned surface (along its normal)")
    backstop_distance: FloatProperty(
        name="Backstop Distance", default=0.0, min=0.0, soft_max=0.2, unit='LENGTH',
        description="How far a vertex may go behind the skinned surface along its normal")
    contact_damping: FloatProperty(
        name="Contact Damping", default=DEFAULTS['contact_damping'], min=0.0, soft_max=50.0,
        description="Extra damping (1/s) on vertices touching a collider: contact friction "
                    "(Alan Wake)")
    edge_damping_scale: FloatProperty(
        name="Edge Damping", default=DEFAULTS['edge_damping_scale'], min=0.0, soft_max=4.0,
        description="Damping multiplier on edge vertices (fewer than 4 neighbours, Alan Wake)")
    edge_wind_scale: FloatProperty(
        name="Edge Wind", default=DEFAULTS['edge_wind_scale'], min=0.0, soft_max=4.0,
        description="Air drag multiplier on edge vertices, so the wind pushes them harder "
                    "(and still air slows them more)")
    edge_world_motion_scale: FloatProperty(
        name="Edge World Motion", default=DEFAULTS['edge_world_motion_scale'],
        min=0.0, soft_max=4.0,
        description="World-motion multiplier on edge vertices")
    edge_max_distance_scale: FloatProperty(
        name="Edge Max Distance", default=DEFAULTS['edge_max_distance_scale'],
        min=0.0, soft_max=4.0,
        description="Max-distance multiplier on edge vertices")
    cut_threshold: FloatProperty(
        name="Cut Threshold", default=DEFAULTS['cut_threshold'],
        min=0.0, soft_max=5.0, unit='LENGTH',
        description="A skinned vertex jumping further than this between two frames marks an "
                    "animation cut (StrayCloth)")
    cut_blend_frames: IntProperty(
        name="Cut Blend Frames", default=int(DEFAULTS['cut_blend_frames']), min=0, soft_max=20,
        description="Frames over which the cloth blends to the new pose after a cut")
    layer_thickness: FloatProperty(
        name="Layer Thickness", default=DEFAULTS['layer_thickness'],
        min=0.0, soft_max=0.1, unit='LENGTH',
        description="Gap kept between a layer and the layer below (self-collision offset)")

    # Bookkeeping (not user settings): the baked cage mesh object, removed by Clear Bake.
    cage_output: PointerProperty(type=bpy.types.Object, options={'HIDDEN'})


_ROD = RodParams.defaults(1)  # core's rod defaults, (1, 1) / (1, 1, 3)


def _rod(name: str):
    value = np.asarray(getattr(_ROD, name))[0, 0]
    return tuple(float(v) for v in value) if value.ndim else float(value)


class WaftRodChain(bpy.types.PropertyGroup):
    """A chain of bones simulated as an oriented-particle rod (tie, ribbon, hood pendulum)."""

    root: StringProperty(
        name="Root Bone",
        description="First bone of the chain; the chain continues through each bone's only "
                    "child (a one-bone chain is Alan Wake's hood pendulum)")


class WaftRodSettings(bpy.types.PropertyGroup):
    """Rods on an armature (``Object.waft_rod``): Cosserat rods (StrayCloth) whose bones get a full
    orientation, twist included; every ``core.cloth.rod.RodParams`` field, keyframeable."""

    enabled: BoolProperty(
        name="Waft Rods", default=False,
        description="Simulate this armature's rod chains (ties, ribbons, hoods) when baking")
    chains: CollectionProperty(type=WaftRodChain)
    chains_index: IntProperty(options={'HIDDEN'})
    space_bone: StringProperty(
        name="Space Bone",
        description="Bone whose frame is the character space (World Motion); empty = the "
                    "armature object")
    collider_collection: PointerProperty(
        name="Colliders", type=bpy.types.Collection,
        description="Only Waft colliders in this collection touch the rods; empty = all")
    stretch_shear_compliance: FloatProperty(
        name="Stretch-Shear Compliance", default=_rod("stretch_shear_compliance"), min=0.0,
        soft_max=0.01, precision=7,
        description="XPBD compliance (m/N) keeping each bone along its segment; 0 = rigid")
    bend_twist_compliance: FloatProperty(
        name="Bend-Twist Compliance", default=_rod("bend_twist_compliance"), min=0.0,
        soft_max=1.0, precision=5,
        description="XPBD compliance of bending and twisting between neighbouring bones (the "
                    "first bone bends against its animated orientation)")
    bend_stiffness_axes: FloatVectorProperty(
        name="Axis Stiffness", default=_rod("bend_stiffness_axes"), size=3, min=0.0,
        description="Multipliers of the bend-twist stiffness about each bone axis (x, y = "
                    "twist, z): a ribbon is stiff across (x) and soft along its face (z)")
    damping: FloatProperty(
        name="Damping", default=_rod("damping"), min=0.0, soft_max=20.0,
        description="Velocity decays as exp(-damping·t), per second (1/s)")
    gravity: FloatVectorProperty(
        name="Gravity", default=_rod("gravity"), size=3, description="Gravity in m/s²")
    world_motion_fraction: FloatProperty(
        name="World Motion", default=_rod("world_motion_fraction"), min=0.0, max=1.0,
        subtype='FACTOR',
        description="How much of the character's travel through the world the rods feel")
    wind_velocity: FloatVectorProperty(
        name="Wind", default=_rod("wind_velocity"), size=3, description="Wind velocity in m/s")
    drag: FloatProperty(
        name="Drag", default=_rod("drag"), min=0.0, soft_max=10.0,
        description="Air drag toward the wind velocity, per second (1/s)")
    radius: FloatProperty(
        name="Radius", default=_rod("radius"), min=0.0, soft_max=0.2, unit='LENGTH',
        description="Collision radius of each rod particle")


CLASSES = (WaftClothBone, WaftClothLayer, WaftClothSettings, WaftRodChain, WaftRodSettings)

POINTERS = (
    (bpy.types.Object, "waft_cloth", WaftClothSettings),
    (bpy.types.Object, "waft_rod", WaftRodSettings),
)

register, unregister = groups_registration(CLASSES, POINTERS)
