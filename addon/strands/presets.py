"""Named starting points for a setup's settings, applied by ``waft.apply_preset``.

Only the settings that give a preset its character are listed; everything else keeps the
user's value. Compliances are XPBD compliances in m/N (0 = rigid), damping and drag are per
second, so a preset means the same thing at any frame rate.

``PRESET_KIND``: these built-ins and the user's own in Blender's preset system
(``addon/preset_menus.py``).
"""

from ..preset_menus import PresetKind

PRESETS: dict[str, dict[str, float]] = {
    # Long, light strands: little shape memory, so the hair swings and settles under gravity.
    "PONYTAIL": {
        "shape_stiffness": 0.05, "shape_decay": 1.0, "damping": 1.5,
        "bend_compliance": 1e-4, "drag": 0.5, "gravity_factor": 1.0,
    },
    # A tail keeps its groomed curve near the root and whips at the tip.
    "TAIL": {
        "shape_stiffness": 0.3, "shape_decay": 0.5, "damping": 2.0,
        "bend_compliance": 2e-5, "drag": 0.3, "gravity_factor": 1.0,
    },
    # Cloth-like dangling parts: almost no shape memory, soft bending.
    "SOFT": {
        "shape_stiffness": 0.02, "shape_decay": 2.0, "damping": 0.5,
        "bend_compliance": 1e-3, "drag": 0.8, "gravity_factor": 1.0,
    },
    # Antennae, stiff ears: strong pull back to the animation, heavy damping.
    "STIFF": {
        "shape_stiffness": 0.5, "shape_decay": 0.2, "damping": 4.0,
        "bend_compliance": 2e-6, "drag": 0.2, "gravity_factor": 1.0,
    },
}

# Strand-hair settings every hair preset sets, so switching presets never keeps another
# preset's underwater gravity or friction (values of a plain, dry head of hair).
_HAIR_BASE: dict[str, float] = {
    "gravity_factor": 1.0, "shape_range": 1.0, "local_stiffness": 0.0,
    "shock_propagation": 0.3, "ftl_damping": 0.9, "voxel_friction": 0.1,
    "wind_tangent_response": 1.0, "wind_strand_variation": 0.5,
    "wind_direction_variation": 0.35,
}

PRESETS.update({
    # Long straight hair (Alice): free below the scalp, exact lengths, some clumping.
    "HAIR_STRAIGHT_LONG": {
        **_HAIR_BASE, "shape_stiffness": 0.08, "shape_decay": 1.5, "damping": 1.0,
        "bend_compliance": 0.02, "drag": 0.6, "local_stiffness": 0.15, "voxel_friction": 0.15,
        "shock_propagation": 0.4,
    },
    # Curls (Changyou's strand hair): local shape keeps each curl, little pull to the absolute
    # groom.
    "HAIR_CURLY": {
        **_HAIR_BASE, "shape_stiffness": 0.04, "shape_decay": 2.0, "damping": 2.0,
        "bend_compliance": 0.005, "drag": 0.8, "local_stiffness": 0.9, "voxel_friction": 0.2,
    },
    # Short stiff hair, crew cuts, fur: strong shape everywhere, heavy damping.
    "HAIR_SHORT_STIFF": {
        **_HAIR_BASE, "shape_stiffness": 0.5, "shape_decay": 0.3, "damping": 4.0,
        "bend_compliance": 0.001, "drag": 0.3, "local_stiffness": 0.6, "voxel_friction": 0.0,
        "shock_propagation": 0.8,
    },
    # A braid or ponytail: one thick rope that keeps its weave and swings as a whole.
    "HAIR_BRAID": {
        **_HAIR_BASE, "shape_stiffness": 0.05, "shape_decay": 1.0, "damping": 1.5,
        "bend_compliance": 0.01, "drag": 0.5, "local_stiffness": 0.7, "voxel_friction": 0.4,
        "wind_strand_variation": 0.1,
    },
    # Underwater (Changyou's strand hair): reversed gravity (buoyancy), heavy drag, only the
    # scalp part of the shape kept, so the hair floats up and drifts with the root's motion.
    # The scalp part holds the first segment in the groom's direction (hanging down, usually);
    # bending carries the turn up along the strand, most at the root and less to the tip (a
    # cantilever under a spread load). With bending off (compliance 0.5) the whole turn was
    # one joint: a V of 137° (up to 178°) at each root of the sample; 1e-4 bends it 37, 24,
    # 15, 9, 5° over its first joints (3e-4 still folded the first by 70°).
    "HAIR_UNDERWATER": {
        **_HAIR_BASE, "gravity_factor": -0.3, "shape_stiffness": 0.3, "shape_decay": 0.5,
        "shape_range": 0.25, "damping": 0.5, "drag": 4.0, "bend_compliance": 1e-4,
        "local_stiffness": 0.0, "voxel_friction": 0.3, "shock_propagation": 0.0,
        "wind_direction_variation": 0.6,
    },
})

PRESET_ITEMS = (
    ("PONYTAIL", "Ponytail", "Long hair strands that swing freely and settle under gravity"),
    ("TAIL", "Tail", "Keeps its curve near the root, whips at the tip"),
    ("SOFT", "Soft", "Loose dangling parts with little memory of their shape"),
    ("STIFF", "Stiff", "Springs back to the animation quickly, heavily damped"),
    ("HAIR_STRAIGHT_LONG", "Hair: Straight Long", "Long straight strands, exact lengths, free "
     "below the scalp"),
    ("HAIR_CURLY", "Hair: Curly", "Curls keep their shape (local shape) while they bounce"),
    ("HAIR_SHORT_STIFF", "Hair: Short Stiff", "Short hair or fur that springs back quickly"),
    ("HAIR_BRAID", "Hair: Braid / Ponytail", "A rope of hair that keeps its weave and swings "
     "as a whole"),
    ("HAIR_UNDERWATER", "Hair: Underwater", "Buoyant hair: reversed gravity, heavy drag, only "
     "the scalp part of the shape kept"),
)


def apply_preset(settings, preset: str) -> None:
    """Copy the preset's values onto a ``WaftSetupSettings`` (or anything with those attributes)."""
    try:
        values = PRESETS[preset]
    except KeyError:
        raise ValueError(
            f"unknown Waft preset {preset!r}; expected one of {sorted(PRESETS)}") from None
    for name, value in values.items():
        setattr(settings, name, value)


# Every physics setting of a chain or hair setup, what a user's preset stores (not the space
# bone: a bone name belongs to one rig).
USER_PRESET_VALUES = (
    "shape_stiffness", "shape_decay", "damping", "gravity_factor", "radius",
    "stretch_compliance", "ftl_damping", "use_bending", "bend_compliance", "use_tether",
    "max_distance", "world_motion_fraction",
    "wind_direction", "wind_speed", "wind_turbulence", "wind_gust", "wind_direction_variation",
    "wind_tangent_response", "wind_strand_variation", "wind_seed", "drag",
    "local_stiffness", "shape_range", "shock_propagation", "voxel_friction", "voxel_resolution",
)

PRESET_KIND = PresetKind(
    key="chains", label="Chain and Hair Presets", subdir="waft/chains", owner="waft",
    values=USER_PRESET_VALUES, builtin=PRESET_ITEMS, apply_operator="waft.apply_preset",
    apply_property="preset")
