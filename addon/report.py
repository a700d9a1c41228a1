"""What a system's bake did: the fields every ``SystemReport`` has (addon/systems.py protocol)."""

from __future__ import annotations

from dataclasses import dataclass, field


def timings(report) -> str:
    """"sample … s, solve … s, write … s" of a report's phase times (seconds)."""
    return (f"sample {report.sample_s:.2f} s, solve {report.solve_s:.2f} s, "
            f"write {report.write_s:.2f} s")


@dataclass(kw_only=True)
class ArmatureReport:
    """One baked armature (or cage) of a system that writes an action: subclasses add their
    counts; built by keyword."""

    name: str
    fcurves: int = 0
    action: str = ""


@dataclass
class SystemReport:
    """Base of the systems' reports; subclasses set ``name``'s default and add their own
    fields and ``summary()``."""

    name: str = ""
    setups: list = field(default_factory=list)
    bones: int = 0
    particles: int = 0
    frames: int = 0
    sample_s: float = 0.0
    solve_s: float = 0.0
    write_s: float = 0.0
