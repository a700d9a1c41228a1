"""Settled poses (the Pose Track of cutscene cloth tools): a simulated state saved at one frame
and restored where a simulation would otherwise restart from its animated reference.

After an animation cut, or at the start of a shot, cloth and hair restart from their reference
pose: a skirt, cape or ponytail whose modelled shape is not how it hangs then falls into place
again. A settled pose stores each particle's offset from its reference in the axes of its
character space (rotation only), so the pose follows the character wherever the restart happens:
a cape saved hanging behind the back hangs behind the back after the character turned, kinematic
particles have no offset and stay on their reference. Cloth (`cloth/settled.py`) and strands
(`strands/settled.py`) share these two conversions.
"""

from __future__ import annotations

import numpy as np

from .errors import SetupError
from .timestep import frame_interval, interpolate


def space_rotation(space: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotations of (..., 4, 4) character-space matrices (their columns normalised:
    a scaled space rotates offsets without stretching them)."""
    axes = space[..., :3, :3]
    return axes / np.linalg.norm(axes, axis=-2, keepdims=True)


def offsets_in_space(positions: np.ndarray, reference: np.ndarray, space: np.ndarray
                     ) -> np.ndarray:
    """(..., 3) offsets of `positions` from `reference` (both (..., 3) world) in the axes of
    `space` ((..., 4, 4), one per position): what `settled_positions` turns back."""
    return np.einsum("...ji,...j->...i", space_rotation(space), positions - reference)


def settled_positions(reference: np.ndarray, space: np.ndarray, offset: np.ndarray
                      ) -> np.ndarray:
    """(..., 3) positions of a restored settled pose: the reference (..., 3) plus each offset
    (..., 3) turned by its space rotation (`space`: (..., 4, 4), one per position)."""
    return reference + np.einsum("...ij,...j->...i", space_rotation(space), offset)


def drive_at_output_frame(reference: np.ndarray, space: np.ndarray, *, fps: float,
                          output_fps: float | None, frame: int, output_frames: int
                          ) -> tuple[np.ndarray, np.ndarray]:
    """The reference and space samples ((F, ...) each, at `fps`) blended at output `frame` of a
    result with `output_frames` frames at `output_fps` (None: `fps`): where a capture measures
    its offsets. SetupError when the frame is outside the result."""
    if not 0 <= frame < output_frames:
        raise SetupError(f"settled frame index {frame} is outside the baked frames "
                         f"0..{output_frames - 1}")
    rate = fps if output_fps is None else output_fps
    reference = np.asarray(reference, dtype=np.float64)
    f, alpha = frame_interval(frame / rate, fps, reference.shape[0])
    return (interpolate(reference, f, alpha),
            interpolate(np.asarray(space, dtype=np.float64), f, alpha))
