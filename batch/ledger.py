"""Incremental batches: what each shot was last baked from, so an unchanged shot is skipped.

A shot's *input key* hashes everything its result depends on that the batch can see: the .blend's
bytes (SHA-256), the Waft extension (its files' contents and version, not the zip's timestamps),
the Python that runs Blender, and the bake settings (frames, objects, scene, substep rate,
pre-roll, iterations). The ledger (``STATE/ledger.json``) records, per shot, the key of its last
successful bake and the SHA-256 of the file it wrote. A shot is skipped when its key is the same
and that output is still there, byte for byte; anything else (the animation changed, a new
Waft, the output deleted or edited) bakes it again. Files the shot links (libraries, caches) are
not hashed: ``--force`` re-bakes after changing only those.

With ``--in-place`` the baked file replaces the input, so the key recorded is that of the baked
file: the next run sees exactly it and skips.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

CHUNK = 1 << 20


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def extension_identity(zip_path: str | os.PathLike) -> str:
    """"<id> <version> <sha256 of the member files>": the same for two builds of one source."""
    h = hashlib.sha256()
    with zipfile.ZipFile(zip_path) as zf:
        manifest = tomllib.loads(zf.read("blender_manifest.toml").decode("utf-8"))
        for name in sorted(zf.namelist()):
            h.update(name.encode() + b"\0" + zf.read(name) + b"\0")
    return f"{manifest['id']} {manifest['version']} {h.hexdigest()[:16]}"


@dataclass(frozen=True)
class BakeSettings:
    """Solver overrides for every shot (None: each scene's own Waft settings)."""

    substep_rate: float | None = None
    preroll: int | None = None
    iterations: int | None = None


def input_key(*, blend_sha256: str, shot, settings: BakeSettings, extension: str,
              python: str) -> str:
    """SHA-256 over what a shot's bake depends on (module doc)."""
    described = {"blend": blend_sha256, "frames": shot.frames, "objects": shot.objects,
                 "scene": shot.scene, "settings": asdict(settings), "extension": extension,
                 "python": python}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


class Ledger:
    """``{shot name: {"key", "output", "output_sha256", "result"}}`` in a JSON file, rewritten
    atomically after every successful bake (a batch stopped half-way keeps what it finished)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.entries: dict[str, dict] = {}
        if self.path.is_file():
            self.entries = json.loads(self.path.read_text(encoding="utf-8"))

    def is_current(self, name: str, key: str, output: Path) -> bool:
        entry = self.entries.get(name)
        return (entry is not None and entry["key"] == key and output.is_file()
                and entry["output"] == str(output)
                and file_sha256(output) == entry["output_sha256"])

    def record(self, name: str, *, key: str, output: Path, output_sha256: str,
               result: dict) -> None:
        """``result``: what the bake reported (setups, bones, frames), for a later skip's line."""
        self.entries[name] = {"key": key, "output": str(output), "output_sha256": output_sha256,
                              "result": result}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        part = self.path.with_suffix(".part")
        part.write_text(json.dumps(self.entries, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(part, self.path)
