"""Sample: the lower half of a jacket on the running humanoid, with ellipsoid thigh colliders
(seed 001, Alan Wake's tweed jacket).

The jacket's lower half is an open ring cage (13 × 6 quads around the back and sides, open at
the front) pinned at the waist and skinned rigidly to ``hips``; ``waft.cloth_add`` puts a bone
on every row but the last and every other column (5 × 7 = 35 bones), and the Tweed fabric
preset sets its stiffness. Thighs push it with ellipsoid colliders (Sphere empties scaled
non-uniformly), as in the seed: fast to test, good enough for cloth around legs.
"""

from __future__ import annotations

import math

import numpy as np
from _cloth_common import (
    add_cloth_setup,
    ellipsoid_collider,
    finish_scene,
    garment,
    import_humanoid,
    missing_humanoid,
    ring_cage,
    skin_cage,
    style_humanoid,
)

NAME = "cloth_jacket"
DESCRIPTION = "open jacket hem (35 bones) around ellipsoid thighs on a running humanoid"
PREROLL = 24
SHEET_FRAMES = (1, 7, 13, 19, 25, 31, 37, 43)
ROWS, COLUMNS = 6, 13
TWEED = (0.42, 0.36, 0.26, 1.0)


def missing_assets() -> str | None:
    return missing_humanoid()


def build_scene():
    import bpy

    scene = bpy.context.scene
    rig, last = import_humanoid(scene, [("hmd-run_foward", 4)])
    scene.frame_start, scene.frame_end = 1, last
    style_humanoid(scene, rig)
    cage, verts = ring_cage("Jacket Cage", center=(0.0, 0.013), rows=ROWS, columns=COLUMNS,
                            top=0.98, spacing=0.07, radius_top=0.16, radius_bottom=0.2,
                            depth=0.8, arc=math.radians(300), start_angle=math.radians(-150))
    skin_cage(cage, rig, "hips", pinned_rows=1, columns=COLUMNS)
    add_cloth_setup(cage, rig, mapping="CREATE", row_step=1, column_step=2, prefix="Jacket")
    bpy.ops.waft.cloth_apply_fabric(fabric="TWEED")
    settings = cage.waft_cloth
    settings.max_distance = 0.2
    settings.world_motion_fraction = 0.25
    for side in ("l", "r"):
        ellipsoid_collider(f"Thigh.{side}", rig, f"upper_leg_{side}", radii=(0.08, 0.09, 0.2))
    garment("Jacket", verts, rig, cage, COLUMNS, closed=False, color=TWEED)
    return finish_scene(scene, rig, offset=(2.0, 1.2, 0.4), height=0.75, lens=40.0)


def check(scene, report) -> None:
    """35 bones were baked and the hem really swings away from the skinned pose."""
    cloth = report.systems["cloth"]
    positions = cloth.positions["Jacket Cage"]
    if cloth.bones != 35:
        raise RuntimeError(f"expected 35 jacket bones, got {cloth.bones}")
    hem = positions[:, (ROWS - 1) * COLUMNS:]
    swing = np.linalg.norm(hem - cloth.reference["Jacket Cage"][:, (ROWS - 1) * COLUMNS:],
                           axis=-1).max()
    if swing < 0.02:
        raise RuntimeError(f"jacket hem barely moved ({swing:.3f} m)")
