"""Colliders are drawn as they collide: Add Collider makes a capsule of the Size and Radius it
was asked for (it used to draw a sphere of the Size and collide as a 0.5 m-radius capsule), and
the viewport overlay's lines lie on the surface the solvers push particles out of."""

from __future__ import annotations

import sys

import bpy
import numpy as np


def _modules(waft):
    def module(name):
        return sys.modules[f"{waft.__name__}.{name}"]

    return module("addon.overlay"), module("addon.reading"), module("core.colliders")


def _distances(colliders, read, ob, points) -> np.ndarray:
    shapes = colliders.ColliderSet.create(
        names=[read.name], kind=[read.kind], size=[read.size], radius_a=[read.radius_a],
        radius_b=[read.radius_b], friction=[0.0])
    M = np.array(ob.matrix_world)
    _, sd = colliders.shape_normal(read.kind, points, M, np.linalg.inv(M), shapes, 0)
    return sd


def test_an_added_capsule_collides_at_the_size_and_radius_it_shows(scene, waft):
    overlay, reading, colliders = _modules(waft)
    assert bpy.ops.waft.add_collider(shape='CAPSULE', size=0.2, radius=0.04) == {'FINISHED'}
    ob = scene.objects["WaftCollider.Capsule"]
    ob.rotation_euler = (0.4, -0.2, 1.0)
    ob.location = (0.3, 0.1, 1.2)
    bpy.context.view_layer.update()
    read = reading.read_collider(ob)
    assert read.kind == colliders.ColliderKind.CAPSULE
    assert np.allclose((read.size, read.radius_a, read.radius_b), (0.2, 0.04, 0.04), atol=1e-7)
    assert ob.empty_display_type == 'PLAIN_AXES' and ob.empty_display_size == np.float32(0.2)

    segments, _ = overlay.collider_segments(scene)
    points = segments.reshape(-1, 3).astype(np.float64)
    assert np.abs(_distances(colliders, read, ob, points)).max() < 1e-5  # float32 lines
    axis = np.array(ob.matrix_world)[:3, 2]
    along = (points - np.array(ob.location)) @ axis
    assert np.isclose(along.max() - along.min(), 2 * 0.2 + 2 * 0.04, atol=1e-5)


def test_the_overlay_draws_every_kind_on_its_collision_surface(scene, waft):
    overlay, reading, colliders = _modules(waft)
    for shape, display in (('SPHERE', 'SPHERE'), ('BOX', 'CUBE'), ('PLANE', 'SINGLE_ARROW')):
        assert bpy.ops.waft.add_collider(shape=shape, size=0.15) == {'FINISHED'}
        ob = scene.objects[f"WaftCollider.{shape.title()}"]
        assert ob.empty_display_type == display
        ob.scale = (1.0, 1.6, 0.7)  # non-uniform: an ellipsoid, a stretched box
        ob.rotation_euler = (0.3, 0.5, -0.4)
    bpy.context.view_layer.update()
    segments, _ = overlay.collider_segments(scene)
    count = 0
    for ob in scene.objects:
        read = reading.read_collider(ob)
        from_core = sys.modules[f"{waft.__name__}.core.collider_outline"].collider_outline(
            read.kind, np.array(ob.matrix_world), size=read.size)
        points = from_core.reshape(-1, 3)
        assert np.abs(_distances(colliders, read, ob, points)).max() < 1e-7  # float32 matrices
        count += len(from_core)
    assert len(segments) == count  # the overlay draws them all

    scene.objects["WaftCollider.Box"].waft_collider.enabled = False
    assert len(overlay.collider_segments(scene)[0]) < count  # and only the enabled ones
    assert scene.waft.show_collider_shapes  # on by default; the draw handler is registered
    assert overlay._handle is not None
