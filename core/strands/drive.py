"""Everything that changes over time (`Drive`), its validation, and substep interpolation.

Inputs are samples at `fps` per second; the solver runs on a fixed substep grid and needs the
drive at arbitrary times between samples. Reference positions, collider and space matrices are
interpolated linearly between the two bracketing samples, so a fast collider sweeps through the
substeps of a frame instead of jumping once per frame (which is what stops tunnelling).

The output is at `output_fps` (default: the samples' rate), `output_frames` frames from t = 0.
The add-on samples the animation on the substep grid in seconds (several samples per scene
frame, `addon.sampling.sample_times`) and asks for the scene's frames: every frame rate then
sees the same inputs at the same times, and fast motion (a figure-eight at several g) bakes
alike at 24, 25, 30, 50 and 60 fps instead of parting by up to 0.4 m, because linear
interpolation between frames turns it into a different, jerky motion at every frame rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..colliders import MIN_DETERMINANT, check_collider_matrix
from ..errors import SetupError
from ..mesh_colliders import MeshColliders, check_meshes
from ..timestep import check_fps, check_output
from .model import StrandModel
from .params import StrandParams, validate_params


@dataclass(frozen=True)
class Drive:
    """Per-frame inputs, see docs/internals.md."""

    fps: float
    reference: np.ndarray  # (F, S, P, 3) world metres
    kinematic: np.ndarray  # (S, P) bool
    space: np.ndarray  # (F, S, 4, 4)
    collider_matrix: np.ndarray  # (F, K, 4, 4)
    params: StrandParams
    output_fps: float | None = None  # frames per second of the result (None: fps)
    output_frames: int | None = None  # result frames from t = 0 (None: as many as fit)
    # (S, P, 3) settled pose (Pose Track, `settled.py`): each particle's offset from its
    # reference in its chain's space axes, metres; NaN on every free particle of a chain
    # without one. None: no chain has one. Chains with one start (and restart after
    # animation cuts) from it instead of from the reference.
    settled_offset: np.ndarray | None = None
    # Body-mesh colliders (`mesh_colliders`), sampled like the reference, and the (M, S) bool
    # mask of which chain collides with which (None: every chain with every mesh).
    meshes: MeshColliders | None = None
    mesh_mask: np.ndarray | None = None

    @property
    def frames(self) -> int:
        return int(np.shape(self.reference)[0])


@dataclass(frozen=True)
class CheckedDrive:
    """A validated drive: float64 arrays and the params broadcast to full shapes."""

    fps: float
    reference: np.ndarray  # (F, S, P, 3), padding replaced by the last real particle
    kinematic: np.ndarray  # (S, P) bool, includes inv_mass 0 particles and padding
    space: np.ndarray  # (F, S, 4, 4)
    collider_matrix: np.ndarray  # (F, K, 4, 4)
    params: dict[str, np.ndarray]
    output_fps: float = 0.0  # result frames per second
    output_frames: int = 0  # result frames
    settled_offset: np.ndarray | None = None  # (S, P, 3), 0 on kinematic particles and padding
    settled: np.ndarray | None = None  # (S,) bool: the chain starts from its settled pose
    meshes: MeshColliders | None = None  # None when there is none
    mesh_mask: np.ndarray | None = None  # (M, S) bool

    @property
    def frames(self) -> int:
        return int(self.reference.shape[0])


def validate_drive(model: StrandModel, drive: Drive) -> CheckedDrive:
    """Check shapes and values; raise `SetupError` naming the setup, chain or collider."""
    S, P = model.strands, model.particles
    fps = check_fps(drive.fps)
    reference = np.asarray(drive.reference, dtype=np.float64)
    if reference.ndim != 4 or reference.shape[1:] != (S, P, 3) or reference.shape[0] < 1:
        raise SetupError(f"reference has shape {reference.shape}, expected (F, {S}, {P}, 3)")
    F = reference.shape[0]
    active = model.active
    finite = np.all(np.isfinite(reference), axis=-1) | ~active[None]
    if not np.all(finite):
        f, s, p = (int(i) for i in np.argwhere(~finite)[0])
        raise SetupError(f"setup '{model.setup_of(s)}', chain '{model.strand_names[s]}': "
                         f"reference position of particle {p} at frame index {f} is not finite")
    # Padding follows the chain's last real particle so it never holds NaN or far-away values.
    last = np.asarray(model.count) - 1
    if not np.all(active):  # equal-length chains have no padding: no copy of the reference
        filler = reference[:, np.arange(S), last][:, :, None, :]
        reference = np.where(active[None, :, :, None], reference, filler)

    kinematic = np.asarray(drive.kinematic, dtype=bool)
    if kinematic.shape != (S, P):
        raise SetupError(f"kinematic has shape {kinematic.shape}, expected {(S, P)}")
    if not np.all(kinematic[:, 0]):
        s = int(np.flatnonzero(~kinematic[:, 0])[0])
        raise SetupError(f"setup '{model.setup_of(s)}', chain '{model.strand_names[s]}': "
                         "the root particle must be kinematic")
    kinematic = kinematic | (model.inv_mass == 0) | ~active

    space = np.asarray(drive.space, dtype=np.float64)
    if space.shape != (F, S, 4, 4):
        raise SetupError(f"space has shape {space.shape}, expected {(F, S, 4, 4)}")
    if not np.all(np.isfinite(space)):
        f, s = (int(i) for i in np.argwhere(~np.all(np.isfinite(space), axis=(2, 3)))[0])
        raise SetupError(f"setup '{model.setup_of(s)}': space matrix at frame index {f} is not "
                         "finite")
    space_det = np.linalg.det(space[..., :3, :3])
    if np.any(space_det <= MIN_DETERMINANT):
        f, s = (int(i) for i in np.argwhere(space_det <= MIN_DETERMINANT)[0])
        raise SetupError(f"setup '{model.setup_of(s)}': object matrix at frame index {f} has a "
                         f"zero or negative scale (determinant {space_det[f, s]:.3g})")

    colliders = check_collider_matrix(drive.collider_matrix, F, model.colliders.names)

    params = validate_params(drive.params, frames=F, strands=S, particles=P, active=active,
                             strand_setup=model.strand_setup, setup_names=model.setup_names)
    output_fps, output_frames = check_output(samples=F, fps=fps, output_fps=drive.output_fps,
                                             output_frames=drive.output_frames)
    settled_offset, settled = _check_settled(model, drive.settled_offset, kinematic)
    meshes, mesh_mask = check_meshes(drive.meshes, drive.mesh_mask, F, S)
    return CheckedDrive(fps=fps, reference=reference, kinematic=kinematic, space=space,
                        collider_matrix=colliders, params=params, output_fps=output_fps,
                        output_frames=output_frames, settled_offset=settled_offset,
                        settled=settled, meshes=meshes, mesh_mask=mesh_mask)



def _check_settled(model: StrandModel, offset, kinematic: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(S, P, 3) offsets (0 where unused) and (S,) which chains have a settled pose: every
    free particle's offset finite, or none (NaN); a chain with some is a stale capture."""
    S, P = model.strands, model.particles
    if offset is None:
        return np.zeros((S, P, 3)), np.zeros(S, dtype=bool)
    offset = np.array(offset, dtype=np.float64)
    if offset.shape != (S, P, 3):
        raise SetupError(f"settled_offset has shape {offset.shape}, expected ({S}, {P}, 3)")
    finite = np.all(np.isfinite(offset), axis=-1)
    free = ~kinematic
    settled = np.all(finite | ~free, axis=1) & free.any(axis=1)
    partial = (finite & free).any(axis=1) & ~settled
    if partial.any():
        s = int(np.flatnonzero(partial)[0])
        p = int(np.flatnonzero(free[s] & ~finite[s])[0])
        raise SetupError(f"setup '{model.setup_of(s)}', chain '{model.strand_names[s]}': the "
                         f"settled pose of particle {p} is not finite (capture the settled pose "
                         "again)")
    offset[~(finite & free)] = 0.0
    return offset, settled
