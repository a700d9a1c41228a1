"""What a system's bake did: the fields every ``SystemReport`` has (addon/systems.py protocol)."""

from __future__ import annotations

from dataclasses import dataclass, field


def timings(report) -> str:
    """"sample … s, solve … s, write … s" of a report's phase times (seconds)."""
    return (f"sample {report.sample_s:.2f} s, solve {report.solve_s:.2f} s, "
            f"write {report.write_s:.2f} s")


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
