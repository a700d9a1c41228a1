"""Turn what was read and sampled into the solver's input: ``StrandModel`` and ``Drive``.

Pure NumPy on plain arrays (no bpy): chain bones are gathered from the per-setup pose-matrix
buffers with one fancy index per chain, padded to the longest chain, and every setting is
broadcast to the shapes ``core.params.StrandParams`` documents (per particle, per strand).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace

import numpy as np

from ...core.strands.drive import Drive
from ...core.strands.model import ChainRest, StrandModel, build_strand_model
from ...core.strands.params import StrandParams
from ...core.strands.solver import component_major_reference
from ..reading import collider_set
from .reading import SceneRead
from .sampling import Samples


@dataclass(frozen=True)
class ChainFrames:
    """Per-chain matrices the writer needs to turn positions back into bone rotations."""

    rest_matrix: np.ndarray  # (S, B, 4, 4)
    parent_rest_matrix: np.ndarray  # (S, 4, 4)
    # None when built for the solver's drive alone (``chain_frames(matrices=False)``)
    reference_matrix: np.ndarray | None  # (F, S, B, 4, 4) armature space, Blender units
    parent_matrix: np.ndarray | None  # (F, S, 4, 4)
    object_matrix: np.ndarray | None  # (F, S, 4, 4) world, metres


@dataclass(frozen=True)
class SolverInput:
    model: StrandModel
    drive: Drive
    frames: ChainFrames


def _chain_particles(pose: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(F, B, 4, 4) pose matrices → (F, B + 1, 3) head of bone 0 and the tail of every bone."""
    heads = pose[:, :, :3, 3]
    tails = heads + pose[:, :, :3, 1] * lengths[None, :, None]
    return np.concatenate([heads[:, :1], tails], axis=1)


def _to_world(object_matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(F, 4, 4) and (F, N, 3) armature-space points → (F, N, 3) world."""
    rotated = np.einsum("fij,fnj->fni", object_matrix[:, :3, :3], points)
    return rotated + object_matrix[:, None, :3, 3]


def chain_frames(read: SceneRead, samples: Samples, *, matrices: bool = True
                 ) -> tuple[ChainFrames, np.ndarray]:
    """Padded chain matrices and the reference particle positions (F, S, P, 3) in world metres.

    ``matrices``: also the per-sample bone, parent and object matrices per chain, which only
    the writer reads (at the scene frames); the solver's drive over sub-frame samples does not
    need them (at 512 bones × 5,000 samples they were 330 + 205 MB)."""
    n_frames, n_chains = len(samples.frames), len(read.chains)
    n_bones = max(len(c.bone_names) for c in read.chains)
    eye = np.eye(4)
    rest = np.broadcast_to(eye, (n_chains, n_bones, 4, 4)).copy()
    parent_rest = np.broadcast_to(eye, (n_chains, 4, 4)).copy()
    reference = parent = None
    if matrices:
        reference = np.broadcast_to(eye, (n_frames, n_chains, n_bones, 4, 4)).copy()
        parent = np.broadcast_to(eye, (n_frames, n_chains, 4, 4)).copy()
    obj = np.empty((n_frames, n_chains, 4, 4)) if matrices else None
    positions = np.empty((n_frames, n_chains, n_bones + 1, 3))
    for s, chain in enumerate(read.chains):
        b = len(chain.bone_names)
        pose = samples.bone_matrices(chain.setup_index, list(chain.bone_indices))
        rest[s, :b] = chain.rest_matrix
        parent_rest[s] = chain.parent_rest_matrix
        if matrices:
            reference[:, s, :b] = pose
            if chain.parent_index >= 0:
                parent[:, s] = samples.bone_matrices(chain.setup_index, chain.parent_index)
        world_matrix = samples.object_matrix[:, chain.setup_index]
        if matrices:
            obj[:, s] = world_matrix
        world = _to_world(world_matrix, _chain_particles(pose, chain.bone_length))
        positions[:, s, : b + 1] = world
        positions[:, s, b + 1:] = world[:, -1:]  # padding sits on the tip, ignored by core
    frames = ChainFrames(rest_matrix=rest, parent_rest_matrix=parent_rest,
                         reference_matrix=reference, parent_matrix=parent, object_matrix=obj)
    return frames, positions


def chain_rests(read: SceneRead, samples: Samples) -> list[ChainRest]:
    """Rest pose (edit-mode bones) placed by the armature's world matrix at the first frame."""
    rests = []
    for chain in read.chains:
        setup = read.setups[chain.setup_index]
        rest_pose = chain.rest_matrix[None]
        local = _chain_particles(rest_pose, chain.bone_length)
        world = _to_world(samples.object_matrix[:1, chain.setup_index], local)[0]
        kinematic = np.array((True,) + chain.pinned)
        rests.append(ChainRest(setup=setup.name, name=chain.bone_names[0],
                               rest_positions=world, kinematic=kinematic))
    return rests


def _per_strand(read: SceneRead, setup_values: list[np.ndarray]) -> np.ndarray:
    """Per-setup series (F or 1, …) → (F or 1, S, …) by each chain's setup."""
    n_frames = max(v.shape[0] for v in setup_values)
    columns = [np.broadcast_to(setup_values[c.setup_index],
                               (n_frames,) + setup_values[c.setup_index].shape[1:])
               for c in read.chains]
    return np.stack(columns, axis=1)


def _per_particle(read: SceneRead, samples: Samples, name: str, n_particles: int,
                  unit: float = 1.0) -> np.ndarray:
    """Setup value on every particle; a bone's override (when enabled) on its tail particle."""
    strand = _per_strand(read, [d[name] for d in samples.setup_settings])  # (F?, S)
    n_frames = max([strand.shape[0]] + [b[name].shape[0] for b in samples.bone_settings]
                   + [b["use_overrides"].shape[0] for b in samples.bone_settings])
    out = np.broadcast_to(strand[:, :, None], (n_frames, len(read.chains), n_particles)).copy()
    for s, bones in enumerate(samples.bone_settings):
        b = bones[name].shape[1]
        use = np.broadcast_to(bones["use_overrides"] > 0.5, (n_frames, b))
        value = np.broadcast_to(bones[name], (n_frames, b))
        out[:, s, 1: b + 1] = np.where(use, value, out[:, s, 1: b + 1])
    return out * unit


def setup_fields(strand: Callable[[str], np.ndarray], particle: Callable[[np.ndarray], np.ndarray],
                 unit: float) -> dict[str, np.ndarray]:
    """The StrandParams fields that bone chains and hair Curves guides map the same way from
    sampled ``Object.waft`` settings: ``strand(name)`` gives (F or 1, S), ``particle`` spreads
    an (F, S) array over the particles; lengths × ``unit`` → metres, 0 / off → no limit."""
    max_distance = strand("max_distance") * unit
    return {
        "shape_decay": strand("shape_decay"),
        "stretch_compliance": particle(strand("stretch_compliance")),
        "bend_compliance": particle(np.where(strand("use_bending") > 0.5,
                                             strand("bend_compliance"), np.inf)),
        "use_tether": strand("use_tether") > 0.5,
        "max_distance": particle(np.where(max_distance > 0.0, max_distance, np.inf)),
        "world_motion_fraction": strand("world_motion_fraction"),
        "wind_turbulence": strand("wind_turbulence"),
        "wind_gust": strand("wind_gust"),
        "wind_seed": strand("wind_seed").astype(np.int64),
        "drag": particle(strand("drag")),
    }


def hair_fields(strand: Callable[[str], np.ndarray], n_particles: int) -> dict[str, np.ndarray]:
    """The strand-hair StrandParams fields from sampled ``Object.waft`` settings.

    ``strand(name)`` returns a setting as (F or 1, S); the Curves-guide system can call this
    with its own sampler so both paths map the settings the same way.
    """
    return {
        "local_stiffness": strand("local_stiffness")[:, :, None]
        * np.ones((1, 1, n_particles)),
        "shape_range": strand("shape_range"),
        "shock_propagation": strand("shock_propagation"),
        "wind_direction_variation": strand("wind_direction_variation"),
        "wind_tangent_response": strand("wind_tangent_response"),
        "wind_strand_variation": strand("wind_strand_variation"),
        "ftl_damping": strand("ftl_damping"),
        "voxel_friction": strand("voxel_friction"),
        "voxel_resolution": np.rint(strand("voxel_resolution")).astype(np.int64),
    }


def strand_params(read: SceneRead, samples: Samples, n_particles: int) -> StrandParams:
    """Every user setting in core's units and shapes (lengths × unit scale → metres)."""
    settings = samples.setup_settings
    unit = read.unit_scale

    def strand(name: str) -> np.ndarray:
        return _per_strand(read, [d[name] for d in settings])

    def particle(value: np.ndarray) -> np.ndarray:
        return value[:, :, None]

    gravity = _per_strand(read, [samples.gravity * d["gravity_factor"][:, None]
                                 for d in settings])
    direction = strand("wind_direction")
    norm = np.linalg.norm(direction, axis=-1, keepdims=True)
    direction = np.where(norm > 1e-12, direction / np.maximum(norm, 1e-12), 0.0)
    wind = direction * (strand("wind_speed") * unit)[..., None]
    return StrandParams(
        damping=_per_particle(read, samples, "damping", n_particles),
        shape_stiffness=_per_particle(read, samples, "shape_stiffness", n_particles),
        radius=_per_particle(read, samples, "radius", n_particles, unit),
        gravity=gravity,
        wind_velocity=wind,
        **setup_fields(strand, particle, unit),
        **hair_fields(strand, n_particles),
    )


def chain_space(read, samples) -> np.ndarray:
    """(F, S, 4, 4) the frame whose motion through the world each chain feels (World Motion):
    the armature object's, or its Space Bone's when the travel is keyed on a bone."""
    space = samples.object_matrix[:, [chain.setup_index for chain in read.chains]]
    for s, chain in enumerate(read.chains):
        bone = read.setups[chain.setup_index].space_bone
        if bone >= 0:
            space[:, s] = space[:, s] @ samples.bone_matrices(chain.setup_index, bone)
    return space


def settled_offsets(read: SceneRead, n_particles: int) -> np.ndarray | None:
    """(S, P, 3) metres: each chain's settled pose (bone b's tail is particle b + 1; NaN for
    chains without one); None when no chain has one."""
    if all(chain.settled_offset is None for chain in read.chains):
        return None
    offset = np.full((len(read.chains), n_particles, 3), np.nan)
    for s, chain in enumerate(read.chains):
        if chain.settled_offset is not None:
            offset[s, 0] = 0.0  # the root is kinematic
            offset[s, 1 : len(chain.bone_names) + 1] = chain.settled_offset * read.unit_scale
    return offset


def strand_model(read: SceneRead, samples: Samples) -> StrandModel:
    """The core model: the chains' rest pose placed at the first sample, and the colliders."""
    return build_strand_model(chains=chain_rests(read, samples),
                              colliders=collider_set(read.colliders),
                              collider_mask=read.collider_mask)


def solver_input(read: SceneRead, samples: Samples, *, rate: float | None = None
                 ) -> SolverInput:
    """The core's model and drive; ``rate``: the samples' rate per second when they are on
    the sub-frame grid (``addon.sampling.sample_times``), None when they are the scene frames.
    The drive's output is the scene's frames either way."""
    model = strand_model(read, samples)
    drive, frames = drive_rows(read, samples, rate=rate)
    drive = replace(drive, output_fps=read.fps,
                    output_frames=read.frame_end - read.frame_start + 1)
    return SolverInput(model=model, drive=drive, frames=frames)


def drive_rows(read: SceneRead, samples: Samples, *, rate: float | None = None
               ) -> tuple[Drive, ChainFrames]:
    """The core's drive of ``samples`` alone (no output frames set) and their chain frames:
    ``solver_input``'s drive, or the rows of it the live preview hands ``Stream.feed_rows``
    (every per-sample value depends on its own sample only). Sub-frame samples (``rate``) are
    not the scene frames the writer reads, so their frames carry no bone matrices."""
    frames, reference = chain_frames(read, samples, matrices=rate is None)
    n_particles = reference.shape[2]
    kinematic = np.zeros((len(read.chains), n_particles), dtype=bool)
    for s, chain in enumerate(read.chains):
        kinematic[s, : len(chain.bone_names) + 1] = (True,) + chain.pinned
    drive = Drive(fps=read.fps if rate is None else rate, reference=reference,
                  kinematic=kinematic, space=chain_space(read, samples),
                  collider_matrix=samples.collider_matrix,
                  params=strand_params(read, samples, n_particles),
                  settled_offset=settled_offsets(read, n_particles),
                  meshes=samples.meshes, mesh_mask=read.mesh_mask)
    return drive, frames


class InputBuilder:
    """``solver_input`` assembled block by block: the bake reads the scene a block of samples
    at a time, hands each block's rows here (``add``) and lets the block go, so a long shot
    never holds every read bone at every sample (0.8 GB float32 at 512 bones × 25,000
    samples) beside the drive made from them. Every per-sample value depends on its own
    sample only (the live preview feeds the solver the same rows), so the input is
    ``solver_input``'s of all the samples, bit for bit.

    The drive's reference is written straight into the solver's component-major layout
    (``component_major_reference``): the solver takes it without a second copy (346 MB at
    that size)."""

    def __init__(self, read: SceneRead, *, samples: int, frames: int, rate: float | None):
        self.read, self.rate = read, rate
        self.samples, self.frames = samples, frames
        self.model = None
        self._drive: Drive | None = None
        self._per_sample: dict[str, bool] = {}
        self._chain_frames: ChainFrames | None = None
        self.filled = 0  # drive samples written
        self.frames_filled = 0  # scene frames of the chain frames written

    def add(self, rows: Samples | None, frame_rows: Samples | None = None) -> None:
        """The next grid samples' ``rows`` and, with sub-frame samples, the next scene
        frames' ``frame_rows`` (matrices only: ``Sampler.rows(settings=False)``); either may be
        None (none in this block)."""
        if rows is not None and len(rows.frames):
            part, frames = drive_rows(self.read, rows, rate=self.rate)
            if self.model is None:
                self.model = strand_model(self.read, rows)
            self._write_drive(part)
            if self.rate is None:  # the samples are the scene frames
                self._write_frames(frames)
        if frame_rows is not None and len(frame_rows.frames):
            self._write_frames(chain_frames(self.read, frame_rows)[0])

    def _write_drive(self, part: Drive) -> None:
        a, n = self.filled, part.frames
        if self._drive is None:
            F = self.samples
            S, P = part.reference.shape[1:3]
            params = {}
            for f in fields(part.params):
                value = np.asarray(getattr(part.params, f.name))
                # A block of two or more samples (the bake's first block always is, when
                # there are two) tells the animated settings (a row per sample) from the ones
                # read once (one row).
                animated = F > 1 and value.ndim > 0 and value.shape[0] == n > 1
                self._per_sample[f.name] = animated
                params[f.name] = np.empty((F,) + value.shape[1:], value.dtype) \
                    if animated else value
            meshes = part.meshes
            if meshes is not None:
                meshes = replace(meshes, vertices=tuple(
                    np.empty((F,) + v.shape[1:], v.dtype) for v in meshes.vertices))
            self._drive = replace(
                part, reference=component_major_reference(F, S, P),
                space=self._space_buffer(F, part.space.shape[1]),
                collider_matrix=np.empty((F,) + part.collider_matrix.shape[1:]),
                params=replace(part.params, **params), meshes=meshes)
        drive = self._drive
        drive.reference[a:a + n] = part.reference
        self._space[a:a + n] = part.space[:, :self._space.shape[1]]
        drive.collider_matrix[a:a + n] = part.collider_matrix
        for name, animated in self._per_sample.items():
            if animated:
                getattr(drive.params, name)[a:a + n] = getattr(part.params, name)
        if drive.meshes is not None:
            for mine, theirs in zip(drive.meshes.vertices, part.meshes.vertices, strict=True):
                mine[a:a + n] = theirs
        self.filled = a + n

    def _space_buffer(self, F: int, S: int) -> np.ndarray:
        """(F, S, 4, 4) the drive's space: the chains of one armature share theirs (its
        object's, times its Space Bone's pose: ``chain_space``), so with one armature it is
        one matrix per sample seen by every chain (205 MB less at 64 chains × 25,000
        samples)."""
        shared = len(self.read.setups) == 1
        self._space = np.empty((F, 1 if shared else S, 4, 4))
        return np.broadcast_to(self._space, (F, S, 4, 4)) if shared else self._space

    def _write_frames(self, part: ChainFrames) -> None:
        a, n = self.frames_filled, len(part.object_matrix)
        if self._chain_frames is None:
            # The bones' pose matrices are Blender's float32 (and identities in the padding):
            # kept in float32, exactly, and the writer reads them as float64 a chunk at a time.
            F = self.frames
            self._chain_frames = replace(part, **{
                name: np.empty((F,) + getattr(part, name).shape[1:], dtype)
                for name, dtype in (("reference_matrix", np.float32),
                                    ("parent_matrix", np.float32),
                                    ("object_matrix", np.float64))})
        for name in ("reference_matrix", "parent_matrix", "object_matrix"):
            getattr(self._chain_frames, name)[a:a + n] = getattr(part, name)
        self.frames_filled = a + n

    def result(self) -> SolverInput:
        """The model, the drive over every sample and the chain frames at the scene frames."""
        if self.filled != self.samples or self.frames_filled != self.frames:
            raise RuntimeError(f"{self.filled} of {self.samples} samples and "
                               f"{self.frames_filled} of {self.frames} frames are added")
        drive = replace(self._drive, output_fps=self.read.fps,
                        output_frames=self.read.frame_end - self.read.frame_start + 1)
        return SolverInput(model=self.model, drive=drive, frames=self._chain_frames)
