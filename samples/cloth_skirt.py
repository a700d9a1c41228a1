"""Sample: a skirt on the walking, then running humanoid, baked as cloth-bones.

Imports the skel-bone humanoid (``../shared/assets/godot_skel_bone_2025``; skipped when it is
missing), plays two walk cycles then three run cycles (root motion moved onto the object so the
cycles repeat in place while the character travels), and builds around its hips:

- a 16 × 6 ring cage (closed quads, top row pinned, skinned rigidly to ``hips``);
- skirt bones made by ``waft.cloth_add`` on the cage's grid (seed 001: every row but the last,
  every other column: 5 × 8 = 40 bones parented to ``hips``);
- a finer skirt mesh skinned to those bones (what renders);
- capsule colliders on both thighs and shins.
"""

from __future__ import annotations

import numpy as np
from _cloth_common import (
    add_cloth_setup,
    capsule_collider,
    finish_scene,
    garment,
    import_humanoid,
    missing_humanoid,
    ring_cage,
    skin_cage,
    style_humanoid,
)

NAME = "cloth_skirt"
DESCRIPTION = "skirt cage driving 40 bones on a walking then running humanoid"
PREROLL = 24
SHEET_FRAMES = (1, 13, 25, 37, 49, 61, 73, 85)
ROWS, COLUMNS = 6, 16
HIPS = (0.0, 0.013)
SKIRT = (0.62, 0.16, 0.22, 1.0)


def missing_assets() -> str | None:
    return missing_humanoid()


def build_scene():
    import bpy

    scene = bpy.context.scene
    rig, last = import_humanoid(scene, [("hmd-walk", 2), ("hmd-run_foward", 3)])
    scene.frame_start, scene.frame_end = 1, last
    style_humanoid(scene, rig)
    cage, verts = ring_cage("Skirt Cage", center=HIPS, rows=ROWS, columns=COLUMNS, top=0.86,
                            spacing=0.075, radius_top=0.15, radius_bottom=0.27, depth=0.85)
    skin_cage(cage, rig, "hips", pinned_rows=1, columns=COLUMNS)
    add_cloth_setup(cage, rig, mapping="CREATE", row_step=1, column_step=2, prefix="Skirt")
    settings = cage.waft_cloth
    settings.damping = 2.0
    settings.world_motion_fraction = 0.3
    settings.max_distance = 0.25
    settings.radius = 0.015
    for side in ("l", "r"):
        capsule_collider(f"Thigh.{side}", rig, f"upper_leg_{side}", radius_a=0.075,
                         radius_b=0.065)
        capsule_collider(f"Shin.{side}", rig, f"lower_leg_{side}", radius_a=0.055,
                         radius_b=0.045, shorten=0.03)
    garment("Skirt", verts, rig, cage, COLUMNS, closed=True, color=SKIRT)
    return finish_scene(scene, rig, offset=(2.2, -1.6, 0.35), height=0.7, lens=40.0)


def check(scene, report) -> None:
    """The skirt bones were keyed and the cloth really moved relative to the hips."""
    cloth = report.systems["cloth"]
    positions = cloth.positions["Skirt Cage"]
    reference = cloth.reference["Skirt Cage"]
    hem = np.arange((ROWS - 1) * COLUMNS, ROWS * COLUMNS)
    swing = np.linalg.norm(positions[:, hem] - reference[:, hem], axis=-1).max()
    settings = scene.objects["Skirt Cage"].waft_cloth
    limit = settings.max_distance * settings.edge_max_distance_scale  # the hem is an edge
    if not 0.02 < swing <= limit + 1e-3:
        raise RuntimeError(f"skirt hem swing {swing:.3f} m outside (0.02, max distance "
                           f"{limit:.3f}]")
    if cloth.bones != 40:
        raise RuntimeError(f"expected 40 skirt bones, got {cloth.bones}")
