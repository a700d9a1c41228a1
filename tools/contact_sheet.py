"""Render a few frames of a scene and compose them into one contact-sheet PNG; render a short
animated preview (animated WebP) of the whole range.

The sheet is composed with NumPy from the rendered images read back through ``bpy.data.images``
(``pixels.foreach_get``) and written through a new Blender image. The animation is encoded by
Pillow (installed by tools/bootstrap.sh): Blender writes videos, not animated images a README
can show.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import bpy
import numpy as np

GAP = 4  # pixels of background between tiles
BACKGROUND = (1.0, 1.0, 1.0, 1.0)


def _read_pixels(path: Path) -> np.ndarray:
    """(height, width, 4) float32, top row first."""
    image = bpy.data.images.load(str(path))
    try:
        width, height = image.size
        buf = np.empty(width * height * 4, np.float32)
        image.pixels.foreach_get(buf)
    finally:
        bpy.data.images.remove(image)
    return buf.reshape(height, width, 4)[::-1]  # Blender stores the bottom row first


def render_frames(scene, frames: Sequence[int], directory: Path) -> list[Path]:
    scene.render.image_settings.file_format = "PNG"
    paths = []
    for frame in frames:
        scene.frame_set(frame)
        path = directory / f"frame_{frame:04d}.png"
        scene.render.filepath = str(path)
        bpy.ops.render.render(write_still=True)
        if not path.is_file():
            raise RuntimeError(f"rendering frame {frame} wrote no image at {path}")
        paths.append(path)
    return paths


def compose(tiles: Sequence[np.ndarray], *, columns: int) -> np.ndarray:
    """Tiles (h, w, 4) top-down, row-major placement, GAP pixels apart; returns top-down."""
    height, width = tiles[0].shape[:2]
    rows = math.ceil(len(tiles) / columns)
    sheet = np.empty(
        (rows * height + (rows + 1) * GAP, columns * width + (columns + 1) * GAP, 4), np.float32
    )
    sheet[:] = BACKGROUND
    for i, tile in enumerate(tiles):
        r, c = divmod(i, columns)
        y, x = GAP + r * (height + GAP), GAP + c * (width + GAP)
        sheet[y : y + height, x : x + width] = tile
    return sheet


def save_png(pixels_top_down: np.ndarray, path: Path) -> None:
    height, width = pixels_top_down.shape[:2]
    image = bpy.data.images.new("WaftContactSheet", width, height, alpha=False)
    try:
        image.pixels.foreach_set(np.ascontiguousarray(pixels_top_down[::-1]).ravel())
        image.filepath_raw = str(path)
        image.file_format = "PNG"
        image.save()
    finally:
        bpy.data.images.remove(image)


def render_contact_sheet(scene, frames: Sequence[int], path: Path, *, columns: int = 4) -> Path:
    """Render ``frames`` of ``scene`` and write them as one PNG at ``path``; restores the frame."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    current = scene.frame_current
    workdir = Path(tempfile.mkdtemp(prefix="waft-render-"))
    try:
        tiles = [_read_pixels(p) for p in render_frames(scene, frames, workdir)]
        save_png(compose(tiles, columns=min(columns, len(tiles))), path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        scene.frame_set(current)
    return path


# Animated previews: small enough for a README (about 150-400 kB per sample).
PREVIEW_FRAMES = 48  # at most; longer ranges are sampled evenly
PREVIEW_WIDTH = 320


def preview_frames(frame_start: int, frame_end: int, count: int = PREVIEW_FRAMES) -> list[int]:
    """Up to ``count`` frames evenly over the range, first and last included, no repeats."""
    total = frame_end - frame_start + 1
    if total <= count:
        return list(range(frame_start, frame_end + 1))
    return sorted({round(frame_start + i * (total - 1) / (count - 1)) for i in range(count)})


def _to_rgb8(pixels: np.ndarray) -> np.ndarray:
    """Float RGBA (display-referred, as Workbench writes PNGs) to 8-bit RGB."""
    return np.clip(np.rint(pixels[..., :3] * 255.0), 0, 255).astype(np.uint8)


def render_animation(scene, path: Path, *, frames: Sequence[int] | None = None,
                     width: int = PREVIEW_WIDTH) -> Path:
    """Render ``frames`` (default: the range, sampled) at ``width`` pixels and write an animated
    WebP that plays them at the scene's speed; restores the frame and the resolution."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = list(frames or preview_frames(scene.frame_start, scene.frame_end))
    render = scene.render
    kept = (render.resolution_percentage, scene.frame_current)
    render.resolution_percentage = max(1, min(100, round(100 * width / render.resolution_x)))
    workdir = Path(tempfile.mkdtemp(prefix="waft-preview-"))
    try:
        images = [Image.fromarray(_to_rgb8(_read_pixels(p)))
                  for p in render_frames(scene, frames, workdir)]
        fps = render.fps / render.fps_base
        step = (frames[-1] - frames[0]) / max(len(frames) - 1, 1)  # frames per image
        duration_ms = max(20, round(1000.0 * step / fps))
        images[0].save(path, save_all=True, append_images=images[1:], duration=duration_ms,
                       loop=0, quality=70, method=4)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        render.resolution_percentage, current = kept
        scene.frame_set(current)
    return path
