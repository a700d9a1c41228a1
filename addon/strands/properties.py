"""The bone-chain system's settings: ``Object.waft`` on armatures and ``PoseBone.waft`` per bone.

Names and defaults are the ones saved .blend files carry (docs/internals.md, "Blender-side
names"); every float is keyframeable and sampled per frame by ``sampling.py``.
"""

import math

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..properties import (
    collection_poll,
    groups_registration,
    settled_frame_property,
    use_settled_pose_property,
)
from .presets import PRESET_ITEMS


# VRM Spring Bone settings (VRMC_springBone 1.0 joint fields: stiffness, gravityPower,
# dragForce; the hit radius is Radius), on the armature and as a bone's override.
def vrm_stiffness_property():
    return FloatProperty(
        name="Stiffness Force", default=1.0, min=0.0, soft_max=4.0,
        description="VRM Spring Bone: pull back toward the rest direction; each frame the "
                    "tail moves this far times the frame time (metres per second)")


def vrm_gravity_power_property():
    return FloatProperty(
        name="Gravity Power", default=0.0, min=0.0, soft_max=2.0,
        description="VRM Spring Bone: each frame the tail moves this far times the frame time "
                    "along the gravity direction (metres per second; 0 = no gravity)")


def vrm_drag_force_property():
    return FloatProperty(
        name="Drag Force", default=0.5, min=0.0, max=1.0, subtype='FACTOR',
        description="VRM Spring Bone: fraction of the tail's motion lost every frame "
                    "(0 = keeps swinging, 1 = no inertia)")


class WaftSetupSettings(bpy.types.PropertyGroup):
    """Settings of one armature made into a Waft setup (``Object.waft``)."""

    enabled: BoolProperty(
        name="Waft Setup", default=False,
        description="Simulate this armature's flagged bone chains when baking")
    solver: EnumProperty(
        name="Solver", default="WAFT",
        items=(("WAFT", "Waft",
                "Waft's own solver: XPBD with fixed substeps; the same motion at every frame "
                "rate"),
               ("VRM", "VRM Spring Bone",
                "The VRM 1.0 spring-bone algorithm, so the bake moves as the character will in "
                "VRM runtimes (UniVRM, three-vrm). Like them it steps once per frame, so its "
                "motion changes with the frame rate")),
        description="How the chains are simulated")
    preset: EnumProperty(
        name="Preset", items=PRESET_ITEMS, default="PONYTAIL",
        description="Starting point for the settings; applied with Apply Preset")
    shape_stiffness: FloatProperty(
        name="Shape Stiffness", default=0.1, min=0.0, max=1.0,
        description="Pull toward the animated pose: fraction of the gap closed per 1/60 s "
                    "(0 = free, 1 = follows the animation)")
    shape_decay: FloatProperty(
        name="Shape Decay", default=1.0, min=0.0, soft_max=5.0,
        description="Root-to-tip falloff of Shape Stiffness: particle i gets "
                    "stiffness^(1 + decay·(i−1)), so tips move more freely")
    damping: FloatProperty(
        name="Damping", default=1.0, min=0.0, soft_max=20.0, unit='NONE',
        description="Velocity decays as exp(−damping·t), per second (1/s); "
                    "the same at any frame rate")
    stretch_compliance: FloatProperty(
        name="Stretch Compliance", default=0.0, min=0.0, soft_max=0.01, precision=5,
        description="XPBD compliance of each segment's length in m/N; 0 = inextensible")
    bend_compliance: FloatProperty(
        name="Bend Compliance", default=5e-5, min=0.0, soft_max=2e-4, precision=6, step=0.001,
        description="Softness of bending at each joint, in m/N (XPBD compliance of each "
                    "particle's offset from its neighbours' midpoint): 0 = rigid, 1e-5 = stiff, "
                    "5e-5 = bends under its own weight, 1e-3 and up = as soft as no bending")
    use_bending: BoolProperty(
        name="Bending", default=True,
        description="Resist bending at every joint (see Bend Compliance)")
    use_tether: BoolProperty(
        name="Tether", default=True,
        description="Keep each particle within its rest length along the chain from the root "
                    "(long-range attachment; stops the chain from stretching under load)")
    max_distance: FloatProperty(
        name="Max Distance", default=0.0, min=0.0, soft_max=1.0, unit='LENGTH',
        description="Each particle stays within this distance of its animated position; "
                    "0 = no limit")
    radius: FloatProperty(
        name="Radius", default=0.01, min=0.0, soft_max=0.2, unit='LENGTH',
        description="Collision radius of each particle")
    gravity_factor: FloatProperty(
        name="Gravity", default=1.0, soft_min=0.0, soft_max=2.0,
        description="Multiplier of the scene gravity")
    world_motion_fraction: FloatProperty(
        name="World Motion", default=1.0, min=0.0, max=1.0, subtype='FACTOR',
        description="How much of the character's motion through the world the strands feel "
                    "(1 = all, 0 = carried along rigidly; 0.1–0.3 tames fast travel)")
    space_bone: StringProperty(
        name="Space Bone",
        description="The bone that carries the character through the world when travel is "
                    "keyed on a bone (root motion in glTF, Mixamo and most game rigs): World "
                    "Motion is measured in its space. Empty: the armature object's")
    wind_direction: FloatVectorProperty(
        name="Wind Direction", default=(1.0, 0.0, 0.0), size=3, subtype='DIRECTION',
        description="Direction the wind blows toward (normalised when baking)")
    wind_speed: FloatProperty(
        name="Wind Speed", default=0.0, min=0.0, soft_max=30.0, unit='VELOCITY',
        description="Mean wind speed")
    wind_turbulence: FloatProperty(
        name="Turbulence", default=0.3, min=0.0, max=1.0, subtype='FACTOR',
        description="Fast seeded noise on the wind, relative to the wind speed")
    wind_gust: FloatProperty(
        name="Gusts", default=0.3, min=0.0, max=1.0, subtype='FACTOR',
        description="Slow seeded gusts, relative to the wind speed")
    wind_seed: IntProperty(
        name="Seed", default=0, min=0,
        description="Noise seed; the same seed gives the same wind")
    drag: FloatProperty(
        name="Drag", default=0.5, min=0.0, soft_max=10.0,
        description="Air drag toward the wind velocity, per second (1/s)")
    wind_direction_variation: FloatProperty(
        name="Direction Variation", default=0.0, min=0.0, max=math.pi, subtype='ANGLE',
        description="Half-angle of the cone the wind direction wanders in over time")
    wind_tangent_response: FloatProperty(
        name="Tangent Response", default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description="How much of the wind along a strand is ignored: 1 = only the part "
                    "perpendicular to the strand pushes it, so strands lying differently move "
                    "differently")
    wind_strand_variation: FloatProperty(
        name="Strand Variation", default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description="Per-strand phase of the gusts and direction changes: 0 = every strand in "
                    "step, 1 = strands move out of step")
    ftl_damping: FloatProperty(
        name="FTL Damping", default=0.9, min=0.0, max=1.0, subtype='FACTOR',
        description="Inextensible strands keep their lengths by an energy-conserving "
                    "mass-weighted projection (SHAKE); where it cannot be used for a step (a "
                    "teleport, a violent jerk) follow-the-leader takes over, with this velocity "
                    "correction (DFTL, Müller 2012): 0 = plain follow-the-leader, 1 = calmest")
    local_stiffness: FloatProperty(
        name="Local Shape", default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description="Keep each segment's rest direction relative to its parent segment, so "
                    "curls and bangs keep their shape while the strand swings (fraction of the "
                    "error removed per 1/60 s; 0 = off)")
    shape_range: FloatProperty(
        name="Shape Range", default=1.0, min=0.0, max=1.0, subtype='FACTOR',
        description="Part of each strand, from the root, on which Shape Stiffness acts "
                    "(1 = whole strand; low values keep only the scalp part of the shape)")
    shock_propagation: FloatProperty(
        name="Shock Propagation", default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description="Carry this fraction of the root's sudden motion (per 1/60 s) down the "
                    "whole strand, so fast head turns do not leave the hair behind (TressFX)")
    voxel_friction: FloatProperty(
        name="Hair Friction", default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description="Inter-hair friction and cohesion: blend each particle's velocity toward "
                    "the mean velocity of its voxel cell (fraction per 1/60 s; 0 = off)")
    voxel_resolution: IntProperty(
        name="Voxel Resolution", default=32, min=1, max=256, soft_max=64,
        description="Cells per axis of the velocity grid around each setup's strands")
    vrm_stiffness: vrm_stiffness_property()
    vrm_gravity_power: vrm_gravity_power_property()
    vrm_gravity_dir: FloatVectorProperty(
        name="Gravity Direction", default=(0.0, 0.0, -1.0), size=3, subtype='DIRECTION',
        description="VRM Spring Bone: world direction of the gravity (normalised when baking)")
    vrm_drag_force: vrm_drag_force_property()
    collider_collection: PointerProperty(
        name="Colliders", type=bpy.types.Collection, poll=collection_poll,
        description="Only Waft colliders in this collection touch this setup; "
                    "empty = every Waft collider in the scene")
    use_settled_pose: use_settled_pose_property(
        "the chains", "them after animation cuts", "the animation", "tails and hair")
    settled_frame: settled_frame_property()
    settled_count: IntProperty(
        options={'HIDDEN'},
        description="Simulated bones (guide curve points for hair) when the settled pose was "
                    "captured; 0 = none captured")
    # Bookkeeping for the NLA layout (not user settings): the action that was active before the
    # first bake, so Clear Bake can make it active again. The pointer also keeps it a user.
    original_action: PointerProperty(type=bpy.types.Action, options={'HIDDEN'})
    original_slot: StringProperty(options={'HIDDEN'})


class WaftBoneSettings(bpy.types.PropertyGroup):
    """Per pose bone (``PoseBone.waft``): chain membership and overrides."""

    simulate: BoolProperty(
        name="Simulate", default=False,
        description="This bone is part of a simulated chain (chains are runs of such bones)")
    pinned: BoolProperty(
        name="Pinned", default=False,
        description="Follow the animation exactly (kinematic) instead of being simulated")
    use_overrides: BoolProperty(
        name="Override", default=False,
        description="Use this bone's own stiffness, damping and radius")
    shape_stiffness: FloatProperty(
        name="Shape Stiffness", default=0.1, min=0.0, max=1.0,
        description="Pull of this bone's tail toward its animated position, "
                    "fraction of the gap closed per 1/60 s")
    damping: FloatProperty(
        name="Damping", default=1.0, min=0.0, soft_max=20.0,
        description="Velocity decay of this bone's tail per second (1/s)")
    radius: FloatProperty(
        name="Radius", default=0.01, min=0.0, soft_max=0.2, unit='LENGTH',
        description="Collision radius of this bone's tail")
    vrm_stiffness: vrm_stiffness_property()
    vrm_gravity_power: vrm_gravity_power_property()
    vrm_drag_force: vrm_drag_force_property()
    collider_collection: PointerProperty(
        name="Chain Colliders", type=bpy.types.Collection, poll=collection_poll,
        description="On a chain's first bone: only the Waft colliders in this collection touch "
                    "this chain (an empty collection: none). Unset: the setup's colliders")
    # Capture Settled Pose: this bone's tail offset from its animated position, in the axes of
    # the setup's space (armature or Space Bone), Blender units; `has_settled` marks it saved.
    settled_offset: FloatVectorProperty(size=3, options={'HIDDEN'})
    has_settled: BoolProperty(options={'HIDDEN'})


register, unregister = groups_registration(
    (WaftSetupSettings, WaftBoneSettings),
    ((bpy.types.Object, "waft", WaftSetupSettings), (bpy.types.PoseBone, "waft", WaftBoneSettings)))
