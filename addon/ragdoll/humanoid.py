"""Humanoid defaults by bone name: which part of the body a bone is, and its body settings.

Names are matched after dropping common rig prefixes and the side marker, so the same table
serves Mixamo (``mixamorig:LeftForeArm``), Rigify (``DEF-forearm.L``), glTF / Godot humanoids
(``lower_arm_l``), VRM (``J_Bip_L_LowerArm``, ``leftLowerArm``) and plain names (``Forearm.R``).
No bpy (NumPy only) so it is tested on its own.

Joint limits are half-angles of the elliptical swing cone about the body's local X and Z axes
and the twist range about local Y (along the bone), relative to the rest pose, in degrees here
(radians on the property). They are generous ranges of the human joints, chosen so a ragdoll
never folds through itself while an animation that stays inside human range is not clipped.
Elbows, knees and toes are one-sided hinges about the axis the rig bends them about
(`hinge_limits`, HINGES); their ROLES cones (145° about X) are the fallback where the rig does
not tell that axis. Radii are fractions of the
character's height ``H`` (a 1.7 m adult: hips 0.12 m, upper arm 0.045 m) and masses fractions of
the body's mass (below), because bone lengths vary too much between rigs (a glTF head bone may
be 0.5 m long).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BodyDefaults:
    role: str
    radius_of_height: float  # capsule radius / character height
    swing_deg: tuple[float, float]  # half-angles about local X, local Z
    twist_deg: tuple[float, float]  # (min, max) about local Y
    mass_fraction: float  # share of the whole body's mass (one limb segment)


# Segment masses after Dempster's cadaver data as tabulated by Winter (Biomechanics and Motor
# Control of Human Movement, table 4.1): head 6.9 % (+ neck 1.2 %), thorax 21.6 %, abdomen
# 13.9 %, pelvis 14.2 %, upper arm 2.8 %, forearm 1.6 %, hand 0.6 %, thigh 10 %, leg 4.65 %,
# foot 1.45 %; shoulders and toes take a little from the thorax and foot. Rig-derived masses
# (density × capsule) go wrong for long head bones (a glTF head bone is 0.5 m: a 25 kg capsule
# on a 1 kg neck), and mass ratios that large cost the solver accuracy.
ROLES: dict[str, BodyDefaults] = {
    "hips": BodyDefaults("hips", 0.070, (180.0, 180.0), (-180.0, 180.0), 0.142),
    "spine": BodyDefaults("spine", 0.060, (25.0, 25.0), (-20.0, 20.0), 0.139),
    "chest": BodyDefaults("chest", 0.065, (25.0, 25.0), (-20.0, 20.0), 0.196),
    "neck": BodyDefaults("neck", 0.030, (35.0, 35.0), (-40.0, 40.0), 0.012),
    "head": BodyDefaults("head", 0.060, (35.0, 35.0), (-50.0, 50.0), 0.069),
    "shoulder": BodyDefaults("shoulder", 0.025, (15.0, 15.0), (-10.0, 10.0), 0.010),
    "upper_arm": BodyDefaults("upper_arm", 0.027, (95.0, 95.0), (-80.0, 80.0), 0.028),
    "forearm": BodyDefaults("forearm", 0.023, (145.0, 15.0), (-80.0, 80.0), 0.016),
    "hand": BodyDefaults("hand", 0.020, (70.0, 35.0), (-30.0, 30.0), 0.006),
    "thigh": BodyDefaults("thigh", 0.040, (110.0, 60.0), (-40.0, 40.0), 0.100),
    "shin": BodyDefaults("shin", 0.030, (145.0, 10.0), (-10.0, 10.0), 0.0465),
    "foot": BodyDefaults("foot", 0.024, (45.0, 30.0), (-20.0, 20.0), 0.0115),
    "toes": BodyDefaults("toes", 0.015, (40.0, 10.0), (-5.0, 5.0), 0.003),
}
# A 1.75 m adult weighs about 70 kg; a rig of another height scales with its volume.
REFERENCE_HEIGHT = 1.75
REFERENCE_MASS = 70.0


def body_mass(height: float) -> float:
    """Whole-body mass (kg) of a humanoid ``height`` metres tall."""
    return REFERENCE_MASS * (height / REFERENCE_HEIGHT) ** 3


# Compact spellings (lower case, no separators, side removed) → role. Order does not matter:
# the whole compact name must match.
ALIASES: dict[str, str] = {
    "hips": "hips", "hip": "hips", "pelvis": "hips",
    "spine": "spine", "spine0": "spine", "spine00": "spine", "abdomen": "spine",
    "spine1": "chest", "spine01": "chest", "spine2": "chest", "spine02": "chest",
    "spine3": "chest", "chest": "chest", "upperchest": "chest", "torso": "chest",
    "neck": "neck", "neck1": "neck", "neck01": "neck",
    "head": "head",
    "shoulder": "shoulder", "clavicle": "shoulder", "collar": "shoulder", "collarbone": "shoulder",
    "upperarm": "upper_arm", "arm": "upper_arm", "uparm": "upper_arm",
    "forearm": "forearm", "lowerarm": "forearm", "elbow": "forearm",
    "hand": "hand", "wrist": "hand",
    "thigh": "thigh", "upperleg": "thigh", "upleg": "thigh",
    "shin": "shin", "lowerleg": "shin", "leg": "shin", "calf": "shin", "knee": "shin",
    "foot": "foot", "ankle": "foot",
    "toes": "toes", "toe": "toes", "toebase": "toes",
}

# Rigify's DEF spine is numbered from the hips: spine, spine.001 … spine.006.
RIGIFY_SPINE = {0: "hips", 1: "spine", 2: "spine", 3: "chest", 4: "neck", 5: "neck", 6: "head"}

_PREFIX = re.compile(r"^(def|org|mch|drv|j_bip_[clr]|j_bip|bip0?1|b|jnt|bn)[-_ .]", re.I)
_SIDE_TOKEN = re.compile(r"(^|[-_. ])(l|r|left|right)(?=$|[-_. ])", re.I)
_SIDE_WORD = re.compile(r"^(left|right)(?=[A-Z_])|(left|right)$", re.I)
_NUMBER_SUFFIX = re.compile(r"[._](\d{3})$")
# VRM 0.x characters imported from glTF name bones 'thigh.l_Armature', 'lowerarm.r_Armature'
# (Godette): Create Ragdoll › Humanoid found no bone at all.
_ARMATURE_SUFFIX = re.compile(r"_armature$", re.I)


def side_of(name: str) -> str:
    """'L', 'R' or '' from the bone name (``.L``, ``_l``, ``Left…``, ``J_Bip_L_…``)."""
    base = name.rsplit(":", 1)[-1]
    vrm = re.match(r"^j_bip_([lr])_", base, re.I)
    if vrm:
        return vrm.group(1).upper()
    m = _SIDE_TOKEN.search(base) or _SIDE_WORD.search(base)
    if not m:
        return ""
    token = m.group(2) if m.re is _SIDE_TOKEN else (m.group(1) or m.group(2))
    return "L" if token.lower() in ("l", "left") else "R"


def role_of(name: str) -> str | None:
    """The body part a bone name stands for, or None (fingers, twist helpers, props)."""
    base = _ARMATURE_SUFFIX.sub("", name.rsplit(":", 1)[-1])  # mixamorig:LeftArm
    rigify = base.lower().startswith("def-")
    base = _PREFIX.sub("", base)
    number = _NUMBER_SUFFIX.search(base)
    index = int(number.group(1)) if number else 0
    base = _NUMBER_SUFFIX.sub("", base)
    if rigify and base.lower() == "spine":
        return RIGIFY_SPINE.get(index)
    base = _SIDE_TOKEN.sub(" ", base)
    base = _SIDE_WORD.sub("", base)
    compact = re.sub(r"[^a-z0-9]", "", base.lower())
    role = ALIASES.get(compact)
    if role == "hips" and side_of(name):
        return None  # Rigify's DEF-pelvis.L / .R: hip flaps beside the spine root, not the hips
    return role


# One-sided hinges: (flexion, extension past straight, side-to-side play) in degrees, and which
# way the limb flexes: the forearm towards the front, the shin towards the back (a knee 0-145°,
# an elbow 0-145°, each a little past straight), the toes up (70° of dorsiflexion at toe-off,
# 40° down; Kapandji, The Physiology of the Joints). A symmetric cone let knees bend 145°
# forwards and elbows backwards, and held a walk's toes 60 mm off at toe-off.
HINGES: dict[str, tuple[float, float, float, str]] = {
    "forearm": (145.0, 10.0, 15.0, "front"),
    "shin": (145.0, 10.0, 10.0, "back"),
    "toes": (70.0, 40.0, 10.0, "up"),
}
_MIN_REST_BEND = math.radians(2.0)  # a pre-bent rest (IK rigs) tells the flexion itself
_MIN_ACROSS = 0.3  # the flexion direction must be this far off the bone to define a hinge
_MAX_BEND_OFF = math.radians(60.0)  # a rest bend this near the flexion is the rig's own hinge
_MAX_LIMB_OFF = math.radians(30.0)  # a bone this far off its limb says nothing of the hinge


def hinge_limits(role: str | None, *, child_axes: np.ndarray, parent_axis: np.ndarray | None,
                 forward: np.ndarray, limb: np.ndarray | None = None
                 ) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """(swing half-angles, swing centre) in radians about the body's local (X, Z) for a hinge
    role, from the rig itself; None for other roles, or when the rig does not tell the axis.

    The hinge axis: the limb flexes towards ``forward`` (the character's front, armature space;
    backwards for a shin, up for the toes), so the axis is bone × flexion direction; a rest
    pose bent by more than 2° the same way (within 60° of it: IK rigs are pre-bent the way the
    joint flexes) gives the rig's own axis, parent × child bone direction. A rest bent
    sideways (knock knees) or backwards (a knee at rest past straight) is not a flexion and
    put the hinge across the knee. ``limb``: where the limb goes from the bone's head (towards
    the next joint); a bone pointing elsewhere (glTF imports whose bones all point up) says
    nothing about the hinge: None. Expressed in the bone's local frame
    (``child_axes``: columns = its rest X, Y, Z in armature space), its larger component of X
    and Z is the hinge: rigs disagree (Rigify and Mixamo bend about X, the Godot glTF
    humanoid's forearms about Z), and a limit on the wrong axis clamped a walk's elbows 21-31°
    and let a limp elbow fold sideways. (The toes' rest bend is the foot's arch, upwards too.)
    """
    if role not in HINGES:
        return None
    flexion, extension, play, way = HINGES[role]
    front = np.asarray(forward, dtype=np.float64)
    towards = {"front": front, "back": -front, "up": np.array([0.0, 0.0, 1.0])}[way]
    axes = np.asarray(child_axes, dtype=np.float64)
    axes = axes / np.maximum(np.linalg.norm(axes, axis=0), 1e-300)
    bone = axes[:, 1]
    if limb is not None:
        along = np.asarray(limb, dtype=np.float64)
        if float(along @ bone) < math.cos(_MAX_LIMB_OFF) * float(np.linalg.norm(along)):
            return None
    axis = None
    across = towards - float(towards @ bone) * bone
    if float(np.linalg.norm(across)) >= _MIN_ACROSS * float(np.linalg.norm(towards)):
        axis = np.cross(bone, across)
        axis = axis / float(np.linalg.norm(axis))
    if parent_axis is not None:
        parent_dir = np.asarray(parent_axis, dtype=np.float64)
        parent_dir = parent_dir / max(float(np.linalg.norm(parent_dir)), 1e-300)
        bent = np.cross(parent_dir, bone)
        size = float(np.linalg.norm(bent))
        if size > math.sin(_MIN_REST_BEND) and (
                axis is None or float(bent @ axis) > math.cos(_MAX_BEND_OFF) * size):
            axis = bent
    if axis is None:
        return None  # the limb points along the front and is not bent: the rig does not say
    local = axes.T @ (axis / float(np.linalg.norm(axis)))
    k = 0 if abs(local[0]) >= abs(local[2]) else 1
    sign = 1.0 if local[2 * k] > 0.0 else -1.0
    half, center = [math.radians(play)] * 2, [0.0, 0.0]
    half[k] = math.radians((flexion + extension) / 2.0)
    center[k] = sign * math.radians((flexion - extension) / 2.0)
    return (half[0], half[1]), (center[0], center[1])


# Rigify splits each limb bone into B-bone segments (DEF-forearm.L, DEF-forearm.L.001) that the
# mesh follows as one smoothly bending bone: the joint between them is mid-bone, not an elbow.
SEGMENTED_ROLES = frozenset(("upper_arm", "forearm", "thigh", "shin"))


def is_limb_segment(name: str, parent: str | None) -> bool:
    """Whether bone ``name`` is a further segment of the limb bone ``parent`` (the bone it hangs
    from): the same name but for its ``.001``-style number (Rigify's ``DEF-thigh.L.001`` after
    ``DEF-thigh.L``, ``.002`` after ``.001``), of a limb role. Spines and necks numbered the same
    way are separate vertebrae with their own joints."""
    if parent is None or role_of(name) not in SEGMENTED_ROLES:
        return False
    if not _NUMBER_SUFFIX.search(name):
        return False
    return _NUMBER_SUFFIX.sub("", name) == _NUMBER_SUFFIX.sub("", parent)


def defaults_for(name: str) -> BodyDefaults | None:
    role = role_of(name)
    return ROLES.get(role) if role is not None else None
