"""Ragdoll settings in the .blend: ``Object.waft_ragdoll`` (the armature) and
``PoseBone.waft_ragdoll`` (one rigid body per chosen bone).

Names are the core's (core/ragdoll: ``RagdollParams`` and ``RagdollRest`` fields) wherever the
setting is the same thing. The per-frame settings (the armature's gravity, lock, fall threshold
and recovery; a body's mode, motor, blend, limits to the target, damping, friction, bounce) are
sampled on every frame when animated; a body's are ``PoseBone.waft_ragdoll_<name>`` so that
Insert Keyframe works on them (``ANIMATED_BODY_SETTINGS``). The body's shape (radius, mass,
density) and joint limits are read once, at the first baked frame, because they define the
rigid bodies. Lengths are in scene units (converted to
metres with the unit scale), angles in radians (shown in degrees), mass in kg.
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

from ..properties import collection_poll, groups_registration, object_type_poll
from .presets import PRESET_ITEMS

MODE_ITEMS = (
    ("KINEMATIC", "Kinematic", "Follows the animation exactly (hands on a ledge, the feet of a "
     "companion clinging to its carrier)", 0),
    ("DRIVEN", "Driven", "Simulated; motors pull its rotation toward the animation's", 1),
    ("FREE", "Free", "Simulated without motors: a limp ragdoll part", 2),
)
# BodyMode values of core.ragdoll.model (KINEMATIC = 0, DRIVEN = 1, FREE = 2).
MODE_VALUES = {item[0]: item[3] for item in MODE_ITEMS}

# Defaults of a body that no humanoid name matched (radians).
DEFAULT_SWING = (math.radians(60.0), math.radians(60.0))
DEFAULT_TWIST = (math.radians(-45.0), math.radians(45.0))
DENSITY_OF_BODY = 985.0  # kg/m³, the human body (slightly less than water: lungs)


_armature_poll = object_type_poll('ARMATURE')


class WaftRagdollSettings(bpy.types.PropertyGroup):
    """A ragdoll made from this armature's chosen bones (``Object.waft_ragdoll``)."""

    enabled: BoolProperty(
        name="Waft Ragdoll", default=False,
        description="Simulate this armature's ragdoll bodies when baking")
    preset: EnumProperty(
        name="Preset", items=PRESET_ITEMS, default="PHYSICAL",
        description="Starting point for the bodies' settings; applied with Apply Preset")
    root_lock: BoolProperty(
        name="Lock Root", default=True,
        description="The root body keeps all six degrees of freedom on its animation target "
                    "(a strong constraint, so it still collides), until the fall threshold")
    fall_threshold: FloatProperty(
        name="Fall Threshold", default=0.3, min=0.0, soft_max=2.0, unit='LENGTH',
        description="When the root body is held this far from its animation target (it hit "
                    "a wall), the root lock releases for good and the ragdoll falls freely; "
                    "0 = never")
    use_recovery: BoolProperty(
        name="Recover", default=False,
        description="After a fall, blend the character back to its animation (get up): wait "
                    "Recovery Delay, then blend over Recovery Time, without a jump")
    recovery_delay: FloatProperty(
        name="Recovery Delay", default=1.0, min=0.0, soft_max=5.0, unit='TIME_ABSOLUTE',
        description="Seconds after the fall before the blend back to the animation starts")
    recovery_time: FloatProperty(
        name="Recovery Time", default=1.0, min=0.0, soft_max=5.0, unit='TIME_ABSOLUTE',
        description="Seconds the blend back to the animation takes (smooth in and out)")
    gravity_factor: FloatProperty(
        name="Gravity", default=1.0, soft_min=0.0, soft_max=2.0,
        description="Multiplier of the scene gravity")
    use_ground: BoolProperty(
        name="Ground", default=True,
        description="Collide with a horizontal ground plane at Ground Height")
    ground_height: FloatProperty(
        name="Ground Height", default=0.0, unit='LENGTH',
        description="World height of the ground plane")
    self_collision: BoolProperty(
        name="Self Collision", default=True,
        description="Bodies of one ragdoll collide with each other (not joint neighbours, not "
                    "bodies that overlap at rest); on when any ragdoll baked together wants it")
    collide_with_others: BoolProperty(
        name="Collide With Other Ragdolls", default=False,
        description="This ragdoll's bodies collide with those of the other ragdolls baked "
                    "together that have this on too (not with a carrier or what it carries)")
    substep_rate: FloatProperty(
        name="Substep Rate", default=0.0, min=0.0, soft_max=2000.0,
        description="Simulation steps per second (Hz) for this ragdoll; 0 = the scene's. "
                    "Ragdolls baked together use the highest rate among them")
    iterations: IntProperty(
        name="Iterations", default=4, min=0, soft_max=64,
        description="Constraint passes per substep; 0 = the scene's (Jedi: Fallen Order needed "
                    "many more than the engine default). Ragdolls baked together use the highest")
    default_density: FloatProperty(
        name="Density", default=DENSITY_OF_BODY, min=0.0, soft_min=1.0, soft_max=5000.0,
        description="Density (kg/m³) of bodies that give neither their own density nor mass; "
                    "mass = density × capsule volume")
    carrier: PointerProperty(
        name="Carrier", type=bpy.types.Object, poll=_armature_poll,
        description="Another ragdoll armature this one hangs on (a companion on a character's "
                    "back): its root body follows the carrier's simulated body in the same "
                    "frame, so it is solved after its carrier")
    carrier_bone: StringProperty(
        name="Carrier Bone",
        description="The carrier's body bone this ragdoll's root hangs on")
    collider_collection: PointerProperty(
        name="Colliders", type=bpy.types.Collection, poll=collection_poll,
        description="Only Waft colliders in this collection touch this ragdoll; "
                    "empty = every Waft collider in the scene")


class WaftRagdollBodySettings(bpy.types.PropertyGroup):
    """One rigid body (capsule) on a pose bone (``PoseBone.waft_ragdoll``)."""

    body: BoolProperty(
        name="Body", default=False,
        description="This bone is a rigid body of the ragdoll (a capsule along the bone)")
    radius: FloatProperty(
        name="Radius", default=0.0, min=0.0, soft_max=0.5, unit='LENGTH',
        description="Capsule radius; 0 = the bone's envelope radius (mean of head and tail "
                    "radius)")
    use_mass: BoolProperty(
        name="Use Mass", default=False,
        description="Give the mass directly instead of a density")
    mass: FloatProperty(
        name="Mass", default=1.0, min=0.0, soft_max=100.0, unit='MASS',
        description="Mass of the body (kg) when Use Mass is on")
    density: FloatProperty(
        name="Density", default=0.0, min=0.0, soft_max=5000.0,
        description="Density (kg/m³); 0 = the ragdoll's default density")
    weld: BoolProperty(
        name="Weld to Parent", default=False,
        description="No joint to the body this bone hangs from: the two move as one rigid "
                    "body, its capsule running on along this bone and its mass added (a limb "
                    "bone split into segments, Rigify's DEF-forearm.L.001); this bone keeps "
                    "its animated pose relative to that body, and its own limits and motor "
                    "are not used")
    swing_limit: FloatVectorProperty(
        name="Swing Limit", size=2, default=DEFAULT_SWING, min=0.0, max=math.pi,
        subtype='NONE', unit='ROTATION',
        description="Half-angles of the elliptical swing cone about the body's local X and Z "
                    "axes, relative to the rest pose; 180° = free")
    swing_center: FloatVectorProperty(
        name="Swing Center", size=2, default=(0.0, 0.0), min=-math.pi, max=math.pi,
        subtype='NONE', unit='ROTATION',
        description="Centre of the swing cone about local X and Z, relative to the rest pose: "
                    "a hinge that bends one way (a knee: 145° of flexion, 10° past straight) "
                    "has its centre halfway, so the cone is one-sided; 0 = a symmetric cone")
    twist_limit: FloatVectorProperty(
        name="Twist Limit", size=2, default=DEFAULT_TWIST, min=-math.pi, max=math.pi,
        subtype='NONE', unit='ROTATION',
        description="Minimum and maximum twist about the bone's axis (local Y), relative to "
                    "the rest pose")


# The body settings that may change during a shot (sampled on every frame when animated). They
# live on the pose bone itself as ``PoseBone.waft_ragdoll_<name>``: Blender cannot make an
# animation path to a property group under a pose bone ("could not make path"), so Insert
# Keyframe (I over the field) would fail on ``PoseBone.waft_ragdoll.<name>``. The group keeps
# ``<name>`` as an alias (below) for scripts and presets.
BONE_PREFIX = "waft_ragdoll_"
ANIMATED_BODY_SETTINGS = {
    "mode": EnumProperty(
        name="Mode", items=MODE_ITEMS, default="DRIVEN",
        description="Kinematic, driven by motors toward the animation, or free"),
    "motor_strength": FloatProperty(
        name="Motor Strength", default=0.8, min=0.0, max=1.0, subtype='FACTOR',
        description="Pull of the motor toward the animation's local rotation: a spring of "
                    "2 Hz × s / (1 − s) (1 = reproduce it exactly); the same at any frame rate "
                    "and substep. The root has no motor (see Lock Root)"),
    "motor_damping": FloatProperty(
        name="Motor Damping", default=0.5, min=0.0, soft_max=2.0,
        description="Damping ratio of the motor's spring (0 = springy, 1 = critically "
                    "damped); independent of frame rate and substep"),
    "velocity_drive": FloatProperty(
        name="Velocity Drive", default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description="Fraction T (per 1/30 s) of the body's linear velocity blended toward the "
                    "velocity that reaches its animation target this frame (Jedi: Fallen Order's "
                    "hips on the beam)"),
    "blend": FloatProperty(
        name="Blend", default=0.0, min=0.0, max=1.0, subtype='FACTOR',
        description="Local-space blend of the output toward the animation: 0 = physics "
                    "only, 1 = the animation (Jedi: Fallen Order kept 40–50 % physics: 0.5–0.6)"),
    "distance_limit": FloatProperty(
        name="Distance Limit", default=0.0, min=0.0, soft_max=1.0, unit='LENGTH',
        description="The body stays within this distance of its animation target, rotation "
                    "free (Jedi: Fallen Order's wrists: 5–25 cm); 0 = off"),
    "distance_limit_speed": FloatProperty(
        name="Lock Speed", default=0.0, min=0.0, soft_max=20.0, unit='VELOCITY',
        description="Target speed at which the distance limit has shrunk to zero and locks "
                    "the body to its target (Jedi: Fallen Order's BD-1 head); 0 = never shrinks"),
    "joint_damping": FloatProperty(
        name="Joint Damping", default=1.0, min=0.0, soft_max=50.0,
        description="Angular velocity relative to the parent decays at this rate per second"),
    "linear_damping": FloatProperty(
        name="Linear Damping", default=0.0, min=0.0, soft_max=10.0,
        description="Linear velocity decays at this rate per second (air drag)"),
    "friction": FloatProperty(
        name="Friction", default=0.5, min=0.0, max=1.0,
        description="Coulomb friction against colliders, the ground and the other bodies it "
                    "touches; low values let driven bodies slide to their targets"),
    "restitution": FloatProperty(
        name="Bounce", default=0.0, min=0.0, max=1.0,
        description="Restitution: the share of its approach speed a body keeps when it hits a "
                    "collider or the ground (0 = no bounce, 1 = elastic)"),
}


def pose_bone_of(body) -> bpy.types.PoseBone:
    """The pose bone whose ``waft_ragdoll`` group is ``body``."""
    pointer = body.as_pointer()
    for pose_bone in body.id_data.pose.bones:
        if pose_bone.waft_ragdoll.as_pointer() == pointer:
            return pose_bone
    raise LookupError(f"Armature '{body.id_data.name}': no pose bone holds these ragdoll "
                      f"settings")


def body_setting(pose_bone, name: str):
    """A body setting of ``pose_bone``, per-frame (the bone's own property) or not (its group),
    without the alias's search for the bone."""
    if name in ANIMATED_BODY_SETTINGS:
        return getattr(pose_bone, BONE_PREFIX + name)
    return getattr(pose_bone.waft_ragdoll, name)


def _alias(name: str) -> property:
    """``body.<name>`` reads and writes ``pose_bone.waft_ragdoll_<name>``."""
    flat = BONE_PREFIX + name

    def get(body):
        return getattr(pose_bone_of(body), flat)

    def set_(body, value):
        setattr(pose_bone_of(body), flat, value)

    return property(get, set_, doc=f"Alias of PoseBone.{flat}")


def _animation_call(method: str):
    """``keyframe_insert`` / ``keyframe_delete`` of the group that key the pose bone's own
    property for the animated settings (the group's path cannot be made)."""
    def call(body, data_path, *args, **kwargs):
        if data_path in ANIMATED_BODY_SETTINGS:
            return getattr(pose_bone_of(body), method)(BONE_PREFIX + data_path, *args, **kwargs)
        return getattr(super(WaftRagdollBodySettings, body), method)(data_path, *args, **kwargs)

    call.__name__ = method
    return call


CLASSES = (WaftRagdollSettings, WaftRagdollBodySettings)

POINTERS = (
    (bpy.types.Object, "waft_ragdoll", WaftRagdollSettings),
    (bpy.types.PoseBone, "waft_ragdoll", WaftRagdollBodySettings),
)

for _name in ANIMATED_BODY_SETTINGS:
    setattr(WaftRagdollBodySettings, _name, _alias(_name))
WaftRagdollBodySettings.keyframe_insert = _animation_call("keyframe_insert")
WaftRagdollBodySettings.keyframe_delete = _animation_call("keyframe_delete")

_register_groups, _unregister_groups = groups_registration(CLASSES, POINTERS)


def register() -> None:
    _register_groups()
    for name, prop in ANIMATED_BODY_SETTINGS.items():
        setattr(bpy.types.PoseBone, BONE_PREFIX + name, prop)


def unregister() -> None:
    for name in ANIMATED_BODY_SETTINGS:
        delattr(bpy.types.PoseBone, BONE_PREFIX + name)
    _unregister_groups()
