"""The shot list: .blend files, or text/JSON lists of them with per-shot frames and objects.

Text list (one shot per line; ``#`` starts a comment; shell quoting for spaces)::

    shots/sh010.blend                      # the file's own frame range and every Waft setup
    shots/sh020.blend 101 148              # frames 101-148
    shots/sh030.blend 1 96 Hero Hero_hair  # frames 1-96, only these objects

JSON list: ``["sh010.blend", {"blend": "sh020.blend", "frames": [101, 148],
"objects": ["Hero"], "scene": "Scene", "name": "sh020_hero"}]``. Relative paths are relative to
the list file. A shot's ``name`` (default: the file name without ``.blend``) names its output
``<out>/<name>.blend`` and its line in the report, so two shots may not share one.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import BatchError


@dataclass(frozen=True)
class Shot:
    """One .blend to bake; ``frames``/``objects``/``scene`` None mean the file's own."""

    blend: Path
    name: str = ""
    frames: tuple[int, int] | None = None
    objects: tuple[str, ...] | None = None
    scene: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "blend", Path(self.blend).expanduser().resolve())
        if not self.name:
            object.__setattr__(self, "name", self.blend.stem)
        if self.frames is not None:
            start, end = (int(f) for f in self.frames)
            if end < start:
                raise BatchError(f"shot '{self.name}': frame range {start}-{end} ends before "
                                 "it starts")
            object.__setattr__(self, "frames", (start, end))
        if self.objects is not None:
            object.__setattr__(self, "objects", tuple(self.objects))


def _from_line(line: str, base: Path, where: str) -> Shot | None:
    tokens = shlex.split(line, comments=True)
    if not tokens:
        return None
    frames = None
    rest = tokens[1:]
    if len(rest) >= 2 and all(t.lstrip("-").isdigit() for t in rest[:2]):
        frames, rest = (int(rest[0]), int(rest[1])), rest[2:]
    elif rest and rest[0].lstrip("-").isdigit():
        raise BatchError(f"{where}: a frame range is two numbers, START END")
    return Shot(base / tokens[0], frames=frames, objects=tuple(rest) or None)


def _from_json(entry, base: Path, where: str) -> Shot:
    if isinstance(entry, str):
        return Shot(base / entry)
    if not isinstance(entry, dict) or "blend" not in entry:
        raise BatchError(f"{where}: each shot is a path or an object with \"blend\"")
    unknown = set(entry) - {"blend", "name", "frames", "objects", "scene"}
    if unknown:
        raise BatchError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    frames = entry.get("frames")
    if frames is not None and len(frames) != 2:
        raise BatchError(f"{where}: \"frames\" is [START, END]")
    return Shot(base / entry["blend"], name=entry.get("name", ""), frames=frames,
                objects=entry.get("objects"), scene=entry.get("scene"))


def _read_list(path: Path) -> list[Shot]:
    base = path.parent
    if path.suffix.lower() == ".json":
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise BatchError(f"{path}: not valid JSON ({error})") from error
        if not isinstance(entries, list):
            raise BatchError(f"{path}: a JSON shot list is a list")
        return [_from_json(e, base, f"{path} entry {i + 1}") for i, e in enumerate(entries)]
    shots = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        shot = _from_line(line, base, f"{path} line {number}")
        if shot is not None:
            shots.append(shot)
    return shots


def read_shots(items: Iterable, *, frames: tuple[int, int] | None = None,
               objects: Iterable[str] | None = None, scene: str | None = None) -> list[Shot]:
    """Shots from .blend paths, list files and ``Shot``s; ``frames``/``objects``/``scene`` fill
    in what a shot does not say. Every file must exist and every name be unique."""
    shots: list[Shot] = []
    for item in items:
        if isinstance(item, Shot):
            shots.append(item)
            continue
        path = Path(item).expanduser()
        if path.suffix.lower() == ".blend":
            shots.append(Shot(path))
        elif path.is_file():
            shots.extend(_read_list(path))
        else:
            raise BatchError(f"{path}: no such shot list (give .blend files or a .txt/.json list)")
    objects = tuple(objects) if objects else None
    shots = [replace(s, frames=s.frames or frames, objects=s.objects or objects,
                     scene=s.scene or scene) for s in shots]
    if not shots:
        raise BatchError("no shots to bake")
    seen: dict[str, Shot] = {}
    for shot in shots:
        if not shot.blend.is_file():
            raise BatchError(f"shot '{shot.name}': {shot.blend} does not exist")
        if shot.name in seen:
            raise BatchError(f"two shots are named '{shot.name}' ({seen[shot.name].blend} and "
                             f"{shot.blend}); give one a \"name\" in a JSON list")
        seen[shot.name] = shot
    return shots
