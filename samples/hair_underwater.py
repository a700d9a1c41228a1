"""Sample: buoyant hair under water (seed 002's underwater variant).

The curly-wind head rig with long straight guides and the ``HAIR_UNDERWATER`` preset: gravity
reversed (buoyancy), heavy drag, only the scalp part of the global shape kept (shape range), so
the hair floats up and drifts with the head's motion and a slow current.
"""

from __future__ import annotations

import bpy
import hair_curly_wind as base
from mathutils import Vector

from _common import add_camera_and_light, setup_workbench

NAME = "hair_underwater"
DESCRIPTION = "buoyant hair drifting under water"
FPS = base.FPS
FRAME_START, FRAME_END = 1, 96
# The groom hangs down and out; buoyancy (-0.3 g against drag 4) lifts it at well under 1 m/s, so
# the strands need about two seconds to float up. The scalp part keeps each first bone near the
# groom's direction and the preset's bending turns the rest up from it (first joints 37, 24,
# 15, 9° on average; bending off, the first joint alone took it: 137°, up to 178°). With one
# second of pre-roll the tips still rose 8 cm over the first 13 frames; 2.5 s open the shot on
# settled strands (frame 1's mean joint bends within 0.1° of frame 96's).
PREROLL = 60
CHAINS, BONES, SEGMENT = 14, 8, 0.05


def straight_points(chain: int, chains: int, bones: int, segment: float):
    import math
    angle = 2 * math.pi * chain / chains
    out = Vector((math.cos(angle), math.sin(angle), 0.0))
    root = base.HEAD_CENTER + (base.HEAD_RADIUS + 0.012) * (out * 0.75 + Vector((0, 0, 0.66)))
    direction = (out * 0.7 + Vector((0.0, 0.0, -1.0))).normalized()
    return [root + direction * segment * k for k in range(bones + 1)]


def build_scene():
    scene = bpy.context.scene
    base.scene_settings(scene)
    scene.frame_end = FRAME_END
    rig, points = base.build_head_rig(chains=CHAINS, bones=BONES, segment=SEGMENT,
                                      points_of=straight_points)
    base.animate_head(rig)
    rig.waft.enabled = True
    bpy.context.view_layer.objects.active = rig
    bpy.ops.waft.apply_preset(preset="HAIR_UNDERWATER")
    rig.waft.radius = 0.008
    rig.waft.wind_direction = (0.0, 1.0, 0.2)  # a slow current
    rig.waft.wind_speed = 0.3
    rig.waft.wind_gust = 0.5
    base.add_body(rig, points, hair_radius=0.01)
    base.add_colliders(rig)
    add_camera_and_light(location=(1.2, -1.0, 1.8), target=(0.0, 0.0, 1.55), lens=45.0)
    setup_workbench()
    scene.world.color = (0.2, 0.4, 0.55)
    scene.frame_set(FRAME_START)
    return scene


def check(scene, result) -> None:
    """Buoyancy: by the end the strand tips float well above where the groom put them."""
    rig = scene.objects["Rig"]
    mw = rig.matrix_world
    scene.frame_set(FRAME_END)
    rise = 0.0
    for c in range(CHAINS):
        first = rig.data.bones[base.hair_bone(c, 0)]
        last = rig.data.bones[base.hair_bone(c, BONES - 1)]
        groomed = (mw @ last.tail_local).z - (mw @ first.head_local).z
        pose = rig.pose.bones
        now = (mw @ pose[last.name].tail).z - (mw @ pose[first.name].head).z
        rise += (now - groomed) / CHAINS
    if rise < 0.1:
        raise RuntimeError(f"underwater hair did not float up (mean tip rise {rise:.3f} m)")
