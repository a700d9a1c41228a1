"""The animation target of each baked ragdoll, kept for the viewport (seed 004 draws the target
pose as red bodies beside the simulated ones: where the motors pull, and how far the ragdoll
strays from it).

The bake samples the target (the user's animation, Waft's result muted) for every frame; its
body frames are remembered here per armature (by name), in Blender units, when the bake is
written, and forgotten by *Clear Bake* or when another file is opened. They live in memory
only: after reopening a file, bake again to see them.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...core.shape_outline import capsules_outline


@dataclass(frozen=True)
class Target:
    frame_start: int
    matrix: np.ndarray  # (F, N, 4, 4) world body frames (head, +Y the bone axis), Blender units
    length: np.ndarray  # (N,) Blender units
    radius: np.ndarray  # (N,) Blender units


_targets: dict[str, Target] = {}


def remember(name: str, *, frame_start: int, matrix: np.ndarray, length: np.ndarray,
             radius: np.ndarray, unit: float) -> None:
    """Keep armature ``name``'s target body frames (metres, as the bake samples them)."""
    matrix = np.array(matrix, dtype=np.float64)
    matrix[..., :3, 3] /= unit
    _targets[name] = Target(frame_start=int(frame_start), matrix=matrix,
                            length=np.asarray(length, dtype=np.float64) / unit,
                            radius=np.asarray(radius, dtype=np.float64) / unit)


def forget(name: str) -> None:
    _targets.pop(name, None)


def target_lines(name: str, frame: int) -> np.ndarray | None:
    """(N, 2, 3) capsule outlines of armature ``name``'s target bodies at ``frame`` (world,
    Blender units), None when none is kept for that frame."""
    target = _targets.get(name)
    if target is None:
        return None
    i = int(frame) - target.frame_start
    if not 0 <= i < len(target.matrix):
        return None
    heads = target.matrix[i, :, :3, 3]
    return capsules_outline(heads, heads + target.matrix[i, :, :3, 1] * target.length[:, None],
                            target.radius)


@bpy.app.handlers.persistent
def _on_load(*_args) -> None:
    _targets.clear()  # another file's armatures


def register() -> None:
    bpy.app.handlers.load_post.append(_on_load)


def unregister() -> None:
    if _on_load in bpy.app.handlers.load_post:
        bpy.app.handlers.load_post.remove(_on_load)
    _targets.clear()
