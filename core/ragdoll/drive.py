"""What drives a ragdoll bake: the animation's body frames and the colliders, per frame."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SetupError
from ..rotations import make_sign_continuous, quat_from_matrix
from ..timestep import check_output
from .model import RagdollModel
from .params import RagdollParams, validate_params


@dataclass(frozen=True)
class RagdollDrive:
    """fps, the animation target body frames (F, N, 4, 4) in world (metres, no scale), the
    collider matrices (F, K, 4, 4) and the per-frame settings.

    `output_fps` and `output_target` (Fo, N, 4, 4): the frames to return when the samples are
    not the scene's frames (the add-on reads the animation on a grid in seconds, the same
    instants at every frame rate, as it does for chains and cloth): frame i is at time
    i / output_fps and `output_target[i]` is the animation there (what kinematic bodies and
    the output blend show). None: one frame per sample."""

    fps: float
    target: np.ndarray
    collider_matrix: np.ndarray
    params: RagdollParams
    output_fps: float | None = None
    output_target: np.ndarray | None = None


@dataclass(frozen=True)
class CheckedDrive:
    """The drive validated and converted once: target origins and orientations per frame."""

    fps: float
    frames: int
    target: np.ndarray  # (F, N, 4, 4)
    origin: np.ndarray  # (F, N, 3) body frame origins (bone heads)
    quat: np.ndarray  # (F, N, 4) w, x, y, z, sign-continuous over frames
    collider_matrix: np.ndarray  # (F, K, 4, 4)
    params: dict[str, np.ndarray]
    # The output frames (the samples themselves unless the drive asks for others): their rate,
    # count, animation target and origins, and each one's settings (those of the sample it
    # falls in, as for a substep).
    out_fps: float = 0.0
    out_frames: int = 0
    out_target: np.ndarray | None = None  # (Fo, N, 4, 4)
    out_origin: np.ndarray | None = None  # (Fo, N, 3)
    out_params: dict[str, np.ndarray] | None = None


def sign_continuous(q: np.ndarray) -> np.ndarray:
    """rotations.make_sign_continuous over frames (axis 0), also for a single frame."""
    return q.copy() if len(q) < 2 else make_sign_continuous(q, axis=0)


# Metres from the world origin an animation target may be: a thousand kilometres, far past any
# scene (Blender's default clip end is 1 km), and far inside float64's exact range for the
# solver's millimetre tolerances.
TARGET_RANGE = 1.0e6


def _when(drive: RagdollDrive, f: int) -> str:
    """Sample `f` of `drive.target` for a message: its frame, or, on a sample grid of its own
    (`output_fps` set: the add-on samples at the scene's sample rate), how far into the bake it
    is, in output frames and seconds (a sample index is not a frame the user knows)."""
    if drive.output_fps is None:
        return f"frame {f}"
    t = f / drive.fps
    return f"{t * drive.output_fps:.4g} frames after the bake's first frame ({t:.4g} s)"


def validate_drive(model: RagdollModel, drive: RagdollDrive) -> CheckedDrive:
    """SetupError for wrong shapes, non-finite targets, non-rotation target frames, bad fps."""
    N, K = model.n_bodies, model.colliders.count
    if not (np.isfinite(drive.fps) and drive.fps > 0):
        raise SetupError(f"ragdoll drive fps is {drive.fps!r}; it must be positive")
    target = np.asarray(drive.target, dtype=np.float64)
    if target.ndim != 4 or target.shape[1:] != (N, 4, 4) or target.shape[0] < 1:
        raise SetupError(f"ragdoll target has shape {target.shape}, expected (F, {N}, 4, 4)")
    F = target.shape[0]
    cm = np.asarray(drive.collider_matrix, dtype=np.float64)
    if cm.shape != (F, K, 4, 4):
        raise SetupError(f"collider_matrix has shape {cm.shape}, expected {(F, K, 4, 4)}")
    if not np.all(np.isfinite(target)):
        f, b = (int(v) for v in np.argwhere(~np.isfinite(target).all(axis=(2, 3)))[0])
        raise SetupError(f"the animation target of {model.where(b)} is not finite at "
                         f"{_when(drive, f)}")
    # A location keyed or driven "to infinity" is stored by Blender as 3.4e38, which is finite:
    # the bake then diverged and named whichever body got furthest from its target (the hips,
    # not the keyed spine). Beyond TARGET_RANGE the input is out of range, named here.
    far = np.abs(target[..., :3, 3]).max(axis=2) > TARGET_RANGE
    if far.any():
        f, b = (int(v) for v in np.argwhere(far)[0])
        raise SetupError(f"the animation target of {model.where(b)} is "
                         f"{float(np.abs(target[f, b, :3, 3]).max()):.3g} m from the origin at "
                         f"{_when(drive, f)}, beyond {TARGET_RANGE:.0e} m (keyed or driven out "
                         "of range)")
    if not np.all(np.isfinite(cm)):
        raise SetupError("a collider matrix is not finite")
    R = target[..., :3, :3]
    gram = np.einsum("fnki,fnkj->fnij", R, R)
    error = np.abs(gram - np.eye(3)).max(axis=(2, 3))
    if np.any(error > 1e-4):
        f, b = (int(v) for v in np.argwhere(error > 1e-4)[0])
        raise SetupError(f"the animation target of {model.where(b)} at frame {f} is not a "
                         "rotation (remove scale before handing it to the solver)")
    params = validate_params(drive.params, frames=F, n_bodies=N, n_ragdolls=model.n_ragdolls,
                             body_names=model.names, setup_names=model.setup_names)
    quat = sign_continuous(quat_from_matrix(R))
    origin = np.ascontiguousarray(target[..., :3, 3])
    fps = float(drive.fps)
    out_fps, out_frames, out_target, out_origin, out_params = fps, F, target, origin, params
    if drive.output_fps is not None or drive.output_target is not None:
        if drive.output_fps is None or drive.output_target is None:
            raise SetupError("a ragdoll drive needs both output_fps and output_target, or "
                             "neither")
        out_target = np.asarray(drive.output_target, dtype=np.float64)
        if out_target.ndim != 4 or out_target.shape[1:] != (N, 4, 4):
            raise SetupError(f"output_target has shape {out_target.shape}, expected "
                             f"(frames, {N}, 4, 4)")
        out_fps, out_frames = check_output(samples=F, fps=fps, output_fps=drive.output_fps,
                                           output_frames=len(out_target))
        if not np.all(np.isfinite(out_target)):
            raise SetupError("the ragdoll's output_target is not finite")
        out_origin = np.ascontiguousarray(out_target[..., :3, 3])
        index = np.array([sample_at(i / out_fps, fps, F) for i in range(out_frames)])
        out_params = {name: value[index] for name, value in params.items()}
    return CheckedDrive(fps=fps, frames=F, target=target, origin=origin,
                        quat=np.ascontiguousarray(quat), collider_matrix=cm, params=params,
                        out_fps=out_fps, out_frames=out_frames, out_target=out_target,
                        out_origin=out_origin, out_params=out_params)


def sample_at(t: float, fps: float, frames: int) -> int:
    """The sample at or just before time `t` (a time within rounding of a sample is that
    sample): whose settings a frame at `t` takes."""
    return min(int(np.floor(t * fps + 1e-9)), frames - 1)
