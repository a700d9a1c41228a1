"""Time stepping every system shares: the fixed-substep settings and where a time falls
between the sampled frames.

Every system samples its inputs once per scene frame and solves on a fixed substep grid that
does not depend on the frame rate (Small Steps, Macklin et al. 2019: substeps beat iterations);
the drive at a time between two frames is the blend of the bracketing frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import SetupError


@dataclass(frozen=True)
class SolverSettings:
    substep: float = 1 / 240  # seconds; fixed whatever the fps
    iterations: int = 1  # constraint passes per substep (Small Steps: substeps beat iterations)
    preroll_frames: int = 0  # frames of settling on the first frame's pose before frame 0

    def __post_init__(self):
        h = self.substep
        if not isinstance(h, (int, float)) or not math.isfinite(h) or not (0 < h <= 0.1):
            raise SetupError(f"substep must be a finite time in (0, 0.1] s, got {h!r}")
        if not isinstance(self.iterations, int) or self.iterations < 1:
            raise SetupError(f"iterations must be an integer >= 1, got {self.iterations!r}")
        if not isinstance(self.preroll_frames, int) or self.preroll_frames < 0:
            raise SetupError(f"preroll_frames must be an integer >= 0, got "
                             f"{self.preroll_frames!r}")


def check_fps(value) -> float:
    """The drive's frame rate as a float; SetupError unless a positive finite number."""
    try:
        fps = float(value)
    except (TypeError, ValueError) as exc:
        raise SetupError(f"fps {value!r} is not a number") from exc
    if not np.isfinite(fps) or fps <= 0:
        raise SetupError(f"fps must be positive and finite, got {value!r}")
    return fps


def frame_interval(t: float, fps: float, frames: int) -> tuple[int, float]:
    """The frame interval `[f, f + 1]` holding time `t` (seconds from frame 0) and the blend.

    Times before frame 0 or after the last frame clamp to the ends (constant extrapolation).
    Returns `(f, alpha)` with the drive at `t` = (1 - alpha) * drive[f] + alpha * drive[f + 1].
    """
    if frames < 2:
        return 0, 0.0
    u = t * fps
    if u <= 0.0:
        return 0, 0.0
    if u >= frames - 1:
        return frames - 2, 1.0
    f = math.floor(u)  # u is finite here; math.floor skips NumPy's scalar overhead
    f = min(f, frames - 2)
    return f, u - f


def check_output(*, samples: int, fps: float, output_fps, output_frames) -> tuple[float, int]:
    """The result's frame rate and frame count for `samples` inputs at `fps` per second.

    `output_fps` None: the samples' rate; `output_frames` None: as many frames from t = 0 as
    the samples cover. The add-on samples the animation on a fixed grid in seconds (several
    samples per scene frame) and asks for the scene's frames, so every frame rate reads the same
    instants. SetupError when the frames asked for reach past the last sample.
    """
    out_fps = fps if output_fps is None else check_fps(output_fps)
    # Output frames must lie within the sampled time span (1e-9: float rounding of k / fps).
    fit = int(np.floor((samples - 1) / fps * out_fps + 1e-9)) + 1
    count = fit if output_frames is None else int(output_frames)
    if not 1 <= count <= fit:
        raise SetupError(f"output_frames {output_frames!r} must be in 1..{fit}: the "
                         f"{samples} samples at {fps:g}/s cover {fit} frames at {out_fps:g} fps")
    return out_fps, count


def interpolate(values: np.ndarray, f: int, alpha: float) -> np.ndarray:
    """`values` (F, ...) at the blend `alpha` of sample interval `f` (`frame_interval`): a copy,
    exact at alpha 0 and 1 (the samples themselves, no rounding)."""
    if alpha == 0.0:
        return values[f].copy()
    g = min(f + 1, len(values) - 1)
    if alpha == 1.0:
        return values[g].copy()
    return values[f] + alpha * (values[g] - values[f])
