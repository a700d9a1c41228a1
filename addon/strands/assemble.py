"""Turn what was read and sampled into the solver's input: ``StrandModel`` and ``Drive``.

Pure NumPy on plain arrays (no bpy): chain bones are gathered from the per-setup pose-matrix
buffers with one fancy index per chain, padded to the longest chain, and every setting is
broadcast to the shapes ``core.params.StrandParams`` documents (per particle, per strand).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...core.strands.drive import Drive
from ...core.strands.model import ChainRest, StrandModel, build_strand_model
from ...core.strands.params import StrandParams
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


def solver_input(read: SceneRead, samples: Samples, *, rate: float | None = None
                 ) -> SolverInput:
    """The core's model and drive; ``rate``: the samples' rate per second when they are on
    the sub-frame grid (``addon.sampling.sample_times``), None when they are the scene frames.
    The drive's output is the scene's frames either way."""
    model = build_strand_model(chains=chain_rests(read, samples),
                               colliders=collider_set(read.colliders),
                               collider_mask=read.collider_mask)
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
