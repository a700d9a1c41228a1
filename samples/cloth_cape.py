"""Sample: a cape and two hair ribbons in gusty wind on the walking humanoid.

A 7 × 8 grid cage hangs from the shoulders at the back (top row pinned, skinned rigidly to
``upper_chest``); ``waft.cloth_add`` puts bones on every row but the last and every other
column (7 × 4 = 28 bones). Wind blows from ahead and to the side with turbulence; a capsule on
the spine and ellipsoids on the thighs keep the cape off the body. The Silk preset makes it
light. Two four-bone ribbons tied at the back of the head are rods (``waft.rod_assign``, Cosserat
rods with twist, seed 003) in the same wind.
"""

from __future__ import annotations

import numpy as np
from _cloth_common import (
    add_cloth_setup,
    capsule_collider,
    ellipsoid_collider,
    finish_scene,
    garment,
    import_humanoid,
    missing_humanoid,
    skin_cage,
    style_humanoid,
)

from _common import new_object, set_color

NAME = "cloth_cape"
DESCRIPTION = "cape (28 bones) and two ribbon rods in gusty wind on a walking humanoid"
PREROLL = 24
SHEET_FRAMES = (1, 13, 25, 37, 49, 61, 73, 85)
ROWS, COLUMNS = 8, 7
WIDTH, SPACING = 0.48, 0.085
TOP, BACK = 1.26, 0.11
CAPE = (0.16, 0.22, 0.55, 1.0)
RIBBON = (0.85, 0.7, 0.15, 1.0)
RIBBON_BONES, RIBBON_SEGMENT, RIBBON_WIDTH = 4, 0.05, 0.02
WIND = (2.5, 3.5, 0.0)  # from ahead (-Y) and the left: m/s


def missing_assets() -> str | None:
    return missing_humanoid()


def _cape_cage():
    import bpy

    verts = np.empty((ROWS, COLUMNS, 3))
    for r in range(ROWS):
        for c in range(COLUMNS):
            # Slightly wider at the hem, hanging down the back.
            x = (c / (COLUMNS - 1) - 0.5) * WIDTH * (1.0 + 0.35 * r / (ROWS - 1))
            verts[r, c] = (x, BACK + 0.02 * r, TOP - r * SPACING)
    faces = [(r * COLUMNS + c, r * COLUMNS + c + 1, (r + 1) * COLUMNS + c + 1,
              (r + 1) * COLUMNS + c) for r in range(ROWS - 1) for c in range(COLUMNS - 1)]
    mesh = bpy.data.meshes.new("Cape Cage")
    mesh.from_pydata([tuple(v) for v in verts.reshape(-1, 3)], [], faces)
    mesh.update()
    return new_object("Cape Cage", mesh), verts


def _ribbons(rig) -> None:
    """Two ribbon chains from the back of the head, made rods, with flat strips skinned to
    them."""
    import bpy
    from mathutils import Vector

    view_layer = bpy.context.view_layer
    view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bones = rig.data.edit_bones
    head = bones["head"]
    knot = head.head.lerp(head.tail, 0.2) + Vector((0.0, 0.09, 0.0))  # back of the skull
    strips = []
    for side, x in (("L", 0.03), ("R", -0.03)):
        start, step = knot + Vector((x, 0.0, 0.0)), Vector((x * 4.0, 0.6, -1.0)).normalized()
        parent, names = head, []
        for i in range(RIBBON_BONES):
            bone = bones.new(f"Ribbon.{side}.{i}")
            bone.head = start + step * RIBBON_SEGMENT * i
            bone.tail = start + step * RIBBON_SEGMENT * (i + 1)
            bone.parent, bone.use_connect = parent, i > 0
            parent = bone
            names.append(bone.name)
        strips.append((names, [tuple(start + step * RIBBON_SEGMENT * i)
                               for i in range(RIBBON_BONES + 1)]))
    bpy.ops.object.mode_set(mode="OBJECT")
    for pb in rig.pose.bones:  # PoseBone.select on 5.0, Bone.select before
        target = pb if hasattr(pb, "select") else pb.bone
        target.select = pb.name.startswith("Ribbon.")
    bpy.ops.waft.rod_assign(action="ADD")
    rods = rig.waft_rod
    rods.wind_velocity = WIND
    rods.damping, rods.drag = 0.8, 2.0
    for names, points in strips:
        verts, faces = [], []
        for i, p in enumerate(points):
            verts += [(p[0] - RIBBON_WIDTH, p[1], p[2]), (p[0] + RIBBON_WIDTH, p[1], p[2])]
            if i:
                faces.append((2 * i - 2, 2 * i - 1, 2 * i + 1, 2 * i))
        mesh = bpy.data.meshes.new(names[0])
        mesh.from_pydata(verts, [], faces)
        strip = new_object(names[0] + " strip", mesh)
        for i in range(len(points)):
            group_name = names[min(i, RIBBON_BONES - 1)]
            group = strip.vertex_groups.get(group_name) or strip.vertex_groups.new(
                name=group_name)
            group.add([2 * i, 2 * i + 1], 1.0, "REPLACE")
        strip.modifiers.new("Armature", "ARMATURE").object = rig
        strip.parent = rig
        set_color(strip, RIBBON)


def build_scene():
    import bpy

    scene = bpy.context.scene
    rig, last = import_humanoid(scene, [("hmd-walk", 4)])
    scene.frame_start, scene.frame_end = 1, min(last, 96)
    style_humanoid(scene, rig)
    cage, verts = _cape_cage()
    skin_cage(cage, rig, "upper_chest", pinned_rows=1, columns=COLUMNS)
    add_cloth_setup(cage, rig, mapping="CREATE", row_step=1, column_step=2, prefix="Cape")
    bpy.ops.waft.cloth_apply_fabric(fabric="SILK")
    settings = cage.waft_cloth
    settings.wind_velocity = WIND
    settings.wind_turbulence = 0.6
    settings.wind_seed = 3
    settings.max_distance = 0.6
    capsule_collider("Torso", rig, "spine", radius_a=0.13, radius_b=0.14)
    for side in ("l", "r"):
        ellipsoid_collider(f"Thigh.{side}", rig, f"upper_leg_{side}", radii=(0.08, 0.09, 0.2))
    _ribbons(rig)
    garment("Cape", verts, rig, cage, COLUMNS, closed=False, color=CAPE)
    return finish_scene(scene, rig, offset=(2.4, 1.4, 0.6), height=0.95, lens=40.0)


def check(scene, report) -> None:
    """The wind lifts the cape: its hem sits downwind of where it hangs (+Y and +X)."""
    cloth = report.systems["cloth"]
    if cloth.bones != 28:
        raise RuntimeError(f"expected 28 cape bones, got {cloth.bones}")
    hem = slice((ROWS - 1) * COLUMNS, ROWS * COLUMNS)
    drift = (cloth.positions["Cape Cage"][:, hem] - cloth.reference["Cape Cage"][:, hem])
    mean = drift.mean(axis=(0, 1))
    if mean[1] < 0.05:
        raise RuntimeError(f"the wind does not lift the cape (mean hem drift {mean})")
    rods = report.systems["rod"]
    if rods.bones != 2 * RIBBON_BONES:
        raise RuntimeError(f"expected {2 * RIBBON_BONES} ribbon bones, got {rods.bones}")
