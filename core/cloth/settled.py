"""Cloth settled poses (the Pose Track of cutscene cloth tools, `core/settled.py`): each
vertex's offset from the skinned cage, saved at one frame; the solver starts and restarts after
cuts and resets from `reference + R_space @ offset` at rest instead of `reference` (a settled
panel fell at up to 4.5 m/s after a cut without it). Pinned vertices have no offset.
"""

from __future__ import annotations

import numpy as np

from ..settled import drive_at_output_frame, offsets_in_space
from ..timestep import frame_interval
from .drive import ClothDrive, between_samples
from .model import ClothModel


def capture_settled_offsets(model: ClothModel, drive: ClothDrive, positions: np.ndarray,
                            frame: int) -> np.ndarray:
    """(N, 3) offsets of the simulated `positions` (output frames, N, 3: a bake's result) from
    the drive's reference at output `frame`, in each cloth's character-space axes at that time:
    what `ClothDrive.settled_offset` takes."""
    positions = np.asarray(positions, dtype=np.float64)
    reference, space = drive_at_output_frame(drive.reference, drive.space, fps=drive.fps,
                                             output_fps=drive.output_fps, frame=frame,
                                             output_frames=positions.shape[0])
    if drive.output_reference is not None:  # the reference at the frame, as the solver's
        samples = np.shape(drive.reference)[0]
        rate = drive.fps if drive.output_fps is None else drive.output_fps
        _, alpha = frame_interval(frame / rate, drive.fps, samples)
        if between_samples(alpha, drive.fps):
            reference = np.asarray(drive.output_reference[frame], dtype=np.float64)
    return offsets_in_space(positions[frame], reference, space[model.cloth_of_vertex])
