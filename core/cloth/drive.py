"""Inputs of a cloth bake over time (`ClothDrive`) and their validation.

Samples at `fps` per second; the solver interpolates reference positions, space and collider
matrices linearly between the two samples around each fixed substep (so a fast collider sweeps
instead of jumping), except across an animation cut or a reset, where it does not sweep at all.
The result is at `output_fps` (default: the samples' rate), `output_frames` frames from t = 0:
the add-on samples on a fixed grid in seconds (`addon.sampling.sample_times`, several samples
per scene frame) and asks for the scene's frames, so fast motion bakes alike at every frame
rate (as for strands, `core.strands.drive`). `output_reference` is the reference at those frames,
sampled there (as `core.ragdoll.drive.RagdollDrive.output_target`): the result's pinned vertices
copy it and its max distance is measured against it, so a frame between two samples (25 and 50
fps on the 120 Hz grid) shows the skinned cage the user sees, not the samples' chord.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..colliders import MIN_DETERMINANT, check_collider_matrix
from ..errors import SetupError
from ..mesh_colliders import MeshColliders, check_meshes
from ..timestep import check_fps, check_output
from .model import ClothModel
from .params import ClothParams, validate_params


@dataclass(frozen=True)
class ClothDrive:
    """Everything that changes per frame (see docs/cloth-solver.md)."""

    fps: float
    reference: np.ndarray  # (F, N, 3) skinned reference positions (world m); pinned copy it
    space: np.ndarray  # (F, C, 4, 4) character space per cloth (for local-space simulation)
    collider_matrix: np.ndarray  # (F, K, 4, 4)
    params: ClothParams
    reset_frames: tuple[int, ...] = ()  # 0-based output frames where the cloth restarts
    output_fps: float | None = None  # frames per second of the result (None: fps)
    output_frames: int | None = None  # result frames from t = 0 (None: as many as fit)
    # (output frames, N, 3) the reference at the output frames, sampled there (None: the
    # samples interpolated); a frame on a sample (`between_samples`) reads that sample instead.
    output_reference: np.ndarray | None = None
    # (N, 3) settled pose (seed 003 Pose Track, `settled.py`): each vertex's offset from its
    # reference in its cloth's space axes; a cloth restarts from it (at frame 0, cuts and
    # resets) instead of from its reference. NaN rows: that cloth has none. None: no cloth has.
    settled_offset: np.ndarray | None = None
    # Body-mesh colliders (`mesh_colliders`), sampled like the reference, and the (M, C) bool
    # mask of which cloth collides with which (None: every cloth with every mesh).
    meshes: MeshColliders | None = None
    mesh_mask: np.ndarray | None = None

    @property
    def frames(self) -> int:
        return int(np.shape(self.reference)[0])


@dataclass(frozen=True)
class CheckedClothDrive:
    fps: float
    reference: np.ndarray  # (F, N, 3) float64
    space: np.ndarray  # (F, C, 4, 4)
    collider_matrix: np.ndarray  # (F, K, 4, 4)
    params: dict[str, np.ndarray]  # broadcast to (F, C) / (F, C, 3)
    reset_frames: frozenset[int]  # output frames
    output_fps: float
    output_frames: int
    settled_offset: np.ndarray  # (N, 3), 0 where a cloth has none or the vertex is pinned
    settled: np.ndarray  # (C,) bool: the cloth restarts from its settled pose
    meshes: MeshColliders | None = None  # None when there is none
    mesh_mask: np.ndarray | None = None  # (M, C) bool
    output_reference: np.ndarray | None = None  # (output frames, N, 3) float64, or None

    @property
    def frames(self) -> int:
        return int(self.reference.shape[0])


def validate_cloth_drive(model: ClothModel, drive: ClothDrive) -> CheckedClothDrive:
    """Check shapes and values; `SetupError` names the setup, vertex, collider or setting."""
    N, C = model.n_vertices, model.n_cloths
    fps = check_fps(drive.fps)
    reference = np.asarray(drive.reference, dtype=np.float64)
    if reference.ndim != 3 or reference.shape[1:] != (N, 3) or reference.shape[0] < 1:
        raise SetupError(f"reference has shape {reference.shape}, expected (F, {N}, 3)")
    F = reference.shape[0]
    _check_finite_positions(model, reference, "frame index")
    space = np.asarray(drive.space, dtype=np.float64)
    if space.shape != (F, C, 4, 4):
        raise SetupError(f"space has shape {space.shape}, expected {(F, C, 4, 4)}")
    ok = np.all(np.isfinite(space), axis=(2, 3))
    if not ok.all():
        f, c = (int(i) for i in np.argwhere(~ok)[0])
        raise SetupError(f"cloth '{model.setup_names[c]}': space matrix at frame index {f} is "
                         "not finite")
    det = np.linalg.det(space[..., :3, :3])
    if np.any(det <= MIN_DETERMINANT):
        f, c = (int(i) for i in np.argwhere(det <= MIN_DETERMINANT)[0])
        raise SetupError(f"cloth '{model.setup_names[c]}': space matrix at frame index {f} has "
                         f"a zero or negative scale (determinant {det[f, c]:.3g})")
    colliders = check_collider_matrix(drive.collider_matrix, F, model.colliders.names)
    output_fps, output_frames = check_output(samples=F, fps=fps, output_fps=drive.output_fps,
                                             output_frames=drive.output_frames)
    output_reference = _check_output_reference(model, drive.output_reference, output_frames)
    resets = set()
    for r in drive.reset_frames:
        if int(r) != r or not 0 <= int(r) < output_frames:
            raise SetupError(f"reset frame {r!r} is outside the baked frames "
                             f"0..{output_frames - 1}")
        resets.add(int(r))
    params = validate_params(drive.params, frames=F, setup_names=model.setup_names)
    settled_offset, settled = _check_settled(model, drive.settled_offset)
    meshes, mesh_mask = check_meshes(drive.meshes, drive.mesh_mask, F, C)
    return CheckedClothDrive(fps=fps, reference=reference, space=space,
                             collider_matrix=colliders, params=params,
                             reset_frames=frozenset(resets), output_fps=output_fps,
                             output_frames=output_frames, settled_offset=settled_offset,
                             settled=settled, meshes=meshes, mesh_mask=mesh_mask,
                             output_reference=output_reference)


# Seconds within which an output frame is a sample (the solver's own time tolerance): there the
# frame reads the samples as it always did, bit for bit (the add-on's frame sample is that grid
# sample: `addon.sampling.sample_times` snaps them together), and `output_reference` is unused.
ON_SAMPLE = 1e-9


def between_samples(alpha: float, fps: float) -> bool:
    """Whether a time at blend `alpha` of a sample interval (`timestep.frame_interval`, samples
    at `fps`) falls between the two samples, not on one."""
    return min(alpha, 1.0 - alpha) > ON_SAMPLE * fps


def _check_output_reference(model: ClothModel, reference, frames: int) -> np.ndarray | None:
    if reference is None:
        return None
    reference = np.asarray(reference, dtype=np.float64)
    N = model.n_vertices
    if reference.shape != (frames, N, 3):
        raise SetupError(f"output_reference has shape {reference.shape}, expected "
                         f"({frames}, {N}, 3): one row per output frame")
    _check_finite_positions(model, reference, "output frame")
    return reference


def _check_finite_positions(model: ClothModel, reference: np.ndarray, row: str) -> None:
    """`SetupError` naming the cloth, vertex and `row` ("frame index" or "output frame") of
    the first reference position (rows, N, 3) that is not finite."""
    finite = np.all(np.isfinite(reference), axis=-1)
    if not finite.all():
        i, v = (int(k) for k in np.argwhere(~finite)[0])
        setup, local = model.locate(v)
        raise SetupError(f"cloth '{setup}': reference position of vertex {local} at {row} {i} "
                         "is not finite")


def _check_settled(model: ClothModel, offset) -> tuple[np.ndarray, np.ndarray]:
    N, C = model.n_vertices, model.n_cloths
    if offset is None:
        return np.zeros((N, 3)), np.zeros(C, dtype=bool)
    offset = np.array(offset, dtype=np.float64)
    if offset.shape != (N, 3):
        raise SetupError(f"settled_offset has shape {offset.shape}, expected ({N}, 3)")
    finite = np.all(np.isfinite(offset), axis=1)
    settled = np.zeros(C, dtype=bool)
    for c in range(C):
        own = finite[model.vertex_offset[c]:model.vertex_offset[c + 1]]
        if own.any() and not own.all():
            v = model.vertex_offset[c] + int(np.flatnonzero(~own)[0])
            setup, local = model.locate(v)
            raise SetupError(f"cloth '{setup}': the settled pose of vertex {local} is not "
                             "finite (capture the settled pose again)")
        settled[c] = own.all()
    offset[~finite | model.pinned] = 0.0
    return offset, settled
