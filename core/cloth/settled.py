"""Settled poses (seed 003's Pose Track): a cloth's simulated state saved at one frame and
restored where it would otherwise restart from the skinned pose.

After an animation cut, or at the start of a shot, a cloth restarts from its reference: a skirt
or cape whose skinned shape is not how it hangs then falls into place again (a settled panel
fell at up to 4.5 m/s after a cut). Seed 003 keeps a "Pose Track": the physics state of a chosen
frame is saved offline and applied at playback, so cut shots start settled.

Waft stores the state as each vertex's offset from its reference, in the axes of the cloth's
character space (`ClothDrive.space`, rotation only), so the pose follows the character wherever
the restart happens: pinned vertices have no offset and stay exactly on their reference, a cape
saved hanging behind the back hangs behind the back after the character turned. The restart
then starts from `reference + R_space @ offset` at rest instead of `reference`.
"""

from __future__ import annotations

import numpy as np

from ..errors import SetupError
from ..timestep import frame_interval, interpolate
from .drive import ClothDrive
from .model import ClothModel


def space_rotation(space: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotations of (..., 4, 4) character-space matrices (their columns normalised:
    a scaled space rotates offsets without stretching them)."""
    axes = space[..., :3, :3]
    return axes / np.linalg.norm(axes, axis=-2, keepdims=True)


def capture_settled_offsets(model: ClothModel, drive: ClothDrive, positions: np.ndarray,
                            frame: int) -> np.ndarray:
    """(N, 3) offsets of the simulated `positions` (output frames, N, 3: a bake's result) from
    the drive's reference at output `frame`, in each cloth's character-space axes at that time:
    what `ClothDrive.settled_offset` takes."""
    positions = np.asarray(positions, dtype=np.float64)
    if not 0 <= frame < positions.shape[0]:
        raise SetupError(f"settled frame index {frame} is outside the baked frames "
                         f"0..{positions.shape[0] - 1}")
    reference = np.asarray(drive.reference, dtype=np.float64)
    output_fps = drive.fps if drive.output_fps is None else drive.output_fps
    f, alpha = frame_interval(frame / output_fps, drive.fps, reference.shape[0])
    ref = interpolate(reference, f, alpha)
    space = interpolate(np.asarray(drive.space, dtype=np.float64), f, alpha)
    R = space_rotation(space)[model.cloth_of_vertex]  # (N, 3, 3)
    return np.einsum("nji,nj->ni", R, positions[frame] - ref)


def settled_positions(reference: np.ndarray, space: np.ndarray, offset: np.ndarray
                      ) -> np.ndarray:
    """(N, 3) positions of a restored settled pose: the reference (N, 3) plus each vertex's
    offset (N, 3) turned by its cloth's space rotation (`space`: (N, 4, 4), per vertex)."""
    return reference + np.einsum("nij,nj->ni", space_rotation(space), offset)
