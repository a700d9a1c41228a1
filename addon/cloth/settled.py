"""Capture Settled Pose for a cloth cage: simulate it from the scene's start frame to a chosen
frame and save its state there as a settled pose (a physics Pose Track, as cutscene cloth tools
keep them), which the bake restores at the start and after cuts and resets
(``core.cloth.settled``).

The pose is a point attribute of the cage mesh (``addon/settled.py``: each vertex's offset from
the skinned cage in the character space's axes, Blender units).
"""

from __future__ import annotations

import numpy as np

from ...core.cloth import capture_settled_offsets
from ...core.errors import SetupError
from ..preview import suspended
from ..progress import run_to_end
from ..sampling import at_first_frame
from ..settled import Captured, capture_frames, store_point_offsets
from . import reading, system


def capture_settled_pose(scene, cage, *, frame: int | None = None, settings) -> Captured:
    """Simulate ``cage`` alone (without any settled pose) from ``scene.frame_start`` to
    ``frame`` (the current frame when None) and store its state there on the cage; turns its
    Settled Pose on. Raises ``SetupError`` (the file unchanged) when the cage cannot bake."""
    start, frame = capture_frames(scene, f"Cloth cage '{cage.name}'", frame)
    with at_first_frame(scene, start):  # (as the bake reads it)
        read = reading.read_cloth(scene, [cage], start, frame, use_settled=False)
    if read is None:
        raise SetupError(f"Object '{cage.name}' is not an enabled Waft cloth cage")
    with suspended():  # the animation is sampled, never the live preview's pose
        run = run_to_end(system.simulate(read, scene, settings=settings, sample_chunk=1 << 30))
    offset = capture_settled_offsets(run.inputs.model, run.inputs.drive, run.result.positions,
                                     frame - start) / read.unit_scale
    store_point_offsets(cage.data, offset)
    settings_of_cage = cage.waft_cloth
    settings_of_cage.settled_frame = frame
    settings_of_cage.settled_vertices = len(cage.data.vertices)
    settings_of_cage.use_settled_pose = True
    return Captured(name=cage.name, frame=frame, frames=frame - start + 1,
                    largest_offset=float(np.linalg.norm(offset, axis=1).max()))
