"""Strand settled poses (the Pose Track of cutscene cloth tools, `core/settled.py`): each
particle's offset from its chain's reference in the chain's space axes, saved at one frame.

A chain with a settled pose starts from it at rest instead of from its animated reference, and
restarts from it after an animation cut (`solver._Bake._carry_over_cut`), where a chain without
one is carried rigidly with its root: a ponytail or a tail modelled straight does not fall into
place at the start of every shot. Offsets are in the space axes (the armature object, the Space
Bone or the scalp), not along the chain, so gravity's sag stays downward when the head turns.
After placing the offsets, each free particle is put back at its rest length from the previous
one along the same direction (follow-the-leader, Müller et al. 2012), so a chain whose reference
moved since the capture starts without stretch.
"""

from __future__ import annotations

import numpy as np

from ..settled import drive_at_output_frame, offsets_in_space, settled_positions
from .drive import Drive
from .model import StrandModel


def capture_settled_offsets(drive: Drive, positions: np.ndarray, frame: int) -> np.ndarray:
    """(S, P, 3) offsets of the simulated `positions` ((F_out, S, P, 3) metres: a bake's
    result) from the drive's reference at output `frame`, in each chain's space axes: what
    `Drive.settled_offset` takes."""
    positions = np.asarray(positions, dtype=np.float64)
    reference, space = drive_at_output_frame(drive.reference, drive.space, fps=drive.fps,
                                             output_fps=drive.output_fps, frame=frame,
                                             output_frames=positions.shape[0])
    return offsets_in_space(positions[frame], reference, space[:, None])


def settled_chain_positions(model: StrandModel, reference: np.ndarray, space: np.ndarray,
                            offset: np.ndarray, free: np.ndarray) -> np.ndarray:
    """(S, P, 3) restored settled positions: `reference` (S, P, 3) plus each `offset` (S, P, 3)
    turned by its chain's `space` (S, 4, 4), then the `free` (S, P) particles put back at their
    rest length from the previous particle (root to tip)."""
    x = settled_positions(reference, space[:, None], offset)
    for p in range(1, model.particles):
        d = x[:, p] - x[:, p - 1]
        n = np.linalg.norm(d, axis=-1, keepdims=True)
        ok = free[:, p, None] & (n > 0.0)
        x[:, p] = np.where(ok, x[:, p - 1] + d * (model.rest_length[:, p - 1, None]
                                                  / np.where(n > 0.0, n, 1.0)), x[:, p])
    return x
