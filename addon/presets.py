"""Named starting points for a setup's settings, applied by ``waft.apply_preset``.

Only the settings that give a preset its character are listed; everything else keeps the
user's value. Compliances are XPBD compliances in m/N (0 = rigid), damping and drag are per
second, so a preset means the same thing at any frame rate.
"""

PRESETS: dict[str, dict[str, float]] = {
    # Long, light strands: little shape memory, so the hair swings and settles under gravity.
    "PONYTAIL": {
        "shape_stiffness": 0.05, "shape_decay": 1.0, "damping": 1.5,
        "bend_compliance": 0.02, "drag": 0.5, "gravity_factor": 1.0,
    },
    # A tail keeps its groomed curve near the root and whips at the tip.
    "TAIL": {
        "shape_stiffness": 0.3, "shape_decay": 0.5, "damping": 2.0,
        "bend_compliance": 0.005, "drag": 0.3, "gravity_factor": 1.0,
    },
    # Cloth-like dangling parts: almost no shape memory, soft bending.
    "SOFT": {
        "shape_stiffness": 0.02, "shape_decay": 2.0, "damping": 0.5,
        "bend_compliance": 0.1, "drag": 0.8, "gravity_factor": 1.0,
    },
    # Antennae, stiff ears: strong pull back to the animation, heavy damping.
    "STIFF": {
        "shape_stiffness": 0.5, "shape_decay": 0.2, "damping": 4.0,
        "bend_compliance": 0.001, "drag": 0.2, "gravity_factor": 1.0,
    },
}

PRESET_ITEMS = (
    ("PONYTAIL", "Ponytail", "Long hair strands that swing freely and settle under gravity"),
    ("TAIL", "Tail", "Keeps its curve near the root, whips at the tip"),
    ("SOFT", "Soft", "Loose dangling parts with little memory of their shape"),
    ("STIFF", "Stiff", "Springs back to the animation quickly, heavily damped"),
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
