"""Named starting points for a ragdoll's bodies, applied by ``waft.ragdoll_apply_preset``.

A preset sets the per-body behaviour (mode, motors, blend, limits to the target) on every body
(or the selected ones) and a few armature settings; shapes and joint limits stay as they are
(they come from the humanoid defaults or the user). Values follow Jedi: Fallen Order's
physical animation (Waszak, Respawn): weak motors plus a local blend toward the animation for
locomotion (the game kept 40–50 % physics; this preset's 0.4 keeps 60 %), strong motors with a
locked root for a character that must match its animation but collide, no motors and no limits
for a companion.
"""

from __future__ import annotations

from ..preset_menus import PresetKind, literal

PRESET_ITEMS = (
    ("PHYSICAL", "Physical Animation",
     "Strong motors, root locked with a fall threshold: follows the animation, collides, "
     "falls when blocked (Jedi: Fallen Order's stormtrooper)"),
    ("LOCOMOTION", "Locomotion Blend",
     "Weak motors and a 40 % local blend: inertia and lag on top of a walk or run"),
    ("LIMP", "Limp Ragdoll", "No motors, no root lock: falls as a ragdoll"),
    ("COMPANION", "Companion",
     "Free bodies with damping and a speed-dependent distance limit (Jedi: Fallen Order's BD-1)"),
)

# Per body: applied to every body (or the selected ones).
BODY_PRESETS: dict[str, dict[str, object]] = {
    "PHYSICAL": {"mode": "DRIVEN", "motor_strength": 0.9, "motor_damping": 0.7,
                 "velocity_drive": 0.0, "blend": 0.0, "distance_limit": 0.0,
                 "distance_limit_speed": 0.0, "joint_damping": 2.0, "friction": 0.2},
    "LOCOMOTION": {"mode": "DRIVEN", "motor_strength": 0.3, "motor_damping": 0.5,
                   "velocity_drive": 0.0, "blend": 0.4, "distance_limit": 0.0,
                   "distance_limit_speed": 0.0, "joint_damping": 1.0, "friction": 0.2},
    "LIMP": {"mode": "FREE", "motor_strength": 0.0, "motor_damping": 0.0, "velocity_drive": 0.0,
             "blend": 0.0, "distance_limit": 0.0, "distance_limit_speed": 0.0,
             "joint_damping": 1.0, "friction": 0.6},
    "COMPANION": {"mode": "FREE", "motor_strength": 0.0, "motor_damping": 0.0,
                  "velocity_drive": 0.0, "blend": 0.0, "distance_limit": 0.1,
                  "distance_limit_speed": 4.0, "joint_damping": 3.0, "friction": 0.2},
}

# Per armature.
RAGDOLL_PRESETS: dict[str, dict[str, object]] = {
    "PHYSICAL": {"root_lock": True, "fall_threshold": 0.3},
    "LOCOMOTION": {"root_lock": True, "fall_threshold": 0.0},
    "LIMP": {"root_lock": False, "fall_threshold": 0.0},
    "COMPANION": {"root_lock": True, "fall_threshold": 0.0},
}


def apply_preset(ragdoll_settings, body_settings, preset: str) -> None:
    """Copy ``preset`` onto the armature's settings and each of ``body_settings``."""
    if preset not in BODY_PRESETS:
        raise ValueError(f"unknown ragdoll preset {preset!r}; expected one of "
                         f"{sorted(BODY_PRESETS)}")
    for name, value in RAGDOLL_PRESETS[preset].items():
        setattr(ragdoll_settings, name, value)
    ragdoll_settings.preset = preset
    for body in body_settings:
        for name, value in BODY_PRESETS[preset].items():
            setattr(body, name, value)


# What a user's ragdoll preset stores: the armature's behaviour and one body's (the active
# bone's, else the first body's), applied to every body. Not shapes, masses or joint limits:
# they belong to one rig.
USER_PRESET_VALUES = ("root_lock", "fall_threshold", "use_recovery", "recovery_delay",
                      "recovery_time", "gravity_factor", "self_collision")
USER_PRESET_BODY_VALUES = ("mode", "motor_strength", "motor_damping", "velocity_drive", "blend",
                           "distance_limit", "distance_limit_speed", "joint_damping",
                           "linear_damping", "friction", "restitution")


def _stored_body(ob, active_pose_bone):
    if active_pose_bone is not None and active_pose_bone.id_data == ob \
            and active_pose_bone.waft_ragdoll.body:
        return active_pose_bone.waft_ragdoll
    return next((pb.waft_ragdoll for pb in ob.pose.bones if pb.waft_ragdoll.body), None)


def write_user_preset(ob, filepath: str, kind) -> None:
    """A ragdoll preset file: the armature's settings, then a loop giving every body the
    stored body's behaviour (``AddPresetBase`` can only write plain assignments)."""
    import bpy

    settings = getattr(ob, kind.owner)
    body = _stored_body(ob, bpy.context.active_pose_bone)
    lines = ["import bpy", "", "ob = bpy.context.object", f"ragdoll = ob.{kind.owner}"]
    lines += [f"ragdoll.{name} = {literal(getattr(settings, name))}" for name in kind.values]
    if body is not None:
        lines += ["", "for bone in ob.pose.bones:", "    body = bone.waft_ragdoll",
                  "    if not body.body:", "        continue"]
        lines += [f"    body.{name} = {literal(getattr(body, name))}"
                  for name in kind.body_values]
    with open(filepath, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


PRESET_KIND = PresetKind(
    key="ragdolls", label="Ragdoll Presets", subdir="waft/ragdolls", owner="waft_ragdoll",
    values=USER_PRESET_VALUES, builtin=PRESET_ITEMS, apply_operator="waft.ragdoll_apply_preset",
    apply_property="preset", write=write_user_preset, body_values=USER_PRESET_BODY_VALUES)
