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
