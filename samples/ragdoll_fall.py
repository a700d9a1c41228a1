"""Sample: a character stumbling over steps into a wall, then falling free (seed 004's
stormtrooper).

A 17-bone mannequin (capsule meshes on its bones) plays a keyed "run and fall forward"
animation that ignores the world: its feet go through two steps and its hips through a wall.
As a ragdoll its hips are locked to the animation (all six degrees of freedom, still
colliding) and every other body follows with strong motors: the feet land on the steps instead
of passing through, and when the wall holds the hips back more than the fall threshold (0.2 m)
from their target the lock releases for good and the body falls free to the ground.
"""

from __future__ import annotations

import math

import bpy
from mathutils import Matrix, Vector

from _common import (
    add_camera_and_light,
    armature_from_bones,
    new_object,
    parent_to_bone,
    set_color,
    setup_workbench,
    tube_mesh,
)

NAME = "ragdoll_fall"
DESCRIPTION = "Mannequin over steps into a wall: collides, then falls free past the threshold"
FPS = 24
FRAMES = 84
FALL_THRESHOLD = 0.2
WALL_FRONT = -2.4  # world Y of the wall's face (the character runs toward -Y)
SHEET_FRAMES = (1, 14, 26, 34, 40, 48, 60, 84)
# name, head, tail, parent, capsule radius (metres; Z up, facing -Y)
BONES = (
    ("hips", (0.0, 0.0, 0.95), (0.0, 0.0, 1.05), None, 0.12),
    ("spine", (0.0, 0.0, 1.05), (0.0, 0.0, 1.20), "hips", 0.10),
    ("chest", (0.0, 0.0, 1.20), (0.0, 0.0, 1.40), "spine", 0.11),
    ("neck", (0.0, 0.0, 1.40), (0.0, 0.0, 1.50), "chest", 0.05),
    ("head", (0.0, 0.0, 1.50), (0.0, 0.0, 1.72), "neck", 0.10),
    ("upper_arm.L", (0.18, 0.0, 1.38), (0.18, 0.0, 1.10), "chest", 0.045),
    ("forearm.L", (0.18, 0.0, 1.10), (0.18, 0.0, 0.85), "upper_arm.L", 0.04),
    ("hand.L", (0.18, 0.0, 0.85), (0.18, 0.0, 0.75), "forearm.L", 0.035),
    ("upper_arm.R", (-0.18, 0.0, 1.38), (-0.18, 0.0, 1.10), "chest", 0.045),
    ("forearm.R", (-0.18, 0.0, 1.10), (-0.18, 0.0, 0.85), "upper_arm.R", 0.04),
    ("hand.R", (-0.18, 0.0, 0.85), (-0.18, 0.0, 0.75), "forearm.R", 0.035),
    ("thigh.L", (0.10, 0.0, 0.95), (0.10, 0.0, 0.52), "hips", 0.07),
    ("shin.L", (0.10, 0.0, 0.52), (0.10, 0.0, 0.12), "thigh.L", 0.05),
    ("foot.L", (0.10, 0.0, 0.12), (0.10, -0.15, 0.05), "shin.L", 0.04),
    ("thigh.R", (-0.10, 0.0, 0.95), (-0.10, 0.0, 0.52), "hips", 0.07),
    ("shin.R", (-0.10, 0.0, 0.52), (-0.10, 0.0, 0.12), "thigh.R", 0.05),
    ("foot.R", (-0.10, 0.0, 0.12), (-0.10, -0.15, 0.05), "shin.R", 0.04),
)


def _mannequin(scene):
    rig = armature_from_bones("Mannequin", (row[:4] for row in BONES))
    bpy.context.view_layer.update()
    for name, head, tail, _, radius in BONES:
        mesh = tube_mesh(f"Mannequin {name}", [(0.0, 0.0, 0.0), tuple(Vector(tail) - Vector(head))],
                         [radius, radius * 0.9], sides=12)
        ob = new_object(f"Mannequin.{name}", mesh)
        ob.matrix_world = Matrix.Translation(head)
        set_color(ob, (0.85, 0.35, 0.3, 1.0))
        parent_to_bone(ob, rig, name)
    for pb in rig.pose.bones:
        pb.rotation_mode = "XYZ"
    return rig


def _key(rig, bone: str, frame: int, angle: float) -> None:
    """Key a rotation of ``angle`` about the WORLD X axis (+ swings a hanging limb backward,
    tips the upright hips forward), converted to the bone's rest frame."""
    rest = rig.data.bones[bone].matrix_local.to_3x3()
    local = rest.inverted() @ Matrix.Rotation(angle, 3, "X") @ rest
    pb = rig.pose.bones[bone]
    pb.rotation_euler = local.to_euler("XYZ")
    pb.keyframe_insert("rotation_euler", frame=frame)


def _animate(rig) -> None:
    """Run toward -Y (1.5 m/s) with swinging legs and arms, tipping forward from frame 30."""
    hips = rig.pose.bones["hips"]
    to_local = rig.data.bones["hips"].matrix_local.to_3x3().inverted()
    for frame in range(1, FRAMES + 1):
        t = (frame - 1) / FPS
        stride = math.sin(2.0 * math.pi * t / 0.7)
        tip = min(max((frame - 30) / 20.0, 0.0), 1.0) ** 2  # 0 → 1 over frames 30–50
        hips.location = to_local @ Vector((0.0, -1.5 * t, -0.6 * tip))
        hips.keyframe_insert("location", frame=frame)
        _key(rig, "hips", frame, 0.5 * math.pi * tip)
        _key(rig, "thigh.L", frame, 0.6 * stride)
        _key(rig, "thigh.R", frame, -0.6 * stride)
        _key(rig, "shin.L", frame, 0.5 * (1.0 + stride))
        _key(rig, "shin.R", frame, 0.5 * (1.0 - stride))
        _key(rig, "upper_arm.L", frame, -0.5 * stride - 1.2 * tip)
        _key(rig, "upper_arm.R", frame, 0.5 * stride - 1.2 * tip)
        _key(rig, "forearm.L", frame, -0.5)
        _key(rig, "forearm.R", frame, -0.5)


def _box(name: str, center, half_extents, color) -> None:
    """A Waft box collider empty and a matching visible cube."""
    empty = new_object(f"Collider.{name}", None)
    empty.empty_display_type = "CUBE"
    empty.empty_display_size = 1.0
    empty.location = center
    empty.scale = half_extents
    empty.waft_collider.enabled = True
    empty.waft_collider.friction = 0.5
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=center)
    cube = bpy.context.active_object
    cube.name = name
    cube.scale = half_extents
    set_color(cube, color)


def build_scene():
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    scene.frame_start, scene.frame_end = 1, FRAMES
    rig = _mannequin(scene)
    _animate(rig)
    bpy.context.view_layer.objects.active = rig
    rig.select_set(True)
    bpy.ops.waft.ragdoll_create(source="HUMANOID")
    for name, _, _, _, radius in BONES:
        body = rig.pose.bones[name].waft_ragdoll
        body.radius = radius
        body.motor_strength = 0.9
        body.motor_damping = 0.8
        body.joint_damping = 2.0
        body.friction = 0.4
    settings = rig.waft_ragdoll
    settings.root_lock = True
    settings.fall_threshold = FALL_THRESHOLD
    settings.use_ground = True
    settings.ground_height = 0.0
    settings.iterations = 6
    stone = (0.7, 0.7, 0.72, 1.0)
    _box("Step1", (0.0, -1.0, 0.075), (0.8, 0.3, 0.075), stone)
    _box("Step2", (0.0, -1.6, 0.15), (0.8, 0.3, 0.15), stone)
    # A thick wall, as a real one is (the contacts' sweep also stops fast bodies at thin ones).
    _box("Wall", (0.0, WALL_FRONT - 0.4, 1.0), (1.2, 0.4, 1.0), (0.6, 0.65, 0.75, 1.0))
    bpy.ops.mesh.primitive_plane_add(size=8.0, location=(0.0, -1.5, 0.0))
    set_color(bpy.context.active_object, (0.45, 0.47, 0.5, 1.0))
    target = Vector((0.0, -1.4, 0.7))
    add_camera_and_light(location=target + Vector((4.8, -0.2, 1.4)), target=target, lens=35.0)
    setup_workbench()
    scene.frame_set(1)
    return scene


def check(scene, report) -> None:
    """Falls past the threshold at the wall; never through it; ends on the ground."""
    setup = report.systems["ragdoll"].setups[0]
    if setup.fell_at is None:
        raise RuntimeError("the root lock never released: the wall did not stop the hips")
    rig = scene.objects["Mannequin"]
    front = []
    for frame in range(1, FRAMES + 1):
        scene.frame_set(frame)
        front.append(min((rig.matrix_world @ pb.head).y for pb in rig.pose.bones))
    if min(front) < WALL_FRONT - 0.05:
        raise RuntimeError(f"a body went through the wall (y = {min(front):.3f})")
    scene.frame_set(FRAMES)
    hips = rig.matrix_world @ rig.pose.bones["hips"].head
    if hips.z > 0.6:  # standing height is 0.95; sitting against the wall or lying is lower
        raise RuntimeError(f"the hips did not fall (z = {hips.z:.2f} at the end)")
    # It falls where it hit the wall: a body thrown off the wall or along it (the root lock
    # once turned every limb with the hips and threw it 3 m) is energy from nowhere.
    if hips.y - WALL_FRONT > 1.0 or abs(hips.x) > 1.0:
        raise RuntimeError(f"the body ended {hips.y - WALL_FRONT:.2f} m from the wall, "
                           f"{hips.x:.2f} m sideways")
