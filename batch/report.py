"""What the batch did, per shot: JSON lines for machines, a table for people."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

# Statuses: ok (baked and saved), skipped (unchanged since its last bake), failed (the bake
# refused the file), timeout and crashed (after every retry).
FAILED = ("failed", "timeout", "crashed")


@dataclass
class ShotResult:
    """One line of the report."""

    shot: str
    blend: str
    output: str
    status: str
    seconds: float = 0.0
    attempts: int = 0
    setups: list = field(default_factory=list)
    bones: int = 0
    frames: int = 0
    error: str = ""
    blender: str = ""
    host: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def write_jsonl(results: list[ShotResult], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.to_json() + "\n" for r in results), encoding="utf-8")


def read_jsonl(path: Path) -> list[ShotResult]:
    return [ShotResult(**json.loads(line))
            for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def summary_table(results: list[ShotResult], wall_s: float) -> str:
    width = max([len("shot")] + [len(r.shot) for r in results])
    lines = [f"{'shot':<{width}}  {'status':<8} {'seconds':>8} {'tries':>5} {'bones':>6} "
             f"{'frames':>6}  setups / error",
             "-" * (width + 60)]
    for r in results:
        detail = r.error.splitlines()[0][:120] if r.error else ", ".join(r.setups)
        lines.append(f"{r.shot:<{width}}  {r.status:<8} {r.seconds:8.2f} {r.attempts:5d} "
                     f"{r.bones:6d} {r.frames:6d}  {detail}")
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "skipped", *FAILED)}
    done = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    lines.append(f"{len(results)} shots in {wall_s:.1f} s: {done}")
    return "\n".join(lines)
