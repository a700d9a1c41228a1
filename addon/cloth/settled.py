"""Capture Settled Pose: simulate a cage from the scene's start frame to a chosen frame and save
its state there as a settled pose (a physics Pose Track, as cutscene cloth tools keep them), which
the bake restores at the start and after cuts and resets (``core.cloth.settled``).

The pose is a point attribute of the cage mesh (``waft_settled_offset``: each vertex's offset
from the skinned cage in the character space's axes, Blender units), so it is saved with the
.blend, undone with the operator, and follows the character wherever the cloth restarts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.cloth import capture_settled_offsets
from ...core.errors import SetupError
from ..progress import run_to_end
from . import reading, system
from .reading import SETTLED_ATTRIBUTE


@dataclass(frozen=True)
class Captured:
    cage: str
    frame: int
    frames: int  # simulated, the start frame included
    largest_offset: float  # Blender units: how far the settled cloth is from the skinned cage


def capture_settled_pose(scene, cage, *, frame: int | None = None, settings) -> Captured:
    """Simulate ``cage`` alone (without any settled pose) from ``scene.frame_start`` to
    ``frame`` (the current frame when None) and store its state there on the cage; turns its
    Settled Pose on. Raises ``SetupError`` (the file unchanged) when the cage cannot bake."""
    frame = scene.frame_current if frame is None else int(frame)
    start = scene.frame_start
    if frame <= start:
        raise SetupError(f"Cloth cage '{cage.name}': the settled pose is captured by "
                         f"simulating from the start frame ({start}) to the current frame; go "
                         f"to a later frame (where the cloth hangs as it should) first")
    read = reading.read_cloth(scene, [cage], start, frame, use_settled=False)
    if read is None:
        raise SetupError(f"Object '{cage.name}' is not an enabled Waft cloth cage")
    run = run_to_end(system.simulate(read, scene, settings=settings, sample_chunk=1 << 30))
    offset = capture_settled_offsets(run.inputs.model, run.inputs.drive, run.result.positions,
                                     frame - start) / read.unit_scale
    mesh = cage.data
    attribute = mesh.attributes.get(SETTLED_ATTRIBUTE)
    if attribute is not None and (attribute.data_type != 'FLOAT_VECTOR'
                                  or attribute.domain != 'POINT'):
        mesh.attributes.remove(attribute)
        attribute = None
    if attribute is None:
        attribute = mesh.attributes.new(SETTLED_ATTRIBUTE, 'FLOAT_VECTOR', 'POINT')
    attribute.data.foreach_set("vector", offset.astype(np.float32).reshape(-1))
    mesh.update()
    settings_of_cage = cage.waft_cloth
    settings_of_cage.settled_frame = frame
    settings_of_cage.settled_vertices = len(mesh.vertices)
    settings_of_cage.use_settled_pose = True
    return Captured(cage=cage.name, frame=frame, frames=frame - start + 1,
                    largest_offset=float(np.linalg.norm(offset, axis=1).max()))
