"""Settled poses on the Blender side, shared by cloth cages, bone chains and hair guides: the
capture's frame range, its report, and the point attribute that keeps a pose with the mesh or
Curves data (``core/settled.py`` has the physics).

A settled pose is saved in the .blend with the object, undone with the operator that captured
it, and checked against the object when read: a pose captured with another point count is a
clear error that asks for a new capture, never a silent mismatch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import SetupError

# Point attribute (FLOAT_VECTOR) holding a cage's or guide curves' settled offsets.
SETTLED_ATTRIBUTE = "waft_settled_offset"


@dataclass(frozen=True)
class Captured:
    """What a capture did, for the operator's report."""

    name: str  # the object
    frame: int
    frames: int  # simulated, the start frame included
    largest_offset: float  # Blender units: how far the settled pose is from the animation


def capture_frames(scene, where: str, frame: int | None) -> tuple[int, int]:
    """(start, frame) of a capture at ``frame`` (the current frame when None); SetupError when
    there is nothing to simulate before it. ``where`` names the object ("Cloth cage 'Skirt'")."""
    frame = scene.frame_current if frame is None else int(frame)
    start = scene.frame_start
    if frame <= start:
        raise SetupError(f"{where}: the settled pose is captured by simulating from the start "
                         f"frame ({start}) to the current frame; go to a later frame (where it "
                         f"hangs as it should) first")
    return start, frame


def store_point_offsets(data, offsets: np.ndarray) -> None:
    """Save (N, 3) offsets as the point attribute of ``data`` (a Mesh or Curves), replacing an
    attribute of that name with the wrong type or domain."""
    attribute = data.attributes.get(SETTLED_ATTRIBUTE)
    if attribute is not None and (attribute.data_type != 'FLOAT_VECTOR'
                                  or attribute.domain != 'POINT'):
        data.attributes.remove(attribute)
        attribute = None
    if attribute is None:
        attribute = data.attributes.new(SETTLED_ATTRIBUTE, 'FLOAT_VECTOR', 'POINT')
    attribute.data.foreach_set("vector", np.asarray(offsets, dtype=np.float32).reshape(-1))
    data.update_tag()  # Mesh and Curves alike


def read_point_offsets(data, *, captured: int, points: int, where: str) -> np.ndarray:
    """(N, 3) saved offsets of ``data`` (``points`` points now, ``captured`` when the pose was
    captured: 0 = never); SetupError naming ``where`` when there is none or it is stale."""
    attribute = data.attributes.get(SETTLED_ATTRIBUTE)
    if attribute is None or captured == 0:
        raise SetupError(f"{where}: Settled Pose is on but no pose was captured; use Capture "
                         "Settled Pose at a frame where it hangs as it should")
    if (captured != points or attribute.domain != 'POINT'
            or attribute.data_type != 'FLOAT_VECTOR'):
        raise SetupError(f"{where}: the settled pose was captured with {captured} points but "
                         f"it has {points}; capture it again")
    offset = np.empty(3 * points)
    attribute.data.foreach_get("vector", offset)
    return offset.reshape(-1, 3)
