"""Turn what was read and sampled into core's cloth input (``ClothModel``, ``ClothDrive``).

Pure NumPy (no bpy). Cages are concatenated in setup order (core's ``vertex_offset``); every
setting becomes a ``ClothParams`` field of shape (F or 1, C) / (F or 1, C, 3) in SI units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.cloth.drive import ClothDrive
from ...core.cloth.model import ClothModel, ClothRest, build_cloth_model
from ...core.cloth.params import FIELDS, ClothParams
from ..reading import collider_set
from . import topology
from .reading import LENGTH_SETTINGS, ClothRead
from .sampling import ClothSamples


@dataclass(frozen=True)
class ClothInput:
    model: ClothModel
    drive: ClothDrive
    reference: list  # per setup (F, N, 3) world metres (pinned vertices as driven)


def cloth_rests(read: ClothRead) -> list[ClothRest]:
    unit = read.unit_scale
    return [ClothRest(setup=s.name, rest_positions=s.rest_world * unit, quads=s.quads,
                      pinned=s.pinned, max_distance=s.max_distance * unit, layer=s.layer)
            for s in read.setups]


def surface_reference(cage: np.ndarray, pinned: np.ndarray, body: np.ndarray,
                      triangles: np.ndarray) -> np.ndarray:
    """Pinned vertices follow a triangle of the body mesh (StrayCloth), bound at the first frame.

    ``cage`` (F, N, 3), ``body`` (F, V, 3), ``triangles`` (T, 3) → the reference (F, N, 3) with
    the pinned rows replaced by their barycentric points (plus the bound normal offset).
    """
    points = cage[0, pinned]
    tri, weights, offset = topology.bind_to_surface(points, body[0][triangles])
    corners = body[:, triangles[tri]]  # (F, P, 3, 3)
    reference = cage.copy()
    reference[:, pinned] = topology.surface_points(corners, weights, offset)
    return reference


def references(read: ClothRead, samples: ClothSamples) -> list[np.ndarray]:
    out = []
    for s, setup in enumerate(read.setups):
        if setup.surface_body is None:
            out.append(samples.cage[s])
        else:
            out.append(surface_reference(samples.cage[s], setup.pinned, samples.body[s],
                                         samples.body_triangles[s]))
    return out


def spaces(read: ClothRead, samples: ClothSamples) -> np.ndarray:
    """(F, C, 4, 4) character space per cloth in metres: the space bone's (or the armature's)
    world frame with its rotation orthonormalised (scale is not motion)."""
    out = np.empty((len(samples.frames), len(read.setups), 4, 4))
    for s, setup in enumerate(read.setups):
        m = samples.armature_world[s].copy()
        if setup.space_bone >= 0:
            m = m @ samples.pose[s][:, setup.space_bone]
        m[:, :3, :3] /= np.maximum(np.linalg.norm(m[:, :3, :3], axis=1, keepdims=True), 1e-12)
        m[:, :3, 3] *= read.unit_scale
        out[:, s] = m
    return out


def stack_setups(values: list[np.ndarray]) -> np.ndarray:
    """Per-setup (F or 1, ...) arrays → (F or 1, C, ...) (a setting read once stays 1 long
    unless another setup's is animated)."""
    n = max(len(v) for v in values)
    return np.stack([np.broadcast_to(v, (n,) + v.shape[1:]) for v in values], axis=1)


def cloth_params(read: ClothRead, samples: ClothSamples) -> ClothParams:
    unit = read.unit_scale
    values = {}
    for name, (kind, _, _, _) in FIELDS.items():
        stacked = stack_setups([settings[name] for settings in samples.settings])
        if name in LENGTH_SETTINGS:
            stacked = stacked * unit
        if kind == "flag":
            stacked = stacked.astype(bool)
        elif kind == "int":
            stacked = np.rint(stacked).astype(np.int64)
        values[name] = stacked
    use_backstop = stack_setups([settings["use_backstop"] for settings in samples.settings]) > 0.5
    values["backstop_distance"] = np.where(use_backstop, values["backstop_distance"], np.inf)
    return ClothParams(**values)


def reset_indices(read: ClothRead) -> tuple[int, ...]:
    frames = {f for s in read.setups for f in s.reset_frames}
    return tuple(sorted(f - read.frame_start for f in frames
                        if read.frame_start < f <= read.frame_end))


def settled_offsets(read: ClothRead) -> np.ndarray | None:
    """(N, 3) metres: every cage's settled pose, NaN rows for cages without one; None: none."""
    if all(s.settled_offset is None for s in read.setups):
        return None
    return np.concatenate([np.full((s.n_vertices, 3), np.nan) if s.settled_offset is None
                           else s.settled_offset * read.unit_scale for s in read.setups])


def cloth_input_model(read: ClothRead):
    """The core's cloth model: from what was read, not from the samples."""
    return build_cloth_model(cloths=cloth_rests(read), colliders=collider_set(read.colliders),
                             collider_mask=read.collider_mask)


def cloth_input(read: ClothRead, samples: ClothSamples, *, rate: float | None = None,
                frames: ClothSamples | None = None) -> ClothInput:
    """The core's model and drive; ``rate``: the samples' rate per second when they are on the
    sub-frame grid (``addon.sampling.sample_times``), None when they are the scene frames;
    ``frames``: then the samples at the scene frames (the drive's ``output_reference``). The
    drive's output is the scene's frames either way."""
    model = cloth_input_model(read)
    drive, reference = cloth_drive(read, samples, rate=rate, frames=frames)
    return ClothInput(model=model, drive=drive, reference=reference)


def output_reference(read: ClothRead, frames: ClothSamples | None) -> np.ndarray | None:
    """(frames, N, 3) the references at the scene frames ``frames`` (all cages), or None."""
    return None if frames is None else np.concatenate(references(read, frames), axis=1)


def cloth_drive(read: ClothRead, samples: ClothSamples, *, rate: float | None = None,
                frames: ClothSamples | None = None) -> tuple[ClothDrive, list]:
    """The core's drive of ``samples`` (``cloth_input``'s; the model depends on ``read`` only,
    so a live preview builds it once) and the per-setup references. ``frames``: the samples
    at the scene frames when ``samples`` are on the sub-frame grid: the solver holds the pins
    and the max distance of each frame to the cage skinned there, not to the grid's samples
    interpolated (1.5 mm apart at 50 fps on a 4 g figure-eight)."""
    reference = references(read, samples)
    drive = ClothDrive(fps=read.fps if rate is None else rate,
                       reference=np.concatenate(reference, axis=1),
                       space=spaces(read, samples), collider_matrix=samples.collider_matrix,
                       params=cloth_params(read, samples), reset_frames=reset_indices(read),
                       output_fps=read.fps, output_frames=read.frame_end - read.frame_start + 1,
                       settled_offset=settled_offsets(read), meshes=samples.meshes,
                       mesh_mask=read.mesh_mask,
                       output_reference=output_reference(read, frames))
    return drive, reference
