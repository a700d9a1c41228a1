"""The main job's animated previews (tools/contact_sheet.py): every frame they claim, at the
scene's speed, showing what moved."""

from __future__ import annotations

import bpy
import numpy as np
import pytest

import contact_sheet  # tools/

PIL = pytest.importorskip("PIL.Image", reason="previews are encoded by Pillow (bootstrap.sh)")


@pytest.mark.parametrize(("start", "end", "count", "expected"), [
    (1, 10, 48, list(range(1, 11))),
    (-5, 2, 4, [-5, -3, 0, 2]),
])
def test_preview_frames_cover_the_range(start, end, count, expected):
    assert contact_sheet.preview_frames(start, end, count) == expected


def test_long_ranges_are_sampled_evenly_end_to_end():
    frames = contact_sheet.preview_frames(1, 1000)
    assert len(frames) == contact_sheet.PREVIEW_FRAMES
    assert frames[0] == 1 and frames[-1] == 1000 and frames == sorted(set(frames))


def test_render_animation_writes_a_moving_webp(scene, tmp_path):
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_x, scene.render.resolution_y = 160, 120
    scene.render.fps, scene.render.fps_base = 25, 1.0
    scene.frame_start, scene.frame_end = 1, 5
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    cube = bpy.context.active_object
    for frame, x in ((1, -2.0), (5, 2.0)):
        cube.location.x = x
        cube.keyframe_insert("location", index=0, frame=frame)
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(camera)
    camera.location, camera.rotation_euler = (0.0, -8.0, 0.0), (np.pi / 2, 0.0, 0.0)
    scene.camera = camera
    scene.frame_set(3)
    path = contact_sheet.render_animation(scene, tmp_path / "cube.webp", width=80)
    assert scene.frame_current == 3 and scene.render.resolution_percentage == 100  # restored
    image = PIL.open(path)
    assert image.n_frames == 5 and image.size == (80, 60)
    image.seek(0)
    first = np.asarray(image.convert("L"), dtype=float)
    assert image.info["duration"] == 40  # each image shows for 1/25 s: the scene's speed
    image.seek(4)
    last = np.asarray(image.convert("L"), dtype=float)
    # The cube crossed the picture: the pixels unlike the background (its corner) moved from
    # the left half to the right.
    columns = np.arange(first.shape[1])

    def cube_centre(image_array):
        return columns[(abs(image_array - image_array[0, 0]) > 30).any(axis=0)].mean()

    dark_first, dark_last = cube_centre(first), cube_centre(last)
    assert dark_first < 40 < dark_last
